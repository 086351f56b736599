package sandbox

import (
	"slices"
	"sort"
)

// registries are the names each toolchain's default registry needs, for
// Policy.AllowDomains under NetworkProxied: what the client contacts to
// resolve and download a new dependency, nothing it would publish to.
var registries = map[string][]string{
	// go mod download, go get: the module proxy and the checksum database
	// (modules the proxy lacks are fetched from their VCS hosts with
	// GOPROXY's "direct", which these do not cover).
	"go": {"proxy.golang.org:443", "sum.golang.org:443"},
	// npm, pnpm and yarn v1 (yarn's own mirror of the npm registry).
	"npm": {"registry.npmjs.org:443", "registry.yarnpkg.com:443"},
	// pip and uv: the index and the file host.
	"pip": {"pypi.org:443", "files.pythonhosted.org:443"},
	// cargo's sparse index, the crate downloads, and the API.
	"cargo": {"index.crates.io:443", "static.crates.io:443", "crates.io:443"},
}

// Registries returns the names of the registry presets RegistryDomains
// knows, sorted.
func Registries() []string {
	var out []string
	for k := range registries {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// RegistryDomains returns the AllowDomains entries a toolchain's default
// registry needs ("go", "npm", "pip", "cargo"; see Registries), and false
// for an unknown name.
func RegistryDomains(name string) ([]string, bool) {
	d, ok := registries[name]
	return slices.Clone(d), ok
}

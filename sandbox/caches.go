package sandbox

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/gocacheprog"
	"github.com/bo-agent/sandbox-local/internal/nativepath"
)

// CachePolicy says where the command's toolchains keep their caches (see
// docs/policy.md, "Caches"). The zero value gives every workspace caches
// of the sandbox's own, kept across runs in a directory the user's own
// tools never read, and warms Go's module downloads from the user's
// module cache, read-only.
type CachePolicy struct {
	// Off leaves the tools' cache variables as the caller's environment has
	// them: their caches are then the user's own, which the sandbox keeps
	// read-only, so a build that needs one fails as it would without this
	// field.
	Off bool `json:"off,omitempty"`
	// Dir, absolute, holds the caches instead of the per-workspace default
	// (<user cache dir>/sandbox-local/caches/<workspace key>). It is
	// created (mode 0700) if missing and becomes a writable root. Naming
	// the same Dir for several workspaces shares their caches: a command
	// in one can then poison the builds of the others.
	Dir string `json:"dir,omitempty"`
	// Skip names tools of CacheTools whose variables are left as the
	// caller's environment has them.
	Skip []string `json:"skip,omitempty"`
	// NoWarm reads none of the user's caches (by default Go's module
	// downloads are served from the user's module cache, read-only, ahead
	// of the configured GOPROXY).
	NoWarm bool `json:"no_warm,omitempty"`
}

// CacheTool is one toolchain whose cache the sandbox gives a place of its
// own, and the variables that move it.
type CacheTool struct {
	// Name is how CachePolicy.Skip and the report name it.
	Name string
	// Vars are the variables set, each to Subdirs[i] below the cache dir.
	Vars, Subdirs []string
}

// cacheTools: each variable is the tool's own, and moves only its cache
// (Go's sumdb cache lives under GOPATH/pkg/sumdb, which only GOPATH moves;
// GOBIN's default follows GOPATH too, where a `go install` inside the
// sandbox lands). CARGO_HOME holds config and credentials as well: the
// caller's config.toml is still read when the workspace lies below the
// home directory (cargo reads every ancestor's .cargo/config.toml).
var cacheTools = []CacheTool{
	{"go", []string{"GOCACHE", "GOPATH", "GOMODCACHE"}, []string{"go-build", "go", "go/pkg/mod"}},
	{"pip", []string{"PIP_CACHE_DIR"}, []string{"pip"}},
	{"uv", []string{"UV_CACHE_DIR"}, []string{"uv"}},
	{"npm", []string{"npm_config_cache"}, []string{"npm"}},
	{"pnpm", []string{"PNPM_HOME"}, []string{"pnpm"}},
	{"yarn", []string{"YARN_CACHE_FOLDER", "YARN_GLOBAL_FOLDER"}, []string{"yarn/cache", "yarn/global"}},
	{"cargo", []string{"CARGO_HOME"}, []string{"cargo"}},
	{"ccache", []string{"CCACHE_DIR"}, []string{"ccache"}},
	{"xdg", []string{"XDG_CACHE_HOME"}, []string{"xdg"}},
}

// cacheAliases are the other names a tool reads as one of its cache
// variables, in any case: npm reads every npm_config_* variable whatever
// its case, the last one winning, and yarn 1 every yarn_* one, over the
// npm_config_* ones. A caller's NPM_CONFIG_CACHE or yarn_cache_folder
// would otherwise point the tool back at the user's cache, read-only to
// the command, whatever the wrap sets.
var cacheAliases = map[string][]string{
	"npm_config_cache":   {"npm_config_cache"},
	"YARN_CACHE_FOLDER":  {"yarn_cache_folder", "npm_config_cache_folder"},
	"YARN_GLOBAL_FOLDER": {"yarn_global_folder", "npm_config_global_folder"},
}

// aliasOf reports whether the tool reads name as its variable v, under
// another spelling.
func aliasOf(v, name string) bool {
	return name != v && slices.ContainsFunc(cacheAliases[v], func(a string) bool { return strings.EqualFold(a, name) })
}

// CacheTools returns the toolchains whose caches the sandbox moves, and
// their variables. Each call returns a new slice.
func CacheTools() []CacheTool {
	out := make([]CacheTool, len(cacheTools))
	for i, t := range cacheTools {
		out[i] = CacheTool{t.Name, slices.Clone(t.Vars), slices.Clone(t.Subdirs)}
	}
	return out
}

// CacheUse is one tool's cache in a wrap, as the report names it.
type CacheUse struct {
	// Tool is the CacheTool's name.
	Tool string `json:"tool"`
	// Env are the variables the wrap set for it (NAME=value).
	Env []string `json:"env"`
	// WarmFrom are caches of the user's that the tool reads, never writes
	// (Go's module downloads, and its build cache through GOCACHEPROG).
	WarmFrom []string `json:"warm_from,omitempty"`
	// Overlay is the user's cache the command sees at its own path, with
	// what it writes there kept in the sandbox's cache (Go's module cache
	// under the namespaces runner); the user's files are never written.
	Overlay string `json:"overlay,omitempty"`
	// Replaced names the caller's variables the wrap dropped because the
	// tool reads them as one of Env's under another spelling
	// (NPM_CONFIG_CACHE for npm_config_cache).
	Replaced []string `json:"replaced,omitempty"`
}

// cachePlan is what validate decided about caches; prepareCaches makes it
// real.
type cachePlan struct {
	off      bool
	dir      string // the cache dir; "" under read-only (then below the temp dir)
	meta     string // its metadata file, for the per-workspace default
	given    bool   // dir is CachePolicy.Dir
	skip     map[string]bool
	set      map[string]bool // variables Policy.Env.Set gives: the caller's choice stands
	goWarm   string          // the user's module download cache, for GOPROXY
	goMod    string          // the user's module cache (goWarm's), as the user's go spells it
	goProxy  string          // the caller's GOPROXY, after the file:// entry
	goBuild  string          // the user's build cache, for GOCACHEPROG
	baseNote string          // why the default dir is unusable
}

// planCaches validates p and decides where the caches go, creating
// nothing. callerEnv is the caller's environment before Policy.Env.
func planCaches(p Policy, workspace string, callerEnv []string) (*cachePlan, error) {
	c := p.Caches
	plan := &cachePlan{off: c.Off, skip: map[string]bool{}, set: map[string]bool{}}
	for _, s := range c.Skip {
		if !slices.ContainsFunc(cacheTools, func(t CacheTool) bool { return t.Name == s }) {
			return nil, invalidf("caches skip %q: not a cache tool (%s)", s, strings.Join(cacheToolNames(), ", "))
		}
		plan.skip[s] = true
	}
	for name := range p.Env.Set {
		plan.set[name] = true
	}
	if c.Off {
		if c.Dir != "" {
			return nil, invalidf("caches dir %q given with caches off", c.Dir)
		}
		return plan, nil
	}
	if c.Dir != "" {
		if err := absPath("caches dir", c.Dir); err != nil {
			return nil, err
		}
		if p.Mode == ReadOnly {
			return nil, invalidf("caches dir %q given in %s mode (its caches are in the temp dir)", c.Dir, ReadOnly)
		}
		plan.dir, plan.given = c.Dir, true
	} else if p.Mode == WorkspaceWrite {
		base, ok := userCacheBase(callerEnv)
		if !ok {
			plan.baseNote = "no absolute user cache directory (HOME, XDG_CACHE_HOME): the caches are in the temp dir"
		} else {
			root := filepath.Join(base, "sandbox-local", "caches")
			key := workspaceKey(workspace)
			plan.dir, plan.meta = filepath.Join(root, key), filepath.Join(root, key+".json")
		}
	}
	if !c.NoWarm && !plan.skip["go"] {
		// The go env file is read once for both.
		goenv := readGoEnvFile(callerEnv)
		plan.goWarm, plan.goProxy = goWarmSource(callerEnv, goenv)
		if plan.goWarm != "" {
			plan.goMod = filepath.Dir(filepath.Dir(plan.goWarm))
		}
		plan.goBuild = goBuildCache(callerEnv, goenv)
	}
	return plan, nil
}

func cacheToolNames() []string {
	var n []string
	for _, t := range cacheTools {
		n = append(n, t.Name)
	}
	return n
}

// workspaceKey names a workspace's cache dir: its base name, for a reader,
// and a hash of its real path, so two workspaces never share one.
func workspaceKey(ws string) string {
	sum := sha256.Sum256([]byte(ws))
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, filepath.Base(ws))
	name = strings.TrimLeft(name, ".")
	if len(name) > 32 {
		name = name[:32]
	}
	if name == "" {
		name = "ws"
	}
	return name + "-" + hex.EncodeToString(sum[:8])
}

// lookupEnv is the last value of name in env.
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := cutVar(env[i], name); ok {
			return v, true
		}
	}
	return "", false
}

// userCacheBase is the user's cache directory as the caller's environment
// says (os.UserCacheDir's rules, from env rather than the process's own).
func userCacheBase(env []string) (string, bool) {
	abs := func(p string) (string, bool) {
		if p == "" || !filepath.IsAbs(p) {
			return "", false
		}
		return filepath.Clean(p), true
	}
	home, _ := lookupEnv(env, "HOME")
	switch runtime.GOOS {
	case "windows":
		v, _ := lookupEnv(env, "LocalAppData")
		if v == "" {
			v, _ = lookupEnv(env, "LOCALAPPDATA")
		}
		return abs(v)
	case "darwin", "ios":
		if h, ok := abs(home); ok {
			return filepath.Join(h, "Library", "Caches"), true
		}
		return "", false
	}
	if x, ok := lookupEnv(env, "XDG_CACHE_HOME"); ok {
		if p, ok := abs(x); ok {
			return p, true
		}
	}
	if h, ok := abs(home); ok && h != "/" {
		return filepath.Join(h, ".cache"), true
	}
	return "", false
}

// goEnvSetting is a Go setting as the go command reads it: the variable,
// else the go env file (GOENV, default <config dir>/go/env).
func goEnvSetting(env []string, goenv map[string]string, name string) string {
	if v, ok := lookupEnv(env, name); ok {
		return v
	}
	return goenv[name]
}

// readGoEnvFile reads the go env file of the caller's environment.
func readGoEnvFile(env []string) map[string]string {
	out := map[string]string{}
	p, ok := lookupEnv(env, "GOENV")
	if !ok || p == "" {
		cfg := ""
		home, _ := lookupEnv(env, "HOME")
		switch runtime.GOOS {
		case "windows":
			cfg, _ = lookupEnv(env, "AppData")
		case "darwin", "ios":
			if home != "" {
				cfg = filepath.Join(home, "Library", "Application Support")
			}
		default:
			if x, _ := lookupEnv(env, "XDG_CONFIG_HOME"); filepath.IsAbs(x) {
				cfg = x
			} else if home != "" {
				cfg = filepath.Join(home, ".config")
			}
		}
		if cfg == "" {
			return out
		}
		p = filepath.Join(cfg, "go", "env")
	}
	if p == "off" || !filepath.IsAbs(p) {
		return out
	}
	f, err := os.Open(p)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && k != "" {
			out[k] = v
		}
	}
	return out
}

// defaultGoProxy is the go command's GOPROXY when nothing sets it.
const defaultGoProxy = "https://proxy.golang.org,direct"

// goWarmSource finds the user's module download cache
// (<GOMODCACHE>/cache/download) and the GOPROXY the user's go uses. The
// dir is "" when there is none to read. goenv is the go env file's
// settings (readGoEnvFile).
func goWarmSource(env []string, goenv map[string]string) (dir, proxy string) {
	proxy = goEnvSetting(env, goenv, "GOPROXY")
	if proxy == "" {
		proxy = defaultGoProxy
	}
	mod := goEnvSetting(env, goenv, "GOMODCACHE")
	if mod == "" {
		gopath := goEnvSetting(env, goenv, "GOPATH")
		if first, _, _ := strings.Cut(gopath, string(os.PathListSeparator)); first != "" {
			mod = filepath.Join(first, "pkg", "mod")
		} else if home, _ := lookupEnv(env, "HOME"); home != "" {
			mod = filepath.Join(home, "go", "pkg", "mod")
		}
	}
	if mod == "" || !filepath.IsAbs(mod) {
		return "", proxy
	}
	dir = filepath.Join(filepath.Clean(mod), "cache", "download")
	if strings.ContainsAny(dir, ",|") {
		return "", proxy // GOPROXY's separators: it could not be named there
	}
	return dir, proxy
}

// goBuildCache is the user's build cache dir (GOCACHE, else the go env
// file's, goenv, else <user cache dir>/go-build), "" for none.
func goBuildCache(env []string, goenv map[string]string) string {
	v := goEnvSetting(env, goenv, "GOCACHE")
	if v == "off" {
		return ""
	}
	if v == "" {
		base, ok := userCacheBase(env)
		if !ok {
			return ""
		}
		v = filepath.Join(base, "go-build")
	}
	if !filepath.IsAbs(v) {
		return ""
	}
	return filepath.Clean(v)
}

// goCacheHolds reports whether the build cache dir holds entries: any of
// 16 of its 256 buckets (the go command makes them all, empty, when it
// first opens a cache). An empty one has nothing to warm a build with, and
// naming the program would only add its cost to a cold build.
func goCacheHolds(dir string) bool {
	for i := 0; i < 256; i += 16 {
		f, err := os.Open(filepath.Join(dir, fmt.Sprintf("%02x", i)))
		if err != nil {
			continue
		}
		names, _ := f.Readdirnames(1)
		f.Close()
		if len(names) > 0 {
			return true
		}
	}
	return false
}

// goCacheProg is GOCACHEPROG for the program self serves (launcher.Init,
// package internal/gocacheprog) reading the user's build cache user; ""
// when a path cannot be quoted for the go command's word splitting.
func goCacheProg(self, user string) string {
	quote := func(s string) (string, bool) {
		switch {
		case !strings.ContainsAny(s, " \t\n\r'\""):
			return s, true
		case !strings.Contains(s, "'"):
			return "'" + s + "'", true
		case !strings.Contains(s, "\""):
			return "\"" + s + "\"", true
		}
		return "", false
	}
	qs, ok1 := quote(self)
	qu, ok2 := quote(user)
	if !ok1 || !ok2 {
		return ""
	}
	return qs + " " + gocacheprog.Arg + " " + qu
}

// goWarmUsable reports whether a cache dir of the user's can be read to
// warm the sandbox's: a readable directory the command cannot write
// (inside a writable root, an earlier command could have planted entries
// there: modules that go.sum would not catch for a module it does not list
// yet, build outputs under a key) and may read.
func goWarmUsable(dir string, writable, denyRead []string) (string, bool) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", false
	}
	if f, err := os.Open(real); err != nil {
		return "", false
	} else {
		f.Close()
	}
	for _, w := range writable {
		if nativepath.Within(real, w) || nativepath.Within(dir, w) {
			return "", false
		}
	}
	for _, d := range denyRead {
		if nativepath.Within(real, d) || nativepath.Within(dir, d) {
			return "", false
		}
	}
	return real, true
}

// goWarmProxy is GOPROXY with the user's module download cache first.
func goWarmProxy(dir, proxy string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}
	if runtime.GOOS == "windows" {
		u.Path = "/" + u.Path
	}
	return u.String() + "," + proxy
}

// cacheEnv is the variables the plan sets and the report's entries: each
// tool's variables below dir, minus the skipped tools and the variables
// Policy.Env.Set gives (under any spelling the tool reads), GOPROXY when
// warm is the user's module download cache, and GOCACHEPROG when prog
// (the program reading the user's build cache) is not "", and GOMODCACHE
// as ovl, the user's module cache shown through an overlay, when that is
// not "" (then no GOPROXY entry: the downloads are there). Each entry's
// Replaced names the variables of env (the caller's, Policy.Env applied)
// that the tool would read instead of one the wrap sets: the wrap drops
// them.
func (c *cachePlan) cacheEnv(dir, warm, prog, ovl string, env []string) (vars []string, uses []CacheUse) {
	if c.off {
		return nil, nil
	}
	for _, t := range cacheTools {
		if c.skip[t.Name] {
			continue
		}
		u := CacheUse{Tool: t.Name}
		for i, v := range t.Vars {
			if c.set[v] || c.setAlias(v) {
				continue
			}
			val := filepath.Join(dir, filepath.FromSlash(t.Subdirs[i]))
			if v == "GOMODCACHE" && ovl != "" {
				val = ovl
				u.Overlay = ovl
				u.WarmFrom = append(u.WarmFrom, ovl)
			}
			u.Env = append(u.Env, v+"="+val)
			for _, kv := range env {
				if name, _, _ := strings.Cut(kv, "="); aliasOf(v, name) && !slices.Contains(u.Replaced, name) {
					u.Replaced = append(u.Replaced, name)
				}
			}
		}
		if t.Name == "go" && warm != "" && u.Overlay == "" && !c.set["GOPROXY"] {
			u.Env = append(u.Env, "GOPROXY="+goWarmProxy(warm, c.goProxy))
			u.WarmFrom = append(u.WarmFrom, warm)
		}
		if t.Name == "go" && prog != "" && !c.set["GOCACHEPROG"] && !c.set["GOCACHE"] {
			u.Env = append(u.Env, "GOCACHEPROG="+prog)
			u.WarmFrom = append(u.WarmFrom, c.goBuild)
		}
		if len(u.Env) > 0 {
			vars = append(vars, u.Env...)
			uses = append(uses, u)
		}
	}
	return vars, uses
}

// setAlias reports whether Policy.Env.Set gives the variable v under
// another spelling the tool reads: that choice stands, as v's would.
func (c *cachePlan) setAlias(v string) bool {
	for name := range c.set {
		if aliasOf(v, name) {
			return true
		}
	}
	return false
}

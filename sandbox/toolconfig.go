package sandbox

import (
	"slices"
	"strings"
)

// toolConfigs are the names, relative to each writable root, of the files
// and directories through which a write turns into code execution later,
// outside the sandbox: when a person opens the project in an editor, when
// an agent starts in it, or when a build tool reads its configuration.
// They are configuration, which nobody reviews as code; the project's own
// code (a Makefile, package.json scripts, a test suite) is not on the list,
// since a person runs that knowing it is the project's. Each entry says
// what it can start.
var toolConfigs = []struct{ name, why string }{
	// Editors.
	{".vscode", "tasks run when the folder opens; settings name interpreters, linters and terminal environments"},
	{".idea", "run configurations and startup tasks of JetBrains IDEs"},
	{".zed", "Zed's tasks and language-server commands"},
	{".helix", "Helix's languages.toml names the language servers and formatters it starts"},
	{".devcontainer", "initializeCommand runs on the host when the project is reopened in a container"},
	{".devcontainer.json", "the same, as a single file"},
	// Agents: hooks, commands and MCP servers are programs they start.
	{".claude", "Claude Code's settings (hooks run shell commands), commands and agents"},
	{".mcp.json", "MCP servers an agent starts"},
	{".cursor", "Cursor's rules and MCP servers"},
	{".gemini", "gemini-cli's settings and MCP servers"},
	{".codex", "Codex's project configuration and MCP servers"},
	// Shell environments run on cd.
	{".envrc", "direnv runs it on entering the directory"},
	{"mise.toml", "mise runs its hooks and env scripts on entering the directory"},
	{".mise.toml", "the same, hidden"},
	{"mise.local.toml", "the same, the local override"},
	{".mise.local.toml", "the same, hidden"},
	// Package managers and build tools pointed at a program.
	{".npmrc", "npm's script-shell and node-options run a program of the file's choosing"},
	{".yarnrc", "yarn-path replaces yarn itself"},
	{".yarnrc.yml", "yarnPath and plugins replace or extend yarn"},
	{".cargo/config.toml", "build.rustc-wrapper, target runners and aliases"},
	{".cargo/config", "the same, older name"},
	{".pre-commit-config.yaml", "pre-commit runs the hooks it lists on every commit"},
	{"lefthook.yml", "lefthook runs the commands it lists from the git hooks it installs"},
	{"lefthook.yaml", "the same"},
	{".lefthook.yml", "the same, hidden"},
	{"lefthook-local.yml", "the same, the local override"},
	{"bunfig.toml", "bun runs its preload scripts on every bun run and test"},
	{"pijul.toml", "pijul record runs the shared hooks it declares once approved, and an approval is kept in .pijul"},
	// Toolchain pins that can name a directory of programs.
	{"rust-toolchain.toml", "rustup runs cargo and rustc from a toolchain.path it names, for every cargo and rustc below the root"},
	{"rust-toolchain", "the same, older name"},
	{".tool-versions", "asdf and mise take a path: version as the tool's install directory and run its programs"},
	// Linters an editor runs on open.
	{".pylintrc", "pylint runs its init-hook (Python code) on every run, and editors run pylint on open"},
	{"pylintrc", "the same"},
	// Fossil: the checkout database names the repository, whose hooks
	// (fossil hook) run on commit. Fossil writes it on every command, so
	// it is a config to release rather than part of a surface.
	{".fslckout", "Fossil's checkout database names the repository whose hooks run on the next fossil commit"},
	{"_FOSSIL_", "the same, older name"},
	// Git: a HEAD at a root, with objects/ and refs/ beside it, makes the
	// root itself a git directory once the root's .git is made invalid (a
	// corrupt .git/HEAD, no .git/refs): git then reads the root's config,
	// whose core.fsmonitor runs a program on the next git status.
	{"HEAD", "a HEAD (with objects/ and refs/ beside it) makes the root a git directory whose config runs core.fsmonitor on the next git command, once the root's .git is made invalid"},
}

// DefaultToolConfigs returns the names, relative to each writable root,
// kept read-only by default besides git's surface
// (DefaultReadOnlySubpaths): editor and agent settings that run code when
// the project is opened (.vscode, .idea, .claude, .mcp.json, .cursor,
// .devcontainer, ...), .envrc, and tool configurations that point a later
// build at a program (.npmrc, .yarnrc.yml, .cargo/config.toml,
// .pre-commit-config.yaml). toolConfigs in this file says, for each, what
// it can start. Policy.WritableConfigs releases entries by these names.
// The names that exist at Wrap are bound read-only (namespaces) or
// reported (landlock). Those that do not exist are guarded by the
// namespaces runner, whose guard refuses creating them (EROFS); Landlock
// cannot refuse one name in a directory, so under landlock a config the
// command creates is its own (SECURITY.md).
func DefaultToolConfigs() []string {
	out := make([]string, len(toolConfigs))
	for i, c := range toolConfigs {
		out[i] = c.name
	}
	return out
}

// protectedConfigs returns the default tool configs minus the released
// ones; a released name that is not a default is INVALID_POLICY (a typo
// would otherwise release nothing silently).
func protectedConfigs(released []string) ([]string, error) {
	defaults := DefaultToolConfigs()
	for _, r := range released {
		if err := checkNUL("writable config", r); err != nil {
			return nil, err
		}
		if !slices.Contains(defaults, r) {
			return nil, invalidf("writable config %q is not one of the default tool configs (%s)", r, strings.Join(defaults, ", "))
		}
	}
	return slices.DeleteFunc(defaults, func(n string) bool { return slices.Contains(released, n) }), nil
}

package seatbelt

// CacheVar is an environment variable the runner sets for the command so a
// tool keeps its cache in the wrap's private temporary directory instead
// of a shared per-user cache the profile does not open.
type CacheVar struct {
	// Name is the variable.
	Name string
	// Subdir is the directory below the temporary directory it names; the
	// tool creates it.
	Subdir string
	// Why says which tool reads it and where it writes otherwise.
	Why string
}

// cacheVars: the compilers' module caches default to the per-user cache
// directory under /var/folders (DARWIN_USER_CACHE_DIR), shared by every
// process of the user. Opening that directory would let the command plant
// modules that later unconfined builds load, so the profile never does; the
// variables point the caches into the wrap's own directory instead.
var cacheVars = []CacheVar{
	{"CLANG_MODULE_CACHE_PATH", "clang-module-cache",
		"clang's and swiftc's implicit module cache (otherwise <DARWIN_USER_CACHE_DIR>/clang/ModuleCache)"},
	{"SWIFTPM_MODULECACHE_OVERRIDE", "swiftpm-module-cache",
		"the module cache SwiftPM compiles Package.swift manifests with (otherwise the clang default)"},
}

// CacheVars returns the variables the runner points into the temporary
// directory. Each call returns a new slice.
func CacheVars() []CacheVar { return append([]CacheVar(nil), cacheVars...) }

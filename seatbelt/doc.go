// Package seatbelt confines a command on macOS with the kernel's Seatbelt
// sandbox, through /usr/bin/sandbox-exec and a profile generated per command.
//
// The provider builds a Spec from its Policy, then:
//
//	path, err := seatbelt.Locate(seatbelt.SystemLocator()) // ErrUnavailable: SANDBOX_UNAVAILABLE
//	prof, err := seatbelt.Build(seatbelt.OSFS(), spec)     // ErrInvalidPath: INVALID_POLICY
//	args, err := prof.LaunchArgs(self, argv)               // sandbox-exec -p TEXT -D K=V ... -- SELF seatbelt-run -- argv
//	// Path: path, Args: args, Gaps: seatbelt.Gaps(spec) and prof.Gaps(),
//	// DenialSignatures: seatbelt.DenialSignatures(spec), runner failure: a first
//	// stderr line starting with RunnerFailurePrefix or StepFailurePrefix, unless
//	// the step reported the sandbox applied.
//
// SELF is the provider's own binary: launcher.Init runs it as the
// seatbelt-run step inside the applied sandbox, which writes "applied" to
// the pipe SANDBOX_LOCAL_APPLIED_FD names and execs argv. A first stderr line
// "sandbox-exec: ..." is a runner failure only when no such report came, so
// a command cannot forge one.
//
// Only Locate touches the machine (through SystemLocator, which finds
// nothing off darwin) and Build reads the file system through FS; the rest
// is pure and tested on any platform.
//
// # The profile
//
// The profile denies by default and then allows, each for a named reason:
//
//   - process exec and fork; signals and process inspection only within the
//     sandbox;
//   - reads of the whole file system, except the DenyRead paths;
//   - writes under the writable roots and the private temporary directory,
//     except the ReadOnlySubpaths: one (require-all (require-any (subpath
//     ROOT)...) (require-not ...)...), so .git/hooks and .git/config stay
//     read-only under every writable root while git add and git commit work;
//   - writes to /dev/null and /dev/zero, re-opening held descriptors
//     (/dev/fd), the controlling terminal, pseudo-terminals the command opens
//     itself, and ioctl (isatty) on inherited terminals;
//   - the sysctls, Mach services (user lookups, preferences read-only,
//     notify, dirhelper) and POSIX IPC that git, compilers, python and node
//     need to start;
//   - UNIX sockets bound and connected only inside the temporary directory;
//   - with AllowNetwork, IP networking and mDNSResponder (DNS), network
//     configuration and certificate trust services. Other host UNIX sockets
//     (docker.sock, ssh-agent) stay closed even then;
//   - without it, with LoopbackPorts, TCP connects to those ports on
//     localhost only (the domain proxy's, allowed local ports), and with
//     TrustServices the certificate trust services TLS needs.
//
// Every protection is also written as a deny after all allows, so it holds
// whichever way the kernel orders matching rules; a protected path cannot be
// the source of a hard link (file-link) either. Last come two denies no
// allow reopens: ioctl TIOCSTI on any terminal, by its decimal request
// number (the symbol and hex fail to parse on macOS 13 and 14), so the
// command cannot type into the shell it was started from; and setting a
// setuid or setgid bit (file-write-setugid). The protected paths, and
// every parent of theirs and symlink on the way to them that lies inside a
// writable path, cannot be renamed or removed (file-write-unlink): moving a
// parent away, writing inside, and moving it back would otherwise carry a
// protected path out from under its rule.
//
// # Paths are parameters
//
// No path is written into the profile text: each enters as a -D NAME=VALUE
// argument and is read as (param "NAME"), fixed device paths included. Names
// are made from a role and an index (WRITABLE_ROOT_0, READ_ONLY_3_RESOLVED,
// MOVE_GUARD_5), so the text depends only on the shape of the Spec — how
// many paths of each kind, which protected paths are symlinks, how many of
// their parents lie inside the writable paths, whether the network is open
// — and quotes, parentheses, newlines, backslashes or non-ASCII in a path
// change nothing but a -D value. Every writable path shares one list of
// exclusions, so the text grows linearly with the number of paths.
//
// One part of the text does come from a path: a protected path that does
// not exist yet is also matched in any letter case, since on a
// case-insensitive volume (the macOS default) the command could otherwise
// create .git/HOOKS where .git/hooks is protected and git would use it.
// Its deepest existing ancestor is a parameter; the names below it enter a
// regex of fixed grammar, one bracket expression per character ([hH][oO]
// ...), and only when every character is a letter, digit, '.', '_' or '-'
// (none of them special to SBPL or inside a bracket). The regex also
// matches names that add a non-ASCII character to letters of the name
// (the Kelvin sign folds to k; HFS+ ignores some code points), so Unicode
// folding cannot reach the name either; it therefore also denies a few
// such names that are not equal. A name with any other character gets no
// regex and is reported by Profile.Gaps.
//
// The kernel checks a rule against the path as macOS resolves it, so Build
// canonicalises first, in pure Go over FS: symlinks resolved (kept, for a
// protected path, in both spellings: the entry and what it reaches), /tmp,
// /var and /etc spelled under /private, /System/Volumes/Data/Users spelled
// /Users, and existing names in their on-disk letter case.
//
// # Limits
//
// sandbox-exec is deprecated by Apple and its profile language is
// undocumented; it has kept working across releases, and the profile uses
// only forms that well-known agent sandboxes rely on, but a release could
// change it. Its absence is ErrUnavailable, and a profile it cannot compile
// is a runner failure (a "sandbox-exec:" line), never an unconfined run.
// What the profile cannot hold is returned by Gaps: hard links made before
// the command ran, protected paths created later (a new submodule's hooks)
// or, for names the case regex cannot write, under another letter case
// (Profile.Gaps), device nodes made by root, global POSIX IPC names, process metadata,
// and a runner-failure line a command can forge. Programs that write to
// fixed places outside the writable roots (~/Library/Caches, /tmp) fail
// with "Operation not permitted"; point them at the temporary directory
// (TMPDIR, GOCACHE, XDG_CACHE_HOME). The runner does so itself for the
// compilers' module caches (CacheVars: CLANG_MODULE_CACHE_PATH,
// SWIFTPM_MODULECACHE_OVERRIDE), which would otherwise go to the per-user
// cache directory under /var/folders that the profile never opens.
package seatbelt

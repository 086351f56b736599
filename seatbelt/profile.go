package seatbelt

import (
	"strconv"
	"strings"
)

// Param is one profile parameter: passed to sandbox-exec as -D Name=Value
// and read in the profile as (param "Name"). Names are fixed ASCII made
// from a role and an index; values are paths, which never appear in the
// profile text.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Profile is a generated Seatbelt profile and the parameters it reads.
type Profile struct {
	// Text is the SBPL source, passed with -p. It depends only on the
	// shape of the Spec, never on the bytes of a path: how many paths of
	// each kind, which protected paths are symlinks, how many of their
	// parents lie inside the writable paths, whether the network is open.
	// The one exception is a protected path that does not exist yet: the
	// names it lacks, each limited to A-Z, a-z, 0-9, '.', '_' and '-' and
	// written one bracket expression per character, and the depth of its
	// deepest existing ancestor, form a fixed-grammar regex (never a path:
	// the ancestor is a parameter). Its size grows linearly with the
	// number of paths.
	Text string `json:"text"`
	// Params are the -D parameters, in the order the text first uses them.
	// Each is used by Text, and Text uses no other.
	Params []Param `json:"params"`
	// Unguarded are the protected spellings that do not exist yet and that
	// the profile matches only as spelled: a missing name holds a character
	// outside A-Z, a-z, 0-9, '.', '_' and '-', which the case-insensitive
	// rule does not write (see caseVariantPattern). Gaps reports them.
	Unguarded []string `json:"unguarded,omitempty"`
}

// Build canonicalises the paths of spec through fsys (OSFS on a real
// machine) and writes the profile. It fails, wrapping ErrInvalidPath, for
// an empty or relative path or one with a NUL byte, and with the file
// system's error when a path cannot be examined.
func Build(fsys FS, spec Spec) (Profile, error) {
	rs, err := resolveSpec(newResolver(fsys), spec)
	if err != nil {
		return Profile{}, err
	}
	return writeProfile(rs), nil
}

// Constant parameter values: fixed device and socket paths. They are
// parameters like every other path, so the profile text holds no path at
// all and a reviewer (or a test) can check that by looking for none.
const (
	fsRootPath      = "/"
	devNull         = "/dev/null"
	devZero         = "/dev/zero"
	devRandom       = "/dev/random"
	devURandom      = "/dev/urandom"
	devTTY          = "/dev/tty"
	devPTMX         = "/dev/ptmx"
	devFD           = "/dev/fd"
	devDTraceHelper = "/dev/dtracehelper"
	mDNSSocket      = "/private/var/run/mDNSResponder"
)

// ttyPattern matches the pseudo-terminal devices. It is the one path-shaped
// constant in the text: a pattern, fixed here, never built from input.
const ttyPattern = `^/dev/ttys[0-9]+$`

// profileWriter accumulates the text and records each parameter once.
type profileWriter struct {
	b         strings.Builder
	params    []Param
	index     map[string]int
	unguarded []string
	seen      map[string]bool // unguarded spellings already recorded
}

// param returns the SBPL reference to the parameter name, recording its
// value on first use. Names are made by this package, one value each (the
// temporary directory is the one name read in two places).
func (w *profileWriter) param(name, value string) string {
	if _, ok := w.index[name]; !ok {
		w.index[name] = len(w.params)
		w.params = append(w.params, Param{Name: name, Value: value})
	}
	return `(param "` + name + `")`
}

func (w *profileWriter) line(s ...string) {
	for _, x := range s {
		w.b.WriteString(x)
	}
	w.b.WriteByte('\n')
}

func indexed(role string, i int) string { return role + "_" + strconv.Itoa(i) }

// writeProfile is the pure profile builder: canonical paths in, text and
// parameters out.
func writeProfile(rs resolvedSpec) Profile {
	w := &profileWriter{index: map[string]int{}, seen: map[string]bool{}}
	w.line("(version 1)")
	w.line("(deny default)")
	w.line("; sandbox-local: generated for one command. Every path is a -D parameter")
	w.line("; read with (param \"NAME\"); none is written in this text.")
	w.line()
	writeProcesses(w)
	writeSystem(w)
	writeReads(w, rs)
	writeWrites(w, rs)
	writeDevices(w)
	writeSockets(w, rs)
	writeNetwork(w, rs)
	writeProtections(w, rs)
	writeFinalDenies(w)
	return Profile{Text: w.b.String(), Params: w.params, Unguarded: w.unguarded}
}

func writeProcesses(w *profileWriter) {
	w.line("; Processes: run programs and fork freely; signal and inspect only")
	w.line("; processes inside this sandbox.")
	w.line("(allow process-exec)")
	w.line("(allow process-fork)")
	w.line("(allow signal (target same-sandbox))")
	w.line("(allow process-info* (target same-sandbox))")
	w.line()
}

// sysctlNames are the sysctls runtimes and compilers read while starting:
// CPU and memory geometry, OS version, limits, and the caller's own
// process entry. kern.proc.all, kern.procargs* and the like stay closed, so
// other processes' arguments and environments cannot be read.
var sysctlNames = []string{
	"hw.activecpu", "hw.busfrequency_compat", "hw.byteorder", "hw.cacheconfig",
	"hw.cachelinesize", "hw.cachelinesize_compat", "hw.cpufamily", "hw.cpufrequency",
	"hw.cpufrequency_compat", "hw.cpusubfamily", "hw.cpusubtype", "hw.cputype",
	"hw.l1dcachesize", "hw.l1dcachesize_compat", "hw.l1icachesize", "hw.l1icachesize_compat",
	"hw.l2cachesize", "hw.l2cachesize_compat", "hw.l3cachesize", "hw.l3cachesize_compat",
	"hw.logicalcpu", "hw.logicalcpu_max", "hw.machine", "hw.memsize", "hw.model", "hw.ncpu",
	"hw.nperflevels", "hw.packages", "hw.pagesize", "hw.pagesize_compat", "hw.physicalcpu",
	"hw.physicalcpu_max", "hw.tbfrequency", "hw.tbfrequency_compat", "hw.vectorunit",
	"kern.argmax", "kern.boottime", "kern.hostname", "kern.hv_vmm_present", "kern.maxfiles",
	"kern.maxfilesperproc", "kern.maxproc", "kern.ngroups", "kern.osproductversion",
	"kern.osrelease", "kern.osrevision", "kern.ostype", "kern.osvariant_status", "kern.osversion",
	"kern.secure_kernel", "kern.tcsm_available", "kern.tcsm_enable", "kern.usrstack64",
	"kern.version", "machdep.ptrauth_enabled", "security.mac.lockdown_mode_state",
	"sysctl.proc_cputype", "sysctl.proc_translated", "vm.loadavg",
}

// sysctlPrefixes are read by prefix: CPU feature flags (arm64 and x86_64),
// performance levels, per-process entries (see Gaps), and the interface
// list and routing table, which getifaddrs(3) reads (Go's net.Interfaces,
// node's os.networkInterfaces, python's socket.if_nameindex) in every
// network mode: it names the host's interfaces and their addresses, and
// opens no socket.
var sysctlPrefixes = []string{"hw.optional.", "hw.perflevel", "kern.proc.pgrp.", "kern.proc.pid.", "machdep.cpu.", "net.routetable."}

// machServices are the only daemons the command may look up.
var machServices = []struct{ kind, name, why string }{
	{"global-name", "com.apple.system.opendirectoryd.libinfo", "user and group lookups (getpwuid: git, ssh, python)"},
	{"global-name", "com.apple.system.opendirectoryd.membership", "group membership checks"},
	{"global-name", "com.apple.system.notification_center", "notify(3), used by libc for time zone and locale changes"},
	{"global-name", "com.apple.cfprefsd.daemon", "preference reads"},
	{"global-name", "com.apple.cfprefsd.agent", "preference reads"},
	{"local-name", "com.apple.cfprefsd.agent", "preference reads"},
	{"global-name", "com.apple.bsd.dirhelper", "the per-user temporary and cache directory names (xcrun, clang)"},
	{"global-name", "com.apple.PowerManagement.control", "IOPMLib: power assertions and power-source queries that build and test tools make"},
}

func writeSystem(w *profileWriter) {
	w.line("; System information that runtimes and compilers read while starting.")
	w.line("(allow sysctl-read")
	for _, n := range sysctlNames {
		w.line(`  (sysctl-name "`, n, `")`)
	}
	for _, n := range sysctlPrefixes {
		w.line(`  (sysctl-name-prefix "`, n, `")`)
	}
	w.line(")")
	w.line("; The JVM and V8 reach these through sysctl's write path although they")
	w.line("; only read CPU data or set state of their own thread.")
	w.line("(allow sysctl-write")
	w.line(`  (sysctl-name "kern.grade_cputype")`)
	w.line(`  (sysctl-name "kern.tcsm_enable"))`)
	w.line("; host_processor_info(), which libuv uses for os.cpus().")
	w.line("(allow mach-host*)")
	w.line("; Power-management queries (IOPMLib) made by some build and test tools.")
	w.line(`(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))`)
	w.line()
	w.line("; Host services, each named. Preferences are read-only: cfprefsd refuses")
	w.line("; writes because user-preference-write stays denied.")
	w.line("(allow mach-lookup")
	for _, s := range machServices {
		w.line(`  (`, s.kind, ` "`, s.name, `") ; `, s.why)
	}
	w.line(")")
	w.line("(allow user-preference-read)")
	w.line(`(allow ipc-posix-shm-read* (ipc-posix-name-prefix "apple.cfprefs."))`)
	w.line("; POSIX IPC: semaphores (python multiprocessing's SemLock) and the shared")
	w.line("; memory names of python's shared_memory and of the OpenMP runtime.")
	w.line("(allow ipc-posix-sem)")
	w.line("(allow ipc-posix-shm*")
	w.line(`  (ipc-posix-name-prefix "/psm_")`)
	w.line(`  (ipc-posix-name-prefix "/__KMP_REGISTERED_LIB_"))`)
	w.line()
}

// spellings returns the parameter references of each protected path: the
// entry as named and, when a final symlink makes it differ, what it reaches.
func spellings(w *profileWriter, role string, ps []protectedAs) []string {
	var out []string
	for i, p := range ps {
		out = append(out, w.param(indexed(role, i), p.named))
		if p.resolved != p.named {
			out = append(out, w.param(indexed(role, i)+"_RESOLVED", p.resolved))
		}
	}
	return out
}

// exclusions returns the require-not filters that keep every spelling of
// the protected paths, the entry and all below it, out of an allow.
func exclusions(w *profileWriter, role string, ps []protectedAs) []string {
	var out []string
	for _, ref := range spellings(w, role, ps) {
		out = append(out, "(require-not (literal "+ref+"))", "(require-not (subpath "+ref+"))")
	}
	return out
}

// writeList writes items one per line at indent, closing the last with
// closing.
func writeList(w *profileWriter, indent string, items []string, closing string) {
	for i, it := range items {
		if i == len(items)-1 {
			w.line(indent, it, closing)
		} else {
			w.line(indent, it)
		}
	}
}

func writeReads(w *profileWriter, rs resolvedSpec) {
	if len(rs.denyRead) == 0 {
		w.line("; Reads: the whole file system.")
		w.line("(allow file-read*)")
		w.line()
		return
	}
	w.line("; Reads: the whole file system except the deny-read paths (denied again")
	w.line("; at the end).")
	w.line("(allow file-read*")
	w.line("  (require-all")
	w.line("    (subpath ", w.param("FS_ROOT", fsRootPath), ")")
	writeList(w, "    ", exclusions(w, "DENY_READ", rs.denyRead), "))")
	w.line()
}

func writeWrites(w *profileWriter, rs resolvedSpec) {
	var areas []string
	for i, p := range rs.writable {
		areas = append(areas, "(subpath "+w.param(indexed("WRITABLE_ROOT", i), p)+")")
	}
	if rs.tempDir != "" {
		areas = append(areas, "(subpath "+w.param("TEMP_DIR", rs.tempDir)+")")
	}
	if len(areas) == 0 {
		w.line("; Writes: none to files (devices below).")
		w.line()
		return
	}
	w.line("; Writes: under each writable root and the private temporary directory,")
	w.line("; never inside a read-only subpath (denied again at the end).")
	w.line("(allow file-write*")
	if len(rs.readOnly) == 0 {
		writeList(w, "  ", areas, ")")
		w.line()
		return
	}
	w.line("  (require-all")
	w.line("    (require-any")
	writeList(w, "      ", areas, ")")
	writeList(w, "    ", exclusions(w, "READ_ONLY", rs.readOnly), "))")
	w.line()
}

func writeDevices(w *profileWriter) {
	w.line("; Devices: null and zero, re-opening descriptors the command already")
	w.line("; holds, its controlling terminal, and pseudo-terminals it opens.")
	w.line("(allow file-write-data file-ioctl")
	w.line("  (literal ", w.param("DEV_NULL", devNull), ")")
	w.line("  (literal ", w.param("DEV_ZERO", devZero), ")")
	w.line("  (literal ", w.param("DEV_TTY", devTTY), "))")
	w.line("(allow file-write-data (subpath ", w.param("DEV_FD", devFD), "))")
	w.line("(allow file-ioctl")
	w.line("  (literal ", w.param("DEV_RANDOM", devRandom), ")")
	w.line("  (literal ", w.param("DEV_URANDOM", devURandom), ")")
	w.line("  (literal ", w.param("DEV_DTRACEHELPER", devDTraceHelper), "))")
	w.line("(allow pseudo-tty)")
	w.line("(allow file-write-data file-ioctl (literal ", w.param("DEV_PTMX", devPTMX), "))")
	w.line("(allow file-write-data file-ioctl")
	w.line("  (require-all")
	w.line(`    (regex #"`, ttyPattern, `")`)
	w.line(`    (extension "com.apple.sandbox.pty")))`)
	w.line("; Terminals it inherited: ioctl only (isatty, window size), so it can use")
	w.line("; them but cannot open another terminal of the user's.")
	w.line(`(allow file-ioctl (regex #"`, ttyPattern, `"))`)
	w.line()
}

func writeSockets(w *profileWriter, rs resolvedSpec) {
	if rs.tempDir == "" {
		w.line("; UNIX sockets: created freely (socketpair), bound and connected to")
		w.line("; nowhere, so no daemon of the host is reachable.")
		w.line("(allow system-socket (socket-domain AF_UNIX))")
	} else {
		w.line("; UNIX sockets: created freely, bound and connected to only inside the")
		w.line("; private temporary directory, so the command reaches servers it starts")
		w.line("; itself and no daemon of the host.")
		w.line("(allow system-socket (socket-domain AF_UNIX))")
		tmp := w.param("TEMP_DIR", rs.tempDir)
		w.line("(allow network-bind (local unix-socket (subpath ", tmp, ")))")
		w.line("(allow network-outbound (remote unix-socket (subpath ", tmp, ")))")
	}
	if len(rs.sockets) > 0 {
		w.line("; The host's UNIX sockets the policy allows, each by its exact path.")
		for i, p := range rs.sockets {
			w.line("(allow network-outbound (remote unix-socket (path-literal ", w.param(indexed("UNIX_SOCKET", i), p), ")))")
		}
	}
	w.line()
}

// networkServices are looked up only with the network open: name
// resolution, network configuration, and certificate trust for TLS.
var networkServices = []string{
	"com.apple.SystemConfiguration.DNSConfiguration",
	"com.apple.SystemConfiguration.configd",
	"com.apple.dnssd.service",
	"com.apple.networkd",
	"com.apple.trustd",
	"com.apple.trustd.agent",
	"com.apple.SecurityServer",
	"com.apple.ocspd",
}

// trustServices are the mach services TLS certificate verification
// talks to (Security.framework), reachable with the network closed when
// the command uses the domain proxy.
var trustServices = []string{"com.apple.trustd", "com.apple.trustd.agent", "com.apple.SecurityServer"}

func writeNetwork(w *profileWriter, rs resolvedSpec) {
	if !rs.network && len(rs.ports) > 0 {
		w.line("; Network: closed but for TCP connects to these ports on localhost (the")
		w.line("; domain proxy's, allowed local ports). No bind, no inbound, no DNS.")
		w.line("(allow system-socket (socket-domain AF_INET))")
		w.line("(allow system-socket (socket-domain AF_INET6))")
		for _, port := range rs.ports {
			w.line(`(allow network-outbound (remote tcp "localhost:`, strconv.Itoa(port), `"))`)
		}
		if rs.trust {
			writeMachNames(w, trustServices)
		}
		w.line()
		return
	}
	if !rs.network {
		w.line("; Network: closed. No IP socket may bind, connect or accept.")
		w.line()
		return
	}
	w.line("; Network: open for IP. Of the host's UNIX sockets only mDNSResponder's,")
	w.line("; which name resolution needs, is reachable.")
	w.line("(allow system-socket)")
	w.line(`(allow network-bind (local ip "*:*"))`)
	w.line(`(allow network-inbound (local ip "*:*"))`)
	w.line(`(allow network-outbound (remote ip "*:*"))`)
	w.line("(allow network-outbound (remote unix-socket (subpath ", w.param("MDNS_SOCKET", mDNSSocket), ")))")
	writeMachNames(w, networkServices)
	w.line()
}

// writeMachNames allows looking up each of names.
func writeMachNames(w *profileWriter, names []string) {
	w.line("(allow mach-lookup")
	for i, s := range names {
		if i == len(names)-1 {
			w.line(`  (global-name "`, s, `"))`)
		} else {
			w.line(`  (global-name "`, s, `")`)
		}
	}
}

// writeProtections repeats every protection as a deny after all allows.
// Whichever way the kernel orders matching rules (last match, or deny over
// allow), no allow above can reopen a protected path: the allows exclude
// them and the denies come last.
func writeProtections(w *profileWriter, rs resolvedSpec) {
	if len(rs.readOnly) > 0 {
		w.line("; Read-only subpaths (each spelling), the entry and all below it; not")
		w.line("; the source of a hard link either, so no second name under a writable")
		w.line("; root can reach them.")
		w.line("(deny file-write* file-link")
		writeBothSpellings(w, "READ_ONLY", rs.readOnly)
		w.line()
	}
	if len(rs.denyRead) > 0 {
		w.line("; Deny-read paths: not readable, and not movable, removable or hard-linked,")
		w.line("; so they cannot be read under another name.")
		w.line("(deny file-read*")
		writeBothSpellings(w, "DENY_READ", rs.denyRead)
		w.line("(deny file-write-unlink file-link")
		writeBothSpellings(w, "DENY_READ", rs.denyRead)
		w.line()
	}
	if len(rs.guards) > 0 {
		w.line("; Parents of the protected paths, and symlinks on the way to them,")
		w.line("; inside the writable paths: not renamable or removable, so nothing")
		w.line("; protected can be carried out from under its rule and back.")
		w.line("(deny file-write-unlink")
		var filters []string
		for i, g := range rs.guards {
			filters = append(filters, "(literal "+w.param(indexed("MOVE_GUARD", i), g)+")")
		}
		writeList(w, "  ", filters, ")")
		w.line()
	}
}

// tiocsti is the request number of ioctl(TIOCSTI), which pushes a byte
// into a terminal's input queue as if typed: _IOW('t', 114, char) in
// <sys/ttycom.h>, 0x80017472. The profile names it in decimal: the symbol
// TIOCSTI and a hex literal both fail to parse in sandbox-exec on macOS 13
// and 14 ("unbound variable"), the decimal number parses everywhere
// ioctl-command does.
const tiocsti = iocIn | 1<<16 | 't'<<8 | 114

// iocIn is IOC_IN, the "copies in" direction bit of a BSD ioctl number.
const iocIn = 0x80000000

// writeFinalDenies writes the denies that no allow above may reopen,
// after all of them: terminal input injection and set-id bits.
func writeFinalDenies(w *profileWriter) {
	w.line("; Terminal input injection: TIOCSTI (by number, ", "_IOW('t', 114, char)", ") on any")
	w.line("; terminal, the inherited one included, would type into the shell that")
	w.line("; reads it after the command exits. Other terminal ioctls stay allowed.")
	w.line("(deny file-ioctl (ioctl-command ", strconv.Itoa(tiocsti), "))")
	w.line("; No setuid or setgid bit on any file the command can write.")
	w.line("(deny file-write-setugid)")
}

func writeBothSpellings(w *profileWriter, role string, ps []protectedAs) {
	var filters []string
	for _, ref := range spellings(w, role, ps) {
		filters = append(filters, "(literal "+ref+")", "(subpath "+ref+")")
	}
	filters = append(filters, caseVariantFilters(w, role, ps)...)
	writeList(w, "  ", filters, ")")
}

// caseVariantFilters returns, for each protected spelling that does not
// exist yet, a filter matching it in any letter case: the deepest existing
// ancestor (a parameter, so no path enters the text) and a regex over the
// names below it. Without it, on a case-insensitive volume (the macOS
// default) the command could create .git/HOOKS where .git/hooks is
// protected, and git would run the hooks it finds there. A spelling the
// regex cannot write is recorded in w.unguarded instead.
func caseVariantFilters(w *profileWriter, role string, ps []protectedAs) []string {
	var out []string
	for i, p := range ps {
		for _, v := range p.variants {
			if tooLong(v.missing) {
				continue // cannot be created in any spelling
			}
			pat, ok := caseVariantPattern(len(splitPath(v.existing)), v.missing)
			if !ok {
				if !w.seen[v.path] {
					w.seen[v.path] = true
					w.unguarded = append(w.unguarded, v.path)
				}
				continue
			}
			ref := w.param(indexed(role, i)+v.suffix, v.existing)
			out = append(out, "(require-all (subpath "+ref+`) (regex #"`+pat+`"))`)
		}
	}
	return out
}

// nameMax is NAME_MAX on darwin: no longer name can be created (APFS and
// HFS+ count UTF-16 units or bytes, either at most this many for the ASCII
// names a variant regex is written for).
const nameMax = 255

// tooLong reports whether a name in names is longer than any file system
// of macOS allows, so the path can never exist.
func tooLong(names []string) bool {
	for _, n := range names {
		if len(n) > nameMax {
			return true
		}
	}
	return false
}

// nameChar reports whether c may appear in a name the case-variant regex
// writes: letters, digits, '.', '_' and '-', each safe inside a bracket
// expression and none special to SBPL's #"..." literal.
func nameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// caseVariantPattern returns the regex matching, at depth components below
// the root, the names missing in any spelling a case-insensitive volume
// treats as the same, and everything below them:
//
//	^/[^/]+ (depth times) /NAME/NAME... (/|$)
//
// Each NAME is (EXACT|SET*[^ -~](SET|[^ -~])*). EXACT is the name letter by
// letter, a letter as [xX] and any other character as [c]: every ASCII
// letter case. The other branch, LOOSE, is a name holding at least one
// character outside printable ASCII ([^ -~]) and otherwise only characters
// of the name in either case (SET, one bracket expression): a
// name that Unicode case folding or normalisation could make equal to it
// (the Kelvin sign for k, the long s, ligatures, HFS+'s ignorable code
// points) needs a non-ASCII character, and every ASCII character of it
// folds to one of the name's own. It over-matches (such names are denied
// although not equal), but only names of that form, directly on the
// missing chain. The subpath filter beside it pins the existing ancestor,
// so the regex only counts its depth. ok is false for a name with a
// character nameChar refuses.
func caseVariantPattern(depth int, missing []string) (pattern string, ok bool) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < depth; i++ {
		b.WriteString("/[^/]+")
	}
	for _, name := range missing {
		var exact, set strings.Builder
		had := map[byte]bool{}
		add := func(c byte) {
			if !had[c] {
				had[c] = true
				if c != '-' {
					set.WriteByte(c)
				}
			}
		}
		for i := 0; i < len(name); i++ {
			c := name[i]
			if !nameChar(c) {
				return "", false
			}
			switch {
			case 'a' <= c && c <= 'z':
				exact.WriteString("[" + string(c) + string(c-'a'+'A') + "]")
				add(c)
				add(c - 'a' + 'A')
			case 'A' <= c && c <= 'Z':
				exact.WriteString("[" + string(c-'A'+'a') + string(c) + "]")
				add(c - 'A' + 'a')
				add(c)
			default:
				exact.WriteString("[" + string(c) + "]")
				add(c)
			}
		}
		if had['-'] {
			set.WriteByte('-') // last in the bracket: a literal '-'
		}
		class := "[" + set.String() + "]"
		b.WriteString("/(" + exact.String() + "|" + class + "*[^ -~](" + class + "|[^ -~])*)")
	}
	b.WriteString("(/|$)")
	return b.String(), true
}

// Stage 2 of the ns-run launcher: pid 2 of the sandbox, in C, before (and
// instead of) the Go runtime. It
//
//   1. decodes the launcher vocabulary (internal/vocab: the Go definition;
//      ns_decode_test.go checks this decoder against it);
//   2. plans the mounts while the host's tree is still in view;
//   3. builds the new root and pivots into it:
//        - the host's tree bound recursively, made private, and read-only,
//          nosuid, nodev in one mount_setattr(AT_RECURSIVE);
//        - /tmp read-only: an overlay of the host's /tmp, so no host socket
//          there can be connected to through it;
//        - a minimal /dev (null, zero, full, random, urandom, tty, a new
//          devpts, a private /dev/shm), a fresh read-only /proc (the uid map
//          keeps the caller's ids, and global uid 0 may write /proc/sys by
//          mode bits alone);
//        - the layers, shallowest first: writable binds of the writable
//          roots and the temp dir; pins (a directory bound onto itself, so
//          it cannot be renamed) between a writable root and a read-only
//          subpath; read-only binds of the read-only subpaths; empty
//          read-only mounts over the deny-read paths; read-only binds of
//          the allowed UNIX sockets onto themselves;
//      Paths are checked and used as one object (see "race-free paths"
//      below): another sandbox writing a shared workspace can swap a path
//      component for a symlink at any moment, and mount(2) would follow it;
//   4. brings up loopback in the new network namespace;
//   5. confines the allowed UNIX sockets with Landlock (ABI 9), empties
//      every capability set, marks descriptors close-on-exec, sets
//      no_new_privs and loads the seccomp program the provider compiled for
//      this very spec (-seccomp: the filter is defined once, in Go);
//   6. resets the signal mask and dispositions, and execs the command in
//      place (127 / 126 when it cannot, as the Go launcher does).
//
// Every failure before exec is sbx_fatal: one signed line, exit 125.

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ns_linux.h"
#include "shared_linux.h"



// ---- 1. the vocabulary ----

// clean_abs reports whether p is absolute, clean (what Go's path.Clean
// leaves unchanged) and not empty.
static int clean_abs(const char *p) {
	size_t n = strlen(p);
	if (n == 0 || p[0] != '/')
		return 0;
	if (n == 1)
		return 1;
	if (p[n - 1] == '/')
		return 0;
	for (const char *s = p; *s; s++) {
		if (*s != '/')
			continue;
		const char *e = s + 1;
		if (*e == '/')
			return 0;
		if (e[0] == '.' && (e[1] == '/' || e[1] == 0))
			return 0;
		if (e[0] == '.' && e[1] == '.' && (e[2] == '/' || e[2] == 0))
			return 0;
	}
	return 1;
}

// parse_port: decimal, no sign, no leading zero, 1 to 65535 (the one form
// internal/vocab writes); -1 otherwise.
static int parse_port(const char *v) {
	size_t n = strlen(v);
	if (n == 0 || n > 5 || v[0] == '0')
		return -1;
	int port = 0;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return -1;
		port = port * 10 + (*v - '0');
	}
	return port <= 65535 ? port : -1;
}

// valid_program: lowercase hex, whole 8-byte instructions, not empty.
static int valid_program(const char *h) {
	size_t n = strlen(h);
	if (n == 0 || n % 16 != 0)
		return 0;
	for (; *h; h++)
		if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f')))
			return 0;
	return 1;
}

int sbx_decode(int argc, char **args, struct spec *s, char *err, size_t errlen) {
	memset(s, 0, sizeof *s);
	if (argc > SBX_MAX_ARGS)
		return snprintf(err, errlen, "%d arguments, at most %d", argc, SBX_MAX_ARGS), -1;
	if (argc < 1)
		return snprintf(err, errlen, "no contract version"), -1;
	if (strcmp(args[0], SBX_VERSION) != 0)
		return snprintf(err, errlen, "contract version \"%.120s\", this launcher speaks \"%s\"", args[0], SBX_VERSION), -1;
	s->writable = calloc(argc, sizeof(char *));
	s->ro = calloc(argc, sizeof(char *));
	s->deny = calloc(argc, sizeof(char *));
	s->unixsock = calloc(argc, sizeof(char *));
	s->ports = calloc(argc, sizeof(int));
	if (!s->writable || !s->ro || !s->deny || !s->unixsock || !s->ports)
		return snprintf(err, errlen, "out of memory"), -1;
	int i = 1, dashes = 0, net = 0;
	while (i < argc) {
		const char *opt = args[i++];
		if (strcmp(opt, "--") == 0) {
			dashes = 1;
			break;
		}
		int takes = !strcmp(opt, "-w") || !strcmp(opt, "-t") || !strcmp(opt, "-r") || !strcmp(opt, "-d") ||
		            !strcmp(opt, "-u") || !strcmp(opt, "-C") || !strcmp(opt, "-net") || !strcmp(opt, "-seccomp") ||
		            !strcmp(opt, "-port") || !strcmp(opt, "-bridge");
		char *val = NULL;
		if (takes) {
			if (i >= argc)
				return snprintf(err, errlen, "option %s needs a value", opt), -1;
			val = args[i++];
		}
		const char *what = NULL;
		if (!strcmp(opt, "-w")) {
			s->writable[s->nwritable++] = val, what = "writable root";
		} else if (!strcmp(opt, "-t")) {
			if (s->tempdir)
				return snprintf(err, errlen, "-t given twice"), -1;
			s->tempdir = val, what = "temp dir";
		} else if (!strcmp(opt, "-r")) {
			s->ro[s->nro++] = val, what = "read-only subpath";
		} else if (!strcmp(opt, "-d")) {
			s->deny[s->ndeny++] = val, what = "deny-read path";
		} else if (!strcmp(opt, "-u")) {
			s->unixsock[s->nunixsock++] = val, what = "UNIX socket";
		} else if (!strcmp(opt, "-C")) {
			if (s->dir)
				return snprintf(err, errlen, "-C given twice"), -1;
			s->dir = val, what = "working directory";
		} else if (!strcmp(opt, "-net")) {
			if (net)
				return snprintf(err, errlen, "-net given twice"), -1;
			net = 1;
			if (!strcmp(val, SBX_NET_ALLOW))
				s->allow_net = 1;
			else if (!strcmp(val, SBX_NET_PROXIED))
				s->proxied = 1;
			else if (strcmp(val, SBX_NET_DENY) != 0)
				return snprintf(err, errlen, "-net \"%.120s\": want deny, allow or proxied", val), -1;
		} else if (!strcmp(opt, "-port")) {
			int port = parse_port(val);
			if (port < 0)
				return snprintf(err, errlen, "-port \"%.120s\": not a port", val), -1;
			s->ports[s->nports++] = port;
		} else if (!strcmp(opt, "-bridge")) {
			if (s->bridge)
				return snprintf(err, errlen, "-bridge given twice"), -1;
			s->bridge = val, what = "bridge";
		} else if (!strcmp(opt, "-seccomp")) {
			if (s->seccomp)
				return snprintf(err, errlen, "-seccomp given twice"), -1;
			if (!valid_program(val))
				return snprintf(err, errlen, "-seccomp: not a program in hex"), -1;
			s->seccomp = val;
		} else if (!strcmp(opt, "-full")) {
			s->require_full = 1;
		} else if (!strcmp(opt, "-probe")) {
			s->probe = 1;
		} else {
			return snprintf(err, errlen, "unknown option \"%.120s\"", opt), -1;
		}
		if (what && !clean_abs(val))
			return snprintf(err, errlen, "%s: path \"%.120s\" is not absolute and clean", what, val), -1;
	}
	if (!dashes)
		return snprintf(err, errlen, "missing --"), -1;
	if (!net)
		return snprintf(err, errlen, "missing -net"), -1;
	if (s->allow_net && s->nports)
		return snprintf(err, errlen, "-port under network allow"), -1;
	if (s->proxied && !s->nports)
		return snprintf(err, errlen, "proxied network without the proxy's -port"), -1;
	if (s->bridge && !s->nports)
		return snprintf(err, errlen, "-bridge without -port"), -1;
	s->cmd = args + i;
	s->ncmd = argc - i;
	if (s->probe && s->ncmd)
		return snprintf(err, errlen, "probe mode takes no command"), -1;
	if (!s->probe && !s->ncmd)
		return snprintf(err, errlen, "no command"), -1;
	return 0;
}

// ---- race-free paths ----
//
// The provider resolved every path at Wrap time, but the launcher acts on
// them later, and a command of another sandbox that can write a shared
// workspace may by then have swapped a directory on a path for a symlink
// (to the user's home, or to a decoy .git). mount(2) follows symlinks in
// every component, so nothing is mounted by path here: each path is opened
// once with openat2(RESOLVE_NO_SYMLINKS), and the mount is made from and
// onto those descriptors (open_tree, mount_setattr on the detached copy,
// move_mount), so the object checked is the object used:
//
//   - writable roots, the temp dir and the pins (the directories between a
//     writable root and a read-only subpath) had no symlink at Wrap time:
//     a symlink in any of their components now is an attack, and fatal;
//   - a read-only subpath had its directories resolved at Wrap time: a
//     symlink among them now is fatal too; its last element may be a
//     symlink (documented: what it points to is kept read-only when that
//     lies in a writable root); a read-only bind that would land inside the
//     empty mount of a deny-read path is dropped (that mount hides more,
//     and the bind would show the denied file again);
//   - a deny-read path may be a symlink (it is denied as itself and as its
//     target): it is resolved once, and the empty mount goes onto that
//     resolved path, opened without symlinks;
//   - an allowed UNIX socket was resolved at Wrap time: it is bound (and
//     granted to Landlock) from a descriptor opened without symlinks, only
//     when that descriptor is a socket; otherwise it stays unreachable;
//   - every mount point in the new root is opened the same way, beneath
//     the new root, and a read-only layer or pin must find there the very
//     object it planned on.

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
struct sbx_open_how {
	uint64_t flags, mode, resolve;
};
#define SBX_RESOLVE_NO_MAGICLINKS 0x02
#define SBX_RESOLVE_NO_SYMLINKS 0x04
#define SBX_RESOLVE_BENEATH 0x08
#define SBX_OPEN_TREE_CLONE 1
#define SBX_MOVE_MOUNT_F_EMPTY_PATH 0x04
#define SBX_MOVE_MOUNT_T_EMPTY_PATH 0x40
#define SBX_FSCONFIG_SET_STRING 1
#define SBX_FSCONFIG_CMD_CREATE 6

// open_strict opens path (relative to dirfd; beneath it when beneath is
// set) as an O_PATH descriptor without following a symlink in any
// component: ELOOP when one is there.
static int open_strict(int dirfd, const char *path, int flags, int beneath) {
	struct sbx_open_how how = {.flags = O_PATH | O_CLOEXEC | flags,
	                           .resolve = SBX_RESOLVE_NO_SYMLINKS | SBX_RESOLVE_NO_MAGICLINKS |
	                                      (beneath ? SBX_RESOLVE_BENEATH : 0)};
	return syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

// swapped_or is the reason to give for a failed strict open.
static const char *swapped_or(int e) {
	return e == ELOOP ? "a component is a symlink now, it was not at wrap time" : strerror(e);
}

// ---- 2. the plan ----

static char *xstrdup(const char *p) {
	char *c = strdup(p);
	if (!c)
		sbx_fatal(sbx_ns_token, "out of memory");
	return c;
}

// resolve_failed is fatal unless errno says the path is simply not there:
// a protection must never be dropped because a path could not be resolved.
static void resolve_failed(const char *what, const char *p) {
	if (errno != ENOENT && errno != ENOTDIR)
		sbx_fatal(sbx_ns_token, "plan the mounts: resolve %s %s: %s", what, p, strerror(errno));
}

enum { LAYER_WRITABLE, LAYER_PIN, LAYER_RO, LAYER_DENY, LAYER_SOCKET };

// A layer is one mount of the new root. fd is an O_PATH descriptor of its
// source, opened at plan time without following symlinks (writable and
// read-only layers; -1 for the others); dev and ino identify the object a
// read-only layer or a pin was planned on, so that the mount point found
// at build time can be checked to be that very object; mnt is the
// deny-read mount, kept to seal it.
struct layer {
	int kind, isdir;
	char *path;
	int fd, mnt;
	dev_t dev;
	ino_t ino;
};

static struct layer *layers;
static int nlayers, caplayers;

// add_layer adds a layer; it takes fd (closing it when the layer is
// already planned), and st, when given, is the object it was planned on.
static void add_layer(int kind, const char *path, int isdir, int fd, const struct stat *st) {
	for (int i = 0; i < nlayers; i++)
		if (layers[i].kind == kind && !strcmp(layers[i].path, path)) {
			if (fd >= 0)
				close(fd);
			return;
		}
	if (nlayers == caplayers) {
		caplayers = caplayers ? 2 * caplayers : 64;
		layers = realloc(layers, caplayers * sizeof *layers);
	}
	char *copy = strdup(path);
	if (!layers || !copy)
		sbx_fatal(sbx_ns_token, "plan the mounts: out of memory");
	layers[nlayers++] = (struct layer){kind, isdir, copy, fd, -1, st ? st->st_dev : 0, st ? st->st_ino : 0};
}

static int depth(const char *p) {
	int d = 0;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

static int layer_cmp(const void *a, const void *b) {
	const struct layer *x = a, *y = b;
	int dx = depth(x->path), dy = depth(y->path);
	return dx != dy ? dx - dy : x->kind - y->kind;
}

// deepest_root returns the deepest writable root (or the temp dir) holding p.
static const char *deepest_root(const struct spec *s, const char *p) {
	const char *best = NULL;
	for (int i = 0; i <= s->nwritable; i++) {
		const char *r = i < s->nwritable ? s->writable[i] : s->tempdir;
		if (r && sbx_within(p, r) && (!best || strlen(r) > strlen(best)))
			best = r;
	}
	return best;
}

// plan_unix_sockets binds each allowed UNIX socket onto itself, read-only:
// a socket seen through the read-only overlay on /tmp cannot be connected to
// (the overlay's inode is not the socket), /dev is the sandbox's own, and a
// socket inside a deny-read directory is listed by name. Only a socket is
// bound: a path swapped for anything else (a symlink to a deny-read file)
// is left as the host tree has it, so a bind here can never expose a file.
// The provider resolved the path at Wrap time: it is opened without
// following any symlink (one there now, swapped in by another sandbox,
// could name another socket: it is not followed, and the path stays
// unreachable), and the bind is made from that descriptor, so what was
// checked to be a socket is what is bound.
static void plan_unix_sockets(const struct spec *s) {
	struct stat st;
	for (int i = 0; i < s->nunixsock; i++) {
		int fd = open_strict(AT_FDCWD, s->unixsock[i], 0, 0);
		if (fd < 0 && errno != ELOOP)
			resolve_failed("UNIX socket", s->unixsock[i]);
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
			add_layer(LAYER_SOCKET, s->unixsock[i], 0, fd, NULL);
		else if (fd >= 0)
			close(fd);
	}
}

// plan_deny_read plans the empty mounts over the deny-read paths, each
// resolved once: a symlink is denied as what it points to (the provider
// lists the link and its target at Wrap time).
static void plan_deny_read(const struct spec *s) {
	struct stat st;
	for (int i = 0; i < s->ndeny; i++) {
		char *real = realpath(s->deny[i], NULL);
		if (real && stat(real, &st) < 0) {
			resolve_failed("deny-read path", real);
			free(real);
			real = NULL;
		} else if (!real) {
			resolve_failed("deny-read path", s->deny[i]);
		}
		if (!real) {
			// Missing: as vocab.NamespaceGaps, a gap only inside a
			// writable root (not the temp dir), where the command could
			// create it. -full refuses it here, where the plan looked.
			int inside = 0;
			for (int j = 0; j < s->nwritable; j++)
				inside |= sbx_within(s->deny[i], s->writable[j]);
			if (inside && s->require_full && lstat(s->deny[i], &st) < 0)
				sbx_fatal(sbx_ns_token, "full enforcement required, but: deny-read path %s does not exist inside a writable root",
				          s->deny[i]);
			continue;
		}
		add_layer(LAYER_DENY, real, S_ISDIR(st.st_mode), -1, NULL);
		free(real);
	}
}

// hidden reports whether p lies in a planned deny-read path that is
// mounted over its writable root (at or below root): a bind there would
// show what the empty mount hides. A deny-read path above the root is
// covered by the root's own bind already.
static int hidden(const char *p, const char *root) {
	for (int i = 0; i < nlayers; i++)
		if (layers[i].kind == LAYER_DENY && sbx_within(p, layers[i].path) && sbx_within(layers[i].path, root))
			return 1;
	return 0;
}

// plan_pins pins every directory strictly between root and p, each opened
// without symlinks now and remembered by identity.
static void plan_pins(const char *root, const char *p) {
	char *d = xstrdup(p);
	struct stat st;
	for (char *slash = strrchr(d, '/'); slash && slash > d; slash = strrchr(d, '/')) {
		*slash = 0;
		if (!sbx_within(d, root) || !strcmp(d, root))
			break;
		int fd = open_strict(AT_FDCWD, d, O_DIRECTORY, 0);
		if (fd < 0 || fstat(fd, &st) < 0)
			sbx_fatal(sbx_ns_token, "plan the mounts: pin %s: %s", d, swapped_or(errno));
		close(fd);
		add_layer(LAYER_PIN, d, 1, -1, &st);
	}
	free(d);
}

// plan_read_only plans the read-only bind of p (and the pins above it).
// The provider resolved p's directories at Wrap time, so a symlink among
// them now is fatal; a missing p is skipped (the provider reported it).
static void plan_read_only(const struct spec *s, const char *p) {
	char *dir = xstrdup(p);
	char *slash = strrchr(dir, '/');
	*slash = 0;
	int dfd = open_strict(AT_FDCWD, *dir ? dir : "/", O_DIRECTORY, 0);
	if (dfd < 0 && errno == ELOOP)
		sbx_fatal(sbx_ns_token, "plan the mounts: read-only subpath %s: %s", p, swapped_or(errno));
	int fd = dfd < 0 ? -1 : openat(dfd, slash + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		resolve_failed("read-only subpath", p);
	if (dfd >= 0)
		close(dfd);
	free(dir);
	struct stat st;
	// -full is checked here, on what the plan uses, not by name before
	// it: a swap in between would otherwise pass the check.
	if (fd < 0) {
		if (s->require_full)
			sbx_fatal(sbx_ns_token, "full enforcement required, but: read-only subpath %s is missing", p);
		return; // nothing there
	}
	if (fstat(fd, &st) < 0)
		sbx_fatal(sbx_ns_token, "plan the mounts: read-only subpath %s: %s", p, strerror(errno));
	if (S_ISLNK(st.st_mode) && s->require_full)
		sbx_fatal(sbx_ns_token, "full enforcement required, but: read-only subpath %s is a symlink", p);
	char *real = NULL;
	if (S_ISLNK(st.st_mode)) {
		// Protect what the link points to (that only narrows); the
		// link itself cannot be covered (the provider reported it).
		close(fd);
		real = realpath(p, NULL);
		if (!real) {
			resolve_failed("the target of read-only subpath", p);
			return; // dangling
		}
		fd = open_strict(AT_FDCWD, real, 0, 0);
		if (fd < 0 && errno == ELOOP)
			sbx_fatal(sbx_ns_token, "plan the mounts: the target %s of read-only subpath %s: %s", real, p, swapped_or(errno));
		if (fd < 0 || fstat(fd, &st) < 0) {
			resolve_failed("the target of read-only subpath", real);
			if (fd >= 0)
				close(fd);
			free(real);
			return;
		}
	} else {
		real = xstrdup(p);
	}
	const char *root = deepest_root(s, real);
	// Only a directory or a file under a writable root (outside the roots
	// all is read-only already), and never one a deny-read mount hides.
	if ((S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) && root && !hidden(real, root)) {
		// A bind covers one name: another hard link to the file it opened
		// writes the same inode (vocab.NamespaceGaps reports it).
		if (s->require_full && S_ISREG(st.st_mode) && st.st_nlink > 1)
			sbx_fatal(sbx_ns_token, "full enforcement required, but: read-only subpath %s has %lu hard links", real,
			          (unsigned long)st.st_nlink);
		add_layer(LAYER_RO, real, S_ISDIR(st.st_mode), fd, &st);
		plan_pins(root, real);
	} else {
		close(fd);
	}
	free(real);
}

static void plan(const struct spec *s) {
	for (int i = 0; i <= s->nwritable; i++) {
		const char *w = i < s->nwritable ? s->writable[i] : s->tempdir;
		if (!w)
			continue;
		int fd = open_strict(AT_FDCWD, w, O_DIRECTORY, 0);
		if (fd < 0)
			sbx_fatal(sbx_ns_token, "plan the mounts: writable root %s: %s", w, swapped_or(errno));
		add_layer(LAYER_WRITABLE, w, 1, fd, NULL);
	}
	plan_deny_read(s);
	for (int i = 0; i < s->nro; i++)
		plan_read_only(s, s->ro[i]);
	plan_unix_sockets(s);
	qsort(layers, nlayers, sizeof *layers, layer_cmp);
}

// ---- 3. the root ----

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
struct sbx_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};
#define ATTR_RDONLY 0x1
#define ATTR_NOSUID 0x2
#define ATTR_NODEV 0x4
#define ATTR_NOEXEC 0x8
#define SBX_AT_RECURSIVE 0x8000

#define NEWROOT "/newroot"
#define OLDROOT "/oldroot"
#define EMPTY_RO "/empty-file"
#define TMP_UPPER "/tmp-upper"

static void must(int rc, const char *what, const char *path) {
	if (rc < 0)
		sbx_fatal(sbx_ns_token, "%s %s: %s", what, path ? path : "", strerror(errno));
}

static int set_attr(const char *path, int recursive, uint64_t set, uint64_t clr) {
	struct sbx_mount_attr a = {.attr_set = set, .attr_clr = clr};
	int flags = AT_SYMLINK_NOFOLLOW | (recursive ? SBX_AT_RECURSIVE : 0);
	return syscall(SYS_mount_setattr, AT_FDCWD, path, flags, &a, sizeof a);
}

static void touch(const char *path, mode_t mode) {
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, mode);
	must(fd, "create", path);
	close(fd);
}

static void setup_dev(void) {
	const char *dev = NEWROOT "/dev";
	must(mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755"), "mount /dev", NULL);
	static const char *devices[] = {"null", "zero", "full", "random", "urandom", "tty"};
	char host[64], mine[64];
	for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
		snprintf(host, sizeof host, OLDROOT "/dev/%s", devices[i]);
		snprintf(mine, sizeof mine, "%s/%s", dev, devices[i]);
		struct stat st;
		if (stat(host, &st) < 0)
			continue;
		touch(mine, 0600);
		must(mount(host, mine, NULL, MS_BIND, NULL), "bind", mine);
		// Read-only: these are the host's inodes, and a root caller owns
		// them (chmod 600 /dev/null would break every other user). A
		// read-only mount refuses chmod, chown, utimes and xattrs, while
		// reading and writing a device (O_TRUNC included) still work.
		must(set_attr(mine, 0, ATTR_RDONLY | ATTR_NOSUID | ATTR_NOEXEC, 0), "make read-only", mine);
	}
	must(mkdir(NEWROOT "/dev/pts", 0755), "mkdir", "/dev/pts");
	must(mount("devpts", NEWROOT "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"),
	     "mount", "/dev/pts");
	must(mkdir(NEWROOT "/dev/shm", 01777), "mkdir", "/dev/shm");
	must(mount("tmpfs", NEWROOT "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"), "mount", "/dev/shm");
	static const char *links[][2] = {{"ptmx", "pts/ptmx"}, {"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"},
	                                 {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}};
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
		snprintf(mine, sizeof mine, "%s/%s", dev, links[i][0]);
		must(symlink(links[i][1], mine), "symlink", mine);
	}
}

static int set_attr_fd(int fd, int recursive, uint64_t set, uint64_t clr) {
	struct sbx_mount_attr a = {.attr_set = set, .attr_clr = clr};
	return syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | (recursive ? SBX_AT_RECURSIVE : 0), &a, sizeof a);
}

// newroot is the new root while it is built: every mount point is opened
// beneath it.
static int newroot = -1;

// make_mount_point creates the missing mount point of l, one component at
// a time from the new root, following no symlink; that only succeeds
// where the new root is writable at this stage (a deny-read tmpfs, a
// writable root).
static void make_mount_point(const struct layer *l) {
	char *rel = xstrdup(l->path + 1);
	int dfd = open_strict(newroot, ".", O_DIRECTORY, 1);
	char *name = rel;
	for (char *slash; dfd >= 0; name = slash + 1) {
		slash = strchr(name, '/');
		int last = slash == NULL;
		if (!last)
			*slash = 0;
		if (last && !l->isdir) {
			int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0 && errno != EEXIST)
				must(-1, "mount point", l->path);
			if (fd >= 0)
				close(fd);
		} else if (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST) {
			must(-1, "mount point", l->path);
		}
		if (last)
			break;
		int next = open_strict(dfd, name, O_DIRECTORY, 1), e = errno;
		close(dfd);
		dfd = next;
		errno = e;
	}
	if (dfd < 0)
		sbx_fatal(sbx_ns_token, "mount point %s: %s", l->path, swapped_or(errno));
	close(dfd);
	free(rel);
}

// open_mount_point opens where l goes in the new root, without following
// a symlink, and checks it is what was planned.
static int open_mount_point(const struct layer *l) {
	const char *rel = *(l->path + 1) ? l->path + 1 : ".";
	int fd = open_strict(newroot, rel, 0, 1);
	if (fd < 0 && errno == ENOENT && (l->kind == LAYER_WRITABLE || l->kind == LAYER_DENY || l->kind == LAYER_SOCKET)) {
		make_mount_point(l);
		fd = open_strict(newroot, rel, 0, 1);
	}
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		sbx_fatal(sbx_ns_token, "mount point %s: %s", l->path, swapped_or(errno));
	if (!S_ISDIR(st.st_mode) != !l->isdir)
		sbx_fatal(sbx_ns_token, "mount point %s changed type during the launch", l->path);
	if ((l->kind == LAYER_RO || l->kind == LAYER_PIN) && (st.st_dev != l->dev || st.st_ino != l->ino))
		sbx_fatal(sbx_ns_token, "mount point %s is not the object planned on: it was replaced during the launch", l->path);
	return fd;
}

// tree_of returns a detached copy of the mount tree at fd.
static int tree_of(int fd, int recursive, const char *what, const char *path) {
	int tree = syscall(SYS_open_tree, fd, "", SBX_OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH | (recursive ? SBX_AT_RECURSIVE : 0));
	must(tree, what, path);
	return tree;
}

// empty_tmpfs returns a detached, empty, small tmpfs for a deny-read
// directory; it stays writable until sealed, so that mount points can be
// made inside it.
static int empty_tmpfs(const char *path) {
	int fs = syscall(SYS_fsopen, "tmpfs", 1 /* FSOPEN_CLOEXEC */);
	must(fs, "hide deny-read: fsopen", path);
	must(syscall(SYS_fsconfig, fs, SBX_FSCONFIG_SET_STRING, "mode", "0755", 0), "hide deny-read: mode", path);
	must(syscall(SYS_fsconfig, fs, SBX_FSCONFIG_SET_STRING, "size", "64k", 0), "hide deny-read: size", path);
	must(syscall(SYS_fsconfig, fs, SBX_FSCONFIG_CMD_CREATE, NULL, NULL, 0), "hide deny-read: create", path);
	int mnt = syscall(SYS_fsmount, fs, 1 /* FSMOUNT_CLOEXEC */, ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC);
	must(mnt, "hide deny-read: fsmount", path);
	close(fs);
	return mnt;
}

struct sbx_watch *sbx_ns_watch;
int sbx_ns_nwatch;

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x1000U
#endif

// watch_layer records a protective mount for pid 1 (sbx_ns_watch): its
// mount id, read from the attached tree.
static void watch_layer(const struct layer *l, int tree) {
	if (l->kind != LAYER_RO && l->kind != LAYER_PIN && l->kind != LAYER_DENY)
		return;
	struct statx stx;
	must(statx(tree, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx), "read the mount id of", l->path);
	if (!(stx.stx_mask & STATX_MNT_ID))
		sbx_fatal(sbx_ns_token, "the kernel gives no mount id for %s (statx STATX_MNT_ID, Linux 5.8)", l->path);
	sbx_ns_watch[sbx_ns_nwatch++] = (struct sbx_watch){stx.stx_mnt_id, l->path};
}

// mount_layer makes layer l in the new root: a detached mount, its
// attributes set before it is attached, moved onto the mount point's
// descriptor. Nothing is resolved by path twice.
static void mount_layer(struct layer *l) {
	int target = open_mount_point(l), tree = -1;
	switch (l->kind) {
	case LAYER_WRITABLE:
		tree = tree_of(l->fd, 1, "bind writable", l->path);
		must(set_attr_fd(tree, 1, ATTR_NOSUID | ATTR_NODEV, ATTR_RDONLY), "make writable", l->path);
		break;
	case LAYER_PIN:
		tree = tree_of(target, 1, "pin", l->path);
		break;
	case LAYER_RO:
		tree = tree_of(l->fd, 1, "bind read-only", l->path);
		must(set_attr_fd(tree, 1, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0), "make read-only", l->path);
		break;
	case LAYER_SOCKET:
		tree = tree_of(l->fd, 0, "bind UNIX socket", l->path);
		must(set_attr_fd(tree, 0, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0), "make read-only", l->path);
		break;
	case LAYER_DENY:
		if (l->isdir) {
			tree = empty_tmpfs(l->path);
		} else {
			tree = syscall(SYS_open_tree, AT_FDCWD, EMPTY_RO, SBX_OPEN_TREE_CLONE | O_CLOEXEC);
			must(tree, "hide deny-read", l->path);
			must(set_attr_fd(tree, 0, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0), "hide deny-read", l->path);
		}
		break;
	}
	must(syscall(SYS_move_mount, tree, "", target, "", SBX_MOVE_MOUNT_F_EMPTY_PATH | SBX_MOVE_MOUNT_T_EMPTY_PATH),
	     "attach the mount on", l->path);
	watch_layer(l, tree);
	close(target);
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	if (l->kind == LAYER_DENY && l->isdir)
		l->mnt = tree; // sealed once the mount points inside it are made
	else
		close(tree);
}

static void build_root(void) {
	must(mount("", "/", NULL, MS_REC | MS_SLAVE, NULL), "make / a slave mount", NULL);
	must(mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"), "mount the staging tmpfs on", "/tmp");
	must(mkdir("/tmp" NEWROOT, 0755), "mkdir", NEWROOT);
	must(mkdir("/tmp" OLDROOT, 0755), "mkdir", OLDROOT);
	touch("/tmp" EMPTY_RO, 0400);
	must(mkdir("/tmp" TMP_UPPER, 0755), "mkdir", TMP_UPPER);
	must(mkdir("/tmp" TMP_UPPER "/upper", 0755), "mkdir", TMP_UPPER);
	must(mkdir("/tmp" TMP_UPPER "/work", 0755), "mkdir", TMP_UPPER);
	must(chmod("/tmp" TMP_UPPER "/upper", 01777), "chmod the private /tmp", NULL);
	must(syscall(SYS_pivot_root, "/tmp", "/tmp" OLDROOT), "pivot into the staging tmpfs", NULL);
	must(chdir("/"), "chdir", "/");
	must(mount(OLDROOT, NEWROOT, NULL, MS_BIND | MS_REC, NULL), "bind the host's tree", NULL);
	// Private: a mount the host makes later must not arrive inside with
	// its own, writable flags.
	must(mount("", NEWROOT, NULL, MS_REC | MS_PRIVATE, NULL), "make the new root private", NULL);
	must(set_attr(NEWROOT, 1, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0), "make the host's tree read-only", NULL);
	// Read-only, like the rest of the host's tree: a write to /tmp fails
	// loudly (EROFS), as it does under landlock, instead of succeeding in
	// a tmpfs that vanishes with the sandbox. The wrap's TMPDIR is the
	// scratch place. An overlay rather than a bind: no host socket under
	// /tmp can be connected to through it (its inodes are not the sockets).
	must(mount("overlay", NEWROOT "/tmp", "overlay", MS_NOSUID | MS_NODEV | MS_RDONLY,
	           "lowerdir=" OLDROOT "/tmp,upperdir=" TMP_UPPER "/upper,workdir=" TMP_UPPER "/work,userxattr"),
	     "mount a private /tmp", NULL);
	setup_dev();
	must(mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL),
	     "mount a fresh /proc", NULL);
	newroot = open_strict(AT_FDCWD, NEWROOT, O_DIRECTORY, 0);
	must(newroot, "open the new root", NULL);
	sbx_ns_watch = calloc(nlayers ? nlayers : 1, sizeof *sbx_ns_watch);
	if (!sbx_ns_watch)
		sbx_fatal(sbx_ns_token, "plan the mounts: out of memory");
	for (int i = 0; i < nlayers; i++)
		mount_layer(&layers[i]);
	close(newroot);
	// Deny-read mounts stayed writable while mount points inside them were
	// made; now they are sealed, as is /dev's tmpfs.
	for (int i = 0; i < nlayers; i++)
		if (layers[i].mnt >= 0) {
			must(set_attr_fd(layers[i].mnt, 0, ATTR_RDONLY, 0), "seal", layers[i].path);
			close(layers[i].mnt);
		}
	must(set_attr(NEWROOT "/dev", 0, ATTR_RDONLY, 0), "seal", "/dev");
	must(chdir(NEWROOT), "chdir into the new root", NULL);
	must(syscall(SYS_pivot_root, ".", "."), "pivot into the new root", NULL);
	must(umount2(".", MNT_DETACH), "detach the host's tree", NULL);
	must(chdir("/"), "chdir", "/");
}

// enter_dir makes dir the working directory. It was resolved at Wrap time:
// a symlink on its path now is fatal, so the command never starts in a
// directory another sandbox chose for it.
static void enter_dir(const char *dir) {
	int fd = open_strict(AT_FDCWD, dir, O_DIRECTORY, 0);
	if (fd < 0 || fchdir(fd) < 0)
		sbx_fatal(sbx_ns_token, "chdir %s inside the sandbox: %s", dir, swapped_or(errno));
	close(fd);
}

// ---- 4. the network ----

static void loopback_up(void) {
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	must(fd, "bring up loopback: socket", NULL);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	must(ioctl(fd, SIOCGIFFLAGS, &ifr), "bring up loopback: get flags", NULL);
	ifr.ifr_flags |= IFF_UP;
	must(ioctl(fd, SIOCSIFFLAGS, &ifr), "bring up loopback: set up", NULL);
	close(fd);
}

// hand_over_ports makes a listener on the sandbox's loopback for each of
// the spec's ports (the domain proxy's, allowed local ports) and sends them
// to the provider over the bridge stage 1 connected: the provider accepts
// on them, outside, and passes each connection to its proxy or to the
// host's port. The command never holds them. The provider answers "ok"
// once it serves them; anything else, or no answer, is fatal.
#define MAX_PORTS 250 // below SCM_MAX_FD
static void hand_over_ports(const struct spec *s) {
	if (!s->nports)
		return;
	if (!s->bridge || sbx_ns_bridge < 0)
		sbx_fatal(sbx_ns_token, "loopback ports without the network bridge");
	if (s->nports > MAX_PORTS)
		sbx_fatal(sbx_ns_token, "%d loopback ports, at most %d", s->nports, MAX_PORTS);
	int fds[MAX_PORTS];
	char msg[64 + 6 * MAX_PORTS];
	int n = snprintf(msg, sizeof msg, "%s %s", SBX_BRIDGE_HELLO, sbx_ns_token);
	for (int i = 0; i < s->nports; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		must(fd, "listen on the sandbox's loopback: socket", NULL);
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(s->ports[i]), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 512) < 0)
			sbx_fatal(sbx_ns_token, "listen on the sandbox's loopback port %d: %s", s->ports[i], strerror(errno));
		fds[i] = fd;
		n += snprintf(msg + n, sizeof msg - n, " %d", s->ports[i]);
	}
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * MAX_PORTS)];
	} ctl;
	memset(&ctl, 0, sizeof ctl);
	struct iovec iov = {msg, (size_t)n};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
	                    .msg_controllen = CMSG_SPACE(sizeof(int) * s->nports)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * s->nports);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * s->nports);
	if (sendmsg(sbx_ns_bridge, &mh, MSG_NOSIGNAL) != n)
		sbx_fatal(sbx_ns_token, "hand the loopback ports to the network bridge: %s", strerror(errno));
	struct pollfd p = {sbx_ns_bridge, POLLIN, 0};
	char ack[8];
	int r = poll(&p, 1, 10000);
	ssize_t got = r == 1 ? read(sbx_ns_bridge, ack, sizeof ack) : -1;
	if (got != 2 || memcmp(ack, "ok", 2) != 0)
		sbx_fatal(sbx_ns_token, "the network bridge did not take the loopback ports (%s)", r == 0 ? "no answer in 10 s" : got == 0 ? "it closed" : "refused");
	for (int i = 0; i < s->nports; i++)
		close(fds[i]);
	close(sbx_ns_bridge);
	sbx_ns_bridge = -1;
}

// ---- 5. confinement ----

static void drop_capabilities(void) {
	must(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient capabilities", NULL);
	for (int c = 0; prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
		must(prctl(PR_CAPBSET_DROP, c, 0, 0, 0), "drop a capability from the bounding set", NULL);
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct none[2];
	memset(none, 0, sizeof none);
	must(syscall(SYS_capset, &hdr, none), "capset", NULL);
}

static void close_extra_fds(void) {
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
	if (syscall(SYS_close_range, 3, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */) == 0)
		return;
	for (int fd = 3; fd < 65536; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static int hexval(char c) {
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

// load_seccomp installs the program the provider compiled for this spec
// (-seccomp, checked as hex instructions by the decoder).
static void load_seccomp(const struct spec *s) {
	if (!s->seccomp)
		sbx_fatal(sbx_ns_token, "no seccomp program in the arguments (-seccomp)");
	size_t n = strlen(s->seccomp);
	unsigned char *prog = malloc(n / 2);
	if (!prog)
		sbx_fatal(sbx_ns_token, "seccomp: out of memory");
	for (size_t i = 0; i < n / 2; i++)
		prog[i] = (unsigned char)(hexval(s->seccomp[2 * i]) << 4 | hexval(s->seccomp[2 * i + 1]));
	struct sock_fprog fprog = {.len = (unsigned short)(n / 2 / sizeof(struct sock_filter)),
	                           .filter = (struct sock_filter *)prog};
	if (n / 2 / sizeof(struct sock_filter) > BPF_MAXINSNS)
		sbx_fatal(sbx_ns_token, "seccomp program too long");
	must(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)", NULL);
	must(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog), "seccomp: load", NULL);
	free(prog);
}

// The few Landlock definitions confine_unix_sockets needs, spelled out:
// the build host's headers may predate them. The ABI levels are
// contract_linux.h's.
#define SBX_LANDLOCK_ACCESS_FS_RESOLVE_UNIX (1ULL << 16)
#define SBX_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define SBX_LANDLOCK_RULE_PATH_BENEATH 1
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
struct sbx_ruleset_attr {
	uint64_t handled_access_fs, handled_access_net, scoped;
};
struct sbx_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

static int landlock_abi(void) {
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, SBX_LANDLOCK_CREATE_RULESET_VERSION);
	return v < 0 ? 0 : (int)v;
}

#define SBX_LANDLOCK_ACCESS_FS_REFER (1ULL << 13)

// refer_handled is the refer right where the kernel knows it (ABI 2): every
// Landlock ruleset refuses moving or linking a file into another directory
// unless a rule grants refer, handled or not, and these rulesets confine
// reads and sockets only. So each of them handles refer and grants it on
// the whole tree (allow_refer): a move or link that would give the file
// more of the ruleset's rights where it lands than where it was (a denied
// file into a readable directory) is still refused by Landlock (EXDEV).
static uint64_t refer_handled(void) { return landlock_abi() >= SBX_ABI_REFER ? SBX_LANDLOCK_ACCESS_FS_REFER : 0; }

static void allow_refer(int rfd) {
	if (!refer_handled())
		return;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	must(fd, "open / for the refer rule", NULL);
	struct sbx_path_beneath_attr pb = {.allowed_access = SBX_LANDLOCK_ACCESS_FS_REFER, .parent_fd = fd};
	must(syscall(SYS_landlock_add_rule, rfd, SBX_LANDLOCK_RULE_PATH_BENEATH, &pb, 0), "landlock: allow moves and links", NULL);
	close(fd);
}

// confine_unix_sockets: under network deny with UNIX sockets allowed,
// seccomp lets the command create UNIX sockets, and Landlock (ABI 9)
// limits what their connect and sendmsg reach to the allowed paths (and to
// sockets the command makes itself). On an older kernel this is the gap
// the provider reported (vocab.UnixSocketGaps), refused by require_full.
static void confine_unix_sockets(const struct spec *s) {
	if (s->allow_net || s->nunixsock == 0 || landlock_abi() < SBX_ABI_RESOLVE_UNIX)
		return;
	struct sbx_ruleset_attr attr = {.handled_access_fs = SBX_LANDLOCK_ACCESS_FS_RESOLVE_UNIX | refer_handled()};
	int rfd = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
	must(rfd, "landlock: create the UNIX socket ruleset", NULL);
	allow_refer(rfd);
	for (int i = 0; i < s->nunixsock; i++) {
		// Without symlinks, and only a socket: a path swapped for a link
		// to another socket, or to a directory of them, would otherwise
		// grant that (plan_unix_sockets).
		int fd = open_strict(AT_FDCWD, s->unixsock[i], 0, 0);
		struct stat st;
		if (fd < 0 && errno != ELOOP)
			resolve_failed("UNIX socket", s->unixsock[i]);
		if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))) {
			close(fd);
			fd = -1;
		}
		if (fd < 0)
			continue; // not there: it stays unreachable
		struct sbx_path_beneath_attr pb = {.allowed_access = SBX_LANDLOCK_ACCESS_FS_RESOLVE_UNIX, .parent_fd = fd};
		must(syscall(SYS_landlock_add_rule, rfd, SBX_LANDLOCK_RULE_PATH_BENEATH, &pb, 0), "landlock: allow UNIX socket",
		     s->unixsock[i]);
		close(fd);
	}
	must(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)", NULL);
	must(syscall(SYS_landlock_restrict_self, rfd, 0), "landlock: restrict", NULL);
	close(rfd);
}

#define SBX_LANDLOCK_ACCESS_FS_READ_FILE (1ULL << 2)
#define SBX_LANDLOCK_ACCESS_FS_READ_DIR (1ULL << 3)

// carved[i] says whether the deny-read path s->deny[i] is carved out with
// Landlock as well as hidden by its mount: it lies outside every writable
// root and the temp dir, holds none of them (a workspace inside a
// deny-read directory is shown again by its own bind), and lies below no
// other such path (whose carving covers it). Computed once, by
// plan_carving.
static int *carved;

static void plan_carving(const struct spec *s) {
	carved = calloc(s->ndeny ? s->ndeny : 1, sizeof *carved);
	if (!carved)
		sbx_fatal(sbx_ns_token, "out of memory");
	for (int i = 0; i < s->ndeny; i++) {
		const char *d = s->deny[i];
		carved[i] = !(s->tempdir && (sbx_within(d, s->tempdir) || sbx_within(s->tempdir, d)));
		for (int w = 0; w < s->nwritable && carved[i]; w++)
			carved[i] = !sbx_within(d, s->writable[w]) && !sbx_within(s->writable[w], d);
	}
	// A path below another candidate is covered by it; checked against the
	// candidates (not the result), which is the same: what holds it is
	// carved, or lies below a carved path that holds it too.
	int *base = malloc((s->ndeny ? s->ndeny : 1) * sizeof *base);
	if (!base)
		sbx_fatal(sbx_ns_token, "out of memory");
	memcpy(base, carved, s->ndeny * sizeof *base);
	for (int i = 0; i < s->ndeny; i++)
		for (int j = 0; j < s->ndeny && carved[i]; j++)
			if (j != i && base[j] && strcmp(s->deny[i], s->deny[j]) != 0 && sbx_within(s->deny[i], s->deny[j]))
				carved[i] = 0;
	free(base);
}

// on_the_way reports whether p is a carved deny-read path or one of its
// ancestors: such an entry is not granted.
static int on_the_way(const struct spec *s, const char *p) {
	for (int i = 0; i < s->ndeny; i++)
		if (carved[i] && sbx_within(s->deny[i], p))
			return 1;
	return 0;
}

// grant_siblings grants listing the directory dir (opened without
// symlinks) and everything below it, and reading every entry of it that is
// not on the way to a carved deny-read path. Listing stays open below dir
// (ls ~ works with ~/.ssh denied, and the denied directory itself lists as
// its empty mount): names are what the deny-read mount hides, files' contents
// are what Landlock keeps.
static void grant_siblings(int rfd, const struct spec *s, const char *dir) {
	int dfd = open_strict(AT_FDCWD, dir, O_DIRECTORY, 0);
	if (dfd < 0) {
		// Not there (the deny-read path does not exist yet): nothing to
		// grant in it, and whatever appears there later is not readable.
		resolve_failed("deny-read ancestor", dir);
		return;
	}
	struct sbx_path_beneath_attr list = {.allowed_access = SBX_LANDLOCK_ACCESS_FS_READ_DIR, .parent_fd = dfd};
	must(syscall(SYS_landlock_add_rule, rfd, SBX_LANDLOCK_RULE_PATH_BENEATH, &list, 0), "landlock: allow listing", dir);
	int lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = lfd < 0 ? NULL : fdopendir(lfd);
	if (!d)
		sbx_fatal(sbx_ns_token, "list %s: %s", dir, strerror(errno));
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *p;
		if (asprintf(&p, "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name) < 0)
			sbx_fatal(sbx_ns_token, "out of memory");
		if (on_the_way(s, p)) {
			free(p);
			continue;
		}
		int fd = openat(dfd, e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0 && !S_ISLNK(st.st_mode)) {
			// A symlink needs no rule: what it points to is checked where it is.
			uint64_t rights = SBX_LANDLOCK_ACCESS_FS_READ_FILE | (S_ISDIR(st.st_mode) ? SBX_LANDLOCK_ACCESS_FS_READ_DIR : 0);
			struct sbx_path_beneath_attr pb = {.allowed_access = rights, .parent_fd = fd};
			must(syscall(SYS_landlock_add_rule, rfd, SBX_LANDLOCK_RULE_PATH_BENEATH, &pb, 0), "landlock: allow reading", p);
		}
		if (fd >= 0)
			close(fd);
		free(p);
	}
	closedir(d);
	close(dfd);
}

// carve_deny_read: the deny-read mounts sit on dentries, and a host process
// that renames a file over a denied one, or links it under a new name,
// reaches past them (pid 1 stops the sandbox when a mount is detached, a
// moment later). Landlock's rules sit on the objects: so, as the landlock
// runner does, reading is granted on every sibling of each carved
// deny-read path and of each of its ancestors, and on nothing else below
// those ancestors. Entries that appear in those directories during the run
// are not readable; the denied path, whatever object is there, never is.
// After pivot_root, so every rule is on the new root's objects (its /tmp,
// /dev, /proc). Without Landlock (ABI 0) the mounts and pid 1's watch are
// all there is.
static void carve_deny_read(const struct spec *s) {
	plan_carving(s);
	int any = 0;
	for (int i = 0; i < s->ndeny && !any; i++)
		any = carved[i];
	if (!any || landlock_abi() < 1)
		return;
	struct sbx_ruleset_attr attr = {.handled_access_fs = SBX_LANDLOCK_ACCESS_FS_READ_FILE | SBX_LANDLOCK_ACCESS_FS_READ_DIR | refer_handled()};
	int rfd = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr.handled_access_fs), 0);
	must(rfd, "landlock: create the deny-read ruleset", NULL);
	allow_refer(rfd);
	// Every strict ancestor of a carved path, once.
	char **done = NULL;
	int ndone = 0;
	for (int i = 0; i < s->ndeny; i++) {
		if (!carved[i])
			continue;
		char *a = xstrdup(s->deny[i]);
		for (;;) {
			char *slash = strrchr(a, '/');
			if (!slash)
				break;
			if (slash == a)
				slash[1] = 0;
			else
				*slash = 0;
			int seen = 0;
			for (int j = 0; j < ndone && !seen; j++)
				seen = !strcmp(done[j], a);
			if (!seen) {
				grant_siblings(rfd, s, a);
				done = realloc(done, (ndone + 1) * sizeof *done);
				if (!done)
					sbx_fatal(sbx_ns_token, "out of memory");
				done[ndone++] = xstrdup(a);
			}
			if (!strcmp(a, "/"))
				break;
		}
		free(a);
	}
	must(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)", NULL);
	must(syscall(SYS_landlock_restrict_self, rfd, 0), "landlock: restrict reads", NULL);
	close(rfd);
}

// ---- the probe and the exec ----

static void probe(const struct spec *s) {
	if (s->nwritable != 1)
		sbx_fatal(sbx_ns_token, "probe: probe needs exactly one writable root");
	char *ok, *denied;
	if (asprintf(&ok, "%s/probe-allowed", s->writable[0]) < 0)
		sbx_fatal(sbx_ns_token, "out of memory");
	int fd = open(ok, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		sbx_fatal(sbx_ns_token, "probe: allowed write failed: %s", strerror(errno));
	close(fd);
	if (s->nro > 0) {
		if (asprintf(&denied, "%s/probe-denied", s->ro[0]) < 0)
			sbx_fatal(sbx_ns_token, "out of memory");
	} else {
		char *parent = xstrdup(s->writable[0]);
		*strrchr(parent, '/') = 0;
		if (asprintf(&denied, "%s/probe-denied", parent) < 0)
			sbx_fatal(sbx_ns_token, "out of memory");
	}
	fd = open(denied, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0)
		sbx_fatal(sbx_ns_token, "probe: write to %s was not denied", denied);
	if (errno != EACCES && errno != EROFS)
		sbx_fatal(sbx_ns_token, "probe: write to %s failed with %s, want EACCES or EROFS", denied, strerror(errno));
	printf("ns-run: probe ok [%s]\n", sbx_ns_token);
	fflush(stdout);
	_exit(0);
}

// require_full refuses what the provider would report as gaps and the plan
// does not see: network allowed, UNIX sockets allowed on a kernel whose
// Landlock cannot confine them by path. A read-only subpath that is
// missing or a symlink, and a missing deny-read path inside a writable
// root, are refused by the plan itself, on what it opened.
static void require_full(const struct spec *s) {
	if (s->allow_net)
		sbx_fatal(sbx_ns_token, "full enforcement required, but: network allow also opens UNIX sockets to host daemons");
	if (s->nunixsock > 0 && landlock_abi() < SBX_ABI_RESOLVE_UNIX)
		sbx_fatal(sbx_ns_token,
		          "full enforcement required, but: allowed UNIX sockets cannot be confined by path on Landlock ABI %d "
		          "(needs ABI %d)",
		          landlock_abi(), SBX_ABI_RESOLVE_UNIX);
	// Read-only subpaths and deny-read paths: checked by the plan, on the
	// objects it uses (plan_read_only, plan_deny_read).
}

// leave_terminal gives a command that was handed no terminal on its stdin,
// stdout or stderr no controlling terminal either, as the landlock
// launcher does (terminal_linux.go): it could otherwise open /dev/tty and
// read what the user types to the caller's terminal. TIOCNOTTY takes pid 2
// off the terminal and keeps its process group, so the terminal's Ctrl-C
// still reaches the command (stage 1 does not pass on what the terminal
// sent the whole group). pid 2 leads no session: no SIGHUP. With a
// terminal on any of the three, nothing changes (job control keeps
// working).
static void leave_terminal(void) {
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd))
			return;
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENXIO || errno == ENOENT)
			return; // no controlling terminal to leave
		sbx_fatal(sbx_ns_token, "open the controlling terminal to leave it: %s", strerror(errno));
	}
	if (ioctl(fd, TIOCNOTTY) < 0)
		sbx_fatal(sbx_ns_token, "leave the controlling terminal (TIOCNOTTY): %s", strerror(errno));
	close(fd);
}

// reset_signals gives the command clean signal state: nothing blocked,
// every disposition the default (a consumer's blocked or ignored signals
// would otherwise reach it, as exec keeps both).
static void reset_signals(void) {
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
}

// exec_command looks cmd up as Go's exec.LookPath does (PATH only, an empty
// element meaning the current directory, the first regular executable
// file) and execs it: 127 when it is not found, 126 when it cannot run.
__attribute__((noreturn)) static void exec_command(char **cmd) {
	const char *name = cmd[0];
	if (strchr(name, '/')) {
		execve(name, cmd, environ);
	} else {
		const char *path = getenv("PATH");
		char *dirs = xstrdup(path ? path : "");
		int found = 0;
		for (char *dir = dirs, *next; path && dir; dir = next) {
			next = strchr(dir, ':');
			if (next)
				*next++ = 0;
			char *cand;
			if (asprintf(&cand, "%s/%s", *dir ? dir : ".", name) < 0)
				sbx_fatal(sbx_ns_token, "out of memory");
			struct stat st;
			if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111)) {
				found = 1;
				execve(cand, cmd, environ);
				break;
			}
			free(cand);
		}
		if (!found) {
			fprintf(stderr, "ns-run: %s: command not found\n", name);
			_exit(SBX_EXIT_NOT_FOUND);
		}
	}
	int e = errno;
	fprintf(stderr, "ns-run: %s: %s\n", name, strerror(e));
	_exit(e == ENOENT || e == ENOTDIR ? SBX_EXIT_NOT_FOUND : SBX_EXIT_NOT_EXECUTABLE);
}

// release_env gives the command back the variables the provider held from
// the launcher's start: every "SANDBOX_LOCAL_ENV_NAME=value" becomes
// "NAME=value" (vocab.HeldEnvPrefix, vocab.ReleaseEnv; the list of what is
// held is the provider's alone). In place: the entry points past the prefix.
static void release_env(void) {
	const size_t n = strlen(SBX_HELD_ENV_PREFIX);
	for (char **e = environ; *e; e++)
		if (strncmp(*e, SBX_HELD_ENV_PREFIX, n) == 0)
			*e += n;
}

void sbx_ns_stage2(int argc, char **argv) {
	struct spec s;
	char err[256];
	if (sbx_decode(argc - 1, argv + 1, &s, err, sizeof err) < 0)
		sbx_fatal(sbx_ns_token, "malformed launcher arguments: %s", err);
	if (s.allow_net == sbx_ns_netns)
		sbx_fatal(sbx_ns_token, "stage 1 and the arguments disagree about the network namespace");
	if (!s.bridge != (sbx_ns_bridge < 0))
		sbx_fatal(sbx_ns_token, "stage 1 and the arguments disagree about the network bridge");
	if (s.require_full)
		require_full(&s);
	plan(&s);
	build_root();
	if (s.dir)
		enter_dir(s.dir);
	if (!s.allow_net)
		loopback_up();
	hand_over_ports(&s);
	confine_unix_sockets(&s);
	carve_deny_read(&s);
	drop_capabilities();
	close_extra_fds();
	load_seccomp(&s);
	unsetenv(SBX_TOKEN_ENV);
	if (s.probe)
		probe(&s);
	leave_terminal();
	reset_signals();
	release_env();
	exec_command(s.cmd); // cmd ends at argv[argc], which is NULL
}

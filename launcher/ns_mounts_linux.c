// ns-run stage 2, sections 2 and 3: the plan of the mounts (made while
// the host's tree is in view) and the new root built from it.

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
#include "ns_stage2_linux.h"
#include "shared_linux.h"

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
		int fd = ns_open_strict(AT_FDCWD, s->unixsock[i], 0, 0);
		if (fd < 0 && errno != ELOOP)
			ns_resolve_failed("UNIX socket", s->unixsock[i]);
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
		// The provider resolved the directories above each path: only a
		// final symlink needs resolving here (most paths are missing, and
		// realpath would walk every directory of each to say so).
		char *real = NULL;
		if (lstat(s->deny[i], &st) == 0) {
			real = S_ISLNK(st.st_mode) ? realpath(s->deny[i], NULL) : strdup(s->deny[i]);
			if (!real && !S_ISLNK(st.st_mode))
				sbx_fatal(sbx_ns_token, "out of memory");
		}
		if (real && stat(real, &st) < 0) {
			ns_resolve_failed("deny-read path", real);
			free(real);
			real = NULL;
		} else if (!real) {
			ns_resolve_failed("deny-read path", s->deny[i]);
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
	char *d = ns_xstrdup(p);
	struct stat st;
	for (char *slash = strrchr(d, '/'); slash && slash > d; slash = strrchr(d, '/')) {
		*slash = 0;
		if (!sbx_within(d, root) || !strcmp(d, root))
			break;
		int fd = ns_open_strict(AT_FDCWD, d, O_DIRECTORY, 0);
		if (fd < 0 || fstat(fd, &st) < 0)
			sbx_fatal(sbx_ns_token, "plan the mounts: pin %s: %s", d, ns_swapped_or(errno));
		close(fd);
		add_layer(LAYER_PIN, d, 1, -1, &st);
	}
	free(d);
}

// plan_guard: p, a protected path, is missing, and the filter hands the
// creating calls to the guard. The first missing component below p's
// writable root is the name the guard refuses (creating .cargo is refused
// while .cargo/config.toml is guarded), in its parent, by identity; the
// directories between the root and that name are pinned, so the parent
// cannot be moved away and replaced. A component that is not a directory
// holds nothing that could be created; one that is a symlink is not
// followed (a gap, refused by -full).
static int plan_guard(const struct spec *s, const char *p) {
	const char *root = deepest_root(s, p);
	if (!root || !strcmp(root, p))
		return 0; // outside the writable roots all is read-only already
	int dfd = ns_open_strict(AT_FDCWD, root, O_DIRECTORY, 0);
	if (dfd < 0)
		sbx_fatal(sbx_ns_token, "plan the guard: writable root %s: %s", root, ns_swapped_or(errno));
	char *rest = ns_xstrdup(p + strlen(root));
	char *upto = ns_xstrdup(p); // p up to the component at hand
	size_t at = strcmp(root, "/") ? strlen(root) : 0;
	int whole = 1; // every component is there
	const char *end = rest + strlen(rest);
	for (char *comp = strtok(rest, "/"); comp; comp = strtok(NULL, "/")) {
		int last = comp + strlen(comp) == end;
		at += 1 + strlen(comp);
		struct stat st;
		int fd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT) {
			if (fstat(dfd, &st) < 0)
				sbx_fatal(sbx_ns_token, "plan the guard: %s: %s", p, strerror(errno));
			upto[at] = 0;
			ns_guard_add(&st, comp, p);
			plan_pins(root, upto);
			whole = 0;
			break;
		}
		if (fd < 0) {
			// A directory on the way that cannot be searched (EACCES): the
			// command, with the same rights, cannot create below it
			// either, unless it changes the directory's mode first; not
			// guarded, refused by -full. ENOTDIR: nothing to create.
			if (errno != ENOTDIR && s->require_full)
				sbx_fatal(sbx_ns_token, "full enforcement required, but: guarded name %s cannot be looked up: %s", p,
				          strerror(errno));
			whole = 0;
			break;
		}
		if (fstat(fd, &st) < 0)
			sbx_fatal(sbx_ns_token, "plan the guard: %s: %s", p, strerror(errno));
		if (S_ISLNK(st.st_mode) && last) {
			close(fd);
			break; // the name is there, a symlink: bound as a read-only subpath is
		}
		if (S_ISLNK(st.st_mode)) {
			// Behind a symlink (a .cargo linked elsewhere): the name the
			// link leads to is another directory's, not guarded here; the
			// provider reported it (vocab.NamespaceGaps), -full refuses it.
			close(fd);
			if (s->require_full)
				sbx_fatal(sbx_ns_token, "full enforcement required, but: guarded name %s lies behind a symlink", p);
			whole = 0;
			break;
		}
		close(dfd);
		dfd = fd;
		if (!S_ISDIR(st.st_mode) && !last) {
			whole = 0; // a file on the way: nothing below it can be made
			break;
		}
	}
	close(dfd);
	free(rest);
	free(upto);
	return whole;
}

// plan_read_only plans the read-only bind of p (and the pins above it).
// The provider resolved p's directories at Wrap time, so a symlink among
// them now is fatal; a missing p is skipped (the provider reported it).
static void plan_read_only(const struct spec *s, const char *p) {
	char *dir = ns_xstrdup(p);
	char *slash = strrchr(dir, '/');
	*slash = 0;
	int dfd = ns_open_strict(AT_FDCWD, *dir ? dir : "/", O_DIRECTORY, 0);
	if (dfd < 0 && errno == ELOOP)
		sbx_fatal(sbx_ns_token, "plan the mounts: read-only subpath %s: %s", p, ns_swapped_or(errno));
	int fd = dfd < 0 ? -1 : openat(dfd, slash + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		ns_resolve_failed("read-only subpath", p);
	if (dfd >= 0)
		close(dfd);
	free(dir);
	struct stat st;
	// -full is checked here, on what the plan uses, not by name before
	// it: a swap in between would otherwise pass the check.
	if (fd < 0) {
		if (s->nguard > 0)
			plan_guard(s, p); // the guard refuses its creation
		else if (s->require_full)
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
			ns_resolve_failed("the target of read-only subpath", p);
			return; // dangling
		}
		fd = ns_open_strict(AT_FDCWD, real, 0, 0);
		if (fd < 0 && errno == ELOOP)
			sbx_fatal(sbx_ns_token, "plan the mounts: the target %s of read-only subpath %s: %s", real, p, ns_swapped_or(errno));
		if (fd < 0 || fstat(fd, &st) < 0) {
			ns_resolve_failed("the target of read-only subpath", real);
			if (fd >= 0)
				close(fd);
			free(real);
			return;
		}
	} else {
		real = ns_xstrdup(p);
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

void ns_plan(const struct spec *s) {
	for (int i = 0; i <= s->nwritable; i++) {
		const char *w = i < s->nwritable ? s->writable[i] : s->tempdir;
		if (!w)
			continue;
		int fd = ns_open_strict(AT_FDCWD, w, O_DIRECTORY, 0);
		if (fd < 0)
			sbx_fatal(sbx_ns_token, "plan the mounts: writable root %s: %s", w, ns_swapped_or(errno));
		add_layer(LAYER_WRITABLE, w, 1, fd, NULL);
	}
	plan_deny_read(s);
	for (int i = 0; i < s->nro; i++)
		plan_read_only(s, s->ro[i]);
	// A guarded name that appeared since the Wrap is bound read-only
	// like a read-only subpath; the others are guarded.
	for (int i = 0; i < s->nguard; i++)
		if (plan_guard(s, s->guard[i]))
			plan_read_only(s, s->guard[i]);
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

static int set_attr(const char *path, int recursive, uint64_t set, uint64_t clr) {
	struct sbx_mount_attr a = {.attr_set = set, .attr_clr = clr};
	int flags = AT_SYMLINK_NOFOLLOW | (recursive ? SBX_AT_RECURSIVE : 0);
	return syscall(SYS_mount_setattr, AT_FDCWD, path, flags, &a, sizeof a);
}

static void touch(const char *path, mode_t mode) {
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, mode);
	ns_must(fd, "create", path);
	close(fd);
}

static void setup_dev(void) {
	const char *dev = NEWROOT "/dev";
	ns_must(mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755"), "mount /dev", NULL);
	static const char *devices[] = {"null", "zero", "full", "random", "urandom", "tty"};
	char host[64], mine[64];
	for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
		snprintf(host, sizeof host, OLDROOT "/dev/%s", devices[i]);
		snprintf(mine, sizeof mine, "%s/%s", dev, devices[i]);
		struct stat st;
		if (stat(host, &st) < 0)
			continue;
		touch(mine, 0600);
		ns_must(mount(host, mine, NULL, MS_BIND, NULL), "bind", mine);
		// Read-only: these are the host's inodes, and a root caller owns
		// them (chmod 600 /dev/null would break every other user). A
		// read-only mount refuses chmod, chown, utimes and xattrs, while
		// reading and writing a device (O_TRUNC included) still work.
		ns_must(set_attr(mine, 0, ATTR_RDONLY | ATTR_NOSUID | ATTR_NOEXEC, 0), "make read-only", mine);
	}
	ns_must(mkdir(NEWROOT "/dev/pts", 0755), "mkdir", "/dev/pts");
	ns_must(mount("devpts", NEWROOT "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"), "mount",
	        "/dev/pts");
	ns_must(mkdir(NEWROOT "/dev/shm", 01777), "mkdir", "/dev/shm");
	ns_must(mount("tmpfs", NEWROOT "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"), "mount", "/dev/shm");
	static const char *links[][2] = {{"ptmx", "pts/ptmx"},
	                                 {"fd", "/proc/self/fd"},
	                                 {"stdin", "/proc/self/fd/0"},
	                                 {"stdout", "/proc/self/fd/1"},
	                                 {"stderr", "/proc/self/fd/2"}};
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
		snprintf(mine, sizeof mine, "%s/%s", dev, links[i][0]);
		ns_must(symlink(links[i][1], mine), "symlink", mine);
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
	char *rel = ns_xstrdup(l->path + 1);
	int dfd = ns_open_strict(newroot, ".", O_DIRECTORY, 1);
	char *name = rel;
	for (char *slash; dfd >= 0; name = slash + 1) {
		slash = strchr(name, '/');
		int last = slash == NULL;
		if (!last)
			*slash = 0;
		if (last && !l->isdir) {
			int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0 && errno != EEXIST)
				ns_must(-1, "mount point", l->path);
			if (fd >= 0)
				close(fd);
		} else if (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST) {
			ns_must(-1, "mount point", l->path);
		}
		if (last)
			break;
		int next = ns_open_strict(dfd, name, O_DIRECTORY, 1), e = errno;
		close(dfd);
		dfd = next;
		errno = e;
	}
	if (dfd < 0)
		sbx_fatal(sbx_ns_token, "mount point %s: %s", l->path, ns_swapped_or(errno));
	close(dfd);
	free(rel);
}

// open_mount_point opens where l goes in the new root, without following
// a symlink, and checks it is what was planned.
static int open_mount_point(const struct layer *l) {
	const char *rel = *(l->path + 1) ? l->path + 1 : ".";
	int fd = ns_open_strict(newroot, rel, 0, 1);
	if (fd < 0 && errno == ENOENT && (l->kind == LAYER_WRITABLE || l->kind == LAYER_DENY || l->kind == LAYER_SOCKET)) {
		make_mount_point(l);
		fd = ns_open_strict(newroot, rel, 0, 1);
	}
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		sbx_fatal(sbx_ns_token, "mount point %s: %s", l->path, ns_swapped_or(errno));
	if (!S_ISDIR(st.st_mode) != !l->isdir)
		sbx_fatal(sbx_ns_token, "mount point %s changed type during the launch", l->path);
	if ((l->kind == LAYER_RO || l->kind == LAYER_PIN) && (st.st_dev != l->dev || st.st_ino != l->ino))
		sbx_fatal(sbx_ns_token, "mount point %s is not the object planned on: it was replaced during the launch", l->path);
	return fd;
}

// tree_of returns a detached copy of the mount tree at fd.
static int tree_of(int fd, int recursive, const char *what, const char *path) {
	int tree =
	        syscall(SYS_open_tree, fd, "", SBX_OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH | (recursive ? SBX_AT_RECURSIVE : 0));
	ns_must(tree, what, path);
	return tree;
}

// empty_tmpfs returns a detached, empty, small tmpfs for a deny-read
// directory; it stays writable until sealed, so that mount points can be
// made inside it.
static int empty_tmpfs(const char *path) {
	int fs = syscall(SYS_fsopen, "tmpfs", 1 /* FSOPEN_CLOEXEC */);
	ns_must(fs, "hide deny-read: fsopen", path);
	ns_must(syscall(SYS_fsconfig, fs, SBX_FSCONFIG_SET_STRING, "mode", "0755", 0), "hide deny-read: mode", path);
	ns_must(syscall(SYS_fsconfig, fs, SBX_FSCONFIG_SET_STRING, "size", "64k", 0), "hide deny-read: size", path);
	ns_must(syscall(SYS_fsconfig, fs, SBX_FSCONFIG_CMD_CREATE, NULL, NULL, 0), "hide deny-read: create", path);
	int mnt = syscall(SYS_fsmount, fs, 1 /* FSMOUNT_CLOEXEC */, ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC);
	ns_must(mnt, "hide deny-read: fsmount", path);
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
	ns_must(statx(tree, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx), "read the mount id of", l->path);
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
		ns_must(set_attr_fd(tree, 1, ATTR_NOSUID | ATTR_NODEV, ATTR_RDONLY), "make writable", l->path);
		break;
	case LAYER_PIN:
		tree = tree_of(target, 1, "pin", l->path);
		break;
	case LAYER_RO:
		tree = tree_of(l->fd, 1, "bind read-only", l->path);
		ns_must(set_attr_fd(tree, 1, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0), "make read-only", l->path);
		break;
	case LAYER_SOCKET:
		tree = tree_of(l->fd, 0, "bind UNIX socket", l->path);
		ns_must(set_attr_fd(tree, 0, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0), "make read-only", l->path);
		break;
	case LAYER_DENY:
		if (l->isdir) {
			tree = empty_tmpfs(l->path);
		} else {
			tree = syscall(SYS_open_tree, AT_FDCWD, EMPTY_RO, SBX_OPEN_TREE_CLONE | O_CLOEXEC);
			ns_must(tree, "hide deny-read", l->path);
			ns_must(set_attr_fd(tree, 0, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0), "hide deny-read", l->path);
		}
		break;
	}
	ns_must(syscall(SYS_move_mount, tree, "", target, "", SBX_MOVE_MOUNT_F_EMPTY_PATH | SBX_MOVE_MOUNT_T_EMPTY_PATH),
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

void ns_build_root(void) {
	ns_must(mount("", "/", NULL, MS_REC | MS_SLAVE, NULL), "make / a slave mount", NULL);
	ns_must(mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"), "mount the staging tmpfs on", "/tmp");
	ns_must(mkdir("/tmp" NEWROOT, 0755), "mkdir", NEWROOT);
	ns_must(mkdir("/tmp" OLDROOT, 0755), "mkdir", OLDROOT);
	touch("/tmp" EMPTY_RO, 0400);
	ns_must(mkdir("/tmp" TMP_UPPER, 0755), "mkdir", TMP_UPPER);
	ns_must(mkdir("/tmp" TMP_UPPER "/upper", 0755), "mkdir", TMP_UPPER);
	ns_must(mkdir("/tmp" TMP_UPPER "/work", 0755), "mkdir", TMP_UPPER);
	ns_must(chmod("/tmp" TMP_UPPER "/upper", 01777), "chmod the private /tmp", NULL);
	ns_must(syscall(SYS_pivot_root, "/tmp", "/tmp" OLDROOT), "pivot into the staging tmpfs", NULL);
	ns_must(chdir("/"), "chdir", "/");
	ns_must(mount(OLDROOT, NEWROOT, NULL, MS_BIND | MS_REC, NULL), "bind the host's tree", NULL);
	// Private: a mount the host makes later must not arrive inside with
	// its own, writable flags.
	ns_must(mount("", NEWROOT, NULL, MS_REC | MS_PRIVATE, NULL), "make the new root private", NULL);
	ns_must(set_attr(NEWROOT, 1, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0), "make the host's tree read-only", NULL);
	// Read-only, like the rest of the host's tree: a write to /tmp fails
	// loudly (EROFS), as it does under landlock, instead of succeeding in
	// a tmpfs that vanishes with the sandbox. The wrap's TMPDIR is the
	// scratch place. An overlay rather than a bind: no host socket under
	// /tmp can be connected to through it (its inodes are not the sockets).
	ns_must(mount("overlay", NEWROOT "/tmp", "overlay", MS_NOSUID | MS_NODEV | MS_RDONLY,
	              "lowerdir=" OLDROOT "/tmp,upperdir=" TMP_UPPER "/upper,workdir=" TMP_UPPER "/work,userxattr"),
	        "mount a private /tmp", NULL);
	setup_dev();
	ns_must(mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL), "mount a fresh /proc",
	        NULL);
	newroot = ns_open_strict(AT_FDCWD, NEWROOT, O_DIRECTORY, 0);
	ns_must(newroot, "open the new root", NULL);
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
			ns_must(set_attr_fd(layers[i].mnt, 0, ATTR_RDONLY, 0), "seal", layers[i].path);
			close(layers[i].mnt);
		}
	ns_must(set_attr(NEWROOT "/dev", 0, ATTR_RDONLY, 0), "seal", "/dev");
	ns_must(chdir(NEWROOT), "chdir into the new root", NULL);
	ns_must(syscall(SYS_pivot_root, ".", "."), "pivot into the new root", NULL);
	ns_must(umount2(".", MNT_DETACH), "detach the host's tree", NULL);
	ns_must(chdir("/"), "chdir", "/");
}

// enter_dir makes dir the working directory. It was resolved at Wrap time:
// a symlink on its path now is fatal, so the command never starts in a
// directory another sandbox chose for it.
void ns_enter_dir(const char *dir) {
	int fd = ns_open_strict(AT_FDCWD, dir, O_DIRECTORY, 0);
	if (fd < 0 || fchdir(fd) < 0)
		sbx_fatal(sbx_ns_token, "chdir %s inside the sandbox: %s", dir, ns_swapped_or(errno));
	close(fd);
}

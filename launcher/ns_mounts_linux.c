// ns-run stage 2, section 3: the new root, built from the plan
// (ns_plan_linux.c).

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
#include "ns_mounts_linux.h"
#include "ns_plan_linux.h"
#include "shared_linux.h"

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
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#define SBX_OPEN_TREE_CLONE 1
#define SBX_MOVE_MOUNT_F_EMPTY_PATH 0x04
#define SBX_MOVE_MOUNT_T_EMPTY_PATH 0x40
#define SBX_FSCONFIG_SET_FLAG 0
#define SBX_FSCONFIG_SET_STRING 1
#define SBX_FSCONFIG_CMD_CREATE 6
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
	sbx_must(fd, "create", path);
	close(fd);
}

static void setup_dev(void) {
	const char *dev = NEWROOT "/dev";
	sbx_must(mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755"), "mount /dev", NULL);
	static const char *devices[] = {"null", "zero", "full", "random", "urandom", "tty"};
	char host[64], mine[64];
	for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
		snprintf(host, sizeof host, OLDROOT "/dev/%s", devices[i]);
		snprintf(mine, sizeof mine, "%s/%s", dev, devices[i]);
		struct stat st;
		if (stat(host, &st) < 0)
			continue;
		touch(mine, 0600);
		sbx_must(mount(host, mine, NULL, MS_BIND, NULL), "bind", mine);
		// Read-only: these are the host's inodes, and a root caller owns
		// them (chmod 600 /dev/null would break every other user). A
		// read-only mount refuses chmod, chown, utimes and xattrs, while
		// reading and writing a device (O_TRUNC included) still work.
		sbx_must(set_attr(mine, 0, ATTR_RDONLY | ATTR_NOSUID | ATTR_NOEXEC, 0), "make read-only", mine);
	}
	sbx_must(mkdir(NEWROOT "/dev/pts", 0755), "mkdir", "/dev/pts");
	sbx_must(mount("devpts", NEWROOT "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"), "mount",
	         "/dev/pts");
	sbx_must(mkdir(NEWROOT "/dev/shm", 01777), "mkdir", "/dev/shm");
	sbx_must(mount("tmpfs", NEWROOT "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"), "mount", "/dev/shm");
	static const char *links[][2] = {{"ptmx", "pts/ptmx"},
	                                 {"fd", "/proc/self/fd"},
	                                 {"stdin", "/proc/self/fd/0"},
	                                 {"stdout", "/proc/self/fd/1"},
	                                 {"stderr", "/proc/self/fd/2"}};
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
		snprintf(mine, sizeof mine, "%s/%s", dev, links[i][0]);
		sbx_must(symlink(links[i][1], mine), "symlink", mine);
	}
}

static int set_attr_fd(int fd, int recursive, uint64_t set, uint64_t clr) {
	struct sbx_mount_attr a = {.attr_set = set, .attr_clr = clr};
	return syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | (recursive ? SBX_AT_RECURSIVE : 0), &a, sizeof a);
}

// newroot, in what follows, is the new root while it is built: every
// mount point is opened beneath it.
//
// make_mount_point creates the missing mount point of l, one component at
// a time from the new root, following no symlink; that only succeeds
// where the new root is writable at this stage (a deny-read tmpfs, a
// writable root).
static void make_mount_point(int newroot, const struct layer *l) {
	char *rel = sbx_xstrdup(l->path + 1);
	int dfd = sbx_open_strict(newroot, ".", O_DIRECTORY, 1);
	char *name = rel;
	for (char *slash; dfd >= 0; name = slash + 1) {
		slash = strchr(name, '/');
		int last = slash == NULL;
		if (!last)
			*slash = 0;
		if (last && !l->isdir) {
			int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0 && errno != EEXIST)
				sbx_must(-1, "mount point", l->path);
			if (fd >= 0)
				close(fd);
		} else if (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST) {
			sbx_must(-1, "mount point", l->path);
		}
		if (last)
			break;
		int next = sbx_open_strict(dfd, name, O_DIRECTORY, 1), e = errno;
		close(dfd);
		dfd = next;
		errno = e;
	}
	if (dfd < 0)
		sbx_fatal(sbx_token, "mount point %s: %s", l->path, sbx_swapped_or(errno));
	close(dfd);
	free(rel);
}

// open_mount_point opens where l goes in the new root, without following
// a symlink, and checks it is what was planned.
static int open_mount_point(int newroot, const struct layer *l) {
	const char *rel = *(l->path + 1) ? l->path + 1 : ".";
	int fd = sbx_open_strict(newroot, rel, 0, 1);
	if (fd < 0 && errno == ENOENT && (l->kind == LAYER_WRITABLE || l->kind == LAYER_DENY || l->kind == LAYER_SOCKET)) {
		make_mount_point(newroot, l);
		fd = sbx_open_strict(newroot, rel, 0, 1);
	}
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		sbx_fatal(sbx_token, "mount point %s: %s", l->path, sbx_swapped_or(errno));
	if (!S_ISDIR(st.st_mode) != !l->isdir)
		sbx_fatal(sbx_token, "mount point %s changed type during the launch", l->path);
	if ((l->kind == LAYER_RO || l->kind == LAYER_PIN) && (st.st_dev != l->dev || st.st_ino != l->ino))
		sbx_fatal(sbx_token, "mount point %s is not the object planned on: it was replaced during the launch", l->path);
	return fd;
}

// tree_of returns a detached copy of the mount tree at fd.
static int tree_of(int fd, int recursive, const char *what, const char *path) {
	int tree =
	        syscall(SYS_open_tree, fd, "", SBX_OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH | (recursive ? SBX_AT_RECURSIVE : 0));
	sbx_must(tree, what, path);
	return tree;
}

// empty_tmpfs returns a detached, empty, small tmpfs for a deny-read
// directory; it stays writable until sealed, so that mount points can be
// made inside it.
static int empty_tmpfs(const char *path) {
	int fs = syscall(SYS_fsopen, "tmpfs", 1 /* FSOPEN_CLOEXEC */);
	sbx_must(fs, "hide deny-read: fsopen", path);
	sbx_must(syscall(SYS_fsconfig, fs, SBX_FSCONFIG_SET_STRING, "mode", "0755", 0), "hide deny-read: mode", path);
	sbx_must(syscall(SYS_fsconfig, fs, SBX_FSCONFIG_SET_STRING, "size", "64k", 0), "hide deny-read: size", path);
	sbx_must(syscall(SYS_fsconfig, fs, SBX_FSCONFIG_CMD_CREATE, NULL, NULL, 0), "hide deny-read: create", path);
	int mnt = syscall(SYS_fsmount, fs, 1 /* FSMOUNT_CLOEXEC */, ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC);
	sbx_must(mnt, "hide deny-read: fsmount", path);
	close(fs);
	return mnt;
}

// sized_tmpfs returns a detached, empty tmpfs of size bytes, private to
// its owner: the temp dir under -tmpsize, so that one command filling its
// $TMPDIR fills its own tmpfs (ENOSPC), not the host's disk the other
// wraps' temp dirs share.
static int sized_tmpfs(const char *path, long long size) {
	char bytes[24];
	snprintf(bytes, sizeof bytes, "%lld", size);
	int fs = syscall(SYS_fsopen, "tmpfs", 1 /* FSOPEN_CLOEXEC */);
	sbx_must(fs, "temp dir: fsopen", path);
	sbx_must(syscall(SYS_fsconfig, fs, SBX_FSCONFIG_SET_STRING, "mode", "0700", 0), "temp dir: mode", path);
	sbx_must(syscall(SYS_fsconfig, fs, SBX_FSCONFIG_SET_STRING, "size", bytes, 0), "temp dir: size", path);
	sbx_must(syscall(SYS_fsconfig, fs, SBX_FSCONFIG_CMD_CREATE, NULL, NULL, 0), "temp dir: create", path);
	int mnt = syscall(SYS_fsmount, fs, 1 /* FSMOUNT_CLOEXEC */, ATTR_NOSUID | ATTR_NODEV);
	sbx_must(mnt, "temp dir: fsmount", path);
	close(fs);
	return mnt;
}

// overlay_tree returns -overlay as a detached mount (struct sbx_plan,
// ovl_*): the user's directory its read-only lower layer, the command's
// writes going to -overlay-dir's upper one. It is made before the pivot
// into the staging tmpfs, while /proc is the host's and names the plan's
// descriptors, so no path is resolved again. When the kernel refuses it
// (a mount below the user's directory, locked in this user namespace; an
// upper file system overlayfs cannot use; a kernel without overlayfs in
// user namespaces) it returns -1 and says so on stderr: the directory then
// stays the host's, read-only like the rest of its tree, and the command
// runs, confined as ever, with a cache it cannot write.
static int overlay_tree(const struct spec *s, const struct sbx_plan *p) {
	if (p->ovl_lower < 0)
		return -1;
	char opt[3][32];
	int fds[3] = {p->ovl_lower, p->ovl_upper, p->ovl_work};
	for (int i = 0; i < 3; i++)
		snprintf(opt[i], sizeof opt[i], "/proc/self/fd/%d", fds[i]);
	const char *step = "fsopen";
	int fs = syscall(SYS_fsopen, "overlay", 1 /* FSOPEN_CLOEXEC */), mnt = -1;
	if (fs >= 0) {
		const char *keys[3] = {"lowerdir", "upperdir", "workdir"};
		int ok = 1;
		for (int i = 0; ok && i < 3; i++)
			if (syscall(SYS_fsconfig, fs, SBX_FSCONFIG_SET_STRING, keys[i], opt[i], 0) < 0)
				step = keys[i], ok = 0;
		if (ok && syscall(SYS_fsconfig, fs, SBX_FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0)
			step = "userxattr", ok = 0;
		if (ok && syscall(SYS_fsconfig, fs, SBX_FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
			step = "create", ok = 0;
		if (ok && (mnt = syscall(SYS_fsmount, fs, 1 /* FSMOUNT_CLOEXEC */, ATTR_NOSUID | ATTR_NODEV)) < 0)
			step = "fsmount";
		int e = errno;
		close(fs);
		errno = e;
	}
	if (mnt < 0)
		fprintf(stderr, "ns-run: notice: the overlay on %s could not be mounted (%s: %s): it stays read-only\n", s->overlay, step,
		        strerror(errno));
	return mnt;
}

// attach_overlay puts the overlay on its mount point, the lower directory
// in the new root, checked to be the object planned on.
static void attach_overlay(int newroot, const struct spec *s, const struct sbx_plan *p, int tree) {
	int target = sbx_open_strict(newroot, s->overlay + 1, O_DIRECTORY, 1);
	struct stat st;
	if (target < 0 || fstat(target, &st) < 0)
		sbx_fatal(sbx_token, "mount point %s: %s", s->overlay, sbx_swapped_or(errno));
	if (st.st_dev != p->ovl_dev || st.st_ino != p->ovl_ino)
		sbx_fatal(sbx_token, "mount point %s is not the object planned on: it was replaced during the launch", s->overlay);
	sbx_must(syscall(SYS_move_mount, tree, "", target, "", SBX_MOVE_MOUNT_F_EMPTY_PATH | SBX_MOVE_MOUNT_T_EMPTY_PATH),
	         "attach the overlay on", s->overlay);
	close(target);
	close(tree);
}

// Process state: pid 1 reads them once pid 2 execs the command, so they
// outlive the plan (ns_linux.h).
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
	sbx_must(statx(tree, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx), "read the mount id of", l->path);
	if (!(stx.stx_mask & STATX_MNT_ID))
		sbx_fatal(sbx_token, "the kernel gives no mount id for %s (statx STATX_MNT_ID, Linux 5.8)", l->path);
	sbx_ns_watch[sbx_ns_nwatch++] = (struct sbx_watch){stx.stx_mnt_id, l->path};
}

// mount_layer makes layer l in the new root: a detached mount, its
// attributes set before it is attached, moved onto the mount point's
// descriptor. Nothing is resolved by path twice.
static void mount_layer(int newroot, struct layer *l) {
	int target = open_mount_point(newroot, l), tree = -1;
	switch (l->kind) {
	case LAYER_WRITABLE:
		if (l->size) {
			tree = sized_tmpfs(l->path, l->size);
			break;
		}
		tree = tree_of(l->fd, 1, "bind writable", l->path);
		sbx_must(set_attr_fd(tree, 1, ATTR_NOSUID | ATTR_NODEV, ATTR_RDONLY), "make writable", l->path);
		break;
	case LAYER_PIN:
		tree = tree_of(target, 1, "pin", l->path);
		break;
	case LAYER_RO:
		tree = tree_of(l->fd, 1, "bind read-only", l->path);
		sbx_must(set_attr_fd(tree, 1, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0), "make read-only", l->path);
		break;
	case LAYER_SOCKET:
		tree = tree_of(l->fd, 0, "bind UNIX socket", l->path);
		sbx_must(set_attr_fd(tree, 0, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0), "make read-only", l->path);
		break;
	case LAYER_DENY:
		if (l->isdir) {
			tree = empty_tmpfs(l->path);
		} else {
			tree = syscall(SYS_open_tree, AT_FDCWD, EMPTY_RO, SBX_OPEN_TREE_CLONE | O_CLOEXEC);
			sbx_must(tree, "hide deny-read", l->path);
			sbx_must(set_attr_fd(tree, 0, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0), "hide deny-read", l->path);
		}
		break;
	}
	sbx_must(syscall(SYS_move_mount, tree, "", target, "", SBX_MOVE_MOUNT_F_EMPTY_PATH | SBX_MOVE_MOUNT_T_EMPTY_PATH),
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

// private_tmp shows the host's /tmp read-only, like the rest of the host's
// tree: a write there fails loudly (EROFS), as it does under landlock,
// instead of succeeding in a tmpfs that vanishes with the sandbox; the
// wrap's TMPDIR is the scratch place. An overlay rather than a bind: no
// host socket or FIFO under /tmp can be reached through it (its inodes are
// not theirs). The kernel refuses that overlay (EINVAL) when mounts lie
// below the host's /tmp: in the sandbox's user namespace they are locked
// over what they cover, and overlayfs needs a clone of its lower
// directory without them. A non-recursive clone is refused for the same
// reason, and tells that case apart: /tmp then stays the host tree's
// read-only bind, its submounts included and read-only too, so its sockets
// and FIFOs are reachable as those anywhere else in the host's tree are
// (seccomp and Landlock decide, docs/policy.md "UNIX sockets"). Any other
// failure is fatal.
static void private_tmp(void) {
	if (mount("overlay", NEWROOT "/tmp", "overlay", MS_NOSUID | MS_NODEV | MS_RDONLY,
	          "lowerdir=" OLDROOT "/tmp,upperdir=" TMP_UPPER "/upper,workdir=" TMP_UPPER "/work,userxattr") == 0)
		return;
	int e = errno;
	if (e == EINVAL) {
		int clone = syscall(SYS_open_tree, AT_FDCWD, OLDROOT "/tmp", SBX_OPEN_TREE_CLONE | O_CLOEXEC);
		if (clone < 0 && errno == EINVAL)
			return;
		if (clone >= 0)
			close(clone);
	}
	errno = e;
	sbx_must(-1, "mount a private /tmp", NULL);
}

void ns_build_root(const struct spec *s, struct sbx_plan *p) {
	sbx_must(mount("", "/", NULL, MS_REC | MS_SLAVE, NULL), "make / a slave mount", NULL);
	int overlay = overlay_tree(s, p);
	int ovl[] = {p->ovl_lower, p->ovl_upper, p->ovl_work};
	for (int i = 0; i < 3; i++)
		if (ovl[i] >= 0)
			close(ovl[i]);
	p->ovl_lower = p->ovl_upper = p->ovl_work = -1;
	sbx_must(mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"), "mount the staging tmpfs on", "/tmp");
	sbx_must(mkdir("/tmp" NEWROOT, 0755), "mkdir", NEWROOT);
	sbx_must(mkdir("/tmp" OLDROOT, 0755), "mkdir", OLDROOT);
	touch("/tmp" EMPTY_RO, 0400);
	sbx_must(mkdir("/tmp" TMP_UPPER, 0755), "mkdir", TMP_UPPER);
	sbx_must(mkdir("/tmp" TMP_UPPER "/upper", 0755), "mkdir", TMP_UPPER);
	sbx_must(mkdir("/tmp" TMP_UPPER "/work", 0755), "mkdir", TMP_UPPER);
	sbx_must(chmod("/tmp" TMP_UPPER "/upper", 01777), "chmod the private /tmp", NULL);
	sbx_must(syscall(SYS_pivot_root, "/tmp", "/tmp" OLDROOT), "pivot into the staging tmpfs", NULL);
	sbx_must(chdir("/"), "chdir", "/");
	sbx_must(mount(OLDROOT, NEWROOT, NULL, MS_BIND | MS_REC, NULL), "bind the host's tree", NULL);
	// Private: a mount the host makes later must not arrive inside with
	// its own, writable flags.
	sbx_must(mount("", NEWROOT, NULL, MS_REC | MS_PRIVATE, NULL), "make the new root private", NULL);
	sbx_must(set_attr(NEWROOT, 1, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0), "make the host's tree read-only", NULL);
	private_tmp();
	setup_dev();
	sbx_must(mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL), "mount a fresh /proc",
	         NULL);
	int newroot = sbx_open_strict(AT_FDCWD, NEWROOT, O_DIRECTORY, 0);
	sbx_must(newroot, "open the new root", NULL);
	sbx_ns_watch = calloc(p->nlayers ? p->nlayers : 1, sizeof *sbx_ns_watch);
	if (!sbx_ns_watch)
		sbx_fatal(sbx_token, "plan the mounts: out of memory");
	for (int i = 0; i < p->nlayers; i++)
		mount_layer(newroot, &p->layers[i]);
	if (overlay >= 0)
		attach_overlay(newroot, s, p, overlay);
	close(newroot);
	// Deny-read mounts stayed writable while mount points inside them were
	// made; now they are sealed, as is /dev's tmpfs.
	for (int i = 0; i < p->nlayers; i++)
		if (p->layers[i].mnt >= 0) {
			sbx_must(set_attr_fd(p->layers[i].mnt, 0, ATTR_RDONLY, 0), "seal", p->layers[i].path);
			close(p->layers[i].mnt);
			p->layers[i].mnt = -1;
		}
	sbx_must(set_attr(NEWROOT "/dev", 0, ATTR_RDONLY, 0), "seal", "/dev");
	sbx_must(chdir(NEWROOT), "chdir into the new root", NULL);
	sbx_must(syscall(SYS_pivot_root, ".", "."), "pivot into the new root", NULL);
	sbx_must(umount2(".", MNT_DETACH), "detach the host's tree", NULL);
	sbx_must(chdir("/"), "chdir", "/");
}

// enter_dir makes dir the working directory. It was resolved at Wrap time:
// a symlink on its path now is fatal, so the command never starts in a
// directory another sandbox chose for it.
void ns_enter_dir(const char *dir) {
	int fd = sbx_open_strict(AT_FDCWD, dir, O_DIRECTORY, 0);
	if (fd < 0 || fchdir(fd) < 0)
		sbx_fatal(sbx_token, "chdir %s inside the sandbox: %s", dir, sbx_swapped_or(errno));
	close(fd);
}

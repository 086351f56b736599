// The metadata calls landlock-run's supervisor makes for the command.
//
// Landlock governs no file metadata, so under the landlock runner the
// command's seccomp filter hands the calls that change it (the chmod,
// chown, utimes and xattr families, ACLs included, and the inode-flag
// ioctls: seccompfilter.Notified) to the supervisor as user
// notifications, and the supervisor answers each one by making the call
// itself:
//
//   - it opens the object the call names the way the kernel would for the
//     command (the command's working directory through /proc/PID/cwd, its
//     descriptors taken with pidfd_getfd, or through /proc/PID/fd where
//     that is refused, the path read from the command's memory into the
//     supervisor's own buffer, symlinks followed unless the call says
//     AT_SYMLINK_NOFOLLOW, /proc/self/fd/N and its kin read as the
//     command's descriptor N, every other /proc magic link refused), as a
//     descriptor of its own (O_PATH, or the command's open file itself);
//   - it checks that the notification is still live (the command is still
//     blocked in that call, so the pid was not reused meanwhile);
//   - it refuses any object that is not beneath a writable root or the
//     wrap's temp dir (EACCES, as Landlock refuses a write), and the setuid
//     and setgid bits (EPERM, as the namespaces runner's filter does);
//   - it makes the change through that descriptor, with no capability
//     (the supervisor drops all of them at its start), so the kernel's own
//     owner and permission checks are the command's. A symlink's own
//     mode and xattrs (the *at calls with AT_SYMLINK_NOFOLLOW, the
//     l* calls) are refused (EOPNOTSUPP, or EPERM for xattrs, which the
//     kernel refuses on symlinks for users anyway); its owner and times
//     are changed.
//
// The supervisor acts on the descriptor it opened and checked, never on a
// path again, and never lets the kernel continue the command's own call:
// what the command changes in its memory or in the tree after the check
// reaches nothing.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "landlock_metadata_linux.h"
#include "landlock_metadata_rules_linux.h"
#include "shared_linux.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

// The writable roots and the temp dir, from the launcher's arguments.
static char **meta_roots;
static int meta_nroots;

void sbx_meta_roots(const struct spec *s) {
	int n = s->nwritable + (s->tempdir != NULL);
	meta_roots = calloc((size_t)n + 1, sizeof *meta_roots);
	if (meta_roots == NULL)
		return;
	for (int i = 0; i < s->nwritable; i++)
		meta_roots[meta_nroots++] = s->writable[i];
	if (s->tempdir != NULL)
		meta_roots[meta_nroots++] = s->tempdir;
}

// beneath reports whether path is one of the roots or below one.
static int beneath(const char *path) {
	for (int i = 0; i < meta_nroots; i++)
		if (sbx_within(path, meta_roots[i]))
			return 1;
	return 0;
}

// open_proc opens /proc/PID/WHAT (cwd, fd/N) as an O_PATH descriptor: the
// object the command's own descriptor or directory is.
static int open_proc(pid_t pid, const char *what, int flags) {
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/%s", (int)pid, what);
	return open(p, O_PATH | O_CLOEXEC | flags);
}

// path_only reports whether the command's descriptor n was opened O_PATH
// (its flags in /proc/PID/fdinfo/N).
static int path_only(pid_t pid, int n) {
	char p[64], buf[256];
	snprintf(p, sizeof p, "/proc/%d/fdinfo/%d", (int)pid, n);
	FILE *f = fopen(p, "re");
	if (f == NULL)
		return 0;
	unsigned long flags = 0;
	int found = 0;
	while (!found && fgets(buf, sizeof buf, f) != NULL)
		found = sscanf(buf, "flags: %lo", &flags) == 1;
	fclose(f);
	return found && (flags & O_PATH);
}

// No pidfd_getfd here (before Linux 5.6, or refused by a container's
// seccomp profile): the command's descriptors are opened through /proc.
static int no_getfd;

// The pidfd of the thread that made the last call, kept: most calls come
// from one thread, and a new pidfd per call (pidfd_open, close) costs
// several times the pidfd_getfd it serves. A pidfd
// names one task, whose number no other task takes while it lives, and
// pidfd_getfd refuses once it has died; so a kept pidfd that works for
// the number PID is the task PID is now, as a new one would be.
static pid_t kept_pid;
static int kept_pidfd = -1;

// pidfd_of is a pidfd of thread pid (a new one when fresh, else the kept
// one), kept for the next call; -1 with errno.
static int pidfd_of(pid_t pid, int fresh) {
	if (!fresh && kept_pidfd >= 0 && kept_pid == pid)
		return kept_pidfd;
	if (kept_pidfd >= 0)
		close(kept_pidfd);
	// The thread itself (PIDFD_THREAD, Linux 6.9), which may be other than
	// the leader; before 6.9, the process, which works for the leader.
	kept_pidfd = (int)syscall(SYS_pidfd_open, pid, PIDFD_THREAD);
	if (kept_pidfd < 0 && errno == EINVAL)
		kept_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	kept_pid = pid;
	return kept_pidfd;
}

// getfd takes the command's descriptor n with pidfd_getfd: the same open
// file, with no path looked up; -1 with errno (EBADF: no such descriptor).
static int getfd(pid_t pid, int n) {
	int kept = kept_pidfd >= 0 && kept_pid == pid;
	int p = pidfd_of(pid, 0), fd = -1;
	if (p >= 0 && (fd = (int)syscall(SYS_pidfd_getfd, p, n, 0)) >= 0)
		return fd;
	if (kept) {
		// The kept pidfd may name a task since gone, whose number the
		// caller now has: a new one answers for the caller.
		p = pidfd_of(pid, 1);
		if (p >= 0)
			fd = (int)syscall(SYS_pidfd_getfd, p, n, 0);
	}
	if (fd < 0 && p < 0 && (errno == ENOSYS || errno == EPERM))
		no_getfd = 1; // pidfd_open not in this kernel, or refused by a seccomp profile
	return fd;
}

// command_fd is the command's descriptor n (thread pid's), in the
// supervisor: the same open file, taken with pidfd_getfd; where that is not
// to be had (ptrace's rules, a thread on a kernel without PIDFD_THREAD),
// the object opened through /proc/PID/fd/N as O_PATH. -1 with
// errno as /proc answers (ENOENT for a closed one). *opath (if not NULL)
// says whether the command opened it O_PATH.
static int command_fd(pid_t pid, int n, int *opath) {
	if (!no_getfd) {
		int fd = getfd(pid, n);
		if (fd >= 0 && opath != NULL) {
			int fl = fcntl(fd, F_GETFL);
			if (fl < 0) {
				int saved = errno;
				close(fd);
				errno = saved;
				return -1;
			}
			*opath = (fl & O_PATH) != 0;
		}
		if (fd >= 0)
			return fd;
		if (errno == EBADF) {
			errno = ENOENT; // no such descriptor, as /proc answers
			return -1;
		}
		if (errno == ENOSYS)
			no_getfd = 1; // pidfd_getfd not in this kernel
	}
	char what[32];
	snprintf(what, sizeof what, "fd/%d", n);
	int fd = open_proc(pid, what, 0);
	if (fd >= 0 && opath != NULL)
		*opath = path_only(pid, n);
	return fd;
}

// decimal reads s up to its first '/' or NUL as /proc reads a number in a
// name (metarules.SelfFD): digits only, no leading zero but "0" itself, at
// most 2^31-1; the number, or -1. *end is what follows it.
static long decimal(const char *s, const char **end) {
	long n = 0;
	const char *p = s;
	for (; *p >= '0' && *p <= '9'; p++) {
		n = n * 10 + (*p - '0');
		if (n > 0x7fffffffL)
			return -1;
	}
	*end = p;
	if (p == s || (*p != 0 && *p != '/') || (p - s > 1 && *s == '0'))
		return -1;
	return n;
}

// tgid_of is the process the thread pid belongs to, or -1.
static long tgid_of(pid_t pid) {
	char p[64], buf[512];
	snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
	FILE *f = fopen(p, "re");
	if (f == NULL)
		return -1;
	long tgid = -1;
	while (fgets(buf, sizeof buf, f) != NULL)
		if (sscanf(buf, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

// self_fd reports whether path names one of the caller's own descriptors
// (metarules.SelfFD: SBX_META_SELF_FD_PREFIXES, or /proc/P/fd/ with P the
// calling thread pid or its process): the descriptor, *rest pointing past
// its number ("" or "/..."); -1 for any other path.
static long self_fd(pid_t pid, const char *path, const char **rest) {
	static const char *const prefixes[] = {SBX_META_SELF_FD_PREFIXES};
	const char *after = NULL;
	for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes && after == NULL; i++)
		if (strncmp(path, prefixes[i], strlen(prefixes[i])) == 0)
			after = path + strlen(prefixes[i]);
	if (after == NULL && strncmp(path, "/proc/", 6) == 0) {
		const char *end;
		long who = decimal(path + 6, &end);
		if (who > 0 && strncmp(end, "/fd/", 4) == 0 && (who == pid || who == tgid_of(pid)))
			after = end + 4;
	}
	if (after == NULL)
		return -1;
	return decimal(after, rest);
}

// open_no_magic opens path beneath base as O_PATH without crossing a /proc
// magic link, which in the supervisor would name the supervisor's own
// descriptors, or reach into processes the command cannot; -1 with errno,
// SBX_META_ERR_MAGIC_LINK for such a path. Where openat2 is refused (a
// container's seccomp profile), a plain open: the object is still checked.
static int open_no_magic(int base, const char *path, int nofollow) {
	int flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
	struct open_how how = {.flags = (unsigned long long)flags, .resolve = RESOLVE_NO_MAGICLINKS};
	int fd = (int)syscall(SYS_openat2, base, path, &how, sizeof how);
	if (fd >= 0 || (errno != ELOOP && errno != ENOSYS && errno != EPERM))
		return fd;
	if (errno != ELOOP)
		return openat(base, path, flags); // openat2 refused here
	// A loop of symlinks, or a magic link: a plain open tells them apart.
	fd = openat(base, path, flags);
	int loop = fd < 0 && errno == ELOOP;
	if (fd >= 0)
		close(fd);
	errno = loop ? ELOOP : SBX_META_ERR_MAGIC_LINK;
	return -1;
}

// target opens what a metadata call of the command names by path; it returns
// the descriptor, or -errno.
static int target(pid_t pid, int dirfd, unsigned long long pathaddr, int flags) {
	static char path[SBX_META_PATH_MAX];
	int e = sbx_read_path(pid, pathaddr, path, sizeof path);
	if (e != 0)
		return -e;
	const char *name = path;
	int base = AT_FDCWD;
	const char *rest;
	long own = path[0] == '/' ? self_fd(pid, path, &rest) : -1;
	if (own >= 0) {
		// The command's own descriptor, as the kernel reads the path for
		// it: taken from the command (command_fd), and what follows
		// beneath it.
		base = command_fd(pid, (int)own, NULL);
		if (base < 0)
			return -errno; // ENOENT, as /proc answers for a closed one
		if (*rest == 0) {
			if (!(flags & AT_SYMLINK_NOFOLLOW))
				return base;
			close(base); // the /proc link itself: not beneath any root
			return -SBX_META_ERR_MAGIC_LINK;
		}
		while (*rest == '/')
			rest++;
		name = *rest != 0 ? rest : ".";
	} else if (path[0] != '/') {
		base = dirfd == AT_FDCWD ? open_proc(pid, "cwd", 0) : command_fd(pid, dirfd, NULL);
		if (base < 0)
			return errno == ENOENT ? -SBX_META_ERR_NO_DESCRIPTOR : -errno;
	}
	int fd;
	if (name[0] == 0) {
		if (!(flags & AT_EMPTY_PATH)) {
			if (base >= 0)
				close(base);
			return -ENOENT;
		}
		fd = base >= 0 ? dup(base) : -1;
	} else {
		fd = open_no_magic(base, name, flags & AT_SYMLINK_NOFOLLOW);
	}
	int saved = errno;
	if (base >= 0)
		close(base);
	return fd < 0 ? -saved : fd;
}

// proc_fd opens the command's descriptor n (fchmod, fchown, fsetxattr,
// utimensat with no path, ioctl); it returns the descriptor, or -errno.
// An O_PATH descriptor is SBX_META_ERR_PATH_DESCRIPTOR, as these calls
// answer for one.
static int proc_fd(pid_t pid, unsigned long long n) {
	int opath = 0;
	int fd = command_fd(pid, (int)n, &opath);
	if (fd < 0)
		return errno == ENOENT ? -SBX_META_ERR_NO_DESCRIPTOR : -errno;
	if (opath) {
		close(fd);
		return -SBX_META_ERR_PATH_DESCRIPTOR;
	}
	return fd;
}

// read_mem copies size bytes at addr in pid's memory into buf; 0 or an
// errno.
static int read_mem(pid_t pid, unsigned long long addr, void *buf, size_t size) {
	ssize_t n = sbx_peek(pid, addr, buf, size);
	return n == (ssize_t)size ? 0 : (n < 0 ? errno : EFAULT);
}

_Static_assert(sizeof(struct fsxattr) == SBX_META_FSXATTR_SIZE, "struct fsxattr is metarules.FsxattrSize");

// A metadata call, once decoded: what it changes, on which object.
enum meta_op { META_CHMOD, META_CHOWN, META_UTIMES, META_SETXATTR, META_REMOVEXATTR, META_FLAGS, META_FSXATTR };

struct meta_call {
	enum meta_op op;
	int fd;                      // the object (opened here, O_PATH, or the command's descriptor taken), or -errno
	unsigned mode;               // chmod
	unsigned long long uid, gid; // chown
	int has_times;
	struct timespec times[2];           // utimes
	char name[SBX_META_XATTR_NAME_MAX]; // xattrs
	unsigned long long value, size, xflags;
	int value_err;      // setxattr: reading the value, 0 or an errno
	int flags;          // FS_IOC_SETFLAGS
	struct fsxattr fsx; // FS_IOC_FSSETXATTR
	// setxattr's value, read in decode; last, and not cleared per call.
	char value_buf[SBX_META_XATTR_SIZE_MAX];
};

// decode reads the call's arguments, and the strings and times they point
// to, and opens its object; 0 or an errno.
static int decode(const struct seccomp_notif *req, struct meta_call *c) {
	const unsigned long long *a = req->data.args;
	pid_t pid = (pid_t)req->pid;
	const int nofollow = AT_SYMLINK_NOFOLLOW;
	unsigned long long name = 0;
	memset(c, 0, offsetof(struct meta_call, value_buf));
	switch (req->data.nr) {
#ifdef SYS_chmod
	case SYS_chmod:
		c->op = META_CHMOD, c->fd = target(pid, AT_FDCWD, a[0], 0), c->mode = (unsigned)a[1];
		break;
#endif
	case SYS_fchmodat:
		c->op = META_CHMOD, c->fd = target(pid, (int)a[0], a[1], 0), c->mode = (unsigned)a[2];
		break;
	case SYS_fchmodat2:
		if (a[3] & ~(unsigned long long)SBX_META_FCHMODAT_FLAGS)
			return SBX_META_ERR_FLAGS;
		c->op = META_CHMOD, c->fd = target(pid, (int)a[0], a[1], (int)a[3]), c->mode = (unsigned)a[2];
		break;
	case SYS_fchmod:
		c->op = META_CHMOD, c->fd = proc_fd(pid, a[0]), c->mode = (unsigned)a[1];
		break;
#ifdef SYS_chown
	case SYS_chown:
	case SYS_lchown:
		c->op = META_CHOWN, c->fd = target(pid, AT_FDCWD, a[0], req->data.nr == SYS_lchown ? nofollow : 0);
		c->uid = a[1], c->gid = a[2];
		break;
#endif
	case SYS_fchown:
		c->op = META_CHOWN, c->fd = proc_fd(pid, a[0]), c->uid = a[1], c->gid = a[2];
		break;
	case SYS_fchownat:
		if (a[4] & ~(unsigned long long)SBX_META_FCHOWNAT_FLAGS)
			return SBX_META_ERR_FLAGS;
		c->op = META_CHOWN, c->fd = target(pid, (int)a[0], a[1], (int)a[4]), c->uid = a[2], c->gid = a[3];
		break;
	case SYS_utimensat:
		if (a[3] & ~(unsigned long long)SBX_META_UTIMENSAT_FLAGS)
			return SBX_META_ERR_FLAGS;
		c->op = META_UTIMES;
		c->fd = a[1] == 0 ? proc_fd(pid, a[0]) : target(pid, (int)a[0], a[1], (int)a[3]);
		if (a[2] != 0) {
			int e = read_mem(pid, a[2], c->times, sizeof c->times);
			if (e != 0)
				return e;
			c->has_times = 1;
		}
		break;
#ifdef SYS_utimes
	case SYS_utimes:
	case SYS_futimesat: {
		int at = req->data.nr == SYS_futimesat;
		c->op = META_UTIMES, c->fd = target(pid, at ? (int)a[0] : AT_FDCWD, a[at], 0);
		if (a[at + 1] != 0) {
			struct timeval tv[2];
			int e = read_mem(pid, a[at + 1], tv, sizeof tv);
			if (e != 0)
				return e;
			for (int i = 0; i < 2; i++)
				c->times[i] = (struct timespec){tv[i].tv_sec, tv[i].tv_usec * 1000};
			c->has_times = 1;
		}
		break;
	}
	case SYS_utime:
		c->op = META_UTIMES, c->fd = target(pid, AT_FDCWD, a[0], 0);
		if (a[1] != 0) {
			long ut[2]; // struct utimbuf: actime, modtime
			int e = read_mem(pid, a[1], ut, sizeof ut);
			if (e != 0)
				return e;
			c->times[0] = (struct timespec){ut[0], 0};
			c->times[1] = (struct timespec){ut[1], 0};
			c->has_times = 1;
		}
		break;
#endif
	case SYS_setxattr:
	case SYS_lsetxattr:
		c->op = META_SETXATTR, c->fd = target(pid, AT_FDCWD, a[0], req->data.nr == SYS_lsetxattr ? nofollow : 0);
		name = a[1], c->value = a[2], c->size = a[3], c->xflags = a[4];
		break;
	case SYS_fsetxattr:
		c->op = META_SETXATTR, c->fd = proc_fd(pid, a[0]);
		name = a[1], c->value = a[2], c->size = a[3], c->xflags = a[4];
		break;
	case SYS_removexattr:
	case SYS_lremovexattr:
		c->op = META_REMOVEXATTR, c->fd = target(pid, AT_FDCWD, a[0], req->data.nr == SYS_lremovexattr ? nofollow : 0);
		name = a[1];
		break;
	case SYS_fremovexattr:
		c->op = META_REMOVEXATTR, c->fd = proc_fd(pid, a[0]), name = a[1];
		break;
	case SYS_ioctl: {
		// Only the inode-flag requests reach here (seccompfilter's
		// notifiedIoctls), compared on their low 32 bits as the kernel
		// reads them.
		unsigned req32 = (unsigned)a[1];
		int e;
		if (req32 == SBX_META_IOC_FSSETXATTR) {
			c->op = META_FSXATTR;
			e = read_mem(pid, a[2], &c->fsx, sizeof c->fsx);
		} else if (req32 == SBX_META_IOC_SETFLAGS || req32 == SBX_META_IOC32_SETFLAGS) {
			c->op = META_FLAGS;
			e = read_mem(pid, a[2], &c->flags, sizeof c->flags);
		} else {
			return SBX_META_ERR_FLAGS_OBJECT;
		}
		if (e != 0)
			return e;
		c->fd = proc_fd(pid, a[0]);
		break;
	}
	default:
		return SBX_META_ERR_UNKNOWN;
	}
	if (c->fd < 0)
		return -c->fd;
	if (c->op == META_SETXATTR || c->op == META_REMOVEXATTR) {
		int e = sbx_read_path(pid, name, c->name, sizeof c->name);
		if (e != 0)
			return e == ENAMETOOLONG ? SBX_META_ERR_XATTR_NAME : e;
	}
	// The value too is read now, before the notification is checked live
	// (a read after that could reach another process with the same pid);
	// its fault is answered where the call would meet it (perform).
	if (c->op == META_SETXATTR && c->size > 0 && c->size <= SBX_META_XATTR_SIZE_MAX)
		c->value_err = read_mem(pid, c->value, c->value_buf, (size_t)c->size);
	return 0;
}

// No fchmodat2 here (before Linux 6.6, or refused by a container's
// seccomp profile): chmod goes through /proc/self/fd/N.
static int no_fchmodat2;

// chmod_fd sets the mode of the object fd is (self: /proc/self/fd/N):
// fchmodat2 with AT_EMPTY_PATH, which needs no second lookup of a path;
// else through self, which follows the /proc link to the same object.
// fchmod would not do: it refuses an O_PATH descriptor. 0 or an errno.
static int chmod_fd(int fd, const char *self, unsigned mode) {
	if (!no_fchmodat2) {
		if (syscall(SYS_fchmodat2, fd, "", mode, AT_EMPTY_PATH) == 0)
			return 0;
		if (errno != ENOSYS && errno != EINVAL && errno != EPERM)
			return errno;
		if (errno == ENOSYS)
			no_fchmodat2 = 1;
		// EINVAL, EPERM: a kernel or a profile that refuses the flag, or
		// the command's own refusal, which the path gives again.
	}
	return fchmodat(AT_FDCWD, self, mode, 0) < 0 ? errno : 0;
}

// perform makes the call on the object c->fd is (self: /proc/self/fd/N);
// 0 or an errno.
static int perform(struct meta_call *c, const char *self, const struct stat *st) {
	switch (c->op) {
	case META_CHMOD:
		if (c->mode & (S_ISUID | S_ISGID))
			return SBX_META_ERR_SETID; // as the namespaces runner's filter refuses them
		if (S_ISLNK(st->st_mode))
			return SBX_META_ERR_LINK_MODE; // a symlink's own mode, as fchmodat2 answers
		return chmod_fd(c->fd, self, c->mode & 07777);
	case META_CHOWN:
		return fchownat(c->fd, "", (uid_t)c->uid, (gid_t)c->gid, AT_EMPTY_PATH) < 0 ? errno : 0;
	case META_UTIMES: // on the descriptor itself: a symlink's own times too, as cp -a and rsync -a set them
		return utimensat(c->fd, "", c->has_times ? c->times : NULL, AT_EMPTY_PATH) < 0 ? errno : 0;
	case META_SETXATTR: {
		if (S_ISLNK(st->st_mode))
			return SBX_META_ERR_LINK_XATTR; // user.* is refused on symlinks; the rest needs capabilities
		if (c->size > SBX_META_XATTR_SIZE_MAX)
			return SBX_META_ERR_XATTR_SIZE;
		if (c->value_err != 0)
			return c->value_err;
		return setxattr(self, c->name, c->value_buf, (size_t)c->size, (int)c->xflags) < 0 ? errno : 0;
	}
	case META_REMOVEXATTR:
		if (S_ISLNK(st->st_mode))
			return SBX_META_ERR_LINK_XATTR;
		return removexattr(self, c->name) < 0 ? errno : 0;
	case META_FLAGS:
	case META_FSXATTR: {
		if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
			return SBX_META_ERR_FLAGS_OBJECT; // flags live on files and directories only
		// An ioctl needs an open file: the object reopened read-only,
		// which neither blocks nor makes a terminal ours.
		int f = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (f < 0)
			return errno;
		int r = c->op == META_FLAGS ? ioctl(f, SBX_META_IOC_SETFLAGS, &c->flags) : ioctl(f, SBX_META_IOC_FSSETXATTR, &c->fsx);
		int e = r < 0 ? errno : 0;
		close(f);
		return e;
	}
	}
	return SBX_META_ERR_UNKNOWN;
}

// meta_op_word is what a refusal record says was tried.
static const char *meta_op_word(enum meta_op op) {
	switch (op) {
	case META_CHMOD:
		return SBX_REFUSAL_OP_CHMOD;
	case META_CHOWN:
		return SBX_REFUSAL_OP_CHOWN;
	case META_UTIMES:
		return SBX_REFUSAL_OP_TIMES;
	case META_SETXATTR:
	case META_REMOVEXATTR:
		return SBX_REFUSAL_OP_XATTR;
	case META_FLAGS:
	case META_FSXATTR:
		break;
	}
	return SBX_REFUSAL_OP_FLAGS;
}

// meta_for makes one metadata call for the command: decoded, its object
// checked, then made; 0 or an errno.
static int meta_for(int listener, const struct seccomp_notif *req) {
	static struct meta_call c;
	int err = decode(req, &c);
	if (err != 0) {
		if (c.fd > 0)
			close(c.fd);
		return err;
	}
	char self[64], where[4096];
	snprintf(self, sizeof self, "/proc/self/fd/%d", c.fd);
	struct stat st;
	ssize_t n = readlink(self, where, sizeof where - 1);
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0) {
		err = SBX_META_ERR_GONE; // the command is gone from the call: the answer goes nowhere
	} else if (n <= 0 || n >= (ssize_t)sizeof where - 1) {
		err = SBX_META_ERR_OUTSIDE;
	} else if (fstat(c.fd, &st) < 0) {
		err = errno;
	} else {
		where[n] = 0;
		if (where[0] != '/' || strstr(where, " (deleted)") != NULL)
			err = SBX_META_ERR_OUTSIDE;
		else if (!beneath(where)) {
			err = SBX_META_ERR_OUTSIDE;
			sbx_refused(meta_op_word(c.op), SBX_REFUSAL_RULE_OUTSIDE, where);
		} else
			err = perform(&c, self, &st);
	}
	close(c.fd);
	return err;
}

void sbx_meta_answer(int listener) {
	static union {
		struct seccomp_notif n;
		char room[SBX_META_NOTIF_ROOM];
	} req;
	static union {
		struct seccomp_notif_resp r;
		char room[SBX_META_NOTIF_ROOM];
	} resp;
	memset(&req, 0, sizeof req);
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req.n) < 0)
		return; // EINTR, or the command died before its call was read
	memset(&resp, 0, sizeof resp);
	resp.r.id = req.n.id;
	int err = meta_for(listener, &req.n);
	resp.r.error = -err;
	resp.r.val = 0;
	ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp.r);
}

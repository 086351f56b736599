// The metadata calls landlock-run's supervisor makes for the command.
//
// Landlock governs no file metadata, so under the landlock runner the
// command's seccomp filter hands the chmod family (chmod, fchmod, fchmodat,
// fchmodat2: seccompfilter.Notified) to the supervisor as user
// notifications, and the supervisor answers each one by making the call
// itself:
//
//   - it opens the object the call names the way the kernel would for the
//     command (the command's working directory or directory descriptor,
//     through /proc/PID, the path read from the command's memory into the
//     supervisor's own buffer, symlinks followed unless the call says
//     AT_SYMLINK_NOFOLLOW), as an O_PATH descriptor of its own;
//   - it checks that the notification is still live (the command is still
//     blocked in that call, so the pid was not reused meanwhile);
//   - it refuses the setuid and setgid bits (EPERM, as the namespaces
//     runner's filter does), and any object that is not beneath a writable
//     root or the wrap's temp dir (EACCES, as Landlock refuses a write);
//   - it changes the mode through that descriptor, with no capability
//     (the supervisor drops all of them at its start), so the kernel's own
//     owner check is the command's.
//
// The supervisor acts on the descriptor it opened and checked, never on a
// path again, and never lets the kernel continue the command's own call:
// what the command changes in its memory or in the tree after the check
// reaches nothing.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "metadata_linux.h"
#include "ns_linux.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

// The writable roots and the temp dir, from the launcher's arguments.
static char **meta_roots;
static int meta_nroots;

void sbx_meta_roots(int argc, char **argv) {
	static struct spec s;
	char err[256];
	if (argc < 2 || sbx_decode(argc - 1, argv + 1, &s, err, sizeof err) < 0)
		return; // no roots: every call is refused (the launcher fails anyway)
	int n = s.nwritable + (s.tempdir != NULL);
	meta_roots = calloc((size_t)n + 1, sizeof *meta_roots);
	if (meta_roots == NULL)
		return;
	for (int i = 0; i < s.nwritable; i++)
		meta_roots[meta_nroots++] = s.writable[i];
	if (s.tempdir != NULL)
		meta_roots[meta_nroots++] = s.tempdir;
}

// beneath reports whether path is one of the roots or below one.
static int beneath(const char *path) {
	for (int i = 0; i < meta_nroots; i++) {
		size_t n = strlen(meta_roots[i]);
		if (strncmp(path, meta_roots[i], n) == 0 && (path[n] == 0 || path[n] == '/' || (n == 1 && meta_roots[i][0] == '/')))
			return 1;
	}
	return 0;
}

// read_path copies the NUL-terminated string at addr in pid's memory into
// buf (PATH_MAX bytes), a page at a time (the string may end just before
// an unmapped page). 0 or an errno.
static int read_path(pid_t pid, unsigned long long addr, char *buf, size_t size) {
	size_t got = 0;
	while (got < size) {
		size_t page = 4096 - ((addr + got) & 4095);
		size_t want = page < size - got ? page : size - got;
		struct iovec local = {buf + got, want};
		struct iovec remote = {(void *)(uintptr_t)(addr + got), want};
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return n < 0 ? errno : EFAULT;
		if (memchr(buf + got, 0, (size_t)n) != NULL)
			return 0;
		got += (size_t)n;
	}
	return ENAMETOOLONG;
}

// open_proc opens /proc/PID/WHAT (cwd, fd/N) as an O_PATH descriptor: the
// object the command's own descriptor or directory is.
static int open_proc(pid_t pid, const char *what, int flags) {
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/%s", (int)pid, what);
	return open(p, O_PATH | O_CLOEXEC | flags);
}

// target opens what a chmod-family call of the command names; it returns
// the descriptor, or -errno.
static int target(pid_t pid, int dirfd, unsigned long long pathaddr, int flags) {
	static char path[4096];
	int e = read_path(pid, pathaddr, path, sizeof path);
	if (e != 0)
		return -e;
	int base = AT_FDCWD;
	if (path[0] != '/') {
		char what[32];
		if (dirfd == AT_FDCWD)
			snprintf(what, sizeof what, "cwd");
		else
			snprintf(what, sizeof what, "fd/%d", dirfd);
		base = open_proc(pid, what, 0);
		if (base < 0)
			return errno == ENOENT ? -EBADF : -errno;
	}
	int fd;
	if (path[0] == 0) {
		if (!(flags & AT_EMPTY_PATH)) {
			if (base >= 0)
				close(base);
			return -ENOENT;
		}
		fd = base >= 0 ? dup(base) : -1;
	} else {
		fd = openat(base, path, O_PATH | O_CLOEXEC | ((flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0));
	}
	int saved = errno;
	if (base >= 0)
		close(base);
	return fd < 0 ? -saved : fd;
}

// chmod_for performs one chmod-family call for the command; 0 or an errno.
static int chmod_for(int listener, const struct seccomp_notif *req) {
	const unsigned long long *a = req->data.args;
	pid_t pid = (pid_t)req->pid;
	int fd;
	unsigned mode;
	switch (req->data.nr) {
#ifdef SYS_chmod
	case SYS_chmod:
		fd = target(pid, AT_FDCWD, a[0], 0);
		mode = (unsigned)a[1];
		break;
#endif
	case SYS_fchmodat:
		fd = target(pid, (int)a[0], a[1], 0);
		mode = (unsigned)a[2];
		break;
	case SYS_fchmodat2:
		if (a[3] & ~(unsigned long long)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return EINVAL;
		fd = target(pid, (int)a[0], a[1], (int)a[3]);
		mode = (unsigned)a[2];
		break;
	case SYS_fchmod: {
		char what[32];
		snprintf(what, sizeof what, "fd/%d", (int)a[0]);
		fd = open_proc(pid, what, 0);
		if (fd < 0)
			fd = errno == ENOENT ? -EBADF : -errno;
		mode = (unsigned)a[1];
		break;
	}
	default:
		return ENOSYS;
	}
	if (fd < 0)
		return -fd;
	int err = 0;
	char self[64], where[4096];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	struct stat st;
	ssize_t n = readlink(self, where, sizeof where - 1);
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0) {
		err = ENOENT; // the command is gone from the call: the answer goes nowhere
	} else if (mode & (S_ISUID | S_ISGID)) {
		err = EPERM;
	} else if (n <= 0 || n >= (ssize_t)sizeof where - 1) {
		err = EACCES;
	} else if (fstat(fd, &st) < 0) {
		err = errno;
	} else {
		where[n] = 0;
		if (where[0] != '/' || strstr(where, " (deleted)") != NULL || !beneath(where))
			err = EACCES;
		else if (S_ISLNK(st.st_mode))
			err = EOPNOTSUPP; // a symlink's own mode, as fchmodat2 answers
		else if (fchmodat(AT_FDCWD, self, mode & 07777, 0) < 0)
			err = errno;
	}
	close(fd);
	return err;
}

void sbx_meta_answer(int listener) {
	static union {
		struct seccomp_notif n;
		char room[1024];
	} req;
	static union {
		struct seccomp_notif_resp r;
		char room[1024];
	} resp;
	memset(&req, 0, sizeof req);
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req.n) < 0)
		return; // EINTR, or the command died before its call was read
	memset(&resp, 0, sizeof resp);
	resp.r.id = req.n.id;
	int err = chmod_for(listener, &req.n);
	resp.r.error = -err;
	resp.r.val = 0;
	ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp.r);
}

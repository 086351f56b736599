// Shared by the C starts of both Linux launchers: see shared_linux.h.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <signal.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shared_linux.h"

const char *sbx_name = SBX_NS_RUN;
char sbx_token[SBX_TOKEN_LEN + 1];

void sbx_fatal(const char *token, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	sbx_vfatal(sbx_name, token, fmt, ap);
}

void sbx_must(int rc, const char *what, const char *path) {
	if (rc < 0)
		sbx_fatal(sbx_token, "%s %s: %s", what, path ? path : "", strerror(errno));
}

char *sbx_xstrdup(const char *p) {
	char *c = strdup(p);
	if (!c)
		sbx_fatal(sbx_token, "out of memory");
	return c;
}

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
struct sbx_open_how {
	uint64_t flags, mode, resolve;
};
#define SBX_RESOLVE_NO_MAGICLINKS 0x02
#define SBX_RESOLVE_NO_SYMLINKS 0x04
#define SBX_RESOLVE_BENEATH 0x08

int sbx_open_strict(int dirfd, const char *path, int flags, int beneath) {
	struct sbx_open_how how = {.flags = O_PATH | O_CLOEXEC | flags,
	                           .resolve =
	                                   SBX_RESOLVE_NO_SYMLINKS | SBX_RESOLVE_NO_MAGICLINKS | (beneath ? SBX_RESOLVE_BENEATH : 0)};
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

const char *sbx_swapped_or(int e) { return e == ELOOP ? "a component is a symlink now, it was not at wrap time" : strerror(e); }

void sbx_send_fd(int sock, int fd, const char *what) {
	char b = 'l';
	struct iovec iov = {&b, 1};
	union {
		struct cmsghdr h;
		char room[CMSG_SPACE(sizeof(int))];
	} cm;
	memset(&cm, 0, sizeof cm);
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &cm, .msg_controllen = sizeof cm};
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET, h->cmsg_type = SCM_RIGHTS, h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(int));
	if (sendmsg(sock, &m, MSG_NOSIGNAL) != 1)
		sbx_fatal(sbx_token, "%s: %s", what, strerror(errno));
	close(fd);
	close(sock);
}

int sbx_valid_token(const char *t) {
	if (t == NULL || strlen(t) != SBX_TOKEN_LEN)
		return 0;
	for (const char *p = t; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}

void sbx_vfatal(const char *name, const char *token, const char *fmt, va_list ap) {
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	// One line, whatever a path in the reason holds (as vocab.FatalLine).
	for (char *c = msg; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	if (sbx_valid_token(token))
		fprintf(stderr, "%s: fatal: [%s] %s\n", name, token, msg);
	else
		fprintf(stderr, "%s: fatal: %s\n", name, msg);
	_exit(SBX_FATAL_EXIT);
}

static const int passed[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

void sbx_pass_signals(void (*handler)(int, siginfo_t *, void *)) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++)
		sigaction(passed[i], &sa, NULL);
}

void sbx_passed_signals(sigset_t *set) {
	for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++)
		sigaddset(set, passed[i]);
}

void sbx_die_of(int sig) {
	struct rlimit none = {0, 0};
	setrlimit(RLIMIT_CORE, &none);
	prctl(PR_SET_DUMPABLE, 0);
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

int sbx_within(const char *p, const char *root) {
	size_t n = strlen(root);
	if (!strcmp(root, "/"))
		return 1;
	return !strncmp(p, root, n) && (p[n] == 0 || p[n] == '/');
}

int sbx_die_with_spawner(void) {
	pid_t spawner = getppid();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return -1;
	if (getppid() != spawner)
		_exit(128 + SIGKILL); // the spawner died before the prctl took
	return 0;
}

// peek copies size bytes at addr in pid's memory into buf, and returns how
// many it copied, or -1 with errno. process_vm_readv first; where a
// container's seccomp profile refuses that call (Docker's default allows
// it only with CAP_SYS_PTRACE), the same read through /proc/PID/mem, which
// the kernel allows on the same ptrace check.
static int peek_by_file;
ssize_t sbx_peek(pid_t pid, unsigned long long addr, void *buf, size_t size) {
	if (!peek_by_file) {
		struct iovec local = {buf, size};
		struct iovec remote = {(void *)(uintptr_t)addr, size};
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n >= 0 || (errno != EPERM && errno != ENOSYS))
			return n;
		peek_by_file = 1;
	}
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/mem", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, buf, size, (off_t)addr);
	int saved = errno;
	close(fd);
	errno = saved;
	return n;
}

// read_path copies the NUL-terminated string at addr in pid's memory into
// buf (PATH_MAX bytes), a page at a time (the string may end just before
// an unmapped page). 0 or an errno.
int sbx_read_path(pid_t pid, unsigned long long addr, char *buf, size_t size) {
	size_t got = 0;
	while (got < size) {
		size_t page = 4096 - ((addr + got) & 4095);
		size_t want = page < size - got ? page : size - got;
		ssize_t n = sbx_peek(pid, addr + got, buf + got, want);
		if (n <= 0)
			return n < 0 ? errno : EFAULT;
		if (memchr(buf + got, 0, (size_t)n) != NULL)
			return 0;
		got += (size_t)n;
	}
	return ENAMETOOLONG;
}

void sbx_join_cgroup(const char *token, const char *dir) {
	char path[4096];
	if (snprintf(path, sizeof path, "%s/cgroup.procs", dir) >= (int)sizeof path)
		sbx_fatal(token, "join the cgroup %s: path too long", dir);
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || write(fd, "0\n", 2) != 2)
		sbx_fatal(token, "join the cgroup %s (the limits set there would not hold): %s", dir, strerror(errno));
	close(fd);
}

int sbx_refusals_fd = -1;

void sbx_take_refusals_fd(const char *token) {
	const char *v = getenv(SBX_REFUSALS_ENV);
	if (v == NULL)
		return;
	// "FD:INODE" (vocab.RefusalsEnv): anything else, or another file at
	// FD than that pipe, and nothing is recorded; the launch goes on.
	char *end, *iend;
	errno = 0;
	long fd = strtol(v, &end, 10);
	unsigned long long ino = *end == ':' ? strtoull(end + 1, &iend, 10) : 0;
	struct stat st;
	int ok = errno == 0 && end != v && *end == ':' && end[1] >= '0' && end[1] <= '9' && *iend == 0 && fd > 2 && fd <= 65535 &&
	         fstat((int)fd, &st) == 0 && S_ISFIFO(st.st_mode) && (unsigned long long)st.st_ino == ino;
	unsetenv(SBX_REFUSALS_ENV);
	if (!ok)
		return;
	int fl = fcntl((int)fd, F_GETFL);
	if (fl < 0 || fcntl((int)fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0)
		sbx_fatal(token, "%s: %s", SBX_REFUSALS_ENV, strerror(errno));
	sbx_refusals_fd = (int)fd;
}

// What the writer keeps (vocab.RefusalRecorder): a hash of each record,
// and how many refusals it dropped.
static unsigned long long rf_seen[SBX_MAX_REFUSAL_RECORDS];
static int rf_n;
static unsigned long rf_dropped;

// rf_hash is vocab.RefusalHash: FNV-1a of op, a NUL and path.
static unsigned long long rf_hash(const char *op, const char *path) {
	unsigned long long h = 14695981039346656037ULL;
	for (const unsigned char *p = (const unsigned char *)op;; p++) {
		h = (h ^ *p) * 1099511628211ULL; // the NUL too
		if (*p == 0)
			break;
	}
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h;
}

static void rf_count(void) {
	char b[32];
	int n = snprintf(b, sizeof b, "more %lu\n", rf_dropped);
	if (write(sbx_refusals_fd, b, (size_t)n) < 0) {
		// No room: a later count line says it.
	}
}

static void rf_drop(void) {
	rf_dropped++;
	if ((rf_dropped & (rf_dropped - 1)) == 0)
		rf_count();
}

void sbx_refused(const char *op, const char *rule, const char *path) {
	if (sbx_refusals_fd < 0)
		return;
	unsigned long long h = rf_hash(op, path);
	for (int i = 0; i < rf_n; i++)
		if (rf_seen[i] == h)
			return;
	if (rf_n >= SBX_MAX_REFUSAL_RECORDS) {
		rf_drop();
		return;
	}
	rf_seen[rf_n++] = h;
	static char line[SBX_MAX_REFUSAL_LINE];
	static const char hex[] = "0123456789ABCDEF";
	int head = snprintf(line, sizeof line, "%s %s ", op, rule);
	// The path's room: the line less its head, " +" and the newline.
	size_t len = (size_t)head, room = SBX_MAX_REFUSAL_LINE - (size_t)head - 3;
	int cut = 0;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		int esc = *p <= ' ' || *p > '~' || *p == '%';
		if (len - (size_t)head + (esc ? 3 : 1) > room) {
			cut = 1;
			break;
		}
		if (esc) {
			line[len++] = '%';
			line[len++] = hex[*p >> 4];
			line[len++] = hex[*p & 15];
		} else {
			line[len++] = (char)*p;
		}
	}
	if (cut) {
		line[len++] = ' ';
		line[len++] = '+';
	}
	line[len++] = '\n';
	// At most SBX_MAX_REFUSAL_LINE bytes, under PIPE_BUF: written whole or
	// not at all.
	if (write(sbx_refusals_fd, line, len) != (ssize_t)len)
		rf_drop();
}

void sbx_refusals_reset(int fd) {
	sbx_refusals_fd = fd;
	rf_n = 0;
	rf_dropped = 0;
}

void sbx_refusals_end(void) {
	if (sbx_refusals_fd >= 0 && rf_dropped != 0 && (rf_dropped & (rf_dropped - 1)) != 0)
		rf_count();
}

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS _IOW('!', 4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

void sbx_sync_wakeup(int listener) { ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, (__u64)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP); }

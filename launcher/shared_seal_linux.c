// The last steps both C launchers take before the command: see
// shared_seal_linux.h.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shared_seal_linux.h"
#include "shared_linux.h"

void sbx_drop_capabilities(int bounding_must) {
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		sbx_fatal(sbx_token, "clear ambient capabilities: %s", strerror(errno));
	for (int c = 0; prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++) {
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == 0)
			continue;
		if (errno == EPERM && !bounding_must)
			break; // no CAP_SETPCAP: emptying the permitted set below is what counts
		sbx_fatal(sbx_token, "drop capability %d from the bounding set: %s", c, strerror(errno));
	}
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct none[2];
	memset(none, 0, sizeof none);
	sbx_must(syscall(SYS_capset, &hdr, none), "capset", NULL);
}

void sbx_close_extra_fds(void) {
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
	if (syscall(SYS_close_range, 3, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */) == 0)
		return;
	for (int fd = 3; fd < 65536; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
}

#define SBX_SECCOMP_WAIT_KILLABLE_RECV (1U << 5)

static int hexval(char c) {
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int sbx_load_seccomp(const char *program, int listener, int killable) {
	if (!program)
		sbx_fatal(sbx_token, "no seccomp program in the arguments (-seccomp)");
	size_t n = strlen(program);
	unsigned char *prog = malloc(n / 2);
	if (!prog)
		sbx_fatal(sbx_token, "seccomp: out of memory");
	for (size_t i = 0; i < n / 2; i++)
		prog[i] = (unsigned char)(hexval(program[2 * i]) << 4 | hexval(program[2 * i + 1]));
	struct sock_fprog fprog = {.len = (unsigned short)(n / 2 / sizeof(struct sock_filter)), .filter = (struct sock_filter *)prog};
	if (n / 2 / sizeof(struct sock_filter) > BPF_MAXINSNS)
		sbx_fatal(sbx_token, "seccomp program too long");
	sbx_must(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)", NULL);
	unsigned flags = listener ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
	if (listener && killable)
		flags |= SBX_SECCOMP_WAIT_KILLABLE_RECV;
	int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
	if (fd < 0 && errno == EINVAL && listener && killable)
		fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
	sbx_must(fd, "seccomp: load", NULL);
	free(prog);
	return listener ? fd : -1;
}

void sbx_probe(const struct spec *s, int metadata) {
	if (s->nwritable != 1)
		sbx_fatal(sbx_token, "probe: probe needs exactly one writable root");
	char *ok, *denied;
	if (asprintf(&ok, "%s/probe-allowed", s->writable[0]) < 0)
		sbx_fatal(sbx_token, "out of memory");
	int fd = open(ok, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		sbx_fatal(sbx_token, "probe: allowed write failed: %s", strerror(errno));
	close(fd);
	// A metadata change goes through landlock-run's supervisor (seccomp's
	// user notification, the command's memory read by the supervisor):
	// where that path is broken, git init and venvs fail, and the runner
	// must not pass its probe.
	struct stat st;
	if (metadata && chmod(ok, 0640) < 0)
		sbx_fatal(sbx_token, "probe: chmod in the granted directory failed (the metadata supervisor): %s", strerror(errno));
	if (metadata && (stat(ok, &st) < 0 || (st.st_mode & 07777) != 0640))
		sbx_fatal(sbx_token, "probe: chmod in the granted directory did not take");
	if (s->nro > 0) {
		if (asprintf(&denied, "%s/probe-denied", s->ro[0]) < 0)
			sbx_fatal(sbx_token, "out of memory");
	} else {
		char *parent = sbx_xstrdup(s->writable[0]);
		*strrchr(parent, '/') = 0;
		if (asprintf(&denied, "%s/probe-denied", parent) < 0)
			sbx_fatal(sbx_token, "out of memory");
	}
	fd = open(denied, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0)
		sbx_fatal(sbx_token, "probe: write to %s was not denied", denied);
	if (errno != EACCES && errno != EROFS)
		sbx_fatal(sbx_token, "probe: write to %s failed with %s, want EACCES or EROFS", denied, strerror(errno));
	printf("%s: probe ok [%s]\n", sbx_name, sbx_token);
	fflush(stdout);
	_exit(0);
}

// sbx_leave_terminal: a command handed no terminal could otherwise open
// /dev/tty and read what the user types to the caller's terminal (a fake
// password prompt, keystrokes after the caller exited); the Go launcher
// does the same (landlock_terminal_linux.go). TIOCNOTTY takes this process off the
// terminal and keeps its process group and session, so the terminal's
// Ctrl-C and a consumer's kill of the group still reach the command. A
// session leader (landlock-run spawned with Setsid and a controlling
// terminal) gives the terminal up for the whole session, and the kernel
// sends the foreground group, this process included, SIGHUP: ignored
// while it does (sbx_reset_signals restores it). With a terminal on any of
// the three, nothing changes: job control, Ctrl-C, editors and pagers
// keep working.
void sbx_leave_terminal(void) {
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd))
			return;
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENXIO || errno == ENOENT)
			return; // no controlling terminal to leave
		sbx_fatal(sbx_token, "open the controlling terminal to leave it: %s", strerror(errno));
	}
	signal(SIGHUP, SIG_IGN);
	if (ioctl(fd, TIOCNOTTY) < 0)
		sbx_fatal(sbx_token, "leave the controlling terminal (TIOCNOTTY): %s", strerror(errno));
	close(fd);
}

// sbx_reset_signals gives the command clean signal state: nothing blocked,
// every disposition the default (a consumer's blocked or ignored signals
// would otherwise reach it, as exec keeps both).
void sbx_reset_signals(void) {
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
}

// program_name is the name the command's own exec failures are told under:
// the running executable's, which is the consumer's (sandbox-run for the
// CLI), since the launcher is that binary re-executed; the launcher's
// internal name only when the executable cannot be read.
static const char *program_name(void) {
	static char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return sbx_name;
	buf[n] = 0;
	char *deleted = strstr(buf, " (deleted)");
	if (deleted && deleted[strlen(" (deleted)")] == 0)
		*deleted = 0;
	char *base = strrchr(buf, '/');
	return base && base[1] ? base + 1 : sbx_name;
}

// sbx_exec_command looks cmd up as Go's exec.LookPath does (PATH only, an empty
// element meaning the current directory, the first regular executable
// file) and execs it: 127 when it is not found, 126 when it cannot run.
void sbx_exec_command(char **cmd) {
	const char *name = cmd[0];
	if (strchr(name, '/')) {
		execve(name, cmd, environ);
	} else {
		const char *path = getenv("PATH");
		char *dirs = sbx_xstrdup(path ? path : "");
		int found = 0;
		for (char *dir = dirs, *next; path && dir; dir = next) {
			next = strchr(dir, ':');
			if (next)
				*next++ = 0;
			char *cand;
			if (asprintf(&cand, "%s/%s", *dir ? dir : ".", name) < 0)
				sbx_fatal(sbx_token, "out of memory");
			struct stat st;
			if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111)) {
				found = 1;
				execve(cand, cmd, environ);
				break;
			}
			free(cand);
		}
		if (!found) {
			fprintf(stderr, "%s: %s: command not found\n", program_name(), name);
			_exit(SBX_EXIT_NOT_FOUND);
		}
	}
	int e = errno;
	fprintf(stderr, "%s: %s: %s\n", program_name(), name, strerror(e));
	_exit(e == ENOENT || e == ENOTDIR ? SBX_EXIT_NOT_FOUND : SBX_EXIT_NOT_EXECUTABLE);
}

// sbx_release_env gives the command back the variables the provider held from
// the launcher's start: every "SANDBOX_LOCAL_ENV_NAME=value" becomes
// "NAME=value" (vocab.HeldEnvPrefix, vocab.ReleaseEnv; the list of what is
// held is the provider's alone). In place: the entry points past the prefix.
void sbx_release_env(void) {
	const size_t n = strlen(SBX_HELD_ENV_PREFIX);
	for (char **e = environ; *e; e++)
		if (strncmp(*e, SBX_HELD_ENV_PREFIX, n) == 0)
			*e += n;
	// A name given twice reaches the command once, its first value (as Go's
	// os.Environ and glibc's getenv read it): no later entry shadows or
	// unshadows what the first says.
	char **out = environ;
	for (char **e = environ; *e; e++) {
		size_t key = strcspn(*e, "=");
		int seen = 0;
		for (char **k = environ; k < out && !seen; k++)
			seen = strncmp(*k, *e, key + 1) == 0;
		if (!seen)
			*out++ = *e;
	}
	*out = NULL;
}

void sbx_set_limits(const struct spec *s) {
	if (s->nproc > 0) {
		struct rlimit r = {(rlim_t)s->nproc, (rlim_t)s->nproc};
		if (setrlimit(RLIMIT_NPROC, &r) < 0)
			sbx_fatal(sbx_token, "set the process limit (RLIMIT_NPROC %d): %s", s->nproc, strerror(errno));
	}
	if (s->as > 0) {
		struct rlimit r = {(rlim_t)s->as, (rlim_t)s->as};
		if (setrlimit(RLIMIT_AS, &r) < 0)
			sbx_fatal(sbx_token, "set the memory limit (RLIMIT_AS %lld): %s", s->as, strerror(errno));
	}
}

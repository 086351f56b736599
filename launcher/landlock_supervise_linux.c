// The supervised start of landlock-run, from its C constructor.
//
// Under the landlock runner there is no pid namespace whose end takes the
// command's processes with it, and a launcher that execs the command in
// place leaves nothing behind to end them: a background or double-forked
// process, or one that called setsid(), outlived the command, kept its
// stdout pipe open and, with the terminal on its stdin, read what the user
// typed after the command was gone. So the process the consumer spawns
// (the relay) forks a supervisor, and only the supervisor's child goes on
// to be the launcher and then the command:
//
//   - the relay is the pid the consumer knows. It forwards the signals a
//     process sent it (not the terminal's own: those reached the command
//     directly, in the same process group) to the supervisor, waits for it
//     and ends the way the command ended: exit N, or death by signal N. It
//     dies with its own parent (PR_SET_PDEATHSIG).
//   - the supervisor is the command's subreaper, in a process group of its
//     own (a kill of the consumer's group leaves it to clean up), outside
//     the command's Landlock domain: with Landlock's signal scoping (ABI 6)
//     the command cannot signal it, and Landlock never lets a domain ptrace
//     out of itself, so it is no easier a target than the command. When the
//     command ends it kills every process left (each one reparented to it),
//     and only then exits; when the relay dies (SIGKILL included: its end
//     of a pipe closes) it kills the command and everything it started.
//   - the launcher is landlock-run in C (landlock_run_linux.c), started
//     with the signal mask and SIGCHLD disposition the relay was spawned
//     with, in the consumer's process group (job control and Ctrl-C reach
//     it as they reached the command before), dying with the supervisor.
//
// Both forks happen in a process that has touched only the loader's and
// libc's pages (the Go runtime never starts): cheap to copy.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "landlock_metadata_linux.h"
#include "shared_linux.h"
#include "landlock_supervise_linux.h"

#define SV_NAME SBX_LANDLOCK_RUN

static const char *sv_token;
static int sv_notify_sock = -1; // the launcher's end: it sends the seccomp listener on it

int sbx_landlock_notify_sock(void) { return sv_notify_sock; }
static pid_t sv_target; // the relay's: the supervisor

static void sv_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void sv_fatal(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	sbx_vfatal(SV_NAME, sv_token, fmt, ap);
}

// sv_forward passes a signal another process sent the relay on to the
// supervisor. Signals the kernel generated (si_code > 0: the terminal's
// ^C, a hang-up) also reached the command itself, in the same process
// group: passing them on would deliver them twice.
static void sv_forward(int sig, siginfo_t *si, void *uc) {
	(void)uc;
	if (si != NULL && si->si_code > 0)
		return;
	int saved = errno;
	kill(sv_target, sig);
	errno = saved;
}

// sv_mirror ends this process the way the waited-for one ended: its exit
// status, or death by the same signal (without a core dump of its own).
static void sv_mirror(int status) __attribute__((noreturn));
static void sv_mirror(int status) {
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		sbx_die_of(WTERMSIG(status));
	_exit(SBX_FATAL_EXIT);
}

// sv_kill_listed sends SIGKILL to every pid in the children file childfd
// (/proc/self/task/TID/children, space-separated) and returns how many.
static int sv_kill_listed(int childfd) {
	static char buf[1 << 16];
	ssize_t n = pread(childfd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (n == (ssize_t)sizeof buf - 1) {
		// A list longer than the buffer: its last pid may be cut; the
		// next round reads the rest.
		char *last = strrchr(buf, ' ');
		if (last != NULL)
			*last = 0;
	}
	int killed = 0;
	for (char *p = buf; *p;) {
		char *end;
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
			killed++;
		p = end;
		while (*p == ' ' || *p == '\n')
			p++;
	}
	return killed;
}

// sv_end_children kills and reaps every child of this process until it has
// none: a subreaper's children are all that is left of what it started
// (each process killed hands its own children to the subreaper, and the
// next round kills those). childfd lists the children; without it, the
// children are waited for.
static void sv_end_children(int childfd) {
	for (;;) {
		int status;
		pid_t p;
		while ((p = waitpid(-1, &status, WNOHANG | __WALL)) > 0) {
		}
		if (p < 0 && errno == ECHILD)
			return;
		if (p < 0 && errno != EINTR)
			return;
		if (childfd >= 0)
			sv_kill_listed(childfd);
		p = waitpid(-1, &status, __WALL);
		if (p < 0 && errno == ECHILD)
			return;
	}
}

static int sv_open_children(void) {
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
	return open(path, O_RDONLY | O_CLOEXEC);
}

// sv_take_listener receives the seccomp listener the launcher sends on
// sock once it has loaded its filter, and closes sock; -1 when none came.
static int sv_take_listener(int sock) {
	char b;
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {&b, 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
	int fd = -1;
	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) > 0) {
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof fd);
	}
	close(sock);
	return fd;
}

// sv_supervise is the supervisor's loop: pass signals on to the command,
// reap, and end everything when the command ends or the relay is gone.
static void sv_supervise(pid_t cmd, int sfd, int relayfd, int childfd, int sock) __attribute__((noreturn));
static void sv_supervise(pid_t cmd, int sfd, int relayfd, int childfd, int sock) {
	// fds[2] is the socket the launcher sends the seccomp listener on,
	// then the listener (landlock_metadata_linux.c); -1 once it is gone.
	struct pollfd fds[3] = {{.fd = sfd, .events = POLLIN}, {.fd = relayfd, .events = POLLIN}, {.fd = sock, .events = POLLIN}};
	int listening = 0;
	int status = 0, done = 0;
	while (!done) {
		if (poll(fds, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, SV_NAME ": supervisor: poll: %s; stopping the command\n", strerror(errno));
			break;
		}
		if (fds[1].revents != 0) {
			// The relay is gone (nothing but its death closes its end):
			// nobody waits for the command any more.
			kill(cmd, SIGKILL);
			sv_end_children(childfd);
			_exit(128 + SIGKILL);
		}
		if (fds[2].revents != 0) {
			if (!listening) {
				fds[2].fd = sv_take_listener(fds[2].fd);
				listening = fds[2].fd >= 0;
				if (listening)
					sbx_sync_wakeup(fds[2].fd);
			} else if (fds[2].revents & POLLIN) {
				sbx_meta_answer(fds[2].fd);
			} else {
				close(fds[2].fd); // every process of the filter is gone
				fds[2].fd = -1;
			}
		}
		if (!(fds[0].revents & POLLIN))
			continue;
		struct signalfd_siginfo si;
		if (read(sfd, &si, sizeof si) != (ssize_t)sizeof si)
			continue;
		if (si.ssi_signo == SIGCHLD) {
			pid_t p;
			int st;
			while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0) {
				if (p == cmd) {
					status = st;
					done = 1;
				}
			}
		} else if (si.ssi_code <= 0) {
			kill(cmd, (int)si.ssi_signo);
		}
	}
	if (!done) {
		kill(cmd, SIGKILL);
		status = 128 + SIGKILL;
		status <<= 8;
	}
	sv_end_children(childfd);
	sbx_refusals_end();
	sv_mirror(status);
}

// sv_relay is the relay's part: forward, wait for the supervisor, end as it
// ended. It is a subreaper too, so that if the supervisor itself is killed
// what it left is still ended here.
static void sv_relay(pid_t supervisor) __attribute__((noreturn));
static void sv_relay(pid_t supervisor) {
	sv_target = supervisor;
	signal(SIGPIPE, SIG_IGN);
	sbx_pass_signals(sv_forward);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int status;
	while (waitpid(supervisor, &status, 0) < 0) {
		if (errno != EINTR) {
			// The command may have run: never a signed line from here.
			fprintf(stderr, SV_NAME ": wait for the supervisor: %s\n", strerror(errno));
			_exit(SBX_FATAL_EXIT);
		}
	}
	int p = waitpid(-1, NULL, WNOHANG | __WALL);
	if (!(p < 0 && errno == ECHILD)) {
		// The supervisor did not end what it supervised (it was killed).
		int childfd = sv_open_children();
		sv_end_children(childfd);
	}
	sv_mirror(status);
}

void sbx_landlock_supervise(const char *token, const struct spec *s) {
	sv_token = token;
	sigset_t start_mask;
	struct sigaction start_chld;
	sigprocmask(SIG_SETMASK, NULL, &start_mask);
	sigaction(SIGCHLD, NULL, &start_chld);
	// An ignored SIGCHLD inherited from the consumer would make the kernel
	// reap children before their status is known.
	signal(SIGCHLD, SIG_DFL);
	pid_t group = getpgrp();
	if (sbx_die_with_spawner() < 0)
		sv_fatal("prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		sv_fatal("prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
	int relay[2];
	if (pipe2(relay, O_CLOEXEC) < 0)
		sv_fatal("pipe: %s", strerror(errno));
	// Blocked from before the fork: the supervisor reads them from a
	// signalfd, and one sent before the relay's handlers are in place
	// waits instead of ending the relay.
	sigset_t sv;
	sigemptyset(&sv);
	sigaddset(&sv, SIGCHLD);
	sbx_passed_signals(&sv);
	sigprocmask(SIG_BLOCK, &sv, NULL);

	pid_t supervisor = fork();
	if (supervisor < 0)
		sv_fatal("fork the supervisor: %s", strerror(errno));
	if (supervisor > 0) {
		close(relay[0]);
		if (sbx_refusals_fd >= 0)
			close(sbx_refusals_fd);
		sv_relay(supervisor);
	}

	// The supervisor.
	close(relay[1]);
	if (setpgid(0, 0) < 0)
		sv_fatal("supervisor: setpgid: %s", strerror(errno));
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		sv_fatal("supervisor: prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
	int sfd = signalfd(-1, &sv, SFD_CLOEXEC);
	if (sfd < 0)
		sv_fatal("supervisor: signalfd: %s", strerror(errno));
	// Opened now: once the command may run, the supervisor never prints a
	// signed line, and without this list it could not end what is left.
	int childfd = sv_open_children();
	if (childfd < 0)
		sv_fatal("supervisor: cannot list its children (/proc/self/task/*/children): %s", strerror(errno));
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
		sv_fatal("supervisor: socketpair: %s", strerror(errno));
	sbx_meta_roots(s);
	pid_t self = getpid();
	pid_t cmd = fork();
	if (cmd < 0)
		sv_fatal("fork the launcher: %s", strerror(errno));
	if (cmd > 0) {
		// No capability: the metadata calls it makes for the command are
		// held to the command's own owner checks (landlock_metadata_linux.c).
		struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
		struct __user_cap_data_struct none[2];
		memset(none, 0, sizeof none);
		if (syscall(SYS_capset, &hdr, none) < 0) {
			kill(cmd, SIGKILL);
			sv_fatal("supervisor: drop capabilities: %s", strerror(errno));
		}
		// Warnings go to stderr, whatever the terminal's TOSTOP, and a
		// closed stderr does not end the supervisor.
		signal(SIGTTOU, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		close(pair[1]);
		sv_supervise(cmd, sfd, relay[0], childfd, pair[0]);
	}

	// The launcher: back in the consumer's process group, dying with the
	// supervisor, with the signal state the relay was spawned with.
	close(sfd);
	close(childfd);
	close(relay[0]);
	close(pair[0]);
	if (sbx_refusals_fd >= 0)
		close(sbx_refusals_fd);
	sbx_refusals_fd = -1;
	sv_notify_sock = pair[1];
	if (setpgid(0, group) < 0)
		sv_fatal("launcher: setpgid: %s", strerror(errno));
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		sv_fatal("launcher: prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
	if (getppid() != self)
		sv_fatal("launcher: the supervisor is gone");
	sigaction(SIGCHLD, &start_chld, NULL);
	sigprocmask(SIG_SETMASK, &start_mask, NULL);
}

// Stage 1 of the ns-run launcher, run before the Go runtime starts.
//
// The kernel allows entering a new user namespace only to a single-threaded
// process, and a Go program is never single-threaded. Container runtimes
// solve this the same way (runc's nsexec): a constructor that runs in the
// C start-up, before Go, when the binary was started as "ns-run". It
//
//   1. unshares the user namespace and maps the caller's own uid and gid;
//   2. unshares mount, pid, ipc, uts and (network deny) net namespaces;
//   3. forks: the child is pid 1 of the new pid namespace, and starts pid 2
//      (spawn_stage2), stage 2 (ns_stage2_linux.c: mounts, pivot,
//      capabilities, seccomp, then exec of the command in place). pid 1
//      stays in C as the sandbox's init (sandbox_init), and so does the
//      first parent, which only forwards signals and waits: no Go runtime
//      starts at all.
//
// The parent forwards SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2
// that a process sent it (not the terminal's own, which reach the command
// directly) to pid 1 through a pipe; pid 1 signals the command. The parent
// exits with pid 1's status, which is the command's; a command killed by
// signal N makes pid 1 exit 128+N (an init cannot die of a signal) and say
// N on a second pipe, and the parent then dies of N itself, without a core
// dump, so its spawner sees what it would see with the command run bare.
// The parent dies with its own spawner (PR_SET_PDEATHSIG), pid 1 dies with
// the parent (PR_SET_PDEATHSIG, and end of file on the pipe), and
// the whole pid namespace dies with pid 1.
//
// Any failure here is the launcher's: one "ns-run: fatal: [TOKEN] ..." line
// on stderr and exit 125, as fatal.go does on the Go side.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared_linux.h"
#include "ns_linux.h"
#include "ns_stage2_linux.h"

// Process state, set once by stage 1 and read by every stage after it
// (ns_linux.h says what it holds).
int sbx_ns_bridge = -1;

// Process state: the write end of the pipe on which stage 1's signal
// handler (forward) passes signals on; a handler reaches no other state.
static int sigpipe_w = -1;

static int write_file(const char *path, const char *data) {
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, data, strlen(data));
	int saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)strlen(data) ? 0 : -1;
}

// forward queues a signal another process sent us for stage 2. Signals the
// kernel generated (si_code > 0: the terminal's ^C, a hang-up) also reached
// the command itself, in the same process group: passing them on would
// deliver them twice.
static void forward(int sig, siginfo_t *si, void *uc) {
	(void)uc;
	if (si != NULL && si->si_code > 0)
		return;
	unsigned char b = (unsigned char)sig;
	int saved = errno;
	if (write(sigpipe_w, &b, 1) < 0) {
		// stage 2 is gone or the pipe is full; waitpid reports the end.
	}
	errno = saved;
}

// mountinfo_ids reads the mount ids (mountinfo's first column) of pid 1's
// mount namespace from mfd into ids; it returns how many, or -1.
static int mountinfo_ids(int mfd, unsigned long long *ids, int max) {
	static char buf[1 << 16];
	int n = 0, at_line_start = 1;
	unsigned long long cur = 0;
	int in_id = 0;
	if (lseek(mfd, 0, SEEK_SET) < 0)
		return -1;
	for (;;) {
		ssize_t r = read(mfd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return n;
		for (ssize_t i = 0; i < r; i++) {
			char c = buf[i];
			if (at_line_start) {
				at_line_start = 0;
				in_id = 1;
				cur = 0;
			}
			if (in_id && c >= '0' && c <= '9') {
				cur = cur * 10 + (unsigned)(c - '0');
			} else if (in_id) {
				in_id = 0;
				if (n < max)
					ids[n++] = cur;
			}
			if (c == '\n')
				at_line_start = 1;
		}
	}
}

// check_mounts runs when the mount table of the sandbox changed. The
// command cannot change it (no capability, seccomp refuses the mount
// calls, and a mount point in its own namespace cannot be renamed or
// removed: EBUSY), but a host process can: renaming a new file over a
// protected one (git config, credential helpers and editors all write that
// way) makes the kernel detach the sandbox's mount on it, and the new file
// is then writable (a read-only bind) or readable (a deny-read mount).
// When one of the protective mounts is gone, the sandbox is stopped and
// the launcher fails with a signed line naming the path: the command
// could not have caused it, so it cannot forge this failure. A mount table
// that cannot be read stops the sandbox too, unsigned.
static void check_mounts(int mfd) {
	static unsigned long long ids[1 << 14];
	int n = mountinfo_ids(mfd, ids, sizeof ids / sizeof ids[0]);
	if (n < 0 || n == (int)(sizeof ids / sizeof ids[0])) {
		kill(-1, SIGKILL);
		_exit(128 + SIGKILL);
	}
	for (int w = 0; w < sbx_ns_nwatch; w++) {
		int found = 0;
		for (int i = 0; i < n && !found; i++)
			found = ids[i] == sbx_ns_watch[w].id;
		if (!found) {
			kill(-1, SIGKILL);
			sbx_fatal(sbx_token,
			          "the sandbox's protective mount on %s was detached during the run (a process outside the "
			          "sandbox replaced or removed that path): the sandbox was stopped, and the command may have "
			          "changed or read what appeared there",
			          sbx_ns_watch[w].path);
		}
	}
}

// sandbox_init is pid 1 of the sandbox, in C: it passes on the signals
// stage 1 forwards through sigfd to the command (pid 2), learns of exits
// through the signalfd sfd, reaps every
// process reparented to it, and exits with the command's status when the
// command exits (128+N for a death by signal N, and N written to statfd,
// for stage 1 to die of), which ends the pid
// namespace and kills whatever the command left behind. End of file on
// sigfd means stage 1 is gone: so must the sandbox be. Signals the terminal
// sends pid 1 are ignored by the kernel (an init without handlers).
static void sandbox_init(int sigfd, int sfd, int mfd, int statfd, pid_t cmd) {
	for (;;) {
		struct pollfd fds[3] = {{.fd = sigfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}, {.fd = mfd, .events = POLLPRI}};
		if (poll(fds, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			kill(cmd, SIGKILL);
			_exit(128 + SIGKILL); // unsigned: never a launcher failure once the command runs
		}
		if (fds[0].revents) {
			unsigned char b;
			ssize_t n = read(sigfd, &b, 1);
			if (n == 1)
				kill(cmd, b);
			else if (n == 0 || (errno != EINTR && errno != EAGAIN))
				_exit(128 + SIGKILL);
		}
		if (fds[1].revents) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof si) < 0 && errno != EAGAIN && errno != EINTR) {
				kill(cmd, SIGKILL);
				_exit(128 + SIGKILL);
			}
			int status;
			pid_t pid;
			while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
				if (pid != cmd)
					continue; // an orphan, reaped
				if (WIFEXITED(status))
					_exit(WEXITSTATUS(status));
				if (WIFSIGNALED(status)) {
					unsigned char b = (unsigned char)WTERMSIG(status);
					if (write(statfd, &b, 1) < 0) {
						// stage 1 is gone, or exits 128+N instead.
					}
					_exit(128 + WTERMSIG(status));
				}
			}
		}
		// After the exits: a stage 2 that failed before exec has said why.
		if (fds[2].revents & (POLLPRI | POLLERR))
			check_mounts(mfd);
	}
}

struct stage2_args {
	const struct spec *spec;
	int sigfd, sfd, statfd;
	sigset_t chld;
};

// stage2 is pid 2: it builds the root, confines itself and execs the
// command in place (ns_stage2_linux.c).
static int stage2(void *arg) {
	struct stage2_args *a = arg;
	close(a->sigfd);
	close(a->sfd);
	close(a->statfd);
	sigprocmask(SIG_UNBLOCK, &a->chld, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		sbx_fatal(sbx_token, "prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
	sbx_ns_stage2(a->spec);
}

// spawn_stage2 starts pid 2 the way posix_spawn starts a child: on its own
// stack, in pid 1's memory (CLONE_VM), with pid 1 suspended until pid 2
// execs the command or exits (CLONE_VFORK). A fork would copy pid 1's page
// tables and then take a copy-on-write fault for every page either process
// writes, which is most of what starting pid 2 costs. Pid 2 has its own
// descriptor table, signal dispositions and credentials; the memory it
// writes (the plan, its copy of the arguments) pid 1 never reads, and the
// signals stage 1 forwards meanwhile wait in the pipe until the command
// runs. A SIGKILL still ends the suspended pid 1 (and with it the sandbox)
// when stage 1 dies.
static pid_t spawn_stage2(struct stage2_args *a) {
	const size_t guard = 4096, size = 1 << 20;
	char *stack = mmap(NULL, guard + size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		sbx_fatal(sbx_token, "map the command's process stack: %s", strerror(errno));
	if (mprotect(stack, guard, PROT_NONE) < 0)
		sbx_fatal(sbx_token, "guard the command's process stack: %s", strerror(errno));
	pid_t pid = clone(stage2, stack + guard + size, CLONE_VM | CLONE_VFORK | SIGCHLD, a);
	if (pid < 0)
		sbx_fatal(sbx_token, "start the command's process: %s", strerror(errno));
	munmap(stack, guard + size);
	return pid;
}

// connect_bridge connects to the provider's bridge socket (a seqpacket
// socket in the caller's private temp parent).
static void connect_bridge(const char *token, const char *path) {
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof a.sun_path)
		sbx_fatal(token, "the network bridge's path is too long for a UNIX socket: %s", path);
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
		sbx_fatal(token, "connect to the network bridge %s: %s (the wrap's provider must still run)", path, strerror(errno));
	sbx_ns_bridge = fd;
}

__attribute__((constructor)) static void sbx_ns_stage1(int argc, char **argv, char **envp) {
	(void)envp;
	if (argc < 1 || argv == NULL || argv[0] == NULL || strcmp(argv[0], SBX_NS_RUN) != 0)
		return;
	sbx_name = SBX_NS_RUN;
	// Stage 1 dies with whoever spawned it (pid 1 dies with stage 1, and
	// the pid namespace with pid 1): a consumer or CLI killed by SIGKILL
	// leaves nothing running. A spawner already gone before the prctl (the
	// parent pid changed) ends the launch too. sandbox.Wrapped.Command sets
	// the same signal at the fork, which closes even that window for a Go
	// consumer. The unshare of the user namespace below keeps it: the new
	// credentials are the caller's own, in a namespace it owns.
	if (sbx_die_with_spawner() < 0)
		sbx_fatal(getenv(SBX_TOKEN_ENV), "prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
	// An ignored SIGCHLD inherited from the consumer would make the kernel
	// reap the command before pid 1 can learn its status.
	signal(SIGCHLD, SIG_DFL);
	// The token travels in the environment (see internal/vocab): argv is
	// readable by every process through /proc/PID/cmdline.
	char *token = getenv(SBX_TOKEN_ENV);
	// The refusal record's descriptor (vocab.RefusalsEnv), out of the
	// environment: only the guard, forked by pid 2, keeps it.
	sbx_take_refusals_fd(token);

	// The arguments are decoded once, here, before any namespace, and the
	// cgroups joined (sbx_start). Stage 2 (pid 2) takes the same decoded
	// spec: pid 1 is a fork of this process, and pid 2 runs in pid 1's
	// memory. The bridge (-bridge) is connected here too, as the caller,
	// while the host's tree is in view.
	static struct spec spec;
	sbx_start(argc, argv, token, &spec);
	if (spec.bridge)
		connect_bridge(token, spec.bridge);
	int netns = spec.net != SBX_NET_MODE_ALLOW;

	uid_t uid = getuid();
	gid_t gid = getgid();
	if (unshare(CLONE_NEWUSER) < 0)
		sbx_fatal(token, "unshare user namespace: %s (user namespaces refused here)", strerror(errno));
	char map[64];
	if (write_file("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
		sbx_fatal(token, "write /proc/self/setgroups: %s", strerror(errno));
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) < 0)
		sbx_fatal(token, "write uid_map: %s", strerror(errno));
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (write_file("/proc/self/gid_map", map) < 0)
		sbx_fatal(token, "write gid_map: %s", strerror(errno));

	int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
	if (netns)
		flags |= CLONE_NEWNET;
	if (unshare(flags) < 0)
		sbx_fatal(token, "unshare mount/pid/ipc/uts%s namespaces: %s", netns ? "/net" : "", strerror(errno));

	int p[2], st[2];
	if (pipe2(p, O_CLOEXEC) < 0 || pipe2(st, O_CLOEXEC | O_NONBLOCK) < 0)
		sbx_fatal(token, "pipe: %s", strerror(errno));
	pid_t child = fork();
	if (child < 0)
		sbx_fatal(token, "fork into the new pid namespace: %s", strerror(errno));
	if (child == 0) {
		// pid 1 of the new pid namespace.
		close(p[1]);
		close(st[0]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
			sbx_fatal(token, "prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
		// The token moves to a global, and its bytes in the environment
		// (the memory /proc/PID/environ shows) become zeros; stage 2 unsets
		// the variable before it execs the command.
		if (sbx_valid_token(token)) {
			memcpy(sbx_token, token, SBX_TOKEN_LEN + 1);
			memset(token, '0', SBX_TOKEN_LEN);
		}
		sigset_t chld;
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0)
			sbx_fatal(sbx_token, "block SIGCHLD: %s", strerror(errno));
		// Everything pid 1 needs is made before pid 2 exists: once the
		// command may run, pid 1 never prints a signed fatal line (the
		// command could provoke one, say by lowering pid 1's limits, and an
		// agent would take it for a launcher failure).
		int sfd = signalfd(-1, &chld, SFD_CLOEXEC);
		if (sfd < 0)
			sbx_fatal(sbx_token, "signalfd: %s", strerror(errno));
		struct stage2_args a = {&spec, p[0], sfd, st[1], chld};
		pid_t cmd = spawn_stage2(&a);
		// The guard has its copy of the record's descriptor (pid 2 forked
		// it, and the command never had it: close-on-exec); pid 1 needs none.
		if (sbx_refusals_fd >= 0)
			close(sbx_refusals_fd);
		// The sandbox's mount table, watched from now on (check_mounts).
		// It is opened only now: mountinfo shows the mounts below the root
		// its opener had, and pid 2 has just pivoted this namespace (pid 1
		// too) into the new root. Failing here stops the sandbox, unsigned:
		// the command may already run.
		int mfd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
		if (mfd < 0) {
			// pid 2 resumed pid 1 by exiting, not by exec: stage 2 failed
			// before it mounted /proc (its signed fatal line is out), and
			// pid 1 ends with its status, 125, not as a watch failure. A
			// child that shares its parent's memory resumes it as it
			// exits, a moment before it can be reaped: so pid 1 looks for
			// that status for up to 100 ms before it calls this a watch
			// failure (seen in a container, where the bare check missed
			// it and pid 1 ended 137).
			int st2, e = errno;
			for (int i = 0; i < 200; i++) {
				if (waitpid(cmd, &st2, WNOHANG) == cmd)
					_exit(WIFEXITED(st2) ? WEXITSTATUS(st2) : 128 + WTERMSIG(st2));
				usleep(500);
			}
			fprintf(stderr, "ns-run: cannot watch the sandbox's mounts: %s\n", strerror(e));
			kill(-1, SIGKILL);
			_exit(128 + SIGKILL);
		}
		// poll wakes for changes after the open: a mount detached before
		// it (pid 1 may run only after the command has for a while, on a
		// busy machine) is looked for once now.
		check_mounts(mfd);
		sandbox_init(p[0], sfd, mfd, st[1], cmd);
	}

	// Stage 1: forward, wait, exit with stage 2's status. Never runs Go.
	if (sbx_refusals_fd >= 0)
		close(sbx_refusals_fd);
	close(p[0]);
	close(st[1]);
	sigpipe_w = p[1];
	fcntl(sigpipe_w, F_SETFL, O_NONBLOCK);
	signal(SIGPIPE, SIG_IGN);
	sbx_pass_signals(forward);

	int status;
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR) {
			// The command may have run: never a signed line from here.
			fprintf(stderr, "ns-run: wait for the sandbox: %s\n", strerror(errno));
			_exit(SBX_FATAL_EXIT);
		}
	}
	if (WIFEXITED(status)) {
		// pid 1 wrote the signal before it exited; nothing else holds the
		// pipe's other end (the command never had it: close-on-exec).
		unsigned char b;
		if (WEXITSTATUS(status) > 128 && read(st[0], &b, 1) == 1 && 128 + b == WEXITSTATUS(status))
			sbx_die_of(b);
		_exit(WEXITSTATUS(status));
	}
	if (WIFSIGNALED(status))
		_exit(128 + WTERMSIG(status));
	_exit(SBX_FATAL_EXIT);
}

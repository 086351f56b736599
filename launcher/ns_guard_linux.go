//go:build linux && cgo && sandbox_ctest

package launcher

/*
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ns_guard_linux.h"
#include "ns_plan_linux.h"

// sbx_notify_on loads a filter that hands system call nr to a listener
// (every other call allowed): the listener, or -1.
static int sbx_notify_on(int nr) {
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = 4, .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

// sbx_guard_lifetime runs the guard's loop (ns_guard_serve) on the listener
// of a filter whose only process, a child of this one, blocks in pause():
// 0 when the guard kept serving while that process lived and exited 0 by
// itself within two seconds of its death; 3 when it ended early, 4 when it
// ended otherwise, 5 when it was still running; -1 when the set-up failed.
static int sbx_guard_lifetime(void) {
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	pid_t a = fork();
	if (a < 0)
		return -1;
	if (a == 0) {
		int l = sbx_notify_on(SYS_getppid);
		if (l < 0)
			_exit(2);
		ns_guard_hand_over(sv[1], l); // as pid 2 hands it to the guard
		for (;;)
			pause();
	}
	close(sv[1]);
	int listener = ns_guard_take_listener(sv[0]);
	close(sv[0]);
	if (listener < 0) {
		kill(a, SIGKILL);
		waitpid(a, NULL, 0);
		return -1;
	}
	static struct sbx_plan empty;
	pid_t g = fork();
	if (g == 0)
		ns_guard_serve(listener, &empty);
	close(listener);
	struct timespec tick = {0, 10 * 1000 * 1000};
	int st, ret = 5;
	for (int i = 0; i < 20; i++) { // 200 ms with the filter in use
		nanosleep(&tick, NULL);
		if (waitpid(g, &st, WNOHANG) == g) {
			ret = 3;
			break;
		}
	}
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	for (int i = 0; ret == 5 && i < 200; i++) { // up to 2 s after its end
		if (waitpid(g, &st, WNOHANG) == g)
			ret = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 4;
		else
			nanosleep(&tick, NULL);
	}
	if (ret == 5 || ret == 3) {
		kill(g, SIGKILL);
		waitpid(g, NULL, 0);
	}
	return ret;
}

// sbx_guard_tid_reuse runs the guard's loop for a new pid namespace (its
// own /proc) and hands it, from pid 100, a create of "first" in a with
// umask 022, then, once that process is gone and a new one holds pid 100,
// a create of "second" in b with umask 077, both mode 0666: a thread's
// /proc entry the guard keeps must not outlive its thread. 0 when both
// creates returned a descriptor; 20-22 what the second process failed
// at (10-19 and -1: the set-up).
static int sbx_guard_tid_reuse(const char *a, const char *b) {
	pid_t outer = fork();
	if (outer < 0)
		return -1;
	if (outer == 0) {
		if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0)
			_exit(10);
		pid_t init = fork();
		if (init < 0)
			_exit(11);
		if (init > 0) {
			int st;
			if (waitpid(init, &st, 0) < 0)
				_exit(12);
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 13);
		}
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 || mount("proc", "/proc", "proc", 0, NULL) < 0)
			_exit(14);
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			_exit(15);
		pid_t g = fork();
		if (g == 0) {
			close(sv[1]);
			int l = ns_guard_take_listener(sv[0]);
			static struct sbx_plan empty;
			if (l >= 0)
				ns_guard_serve(l, &empty);
			_exit(1);
		}
		close(sv[0]);
		int last = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
		if (g < 0 || last < 0)
			_exit(16);
		int l = sbx_notify_on(SYS_openat);
		if (l < 0)
			_exit(17);
		ns_guard_hand_over(sv[1], l);
		for (int i = 0; i < 2; i++) {
			if (pwrite(last, "99", 2, 0) != 2)
				_exit(19);
			pid_t w = fork();
			if (w == 0) {
				if (getpid() != 100)
					_exit(20);
				umask(i ? 077 : 022);
				if (chdir(i ? b : a) < 0)
					_exit(21);
				_exit(open(i ? "second" : "first", O_CREAT | O_WRONLY | O_CLOEXEC, 0666) < 0 ? 22 : 0);
			}
			int st;
			if (w < 0 || waitpid(w, &st, 0) != w)
				_exit(19);
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 19);
		}
		kill(g, SIGKILL);
		_exit(0);
	}
	int st;
	if (waitpid(outer, &st, 0) != outer || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}
*/
import "C"

import "unsafe"

// guardLifetime runs sbx_guard_lifetime: the guard's loop on a real
// listener whose last filtered process dies (TestGuardEndsWithTheFilter).
func guardLifetime() int { return int(C.sbx_guard_lifetime()) }

// guardTIDReuse runs sbx_guard_tid_reuse on directories a and b
// (TestGuardKeptEntryOutlivesNoThread).
func guardTIDReuse(a, b string) int {
	ca, cb := C.CString(a), C.CString(b)
	defer C.free(unsafe.Pointer(ca))
	defer C.free(unsafe.Pointer(cb))
	return int(C.sbx_guard_tid_reuse(ca, cb))
}

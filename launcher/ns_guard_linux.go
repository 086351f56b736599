//go:build linux && cgo && sandbox_ctest

package launcher

/*
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ns_guard_linux.h"
#include "ns_plan_linux.h"

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
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = {.len = 4, .filter = f};
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(2);
		int l = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
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
*/
import "C"

// guardLifetime runs sbx_guard_lifetime: the guard's loop on a real
// listener whose last filtered process dies (TestGuardEndsWithTheFilter).
func guardLifetime() int { return int(C.sbx_guard_lifetime()) }

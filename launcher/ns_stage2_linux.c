// Stage 2 of the ns-run launcher: pid 2 of the sandbox, in C, before (and
// instead of) the Go runtime. This file runs the stages in order
// (sbx_ns_stage2, at the end); each lives in its own file:
//
//   1. stage 1 (ns_stage1_linux.c) has decoded the launcher vocabulary
//      with shared_decode_linux.c (internal/vocab: the Go definition;
//      shared_decode_test.go checks this decoder against it), before any
//      namespace; this stage takes that one decoding;
//   2. ns_plan_linux.c: plans, while the host's tree is still in view,
//      what will be mounted, carved and guarded (a struct sbx_plan, which
//      the stages below take; ns_plan_test.go drives the planner);
//   3. ns_mounts_linux.c: builds the new root and pivots into it:
//        - the host's tree bound recursively, made private, and read-only,
//          nosuid, nodev in one mount_setattr(AT_RECURSIVE);
//        - /tmp read-only: an overlay of the host's /tmp, so no host socket
//          there can be connected to through it;
//        - a minimal /dev (null, zero, full, random, urandom, tty, a new
//          devpts, a private /dev/shm), a fresh read-only /proc (the uid map
//          keeps the caller's ids, and global uid 0 may write /proc/sys by
//          mode bits alone);
//        - the layers, shallowest first: writable binds of the writable
//          roots and the temp dir; pins (a directory bound onto itself, so
//          it cannot be renamed) between a writable root and a read-only
//          subpath; read-only binds of the read-only subpaths; empty
//          read-only mounts over the deny-read paths; read-only binds of
//          the allowed UNIX sockets onto themselves;
//      Paths are checked and used as one object (ns_paths_linux.c):
//      another sandbox writing a shared workspace can swap a path
//      component for a symlink at any moment, and mount(2) would follow it;
//   4. ns_net_linux.c: brings up loopback in the new network namespace,
//      and hands the listeners of the loopback ports to the provider;
//   5. ns_confine_linux.c: confines the allowed UNIX sockets and carves
//      the deny-read paths with Landlock; then (shared_seal_linux.c) empties
//      every capability set, marks descriptors close-on-exec, sets
//      no_new_privs and loads the seccomp program the provider compiled for this very spec
//      (-seccomp: the filter is defined once, in Go); with guarded names
//      (-g), it first forks the guard, which then answers the filter's
//      notifications of every creating call (ns_guard_linux.c);
//   6. here, with shared_seal_linux.c (shared with landlock-run): resets the
//      signal mask and dispositions, and execs the command in place (127 /
//      126 when it cannot, as the Go launcher does).
//
// Every failure before exec is sbx_fatal: one signed line, exit 125.

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

#include "ns_confine_linux.h"
#include "ns_guard_linux.h"
#include "ns_linux.h"
#include "ns_mounts_linux.h"
#include "ns_net_linux.h"
#include "ns_plan_linux.h"
#include "ns_stage2_linux.h"
#include "shared_seal_linux.h"
#include "shared_linux.h"

// require_full refuses what the provider would report as gaps and the plan
// does not see: network allowed, UNIX sockets allowed on a kernel whose
// Landlock cannot confine them by path, signals on a kernel whose Landlock
// cannot scope them. A read-only subpath that is a symlink, one that is
// missing while no guard refuses its creation (no -g), and a missing
// deny-read path inside a writable root, are refused by the plan itself,
// on what it opened.
static void require_full(const struct spec *s) {
	if (s->net == SBX_NET_MODE_ALLOW)
		sbx_fatal(sbx_token, "full enforcement required, but: network allow also opens UNIX sockets to host daemons");
	if (s->nunixsock > 0 && ns_landlock_abi() < SBX_ABI_RESOLVE_UNIX)
		sbx_fatal(sbx_token,
		          "full enforcement required, but: allowed UNIX sockets cannot be confined by path on Landlock ABI %d "
		          "(needs ABI %d)",
		          ns_landlock_abi(), SBX_ABI_RESOLVE_UNIX);
	if (ns_landlock_abi() < SBX_ABI_SCOPES)
		sbx_fatal(sbx_token,
		          "full enforcement required, but: Landlock ABI %d cannot scope signals (needs ABI %d): the command "
		          "can signal its spawner's process group",
		          ns_landlock_abi(), SBX_ABI_SCOPES);
	// Read-only subpaths and deny-read paths: checked by the plan, on the
	// objects it uses (plan_read_only, plan_deny_read).
}

void sbx_ns_stage2(const struct spec *s) {
	if (s->require_full)
		require_full(s);
	struct sbx_plan plan;
	if (ns_plan(s, &plan) < 0)
		sbx_fatal(sbx_token, "%s", plan.err);
	ns_build_root(s, &plan);
	if (s->dir)
		ns_enter_dir(s->dir);
	if (s->net != SBX_NET_MODE_ALLOW)
		ns_loopback_up();
	ns_hand_over_ports(s);
	ns_confine_unix_sockets(s);
	ns_carve_deny_read(s, &plan);
	// The guard shares the Landlock domains above, and stays outside the
	// filter below (ns_guard_linux.c).
	int guard = ns_guard_fork(s, &plan);
	sbx_drop_capabilities(1);
	sbx_close_extra_fds();
	// Signals scoped after the guard is forked: the command cannot signal
	// it (nor pid 1, stage 1, or its spawner's group).
	ns_scope_signals();
	// Before the filter: with it, the open of /dev/tty would be the
	// guard's (an open for writing), which has no terminal to leave.
	sbx_leave_terminal();
	int listener = sbx_load_seccomp(s->seccomp, ns_guards(s), 1);
	if (guard >= 0)
		ns_guard_hand_over(guard, listener);
	unsetenv(SBX_TOKEN_ENV);
	if (s->probe)
		sbx_probe(s, 0);
	sbx_reset_signals();
	sbx_release_env();
	sbx_set_limits(s);
	sbx_exec_command(s->cmd); // cmd ends at argv[argc], which is NULL
}

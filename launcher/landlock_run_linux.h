// landlock-run in C (landlock_run_linux.c): the plan of its Landlock rules,
// exposed for the test that holds it to the Go plan (landlock_rules.go).
#ifndef SBX_LANDLOCK_RUN_LINUX_H
#define SBX_LANDLOCK_RUN_LINUX_H

#include <stdint.h>

#include "shared_spec_linux.h"

// The classes of a grant: how its path is opened when the rule is added
// (the Go plan's grantClass, in the same order).
enum sbx_ll_class {
	SBX_LL_WALKED, // reached through real directories while listing: no symlink followed; gone, another type or a symlink now is
	               // not granted
	SBX_LL_DEVICE, // a /dev entry: followed (only root can change /dev); gone is skipped
	SBX_LL_ROOT,   // a writable root or the temp dir: no symlink followed; any failure is fatal
	SBX_LL_SOCKET, // an allowed UNIX socket: no symlink followed; granted only if a socket
};

// sbx_ll_grant is one path-beneath rule of the plan.
struct sbx_ll_grant {
	char *path;
	uint64_t access;
	int dir; // the plan found a directory there
	enum sbx_ll_class class;
};

// sbx_ll_plan is the plan: its grants, sorted by path.
struct sbx_ll_plan {
	struct sbx_ll_grant *g;
	int n, cap;
};

// sbx_ll_make_plan turns s into path rules as the Go plan does (planFS):
// reading everything under / except /dev and the deny-read paths (a
// denied path carved out by granting its siblings and listing its
// ancestors), the devices and ptys (the terminals of the command's
// standard descriptors) read-write, the writable roots and the temp dir
// writable, the allowed UNIX sockets reachable under network deny.
void sbx_ll_make_plan(const struct spec *s, char **ptys, int nptys, struct sbx_ll_plan *out);

// sbx_ll_free_plan frees what sbx_ll_make_plan allocated.
void sbx_ll_free_plan(struct sbx_ll_plan *p);

// sbx_landlock_run is landlock-run in the process its supervisor forked
// (landlock_supervise_linux.c), on the arguments the constructor decoded: check, confine (Landlock, capabilities,
// descriptors, seccomp with its listener handed to the supervisor), and
// exec the command in place. Every failure before exec is fatal: one
// signed line, exit 125.
void sbx_landlock_run(const struct spec *s) __attribute__((noreturn));

#endif

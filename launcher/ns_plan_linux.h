// ns-run stage 2's plan (ns_plan_linux.c): what a decoded spec becomes
// once its paths are opened, while the host's tree is still in view. The
// stages that apply it take it by pointer: the mounts (ns_mounts_linux.c),
// the Landlock carving of the deny-read paths (ns_confine_linux.c) and the
// guard (ns_guard_linux.c). The planner mounts nothing, so a test can run
// it on a tree of its own (ns_plan_linux.go, ns_plan_test.go).
#ifndef SBX_NS_PLAN_LINUX_H
#define SBX_NS_PLAN_LINUX_H

#include <sys/types.h>

#include "ns_linux.h"

enum { LAYER_WRITABLE, LAYER_PIN, LAYER_RO, LAYER_DENY, LAYER_SOCKET };

// A layer is one mount of the new root. fd is an O_PATH descriptor of its
// source, opened at plan time without following symlinks (writable,
// read-only and socket layers; -1 for the others); dev and ino identify the
// object a read-only layer or a pin was planned on, so that the mount
// point found at build time can be checked to be that very object; mnt is
// the deny-read mount, kept to seal it (-1 until the build makes it);
// size, for the temp dir's writable layer under -tmpsize, makes it a new
// tmpfs of that many bytes instead of a bind (0 otherwise).
struct layer {
	int kind, isdir;
	char *path;
	int fd, mnt;
	dev_t dev;
	ino_t ino;
	long long size;
};

// A guarded name: the directory that holds it, by identity, and the name;
// path is the protected path it was planned for. bound: the name is there,
// a read-only or deny-read path inside a writable root, under its mount;
// the guard refuses writing to it as well as creating it, whatever a host
// process has renamed over it since (its mount then detached).
struct guarded {
	dev_t dev;
	ino_t ino;
	char *name;
	const char *path;
	int bound;
};

// sbx_plan is the plan. layers are sorted shallowest first (the order they
// are mounted in); carved[i] says whether the deny-read path s->deny[i] is
// carved out with Landlock as well as hidden by its mount; err holds why
// ns_plan refused (the text of the fatal line). ovl_* are -overlay's
// directories (the lower one, which is also where it is shown, and
// -overlay-dir's upper and work), opened without following symlinks, -1
// without -overlay; ovl_dev and ovl_ino identify the lower one, which the
// mount point must still be when the overlay goes on it.
struct sbx_plan {
	struct layer *layers;
	int nlayers, caplayers;
	struct guarded *guarded;
	int nguarded;
	int *carved;
	int ovl_lower, ovl_upper, ovl_work;
	dev_t ovl_dev;
	ino_t ovl_ino;
	char err[512];
};

// ns_plan fills p (zeroed first) from s: 0, or -1 with the reason in
// p->err; the caller makes it the fatal line. Running out of memory is
// fatal where it happens.
int ns_plan(const struct spec *s, struct sbx_plan *p);

// ns_plan_free closes the descriptors p still holds and frees it; stage 2
// does not need it (it execs), a test does. Only before ns_build_root:
// pid 1's watch list points at the plan's paths from then on.
void ns_plan_free(struct sbx_plan *p);

#endif

// ns-run stage 2's guard (ns_guard_linux.c): started by the orchestrator
// (ns_stage2_linux.c) when the spec needs it, and handed the command's
// seccomp listener; a test runs its loop and its rule (ns_guard_linux.go,
// ns_plan_linux.go).
#ifndef SBX_NS_GUARD_LINUX_H
#define SBX_NS_GUARD_LINUX_H

#include "ns_plan_linux.h"
#include "shared_spec_linux.h"

// ns_guards reports whether the guard runs for s: guarded names, or
// read-only or deny-read paths inside a writable root or the temp dir (the
// provider's filter has the guard's rules exactly then: key.Guards in
// internal/seccompfilter/key).
int ns_guards(const struct spec *s);
int ns_guard_fork(const struct spec *s, const struct sbx_plan *plan);
void ns_guard_hand_over(int sock, int listener);
int ns_guard_take_listener(int sock);
__attribute__((noreturn)) void ns_guard_serve(int listener, const struct sbx_plan *plan);

#endif

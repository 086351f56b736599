// ns-run stage 2, section 5 (ns_confine_linux.c): the kernel's Landlock
// ABI and the Landlock rulesets of stage 2 (UNIX sockets, signal scoping,
// the carving of the deny-read paths), for the orchestrator
// (ns_stage2_linux.c); the guard (ns_guard_linux.c) scopes its own
// signals too.
#ifndef SBX_NS_CONFINE_LINUX_H
#define SBX_NS_CONFINE_LINUX_H

#include "ns_plan_linux.h"
#include "shared_spec_linux.h"

int ns_landlock_abi(void);
void ns_confine_unix_sockets(const struct spec *s);
void ns_scope_signals(void);
void ns_carve_deny_read(const struct spec *s, const struct sbx_plan *plan);

#endif

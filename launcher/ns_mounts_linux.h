// ns-run stage 2, section 3 (ns_mounts_linux.c): the new root, built from
// the plan, and the working directory in it, for the orchestrator
// (ns_stage2_linux.c). The mounts pid 1 then watches are ns_linux.h's.
#ifndef SBX_NS_MOUNTS_LINUX_H
#define SBX_NS_MOUNTS_LINUX_H

#include "ns_plan_linux.h"

void ns_build_root(const struct spec *s, struct sbx_plan *p);
void ns_enter_dir(const char *dir);

#endif

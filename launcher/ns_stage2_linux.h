// ns-run's stage 2 (ns_stage2_linux.c), which runs the stages in order;
// stage 1 (ns_stage1_linux.c) starts it as pid 2.
#ifndef SBX_NS_STAGE2_LINUX_H
#define SBX_NS_STAGE2_LINUX_H

#include "shared_spec_linux.h"

// sbx_ns_stage2 is stage 2, run as pid 2 on the spec stage 1 decoded:
// build the root, confine, exec the command. It never returns.
void sbx_ns_stage2(const struct spec *spec) __attribute__((noreturn));

#endif

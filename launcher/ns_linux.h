// What ns-run's stage 1 (ns_stage1_linux.c) and stage 2 (ns_stage2_linux.c
// and the files of its sections) share: the bridge stage 1 connected, the
// mounts pid 1 watches. What a stage exports is in its own header.
#ifndef SBX_NS_LINUX_H
#define SBX_NS_LINUX_H

#include <stddef.h>

#include "shared_contract_linux.h"
#include "shared_linux.h"
#include "shared_spec_linux.h"

// sbx_ns_bridge is stage 1's connection to the provider's bridge (-bridge),
// made while the host's tree is in view, or -1. Stage 2 sends the loopback
// listeners for the spec's ports over it (SBX_BRIDGE_HELLO, the token, the
// ports, the descriptors); stage 1 holds it until the sandbox ends, which
// tells the provider to close them.
extern int sbx_ns_bridge;

// sbx_watch is one mount pid 1 watches once the command runs: a mount that
// protects a path (a read-only bind, a pin, a deny-read mount), by its
// mount id (statx STATX_MNT_ID, the first column of mountinfo). A host
// process that renames or removes the file under such a mount makes the
// kernel detach it, and the path beneath is then exposed.
struct sbx_watch {
	unsigned long long id;
	const char *path;
};

// sbx_ns_watch and sbx_ns_nwatch are filled by stage 2 while it builds the
// root, in pid 1's memory (pid 2 shares it until it execs the command), and
// read by pid 1 once the command runs.
extern struct sbx_watch *sbx_ns_watch;
extern int sbx_ns_nwatch;

#endif

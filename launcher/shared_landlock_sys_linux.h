// The Landlock system calls as both C launchers make them (ns-run's
// rulesets in ns_confine_linux.c, landlock-run's in landlock_run_linux.c).
#ifndef SBX_SHARED_LANDLOCK_SYS_LINUX_H
#define SBX_SHARED_LANDLOCK_SYS_LINUX_H

#include <stdint.h>
#include <sys/syscall.h>

// The few Landlock definitions the C launchers need, spelled out: the
// build host's headers may predate them. The ABI levels and the access
// rights are shared_contract_linux.h's.
#define SBX_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define SBX_LANDLOCK_RULE_PATH_BENEATH 1
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
struct sbx_ruleset_attr {
	uint64_t handled_access_fs, handled_access_net, scoped;
};
struct sbx_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));
#define SBX_LANDLOCK_CREATE_RULESET_ERRATA (1U << 1)
#define SBX_LANDLOCK_RULE_NET_PORT 2
struct sbx_net_port_attr {
	uint64_t allowed_access, port;
} __attribute__((packed));

#endif

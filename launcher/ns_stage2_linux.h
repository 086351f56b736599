// Internal to ns-run's stage 2: what its sections (ns_decode, ns_paths,
// ns_plan, ns_mounts, ns_net, ns_confine, ns_guard, and ns_stage2, the
// orchestrator) share.
#ifndef SBX_NS_STAGE2_LINUX_H
#define SBX_NS_STAGE2_LINUX_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ns_linux.h"

#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#define SBX_OPEN_TREE_CLONE 1
#define SBX_MOVE_MOUNT_F_EMPTY_PATH 0x04
#define SBX_MOVE_MOUNT_T_EMPTY_PATH 0x40
#define SBX_FSCONFIG_SET_FLAG 0
#define SBX_FSCONFIG_SET_STRING 1
#define SBX_FSCONFIG_CMD_CREATE 6

int ns_resolve_error(const char *what, const char *p, char *err, size_t errlen);
void ns_resolve_failed(const char *what, const char *p);
struct sbx_plan;
void ns_build_root(const struct spec *s, struct sbx_plan *p);
void ns_enter_dir(const char *dir);
void ns_loopback_up(void);
void ns_hand_over_ports(const struct spec *s);
void ns_scope_signals(void);
// ns_guards reports whether the guard runs for s: guarded names, or
// read-only or deny-read paths inside a writable root or the temp dir (the
// provider's filter has the guard's rules exactly then: key.Guards in
// internal/seccompfilter/key).
int ns_guards(const struct spec *s);
int ns_guard_fork(const struct spec *s, const struct sbx_plan *plan);
void ns_guard_hand_over(int sock, int listener);
int ns_guard_take_listener(int sock);
__attribute__((noreturn)) void ns_guard_serve(int listener, const struct sbx_plan *plan);
void ns_confine_unix_sockets(const struct spec *s);
void ns_carve_deny_read(const struct spec *s, const struct sbx_plan *plan);
int ns_landlock_abi(void);

#endif

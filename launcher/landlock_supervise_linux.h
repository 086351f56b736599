// The supervised start of landlock-run (landlock_supervise_linux.c), called from its
// C constructor (landlock_start_linux.c).
#ifndef SBX_LANDLOCK_SUPERVISE_LINUX_H
#define SBX_LANDLOCK_SUPERVISE_LINUX_H

#include "shared_spec_linux.h"

// sbx_landlock_supervise splits the process the consumer spawned into three:
//
//   relay (this pid)  forwards signals, waits, mirrors the status
//     supervisor      subreaper in a process group of its own: forwards,
//                     reaps, kills every descendant when the command ends
//                     or the relay dies
//       launcher      returns from this call: landlock-run
//                     (landlock_run_linux.c), which confines itself and
//                     execs the command in place
//
// s is the launcher's decoded arguments: the supervisor takes the roots
// its metadata calls may change from it. It returns only in the launcher, with the signal mask and the SIGCHLD
// disposition the process started with. A failure before the launcher
// exists is fatal (one line signed with token, exit 125); the relay and the
// supervisor end with the command's status.
void sbx_landlock_supervise(const char *token, const struct spec *s);

// sbx_landlock_notify_sock is the launcher's end of the socket on which it
// sends the supervisor its seccomp listener, or -1.
int sbx_landlock_notify_sock(void);

#endif

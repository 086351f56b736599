// The last steps both C launchers (ns-run's stage 2, landlock-run) take
// once their own confinement is in place: capabilities, descriptors, the
// seccomp program, the terminal, the signal state, the environment, the
// probe's answer, and the exec of the command.
#ifndef SBX_SHARED_SEAL_LINUX_H
#define SBX_SHARED_SEAL_LINUX_H

#include "shared_spec_linux.h"

// sbx_set_limits sets the command's resource limits the spec carries
// (-nproc: RLIMIT_NPROC; -as: RLIMIT_AS), soft and hard, so that the
// command, which has no capability left, can lower them but never raise
// them. Fatal when one cannot be set. Called just before the exec.
void sbx_set_limits(const struct spec *s);

// sbx_drop_capabilities leaves the command no capability across exec: the
// ambient set cleared, the bounding set emptied, the permitted, effective
// and inheritable sets emptied. With bounding_must, a refused bounding-set
// drop is fatal (ns-run holds every capability of its user namespace);
// without, EPERM (no CAP_SETPCAP) ends that loop: with no_new_privs,
// exec never grants more than the permitted set held before it, whatever
// the bounding set, file capabilities or uid 0.
void sbx_drop_capabilities(int bounding_must);

// sbx_close_extra_fds marks every descriptor above stderr close-on-exec.
void sbx_close_extra_fds(void);

// sbx_load_seccomp sets no_new_privs and loads the program the provider
// compiled for this spec (-seccomp, checked as hex instructions by the
// decoder). With listener, it is loaded with a listener, which it returns
// (else -1). killable asks for WAIT_KILLABLE_RECV (Linux 5.19; an older
// kernel loads without it): a supervisor that makes each call itself
// (ns-run's guard) must not see the command's call restarted by a signal
// once it read it, which would make it twice (a second mkdir answering
// EEXIST); the call is then held until the answer, fatal signals aside.
int sbx_load_seccomp(const char *program, int listener, int killable);

// sbx_leave_terminal gives a command that was handed no terminal on its
// stdin, stdout or stderr no controlling terminal either.
void sbx_leave_terminal(void);

// sbx_reset_signals: nothing blocked, every disposition the default.
void sbx_reset_signals(void);

// sbx_release_env gives the command back the variables the provider held
// from the launcher's start (vocab.ReleaseEnv).
void sbx_release_env(void);

// sbx_exec_command execs cmd as Go's exec.LookPath finds it: 127 when it
// is not found, 126 when it cannot run.
void sbx_exec_command(char **cmd) __attribute__((noreturn));

// sbx_probe proves the confinement from inside and answers on stdout (the
// probe ok line), or fails with the fatal line: a write in the one
// writable root works, a write beside it (or in its read-only subpath) is
// refused with EACCES or EROFS; with metadata, a chmod in the root works
// and takes (landlock-run's metadata supervisor).
void sbx_probe(const struct spec *s, int metadata) __attribute__((noreturn));

#endif

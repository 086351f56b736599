// Shared by the C starts of both Linux launchers (ns-run's stage 1,
// landlock-run's supervisor): the fatal line (the Go side is internal/vocab's
// FatalLine: "NAME: fatal: [TOKEN] reason", exit 125), the signals passed
// on to the command, a death by the command's signal, and the one "is this
// path beneath that one" of the C side.
#ifndef SBX_SHARED_LINUX_H
#define SBX_SHARED_LINUX_H

#include <signal.h>
#include <stdarg.h>
#include <sys/types.h>

#include "shared_contract_linux.h"

// sbx_name is the running C launcher's name (SBX_NS_RUN or
// SBX_LANDLOCK_RUN), set by its constructor before anything can fail: the
// fatal line, the probe's answer and the exec's complaints carry it.
extern const char *sbx_name;

// sbx_token is the wrap's token, moved out of the environment by the
// launcher's constructor (empty until then).
extern char sbx_token[SBX_TOKEN_LEN + 1];

// sbx_fatal prints sbx_name's one fatal line, signed with token when it is
// valid, and exits 125. The command has not run.
void sbx_fatal(const char *token, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

// sbx_must is sbx_fatal (signed with sbx_token) when rc < 0: "what path:
// the error".
void sbx_must(int rc, const char *what, const char *path);

// sbx_xstrdup is strdup, fatal when memory runs out.
char *sbx_xstrdup(const char *p);

// sbx_open_strict opens path (relative to dirfd; beneath it when beneath
// is set) as an O_PATH descriptor with openat2, following no symlink in
// any component: ELOOP when one is there.
int sbx_open_strict(int dirfd, const char *path, int flags, int beneath);

// sbx_swapped_or is the reason to give for a failed strict open.
const char *sbx_swapped_or(int e);

// sbx_send_fd hands fd over on the socket sock (one byte, fd in
// SCM_RIGHTS), then closes both; what names the hand-over in the fatal
// line when the send fails (the receiver gone).
void sbx_send_fd(int sock, int fd, const char *what);

// sbx_valid_token reports whether t is a wrap token (vocab.ValidToken).
int sbx_valid_token(const char *t);

// sbx_vfatal prints the fatal line of the launcher called name, signed with
// token when it is valid, and exits 125. The command has not run.
void sbx_vfatal(const char *name, const char *token, const char *fmt, va_list ap) __attribute__((noreturn, format(printf, 3, 0)));

// sbx_pass_signals installs handler (SA_SIGINFO, SA_RESTART) for every
// signal a launcher passes on to the command: SIGINT, SIGTERM, SIGHUP,
// SIGQUIT, SIGUSR1, SIGUSR2. A handler should skip those the kernel
// generated (si_code > 0: the terminal's ^C, a hang-up), which reached the
// command itself, in the same process group.
void sbx_pass_signals(void (*handler)(int, siginfo_t *, void *));

// sbx_passed_signals adds the same signals to set.
void sbx_passed_signals(sigset_t *set);

// sbx_die_with_spawner makes the kernel SIGKILL this process when the
// thread that spawned it exits (PR_SET_PDEATHSIG), and ends it at once when
// the spawner is already gone. -1 with errno when the prctl fails.
int sbx_die_with_spawner(void);

// sbx_within reports whether the clean absolute path p is root or lies
// beneath it: the C twin of vocab.Within (internal/vocab/within.go), for
// the code that runs before the Go runtime; the two must agree.
int sbx_within(const char *p, const char *root);

// sbx_join_cgroup moves the calling process into the cgroup directory dir
// (writes 0 to its cgroup.procs), so that it and every process it starts
// afterwards count against the limits the provider set there; fatal when
// it cannot (the limit would not hold).
void sbx_join_cgroup(const char *token, const char *dir);

// sbx_die_of ends the process by sig, the signal the command died of, so
// its spawner sees what it would see with the command run bare: the
// default action, without a core dump of its own (RLIMIT_CORE 0 and not
// dumpable, which a core_pattern pipe also honours). Should the process
// survive it (a signal whose default is not to end it), it exits 128+N.
void sbx_die_of(int sig) __attribute__((noreturn));

// sbx_peek copies size bytes at addr in pid's memory into buf (a seccomp
// listener reading a notified call's arguments); how many it copied, or
// -1 with errno. The caller checks SECCOMP_IOCTL_NOTIF_ID_VALID afterwards:
// the pid may have been reused.
ssize_t sbx_peek(pid_t pid, unsigned long long addr, void *buf, size_t size);

// sbx_read_path copies the NUL-terminated string at addr in pid's memory
// into buf (size bytes); 0 or an errno (ENAMETOOLONG when it does not fit).
int sbx_read_path(pid_t pid, unsigned long long addr, char *buf, size_t size);

// sbx_refusals_fd is the descriptor on which the guard (ns-run) or the
// metadata supervisor (landlock-run) records the refusals it makes
// (vocab.RefusalsEnv, the record format in internal/vocab/refusals.go);
// -1 when the spawner passed none.
extern int sbx_refusals_fd;

// sbx_take_refusals_fd takes RefusalsEnv out of the environment and keeps
// the descriptor it names in sbx_refusals_fd, made non-blocking (a writer
// never waits for the reader: a record with no room is counted instead).
// Fatal, signed with token, when it names no pipe above 2.
void sbx_take_refusals_fd(const char *token);

// sbx_refused records one refusal (op, rule: the SBX_REFUSAL_* words;
// path: as the guard or supervisor resolved it), as
// vocab.RefusalRecorder decides: a repeat is not recorded again, past
// SBX_MAX_REFUSAL_RECORDS only counted. Nothing without a descriptor.
void sbx_refused(const char *op, const char *rule, const char *path);

// sbx_sync_wakeup asks the kernel to wake the caller of a notified call
// and the listener's reader on one CPU (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
// Linux 6.6): the command waits for each answer, and a wake-up through the
// scheduler each way is half a call's cost on a quiet machine. Older
// kernels go without; the calls are answered all the same.
void sbx_sync_wakeup(int listener);

// sbx_refusals_end writes the last count line, when one is owed.
void sbx_refusals_end(void);

// sbx_refusals_reset makes fd the descriptor of a fresh writer, which has
// recorded and dropped nothing: for the test that holds the C writer to
// vocab.RefusalRecorder.
void sbx_refusals_reset(int fd);

#endif

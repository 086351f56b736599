//go:build !sandbox_gosupervisor

// Start-up of the landlock-run launcher, in C, before the Go runtime.
//
// landlock-run itself is Go (landlock_run_linux.go), and its process lives
// only until it execs the command, so two settings that suit a long-lived
// Go program only cost it time:
//
//   - glibc gives each new thread that calls malloc an arena of its own (a
//     64 MiB reservation, trimmed: four system calls and the page faults of
//     its header), and every thread the Go runtime starts in a cgo binary
//     does call it (its stack bounds come from pthread_getattr_np, which
//     allocates). One arena is plenty: M_ARENA_MAX=1.
//   - the Go runtime starts a thread for every idle P it wakes while it
//     starts its own goroutines; with GOMAXPROCS=1 it starts none of those
//     (about 1 ms of a launch on the project's VM). The runtime reads
//     GOMAXPROCS from the environment block on the stack, which a
//     constructor cannot grow; so, unless the caller set GOMAXPROCS itself,
//     the slot of SANDBOX_LOCAL_WRAP_TOKEN (which the launcher removes
//     before the command starts anyway) is pointed at "GOMAXPROCS=1", and
//     the token is kept here for the launcher (sbx_landlock_token), which
//     removes GOMAXPROCS again before it execs the command.
//
// Then it starts the supervisor (supervise_linux.c), which forks twice: this
// process stays a relay in C, a supervisor in C ends whatever the command
// leaves behind, and only the launcher, its child, goes on into Go.
//
// Only glibc passes argc, argv and envp to a constructor (ns-run's stage 1
// relies on the same); elsewhere no supervisor starts, and the Go launcher
// refuses to run a command (supervised()).

#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "contract_linux.h"
#include "supervise_linux.h"

#define SBX_TOKEN_VAR SBX_TOKEN_ENV "="

static char sbx_ll_token[65];
static int sbx_ll_token_moved;
static char sbx_ll_gomaxprocs[] = "GOMAXPROCS=1";

// sbx_landlock_token returns the wrap token the constructor moved out of
// the environment, or NULL when it moved nothing.
const char *sbx_landlock_token(void) { return sbx_ll_token_moved ? sbx_ll_token : NULL; }

// sbx_ll_supervised is 1 in a launcher that started under its supervisor
// (supervise_linux.c); the Go launcher refuses to run a command without.
static int sbx_ll_supervised;

int sbx_landlock_supervised(void) { return sbx_ll_supervised; }

// move_token keeps the token here and points its slot at GOMAXPROCS=1,
// unless the caller set GOMAXPROCS (the caller's choice, for the command
// too) or there is no token (the launcher fails closed).
static void move_token(char **envp) {
	int slot = -1;
	for (int i = 0; envp[i]; i++) {
		if (strncmp(envp[i], "GOMAXPROCS=", 11) == 0)
			return;
		if (slot < 0 && strncmp(envp[i], SBX_TOKEN_VAR, strlen(SBX_TOKEN_VAR)) == 0)
			slot = i;
	}
	if (slot < 0 || strlen(envp[slot]) - strlen(SBX_TOKEN_VAR) >= sizeof sbx_ll_token)
		return;
	char *value = envp[slot] + strlen(SBX_TOKEN_VAR);
	strcpy(sbx_ll_token, value);
	sbx_ll_token_moved = 1;
	// /proc/PID/environ shows the original block, pointer or not.
	memset(value, 'x', strlen(value));
	envp[slot] = sbx_ll_gomaxprocs;
}

__attribute__((constructor)) static void sbx_landlock_start(int argc, char **argv, char **envp) {
#if defined(__GLIBC__)
	if (argc < 1 || argv == NULL || argv[0] == NULL || strcmp(argv[0], SBX_LANDLOCK_RUN) != 0 || envp == NULL)
		return;
#ifdef M_ARENA_MAX
	mallopt(M_ARENA_MAX, 1);
#endif
	move_token(envp);
	sbx_landlock_supervise(sbx_ll_token_moved ? sbx_ll_token : getenv(SBX_TOKEN_ENV), argc, argv);
	sbx_ll_supervised = 1;
#else
	(void)argc;
	(void)argv;
	(void)envp;
#endif
}

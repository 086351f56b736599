// Start-up of the landlock-run launcher, in C, before (and instead of) the
// Go runtime: the constructor takes the wrap's token out of the
// environment, starts the supervisor (landlock_supervise_linux.c), which forks
// twice (this process stays a relay in C, a supervisor in C ends whatever
// the command leaves behind), and in the third process, the launcher, runs
// landlock-run itself (landlock_run_linux.c), which execs the command. The
// Go runtime never starts.
//
// Only glibc passes argc, argv and envp to a constructor (ns-run's stage 1
// relies on the same); elsewhere nothing happens here, and the Go
// launcher refuses to run a command (landlock_start_linux.go: supervised).

#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "shared_contract_linux.h"
#include "landlock_run_linux.h"
#include "shared_linux.h"
#include "landlock_supervise_linux.h"

// take_token moves the token from the environment into sbx_token: the
// command never sees it, and /proc/PID/environ, which shows the original
// block whatever the pointers say, shows it overwritten.
static void take_token(void) {
	char *value = getenv(SBX_TOKEN_ENV);
	if (value == NULL)
		return;
	if (sbx_valid_token(value))
		strcpy(sbx_token, value);
	memset(value, 'x', strlen(value));
	unsetenv(SBX_TOKEN_ENV);
}

__attribute__((constructor)) static void sbx_landlock_start(int argc, char **argv, char **envp) {
	(void)envp;
#if defined(__GLIBC__)
	if (argc < 1 || argv == NULL || argv[0] == NULL || strcmp(argv[0], SBX_LANDLOCK_RUN) != 0)
		return;
	sbx_name = SBX_LANDLOCK_RUN;
	take_token();
	// The refusal record's descriptor (vocab.RefusalsEnv): the supervisor
	// keeps it, the relay and the launcher close theirs.
	sbx_take_refusals_fd(sbx_token);
	// Decoded once, before the forks (sbx_start, which joins the cgroups
	// too, so the supervisor and the command count against their limits):
	// the supervisor takes its roots from it, the launcher everything
	// else. Malformed arguments end the launch here, before any process of
	// the sandbox exists.
	static struct spec s;
	sbx_start(argc, argv, sbx_token, &s);
	sbx_landlock_supervise(sbx_token, &s);
	sbx_landlock_run(&s);
#else
	(void)argc;
	(void)argv;
#endif
}

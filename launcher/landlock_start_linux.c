// Start-up of the landlock-run launcher, in C, before the Go runtime.
//
// landlock-run itself is Go (landlock_run_linux.go), and its process lives
// only until it execs the command. glibc gives each new thread that calls
// malloc an arena of its own (a 64 MiB reservation, trimmed: four system
// calls and the page faults of its header), and every thread the Go
// runtime starts in a cgo binary does call it (its stack bounds come from
// pthread_getattr_np, which allocates). One arena is plenty for a process
// that allocates next to nothing in C: the launcher's threads share the
// main one. Nothing else changes, and exec resets it for the command.

#define _GNU_SOURCE
#include <malloc.h>
#include <string.h>

__attribute__((constructor)) static void sbx_landlock_start(int argc, char **argv, char **envp) {
	(void)envp;
	// Only glibc passes argc and argv to a constructor (ns-run's stage 1
	// relies on the same); elsewhere the launcher simply keeps its arenas.
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
	if (argc >= 1 && argv != NULL && argv[0] != NULL && strcmp(argv[0], "landlock-run") == 0)
		mallopt(M_ARENA_MAX, 1);
#else
	(void)argc;
	(void)argv;
#endif
}

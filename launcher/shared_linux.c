// Shared by the C starts of both Linux launchers: see shared_linux.h.

#define _GNU_SOURCE
#include <stdio.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>

#include "shared_linux.h"

int sbx_valid_token(const char *t) {
	if (t == NULL || strlen(t) != SBX_TOKEN_LEN)
		return 0;
	for (const char *p = t; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}

void sbx_vfatal(const char *name, const char *token, const char *fmt, va_list ap) {
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	// One line, whatever a path in the reason holds (as vocab.FatalLine).
	for (char *c = msg; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	if (sbx_valid_token(token))
		fprintf(stderr, "%s: fatal: [%s] %s\n", name, token, msg);
	else
		fprintf(stderr, "%s: fatal: %s\n", name, msg);
	_exit(SBX_FATAL_EXIT);
}

static const int passed[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

void sbx_pass_signals(void (*handler)(int, siginfo_t *, void *)) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++)
		sigaction(passed[i], &sa, NULL);
}

void sbx_passed_signals(sigset_t *set) {
	for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++)
		sigaddset(set, passed[i]);
}

void sbx_die_of(int sig) {
	struct rlimit none = {0, 0};
	setrlimit(RLIMIT_CORE, &none);
	prctl(PR_SET_DUMPABLE, 0);
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

int sbx_within(const char *p, const char *root) {
	size_t n = strlen(root);
	if (!strcmp(root, "/"))
		return 1;
	return !strncmp(p, root, n) && (p[n] == 0 || p[n] == '/');
}

int sbx_die_with_spawner(void) {
	pid_t spawner = getppid();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return -1;
	if (getppid() != spawner)
		_exit(128 + SIGKILL); // the spawner died before the prctl took
	return 0;
}

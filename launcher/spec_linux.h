// The decoded launcher argv, shared by both C launchers (ns-run's stage 2,
// landlock-run): ns_decode_linux.c decodes it.
#ifndef SBX_SPEC_LINUX_H
#define SBX_SPEC_LINUX_H

#include <stddef.h>

// spec is a decoded launcher argv (see internal/vocab); cmd is
// NULL-terminated (it ends where argv does). abi and notice are
// landlock-run's (-abi, -notice): 0 and NULL when absent. The limits
// (-nproc, -as, -tmpsize) are 0 when absent.
struct spec {
	char **writable, **ro, **guard, **deny, **unixsock, **cgroups, **cmd;
	int nwritable, nro, nguard, ndeny, nunixsock, ncgroups, ncmd;
	int nproc;
	long long as, tmpsize;
	char *tempdir, *dir, *seccomp, *bridge, *notice;
	int allow_net, proxied, require_full, probe, abi;
	int *ports, nports;
};

// sbx_decode parses args (argv without argv[0]) into s; on failure it
// returns -1 with the reason in err.
int sbx_decode(int argc, char **args, struct spec *s, char *err, size_t errlen);

#endif

// The decoder of the launcher argv, shared by both C launchers (ns-run,
// landlock-run): shared_decode_linux.c. struct spec, what it decodes into, is
// generated from the option table (shared_contract_linux.h).
#ifndef SBX_SHARED_SPEC_LINUX_H
#define SBX_SHARED_SPEC_LINUX_H

#include <stddef.h>

#include "shared_contract_linux.h"

// sbx_decode parses args (argv without argv[0]) into s; on failure it
// returns -1 with the reason in err.
int sbx_decode(int argc, char **args, struct spec *s, char *err, size_t errlen);

// sbx_start is the one decoding of a launcher's argv (argv[0] names the
// launcher), in its constructor: malformed arguments end the launch with
// the signed line (token) and exit 125 before anything else is done. It
// then joins the cgroups (-cgroup), as the caller, before any process of
// the sandbox exists: each one the launcher starts is counted by the
// limits the provider set there.
void sbx_start(int argc, char **argv, const char *token, struct spec *s);

#endif

// ns-run stage 2's race-free paths (ns_paths_linux.c): what a stage makes
// of a path it could not resolve (the plan, ns_plan_linux.c; the
// confinement, ns_confine_linux.c).
#ifndef SBX_NS_PATHS_LINUX_H
#define SBX_NS_PATHS_LINUX_H

#include <stddef.h>

int ns_resolve_error(const char *what, const char *p, char *err, size_t errlen);
void ns_resolve_failed(const char *what, const char *p);

#endif

// The metadata calls landlock-run's supervisor makes for the command
// (landlock_metadata_linux.c).
#ifndef SBX_LANDLOCK_METADATA_LINUX_H
#define SBX_LANDLOCK_METADATA_LINUX_H

#include "shared_spec_linux.h"

// sbx_meta_roots takes the writable roots and the temp dir from the
// launcher's decoded arguments (s must outlive the supervisor); with none,
// every call is refused.
void sbx_meta_roots(const struct spec *s);

// sbx_meta_answer reads one notification from the seccomp listener and
// answers it: the call made beneath a writable root, or refused.
void sbx_meta_answer(int listener);

#endif

// ns-run stage 2: race-free paths, and the helpers every section uses.
//
// The provider resolved every path at Wrap time, but the launcher acts on
// them later, and a command of another sandbox that can write a shared
// workspace may by then have swapped a directory on a path for a symlink
// (to the user's home, or to a decoy .git). mount(2) follows symlinks in
// every component, so nothing is mounted by path here: each path is opened
// once with openat2(RESOLVE_NO_SYMLINKS), and the mount is made from and
// onto those descriptors (open_tree, mount_setattr on the detached copy,
// move_mount), so the object checked is the object used:
//
//   - writable roots, the temp dir and the pins (the directories between a
//     writable root and a read-only subpath) had no symlink at Wrap time:
//     a symlink in any of their components now is an attack, and fatal;
//   - a read-only subpath had its directories resolved at Wrap time: a
//     symlink among them now is fatal too; its last element may be a
//     symlink (documented: what it points to is kept read-only when that
//     lies in a writable root); a read-only bind that would land inside the
//     empty mount of a deny-read path is dropped (that mount hides more,
//     and the bind would show the denied file again);
//   - a deny-read path may be a symlink (it is denied as itself and as its
//     target): it is resolved once, and the empty mount goes onto that
//     resolved path, opened without symlinks;
//   - an allowed UNIX socket was resolved at Wrap time: it is bound (and
//     granted to Landlock) from a descriptor opened without symlinks, only
//     when that descriptor is a socket; otherwise it stays unreachable;
//   - every mount point in the new root is opened the same way, beneath
//     the new root, and a read-only layer or pin must find there the very
//     object it planned on.

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ns_linux.h"
#include "ns_paths_linux.h"
#include "shared_linux.h"

// ns_resolve_error is -1, with the reason in err, unless errno says the
// path is simply not there (0): a protection must never be dropped because
// a path could not be resolved.
int ns_resolve_error(const char *what, const char *p, char *err, size_t errlen) {
	if (errno == ENOENT || errno == ENOTDIR)
		return 0;
	snprintf(err, errlen, "plan the mounts: resolve %s %s: %s", what, p, strerror(errno));
	return -1;
}

// ns_resolve_failed is ns_resolve_error made fatal.
void ns_resolve_failed(const char *what, const char *p) {
	char err[512];
	if (ns_resolve_error(what, p, err, sizeof err) < 0)
		sbx_fatal(sbx_token, "%s", err);
}

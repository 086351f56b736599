// ns-run stage 2, section 5: confinement (Landlock for UNIX sockets and
// deny-read carving, capabilities, descriptors, seccomp).

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

#include "ns_confine_linux.h"
#include "ns_linux.h"
#include "ns_paths_linux.h"
#include "ns_plan_linux.h"
#include "shared_landlock_sys_linux.h"
#include "shared_linux.h"

// ns_landlock_abi is the kernel's Landlock ABI as the kernel states it.
// The provider's hostinfo.LandlockABI reads one level lower on a kernel
// whose signal scoping erratum is unfixed: there the provider reports the
// signal gap, and ns_scope_signals still scopes (more than reported, never
// less).
int ns_landlock_abi(void) {
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, SBX_LANDLOCK_CREATE_RULESET_VERSION);
	return v < 0 ? 0 : (int)v;
}

// refer_handled is the refer right where the kernel knows it (ABI 2): every
// Landlock ruleset refuses moving or linking a file into another directory
// unless a rule grants refer, handled or not, and these rulesets confine
// reads and sockets only. So each of them handles refer and grants it on
// the whole tree (allow_refer): a move or link that would give the file
// more of the ruleset's rights where it lands than where it was (a denied
// file into a readable directory) is still refused by Landlock (EXDEV).
static uint64_t refer_handled(void) { return ns_landlock_abi() >= SBX_ABI_REFER ? SBX_LANDLOCK_ACCESS_FS_REFER : 0; }

static void allow_refer(int rfd) {
	if (!refer_handled())
		return;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	sbx_must(fd, "open / for the refer rule", NULL);
	struct sbx_path_beneath_attr pb = {.allowed_access = SBX_LANDLOCK_ACCESS_FS_REFER, .parent_fd = fd};
	sbx_must(syscall(SYS_landlock_add_rule, rfd, SBX_LANDLOCK_RULE_PATH_BENEATH, &pb, 0), "landlock: allow moves and links",
	         NULL);
	close(fd);
}

// confine_unix_sockets: under network deny with UNIX sockets allowed,
// seccomp lets the command create UNIX sockets, and Landlock (ABI 9)
// limits what their connect and sendmsg reach to the allowed paths (and to
// sockets the command makes itself). On an older kernel this is the gap
// the provider reported (vocab.UnixSocketGaps), refused by require_full.
void ns_confine_unix_sockets(const struct spec *s) {
	if (s->net == SBX_NET_MODE_ALLOW || s->nunixsock == 0 || ns_landlock_abi() < SBX_ABI_RESOLVE_UNIX)
		return;
	struct sbx_ruleset_attr attr = {.handled_access_fs = SBX_LANDLOCK_ACCESS_FS_RESOLVE_UNIX | refer_handled()};
	int rfd = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
	sbx_must(rfd, "landlock: create the UNIX socket ruleset", NULL);
	allow_refer(rfd);
	for (int i = 0; i < s->nunixsock; i++) {
		// Without symlinks, and only a socket: a path swapped for a link
		// to another socket, or to a directory of them, would otherwise
		// grant that (plan_unix_sockets).
		int fd = sbx_open_strict(AT_FDCWD, s->unixsock[i], 0, 0);
		struct stat st;
		if (fd < 0 && errno != ELOOP)
			ns_resolve_failed("UNIX socket", s->unixsock[i]);
		if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))) {
			close(fd);
			fd = -1;
		}
		if (fd < 0)
			continue; // not there: it stays unreachable
		struct sbx_path_beneath_attr pb = {.allowed_access = SBX_LANDLOCK_ACCESS_FS_RESOLVE_UNIX, .parent_fd = fd};
		sbx_must(syscall(SYS_landlock_add_rule, rfd, SBX_LANDLOCK_RULE_PATH_BENEATH, &pb, 0), "landlock: allow UNIX socket",
		         s->unixsock[i]);
		close(fd);
	}
	sbx_must(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)", NULL);
	sbx_must(syscall(SYS_landlock_restrict_self, rfd, 0), "landlock: restrict", NULL);
	close(rfd);
}

// ns_scope_signals keeps the command's signals inside the sandbox. A pid
// namespace hides the host's processes from kill(pid), but kill(0) and
// killpg of the command's own process group reach every member of that
// group, and the command is still in its spawner's group: an agent that
// spawned the launcher without a group of its own (Node's spawn, Python's
// subprocess, Go's exec) would get its SIGUSR1 (Node's inspector opens) or
// SIGKILL. Landlock's signal scoping (ABI 6) refuses a signal to any
// process outside the command's domain: pid 1, stage 1, the guard, the
// spawner and its group. Below ABI 6 this is the gap vocab.NamespaceGaps
// names.
void ns_scope_signals(void) {
	if (ns_landlock_abi() < SBX_ABI_SCOPES)
		return;
	// Refer too, granted everywhere: a ruleset that does not grant it
	// refuses every move or link between directories (allow_refer).
	struct sbx_ruleset_attr attr = {.handled_access_fs = refer_handled(), .scoped = SBX_LANDLOCK_SCOPE_SIGNAL};
	int rfd = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
	sbx_must(rfd, "landlock: create the signal scope", NULL);
	allow_refer(rfd);
	sbx_must(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)", NULL);
	sbx_must(syscall(SYS_landlock_restrict_self, rfd, 0), "landlock: scope signals", NULL);
	close(rfd);
}

// on_the_way reports whether p is a carved deny-read path or one of its
// ancestors: such an entry is not granted.
static int on_the_way(const struct spec *s, const struct sbx_plan *plan, const char *p) {
	for (int i = 0; i < s->ndeny; i++)
		if (plan->carved[i] && sbx_within(s->deny[i], p))
			return 1;
	return 0;
}

// grant_siblings grants listing the directory dir (opened without
// symlinks) and everything below it, and reading every entry of it that is
// not on the way to a carved deny-read path. Listing stays open below dir
// (ls ~ works with ~/.ssh denied, and the denied directory itself lists as
// its empty mount): names are what the deny-read mount hides, files' contents
// are what Landlock keeps.
static void grant_siblings(int rfd, const struct spec *s, const struct sbx_plan *plan, const char *dir) {
	int dfd = sbx_open_strict(AT_FDCWD, dir, O_DIRECTORY, 0);
	if (dfd < 0) {
		// Not there (the deny-read path does not exist yet), or out of
		// the command's reach (EACCES: a directory above cannot be
		// searched, ns_plan_linux.c out_of_reach): nothing to grant in
		// it, and whatever is or appears there is not readable.
		if (errno != EACCES)
			ns_resolve_failed("deny-read ancestor", dir);
		return;
	}
	struct sbx_path_beneath_attr list = {.allowed_access = SBX_LANDLOCK_ACCESS_FS_READ_DIR, .parent_fd = dfd};
	sbx_must(syscall(SYS_landlock_add_rule, rfd, SBX_LANDLOCK_RULE_PATH_BENEATH, &list, 0), "landlock: allow listing", dir);
	int lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lfd < 0 && errno == EACCES) {
		// A directory the command cannot list either: none of its
		// entries is granted, so none is readable.
		close(dfd);
		return;
	}
	DIR *d = lfd < 0 ? NULL : fdopendir(lfd);
	if (!d)
		sbx_fatal(sbx_token, "list %s: %s", dir, strerror(errno));
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *p;
		if (asprintf(&p, "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name) < 0)
			sbx_fatal(sbx_token, "out of memory");
		if (on_the_way(s, plan, p)) {
			free(p);
			continue;
		}
		int fd = openat(dfd, e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0 && !S_ISLNK(st.st_mode)) {
			// A symlink needs no rule: what it points to is checked where it is.
			uint64_t rights = SBX_LANDLOCK_ACCESS_FS_READ_FILE | (S_ISDIR(st.st_mode) ? SBX_LANDLOCK_ACCESS_FS_READ_DIR : 0);
			struct sbx_path_beneath_attr pb = {.allowed_access = rights, .parent_fd = fd};
			sbx_must(syscall(SYS_landlock_add_rule, rfd, SBX_LANDLOCK_RULE_PATH_BENEATH, &pb, 0), "landlock: allow reading", p);
		}
		if (fd >= 0)
			close(fd);
		free(p);
	}
	closedir(d);
	close(dfd);
}

// carve_deny_read: the deny-read mounts sit on dentries, and a host process
// that renames a file over a denied one, or links it under a new name,
// reaches past them (pid 1 stops the sandbox when a mount is detached, a
// moment later). Landlock's rules sit on the objects: so, as the landlock
// runner does, reading is granted on every sibling of each carved
// deny-read path (the plan's carved, ns_plan_linux.c) and of each of its ancestors, and on nothing else below
// those ancestors. Entries that appear in those directories during the run
// are not readable; the denied path, whatever object is there, never is.
// After pivot_root, so every rule is on the new root's objects (its /tmp,
// /dev, /proc). Without Landlock (ABI 0) the mounts and pid 1's watch are
// all there is.
void ns_carve_deny_read(const struct spec *s, const struct sbx_plan *plan) {
	int any = 0;
	for (int i = 0; i < s->ndeny && !any; i++)
		any = plan->carved[i];
	if (!any || ns_landlock_abi() < 1)
		return;
	struct sbx_ruleset_attr attr = {.handled_access_fs =
	                                        SBX_LANDLOCK_ACCESS_FS_READ_FILE | SBX_LANDLOCK_ACCESS_FS_READ_DIR | refer_handled()};
	int rfd = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr.handled_access_fs), 0);
	sbx_must(rfd, "landlock: create the deny-read ruleset", NULL);
	allow_refer(rfd);
	// Every strict ancestor of a carved path, once.
	char **done = NULL;
	int ndone = 0;
	for (int i = 0; i < s->ndeny; i++) {
		if (!plan->carved[i])
			continue;
		char *a = sbx_xstrdup(s->deny[i]);
		for (;;) {
			char *slash = strrchr(a, '/');
			if (!slash)
				break;
			if (slash == a)
				slash[1] = 0;
			else
				*slash = 0;
			int seen = 0;
			for (int j = 0; j < ndone && !seen; j++)
				seen = !strcmp(done[j], a);
			if (!seen) {
				grant_siblings(rfd, s, plan, a);
				done = realloc(done, (ndone + 1) * sizeof *done);
				if (!done)
					sbx_fatal(sbx_token, "out of memory");
				done[ndone++] = sbx_xstrdup(a);
			}
			if (!strcmp(a, "/"))
				break;
		}
		free(a);
	}
	sbx_must(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)", NULL);
	sbx_must(syscall(SYS_landlock_restrict_self, rfd, 0), "landlock: restrict reads", NULL);
	close(rfd);
}

// landlock-run in C: the launcher the supervisor forks (landlock_supervise_linux.c)
// confines itself and execs the command without ever starting the Go
// runtime, which cost a launch about 2.6 ms (docs/performance.md). It is
// the Go launcher (landlock_run_linux.go, landlock_linux.go,
// landlock_rules.go) step for step, and that one runs in a build
// without cgo:
//
//   1. decode the arguments (shared_decode_linux.c, held to internal/vocab),
//      once, in the constructor, before the supervisor forks;
//   2. check: the kernel's Landlock ABI, read as go-landlock and the
//      provider read it (the signal scoping erratum), must be the one the
//      provider planned for (-abi), so the notice it prints (-notice) and
//      the report the consumer holds are this kernel's; -full is refused,
//      as the landlock runner always has gaps;
//   3. enter the working directory, without following a symlink;
//   4. leave the controlling terminal when none of stdio is one;
//   5. plan the Landlock rules (sbx_ll_make_plan, the Go planFS: a test
//      runs both on the same trees) and add them, each from a descriptor
//      opened as its class says, then restrict this process;
//   6. seal (shared_seal_linux.c): no capability, no descriptor beyond stdio, the
//      seccomp program loaded with a listener, which goes to the
//      supervisor (its metadata calls, landlock_metadata_linux.c);
//   7. answer the probe, or print the notice, reset the signal state, give
//      back the held variables, and exec the command.
//
// The rights and devices come from package llrights
// (landlock_rights_linux.h), the texts and levels from package vocab
// (shared_contract_linux.h): nothing here is a second definition of a fact.

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock_rights_linux.h"
#include "landlock_run_linux.h"
#include "shared_landlock_sys_linux.h"
#include "shared_seal_linux.h"
#include "shared_linux.h"
#include "landlock_supervise_linux.h"

// ---- the plan (planFS) ----

static void add(struct sbx_ll_plan *p, const char *path, uint64_t access, int dir, enum sbx_ll_class class) {
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->g = realloc(p->g, p->cap * sizeof *p->g);
		if (!p->g)
			sbx_fatal(sbx_token, "out of memory");
	}
	p->g[p->n++] = (struct sbx_ll_grant){.path = sbx_xstrdup(path), .access = access, .dir = dir, .class = class};
}

static int listed(char *const *list, int n, const char *p) {
	for (int i = 0; i < n; i++)
		if (!strcmp(list[i], p))
			return 1;
	return 0;
}

// denied: /dev or a deny-read path (the walk grants neither).
static int denied(const struct spec *s, const char *p) { return !strcmp(p, "/dev") || listed(s->deny, s->ndeny, p); }

// ancestor_of_denied: p is a proper ancestor of /dev or of a deny-read path.
static int ancestor_of_denied(const struct spec *s, const char *p) {
	if (strcmp(p, "/dev") && sbx_within("/dev", p))
		return 1;
	for (int i = 0; i < s->ndeny; i++)
		if (strcmp(s->deny[i], p) && sbx_within(s->deny[i], p))
			return 1;
	return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void walk(const struct spec *s, struct sbx_ll_plan *p, const char *path, int dir) {
	if (denied(s, path))
		return;
	if (!dir) {
		add(p, path, SBX_LL_READ_FILE, 0, SBX_LL_WALKED);
		return;
	}
	if (!ancestor_of_denied(s, path)) {
		add(p, path, SBX_LL_READ_ALL, 1, SBX_LL_WALKED);
		return;
	}
	// An ancestor of a denied path is listable (ls ~ with ~/.ssh denied),
	// unless it is denied itself (a denied ~ above a denied ~/.ssh).
	if (!listed(s->deny, s->ndeny, path))
		add(p, path, SBX_LL_READ_DIR, 1, SBX_LL_WALKED);
	DIR *d = opendir(path);
	if (!d)
		return; // unreadable: nothing beneath it is granted
	char **names = NULL;
	int n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		unsigned char t = e->d_type;
		if (t == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			t = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		}
		if (t == DT_LNK)
			continue; // a rule would land on the link's target
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			names = realloc(names, cap * sizeof *names);
			if (!names)
				sbx_fatal(sbx_token, "out of memory");
		}
		names[n] = malloc(strlen(e->d_name) + 1 + 1);
		if (!names[n])
			sbx_fatal(sbx_token, "out of memory");
		// The type rides after the name's NUL, so sorting keeps the pair.
		strcpy(names[n], e->d_name);
		names[n][strlen(e->d_name) + 1] = (char)(t == DT_DIR);
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof *names, by_name);
	for (int i = 0; i < n; i++) {
		char *child;
		if (asprintf(&child, "%s/%s", strcmp(path, "/") ? path : "", names[i]) < 0)
			sbx_fatal(sbx_token, "out of memory");
		walk(s, p, child, names[i][strlen(names[i]) + 1]);
		free(child);
		free(names[i]);
	}
	free(names);
}

// by_path sorts grants by path. The Go plan's sort is stable, and the only
// equal paths it makes are a walked read added before a writable root's
// or a socket's grant on the same path, whose access is always larger:
// so the access breaks ties into the same order.
static int by_path(const void *a, const void *b) {
	const struct sbx_ll_grant *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	return c ? c : (x->access > y->access) - (x->access < y->access);
}

void sbx_ll_make_plan(const struct spec *s, char **ptys, int nptys, struct sbx_ll_plan *out) {
	memset(out, 0, sizeof *out);
	walk(s, out, "/", 1);
	add(out, "/dev", SBX_LL_READ_DIR, 1, SBX_LL_DEVICE);
	int ndev = (int)(sizeof sbx_ll_devices / sizeof sbx_ll_devices[0]);
	for (int i = 0; i < ndev + nptys; i++) {
		const char *d = i < ndev ? sbx_ll_devices[i] : ptys[i - ndev];
		struct stat st;
		if (stat(d, &st) == 0)
			add(out, d, SBX_LL_DEVICE_RW | (S_ISDIR(st.st_mode) ? SBX_LL_READ_DIR : 0), S_ISDIR(st.st_mode), SBX_LL_DEVICE);
	}
	for (int i = 0; i < s->nwritable; i++)
		add(out, s->writable[i], SBX_LL_WRITABLE_TREE, 1, SBX_LL_ROOT);
	if (s->tempdir)
		add(out, s->tempdir, SBX_LL_WRITABLE_TREE, 1, SBX_LL_ROOT);
	if (s->net != SBX_NET_MODE_ALLOW)
		for (int i = 0; i < s->nunixsock; i++)
			add(out, s->unixsock[i], SBX_LL_RESOLVE_UNIX, 0, SBX_LL_SOCKET);
	qsort(out->g, out->n, sizeof *out->g, by_path);
}

void sbx_ll_free_plan(struct sbx_ll_plan *p) {
	for (int i = 0; i < p->n; i++)
		free(p->g[i].path);
	free(p->g);
	memset(p, 0, sizeof *p);
}

// ---- opening a grant's path ----

// open_by_components is open_strict without openat2 (a container's seccomp
// profile older than the call): each component is opened with O_NOFOLLOW
// beneath the one before, so no symlink is followed and nothing is looked
// up by path twice.
static int open_by_components(const char *path, int flags) {
	int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -1;
	char *copy = sbx_xstrdup(path), *save = NULL;
	for (char *name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
		int last = save == NULL || *save == 0;
		int next = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC | (last ? flags : 0));
		int e = errno;
		close(dir);
		struct stat st;
		if (next >= 0 && fstat(next, &st) == 0 && S_ISLNK(st.st_mode)) {
			close(next);
			next = -1, e = ELOOP;
		}
		if (next < 0) {
			free(copy);
			errno = e;
			return -1;
		}
		dir = next;
	}
	free(copy);
	return dir;
}

// open_strict opens the absolute, clean path as an O_PATH descriptor
// without following a symlink in any component (ELOOP when there is one):
// sbx_open_strict, or open_by_components where openat2 is refused.
static int open_strict(const char *path, int flags) {
	int fd = sbx_open_strict(AT_FDCWD, path, flags, 0);
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		return open_by_components(path, flags);
	return fd;
}

// add_grant adds g to the ruleset from a descriptor opened as its class
// says, after checking that it is the kind of object the plan found, so
// what is checked is what the rule is made on (the Go addGrant).
static void add_grant(int rfd, const struct sbx_ll_grant *g, uint64_t rights) {
	int fd = g->class == SBX_LL_DEVICE ? open(g->path, O_PATH | O_CLOEXEC) : open_strict(g->path, 0);
	if (fd < 0) {
		if (g->class == SBX_LL_ROOT)
			sbx_fatal(sbx_token, "landlock ruleset: writable root %s: %s", g->path, sbx_swapped_or(errno));
		if (errno == ENOENT || errno == ENOTDIR || (g->class != SBX_LL_DEVICE && errno == ELOOP))
			return;
		sbx_fatal(sbx_token, "landlock ruleset: open %s: %s", g->path, strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		sbx_fatal(sbx_token, "landlock ruleset: stat %s: %s", g->path, strerror(errno));
	if ((S_ISDIR(st.st_mode) ? 1 : 0) != g->dir) {
		if (g->class == SBX_LL_ROOT)
			sbx_fatal(sbx_token, "landlock ruleset: writable root %s is not a directory", g->path);
		close(fd);
		return; // changed since the plan looked
	}
	uint64_t access = g->access & rights;
	if (!g->dir)
		access &= SBX_LL_FILE_RIGHTS;
	if ((g->class == SBX_LL_SOCKET && !S_ISSOCK(st.st_mode)) || access == 0) {
		close(fd);
		return;
	}
	struct sbx_path_beneath_attr pb = {.allowed_access = access, .parent_fd = fd};
	if (syscall(SYS_landlock_add_rule, rfd, SBX_LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		sbx_fatal(sbx_token, "landlock ruleset: landlock_add_rule %s: %s", g->path, strerror(errno));
	close(fd);
}

// ---- the steps ----

// kernel_abi is the Landlock ABI the kernel states, 0 without Landlock.
static int kernel_abi(void) {
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, SBX_LANDLOCK_CREATE_RULESET_VERSION);
	return v < 0 ? 0 : (int)v;
}

// effective_abi is the kernel's Landlock ABI v as hostinfo.LandlockABI reads
// it: one below the signal scope's level while its erratum is unfixed. It
// is what the provider planned with (-abi) and what the notice speaks of;
// the ruleset itself is built for the kernel's own level, as go-landlock's
// best effort builds the Go launcher's: a kernel with the erratum unfixed
// still scopes signals between processes (the erratum is about threads of
// one process) and abstract UNIX sockets (no erratum at all), more than
// the report promises, never less.
static int effective_abi(int v) {
	if (v >= SBX_ABI_SCOPES) {
		long errata = syscall(SYS_landlock_create_ruleset, NULL, 0, SBX_LANDLOCK_CREATE_RULESET_ERRATA);
		if (errata < 0 || !(errata & SBX_ERRATUM_SIGNAL_SCOPING))
			v = SBX_ABI_SCOPES - 1;
	}
	return v;
}

// std_ptys lists the /dev/pts terminals behind stdin, stdout and stderr:
// the only ones the command may reopen by path.
static int std_ptys(char **out) {
	int n = 0;
	for (int fd = 0; fd <= 2; fd++) {
		char link[32], target[256];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t len = readlink(link, target, sizeof target - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		if (strncmp(target, "/dev/pts/", 9) == 0 && !listed(out, n, target))
			out[n++] = sbx_xstrdup(target);
	}
	return n;
}

// confine builds the ruleset for s on a kernel of Landlock ABI abi (its
// own level: effective_abi says why) and
// enforces it on this process: every filesystem right handled (so all that
// is not granted is denied); TCP bind and connect handled under network
// deny, connect allowed only to s's ports; signals always scoped, abstract
// UNIX sockets too under network deny; pathname UNIX sockets resolved only
// where granted, under network deny with allowed sockets. What the kernel
// lacks is left out, as go-landlock's best effort does, and -notice says so.
static void confine(const struct spec *s, int abi) {
	uint64_t fs = SBX_LL_HANDLED_FS;
	if (s->net != SBX_NET_MODE_ALLOW && s->nunixsock > 0)
		fs |= SBX_LL_RESOLVE_UNIX; // seccomp lets UNIX sockets be created only then
	// A kernel newer than go-landlock's table knows at least its last row.
	int rows = (int)(sizeof sbx_ll_fs_rights / sizeof sbx_ll_fs_rights[0]);
	struct sbx_ruleset_attr attr = {.handled_access_fs = fs & sbx_ll_fs_rights[(abi < rows ? abi : rows) - 1]};
	if (s->net != SBX_NET_MODE_ALLOW && abi >= SBX_ABI_NET_TCP)
		attr.handled_access_net = SBX_LL_NET_TCP;
	if (abi >= SBX_ABI_SCOPES)
		attr.scoped = SBX_LL_SCOPE_SIGNAL | (s->net == SBX_NET_MODE_ALLOW ? 0 : SBX_LL_SCOPE_ABSTRACT_UNIX);
	if (s->nports > 0 && abi < SBX_ABI_NET_TCP)
		// Without TCP rules the sockets seccomp lets through for the ports
		// would reach every address and port.
		sbx_fatal(sbx_token,
		          "landlock ruleset: the proxied network and allowed local ports need Landlock's TCP rules (ABI %d; this kernel "
		          "has %d)",
		          SBX_ABI_NET_TCP, abi);
	int rfd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
	sbx_must(rfd, "landlock ruleset: create", NULL);
	char *ptys[3];
	int nptys = std_ptys(ptys);
	struct sbx_ll_plan plan;
	sbx_ll_make_plan(s, ptys, nptys, &plan);
	for (int i = 0; i < plan.n; i++)
		add_grant(rfd, &plan.g[i], attr.handled_access_fs);
	sbx_ll_free_plan(&plan);
	for (int i = 0; i < s->nports; i++) {
		struct sbx_net_port_attr np = {.allowed_access = SBX_LL_CONNECT_TCP, .port = (uint64_t)s->ports[i]};
		if (syscall(SYS_landlock_add_rule, rfd, SBX_LANDLOCK_RULE_NET_PORT, &np, 0) < 0)
			sbx_fatal(sbx_token, "landlock ruleset: connect to port %d: %s", s->ports[i], strerror(errno));
	}
	sbx_must(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)", NULL);
	sbx_must((int)syscall(SYS_landlock_restrict_self, rfd, 0), "landlock_restrict_self", NULL);
	close(rfd);
}

// hand_over sends the seccomp listener to the supervisor, which performs
// the calls the program passes to it (the metadata calls) beneath a
// writable root and refuses them elsewhere.
static void hand_over(int listener) {
	int sock = sbx_landlock_notify_sock();
	if (sock < 0)
		sbx_fatal(sbx_token, "no supervisor to hand the seccomp listener to");
	sbx_send_fd(sock, listener, "hand the seccomp listener to the supervisor");
}

void sbx_landlock_run(const struct spec *s) {
	int kernel = kernel_abi(), abi = effective_abi(kernel);
	if (abi < 1)
		sbx_fatal(sbx_token, "the kernel has no Landlock");
	if (s->abi == 0)
		sbx_fatal(sbx_token, "no Landlock ABI in the arguments (-abi)");
	if (s->abi != abi)
		sbx_fatal(sbx_token, "the provider planned for Landlock ABI %d, the kernel reports %d", s->abi, abi);
	if (s->require_full)
		// The kernel's gaps the provider found (-notice), then the ones of
		// every landlock wrap: never an empty list.
		sbx_fatal(sbx_token, "full enforcement required, but: %s%s%s", s->notice ? s->notice : "", s->notice ? "; " : "",
		          SBX_LANDLOCK_UNCLOSED_GAPS);
	if (!s->seccomp)
		sbx_fatal(sbx_token, "no seccomp program in the arguments (-seccomp)");
	if (s->tmpsize)
		sbx_fatal(sbx_token, "-tmpsize: landlock-run cannot bound the temp dir (it mounts nothing)");
	if (s->overlay)
		sbx_fatal(sbx_token, "-overlay: landlock-run cannot show an overlay (it mounts nothing)");
	if (s->dir) {
		int fd = open_strict(s->dir, O_DIRECTORY);
		if (fd < 0 || fchdir(fd) < 0)
			sbx_fatal(sbx_token, "chdir %s: %s", s->dir, sbx_swapped_or(errno));
		close(fd);
	}
	sbx_leave_terminal();
	confine(s, kernel);
	sbx_drop_capabilities(0);
	sbx_close_extra_fds();
	hand_over(sbx_load_seccomp(s->seccomp, 1, 0));
	if (s->probe)
		sbx_probe(s, 1);
	if (s->notice)
		fprintf(stderr, "%s%s\n", SBX_LANDLOCK_NOTICE_PREFIX, s->notice);
	sbx_reset_signals();
	sbx_release_env();
	sbx_set_limits(s);
	sbx_exec_command(s->cmd); // cmd ends at argv[argc], which is NULL
}

// ns-run stage 2: the guard, which stops the command from creating a
// protected name that does not exist (a main repository's .git/commondir,
// a tool config the workspace lacks), and from writing to a protected name
// whose mount a host process detached (a rename over .git/config: the
// kernel detaches a mount whose dentry is renamed over or removed in
// another namespace, and the new file is then writable through the
// writable root until pid 1 stops the sandbox). A mount cannot cover a
// name that is not there, nor hold one that was replaced, so the
// namespaces profile of the seccomp filter hands every call that creates
// a name or writes through one (open and openat with O_CREAT, O_WRONLY,
// O_RDWR or O_TRUNC, creat, truncate, mkdir*, mknod*, symlink*, link*,
// rename*) to this process, which makes the call itself and answers with
// its result:
//
//   - it never answers SECCOMP_USER_NOTIF_FLAG_CONTINUE (but to an open
//     with O_PATH, which creates and writes nothing: path_only): another
//     thread of the command could rewrite the path after the check. The
//     strings are copied out of the command's memory once, the
//     notification is checked to be still live
//     (SECCOMP_IOCTL_NOTIF_ID_VALID: the pid is the command's), and the
//     call is made on the copy;
//   - it resolves the path itself, one component at a time, from the
//     command's working directory or directory descriptor (/proc/TID/cwd,
//     /proc/TID/fd/N) or the root, following symlinks by reading them, so
//     that what a path means is what it means to the command. In procfs,
//     /proc/self and /proc/thread-self are the command's, and every
//     directory it enters or object it opens there must be the command's
//     own (/proc/TGID or /proc/TID, or no process's at all): a walk into
//     any other process's entry, the guard's own and pid 1's included, is
//     refused with EACCES, so neither the guard's descriptors (the
//     listener) nor pid 1's can be reached. The links inside the command's
//     own /proc/TGID (fd/N, cwd, root, exe) are followed by the kernel,
//     relative to the command;
//   - it refuses, with EROFS, creating a guarded name: the final parent
//     directory (device, inode) and name, compared without regard to case,
//     as a new name, a rename's or a link's destination, a rename's
//     source. The directories between a writable root and each
//     guarded name are pinned (bound onto themselves) by the plan, so
//     `mv .git x; mkdir .git` fails with EBUSY instead of moving the
//     guarded parent away;
//   - it refuses, with EROFS, writing to a bound name (the read-only and
//     deny-read paths inside the writable roots, struct guarded): an open
//     for writing or with O_TRUNC, a truncate, a rename or link with it as
//     the source. A name reached through a link of the command's own /proc
//     entry (/proc/self/fd/N) is checked by what it opens: the object the
//     open gave (opened without O_TRUNC, truncated only once checked), or
//     a link's source (opened O_PATH, linked from the guard's descriptor),
//     must not be what a bound name holds now;
//   - it refuses the setuid and setgid modes at creation (EPERM, what the
//     filter answers without the guard: libseccomp drops those rules where
//     the guard's take the whole call);
//   - it makes the call with the command's umask (/proc/TID/status, read
//     for the calls it narrows: a create with a mode), its Landlock
//     domain (the guard is forked after landlock_restrict_self), its uid
//     and gid and no effective capability (no DAC override), so the
//     kernel's own checks are the command's; an open's descriptor is put
//     into the command with SECCOMP_IOCTL_NOTIF_ADDFD and
//     SECCOMP_ADDFD_FLAG_SEND;
//   - what it can keep between calls, it keeps, where keeping cannot
//     change an answer: each thread's /proc/TID and its status (a
//     descriptor that fails once its thread is gone, pid_entry), and which
//     device numbers are procfs (each file system pinned while it is
//     known, in_proc). It reaches a final's parent in one openat2 with
//     RESOLVE_NO_SYMLINKS when no directory on the way is a symlink or a
//     dot (parent_at_once), and an open or truncate looks at its final
//     component by opening it O_NOFOLLOW (LAZY). A create costs 13 system
//     calls in the working directory, 16 at any depth below it.
//   - an open that would block (a FIFO without its other end) does not
//     hold up the guard: the open is made with O_NONBLOCK, and when the
//     object is a FIFO the command did not open non-blocking, a one-shot
//     child of the guard makes the blocking open on the same directory and
//     name and answers the notification itself.
//
// The guard is outside the filter (forked before it is loaded), holds no
// capability, and is not dumpable: the command, with no capability, cannot
// ptrace it, read its memory or open its descriptors (the kernel wants
// CAP_SYS_PTRACE for a process that is not dumpable). The guard reads the
// command's memory on the ordinary ptrace check: a command that made
// itself not dumpable (PR_SET_DUMPABLE 0, as ssh does) has its creating
// calls refused (EACCES). The command cannot signal the guard either: its
// signals are scoped to its own Landlock domain (ns_scope_signals, applied
// after the guard is forked; below Landlock ABI 6 a reported gap). Should
// the guard die all the same, every creating call fails with ENOSYS, what
// the kernel answers for a notification nobody listens to; and the filter
// refuses loading another listener (EBUSY), so nothing can answer in its
// place.

#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ns_confine_linux.h"
#include "ns_guard_linux.h"
#include "ns_linux.h"
#include "ns_plan_linux.h"
#include "shared_seal_linux.h"
#include "shared_linux.h"

#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_ADDFD
#define SECCOMP_IOCTL_NOTIF_ADDFD _IOW('!', 3, struct seccomp_notif_addfd)
#endif
#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#define MAX_LINKS 40

// The guard's own state, set once in the guard process (guard_main).
static int g_root = -1;       // "/" (the sandbox's root, the command's too)
static int g_listener = -1;   // the seccomp listener, from pid 2
static struct stat g_root_st; // g_root's

// One notified call's context: the calling thread and its process.
struct ctx {
	pid_t tid, tgid;             // tgid: 0 until read from the caller's status
	unsigned long long id;       // the notification's
	int piddir, status;          // /proc/TID and its status (-1 until opened), kept (pid_entry)
	int kept;                    // piddir was opened for an earlier notification
	const struct sbx_plan *plan; // what is guarded
};

// ---- the caller's /proc entry, kept between notifications ----

// A thread's /proc/TID and its status, opened once and used for every
// call it makes (struct ctx). Such a descriptor holds the thread's struct
// pid, not its number: once the thread is gone, every lookup or read
// through it fails (ENOENT, ESRCH), even when a new thread took the same
// number. A kept entry is opened before a notification is read, when its
// number was its thread's; at that read the caller holds the number, and
// no two threads hold one at once, so a call through a kept entry that
// succeeds after the read was the caller's (or, after an exec by a thread
// of the caller's, its process's: the kernel hands the exec'ing thread
// the leader's pid). One that fails is opened again and the notification
// checked live again (fresh_entry): a failure says nothing until then.
#define KEPT 64
static struct {
	pid_t tid;
	int piddir, status;
} g_kept[KEPT];

// pid_entry fills c's piddir and status from what is kept for its tid, or
// opens /proc/TID (before the notification is checked live, so that it is
// the caller's). 0 or an errno.
static int pid_entry(struct ctx *c) {
	int slot = (int)((unsigned)c->tid % KEPT);
	if (g_kept[slot].tid == c->tid && g_kept[slot].piddir >= 0) {
		c->piddir = g_kept[slot].piddir, c->status = g_kept[slot].status, c->kept = 1;
		return 0;
	}
	if (g_kept[slot].piddir >= 0) {
		close(g_kept[slot].piddir);
		if (g_kept[slot].status >= 0)
			close(g_kept[slot].status);
	}
	char pd[32];
	snprintf(pd, sizeof pd, "/proc/%d", (int)c->tid);
	c->piddir = open(pd, O_PATH | O_DIRECTORY | O_CLOEXEC), c->status = -1, c->kept = 0;
	g_kept[slot].tid = c->tid, g_kept[slot].piddir = c->piddir, g_kept[slot].status = -1;
	return c->piddir < 0 ? ESRCH : 0;
}

// fresh_entry replaces a kept entry that failed with a new one, checked
// live again; 0, or ESRCH when it is not the caller's any more (or was
// not kept: the failure was the call's own).
static int fresh_entry(struct ctx *c) {
	if (!c->kept)
		return ESRCH;
	int slot = (int)((unsigned)c->tid % KEPT);
	g_kept[slot].piddir = -1; // closed by pid_entry, which opens a new one
	close(c->piddir);
	if (c->status >= 0)
		close(c->status);
	g_kept[slot].tid = 0;
	if (pid_entry(c) != 0 || ioctl(g_listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &c->id) < 0)
		return ESRCH;
	return 0;
}

// read_status reads the caller's thread group id and umask from
// /proc/TID/status, in one read of the kept descriptor (a read at offset 0
// is made anew); 0 or an errno.
static int read_status(struct ctx *c, mode_t *umask_out) {
	static char buf[4096];
	ssize_t n;
	for (;;) {
		if (c->status < 0 && (c->status = openat(c->piddir, "status", O_RDONLY | O_CLOEXEC)) >= 0)
			g_kept[(unsigned)c->tid % KEPT].status = c->status;
		n = c->status >= 0 ? pread(c->status, buf, sizeof buf - 1, 0) : -1;
		if (n > 0)
			break;
		if (fresh_entry(c) != 0)
			return ESRCH;
	}
	buf[n] = 0;
	char *u = strstr(buf, "\nUmask:"), *t = strstr(buf, "\nTgid:");
	if (!u || !t)
		return ESRCH;
	if (umask_out)
		*umask_out = (mode_t)strtol(u + 7, NULL, 8);
	c->tgid = (pid_t)strtol(t + 6, NULL, 10);
	return c->tgid > 0 ? 0 : ESRCH;
}

// ---- procfs ----

// Which file systems are procfs, by device number: each one seen is
// pinned (a descriptor of it kept), so that its number is not handed to
// another file system while it is known. An object's st_dev is its
// superblock's, an overlay's or btrfs subvolume's own anonymous number
// (held while that file system lives), or an overlay's writable upper
// layer's (never procfs): a known number whose file system is not procfs
// is no procfs object's. A full table is asked again each time.
#define FS_SEEN 16
static struct {
	dev_t dev;
	int proc, pin;
} g_fs[FS_SEEN];
static int g_nfs;

// in_proc reports whether fd, whose st_dev is dev, lies in procfs.
static int in_proc(int fd, dev_t dev) {
	for (int i = 0; i < g_nfs; i++)
		if (g_fs[i].dev == dev)
			return g_fs[i].proc;
	struct statfs sf;
	int proc = fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
	if (g_nfs < FS_SEEN) {
		// An O_PATH descriptor of the same object: it holds the file
		// system, not the object open (a FIFO's writer, a terminal).
		char self[64];
		snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
		int pin = open(self, O_PATH | O_CLOEXEC);
		if (pin >= 0)
			g_fs[g_nfs].dev = dev, g_fs[g_nfs].proc = proc, g_fs[g_nfs++].pin = pin;
	}
	return proc;
}

// proc_where reads where fd lies in /proc, as the kernel names it for the
// guard (procfs entries cannot be renamed); 0 or an errno.
static int proc_where(int fd, char *buf, size_t size) {
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(self, buf, size - 1);
	if (n <= 0 || (size_t)n >= size - 1)
		return EACCES;
	buf[n] = 0;
	return 0;
}

// proc_pid returns the pid of the /proc/PID entry fd lies in (0 for the
// procfs root and what belongs to no process), or -1 when fd is not in
// /proc as the guard knows it.
static long proc_pid(const char *where) {
	if (strcmp(where, "/proc") == 0)
		return 0;
	if (strncmp(where, "/proc/", 6) != 0)
		return -1;
	const char *p = where + 6;
	if (!isdigit((unsigned char)*p))
		return 0;
	char *end;
	long pid = strtol(p, &end, 10);
	return (*end == 0 || *end == '/') ? pid : -1;
}

// check_proc: an object in procfs must be the command's own (or no
// process's); anything else (the guard's entry, pid 1's, another
// process's) is refused. st: fd's. 0 or EACCES; *pid_dir says whether fd
// lies below a /proc/PID entry, where links are the kernel's to follow.
static int check_proc(struct ctx *c, int fd, const struct stat *st, int *pid_dir) {
	if (pid_dir)
		*pid_dir = 0;
	if (!in_proc(fd, st->st_dev))
		return 0;
	char where[PATH_MAX];
	if (proc_where(fd, where, sizeof where) != 0)
		return EACCES;
	long pid = proc_pid(where);
	if (pid > 0 && pid != c->tid && c->tgid == 0 && read_status(c, NULL) != 0)
		return EACCES;
	if (pid < 0 || (pid != 0 && pid != c->tgid && pid != c->tid))
		return EACCES;
	if (pid_dir)
		*pid_dir = pid != 0;
	return 0;
}

// check_fd is check_proc for a descriptor not yet looked at.
static int check_fd(struct ctx *c, int fd) {
	struct stat st;
	return fstat(fd, &st) < 0 ? EACCES : check_proc(c, fd, &st, NULL);
}

// ---- resolution ----

// A resolved path: the final component's parent (an O_PATH descriptor of
// the guard's) and its name. magic: the final is a link in the command's
// own /proc entry, for the kernel to follow.
struct where {
	int dir, own;   // own: dir is the guard's to close (where_close), not the start or the root
	struct stat st; // dir's
	char name[NAME_MAX + 2];
	int magic, trailing;
	int lazy; // the final was not looked at (LAZY): it may be a symlink
};

static void where_close(const struct where *w) {
	if (w->own)
		close(w->dir);
}

// splice_link replaces the component just read with target: rest becomes
// target/rest.
static int splice_link(char *rest, size_t size, const char *target, const char *after) {
	char tmp[PATH_MAX * 2];
	int n = snprintf(tmp, sizeof tmp, "%s%s%s", target, *after ? "/" : "", after);
	if (n < 0 || (size_t)n >= sizeof tmp || (size_t)n >= size)
		return ENAMETOOLONG;
	memcpy(rest, tmp, (size_t)n + 1);
	return 0;
}

// found fills w with the final's parent (cur, its stat st, own: the
// guard's descriptor to close) and name; 0.
static int found(struct where *w, int cur, int own, const struct stat *st, const char *name, int magic, int trailing) {
	snprintf(w->name, sizeof w->name, "%s", name);
	w->dir = cur, w->own = own, w->st = *st, w->magic = magic, w->trailing = trailing, w->lazy = 0;
	return 0;
}

// LAZY, as resolve's follow: a final symlink is followed, but the final
// (outside a /proc/PID entry, without a trailing slash) is not looked at:
// the caller opens it O_NOFOLLOW (an open without O_DIRECTORY, or O_PATH
// for a truncate), and on ELOOP or a symlink, or before
// refusing it, resolves it again with follow 1. What a symlink leads to
// is checked there as ever; any other final is what the walk would have
// given (its parent and name), one lookup sooner.
#define LAZY 2

// parent_at_once moves *cur to the final's parent in one lookup
// (openat2, RESOLVE_NO_SYMLINKS) when no directory on the way is a
// symlink, "." or "..", and rest loses all but its final: the directory
// the walk below would reach, one component at a time, and checked as
// it checks each (check_proc). A path through another process's /proc
// entry, with neither symlinks nor "..", ends inside it, and is refused
// there. Anything else (a symlink, "..", a trailing slash, a failure)
// leaves the walk to do it.
static void parent_at_once(struct ctx *c, char *rest, int *cur, int *own, struct stat *cur_st, int *pid_dir) {
	char *p = rest + strspn(rest, "/");
	char *last = strrchr(p, '/');
	if (last == NULL || last[1] == 0)
		return;
	for (char *q = p; q < last;) {
		size_t n = strcspn(q, "/");
		if ((n == 1 && q[0] == '.') || (n == 2 && q[0] == '.' && q[1] == '.'))
			return;
		q += n + strspn(q + n, "/");
	}
	*last = 0;
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	int d = (int)syscall(SYS_openat2, *cur, p, &how, sizeof how);
	*last = '/';
	struct stat st;
	int at_pid = 0;
	if (d < 0)
		return;
	if (fstat(d, &st) < 0 || check_proc(c, d, &st, &at_pid) != 0) {
		close(d);
		return;
	}
	if (*own)
		close(*cur);
	*cur = d, *own = 1, *cur_st = st, *pid_dir = at_pid;
	memmove(rest, last + 1, strlen(last + 1) + 1);
}

// resolve walks path from start (a directory of the command, opened by the
// guard, which stays the caller's to close) as the kernel would for the
// command; follow: a final symlink is followed (an open without O_NOFOLLOW
// or O_EXCL), LAZY: see there. 0 or an errno; on 0, w holds the final's parent and name.
static int resolve(struct ctx *c, int start, const char *path, int follow, struct where *w) {
	static char rest[PATH_MAX * 2];
	if (strlen(path) >= PATH_MAX)
		return ENAMETOOLONG;
	if (path[0] == 0)
		return ENOENT;
	strcpy(rest, path);
	int cur = rest[0] == '/' ? g_root : start, own = 0;
	struct stat cur_st = g_root_st;
	if (cur != g_root && fstat(cur, &cur_st) < 0)
		return errno;
	int links = 0, e = 0, pid_dir = 0;
	if ((e = check_proc(c, cur, &cur_st, &pid_dir)) != 0)
		goto fail;
	if (!pid_dir)
		parent_at_once(c, rest, &cur, &own, &cur_st, &pid_dir);
	for (;;) {
		if (rest[0] == '/') {
			if (own)
				close(cur);
			cur = g_root, own = 0, cur_st = g_root_st, pid_dir = 0;
		}
		char *p = rest;
		while (*p == '/')
			p++;
		if (*p == 0) // "/" or "dir/" ended the path: the final is the directory itself.
			return found(w, cur, own, &cur_st, ".", 0, 1);
		char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		if (len > NAME_MAX) {
			e = ENAMETOOLONG;
			goto fail;
		}
		char comp[NAME_MAX + 1];
		memcpy(comp, p, len);
		comp[len] = 0;
		char *after = slash ? slash : p + len;
		int trailing = 0;
		while (*after == '/')
			after++, trailing = 1;
		int final = *after == 0;
		// /proc/self and /proc/thread-self are the command's.
		if ((!strcmp(comp, "self") || !strcmp(comp, "thread-self")) && cur_st.st_ino == 1 && in_proc(cur, cur_st.st_dev)) {
			if (c->tgid == 0 && read_status(c, NULL) != 0) {
				e = EACCES;
				goto fail;
			}
			char target[64];
			if (comp[0] == 's')
				snprintf(target, sizeof target, "%d", (int)c->tgid);
			else
				snprintf(target, sizeof target, "%d/task/%d", (int)c->tgid, (int)c->tid);
			if ((e = splice_link(rest, sizeof rest, target, after)) != 0)
				goto fail;
			continue;
		}
		if (final && !follow) // The call creates this very name (a final symlink is not followed).
			return found(w, cur, own, &cur_st, comp, 0, trailing);
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			if (final)
				return found(w, cur, own, &cur_st, comp, 0, trailing);
			int next = openat(cur, comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (next < 0) {
				e = errno;
				goto fail;
			}
			if (own)
				close(cur);
			cur = next, own = 1;
			if (fstat(cur, &cur_st) < 0) {
				e = errno;
				goto fail;
			}
			if ((e = check_proc(c, cur, &cur_st, &pid_dir)) != 0)
				goto fail;
			memmove(rest, after, strlen(after) + 1);
			continue;
		}
		if (final && follow == LAZY && !pid_dir && !trailing) {
			found(w, cur, own, &cur_st, comp, 0, 0);
			w->lazy = 1;
			return 0;
		}
		int next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (next < 0 || fstat(next, &st) < 0) {
			e = errno;
			if (next >= 0)
				close(next);
			if (final && e == ENOENT) // Not there: the name to create.
				return found(w, cur, own, &cur_st, comp, 0, trailing);
			goto fail;
		}
		if (S_ISLNK(st.st_mode)) {
			if (pid_dir) {
				// A link of the command's own /proc entry (fd/N, cwd, root):
				// the kernel follows it, relative to that entry.
				close(next);
				if (final)
					return found(w, cur, own, &cur_st, comp, 1, trailing);
				next = openat(cur, comp, O_PATH | O_CLOEXEC);
				if (next < 0 || fstat(next, &st) < 0) {
					e = errno;
					if (next >= 0)
						close(next);
					goto fail;
				}
			} else {
				// Read through the descriptor that saw the symlink: by name,
				// one swapped for a file since would answer EINVAL, which
				// the kernel's own walk never gives.
				char target[PATH_MAX];
				ssize_t n = ++links > MAX_LINKS ? (errno = ELOOP, -1) : readlinkat(next, "", target, sizeof target - 1);
				e = errno;
				close(next);
				if (n < 0)
					goto fail;
				target[n] = 0;
				if (n == 0) {
					e = ENOENT;
					goto fail;
				}
				if ((e = splice_link(rest, sizeof rest, target, trailing && final ? "." : after)) != 0)
					goto fail;
				continue;
			}
		}
		if (final) { // Followed to an object that exists: it is the final.
			close(next);
			return found(w, cur, own, &cur_st, comp, 0, trailing);
		}
		if (own)
			close(cur);
		cur = next, own = 1, cur_st = st;
		if ((e = check_proc(c, cur, &cur_st, &pid_dir)) != 0)
			goto fail;
		memmove(rest, after, strlen(after) + 1);
	}
fail:
	if (own)
		close(cur);
	return e;
}

// g_hit is the guarded name is_guarded or holds_bound last found (NULL
// when it could not tell, and refused all the same): what refuse records.
static const struct guarded *g_hit;

// refuse records the refusal of g_hit (op: what was tried) and returns
// -EROFS, the guard's answer.
static int refuse(const char *op) {
	if (g_hit != NULL)
		sbx_refused(op, SBX_REFUSAL_RULE_PROTECTED, g_hit->path);
	return -EROFS;
}

// open_op is what an open refused at g_hit tried: creating a name the
// plan holds as absent, else writing a bound one.
static const char *open_op(void) { return g_hit != NULL && !g_hit->bound ? SBX_REFUSAL_OP_CREATE : SBX_REFUSAL_OP_WRITE; }

// is_guarded reports whether w's name in its directory is a guarded name
// (creating it is refused), or with bound_only a bound one (writing to it
// is refused); g_hit is that name.
static int is_guarded(struct ctx *c, const struct where *w, int bound_only) {
	g_hit = NULL;
	for (int i = 0; i < c->plan->nguarded; i++) {
		const struct guarded *g = &c->plan->guarded[i];
		if ((g->bound || !bound_only) && g->dev == w->st.st_dev && g->ino == w->st.st_ino && strcasecmp(g->name, w->name) == 0) {
			g_hit = g;
			return 1;
		}
	}
	return 0;
}

// holds_bound reports whether fd is the object a bound name holds now
// (what the guard sees at its path: the mount's, or what a host process
// renamed over it since).
static int holds_bound(struct ctx *c, int fd) {
	struct stat st, at;
	g_hit = NULL;
	if (fstat(fd, &st) < 0)
		return 1; // cannot tell: refused
	for (int i = 0; i < c->plan->nguarded; i++) {
		const struct guarded *g = &c->plan->guarded[i];
		if (g->bound && fstatat(g_root, g->path + 1, &at, AT_SYMLINK_NOFOLLOW) == 0 && at.st_dev == st.st_dev &&
		    at.st_ino == st.st_ino) {
			g_hit = g;
			return 1;
		}
	}
	return 0;
}

// writes reports whether open flags write to what they name.
static int writes(int flags) { return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_CREAT)); }

// ---- the command's context ----

// start_dir opens the directory a relative path of the command starts
// from: its working directory, or its descriptor dirfd (the root for an
// absolute path, not to be closed: end_dir).
static int start_dir(struct ctx *c, int dirfd, const char *path) {
	if (path[0] == '/')
		return g_root;
	char what[32];
	if (dirfd == AT_FDCWD)
		snprintf(what, sizeof what, "cwd");
	else
		snprintf(what, sizeof what, "fd/%d", dirfd);
	int fd = openat(c->piddir, what, O_PATH | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && fresh_entry(c) == 0)
		fd = openat(c->piddir, what, O_PATH | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		errno = EBADF;
	return fd;
}

static void end_dir(int fd) {
	if (fd != g_root)
		close(fd);
}

// ---- the calls ----

// A decoded call.
struct call {
	long nr;
	int dirfd, dirfd2; // of path and path2
	char path[PATH_MAX], path2[PATH_MAX];
	int has2, flags;
	unsigned mode;
	unsigned long long dev;
	long long length; // a truncate's
	enum { C_OPEN, C_MKDIR, C_MKNOD, C_SYMLINK, C_LINK, C_RENAME, C_TRUNCATE } op;
};

static int decode(const struct seccomp_notif *req, struct call *k) {
	const unsigned long long *a = req->data.args;
	unsigned long long p1 = 0, p2 = 0;
	memset(k, 0, sizeof *k);
	k->nr = req->data.nr;
	k->dirfd = k->dirfd2 = AT_FDCWD;
	switch (req->data.nr) {
#ifdef SYS_open
	case SYS_open:
		k->op = C_OPEN, p1 = a[0], k->flags = (int)a[1], k->mode = (unsigned)a[2];
		break;
#endif
	case SYS_openat:
		k->op = C_OPEN, k->dirfd = (int)a[0], p1 = a[1], k->flags = (int)a[2], k->mode = (unsigned)a[3];
		break;
#ifdef SYS_creat
	case SYS_creat:
		k->op = C_OPEN, p1 = a[0], k->flags = O_CREAT | O_WRONLY | O_TRUNC, k->mode = (unsigned)a[1];
		break;
#endif
#ifdef SYS_mkdir
	case SYS_mkdir:
		k->op = C_MKDIR, p1 = a[0], k->mode = (unsigned)a[1];
		break;
#endif
	case SYS_mkdirat:
		k->op = C_MKDIR, k->dirfd = (int)a[0], p1 = a[1], k->mode = (unsigned)a[2];
		break;
#ifdef SYS_mknod
	case SYS_mknod:
		k->op = C_MKNOD, p1 = a[0], k->mode = (unsigned)a[1], k->dev = a[2];
		break;
#endif
	case SYS_mknodat:
		k->op = C_MKNOD, k->dirfd = (int)a[0], p1 = a[1], k->mode = (unsigned)a[2], k->dev = a[3];
		break;
#ifdef SYS_symlink
	case SYS_symlink:
		k->op = C_SYMLINK, p2 = a[0], p1 = a[1];
		break;
#endif
	case SYS_symlinkat:
		k->op = C_SYMLINK, p2 = a[0], k->dirfd = (int)a[1], p1 = a[2];
		break;
#ifdef SYS_link
	case SYS_link:
		k->op = C_LINK, p2 = a[0], p1 = a[1];
		break;
#endif
	case SYS_linkat:
		k->op = C_LINK, k->dirfd2 = (int)a[0], p2 = a[1], k->dirfd = (int)a[2], p1 = a[3], k->flags = (int)a[4];
		break;
#ifdef SYS_rename
	case SYS_rename:
		k->op = C_RENAME, p2 = a[0], p1 = a[1];
		break;
#endif
	case SYS_renameat:
		k->op = C_RENAME, k->dirfd2 = (int)a[0], p2 = a[1], k->dirfd = (int)a[2], p1 = a[3];
		break;
#ifdef SYS_renameat2
	case SYS_renameat2:
		k->op = C_RENAME, k->dirfd2 = (int)a[0], p2 = a[1], k->dirfd = (int)a[2], p1 = a[3], k->flags = (int)a[4];
		break;
#endif
	case SYS_truncate:
		k->op = C_TRUNCATE, p1 = a[0], k->length = (long long)a[1];
		break;
	default:
		return ENOSYS;
	}
	int e = sbx_read_path(req->pid, p1, k->path, sizeof k->path);
	if (e == 0 && p2) {
		k->has2 = 1;
		e = sbx_read_path(req->pid, p2, k->path2, sizeof k->path2);
	}
	return e;
}

// hand_fd answers notification id with fd, put into the command: in one
// step where the kernel can (SECCOMP_ADDFD_FLAG_SEND, Linux 5.14), else
// put in and then answered with its number (5.9: should the call be gone
// meanwhile, the command keeps a descriptor it does not know of). A
// descriptor that cannot be put in (EMFILE) fails the call with that
// error.
static void hand_fd(unsigned long long id, int fd, int cloexec) {
	static int no_send;
	struct seccomp_notif_addfd add = {
	        .id = id, .flags = no_send ? 0 : SECCOMP_ADDFD_FLAG_SEND, .srcfd = (unsigned)fd, .newfd_flags = (unsigned)cloexec};
	int n = ioctl(g_listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	if (n < 0 && errno == EINVAL && !no_send) {
		no_send = 1;
		add.flags = 0;
		n = ioctl(g_listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
		if (n >= 0) {
			struct seccomp_notif_resp r = {.id = id, .val = n};
			ioctl(g_listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
			return;
		}
	} else if (n >= 0 && no_send) {
		struct seccomp_notif_resp r = {.id = id, .val = n};
		ioctl(g_listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
		return;
	}
	if (n < 0 && errno != ENOENT) {
		struct seccomp_notif_resp r = {.id = id, .error = -errno};
		ioctl(g_listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
	}
}

// open_blocking makes an open that must block (a FIFO without its other
// end) in a one-shot child, which answers the notification itself; the
// descriptor is close-on-exec in the command only if it asked (cloexec).
static void open_blocking(const struct seccomp_notif *req, int dir, const char *name, int flags, unsigned mode, int cloexec) {
	pid_t child = fork();
	if (child != 0) {
		if (child < 0) {
			struct seccomp_notif_resp r = {.id = req->id, .error = -EAGAIN};
			ioctl(g_listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
		}
		return; // the child is reaped by SIGCHLD being ignored
	}
	int fd = openat(dir, name, flags | O_CLOEXEC, mode);
	if (fd < 0) {
		struct seccomp_notif_resp r = {.id = req->id, .error = -errno};
		ioctl(g_listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
		_exit(0);
	}
	hand_fd(req->id, fd, cloexec);
	_exit(0);
}

// truncate_object truncates the object fd (any access mode) to length,
// as truncate(2) (want_file) or an open with O_TRUNC would: a regular
// file through a descriptor for writing opened from fd, a directory
// EISDIR, anything else EINVAL (want_file) or untouched. 0 or an errno.
static int truncate_object(int fd, long long length, int want_file) {
	struct stat st;
	if (fstat(fd, &st) < 0)
		return errno;
	if (S_ISDIR(st.st_mode))
		return EISDIR;
	if (!S_ISREG(st.st_mode))
		return want_file ? EINVAL : 0;
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	int wfd = open(self, O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (wfd < 0)
		return errno;
	int e = ftruncate(wfd, (off_t)length) < 0 ? errno : 0;
	close(wfd);
	return e;
}

// do_open makes an open for the command; it returns the guard's descriptor
// (>= 0), -errno, or -EINPROGRESS when a one-shot child answers.
static int do_open(struct ctx *c, const struct seccomp_notif *req, const struct call *k, int start) {
	int follow = !(k->flags & (O_NOFOLLOW | O_EXCL));
	// Lazy only where opening a symlink O_NOFOLLOW fails with ELOOP: with
	// O_DIRECTORY (O_TMPFILE too) it fails ENOTDIR. An open with O_PATH
	// comes here only with O_TMPFILE (path_only), so O_DIRECTORY too.
	int lazy = follow && !(k->flags & O_DIRECTORY);
	for (int attempt = 0; attempt < 8; attempt++) {
		struct where w;
		int e = resolve(c, start, k->path, lazy && attempt == 0 ? LAZY : follow, &w);
		if (e != 0)
			return -e;
		if ((k->flags & O_CREAT) && w.trailing) {
			where_close(&w);
			return -EISDIR;
		}
		// Creating refuses every guarded name, writing the bound ones.
		if (!w.magic && writes(k->flags) && is_guarded(c, &w, !(k->flags & O_CREAT))) {
			where_close(&w);
			if (w.lazy)
				continue; // a symlink's name: what it leads to is checked
			return refuse(open_op());
		}
		// The final was resolved here: a symlink put there since is not
		// followed by the kernel (ELOOP: resolved again). A link of the
		// command's own /proc entry is opened without O_TRUNC, which
		// waits until the object it gave is checked.
		int flags = k->flags | O_NOCTTY | O_CLOEXEC | O_NONBLOCK;
		int truncate_after = w.magic && (k->flags & O_TRUNC) && writes(k->flags);
		if (!w.magic)
			flags |= O_NOFOLLOW;
		if (truncate_after)
			flags &= ~O_TRUNC;
		int fd = openat(w.dir, w.name, flags, k->mode & 07777);
		e = errno;
		if (fd < 0 && e == ELOOP && !w.magic && follow && !(k->flags & O_NOFOLLOW)) {
			where_close(&w);
			continue;
		}
		int blocking = !(k->flags & O_NONBLOCK);
		struct stat st;
		if (fd < 0 && e == ENXIO && blocking) {
			// A FIFO opened for writing with no reader yet: the open must wait.
			open_blocking(req, w.dir, w.name, flags & ~O_NONBLOCK, k->mode & 07777, k->flags & O_CLOEXEC);
			where_close(&w);
			return -EINPROGRESS;
		}
		if (fd >= 0 && fstat(fd, &st) < 0) {
			e = errno;
			close(fd);
			fd = -1;
		}
		if (fd >= 0 && blocking && S_ISFIFO(st.st_mode) && (k->flags & O_ACCMODE) == O_RDONLY) {
			// A FIFO opened for reading waits for a writer.
			close(fd);
			open_blocking(req, w.dir, w.name, flags & ~O_NONBLOCK, k->mode & 07777, k->flags & O_CLOEXEC);
			where_close(&w);
			return -EINPROGRESS;
		}
		where_close(&w);
		if (fd < 0)
			return -e;
		if (blocking) {
			int fl = fcntl(fd, F_GETFL);
			if (fl >= 0)
				fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		}
		// What was opened must be the command's to have: in procfs, its own.
		if (check_proc(c, fd, &st, NULL) != 0) {
			close(fd);
			return -EACCES;
		}
		if (w.magic && writes(k->flags) && holds_bound(c, fd)) {
			close(fd);
			return refuse(SBX_REFUSAL_OP_WRITE);
		}
		if (truncate_after && (e = truncate_object(fd, 0, 0)) != 0) {
			close(fd);
			return -e;
		}
		return fd;
	}
	return -ELOOP;
}

// do_truncate makes a truncate(2) for the command: 0 or -errno.
static int do_truncate(struct ctx *c, const struct call *k, int start) {
	for (int attempt = 0; attempt < 8; attempt++) {
		struct where w;
		int e = resolve(c, start, k->path, attempt == 0 ? LAZY : 1, &w);
		if (e != 0)
			return -e;
		if (!w.magic && is_guarded(c, &w, 1)) {
			where_close(&w);
			if (w.lazy)
				continue; // a symlink's name: what it leads to is checked
			return refuse(SBX_REFUSAL_OP_TRUNCATE);
		}
		int fd = openat(w.dir, w.name, O_PATH | O_CLOEXEC | (w.magic ? 0 : O_NOFOLLOW));
		e = errno;
		where_close(&w);
		if (fd < 0)
			return -e;
		struct stat st;
		if (fstat(fd, &st) < 0) {
			e = errno;
			close(fd);
			return -e;
		}
		if (!w.magic && S_ISLNK(st.st_mode)) {
			close(fd); // a symlink put there since it was resolved
			continue;
		}
		if (check_proc(c, fd, &st, NULL) != 0)
			e = EACCES;
		else if (w.magic && holds_bound(c, fd))
			e = -refuse(SBX_REFUSAL_OP_TRUNCATE);
		else
			e = truncate_object(fd, k->length, 1);
		close(fd);
		return -e;
	}
	return -ELOOP;
}

// link_magic links the object a link of the command's own /proc entry
// leads to (w2: linkat with AT_SYMLINK_FOLLOW) at w: opened O_PATH,
// checked, and linked from the guard's own descriptor, so the command
// cannot swap what its link leads to in between. 0 or -errno.
static int link_magic(struct ctx *c, const struct where *w2, const struct where *w) {
	int fd = openat(w2->dir, w2->name, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = 0;
	if (check_fd(c, fd) != 0)
		r = -EACCES;
	else if (holds_bound(c, fd))
		r = refuse(SBX_REFUSAL_OP_LINK);
	else {
		char self[64];
		snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
		r = linkat(AT_FDCWD, self, w->dir, w->name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
	}
	close(fd);
	return r;
}

// perform makes one call for the command: 0, -errno, or for an open the
// guard's descriptor to put into the command.
static int perform(struct ctx *c, const struct seccomp_notif *req, struct call *k) {
	int start = start_dir(c, k->dirfd, k->path);
	if (start < 0)
		return -errno;
	int r = 0;
	struct where w, w2;
	switch (k->op) {
	case C_OPEN:
		if ((k->flags & O_CREAT) && (k->mode & (S_ISUID | S_ISGID)))
			r = -EPERM;
		else
			r = do_open(c, req, k, start);
		break;
	case C_TRUNCATE:
		r = do_truncate(c, k, start);
		break;
	case C_MKDIR:
	case C_MKNOD:
	case C_SYMLINK:
		if (k->op == C_MKNOD && (k->mode & (S_ISUID | S_ISGID))) {
			r = -EPERM;
			break;
		}
		if ((r = -resolve(c, start, k->path, 0, &w)) != 0)
			break;
		if (is_guarded(c, &w, 0))
			r = refuse(SBX_REFUSAL_OP_CREATE);
		else if (k->op == C_MKDIR)
			r = mkdirat(w.dir, w.name, k->mode & 07777) < 0 ? -errno : 0;
		else if (k->op == C_MKNOD)
			r = mknodat(w.dir, w.name, k->mode, (dev_t)k->dev) < 0 ? -errno : 0;
		else
			r = symlinkat(k->path2, w.dir, w.name) < 0 ? -errno : 0;
		where_close(&w);
		break;
	case C_LINK:
	case C_RENAME: {
		int start2 = start_dir(c, k->dirfd2, k->path2);
		if (start2 < 0) {
			r = -errno;
			break;
		}
		if (k->op == C_LINK && (k->flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))) {
			end_dir(start2);
			r = -EINVAL; // as linkat answers
			break;
		}
		int empty = k->op == C_LINK && (k->flags & AT_EMPTY_PATH) && k->path2[0] == 0;
		int follow = k->op == C_LINK && (k->flags & AT_SYMLINK_FOLLOW);
		if (empty) {
			w2.dir = dup(start2), w2.own = 1, w2.name[0] = 0, w2.magic = 0;
			r = w2.dir < 0 ? -errno : 0;
			if (r == 0 && check_fd(c, w2.dir) != 0) {
				close(w2.dir);
				r = -EACCES;
			}
		} else {
			r = -resolve(c, start2, k->path2, follow, &w2);
		}
		if (r != 0) {
			end_dir(start2);
			break;
		}
		if ((r = -resolve(c, start, k->path, 0, &w)) != 0) {
			where_close(&w2);
			end_dir(start2);
			break;
		}
		// A bound name is no source either: moved or linked elsewhere, what
		// a host process renamed over it would be writable there. A
		// descriptor's object (AT_EMPTY_PATH) is checked by what it is.
		if (is_guarded(c, &w, 0) || (k->op == C_RENAME && is_guarded(c, &w2, 0)) ||
		    (k->op == C_LINK && !w2.magic && (empty ? holds_bound(c, w2.dir) : is_guarded(c, &w2, 1))))
			r = refuse(k->op == C_RENAME ? SBX_REFUSAL_OP_RENAME : SBX_REFUSAL_OP_LINK);
		else if (k->op == C_LINK && w2.magic)
			r = link_magic(c, &w2, &w);
		else if (k->op == C_LINK)
			r = linkat(w2.dir, w2.name, w.dir, w.name, (empty ? AT_EMPTY_PATH : 0) | (w2.magic ? AT_SYMLINK_FOLLOW : 0)) < 0
			            ? -errno
			            : 0;
		else
			r = syscall(SYS_renameat2, w2.dir, w2.name, w.dir, w.name, (unsigned)k->flags) < 0 ? -errno : 0;
		where_close(&w);
		where_close(&w2);
		end_dir(start2); // w2's directory, when the path's first
		break;
	}
	}
	end_dir(start);
	return r;
}

// takes_umask reports whether k creates with a mode the umask narrows.
static int takes_umask(const struct call *k) {
	if (k->op == C_OPEN)
		return (k->flags & (O_CREAT | (O_TMPFILE & ~O_DIRECTORY))) != 0;
	return k->op == C_MKDIR || k->op == C_MKNOD;
}

// path_only reports whether k is an open the kernel makes with no access
// and no create, whatever its path names by the time the kernel walks it:
// O_PATH without O_TMPFILE keeps only O_DIRECTORY and O_NOFOLLOW of the
// other flags, and the flags are a register, not the command's memory. An
// O_PATH descriptor cannot be handed over (SECCOMP_IOCTL_NOTIF_ADDFD
// refuses it), so such an open, sent here for its write flags, is the
// kernel's to make.
static int path_only(const struct call *k) {
	return k->op == C_OPEN && (k->flags & O_PATH) && !(k->flags & (O_TMPFILE & ~O_DIRECTORY));
}

static void answer(const struct sbx_plan *plan) {
	static union {
		struct seccomp_notif n;
		char room[1024];
	} req;
	static struct call k;
	memset(&req, 0, sizeof req);
	if (ioctl(g_listener, SECCOMP_IOCTL_NOTIF_RECV, &req.n) < 0) {
		if (errno == EINTR)
			return;
		if (errno == ENOENT) {
			// A call withdrawn before it was read (its caller was
			// killed), or no process left under the filter: the kernel
			// (6.6 and later; older ones block) then answers every read
			// at once with ENOENT, and reading
			// on would spin until the pid namespace ends, taking a CPU
			// from pid 1 as it learns the command's exit. The listener's
			// hang-up tells the two apart.
			struct pollfd p = {.fd = g_listener, .events = POLLIN};
			if (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP) && !(p.revents & POLLIN)) {
				sbx_refusals_end();
				_exit(0);
			}
			return;
		}
		sbx_refusals_end();
		_exit(0); // the listener is gone: nothing left to guard
	}
	struct seccomp_notif_resp resp = {.id = req.n.id};
	struct ctx c = {.tid = (pid_t)req.n.pid, .id = req.n.id, .plan = plan};
	int e = pid_entry(&c);
	if (e == 0)
		e = decode(&req.n, &k);
	// The pid, the strings: the command's, if it still waits in this call.
	if (ioctl(g_listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.n.id) < 0)
		return;
	int r = -e;
	if (e == 0 && path_only(&k)) {
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		ioctl(g_listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		return;
	}
	if (e == 0 && takes_umask(&k)) {
		// The umask, read for a call it narrows only (the guard's is set
		// when it differs from the last one set).
		static int set = -1;
		mode_t um = 0;
		if ((e = read_status(&c, &um)) != 0)
			r = -e;
		else if ((int)um != set)
			umask(um), set = (int)um;
	}
	if (e == 0)
		r = perform(&c, &req.n, &k);
	if (r == -EINPROGRESS)
		return; // a one-shot child answers
	if (k.op == C_OPEN && r >= 0) {
		hand_fd(req.n.id, r, k.flags & O_CLOEXEC);
		close(r);
		return;
	}
	resp.error = r < 0 ? r : 0;
	resp.val = 0;
	ioctl(g_listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

// confine_guard narrows what the guard itself may do, once it holds the
// listener: it is outside the command's filter, and its path walk is what
// the command feeds. A filter of its own refuses (EPERM) what it never
// needs and the command's filter refuses the command: sockets of any kind,
// io_uring, exec, ptrace and other processes' memory, mounts and
// namespaces, keyrings, BPF, perf, file handles, userfaultfd; a call
// through another architecture's table kills it.
static void confine_guard(void) {
	// One line per group of calls, and an #ifdef: not reflowed.
	// clang-format off
	static const int denied[] = {
		SYS_socket, SYS_socketpair, SYS_connect, SYS_bind, SYS_listen, SYS_accept4, SYS_sendto, SYS_sendmsg,
		SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register, SYS_execve, SYS_execveat, SYS_ptrace,
		SYS_process_vm_writev, SYS_mount, SYS_umount2, SYS_pivot_root, SYS_chroot, SYS_unshare, SYS_setns,
		SYS_keyctl, SYS_add_key, SYS_request_key, SYS_bpf, SYS_perf_event_open, SYS_open_by_handle_at,
		SYS_name_to_handle_at, SYS_userfaultfd, SYS_kill, SYS_pidfd_getfd, SYS_pidfd_open, SYS_fsopen,
		SYS_fsconfig, SYS_fsmount, SYS_fspick, SYS_move_mount, SYS_open_tree, SYS_mount_setattr,
#ifdef SYS_accept
		SYS_accept,
#endif
	};
	// clang-format on
	enum { N = sizeof denied / sizeof denied[0] };
	struct sock_filter f[5 + N + 3];
	int i = 0;
#if defined(__x86_64__)
	const unsigned arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
	const unsigned arch = AUDIT_ARCH_AARCH64;
#else
#error "the guard's filter knows x86_64 and aarch64"
#endif
	f[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0);
	f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	// x32 (the same arch, numbers from 0x40000000): killed too.
	f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, N + 1, 0);
	for (int d = 0; d < N; d++)
		f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)denied[d], (unsigned char)(N + 1 - d), 0);
	f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS); // x32
	f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	struct sock_fprog prog = {.len = (unsigned short)i, .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		_exit(1);
}

// guard_main is the guard, forked from pid 2 after its Landlock rulesets
// and before its seccomp filter: sock brings the listener; plan holds the
// names it refuses.
__attribute__((noreturn)) static void guard_main(int sock, const struct sbx_plan *plan) {
	// Not the command's to ptrace: not dumpable (the kernel then wants
	// CAP_SYS_PTRACE, which the command has nowhere). No capability at
	// all, so every call is checked as the command's (no DAC override),
	// and a guard that went wrong holds nothing the command lacks.
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		_exit(1);
	sbx_drop_capabilities(1);
	// Out of the command's process group (a kill of the group must not end
	// it) and deaf to the terminal's signals; SIGCHLD ignored, so the
	// one-shot children are reaped by the kernel.
	setpgid(0, 0);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_IGN);
	// The controlling terminal, given up when pid 2 gives it up (no
	// terminal on 0-2): otherwise /dev/tty, opened by the guard, would
	// reach it.
	int tty = 0;
	for (int fd = 0; fd <= 2; fd++)
		tty |= isatty(fd);
	if (!tty) {
		int t = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
		if (t >= 0) {
			ioctl(t, TIOCNOTTY);
			close(t);
		}
	}
	// Everything pid 2 held but the socket and the refusal record (the
	// bridge, the plan's descriptors): the guard keeps only what it opens
	// itself. Each is first moved above both places, which either may hold.
	int rec = -1;
	if (sbx_refusals_fd >= 0 && (rec = fcntl(sbx_refusals_fd, F_DUPFD_CLOEXEC, 5)) < 0)
		_exit(1);
	if ((sock = fcntl(sock, F_DUPFD_CLOEXEC, 5)) < 0 || dup3(sock, 3, O_CLOEXEC) < 0)
		_exit(1);
	if (rec >= 0 && dup3(rec, 4, O_CLOEXEC) < 0)
		_exit(1);
	sock = 3;
	if (sbx_refusals_fd >= 0)
		sbx_refusals_fd = 4;
	if (syscall(SYS_close_range, 5, ~0U, 0) < 0)
		for (int fd = 5; fd < 65536; fd++)
			close(fd);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		_exit(1);
	for (int fd = 0; fd <= 2; fd++)
		dup2(null, fd);
	close(null);
	if (chdir("/") < 0)
		_exit(1);
	g_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (g_root < 0 || fstat(g_root, &g_root_st) < 0)
		_exit(1);
	g_listener = ns_guard_take_listener(sock);
	if (g_listener < 0)
		_exit(1);
	sbx_sync_wakeup(g_listener);
	close(sock);
	confine_guard();
	ns_guard_serve(g_listener, plan);
}

// ns_guard_take_listener receives the listener ns_guard_hand_over sends on
// sock: the descriptor, or -1 when none came.
int ns_guard_take_listener(int sock) {
	char b;
	struct iovec iov = {&b, 1};
	union {
		struct cmsghdr h;
		char room[CMSG_SPACE(sizeof(int))];
	} cm;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &cm, .msg_controllen = sizeof cm};
	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);
	if (!h || h->cmsg_type != SCM_RIGHTS || h->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(h), sizeof(int));
	return fd;
}

// ns_guard_serve answers the command's calls on listener until no process
// is left under the filter (or the listener fails), then exits 0.
void ns_guard_serve(int listener, const struct sbx_plan *plan) {
	g_listener = listener;
	for (int i = 0; i < KEPT; i++)
		g_kept[i].piddir = g_kept[i].status = -1;
	for (;;)
		answer(plan);
}

int ns_guards(const struct spec *s) {
	if (s->nguard > 0)
		return 1;
	for (int i = 0; i < s->nro + s->ndeny; i++) {
		const char *p = i < s->nro ? s->ro[i] : s->deny[i - s->nro];
		for (int j = 0; j <= s->nwritable; j++) {
			const char *r = j < s->nwritable ? s->writable[j] : s->tempdir;
			if (r && sbx_within(p, r))
				return 1;
		}
	}
	return 0;
}

// ns_guard_fork starts the guard, when ns_guards says so: a child of
// pid 1 (CLONE_PARENT), which reaps it, so the command never sees it among
// its children, and pid 2 waits for nothing. It returns pid 2's end of the
// socket on which the listener goes (ns_guard_hand_over), or -1 without a
// guard.
int ns_guard_fork(const struct spec *s, const struct sbx_plan *plan) {
	if (!ns_guards(s))
		return -1;
	int sv[2];
	sbx_must(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), "guard: socketpair", NULL);
	long g = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, 0);
	sbx_must((int)g, "guard: clone", NULL);
	if (g == 0) {
		close(sv[0]);
		guard_main(sv[1], plan);
	}
	close(sv[1]);
	return sv[0];
}

// ns_guard_hand_over sends the listener to the guard and closes pid 2's
// copies. It does not wait: the command's creating calls wait in the
// listener's queue until the guard reads them, and a guard that died
// first leaves them failing (ENOSYS); one that is gone already fails the
// send here.
void ns_guard_hand_over(int sock, int listener) { sbx_send_fd(sock, listener, "guard: hand over the listener"); }

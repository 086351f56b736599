// ns-run stage 2, section 2: the plan (ns_plan_linux.h), made while the
// host's tree is still in view. It opens and looks at paths, and changes
// nothing: what it refuses, it returns to the orchestrator, which makes
// it the fatal line.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ns_linux.h"
#include "ns_paths_linux.h"
#include "ns_plan_linux.h"
#include "shared_linux.h"

// refuse records why the plan is refused, and returns -1.
__attribute__((format(printf, 2, 3))) static int refuse(struct sbx_plan *p, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err, sizeof p->err, fmt, ap);
	va_end(ap);
	return -1;
}

// resolve_failed refuses unless errno says the path is simply not there
// (ns_resolve_error).
static int resolve_failed(struct sbx_plan *p, const char *what, const char *path) {
	return ns_resolve_error(what, path, p->err, sizeof p->err);
}

// add_layer adds a layer; it takes fd (closing it when the layer is
// already planned), and st, when given, is the object it was planned on.
static void add_layer(struct sbx_plan *p, int kind, const char *path, int isdir, int fd, const struct stat *st) {
	for (int i = 0; i < p->nlayers; i++)
		if (p->layers[i].kind == kind && !strcmp(p->layers[i].path, path)) {
			if (fd >= 0)
				close(fd);
			return;
		}
	if (p->nlayers == p->caplayers) {
		p->caplayers = p->caplayers ? 2 * p->caplayers : 64;
		p->layers = realloc(p->layers, p->caplayers * sizeof *p->layers);
	}
	char *copy = strdup(path);
	if (!p->layers || !copy)
		sbx_fatal(sbx_token, "plan the mounts: out of memory");
	p->layers[p->nlayers++] = (struct layer){kind, isdir, copy, fd, -1, st ? st->st_dev : 0, st ? st->st_ino : 0, 0};
}

// guard_add adds a name for the guard to refuse: name in the directory
// parent, for the protected path path.
static void guard_add(struct sbx_plan *p, const struct stat *parent, const char *name, const char *path, int bound) {
	struct guarded *g = realloc(p->guarded, (size_t)(p->nguarded + 1) * sizeof *p->guarded);
	if (!g)
		sbx_fatal(sbx_token, "guard: out of memory");
	p->guarded = g;
	p->guarded[p->nguarded++] = (struct guarded){parent->st_dev, parent->st_ino, sbx_xstrdup(name), path, bound};
}

static int depth(const char *p) {
	int d = 0;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

static int layer_cmp(const void *a, const void *b) {
	const struct layer *x = a, *y = b;
	int dx = depth(x->path), dy = depth(y->path);
	return dx != dy ? dx - dy : x->kind - y->kind;
}

// deepest_root returns the deepest writable root (or the temp dir) holding p.
static const char *deepest_root(const struct spec *s, const char *p) {
	const char *best = NULL;
	for (int i = 0; i <= s->nwritable; i++) {
		const char *r = i < s->nwritable ? s->writable[i] : s->tempdir;
		if (r && sbx_within(p, r) && (!best || strlen(r) > strlen(best)))
			best = r;
	}
	return best;
}

// plan_unix_sockets binds each allowed UNIX socket onto itself, read-only:
// a socket seen through the read-only overlay on /tmp cannot be connected to
// (the overlay's inode is not the socket), /dev is the sandbox's own, and a
// socket inside a deny-read directory is listed by name. Only a socket is
// bound: a path swapped for anything else (a symlink to a deny-read file)
// is left as the host tree has it, so a bind here can never expose a file.
// The provider resolved the path at Wrap time: it is opened without
// following any symlink (one there now, swapped in by another sandbox,
// could name another socket: it is not followed, and the path stays
// unreachable), and the bind is made from that descriptor, so what was
// checked to be a socket is what is bound.
static int plan_unix_sockets(const struct spec *s, struct sbx_plan *p) {
	struct stat st;
	for (int i = 0; i < s->nunixsock; i++) {
		int fd = sbx_open_strict(AT_FDCWD, s->unixsock[i], 0, 0);
		if (fd < 0 && errno != ELOOP && resolve_failed(p, "UNIX socket", s->unixsock[i]) < 0)
			return -1;
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
			add_layer(p, LAYER_SOCKET, s->unixsock[i], 0, fd, NULL);
		else if (fd >= 0)
			close(fd);
	}
	return 0;
}

// out_of_reach reports whether the deny-read path path, which just failed
// to resolve with errno, is one the command cannot reach either: a
// directory above it cannot be searched (EACCES: a HOME of another user,
// passed on from root), and it lies outside every writable root and the
// temp dir. The command has the caller's rights and no capability (in the
// sandbox's user namespace the caller's own files are the only ones a
// capability would reach), and there the tree is read-only, so it cannot
// change that directory's mode: the path is unreadable without a mount.
// Its Landlock carving still grants nothing below a directory that
// cannot be opened or listed (ns_confine_linux.c).
static int out_of_reach(const struct spec *s, const char *path) {
	if (errno != EACCES || (s->tempdir && sbx_within(path, s->tempdir)))
		return 0;
	for (int j = 0; j < s->nwritable; j++)
		if (sbx_within(path, s->writable[j]))
			return 0;
	return 1;
}

// plan_deny_read plans the empty mounts over the deny-read paths, each
// resolved once: a symlink is denied as what it points to (the provider
// lists the link and its target at Wrap time). A path out of reach
// (out_of_reach) needs no mount and gets none.
static int plan_deny_read(const struct spec *s, struct sbx_plan *p) {
	struct stat st;
	for (int i = 0; i < s->ndeny; i++) {
		// The provider resolved the directories above each path: only a
		// final symlink needs resolving here (most paths are missing, and
		// realpath would walk every directory of each to say so).
		char *real = NULL;
		if (lstat(s->deny[i], &st) == 0) {
			real = S_ISLNK(st.st_mode) ? realpath(s->deny[i], NULL) : strdup(s->deny[i]);
			if (!real && !S_ISLNK(st.st_mode))
				sbx_fatal(sbx_token, "out of memory");
		}
		if (real && stat(real, &st) < 0) {
			int rc = out_of_reach(s, real) ? 0 : resolve_failed(p, "deny-read path", real);
			free(real);
			if (rc < 0)
				return -1;
			real = NULL;
		} else if (!real && !out_of_reach(s, s->deny[i]) && resolve_failed(p, "deny-read path", s->deny[i]) < 0) {
			return -1;
		}
		if (!real) {
			// Missing: as vocab.NamespaceGaps, a gap only inside a
			// writable root (not the temp dir), where the command could
			// create it. -full refuses it here, where the plan looked.
			int inside = 0;
			for (int j = 0; j < s->nwritable; j++)
				inside |= sbx_within(s->deny[i], s->writable[j]);
			if (inside && s->require_full && lstat(s->deny[i], &st) < 0)
				return refuse(p, "full enforcement required, but: deny-read path %s does not exist inside a writable root",
				              s->deny[i]);
			continue;
		}
		add_layer(p, LAYER_DENY, real, S_ISDIR(st.st_mode), -1, NULL);
		free(real);
	}
	return 0;
}

// hidden reports whether path lies in a planned deny-read path that is
// mounted over its writable root (at or below root): a bind there would
// show what the empty mount hides. A deny-read path above the root is
// covered by the root's own bind already.
static int hidden(const struct sbx_plan *p, const char *path, const char *root) {
	for (int i = 0; i < p->nlayers; i++)
		if (p->layers[i].kind == LAYER_DENY && sbx_within(path, p->layers[i].path) && sbx_within(p->layers[i].path, root))
			return 1;
	return 0;
}

// plan_pins pins every directory strictly between root and path, each
// opened without symlinks now and remembered by identity.
static int plan_pins(struct sbx_plan *p, const char *root, const char *path) {
	char *d = sbx_xstrdup(path);
	struct stat st;
	int rc = 0;
	for (char *slash = strrchr(d, '/'); slash && slash > d; slash = strrchr(d, '/')) {
		*slash = 0;
		if (!sbx_within(d, root) || !strcmp(d, root))
			break;
		int fd = sbx_open_strict(AT_FDCWD, d, O_DIRECTORY, 0);
		if (fd < 0 || fstat(fd, &st) < 0) {
			rc = refuse(p, "plan the mounts: pin %s: %s", d, sbx_swapped_or(errno));
			if (fd >= 0)
				close(fd);
			break;
		}
		close(fd);
		add_layer(p, LAYER_PIN, d, 1, -1, &st);
	}
	free(d);
	return rc;
}

// plan_guard: path, a protected path, is missing, and the filter hands
// the creating calls to the guard. The first missing component below
// path's writable root is the name the guard refuses (creating .cargo is
// refused while .cargo/config.toml is guarded), in its parent, by
// identity; the directories between the root and that name are pinned, so
// the parent cannot be moved away and replaced. A component that is not a
// directory holds nothing that could be created; one that is a symlink is
// not followed (a gap, refused by -full). It returns 1 when every
// component of path is there, 0 when not, -1 when the plan is refused.
static int plan_guard(const struct spec *s, struct sbx_plan *p, const char *path) {
	const char *root = deepest_root(s, path);
	if (!root || !strcmp(root, path))
		return 0; // outside the writable roots all is read-only already
	int dfd = sbx_open_strict(AT_FDCWD, root, O_DIRECTORY, 0);
	if (dfd < 0)
		return refuse(p, "plan the guard: writable root %s: %s", root, sbx_swapped_or(errno));
	char *rest = sbx_xstrdup(path + strlen(root));
	char *upto = sbx_xstrdup(path); // path up to the component at hand
	size_t at = strcmp(root, "/") ? strlen(root) : 0;
	int whole = 1; // every component is there
	const char *end = rest + strlen(rest);
	for (char *comp = strtok(rest, "/"); comp; comp = strtok(NULL, "/")) {
		int last = comp + strlen(comp) == end;
		at += 1 + strlen(comp);
		struct stat st;
		int fd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT) {
			if (fstat(dfd, &st) < 0) {
				whole = refuse(p, "plan the guard: %s: %s", path, strerror(errno));
				break;
			}
			upto[at] = 0;
			guard_add(p, &st, comp, path, 0);
			whole = plan_pins(p, root, upto);
			break;
		}
		if (fd < 0) {
			// A directory on the way that cannot be searched (EACCES): the
			// command, with the same rights, cannot create below it
			// either, unless it changes the directory's mode first; not
			// guarded, refused by -full. ENOTDIR: nothing to create.
			if (errno != ENOTDIR && s->require_full)
				whole = refuse(p, "full enforcement required, but: guarded name %s cannot be looked up: %s", path,
				               strerror(errno));
			else
				whole = 0;
			break;
		}
		if (fstat(fd, &st) < 0) {
			whole = refuse(p, "plan the guard: %s: %s", path, strerror(errno));
			close(fd);
			break;
		}
		if (S_ISLNK(st.st_mode) && last) {
			close(fd);
			break; // the name is there, a symlink: bound as a read-only subpath is
		}
		if (S_ISLNK(st.st_mode)) {
			// Behind a symlink (a .cargo linked elsewhere): the name the
			// link leads to is another directory's, not guarded here; the
			// provider reported it (vocab.NamespaceGaps), -full refuses it.
			close(fd);
			if (s->require_full)
				whole = refuse(p, "full enforcement required, but: guarded name %s lies behind a symlink", path);
			else
				whole = 0;
			break;
		}
		close(dfd);
		dfd = fd;
		if (!S_ISDIR(st.st_mode) && !last) {
			whole = 0; // a file on the way: nothing below it can be made
			break;
		}
	}
	close(dfd);
	free(rest);
	free(upto);
	return whole;
}

// plan_read_only plans the read-only bind of path (and the pins above it).
// The provider resolved path's directories at Wrap time, so a symlink
// among them now is refused; a missing path is skipped (the provider
// reported it).
static int plan_read_only(const struct spec *s, struct sbx_plan *p, const char *path) {
	char *dir = sbx_xstrdup(path);
	char *slash = strrchr(dir, '/');
	*slash = 0;
	int dfd = sbx_open_strict(AT_FDCWD, *dir ? dir : "/", O_DIRECTORY, 0);
	if (dfd < 0 && errno == ELOOP) {
		free(dir);
		return refuse(p, "plan the mounts: read-only subpath %s: %s", path, sbx_swapped_or(ELOOP));
	}
	int fd = dfd < 0 ? -1 : openat(dfd, slash + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	int rc = fd < 0 ? resolve_failed(p, "read-only subpath", path) : 0;
	if (dfd >= 0)
		close(dfd);
	free(dir);
	if (rc < 0)
		return -1;
	struct stat st;
	// -full is checked here, on what the plan uses, not by name before
	// it: a swap in between would otherwise pass the check.
	if (fd < 0) {
		if (s->nguard > 0)
			return plan_guard(s, p, path) < 0 ? -1 : 0; // the guard refuses its creation
		if (s->require_full)
			return refuse(p, "full enforcement required, but: read-only subpath %s is missing", path);
		return 0; // nothing there
	}
	if (fstat(fd, &st) < 0) {
		rc = refuse(p, "plan the mounts: read-only subpath %s: %s", path, strerror(errno));
		close(fd);
		return rc;
	}
	if (S_ISLNK(st.st_mode) && s->require_full) {
		close(fd);
		return refuse(p, "full enforcement required, but: read-only subpath %s is a symlink", path);
	}
	char *real = NULL;
	if (S_ISLNK(st.st_mode)) {
		// Protect what the link points to (that only narrows); the
		// link itself cannot be covered (the provider reported it).
		close(fd);
		real = realpath(path, NULL);
		if (!real)
			return resolve_failed(p, "the target of read-only subpath", path); // dangling
		fd = sbx_open_strict(AT_FDCWD, real, 0, 0);
		if (fd < 0 && errno == ELOOP) {
			rc = refuse(p, "plan the mounts: the target %s of read-only subpath %s: %s", real, path, sbx_swapped_or(ELOOP));
			free(real);
			return rc;
		}
		if (fd < 0 || fstat(fd, &st) < 0) {
			rc = resolve_failed(p, "the target of read-only subpath", real);
			if (fd >= 0)
				close(fd);
			free(real);
			return rc;
		}
	} else {
		real = sbx_xstrdup(path);
	}
	const char *root = deepest_root(s, real);
	// Only a directory or a file under a writable root (outside the roots
	// all is read-only already), and never one a deny-read mount hides.
	if ((S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) && root && !hidden(p, real, root)) {
		// A bind covers one name: another hard link to the file it opened
		// writes the same inode (vocab.NamespaceGaps reports it).
		if (s->require_full && S_ISREG(st.st_mode) && st.st_nlink > 1) {
			rc = refuse(p, "full enforcement required, but: read-only subpath %s has %lu hard links", real,
			            (unsigned long)st.st_nlink);
			close(fd);
		} else {
			add_layer(p, LAYER_RO, real, S_ISDIR(st.st_mode), fd, &st);
			rc = plan_pins(p, root, real);
		}
	} else {
		close(fd);
	}
	free(real);
	return rc;
}

// plan_carving: a deny-read path is carved out with Landlock as well as
// hidden by its mount when it lies outside every writable root and the
// temp dir, holds none of them (a workspace inside a deny-read directory
// is shown again by its own bind), and lies below no other such path
// (whose carving covers it).
static void plan_carving(const struct spec *s, struct sbx_plan *p) {
	int *carved = calloc(s->ndeny ? s->ndeny : 1, sizeof *carved);
	if (!carved)
		sbx_fatal(sbx_token, "out of memory");
	for (int i = 0; i < s->ndeny; i++) {
		const char *d = s->deny[i];
		carved[i] = !(s->tempdir && (sbx_within(d, s->tempdir) || sbx_within(s->tempdir, d)));
		for (int w = 0; w < s->nwritable && carved[i]; w++)
			carved[i] = !sbx_within(d, s->writable[w]) && !sbx_within(s->writable[w], d);
	}
	// A path below another candidate is covered by it; checked against the
	// candidates (not the result), which is the same: what holds it is
	// carved, or lies below a carved path that holds it too.
	int *base = malloc((s->ndeny ? s->ndeny : 1) * sizeof *base);
	if (!base)
		sbx_fatal(sbx_token, "out of memory");
	memcpy(base, carved, s->ndeny * sizeof *base);
	for (int i = 0; i < s->ndeny; i++)
		for (int j = 0; j < s->ndeny && carved[i]; j++)
			if (j != i && base[j] && strcmp(s->deny[i], s->deny[j]) != 0 && sbx_within(s->deny[i], s->deny[j]))
				carved[i] = 0;
	free(base);
	p->carved = carved;
}

// plan_bound guards the names the read-only and deny-read mounts inside
// the writable roots cover (struct guarded, bound): a host process that
// renames a file over one makes the kernel detach the mount, and the new
// file would be writable through the writable root until pid 1 stops the
// sandbox. The guard refuses writing to the name itself, so no write
// lands in that moment. The parent is opened without following symlinks,
// as the mount's own path was; the pins keep it in place.
static int plan_bound(const struct spec *s, struct sbx_plan *p) {
	for (int i = 0; i < p->nlayers; i++) {
		const struct layer *l = &p->layers[i];
		const char *root = deepest_root(s, l->path);
		if ((l->kind != LAYER_RO && l->kind != LAYER_DENY) || !root || !strcmp(root, l->path))
			continue;
		char *dir = sbx_xstrdup(l->path);
		char *slash = strrchr(dir, '/');
		*slash = 0;
		struct stat st;
		int dfd = sbx_open_strict(AT_FDCWD, *dir ? dir : "/", O_DIRECTORY, 0);
		if (dfd < 0 || fstat(dfd, &st) < 0) {
			int rc = refuse(p, "plan the guard: the directory of %s: %s", l->path, sbx_swapped_or(errno));
			if (dfd >= 0)
				close(dfd);
			free(dir);
			return rc;
		}
		close(dfd);
		guard_add(p, &st, slash + 1, l->path, 1);
		free(dir);
	}
	return 0;
}

// plan_overlay opens -overlay's directories (struct sbx_plan, ovl_*).
static int plan_overlay(const struct spec *s, struct sbx_plan *p) {
	if (!s->overlay)
		return 0;
	struct stat st;
	p->ovl_lower = sbx_open_strict(AT_FDCWD, s->overlay, O_DIRECTORY, 0);
	if (p->ovl_lower < 0 || fstat(p->ovl_lower, &st) < 0)
		return refuse(p, "plan the overlay: %s: %s", s->overlay, sbx_swapped_or(errno));
	p->ovl_dev = st.st_dev;
	p->ovl_ino = st.st_ino;
	int dfd = sbx_open_strict(AT_FDCWD, s->overlay_dir, O_DIRECTORY, 0);
	if (dfd < 0)
		return refuse(p, "plan the overlay: %s: %s", s->overlay_dir, sbx_swapped_or(errno));
	p->ovl_upper = sbx_open_strict(dfd, "upper", O_DIRECTORY, 1);
	int e = errno;
	if (p->ovl_upper >= 0) {
		p->ovl_work = sbx_open_strict(dfd, "work", O_DIRECTORY, 1);
		e = errno;
	}
	close(dfd);
	if (p->ovl_upper < 0 || p->ovl_work < 0)
		return refuse(p, "plan the overlay: %s/%s: %s", s->overlay_dir, p->ovl_upper < 0 ? "upper" : "work", sbx_swapped_or(e));
	return 0;
}

int ns_plan(const struct spec *s, struct sbx_plan *p) {
	*p = (struct sbx_plan){.ovl_lower = -1, .ovl_upper = -1, .ovl_work = -1};
	for (int i = 0; i <= s->nwritable; i++) {
		const char *w = i < s->nwritable ? s->writable[i] : s->tempdir;
		if (!w)
			continue;
		int fd = sbx_open_strict(AT_FDCWD, w, O_DIRECTORY, 0);
		if (fd < 0)
			return refuse(p, "plan the mounts: writable root %s: %s", w, sbx_swapped_or(errno));
		add_layer(p, LAYER_WRITABLE, w, 1, fd, NULL);
		if (i == s->nwritable && s->tmpsize)
			for (int j = 0; j < p->nlayers; j++)
				if (p->layers[j].kind == LAYER_WRITABLE && !strcmp(p->layers[j].path, w))
					p->layers[j].size = s->tmpsize;
	}
	if (plan_deny_read(s, p) < 0)
		return -1;
	for (int i = 0; i < s->nro; i++)
		if (plan_read_only(s, p, s->ro[i]) < 0)
			return -1;
	// A guarded name that appeared since the Wrap is bound read-only
	// like a read-only subpath; the others are guarded.
	for (int i = 0; i < s->nguard; i++) {
		int whole = plan_guard(s, p, s->guard[i]);
		if (whole < 0 || (whole && plan_read_only(s, p, s->guard[i]) < 0))
			return -1;
	}
	if (plan_unix_sockets(s, p) < 0 || plan_overlay(s, p) < 0)
		return -1;
	qsort(p->layers, p->nlayers, sizeof *p->layers, layer_cmp);
	plan_carving(s, p);
	return plan_bound(s, p);
}

void ns_plan_free(struct sbx_plan *p) {
	for (int i = 0; i < p->nlayers; i++) {
		if (p->layers[i].fd >= 0)
			close(p->layers[i].fd);
		if (p->layers[i].mnt >= 0)
			close(p->layers[i].mnt);
		free(p->layers[i].path);
	}
	for (int i = 0; i < p->nguarded; i++)
		free(p->guarded[i].name);
	int ovl[] = {p->ovl_lower, p->ovl_upper, p->ovl_work};
	for (int i = 0; i < 3; i++)
		if (ovl[i] >= 0)
			close(ovl[i]);
	free(p->layers);
	free(p->guarded);
	free(p->carved);
	*p = (struct sbx_plan){0};
}

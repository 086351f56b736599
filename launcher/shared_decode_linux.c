// The vocabulary: the C decoder of internal/vocab, driven by the option
// table vocab generates (SBX_OPTIONS in shared_contract_linux.h) and held to
// vocab.Decode by shared_decode_test.go; ns-run's stage 1 and landlock-run
// (landlock_start_linux.c) both decode with it, once, in their
// constructors.

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

#include "shared_linux.h"
#include "shared_spec_linux.h"

// clean_abs reports whether p is absolute, clean (what Go's path.Clean
// leaves unchanged) and not empty.
static int clean_abs(const char *p) {
	size_t n = strlen(p);
	if (n == 0 || p[0] != '/')
		return 0;
	if (n == 1)
		return 1;
	if (p[n - 1] == '/')
		return 0;
	for (const char *s = p; *s; s++) {
		if (*s != '/')
			continue;
		const char *e = s + 1;
		if (*e == '/')
			return 0;
		if (e[0] == '.' && (e[1] == '/' || e[1] == 0))
			return 0;
		if (e[0] == '.' && e[1] == '.' && (e[2] == '/' || e[2] == 0))
			return 0;
	}
	return 1;
}

// parse_number: decimal, no sign, no leading zero, 1 to max (at most
// SBX_MAX_BYTES); -1 otherwise (vocab's parseNumber).
static long long parse_number(const char *v, long long max) {
	char limit[24];
	size_t n = strlen(v);
	if (n == 0 || n > (size_t)snprintf(limit, sizeof limit, "%lld", max) || v[0] == '0')
		return -1;
	unsigned long long x = 0;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return -1;
		x = x * 10 + (unsigned long long)(*v - '0');
	}
	return x <= (unsigned long long)max ? (long long)x : -1;
}

// plain_line: no ASCII control character (vocab's plainLine).
static int plain_line(const char *v) {
	for (; *v; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f)
			return 0;
	return 1;
}

// valid_program: lowercase hex, whole 8-byte instructions, not empty.
static int valid_program(const char *h) {
	size_t n = strlen(h);
	if (n == 0 || n % 16 != 0)
		return 0;
	for (; *h; h++)
		if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f')))
			return 0;
	return 1;
}

// option is a row of the generated option table (vocab.Options): field
// and count are the offsets of its value (or values) and of a repeatable
// option's count in struct spec (count -1 otherwise), size one value's,
// needs a bit per option an argv with this one must carry too.
struct option {
	const char *name;
	int kind;
	long long max;
	int repeatable, path, required;
	unsigned long long needs;
	const char *what;
	long field, count;
	size_t size;
};

_Static_assert(SBX_NOPTS <= 64, "an option's needs are a 64-bit mask");

static const struct option options[SBX_NOPTS] = {
#define SBX_OPTION_ROW(id, name, kind, max, repeatable, path, required, needs, what, field, count, size)                         \
	[id] = {name, kind, max, repeatable, path, required, needs, what, field, count, size},
        SBX_OPTIONS(SBX_OPTION_ROW)
#undef SBX_OPTION_ROW
};

// net_words are the -net values, by SBX_NET_MODE_.
static const char *const net_words[] = {
        [SBX_NET_MODE_DENY] = SBX_NET_DENY,
        [SBX_NET_MODE_ALLOW] = SBX_NET_ALLOW,
        [SBX_NET_MODE_PROXIED] = SBX_NET_PROXIED,
};

// check_value checks val against o's row, as vocab's Option.check; a
// Number's value (a network mode's, for -net) goes to *n.
static int check_value(const struct option *o, const char *val, long long *n, char *err, size_t errlen) {
	if (!*val)
		return snprintf(err, errlen, "%s: empty", o->name), -1;
	switch (o->kind) {
	case SBX_VALUE_NUMBER:
		*n = parse_number(val, o->max);
		if (*n < 0)
			return snprintf(err, errlen, "%s \"%.120s\": not a %s, 1 to %lld", o->name, val, o->what, o->max), -1;
		break;
	case SBX_VALUE_NET_MODE:
		*n = -1;
		for (size_t m = 0; m < sizeof net_words / sizeof net_words[0]; m++)
			if (!strcmp(val, net_words[m]))
				*n = (long long)m;
		if (*n < 0)
			return snprintf(err, errlen, "%s \"%.120s\": want deny, allow or proxied", o->name, val), -1;
		break;
	case SBX_VALUE_PROGRAM:
		if (!valid_program(val))
			return snprintf(err, errlen, "%s: not a program in hex", o->name), -1;
		break;
	case SBX_VALUE_LINE:
		if (!plain_line(val))
			return snprintf(err, errlen, "%s holds a control character", o->name), -1;
		break;
	}
	if (o->path && !clean_abs(val))
		return snprintf(err, errlen, "%s: path \"%.120s\" is not absolute and clean", o->what, val), -1;
	return 0;
}

// put_number stores n in a number field of size bytes (int or long long).
static void put_number(void *p, size_t size, long long n) {
	if (size == sizeof(long long))
		*(long long *)p = n;
	else
		*(int *)p = (int)n;
}

// store puts one checked value of o into s, at the offsets the table
// gives: a repeatable option's value after the ones before it. The
// pointer to a repeatable option's values is read with memcpy, whatever
// its type (char ** or a number's).
static void store(struct spec *s, const struct option *o, char *val, long long n) {
	char *field = (char *)s + o->field;
	if (o->count >= 0) {
		int *count = (int *)((char *)s + o->count);
		char *values;
		memcpy(&values, field, sizeof values);
		char *at = values + (size_t)*count * o->size;
		if (o->kind == SBX_VALUE_NUMBER)
			put_number(at, o->size, n);
		else
			memcpy(at, &val, sizeof val);
		(*count)++;
		return;
	}
	switch (o->kind) {
	case SBX_VALUE_FLAG:
		*(int *)field = 1;
		break;
	case SBX_VALUE_NUMBER:
	case SBX_VALUE_NET_MODE:
		put_number(field, o->size, n);
		break;
	default:
		*(char **)field = val;
	}
}

int sbx_decode(int argc, char **args, struct spec *s, char *err, size_t errlen) {
	memset(s, 0, sizeof *s);
	if (argc > SBX_MAX_ARGS)
		return snprintf(err, errlen, "%d arguments, at most %d", argc, SBX_MAX_ARGS), -1;
	if (argc < 1)
		return snprintf(err, errlen, "no contract version"), -1;
	if (strcmp(args[0], SBX_VERSION) != 0)
		return snprintf(err, errlen, "contract version \"%.120s\", this launcher speaks \"%s\"", args[0], SBX_VERSION), -1;
	// Room for every value of each repeatable option: argc bounds them.
	for (int id = 0; id < SBX_NOPTS; id++) {
		if (options[id].count < 0)
			continue;
		void *values = calloc(argc, options[id].size);
		if (values == NULL)
			return snprintf(err, errlen, "out of memory"), -1;
		memcpy((char *)s + options[id].field, &values, sizeof values);
	}
	int i = 1, dashes = 0;
	int seen[SBX_NOPTS] = {0};
	while (i < argc) {
		const char *name = args[i++];
		if (strcmp(name, "--") == 0) {
			dashes = 1;
			break;
		}
		int id = 0;
		while (id < SBX_NOPTS && strcmp(name, options[id].name) != 0)
			id++;
		if (id == SBX_NOPTS)
			return snprintf(err, errlen, "unknown option \"%.120s\"", name), -1;
		const struct option *o = &options[id];
		if (seen[id] && !o->repeatable)
			return snprintf(err, errlen, "%s given twice", o->name), -1;
		seen[id] = 1;
		char *val = NULL;
		long long n = 0;
		if (o->kind != SBX_VALUE_FLAG) {
			if (i >= argc)
				return snprintf(err, errlen, "option %s needs a value", o->name), -1;
			val = args[i++];
			if (check_value(o, val, &n, err, errlen) < 0)
				return -1;
		}
		store(s, o, val, n);
	}
	if (!dashes)
		return snprintf(err, errlen, "missing --"), -1;
	for (int id = 0; id < SBX_NOPTS; id++)
		if (options[id].required && !seen[id])
			return snprintf(err, errlen, "missing %s", options[id].name), -1;
	if (s->net == SBX_NET_MODE_ALLOW && s->nports)
		return snprintf(err, errlen, "-port under network allow"), -1;
	if (s->net == SBX_NET_MODE_PROXIED && !s->nports)
		return snprintf(err, errlen, "proxied network without the proxy's -port"), -1;
	for (int id = 0; id < SBX_NOPTS; id++)
		for (int need = 0; need < SBX_NOPTS && seen[id]; need++)
			if ((options[id].needs >> need & 1) && !seen[need])
				return snprintf(err, errlen, "%s without %s", options[id].name, options[need].name), -1;
	s->cmd = args + i;
	s->ncmd = argc - i;
	if (s->probe && s->ncmd)
		return snprintf(err, errlen, "probe mode takes no command"), -1;
	if (!s->probe && !s->ncmd)
		return snprintf(err, errlen, "no command"), -1;
	return 0;
}

void sbx_start(int argc, char **argv, const char *token, struct spec *s) {
	char err[256];
	if (sbx_decode(argc - 1, argv + 1, s, err, sizeof err) < 0)
		sbx_fatal(token, "malformed launcher arguments: %s", err);
	for (int i = 0; i < s->ncgroups; i++)
		sbx_join_cgroup(token, s->cgroups[i]);
}

// The vocabulary: the C decoder of internal/vocab, held to it by
// ns_decode_test.go; ns-run's stage 2 (section 1) and landlock-run
// (landlock_run_linux.c) both decode with it.

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
#include "ns_stage2_linux.h"
#include "shared_linux.h"

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

// parse_decimal: decimal, no sign, no leading zero, 1 to max (at most
// seven digits); -1 otherwise (vocab's parseDecimal).
static int parse_decimal(const char *v, int max) {
	char limit[8];
	size_t n = strlen(v);
	if (n == 0 || n > (size_t)snprintf(limit, sizeof limit, "%d", max) || v[0] == '0')
		return -1;
	int x = 0;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return -1;
		x = x * 10 + (*v - '0');
	}
	return x <= max ? x : -1;
}

// parse_bytes: decimal, no sign, no leading zero, 1 to SBX_MAX_BYTES; -1
// otherwise (vocab's parseBytes).
static long long parse_bytes(const char *v) {
	char limit[24];
	size_t n = strlen(v);
	if (n == 0 || n > (size_t)snprintf(limit, sizeof limit, "%lld", SBX_MAX_BYTES) || v[0] == '0')
		return -1;
	unsigned long long x = 0;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return -1;
		x = x * 10 + (unsigned long long)(*v - '0');
	}
	return x <= (unsigned long long)SBX_MAX_BYTES ? (long long)x : -1;
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

int sbx_decode(int argc, char **args, struct spec *s, char *err, size_t errlen) {
	memset(s, 0, sizeof *s);
	if (argc > SBX_MAX_ARGS)
		return snprintf(err, errlen, "%d arguments, at most %d", argc, SBX_MAX_ARGS), -1;
	if (argc < 1)
		return snprintf(err, errlen, "no contract version"), -1;
	if (strcmp(args[0], SBX_VERSION) != 0)
		return snprintf(err, errlen, "contract version \"%.120s\", this launcher speaks \"%s\"", args[0], SBX_VERSION), -1;
	s->writable = calloc(argc, sizeof(char *));
	s->ro = calloc(argc, sizeof(char *));
	s->deny = calloc(argc, sizeof(char *));
	s->guard = calloc(argc, sizeof(char *));
	s->unixsock = calloc(argc, sizeof(char *));
	s->cgroups = calloc(argc, sizeof(char *));
	s->ports = calloc(argc, sizeof(int));
	if (!s->writable || !s->ro || !s->deny || !s->guard || !s->unixsock || !s->cgroups || !s->ports)
		return snprintf(err, errlen, "out of memory"), -1;
	int i = 1, dashes = 0, net = 0;
	while (i < argc) {
		const char *opt = args[i++];
		if (strcmp(opt, "--") == 0) {
			dashes = 1;
			break;
		}
		int takes = !strcmp(opt, "-w") || !strcmp(opt, "-t") || !strcmp(opt, "-r") || !strcmp(opt, "-g") || !strcmp(opt, "-d") ||
		            !strcmp(opt, "-u") || !strcmp(opt, "-C") || !strcmp(opt, "-net") || !strcmp(opt, "-seccomp") ||
		            !strcmp(opt, "-port") || !strcmp(opt, "-bridge") || !strcmp(opt, "-abi") || !strcmp(opt, "-notice") ||
		            !strcmp(opt, "-cgroup") || !strcmp(opt, "-nproc") || !strcmp(opt, "-as") || !strcmp(opt, "-tmpsize");
		char *val = NULL;
		if (takes) {
			if (i >= argc)
				return snprintf(err, errlen, "option %s needs a value", opt), -1;
			val = args[i++];
		}
		const char *what = NULL;
		if (!strcmp(opt, "-w")) {
			s->writable[s->nwritable++] = val, what = "writable root";
		} else if (!strcmp(opt, "-t")) {
			if (s->tempdir)
				return snprintf(err, errlen, "-t given twice"), -1;
			s->tempdir = val, what = "temp dir";
		} else if (!strcmp(opt, "-r")) {
			s->ro[s->nro++] = val, what = "read-only subpath";
		} else if (!strcmp(opt, "-g")) {
			s->guard[s->nguard++] = val, what = "guarded name";
		} else if (!strcmp(opt, "-d")) {
			s->deny[s->ndeny++] = val, what = "deny-read path";
		} else if (!strcmp(opt, "-u")) {
			s->unixsock[s->nunixsock++] = val, what = "UNIX socket";
		} else if (!strcmp(opt, "-C")) {
			if (s->dir)
				return snprintf(err, errlen, "-C given twice"), -1;
			s->dir = val, what = "working directory";
		} else if (!strcmp(opt, "-net")) {
			if (net)
				return snprintf(err, errlen, "-net given twice"), -1;
			net = 1;
			if (!strcmp(val, SBX_NET_ALLOW))
				s->allow_net = 1;
			else if (!strcmp(val, SBX_NET_PROXIED))
				s->proxied = 1;
			else if (strcmp(val, SBX_NET_DENY) != 0)
				return snprintf(err, errlen, "-net \"%.120s\": want deny, allow or proxied", val), -1;
		} else if (!strcmp(opt, "-port")) {
			int port = parse_decimal(val, 65535);
			if (port < 0)
				return snprintf(err, errlen, "-port \"%.120s\": not a port", val), -1;
			s->ports[s->nports++] = port;
		} else if (!strcmp(opt, "-bridge")) {
			if (s->bridge)
				return snprintf(err, errlen, "-bridge given twice"), -1;
			s->bridge = val, what = "bridge";
		} else if (!strcmp(opt, "-seccomp")) {
			if (s->seccomp)
				return snprintf(err, errlen, "-seccomp given twice"), -1;
			if (!valid_program(val))
				return snprintf(err, errlen, "-seccomp: not a program in hex"), -1;
			s->seccomp = val;
		} else if (!strcmp(opt, "-abi")) {
			if (s->abi)
				return snprintf(err, errlen, "-abi given twice"), -1;
			s->abi = parse_decimal(val, SBX_MAX_ABI);
			if (s->abi < 0)
				return snprintf(err, errlen, "-abi \"%.120s\": not a Landlock ABI", val), -1;
		} else if (!strcmp(opt, "-notice")) {
			if (s->notice)
				return snprintf(err, errlen, "-notice given twice"), -1;
			if (!*val)
				return snprintf(err, errlen, "-notice: empty"), -1;
			if (!plain_line(val))
				return snprintf(err, errlen, "-notice holds a control character"), -1;
			s->notice = val;
		} else if (!strcmp(opt, "-cgroup")) {
			s->cgroups[s->ncgroups++] = val, what = "cgroup";
		} else if (!strcmp(opt, "-nproc")) {
			if (s->nproc)
				return snprintf(err, errlen, "-nproc given twice"), -1;
			s->nproc = parse_decimal(val, SBX_MAX_PROCESSES);
			if (s->nproc < 0)
				return snprintf(err, errlen, "-nproc \"%.120s\": not a process count", val), -1;
		} else if (!strcmp(opt, "-as") || !strcmp(opt, "-tmpsize")) {
			long long *dst = !strcmp(opt, "-as") ? &s->as : &s->tmpsize;
			if (*dst)
				return snprintf(err, errlen, "%s given twice", opt), -1;
			*dst = parse_bytes(val);
			if (*dst < 0)
				return snprintf(err, errlen, "%s \"%.120s\": not a byte count", opt, val), -1;
		} else if (!strcmp(opt, "-full")) {
			s->require_full = 1;
		} else if (!strcmp(opt, "-probe")) {
			s->probe = 1;
		} else {
			return snprintf(err, errlen, "unknown option \"%.120s\"", opt), -1;
		}
		if (what && !clean_abs(val))
			return snprintf(err, errlen, "%s: path \"%.120s\" is not absolute and clean", what, val), -1;
	}
	if (!dashes)
		return snprintf(err, errlen, "missing --"), -1;
	if (!net)
		return snprintf(err, errlen, "missing -net"), -1;
	if (s->allow_net && s->nports)
		return snprintf(err, errlen, "-port under network allow"), -1;
	if (s->proxied && !s->nports)
		return snprintf(err, errlen, "proxied network without the proxy's -port"), -1;
	if (s->bridge && !s->nports)
		return snprintf(err, errlen, "-bridge without -port"), -1;
	s->cmd = args + i;
	s->ncmd = argc - i;
	if (s->probe && s->ncmd)
		return snprintf(err, errlen, "probe mode takes no command"), -1;
	if (!s->probe && !s->ncmd)
		return snprintf(err, errlen, "no command"), -1;
	return 0;
}

// ns-run stage 2, section 4: the network (loopback, and the ports handed
// to the provider's bridge).

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
#include "ns_net_linux.h"
#include "shared_linux.h"

void ns_loopback_up(void) {
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sbx_must(fd, "bring up loopback: socket", NULL);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	sbx_must(ioctl(fd, SIOCGIFFLAGS, &ifr), "bring up loopback: get flags", NULL);
	ifr.ifr_flags |= IFF_UP;
	sbx_must(ioctl(fd, SIOCSIFFLAGS, &ifr), "bring up loopback: set up", NULL);
	close(fd);
}

// hand_over_ports makes a listener on the sandbox's loopback for each of
// the spec's ports (the domain proxy's, allowed local ports) and sends them
// to the provider over the bridge stage 1 connected: the provider accepts
// on them, outside, and passes each connection to its proxy or to the
// host's port. The command never holds them. The provider answers "ok"
// once it serves them; anything else, or no answer, is fatal.
#define MAX_PORTS 250 // below SCM_MAX_FD
void ns_hand_over_ports(const struct spec *s) {
	if (!s->nports)
		return;
	if (!s->bridge || sbx_ns_bridge < 0)
		sbx_fatal(sbx_token, "loopback ports without the network bridge");
	if (s->nports > MAX_PORTS)
		sbx_fatal(sbx_token, "%d loopback ports, at most %d", s->nports, MAX_PORTS);
	int fds[MAX_PORTS];
	char msg[64 + 6 * MAX_PORTS];
	int n = snprintf(msg, sizeof msg, "%s %s", SBX_BRIDGE_HELLO, sbx_token);
	for (int i = 0; i < s->nports; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		sbx_must(fd, "listen on the sandbox's loopback: socket", NULL);
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(s->ports[i]), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 512) < 0)
			sbx_fatal(sbx_token, "listen on the sandbox's loopback port %d: %s", s->ports[i], strerror(errno));
		fds[i] = fd;
		n += snprintf(msg + n, sizeof msg - n, " %d", s->ports[i]);
	}
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * MAX_PORTS)];
	} ctl;
	memset(&ctl, 0, sizeof ctl);
	struct iovec iov = {msg, (size_t)n};
	struct msghdr mh = {
	        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = CMSG_SPACE(sizeof(int) * s->nports)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * s->nports);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * s->nports);
	if (sendmsg(sbx_ns_bridge, &mh, MSG_NOSIGNAL) != n)
		sbx_fatal(sbx_token, "hand the loopback ports to the network bridge: %s", strerror(errno));
	struct pollfd p = {sbx_ns_bridge, POLLIN, 0};
	char ack[8];
	int r = poll(&p, 1, 10000);
	ssize_t got = r == 1 ? read(sbx_ns_bridge, ack, sizeof ack) : -1;
	if (got != 2 || memcmp(ack, "ok", 2) != 0)
		sbx_fatal(sbx_token, "the network bridge did not take the loopback ports (%s)",
		          r == 0     ? "no answer in 10 s"
		          : got == 0 ? "it closed"
		                     : "refused");
	for (int i = 0; i < s->nports; i++)
		close(fds[i]);
	close(sbx_ns_bridge);
	sbx_ns_bridge = -1;
}

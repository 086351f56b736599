// ns-run stage 2, section 4 (ns_net_linux.c): loopback in the new network
// namespace, and the spec's ports handed to the provider's bridge, for the
// orchestrator (ns_stage2_linux.c).
#ifndef SBX_NS_NET_LINUX_H
#define SBX_NS_NET_LINUX_H

#include "shared_spec_linux.h"

void ns_loopback_up(void);
void ns_hand_over_ports(const struct spec *s);

#endif

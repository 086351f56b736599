//go:build linux

package launcher

import (
	"testing"

	"github.com/bo-agent/sandbox-local/internal/llrights"
	"github.com/bo-agent/sandbox-local/internal/vocab"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// TestLandlockLevelsMatchGoLandlock: vocab's ABI levels (what the provider
// predicts gaps with, and the C starts decide with through
// shared_contract_linux.h) are the levels at which go-landlock's table, which
// decides what a ruleset handles, first has each right.
func TestLandlockLevelsMatchGoLandlock(t *testing.T) {
	rights := func(abi int) (fs, net, scoped uint64) {
		if abi < 1 {
			return 0, 0, 0
		}
		c := llrights.Versions[abi-1]
		return uint64(c.HandledAccessFS), uint64(c.HandledAccessNet), uint64(c.Scoped)
	}
	for _, c := range []struct {
		name  string
		level int
		has   func(abi int) bool
	}{
		{"ABIRefer", vocab.ABIRefer, func(abi int) bool { fs, _, _ := rights(abi); return fs&ll.AccessFSRefer != 0 }},
		{"ABITruncate", vocab.ABITruncate, func(abi int) bool { fs, _, _ := rights(abi); return fs&ll.AccessFSTruncate != 0 }},
		{"ABINetTCP", vocab.ABINetTCP, func(abi int) bool {
			_, net, _ := rights(abi)
			return net&(ll.AccessNetBindTCP|ll.AccessNetConnectTCP) == ll.AccessNetBindTCP|ll.AccessNetConnectTCP
		}},
		{"ABIIoctlDev", vocab.ABIIoctlDev, func(abi int) bool { fs, _, _ := rights(abi); return fs&ll.AccessFSIoctlDev != 0 }},
		{"ABIScopes", vocab.ABIScopes, func(abi int) bool {
			_, _, sc := rights(abi)
			return sc&(ll.ScopeSignal|ll.ScopeAbstractUnixSocket) == ll.ScopeSignal|ll.ScopeAbstractUnixSocket
		}},
		{"ABIResolveUnix", vocab.ABIResolveUnix, func(abi int) bool { fs, _, _ := rights(abi); return fs&ll.AccessFSResolveUnix != 0 }},
	} {
		if !c.has(c.level) || c.has(c.level-1) {
			t.Errorf("vocab.%s = %d, but go-landlock's table first has it at another ABI", c.name, c.level)
		}
	}
	if got := llrights.FSRightsOf(1); got != 1<<13-1 {
		t.Errorf("llrights.FSRightsOf(1) = %#x, want execute .. make_sym (%#x)", got, 1<<13-1)
	}
	if llrights.FSRightsOf(0) != 0 || llrights.FSRightsOf(len(llrights.Versions)+5) != llrights.FSRightsOf(len(llrights.Versions)) {
		t.Error("llrights.FSRightsOf: no Landlock is no right, a newer ABI than go-landlock knows is its newest")
	}
}

package sandbox

import (
	"reflect"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// TestBuildSpec: each part lands in its fields of the Spec, the temp
// parent after the policy's deny-read paths, and the policy's lists are
// not written through.
func TestBuildSpec(t *testing.T) {
	policy := vocab.Spec{Token: "t", Writable: []string{"/ws"}, DenyRead: make([]string, 1, 4), Dir: "/ws", Argv: []string{"true"}}
	policy.DenyRead[0] = "/home/u/.ssh"
	got := buildSpec(policy,
		tempPart{dir: "/tmp/p/w", denyRead: []string{"/tmp/p"}},
		vocab.Limits{Cgroups: []string{"/sys/fs/cgroup/x"}, MaxProcesses: 5, MaxAddressSpace: 1 << 30, TempSize: 1 << 20},
		netPart{mode: vocab.NetworkProxied, ports: []int{3128, 5432}, bridge: "/tmp/p/w.sock"},
		overlayPart{lower: "/home/u/go/pkg/mod", dir: "/c/ws.gomod", env: "/home/u/go/pkg/mod"})
	want := vocab.Spec{Token: "t", Writable: []string{"/ws"}, TempDir: "/tmp/p/w", DenyRead: []string{"/home/u/.ssh", "/tmp/p"}, Dir: "/ws",
		Network: vocab.NetworkProxied, Ports: []int{3128, 5432}, Bridge: "/tmp/p/w.sock",
		Limits:  vocab.Limits{Cgroups: []string{"/sys/fs/cgroup/x"}, MaxProcesses: 5, MaxAddressSpace: 1 << 30, TempSize: 1 << 20},
		Overlay: "/home/u/go/pkg/mod", OverlayDir: "/c/ws.gomod", Argv: []string{"true"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("buildSpec:\n got %#v\nwant %#v", got, want)
	}
	if len(policy.DenyRead) != 1 || policy.DenyRead[:2][1] != "" {
		t.Errorf("the policy's deny-read list was written through: %q", policy.DenyRead[:2])
	}
	launch := withLauncher(got, launcherPart{guarded: []string{"/ws/.envrc"}, seccomp: "00", abi: 7, notice: "n"})
	if !reflect.DeepEqual(launch.Guarded, []string{"/ws/.envrc"}) || launch.Seccomp != "00" || launch.LandlockABI != 7 || launch.Notice != "n" {
		t.Errorf("withLauncher: %#v", launch)
	}
	if got.Seccomp != "" || got.Guarded != nil {
		t.Errorf("withLauncher changed the provider's spec: %#v", got)
	}
}

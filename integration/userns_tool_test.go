//go:build linux && cgo

package integration

import (
	"context"
	"encoding/json"

	"github.com/bo-agent/sandbox-local/sandbox"
	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// diagnoseWithoutUserns refuses new user namespaces to this process and its
// children the way Docker's default seccomp profile does (unshare and clone
// with CLONE_NEWUSER fail with EPERM), then reports what a fresh provider
// selects, as JSON.
func diagnoseWithoutUserns() string {
	f, err := seccomp.NewFilter(seccomp.ActAllow)
	if err != nil {
		return "error: " + err.Error()
	}
	eperm := seccomp.ActErrno.SetReturnCode(int16(unix.EPERM))
	cond, _ := seccomp.MakeCondition(0, seccomp.CompareMaskedEqual, unix.CLONE_NEWUSER, unix.CLONE_NEWUSER)
	for _, name := range []string{"unshare", "clone"} {
		sc, _ := seccomp.GetSyscallFromName(name)
		if err := f.AddRuleConditional(sc, eperm, []seccomp.ScmpCondition{cond}); err != nil {
			return "error: " + err.Error()
		}
	}
	sc, _ := seccomp.GetSyscallFromName("clone3")
	f.AddRule(sc, seccomp.ActErrno.SetReturnCode(int16(unix.ENOSYS)))
	if err := f.Load(); err != nil {
		return "error: " + err.Error()
	}
	d := sandbox.New(sandbox.Config{}).Diagnose(context.Background())
	b, _ := json.Marshal(d)
	return string(b)
}

// usernsRefusal is what the namespaces candidate's reason names when user
// namespaces are refused.
const usernsRefusal = "user namespace"

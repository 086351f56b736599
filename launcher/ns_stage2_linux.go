package launcher

/*
extern int sbx_ns_stage;
extern int sbx_ns_net;
extern char sbx_ns_token[33];
*/
import "C"

import (
	"os"
	"runtime"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// nsRun is stage 2 of the ns-run launcher (stage 1 is ns_stage1_linux.c,
// which already put this process, as pid 2 under a C init, into new user,
// mount, pid, ipc, uts and, for network deny, net namespaces). Its stages,
// each in its own file:
//
//  1. plan the mounts from the spec while the host's tree is still in view
//     (ns_rootfs_linux.go: planRoot);
//  2. build the new root and pivot into it (buildRoot);
//  3. bring up loopback in the new network namespace (ns_net_linux.go);
//  4. drop every capability (all sets), mark descriptors close-on-exec,
//     load seccomp (no_new_privs);
//  5. exec the command in place (exec_linux.go); pid 1 (C) reaps and
//     passes its status on.
//
// Every failure before the command runs is fatal: one signed line, exit 125,
// which stage 1 passes on.
func nsRun(args []string) {
	const name = vocab.NsRun
	runtime.LockOSThread() // capabilities are per thread; this one execs the command
	token := C.GoString(&C.sbx_ns_token[0])
	os.Unsetenv(vocab.TokenEnv) // stage 1 zeroed it in place; the command gets none
	if C.sbx_ns_stage != 2 {
		fatal(name, token, "stage 1 did not run (the launcher must be started as %q by exec, with cgo)", name)
	}
	spec, err := vocab.Decode(args)
	if err != nil {
		fatal(name, token, "%v", err)
	}
	spec.Token = token
	if spec.AllowNetwork == (C.sbx_ns_net == 1) {
		fatal(name, token, "stage 1 and the arguments disagree about the network namespace")
	}
	if spec.RequireFull {
		if gaps := vocab.NamespaceGaps(spec, os.Lstat); len(gaps) > 0 {
			fatal(name, token, "full enforcement required, but: %s", joinGaps(gaps))
		}
	}
	plan, err := planRoot(spec, osLstat{})
	if err != nil {
		fatal(name, token, "plan the mounts: %v", err)
	}
	if err := buildRoot(plan); err != nil {
		fatal(name, token, "%v", err)
	}
	if spec.Dir != "" {
		if err := os.Chdir(spec.Dir); err != nil {
			fatal(name, token, "chdir %s inside the sandbox: %v", spec.Dir, err)
		}
	}
	if !spec.AllowNetwork {
		if err := loopbackUp(); err != nil {
			fatal(name, token, "bring up loopback: %v", err)
		}
	}
	if err := confineNamespaces(spec); err != nil {
		fatal(name, token, "%v", err)
	}
	if spec.Probe {
		answerProbe(name, token, spec)
	}
	os.Exit(execCommand(name, spec.Argv))
}

// confineNamespaces is stage 4: after it the process (and the command it
// becomes) holds no capability and runs under the seccomp filter.
func confineNamespaces(spec vocab.Spec) error {
	filter, err := seccompFilter(spec, seccompNamespaces)
	if err != nil {
		return err
	}
	defer filter.Release()
	return sealThread(filter)
}

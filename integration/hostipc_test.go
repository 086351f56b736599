//go:build linux

package integration

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestHostProcessMemoryAndEnvironUnreachable: a host process of the same
// user keeps a secret in its environment and memory; /proc/PID/environ
// and /proc/PID/mem are unreachable from inside (its own pid namespace, or
// Landlock's ptrace scoping), while they read unconfined.
func TestHostProcessMemoryAndEnvironUnreachable(t *testing.T) {
	secret := randomName("SECRET_")
	victim := exec.Command("/bin/sleep", "60")
	victim.Env = append(os.Environ(), "VICTIM_TOKEN="+secret)
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { victim.Process.Kill(); victim.Wait() }()
	proc := "/proc/" + strconv.Itoa(victim.Process.Pid)
	// The environment is in place once the process has exec'd sleep.
	deadline := time.Now().Add(5 * time.Second)
	for hostTool(t, "read-secret", proc+"/environ", secret) != "ok" {
		if time.Now().After(deadline) {
			t.Fatal("control: the victim's environ never held the secret unconfined")
		}
		time.Sleep(10 * time.Millisecond)
	}
	wantOK(t, "control: open the victim's mem unconfined", hostTool(t, "open", proc+"/mem"))
	forEachRunner(t, func(t *testing.T, s *sbx) {
		wantDenied(t, "read a host process's environ", s.tool(s.policy(), "read-secret", proc+"/environ", secret), "EACCES", "ENOENT", "EPERM")
		wantDenied(t, "open a host process's mem", s.tool(s.policy(), "open", proc+"/mem"), "EACCES", "ENOENT", "EPERM")
		// Control: its own environ and mem read inside.
		wantOK(t, "its own environ", s.tool(s.policy(), "read", "/proc/self/environ"))
		wantOK(t, "its own mem", s.tool(s.policy(), "open", "/proc/self/mem"))
	})
}

// TestHostPosixSharedMemoryUnreachable: an object in the host's /dev/shm
// can be neither read nor overwritten (namespaces: a private /dev/shm;
// landlock: /dev/shm is not granted).
func TestHostPosixSharedMemoryUnreachable(t *testing.T) {
	secret := randomName("SHM_")
	obj := filepath.Join("/dev/shm", randomName("sbx-"))
	if err := os.WriteFile(obj, []byte(secret), 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(obj, 0o666)
	defer os.Remove(obj)
	wantOK(t, "control: the object reads unconfined", hostTool(t, "read-secret", obj, secret))
	forEachRunner(t, func(t *testing.T, s *sbx) {
		wantDenied(t, "read the host's shared memory", s.tool(s.policy(), "read-secret", obj, secret), "EACCES", "ENOENT")
		wantDenied(t, "overwrite the host's shared memory", s.tool(s.policy(), "append", obj), "EACCES", "ENOENT", "EROFS")
		wantContent(t, obj, secret)
	})
}

// TestHostSysVSharedMemory: a System V segment of the host is out of reach
// under namespaces (its own IPC namespace) and under landlock (its filter
// refuses System V IPC); a runner that reported a System V gap would have
// to make it true.
func TestHostSysVSharedMemory(t *testing.T) {
	key := sysvKey()
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o666)
	if err != nil {
		t.Fatalf("create a segment: %v", err)
	}
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	mem, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	secret := randomName("SYSV_")
	copy(mem, secret)
	unix.SysvShmDetach(mem)
	k := strconv.Itoa(key)
	wantOK(t, "control: the segment reads unconfined", hostTool(t, "sysv-read", k, secret))
	forEachRunner(t, func(t *testing.T, s *sbx) {
		w := s.wrap(s.policy(), self(t), toolArg, "sysv-read", k, secret)
		reported := false
		for _, g := range w.Gaps {
			reported = reported || strings.Contains(g.Reason, "System V IPC")
		}
		got := toolAnswer(t, s.spawn(w, nil))
		if !reported {
			wantDenied(t, "read the host's System V segment", got, "ENOENT", "EACCES", "EPERM")
			return
		}
		// The report says it is reachable; the report must be true.
		wantOK(t, "the reported System V gap is real", got)
	})
}

// sysvKinds are the System V IPC objects: shared memory, semaphore sets,
// message queues.
var sysvKinds = []string{"shm", "sem", "msg"}

// sysvKey is a random key no other object of this run uses.
func sysvKey() int {
	var b [4]byte
	rand.Read(b[:])
	return int(binary.BigEndian.Uint32(b[:])&0x3fffffff) | 1
}

// sysvID is the id of the host's System V object of kind with key
// (ENOENT: there is none).
func sysvID(kind string, key int) (int, error) {
	var r uintptr
	var e syscall.Errno
	switch kind {
	case "shm":
		return unix.SysvShmGet(key, 0, 0)
	case "sem":
		r, _, e = unix.Syscall(unix.SYS_SEMGET, uintptr(key), 0, 0)
	case "msg":
		r, _, e = unix.Syscall(unix.SYS_MSGGET, uintptr(key), 0, 0)
	}
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// sysvRemove removes the host's System V object of kind with id.
func sysvRemove(kind string, id int) {
	switch kind {
	case "shm":
		unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	case "sem":
		unix.Syscall6(unix.SYS_SEMCTL, uintptr(id), 0, unix.IPC_RMID, 0, 0, 0)
	case "msg":
		unix.Syscall(unix.SYS_MSGCTL, uintptr(id), unix.IPC_RMID, 0)
	}
}

// ipcsLists reports whether ipcs(1) lists an object with key.
func ipcsLists(t *testing.T, key int) bool {
	t.Helper()
	out, err := exec.Command("ipcs").Output()
	if err != nil {
		t.Fatalf("ipcs: %v", err)
	}
	return strings.Contains(string(out), fmt.Sprintf("0x%08x ", key))
}

// TestSysVObjectsStayInside: nothing of System V IPC the command makes
// outlives it (a segment holds its memory with no process attached), and
// the host's objects are out of its reach. Under landlock, which shares
// the host's IPC namespace, every such call is refused (EACCES); under
// namespaces they are made in the sandbox's own IPC namespace, which ends
// with it. The control makes each kind unconfined: it stays, ipcs lists
// it, and the test removes it.
func TestSysVObjectsStayInside(t *testing.T) {
	for _, kind := range sysvKinds {
		key := sysvKey()
		wantOK(t, "control: make a "+kind+" unconfined", hostTool(t, "sysv-make", kind, strconv.Itoa(key)))
		id, err := sysvID(kind, key)
		if err != nil {
			t.Fatalf("control: the %s made unconfined is not there: %v", kind, err)
		}
		if !ipcsLists(t, key) {
			t.Errorf("control: ipcs does not list the %s with key %#x", kind, key)
		}
		sysvRemove(kind, id)
	}
	host, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.SysvShmCtl(host, unix.IPC_RMID, nil)
	wantOK(t, "control: attach the host's segment by its id unconfined", hostTool(t, "sysv-attach", strconv.Itoa(host)))
	forEachRunner(t, func(t *testing.T, s *sbx) {
		for _, kind := range sysvKinds {
			key := sysvKey()
			got := s.tool(s.policy(), "sysv-make", kind, strconv.Itoa(key))
			if s.runner == "landlock" {
				wantDenied(t, "make a "+kind+" under landlock", got, "EACCES")
			} else {
				wantOK(t, "make a "+kind+" in the sandbox's own IPC namespace", got)
			}
			if id, err := sysvID(kind, key); err != unix.ENOENT {
				if err == nil {
					sysvRemove(kind, id)
				}
				t.Errorf("the %s the command made outlived the sandbox (%v)", kind, err)
			}
			if ipcsLists(t, key) {
				t.Errorf("ipcs lists the %s with key %#x after the run", kind, key)
			}
		}
		want := map[string]string{"landlock": "EACCES", "namespaces": "EINVAL"}[s.runner]
		wantDenied(t, "attach the host's segment by its id", s.tool(s.policy(), "sysv-attach", strconv.Itoa(host)), want)
	})
}

// TestSignalsStayInsideTheSandbox: the command is in its spawner's process
// group, and kill(0) signals every member of that group, past any pid
// namespace: an agent that spawned the launcher without a group of its own
// got SIGUSR1 (Node then opens its inspector, which a command with the
// network reached) or SIGKILL. A victim process leads a group,
// the launcher joins it, and the command ignores SIGUSR1 and sends it to
// its group; the victim must not get it. The control runs the same
// command unconfined in the same group: the victim gets it.
func TestSignalsStayInsideTheSandbox(t *testing.T) {
	forEachRunner(t, func(t *testing.T, s *sbx) {
		got := filepath.Join(s.base, "victim-got-usr1")
		victim := exec.Command("/bin/sh", "-c", `trap 'echo usr1 >> "$0"' USR1; echo ready; while :; do sleep 0.02; done`, got)
		victim.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := victim.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { unix.Kill(-victim.Process.Pid, unix.SIGKILL); victim.Wait() }()
		ready := make([]byte, 6)
		if _, err := io.ReadFull(out, ready); err != nil {
			t.Fatal(err)
		}
		inGroup := func(c *exec.Cmd) {
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: victim.Process.Pid, Pdeathsig: syscall.SIGKILL}
		}
		const attack = `trap '' USR1; kill -USR1 0; echo sent`
		control := exec.Command("/bin/sh", "-c", attack)
		inGroup(control)
		if b, err := control.CombinedOutput(); err != nil || !strings.Contains(string(b), "sent") {
			t.Fatalf("control: the unconfined command: %v %s", err, b)
		}
		if !waitFor(got, 2*time.Second) {
			t.Fatal("control: the victim never got the unconfined command's SIGUSR1")
		}
		os.Remove(got)
		r := s.spawn(s.wrap(s.policy(), "/bin/sh", "-c", attack), inGroup)
		if r.code != 0 || !strings.Contains(r.stdout, "sent") {
			t.Fatalf("the command: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		if waitFor(got, 300*time.Millisecond) {
			t.Error("the sandboxed command's kill(0, SIGUSR1) reached a process of its spawner's group")
		}
	})
}

// waitFor reports whether p exists within d.
func waitFor(p string, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

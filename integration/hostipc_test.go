//go:build linux

package integration

import (
	"crypto/rand"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
// under namespaces (its own IPC namespace); landlock has no IPC namespace,
// reports that as a gap, and the gap is true.
func TestHostSysVSharedMemory(t *testing.T) {
	var b [4]byte
	rand.Read(b[:])
	key := int(binary.BigEndian.Uint32(b[:])&0x3fffffff) | 1
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

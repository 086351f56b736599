package sandbox

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// appliedPipe is the pipe of one Command whose launcher reports that the
// sandbox is applied (RunnerFailureRule.AppliedEnv): the launcher writes
// the marker to the write end, which the child inherits as a descriptor;
// Classify reads the read end.
type appliedPipe struct {
	pipeEnds
	got    []byte
	marker string
}

// pipeEnds are the two ends of a pipe a launcher reports on, in the
// wrap's process, closed together (Cleanup).
type pipeEnds struct {
	mu   sync.Mutex
	r, w *os.File
}

// appliedReadWait bounds how long Classify waits for the report. It is
// called after the launcher exited, so the marker is in the pipe already
// if it was ever written: the wait only ends a read that would find none.
const appliedReadWait = 50 * time.Millisecond

// reported reads what the pipe holds so far and reports whether it holds
// the marker.
func (p *appliedPipe) reported() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if strings.Contains(string(p.got), p.marker) {
		return true
	}
	if p.r == nil || p.r.SetReadDeadline(time.Now().Add(appliedReadWait)) != nil {
		return false
	}
	buf := make([]byte, 64)
	for len(p.got) < 4096 {
		n, err := p.r.Read(buf)
		p.got = append(p.got, buf[:n]...)
		if err != nil || strings.Contains(string(p.got), p.marker) {
			break
		}
	}
	return strings.Contains(string(p.got), p.marker)
}

func (p *pipeEnds) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range []*os.File{p.r, p.w} {
		if f != nil {
			f.Close()
		}
	}
	p.r, p.w = nil, nil
}

// passAppliedPipe gives cmd a pipe for the launcher's report, as its next
// extra descriptor (fd 3 for a fresh Command), named by the rule's
// variable. Without a pipe (none could be made) the launcher reports
// nothing and the rule applies without the report.
func (w *Wrapped) passAppliedPipe(cmd *exec.Cmd) {
	rule := w.RunnerFailure
	if rule.AppliedEnv == "" || rule.AppliedMarker == "" {
		return
	}
	r, wr, ok := passPipe(cmd, rule.AppliedEnv, false)
	if !ok {
		return
	}
	w.appliedMu.Lock()
	w.applied = append(w.applied, &appliedPipe{pipeEnds: pipeEnds{r: r, w: wr}, marker: rule.AppliedMarker})
	w.appliedMu.Unlock()
}

// passPipe gives cmd the write end of a new pipe as its next extra
// descriptor (fd 3 for a fresh Command), named by the variable env
// ("FD", or "FD:INODE" with the pipe's inode when withInode), and returns
// both ends; false when no pipe could be made.
func passPipe(cmd *exec.Cmd, env string, withInode bool) (r, w *os.File, ok bool) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, false
	}
	value := strconv.Itoa(3 + len(cmd.ExtraFiles))
	if withInode {
		ino, err := inodeOf(w)
		if err != nil {
			r.Close()
			w.Close()
			return nil, nil, false
		}
		value += ":" + strconv.FormatUint(ino, 10)
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	cmd.Env = append(dropVar(cmd.Env, env), env+"="+value)
	return r, w, true
}

// appliedReported reports whether the launcher of the last Command said
// the sandbox is applied.
func (w *Wrapped) appliedReported() bool {
	w.appliedMu.Lock()
	var last *appliedPipe
	if n := len(w.applied); n > 0 {
		last = w.applied[n-1]
	}
	w.appliedMu.Unlock()
	return last != nil && last.reported()
}

// closeAppliedPipes keeps what every report pipe holds, for a Classify
// after Cleanup, and closes them (Cleanup, once the launchers are killed).
func (w *Wrapped) closeAppliedPipes() {
	w.appliedMu.Lock()
	ps := w.applied
	w.appliedMu.Unlock()
	for _, p := range ps {
		p.reported()
		p.close()
	}
}

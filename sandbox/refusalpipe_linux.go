package sandbox

import (
	"os"
	"os/exec"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"golang.org/x/sys/unix"
)

// recordPipe is the pipe of one Command on which the launcher's guard
// (namespaces) or metadata supervisor (landlock) records the refusals it
// makes (vocab.RefusalsEnv): the child inherits the write end, Classify
// reads the read end.
type recordPipe struct {
	pipeEnds
	got []byte
}

// maxRecordBytes bounds what is read from one pipe: what its one writer
// may write (vocab.MaxRefusalRecords lines, and its count lines).
const maxRecordBytes = vocab.MaxRefusalRecords*vocab.MaxRefusalLine + 64*32

// read returns what the pipe holds, reading what it has now without
// waiting: Classify is called once the launcher exited, and every writer
// ends before the launcher does (the guard with the sandbox's pid
// namespace, the supervisor before the relay), each record written
// before its refusal was answered.
func (p *recordPipe) read() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.r == nil {
		return p.got
	}
	rc, err := p.r.SyscallConn()
	if err != nil {
		return p.got
	}
	buf := make([]byte, 4096)
	for len(p.got) < maxRecordBytes {
		n := 0
		var rerr error
		if err := rc.Read(func(fd uintptr) bool { n, rerr = unix.Read(int(fd), buf); return true }); err != nil || rerr != nil || n <= 0 {
			break
		}
		p.got = append(p.got, buf[:min(n, maxRecordBytes-len(p.got))]...)
	}
	return p.got
}

// passRefusalsPipe gives cmd a pipe for the refusal record, as its next
// extra descriptor, named by vocab.RefusalsEnv. Without a pipe (none
// could be made) nothing is recorded, and the refusals are only those
// matched from the output.
func (w *Wrapped) passRefusalsPipe(cmd *exec.Cmd) {
	if !w.recordsRefusals {
		return
	}
	// The pipe's inode beside its number: a launcher given another file
	// at that number records nothing there.
	r, wr, ok := passPipe(cmd, vocab.RefusalsEnv, true)
	if !ok {
		return
	}
	w.appliedMu.Lock()
	w.refusalPipes = append(w.refusalPipes, &recordPipe{pipeEnds: pipeEnds{r: r, w: wr}})
	w.appliedMu.Unlock()
}

// refusalRecords is what the last Command's launcher recorded.
func (w *Wrapped) refusalRecords() []byte {
	w.appliedMu.Lock()
	var last *recordPipe
	if n := len(w.refusalPipes); n > 0 {
		last = w.refusalPipes[n-1]
	}
	w.appliedMu.Unlock()
	if last == nil {
		return nil
	}
	return last.read()
}

// closeRefusalsPipes keeps what every record pipe holds, for a Classify
// after Cleanup, and closes them.
func (w *Wrapped) closeRefusalsPipes() {
	w.appliedMu.Lock()
	ps := w.refusalPipes
	w.appliedMu.Unlock()
	for _, p := range ps {
		p.read()
		p.close()
	}
}

// inodeOf is f's inode number.
func inodeOf(f *os.File) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

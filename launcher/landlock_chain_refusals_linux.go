//go:build linux && !cgo

package launcher

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/bo-agent/sandbox-local/internal/vocab"
	"golang.org/x/sys/unix"
)

// refusalsChainFD is where the relay hands the supervisor the refusal
// record's descriptor (after chainFD, the relay's pipe).
const refusalsChainFD = chainFD + 1

// takeRefusalsFD takes vocab.RefusalsEnv out of the environment: the
// descriptor it names ("FD:INODE"), checked to be that pipe above 2, made
// close-on-exec and non-blocking; -1 when it is unset or names anything
// else (nothing is recorded then; the launch goes on).
func takeRefusalsFD() (int, error) {
	v, set := os.LookupEnv(vocab.RefusalsEnv)
	if !set {
		return -1, nil
	}
	os.Unsetenv(vocab.RefusalsEnv)
	fds, inos, _ := strings.Cut(v, ":")
	fd, err := strconv.Atoi(fds)
	ino, err2 := strconv.ParseUint(inos, 10, 64)
	var st unix.Stat_t
	if err != nil || err2 != nil || fd < 3 || fd > 65535 || unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO || st.Ino != ino {
		return -1, nil
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		return -1, fmt.Errorf("%s: %w", vocab.RefusalsEnv, err)
	}
	return fd, nil
}

// refusalsValue is vocab.RefusalsEnv's value for the pipe fd will be at
// the number at in the next stage: "AT:INODE".
func refusalsValue(fd, at int) string {
	var st unix.Stat_t
	unix.Fstat(fd, &st) // checked to be a pipe by takeRefusalsFD
	return strconv.Itoa(at) + ":" + strconv.FormatUint(st.Ino, 10)
}

// refusalLog is the chain supervisor's writer of the refusal record: the
// Go twin of shared_linux.c's sbx_refused, deciding by the same
// vocab.RefusalRecorder. Its methods do nothing without a descriptor.
type refusalLog struct {
	mu  sync.Mutex
	fd  int // -1: none
	rec vocab.RefusalRecorder
}

// refused records one refusal; a record the pipe has no room for is
// counted with the rest.
func (l *refusalLog) refused(op, rule, path string) {
	if l == nil || l.fd < 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	line, record := l.rec.Refused(op, rule, path)
	if line == nil {
		return
	}
	if n, err := unix.Write(l.fd, line); record && (err != nil || n != len(line)) {
		l.write(l.rec.Dropped())
	}
}

// end writes the last count line, when one is owed.
func (l *refusalLog) end() {
	if l == nil || l.fd < 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.write(l.rec.End())
}

func (l *refusalLog) write(line []byte) {
	if line != nil {
		unix.Write(l.fd, line) // no room: a later count line says it
	}
}

// metaOpWords are what a record says each metadata call tried.
var metaOpWords = map[metaOp]string{
	metaChmod: "chmod", metaChown: "chown", metaUtimes: "times",
	metaSetxattr: "xattr", metaRemovexattr: "xattr", metaFlags: "flags", metaFsxattr: "flags",
}

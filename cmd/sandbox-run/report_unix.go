//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/nativepath"
	"golang.org/x/sys/unix"
)

// openReport opens the report file before the command runs, so that the
// report, written after the command exited by this unconfined process,
// reaches exactly the file named now. Its directory is opened one
// component at a time from "/" (reportDir): a symbolic link on the way is
// followed only where no writable root contains it, since one inside a
// writable root may have been planted by an earlier command (ws/out ->
// ~/.config). The file is opened beneath that directory without following a
// symlink, and only a regular file of this user with one link (or a new
// one) is accepted. A command that then replaces the name with a link (to
// ~/.bashrc, or dangling) changes nothing: the report goes through this
// descriptor.
func openReport(p string, writable []string) (*os.File, error) {
	dir, err := reportDir(filepath.Dir(p), writable)
	if err != nil {
		return nil, fmt.Errorf("the report's directory %s: %w", filepath.Dir(p), err)
	}
	defer unix.Close(dir)
	// O_NONBLOCK: a FIFO planted at the name must not block the CLI; it is
	// refused below.
	fd, err := unix.Openat(dir, filepath.Base(p), unix.O_WRONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0o600)
	if err == unix.ELOOP {
		return nil, fmt.Errorf("the report path %s is a symbolic link: name the file itself", p)
	}
	if err != nil {
		return nil, fmt.Errorf("open the report %s: %w", p, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("stat the report %s: %w", p, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		err = fmt.Errorf("the report path %s is not a regular file", p)
	case st.Nlink != 1:
		err = fmt.Errorf("the report file %s has %d hard links: another name for it could be a file the command must not change; remove it or name another", p, st.Nlink)
	case int(st.Uid) != os.Geteuid():
		err = fmt.Errorf("the report file %s belongs to uid %d, not to this user", p, st.Uid)
	}
	if err == nil {
		err = unix.SetNonblock(fd, false)
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), p), nil
}

// maxReportLinks bounds the symbolic links reportDir follows (the
// kernel's own limit is 40).
const maxReportLinks = 40

// reportDir opens the directory dir (absolute) from "/", one component
// at a time, each opened beneath the one before without following a
// symlink. A symlink met is followed (its target walked the same way) only
// when no root of writable contains it, and refused otherwise. The path
// walked is tracked as resolved, so a link is judged by where it really
// lies, also when the way to it went through a link outside the roots
// (/tmp -> /private/tmp). ".." goes back to the directory walked before.
func reportDir(dir string, writable []string) (int, error) {
	root, err := unix.Open("/", dirOpenFlags, 0)
	if err != nil {
		return -1, err
	}
	type level struct {
		fd   int
		path string
	}
	stack := []level{{root, "/"}}
	closeFrom := func(i int) {
		for _, l := range stack[i:] {
			unix.Close(l.fd)
		}
		stack = stack[:i]
	}
	pending := strings.Split(dir, "/")
	links := 0
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			if len(stack) > 1 {
				closeFrom(len(stack) - 1)
			}
			continue
		}
		cur := stack[len(stack)-1]
		at := filepath.Join(cur.path, name)
		var st unix.Stat_t
		if err := unix.Fstatat(cur.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			closeFrom(0)
			return -1, fmt.Errorf("%s: %w", at, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			if r := containing(at, writable); r != "" {
				closeFrom(0)
				return -1, fmt.Errorf("%s is a symbolic link inside the writable root %s, which a command could have planted: give the real path", at, r)
			}
			if links++; links > maxReportLinks {
				closeFrom(0)
				return -1, fmt.Errorf("%s: %w", dir, unix.ELOOP)
			}
			target, err := readlinkat(cur.fd, name)
			if err != nil {
				closeFrom(0)
				return -1, fmt.Errorf("%s: %w", at, err)
			}
			if strings.HasPrefix(target, "/") {
				closeFrom(1)
			}
			pending = append(strings.Split(target, "/"), pending...)
			continue
		}
		fd, err := unix.Openat(cur.fd, name, dirOpenFlags|unix.O_NOFOLLOW, 0)
		if err != nil {
			closeFrom(0)
			return -1, fmt.Errorf("%s: %w", at, err)
		}
		stack = append(stack, level{fd, at})
	}
	last := stack[len(stack)-1].fd
	stack = stack[:len(stack)-1]
	closeFrom(0)
	return last, nil
}

// containing is the root of roots that contains p (p itself or an
// ancestor), or "".
func containing(p string, roots []string) string {
	for _, r := range roots {
		if r != "" && nativepath.Within(p, r) {
			return r
		}
	}
	return ""
}

// readlinkat reads the symbolic link name beneath the directory dirfd.
func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; size <= 1<<16; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
	return "", errors.New("symbolic link target too long")
}

// sameFile reports whether f is still the file at p (not replaced or
// removed during the run).
func sameFile(f *os.File, p string) bool {
	var a, b unix.Stat_t
	if unix.Fstat(int(f.Fd()), &a) != nil || unix.Lstat(p, &b) != nil {
		return false
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

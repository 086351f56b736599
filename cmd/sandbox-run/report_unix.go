//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openReport opens the report file before the command runs, so that the
// report, written after the command exited by this unconfined process,
// reaches exactly the file named now: the directory is opened once, the
// file beneath it without following a symlink, and only a regular file of
// this user with one link (or a new one) is accepted. A command that then
// replaces the name with a link (to ~/.bashrc, or dangling) changes
// nothing: the report goes through this descriptor.
func openReport(p string) (*os.File, error) {
	dir, err := unix.Open(filepath.Dir(p), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
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

// sameFile reports whether f is still the file at p (not replaced or
// removed during the run).
func sameFile(f *os.File, p string) bool {
	var a, b unix.Stat_t
	if unix.Fstat(int(f.Fd()), &a) != nil || unix.Lstat(p, &b) != nil {
		return false
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

package main

import "os"

// openReport opens the report file before the command runs (see the unix
// version). On Windows it opens the named file; refusing reparse points and
// hard links there, or links on the way in a writable root (writable), is
// not done yet (SECURITY.md, Known limitations).
func openReport(p string, writable []string) (*os.File, error) {
	return os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o600)
}

func sameFile(f *os.File, p string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Lstat(p)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

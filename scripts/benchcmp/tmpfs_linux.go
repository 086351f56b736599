package main

import "golang.org/x/sys/unix"

// mountTmpfs mounts a tmpfs of its own on dir, and returns its unmount.
func mountTmpfs(dir string) (func(), error) {
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=4g,mode=0755"); err != nil {
		return nil, err
	}
	return func() { unix.Unmount(dir, unix.MNT_DETACH) }, nil
}

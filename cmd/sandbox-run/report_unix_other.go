//go:build unix && !linux

package main

import "golang.org/x/sys/unix"

// dirOpenFlags open a directory of the report's path.
const dirOpenFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC

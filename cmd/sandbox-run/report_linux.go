package main

import "golang.org/x/sys/unix"

// dirOpenFlags open a directory of the report's path: O_PATH needs only
// search permission on it, as a path lookup does.
const dirOpenFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC

package launcher

import (
	"errors"
	"fmt"
	"os/signal"

	"golang.org/x/sys/unix"
)

// leaveTerminal gives a command that was handed no terminal on its stdin,
// stdout or stderr no controlling terminal either: it could otherwise open
// /dev/tty and read what the user types to the caller's terminal (a fake
// password prompt, keystrokes after the caller exited). TIOCNOTTY takes
// this process off its controlling terminal and keeps its process group
// and session (a consumer that stops the command by its process group
// still reaches it); the command inherits having none, and /dev/tty then
// answers ENXIO. With a terminal on any of the three, nothing changes: job
// control, Ctrl-C, editors and pagers keep working.
func leaveTerminal() error {
	for fd := 0; fd <= 2; fd++ {
		if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
			return nil
		}
	}
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ENXIO) || errors.Is(err, unix.ENOENT) {
		return nil // no controlling terminal to leave
	}
	if err != nil {
		return fmt.Errorf("open the controlling terminal to leave it: %w", err)
	}
	defer unix.Close(fd)
	// A session leader (a consumer that started the launcher with Setsid
	// and a controlling terminal) gives the terminal up for the whole
	// session, and the kernel sends the foreground group, this process
	// included, SIGHUP: ignored while it does.
	signal.Ignore(unix.SIGHUP)
	defer signal.Reset(unix.SIGHUP)
	if err := unix.IoctlSetInt(fd, unix.TIOCNOTTY, 0); err != nil {
		return fmt.Errorf("leave the controlling terminal (TIOCNOTTY): %w", err)
	}
	return nil
}

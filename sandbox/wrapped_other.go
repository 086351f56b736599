//go:build !linux

package sandbox

import "os/exec"

// dieWithSpawner does nothing here: only Linux has a parent-death signal.
func dieWithSpawner(cmd *exec.Cmd) {}

// stopGracefully leaves exec's default here: the end of the context kills
// the launcher.
func stopGracefully(cmd *exec.Cmd) {}

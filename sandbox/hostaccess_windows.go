package sandbox

import "os"

// hostPermits reports whether p exists (reading) or, for writing, true:
// the host's permissions are not checked on Windows, where a refusal
// matched from the output is reported as the policy explains it.
func hostPermits(p string, write bool) bool {
	if write {
		return true
	}
	_, err := os.Lstat(p)
	return err == nil
}

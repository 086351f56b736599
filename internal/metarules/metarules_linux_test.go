package metarules

import "testing"

func TestSelfFD(t *testing.T) {
	caller := func(pid int) bool { return pid == 4242 || pid == 4243 }
	for _, c := range []struct {
		path string
		fd   int
		rest string
		ok   bool
	}{
		{"/proc/self/fd/3", 3, "", true},
		{"/proc/thread-self/fd/0", 0, "", true},
		{"/dev/fd/12", 12, "", true},
		{"/proc/4242/fd/5", 5, "", true},
		{"/proc/4243/fd/5/", 5, "/", true},
		{"/proc/self/fd/7/sub/file", 7, "/sub/file", true},
		{"/proc/self/fd/7//x", 7, "//x", true},
		{"/proc/self/fd/2147483647", 2147483647, "", true},
		{"/proc/self/fd/2147483648", 0, "", false}, // above int32: no such name in /proc
		{"/proc/self/fd/03", 0, "", false},         // /proc has no leading zeros
		{"/proc/self/fd/-1", 0, "", false},
		{"/proc/self/fd/+1", 0, "", false},
		{"/proc/self/fd/", 0, "", false},
		{"/proc/self/fd", 0, "", false},
		{"/proc/self/fdx/3", 0, "", false},
		{"/proc/self/cwd", 0, "", false},
		{"/proc/1/fd/3", 0, "", false}, // another process
		{"/proc/04242/fd/3", 0, "", false},
		{"/proc/4242/task/4242/fd/3", 0, "", false},
		{"/proc//self/fd/3", 0, "", false},
		{"/proc/./self/fd/3", 0, "", false},
		{"proc/self/fd/3", 0, "", false},
		{"/var/proc/self/fd/3", 0, "", false},
		{"/dev/fd3", 0, "", false},
	} {
		fd, rest, ok := SelfFD(c.path, caller)
		if fd != c.fd || rest != c.rest || ok != c.ok {
			t.Errorf("SelfFD(%q) = %d, %q, %v; want %d, %q, %v", c.path, fd, rest, ok, c.fd, c.rest, c.ok)
		}
	}
}

package vocab

import (
	"reflect"
	"testing"
)

func TestHeld(t *testing.T) {
	for name, want := range map[string]bool{
		"LD_LIBRARY_PATH": true, "LD_PRELOAD": true, "LD_": true, "MALLOC_TRACE": true,
		"GCONV_PATH": true, "GLIBC_TUNABLES": true, "GODEBUG": true, "GOGC": true,
		"GOMEMLIMIT": true, "GOTRACEBACK": true, "TZDIR": true,
		"GOMAXPROCS": false, "TMPDIR": false, "PATH": false, "HOME": false, "LD": false,
		"ld_preload": false, "XLD_PRELOAD": false, "GODEBUGX": false, "": false,
	} {
		if got := Held(name); got != want {
			t.Errorf("Held(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestHoldAndReleaseEnv(t *testing.T) {
	cases := []struct {
		name            string
		env, held, back []string
	}{
		{"nothing held", []string{"PATH=/bin", "HOME=/h"}, []string{"PATH=/bin", "HOME=/h"}, nil},
		{"odd values", []string{"LD_LIBRARY_PATH=", "GODEBUG=a=b=c", "MALLOC_X=one\ntwo", "PATH=/bin"},
			[]string{HeldEnvPrefix + "LD_LIBRARY_PATH=", HeldEnvPrefix + "GODEBUG=a=b=c", HeldEnvPrefix + "MALLOC_X=one\ntwo", "PATH=/bin"}, nil},
		{"no equals sign", []string{"LD_X", "PLAIN"}, []string{HeldEnvPrefix + "LD_X", "PLAIN"}, nil},
		{"prefixed by the caller: dropped",
			[]string{HeldEnvPrefix + "LD_PRELOAD=/x.so", "LD_LIBRARY_PATH=/l", HeldEnvPrefix + "LD_LIBRARY_PATH=/m", HeldEnvPrefix + "=", HeldEnvPrefix},
			[]string{HeldEnvPrefix + "LD_LIBRARY_PATH=/l"}, []string{"LD_LIBRARY_PATH=/l"}},
		{"empty", []string{}, []string{}, nil},
	}
	for _, c := range cases {
		held := HoldEnv(c.env)
		if !reflect.DeepEqual(held, c.held) {
			t.Errorf("%s: HoldEnv = %q, want %q", c.name, held, c.held)
		}
		want := c.back
		if want == nil {
			want = c.env
		}
		if back := ReleaseEnv(held); !reflect.DeepEqual(back, want) {
			t.Errorf("%s: ReleaseEnv = %q, want %q", c.name, back, want)
		}
	}
}

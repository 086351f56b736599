//go:build linux && cgo && sandbox_ctest

package launcher

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// The C launchers (ns-run, landlock-run) decode the vocabulary themselves
// (no Go runs there); these hold their decoder to the one definition in internal/vocab.

const tok = "0123456789abcdef0123456789abcdef"

func TestCDecoderAgreesWithVocab(t *testing.T) {
	specs := []vocab.Spec{
		{Token: tok, Argv: []string{"true"}},
		{Token: tok, Writable: []string{"/ws", "/other"}, TempDir: "/tmp/x", ReadOnly: []string{"/ws/.git/hooks"},
			Guarded:  []string{"/ws/.git/commondir", "/ws/.envrc"},
			DenyRead: []string{"/home/u/.ssh"}, Dir: "/ws", Network: vocab.NetworkAllow, RequireFull: true, Argv: []string{"sh", "-c", "echo -w -- -net"}},
		{Token: tok, Writable: []string{"/a b/new\nline"}, Probe: true},
		{Token: tok, Argv: []string{"--", "-probe", ""}},
		{Token: tok, Writable: []string{"/"}, Argv: []string{"x"}},
		{Token: tok, Seccomp: "0600000000ff7f00", Argv: []string{"x"}},
		{Token: tok, UnixSockets: []string{"/run/user/1000/agent.sock", "/tmp/odd name\n"}, Argv: []string{"x"}},
		{Token: tok, Network: vocab.NetworkProxied, Ports: []int{43127, 5432, 1, 65535}, Bridge: "/tmp/sandbox-local-0/w.sock", Argv: []string{"x"}},
		{Token: tok, Ports: []int{8080}, Argv: []string{"x"}},
		{Token: tok, LandlockABI: 7, Notice: "net: Landlock ABI 7 has -w -- gaps; ünï", Argv: []string{"x"}},
		{Token: tok, LandlockABI: 99, Argv: []string{"x"}},
		{Token: tok, Limits: vocab.Limits{Cgroups: []string{"/sys/fs/cgroup/pids/sandbox-local-x", "/sys/fs/cgroup/unified/y"}, MaxProcesses: vocab.MaxProcesses,
			MaxAddressSpace: vocab.MaxBytes, TempSize: 1}, Argv: []string{"x"}},
		{Token: tok, Limits: vocab.Limits{MaxProcesses: 1, MaxAddressSpace: 67108864, TempSize: 8388608}, Argv: []string{"x"}},
		{Token: tok, Overlay: "/home/u/go/pkg/mod", OverlayDir: "/c/ws.gomod", Argv: []string{"x"}},
	}
	for i, s := range specs {
		args, err := vocab.Encode(vocab.NsRun, s)
		if err != nil {
			t.Fatal(err)
		}
		want, err := vocab.Decode(args[1:])
		if err != nil {
			t.Fatal(err)
		}
		got, err := cDecode(args[1:])
		if err != nil {
			t.Fatalf("case %d: the C decoder refused %q: %v", i, args, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("case %d:\n C %#v\nGo %#v", i, got, want)
		}
	}
}

func TestCDecoderRejectsWhatVocabRejects(t *testing.T) {
	v := vocab.Version
	cases := [][]string{
		{}, {"sandbox-local/1", "-net", "deny", "--", "true"}, {v, "-net", "deny", "true"}, {v, "--", "true"},
		{v, "-net", "maybe", "--", "true"}, {v, "-net", "deny", "-net", "allow", "--", "true"},
		{v, "-x", "-net", "deny", "--", "true"}, {v, "-net"}, {v, "-w", "ws", "-net", "deny", "--", "true"},
		{v, "-w", "/ws/../etc", "-net", "deny", "--", "true"}, {v, "-w", "/ws/", "-net", "deny", "--", "true"},
		{v, "-w", "/ws//x", "-net", "deny", "--", "true"}, {v, "-w", "/ws/.", "-net", "deny", "--", "true"},
		{v, "-d", "", "-net", "deny", "--", "true"}, {v, "-net", "deny", "--"},
		{v, "-net", "deny", "-probe", "--", "true"}, {v, "-t", "/a", "-t", "/b", "-net", "deny", "--", "true"},
		{v, "-C", "/a", "-C", "/b", "-net", "deny", "--", "true"},
		{v, "-t", "", "-net", "deny", "--", "true"}, {v, "-C", "", "-net", "deny", "--", "true"},
		{v, "-u", "sock", "-net", "deny", "--", "true"}, {v, "-u", "/run/../sock", "-net", "deny", "--", "true"},
		{v, "-net", "deny", "-u"}, {v, "-g", "rel", "-net", "deny", "--", "true"}, {v, "-g", "/a/../b", "-net", "deny", "--", "true"},
		{v, "-net", "deny", "-g"},
		{v, "-seccomp", "0600", "-net", "deny", "--", "true"}, {v, "-seccomp", "0600000000FF7F00", "-net", "deny", "--", "true"},
		{v, "-net", "proxied", "--", "true"}, {v, "-net", "allow", "-port", "80", "--", "true"},
		{v, "-net", "deny", "-port", "0", "--", "true"}, {v, "-net", "deny", "-port", "65536", "--", "true"},
		{v, "-net", "deny", "-port", "080", "--", "true"}, {v, "-net", "deny", "-port", "+80", "--", "true"},
		{v, "-net", "deny", "-port", "", "--", "true"}, {v, "-net", "deny", "-port", "8x", "--", "true"},
		{v, "-net", "deny", "-bridge", "/b", "--", "true"}, {v, "-net", "deny", "-port", "80", "-bridge", "b", "--", "true"},
		{v, "-net", "deny", "-port", "80", "-bridge", "/b", "-bridge", "/c", "--", "true"},
		{v, "-net", "deny", "-abi", "0", "--", "true"}, {v, "-net", "deny", "-abi", "100", "--", "true"},
		{v, "-net", "deny", "-abi", "07", "--", "true"}, {v, "-net", "deny", "-abi", "x", "--", "true"},
		{v, "-net", "deny", "-abi", "7", "-abi", "7", "--", "true"}, {v, "-net", "deny", "-abi"},
		{v, "-net", "deny", "-notice", "", "--", "true"}, {v, "-net", "deny", "-notice", "a\nb", "--", "true"},
		{v, "-net", "deny", "-notice", "a\x7f", "--", "true"},
		{v, "-net", "deny", "-cgroup", "rel", "--", "true"}, {v, "-net", "deny", "-cgroup", "/a/", "--", "true"},
		{v, "-net", "deny", "-cgroup"}, {v, "-net", "deny", "-nproc", "0", "--", "true"},
		{v, "-net", "deny", "-nproc", "4194305", "--", "true"}, {v, "-net", "deny", "-nproc", "050", "--", "true"},
		{v, "-net", "deny", "-nproc", "5", "-nproc", "5", "--", "true"}, {v, "-net", "deny", "-as", "0", "--", "true"},
		{v, "-net", "deny", "-as", "1152921504606846977", "--", "true"}, {v, "-net", "deny", "-as", "99999999999999999999", "--", "true"},
		{v, "-net", "deny", "-tmpsize", "-1", "--", "true"}, {v, "-net", "deny", "-tmpsize", "1", "-tmpsize", "1", "--", "true"},
		{v, "-net", "deny", "-tmpsize", "8M", "--", "true"}, {v, "-net", "deny", "-notice", "a", "-notice", "b", "--", "true"},
		{v, "-net", "deny", "-overlay", "/m", "--", "true"}, {v, "-net", "deny", "-overlay-dir", "/o", "--", "true"},
	}
	for _, args := range cases {
		_, goErr := vocab.Decode(args)
		_, cErr := cDecode(args)
		if goErr == nil || cErr == nil {
			t.Errorf("%q: Go %v, C %v; want both to refuse", args, goErr, cErr)
		}
	}
}

// FuzzCDecoder: on any argv the two decoders agree on accept or refuse,
// and on what they accept.
func FuzzCDecoder(f *testing.F) {
	seed, _ := vocab.Encode(vocab.NsRun, vocab.Spec{Token: tok, Writable: []string{"/ws"}, TempDir: "/t", DenyRead: []string{"/s"}, UnixSockets: []string{"/u"}, Dir: "/ws", Argv: []string{"true"}})
	f.Add(strings.Join(seed[1:], "\x1f"))
	f.Add(vocab.Version + "\x1f-net\x1fallow\x1f-probe\x1f-w\x1f/a\x1f--")
	f.Add(vocab.Version + "\x1f-net\x1fproxied\x1f-port\x1f3128\x1f-bridge\x1f/b\x1f--\x1ftrue")
	f.Add(vocab.Version + "\x1f-net\x1fdeny\x1f-abi\x1f7\x1f-notice\x1fnet: gap\x1f--\x1ftrue")
	f.Add(vocab.Version + "\x1f-net\x1fdeny\x1f-cgroup\x1f/c\x1f-nproc\x1f50\x1f-as\x1f67108864\x1f-tmpsize\x1f8388608\x1f--\x1ftrue")
	f.Fuzz(func(t *testing.T, joined string) {
		if strings.IndexByte(joined, 0) >= 0 {
			return // a C string cannot hold NUL, nor can argv
		}
		args := strings.Split(joined, "\x1f")
		want, goErr := vocab.Decode(args)
		got, cErr := cDecode(args)
		if (goErr == nil) != (cErr == nil) {
			t.Fatalf("%q: Go %v, C %v", args, goErr, cErr)
		}
		if goErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n C %#v\nGo %#v", args, got, want)
		}
	})
}

// TestDecodersRefusePerOption derives its cases from the option table
// (vocab.Options): for each option, a well-formed argv both decoders
// accept and decode alike (the positive control, with the option's bound
// for a Number), then the same argv with the option repeated (refused
// unless repeatable), its value missing or empty, a relative or unclean
// path, a number out of range, an option it needs left out: both refuse
// each.
func TestDecodersRefusePerOption(t *testing.T) {
	for _, o := range vocab.Options {
		val := sampleValue(o)
		// argv builds a launcher argv around opts: the required options
		// and those o needs (but the one left out), then the command
		// (none under -probe).
		argv := func(without string, opts ...string) []string {
			args := append([]string{vocab.Version}, opts...)
			for _, other := range vocab.Options {
				needed := slices.ContainsFunc(o.Needs, func(id vocab.OptionID) bool { return vocab.Options[id].Name == other.Name })
				if other.Name != o.Name && other.Name != without && (other.Required || needed) {
					args = append(args, other.Name, sampleValue(other))
				}
			}
			args = append(args, "--")
			if o.Name != vocab.Options[vocab.OptProbe].Name {
				args = append(args, "true")
			}
			return args
		}
		opt := func(v string) []string {
			if o.Value == vocab.Flag {
				return []string{o.Name}
			}
			return []string{o.Name, v}
		}
		given := func(v string) []string { return argv("", opt(v)...) }
		decode := func(args []string) (goErr, cErr error) {
			_, goErr = vocab.Decode(args)
			_, cErr = cDecode(args)
			return goErr, cErr
		}
		accepted := []string{val}
		if o.Value == vocab.Number {
			accepted = append(accepted, strconv.FormatInt(o.Max, 10))
		}
		for _, v := range accepted {
			args := given(v)
			want, goErr := vocab.Decode(args)
			got, cErr := cDecode(args)
			if goErr != nil || cErr != nil {
				t.Fatalf("%q: Go %v, C %v; want both to accept", args, goErr, cErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q:\n C %#v\nGo %#v", args, got, want)
			}
		}
		twice := argv("", append(opt(val), opt(val)...)...)
		goErr, cErr := decode(twice)
		if o.Repeatable && (goErr != nil || cErr != nil) {
			t.Errorf("%s repeated: Go %v, C %v; want both to accept", o.Name, goErr, cErr)
		}
		refused := [][]string{}
		if !o.Repeatable {
			refused = append(refused, twice)
		}
		if o.Value != vocab.Flag {
			refused = append(refused, []string{vocab.Version, "-net", "deny", o.Name}, given(""))
		}
		if o.Path {
			refused = append(refused, given(val[1:]), given(val+"/.."), given(val+"/"))
		}
		if o.Value == vocab.Number {
			refused = append(refused, given("0"), given("0"+val), given("+"+val), given(strconv.FormatInt(o.Max+1, 10)))
		}
		for _, need := range o.Needs {
			refused = append(refused, argv(vocab.Options[need].Name, opt(val)...))
		}
		for _, args := range refused {
			if goErr, cErr := decode(args); goErr == nil || cErr == nil {
				t.Errorf("%q: Go %v, C %v; want both to refuse", args, goErr, cErr)
			}
		}
	}
}

// sampleValue is a value of o that both decoders accept, from its row: a
// clean absolute path named after its C field, a number within its bound,
// deny for the network mode, a one-instruction program, a line of text.
func sampleValue(o vocab.Option) string {
	switch {
	case o.Value == vocab.Flag:
		return ""
	case o.Path:
		return "/sample/" + o.CField
	case o.Value == vocab.Number:
		return strconv.FormatInt(min(o.Max, 80), 10)
	case o.Value == vocab.NetModeWord:
		return vocab.NetDeny
	case o.Value == vocab.Program:
		return "0600000000ff7f00"
	}
	return "sample " + o.What
}

//go:build linux

package integration

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// corpusTime is the time every fixture entry carries, so a tool that keeps
// times is seen keeping them.
var corpusTime = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// corpusCase is one ordinary tool that sets modes, owners or times: a
// script run by /bin/sh with $1 the destination, $2 the fixture directory
// and $3 a scratch directory, once unconfined (the control) and once in the
// workspace under each runner.
type corpusCase struct {
	name   string
	script string
	// times: the tool keeps or sets times, so they are compared too;
	// linkTimes: a symlink's too (unzip leaves a symlink's own).
	times, linkTimes bool
	// want: entries (relative to the destination) and the modes the
	// control must have, so the comparison is not of two empty results.
	want map[string]os.FileMode
}

var corpusCases = []corpusCase{
	{name: "tar", script: `mkdir "$1" && tar -xf "$2/t.tar" -C "$1"`, times: true, linkTimes: true,
		want: map[string]os.FileMode{"d1": 0o750, "d1/d2": 0o700, "d1/d2/f": 0o640, "d1/run.sh": 0o755, "d1/ro": 0o444}},
	{name: "tar-no-same", script: `mkdir "$1" && tar --no-same-owner --no-same-permissions -xf "$2/t.tar" -C "$1"`, times: true, linkTimes: true,
		want: map[string]os.FileMode{"d1": 0o750, "d1/d2/f": 0o640, "d1/run.sh": 0o755}},
	{name: "cp-a", script: `cp -a "$2/src" "$1"`, times: true, linkTimes: true,
		want: map[string]os.FileMode{"d1": 0o750, "d1/d2": 0o700, "d1/d2/f": 0o640, "d1/run.sh": 0o755, "d1/ro": 0o444}},
	{name: "rsync-a", script: `rsync -a "$2/src/" "$1/"`, times: true, linkTimes: true,
		want: map[string]os.FileMode{"d1": 0o750, "d1/d2": 0o700, "d1/d2/f": 0o640, "d1/run.sh": 0o755, "d1/ro": 0o444}},
	{name: "install", script: `mkdir "$1" && install -m 0750 "$2/src/d1/d2/f" "$1/inst" && install -d -m 0711 "$1/dir" && install -p -m 0600 "$2/src/d1/ro" "$1/kept"`, times: false,
		want: map[string]os.FileMode{"inst": 0o750, "dir": 0o711, "kept": 0o600}},
	{name: "touch", script: `mkdir "$1" && echo x > "$1/f" && ln -s f "$1/l" && touch -d "2003-03-03 03:03:03" "$1/f" && touch -h -d "2004-04-04 04:04:04" "$1/l" && touch -d "2002-02-02" "$1/g"`, times: true, linkTimes: true,
		want: map[string]os.FileMode{"f": 0o644, "g": 0o644}},
	{name: "unzip", script: `unzip -q "$2/z.zip" -d "$1"`, times: true, linkTimes: false,
		want: map[string]os.FileMode{"d1": 0o750, "d1/d2": 0o700, "d1/d2/f": 0o640, "d1/run.sh": 0o755, "d1/ro": 0o444}},
	{name: "git", script: `git clone -q --no-hardlinks "$2/repo" "$1" && cd "$1" && git checkout -q modes`,
		want: map[string]os.FileMode{"run.sh": 0o755, "plain.txt": 0o755, "other.txt": 0o644}},
	{name: "pip", script: `python3 -m venv "$1" && "$1/bin/pip" install -q --no-index --no-cache-dir --disable-pip-version-check "$2/sbxwheel-1.0-py3-none-any.whl"`,
		want: map[string]os.FileMode{"bin/sbxrun": 0o755}},
}

// npmCases: npm pack of a package with an executable bin, and npm install
// of that tarball, offline. Apart from corpusCases: the Docker rows carry no
// node (scripts/docker-row).
var npmCases = []corpusCase{
	{name: "npm", script: `mkdir "$1" && cd "$1" && export npm_config_cache="$3/npm-cache" npm_config_update_notifier=false &&
		cp -r "$2/pkg" pkg && (cd pkg && npm pack -q >/dev/null) && echo '{"name":"proj","version":"1.0.0"}' > package.json &&
		npm install -q --offline --no-audit --no-fund --ignore-scripts ./pkg/sbxpkg-1.0.0.tgz >/dev/null && rm -rf pkg package-lock.json`,
		want: map[string]os.FileMode{"node_modules/sbxpkg/bin/cli.js": 0o755, "node_modules/sbxpkg/lib.js": 0o644}},
}

// TestNpmPackAndInstallKeepModes: npm pack, then npm install of the local
// tarball, leave the same modes in the workspace as unconfined, under both
// runners (as TestToolsSetModesOwnersAndTimes).
func TestNpmPackAndInstallKeepModes(t *testing.T) {
	needClient(t, "npm")
	fix, controls := corpusControls(t, npmCases)
	forEachRunner(t, func(t *testing.T, s *sbx) { corpusInWorkspace(t, s, npmCases, fix, controls) })
}

// TestToolsSetModesOwnersAndTimes: ordinary tools that set modes, owners
// and times (tar, cp -a, rsync -a, install, touch -d, unzip, git checkout,
// pip install of a local wheel into a venv; npm: TestNpmPackAndInstallKeepModes)
// leave in the workspace what they leave unconfined: the same
// entries, modes, owners and (where the tool keeps them) times, under both
// runners. Under landlock each of their metadata calls is made by the
// supervisor (tar's chmod of /proc/self/fd/N, cp's and rsync's times of a
// symlink included). The confinement stays: the same tools aimed at a tree
// outside the writable roots fail and change nothing in it.
func TestToolsSetModesOwnersAndTimes(t *testing.T) {
	for _, c := range []string{"tar", "cp", "rsync", "install", "touch", "unzip", "zip", "git", "python3"} {
		needClient(t, c)
	}
	fix, controls := corpusControls(t, corpusCases)
	root := os.Geteuid() == 0
	if root {
		// Control: root unconfined gives the files the archive's owners.
		dest := filepath.Join(t.TempDir(), "others")
		if out, err := corpusRun(`mkdir "$1" && tar -xf "$2/others.tar" -C "$1"`, dest, fix, ""); err != nil {
			t.Fatalf("control: tar -xf of other owners' archive as root: %v %s", err, out)
		}
		if e := corpusTree(t, dest)["d1/d2/f"]; e.uid != 1234 || e.gid != 2345 {
			t.Fatalf("control: tar as root left d1/d2/f owned %d:%d, want 1234:2345", e.uid, e.gid)
		}
	}
	forEachRunner(t, func(t *testing.T, s *sbx) {
		corpusInWorkspace(t, s, corpusCases, fix, controls)

		// Root inside has no capability: other users' owners are refused
		// (landlock EPERM; namespaces EINVAL, the ids are not mapped), the
		// files stay the caller's, with their modes and times.
		if root {
			dest := filepath.Join(s.ws, "others")
			r := s.run(s.policy(), "/bin/sh", "-c", `mkdir "$0" && tar -xf "$1/others.tar" -C "$0"`, dest, fix)
			if r.code == 0 || !strings.Contains(r.stderr, "Cannot change ownership to uid 1234") {
				t.Errorf("tar -xf of other owners' archive as root: exit %d, stderr %q; want the owners refused", r.code, r.stderr)
			}
			if e := corpusTree(t, dest)["d1/d2/f"]; e.uid != 0 || e.mode != 0o640 || e.mtime != corpusTime.UnixNano() {
				t.Errorf("tar -xf of other owners' archive as root: d1/d2/f is %+v, want root's, mode 640, the archive's time", e)
			}
		}

		// Aimed outside the writable roots: refused, nothing changed.
		out := filepath.Join(s.base, "outside")
		if o, err := corpusRun(`cp -r "$2/src" "$1" && chmod -R u+w,go-w "$1"`, out, fix, ""); err != nil {
			t.Fatalf("outside tree: %v %s", err, o)
		}
		before := corpusTree(t, out)
		for _, script := range []string{
			`tar -xf "$2/t.tar" -C "$1"`,
			`cp -a "$2/src/." "$1"`,
			`rsync -a "$2/src/" "$1/"`,
			`install -m 0700 "$2/src/d1/d2/f" "$1/inst"`,
			`touch -d 2001-01-01 "$1/d1/d2/f"`,
			`touch -h -d 2001-01-01 "$1/d1/d2/lnk"`,
			`chmod 0700 "$1/d1"`,
			`unzip -qo "$2/z.zip" -d "$1"`,
		} {
			r := s.run(s.policy(), "/bin/sh", "-c", script, "sh", out, fix)
			if r.code == 0 {
				t.Errorf("%q aimed outside the writable roots: exit 0", script)
			}
		}
		after := corpusTree(t, out)
		for _, rel := range corpusNames(before, after) {
			if before[rel] != after[rel] {
				t.Errorf("outside the writable roots, %s changed: %+v, then %+v", rel, before[rel], after[rel])
			}
		}
	})
}

// corpusControls makes the fixture and runs each case unconfined, into a
// temp dir: the fixture's directory, and each case's resulting tree.
func corpusControls(t *testing.T, cases []corpusCase) (string, map[string]map[string]corpusEntry) {
	t.Helper()
	// Beside the cases' worlds, not under /tmp, which the namespaces
	// runner shows through an overlay.
	fix, err := os.MkdirTemp(baseRoot, "sbx-corpus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(fix) })
	corpusFixture(t, fix)
	controls := map[string]map[string]corpusEntry{}
	for _, c := range cases {
		dest := filepath.Join(t.TempDir(), c.name)
		if out, err := corpusRun(c.script, dest, fix, t.TempDir()); err != nil {
			t.Fatalf("control: %s unconfined: %v\n%s", c.name, err, out)
		}
		controls[c.name] = corpusTree(t, dest)
		for rel, mode := range c.want {
			if e, ok := controls[c.name][rel]; !ok || e.mode != mode {
				t.Fatalf("control: %s unconfined: %s is %+v, want mode %o", c.name, rel, e, mode)
			}
		}
		// And the times it keeps are the fixture's: a file's, a symlink's.
		for rel, keeps := range map[string]bool{"d1/d2/f": c.times, "d1/d2/lnk": c.linkTimes} {
			if e, ok := controls[c.name][rel]; ok && keeps && e.mtime != corpusTime.UnixNano() {
				t.Fatalf("control: %s unconfined: %s has mtime %v, want %v", c.name, rel, time.Unix(0, e.mtime), corpusTime)
			}
		}
	}
	return fix, controls
}

// corpusInWorkspace runs each case in the workspace and compares what it
// left with its control.
func corpusInWorkspace(t *testing.T, s *sbx, cases []corpusCase, fix string, controls map[string]map[string]corpusEntry) {
	t.Helper()
	for _, c := range cases {
		dest := filepath.Join(s.ws, c.name)
		r := s.run(s.policy(), "/bin/sh", "-c", `scratch="$TMPDIR/scratch" && mkdir -p "$scratch" && sh -c "umask 022; $0" sh "$1" "$2" "$scratch"`, c.script, dest, fix)
		if r.code != 0 {
			t.Errorf("%s in the workspace: exit %d, stderr %s", c.name, r.code, r.stderr)
			continue
		}
		got, want := corpusTree(t, dest), controls[c.name]
		for _, rel := range corpusNames(got, want) {
			g, w := got[rel], want[rel]
			if !c.times || (!c.linkTimes && g.typ == fs.ModeSymlink) {
				g.mtime, w.mtime = 0, 0
			}
			if g != w {
				t.Errorf("%s: %s is %+v in the workspace, %+v unconfined", c.name, rel, g, w)
			}
		}
	}
}

// corpusEntry is what the corpus compares of one entry: its type and mode
// bits, owner, group, and modification time (ns; 0 when absent).
type corpusEntry struct {
	mode     os.FileMode
	typ      fs.FileMode
	uid, gid uint32
	mtime    int64
	link     string
}

// corpusTree is every entry beneath root but root itself, by relative path.
func corpusTree(t *testing.T, root string) map[string]corpusEntry {
	t.Helper()
	tree := map[string]corpusEntry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		if d.Name() == ".git" {
			return fs.SkipDir // git's own store: how it was filled (links or copies) is not the tool's result
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		e := corpusEntry{mode: os.FileMode(st.Mode & 0o7777), typ: d.Type(), uid: st.Uid, gid: st.Gid, mtime: st.Mtim.Nano()}
		if d.Type() == fs.ModeSymlink {
			e.mode = 0 // a symlink's own mode means nothing
			e.link, _ = os.Readlink(p)
		}
		tree[rel] = e
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
	return tree
}

// corpusNames is the names in either tree, sorted.
func corpusNames(a, b map[string]corpusEntry) []string {
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// corpusRun runs a corpus script unconfined.
func corpusRun(script, dest, fix, scratch string) (string, error) {
	cmd := exec.Command("/bin/sh", "-c", "umask 022; "+script, "sh", dest, fix, scratch)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// corpusFixture makes the inputs in fix: a tree (src) of directories and
// files with distinct modes, a symlink, all at corpusTime; its tar and zip
// archives; a git repository whose branch "modes" makes a file
// executable; an npm package with an executable bin; and a wheel with an
// executable script.
func corpusFixture(t *testing.T, fix string) {
	t.Helper()
	src := filepath.Join(fix, "src")
	files := []struct {
		path string
		mode os.FileMode
	}{{"d1/d2/f", 0o640}, {"d1/run.sh", 0o755}, {"d1/ro", 0o444}}
	for _, f := range files {
		write(t, filepath.Join(src, f.path), "#!/bin/sh\necho "+f.path+"\n")
		os.Chmod(filepath.Join(src, f.path), f.mode)
	}
	if err := os.Symlink("f", filepath.Join(src, "d1/d2/lnk")); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(src, "d1/d2"), 0o700)
	os.Chmod(filepath.Join(src, "d1"), 0o750)
	ts := []unix.Timespec{unix.NsecToTimespec(corpusTime.UnixNano()), unix.NsecToTimespec(corpusTime.UnixNano())}
	for _, p := range []string{"d1/d2/lnk", "d1/d2/f", "d1/run.sh", "d1/ro", "d1/d2", "d1"} {
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(src, p), ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			t.Fatal(err)
		}
	}
	git := "git -c user.email=a@b -c user.name=a -c init.defaultBranch=main"
	script := `set -e
tar -cf t.tar -C src d1
tar --numeric-owner --owner=1234 --group=2345 -cf others.tar -C src d1
(cd src && zip -qry ../z.zip d1)
mkdir repo && cd repo && ` + git + ` init -q && printf 'a\n' > plain.txt && printf 'b\n' > other.txt && printf '#!/bin/sh\n' > run.sh && chmod 755 run.sh &&
  git add . && ` + git + ` commit -qm one && git checkout -qb modes && chmod 755 plain.txt && ` + git + ` commit -qam two && git checkout -q main && cd ..
mkdir -p pkg/bin && printf '{"name":"sbxpkg","version":"1.0.0","bin":{"sbxpkg":"bin/cli.js"}}\n' > pkg/package.json &&
  printf '#!/usr/bin/env node\n' > pkg/bin/cli.js && chmod 755 pkg/bin/cli.js && printf 'module.exports = 1\n' > pkg/lib.js`
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = fix
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("corpus fixture: %v\n%s", err, out)
	}
	writeWheel(t, filepath.Join(fix, "sbxwheel-1.0-py3-none-any.whl"))
}

// writeWheel writes a wheel (a zip with its dist-info and RECORD) holding
// a module and a script pip installs executable into the venv's bin.
func writeWheel(t *testing.T, path string) {
	t.Helper()
	files := []struct {
		name, body string
		mode       os.FileMode
	}{
		{"sbxwheel/__init__.py", "X = 1\n", 0o644},
		{"sbxwheel-1.0.data/scripts/sbxrun", "#!python\nprint('x')\n", 0o755},
		{"sbxwheel-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: sbxwheel\nVersion: 1.0\n", 0o644},
		{"sbxwheel-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: sandbox-local-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n", 0o644},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: corpusTime}
		h.SetMode(f.mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f.body))
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString("sbxwheel-1.0.dist-info/RECORD,,\n")
	w, err := zw.Create("sbxwheel-1.0.dist-info/RECORD")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

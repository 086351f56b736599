package sandbox

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/nativepath"
)

// Access is what a wrap's policy allows at one path, and why: the answer
// of Wrapped.Explain, and what a Refusal is checked against.
type Access struct {
	// Path is the path asked about, made absolute against the command's
	// working directory.
	Path string `json:"path"`
	// Read: the command may read it (deny-read paths aside, the host's
	// own permissions still apply).
	Read bool `json:"read"`
	// Write: the command may create, change or remove it.
	Write bool `json:"write"`
	// ReadRule and WriteRule say which rule decided each.
	ReadRule  string `json:"read_rule"`
	WriteRule string `json:"write_rule"`
	// AllowRead and AllowWrite name the change (a sandbox-run flag and
	// the Policy field) that would allow what is refused; empty when it
	// is allowed, or when nothing releases it.
	AllowRead  string `json:"allow_read,omitempty"`
	AllowWrite string `json:"allow_write,omitempty"`
}

// pathRules is the part of a wrap's resolved policy that Explain and the
// refusal matcher judge paths by.
type pathRules struct {
	mode        Mode
	dir         string   // the command's working directory
	writable    []string // the writable roots, workspace first
	temp        string   // the run's own temp dir
	readOnly    []string // protected paths that existed at Wrap
	guarded     []string // protected names that did not
	toolConfigs []string // default tool configs still protected, relative to each root
	extraRO     []string // the caller's ReadOnlySubpaths, as given
	denyRead    []string
	userDeny    []string // the caller's own DenyRead (the rest are defaults)
	network     NetworkMode
	withheld    []string // variables withheld as credentials
	home        string   // the user's home directory, symlinks resolved; "" when none
}

// Explain says what the wrap's policy allows at path (relative to the
// command's working directory when not absolute), and why: the rule that
// decided reading and writing it, and the change that would allow what is
// refused. It judges the policy, not the host: a path the policy lets the
// command write may still be refused by its owner's permissions.
func (w *Wrapped) Explain(path string) Access {
	if w == nil || w.rules == nil {
		return Access{Path: path, ReadRule: "no policy: this wrap was not made by Wrap", WriteRule: "no policy: this wrap was not made by Wrap"}
	}
	return w.rules.explain(path)
}

func (r *pathRules) explain(path string) Access {
	if !filepath.IsAbs(path) && r.dir != "" {
		path = filepath.Join(r.dir, path)
	}
	a := Access{Path: filepath.Clean(path), Read: true, ReadRule: "readable: not a deny-read path"}
	for _, d := range r.denyRead {
		if nativepath.Within(a.Path, d) {
			a.Read = false
			if slices.Contains(r.userDeny, d) {
				a.ReadRule = "deny-read path " + d + " (Policy.DenyRead)"
				a.AllowRead = "drop --deny-read " + d + " (Policy.DenyRead)"
			} else {
				a.ReadRule = "deny-read path " + d + ": a credential store, unreadable by default"
				a.AllowRead = "--allow-read " + d + " (Policy.AllowRead)"
			}
			break
		}
	}
	a.Write, a.WriteRule, a.AllowWrite = r.writeRule(a.Path)
	return a
}

// writeRule decides writing p: the temp dir, then the protected paths,
// then the writable roots.
func (r *pathRules) writeRule(p string) (bool, string, string) {
	if r.temp != "" && nativepath.Within(p, r.temp) {
		return true, "writable: the run's temp dir ($TMPDIR)", ""
	}
	if r.mode == ReadOnly {
		return false, "read-only mode: only $TMPDIR is writable", "--mode workspace-write (Policy.Mode)"
	}
	for _, e := range append(append([]string(nil), r.readOnly...), r.guarded...) {
		if !nativepath.Within(p, e) {
			continue
		}
		if name := r.configName(e); name != "" {
			return false, "protected tool config " + name + ": a later tool runs what it names", "--writable-config " + name + " (Policy.WritableConfigs)"
		}
		if given := r.callerReadOnly(e); given != "" {
			return false, "read-only subpath " + e + " (Policy.ReadOnlySubpaths)", "drop --read-only " + given + " (Policy.ReadOnlySubpaths)"
		}
		return false, "protected " + e + ": a version-control hook or config that the user's own tools run", ""
	}
	for _, root := range r.writable {
		if nativepath.Within(p, root) {
			return true, "writable: inside the writable root " + root, ""
		}
	}
	roots := append(append([]string(nil), r.writable...), "$TMPDIR")
	rule := "outside the writable roots (" + strings.Join(roots, ", ") + ")"
	if r.sensitive(p) || filepath.Dir(p) == filepath.Dir(filepath.Dir(p)) {
		// The home directory's dot-files hold the configs the user's own
		// tools run and the credentials: a writable root there would also
		// lift the deny-read of what it holds; and the file system's root
		// is never a writable root. No flag is offered for an agent to
		// pass on a command's say-so.
		where := "in the home directory's dot-files"
		if !r.sensitive(p) {
			where = "directly below /"
		}
		return false, rule + "; " + where + ", where no writable root is suggested", ""
	}
	return false, rule, "--allow-write " + filepath.Dir(p) + " (Policy.WritableRoots)"
}

// sensitive reports whether p is a default deny-read path or lies in one,
// or is a dot-file or dot-directory of the home directory or beneath one.
func (r *pathRules) sensitive(p string) bool {
	for _, d := range r.denyRead {
		if !slices.Contains(r.userDeny, d) && nativepath.Within(p, d) {
			return true
		}
	}
	if r.home == "" || !nativepath.Within(p, r.home) || p == r.home {
		return false
	}
	rel, err := filepath.Rel(r.home, p)
	return err == nil && strings.HasPrefix(rel, ".")
}

// configName returns the default tool config protected path e is, or "".
func (r *pathRules) configName(e string) string {
	for _, root := range r.writable {
		for _, c := range r.toolConfigs {
			if filepath.Join(root, c) == e {
				return c
			}
		}
	}
	return ""
}

// callerReadOnly returns the caller's ReadOnlySubpaths entry that made e
// protected, or "".
func (r *pathRules) callerReadOnly(e string) string {
	for _, x := range r.extraRO {
		if x == e {
			return x
		}
		for _, root := range r.writable {
			if !filepath.IsAbs(x) && filepath.Join(root, x) == e {
				return x
			}
		}
	}
	return ""
}

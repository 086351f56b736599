//go:build windows

package winacl

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/windows"
)

// stillActive is STILL_ACTIVE, GetExitCodeProcess's code for a running
// process.
const stillActive = 259

// aceInheritedFlag is INHERITED_ACE in an ACE header.
const aceInheritedFlag = 0x10

// aceInheritFlags are OBJECT_INHERIT_ACE|CONTAINER_INHERIT_ACE, and
// aceInheritOnly is INHERIT_ONLY_ACE.
const (
	aceInheritFlags = 0x1 | 0x2
	aceInheritOnly  = 0x8
)

// NewSystem returns the real Windows System: NTFS DACLs through
// GetNamedSecurityInfoW / SetEntriesInAclW / SetNamedSecurityInfoW, 8.3
// names through GetLongPathNameW, processes through OpenProcess and
// GetProcessTimes.
func NewSystem() System { return winSystem{} }

type winSystem struct{}

func (winSystem) TempRoot() (string, error) { return os.TempDir(), nil }

func (winSystem) LongPathName(path string) (string, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return "", fmt.Errorf("GetLongPathNameW %q: %w", path, err)
	}
	buf := make([]uint16, 260)
	for {
		n, err := windows.GetLongPathName(p, &buf[0], uint32(len(buf)))
		if err != nil {
			return "", fmt.Errorf("GetLongPathNameW %q: %w", path, err)
		}
		if n <= uint32(len(buf)) {
			return windows.UTF16ToString(buf[:n]), nil
		}
		buf = make([]uint16, n)
	}
}

func isDir(path string) (bool, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return false, err
	}
	attrs, err := windows.GetFileAttributes(p)
	if err != nil {
		return false, fmt.Errorf("GetFileAttributesW %q: %w", path, err)
	}
	return attrs&windows.FILE_ATTRIBUTE_DIRECTORY != 0, nil
}

// readDACL reads path's DACL and whether it is protected.
func readDACL(path string) (*windows.SECURITY_DESCRIPTOR, *windows.ACL, bool, error) {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return nil, nil, false, fmt.Errorf("GetNamedSecurityInfoW %q: %w", path, err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return nil, nil, false, fmt.Errorf("DACL of %q: %w", path, err)
	}
	ctl, _, err := sd.Control()
	if err != nil {
		return nil, nil, false, fmt.Errorf("security descriptor control of %q: %w", path, err)
	}
	return sd, dacl, ctl&windows.SE_DACL_PROTECTED != 0, nil
}

func (winSystem) HasACE(path string, want ACE) (bool, error) {
	dir, err := isDir(path)
	if err != nil {
		return false, err
	}
	_, dacl, _, err := readDACL(path)
	if err != nil {
		return false, err
	}
	if dacl == nil {
		// A NULL DACL grants everyone everything; merging an ACE into it
		// would replace it with a DACL granting only that ACE.
		return false, fmt.Errorf("%q has a NULL DACL: access is not controlled there", path)
	}
	wantType := uint8(windows.ACCESS_ALLOWED_ACE_TYPE)
	if want.Deny {
		wantType = windows.ACCESS_DENIED_ACE_TYPE
	}
	var wantFlags uint8
	if want.Inherit && dir {
		wantFlags = aceInheritFlags
	}
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return false, fmt.Errorf("GetAce %q #%d: %w", path, i, err)
		}
		h := ace.Header
		if h.AceType != wantType || h.AceFlags&(aceInheritedFlag|aceInheritOnly) != 0 ||
			h.AceFlags&aceInheritFlags != wantFlags {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		if SID(sid.String()) == want.SID && Access(ace.Mask)&want.Access == want.Access {
			return true, nil
		}
	}
	return false, nil
}

func (winSystem) AddACE(path string, ace ACE) error {
	mode := windows.GRANT_ACCESS
	if ace.Deny {
		mode = windows.DENY_ACCESS
	}
	return mergeACE(path, ace, windows.ACCESS_MODE(mode))
}

func (winSystem) RevokeACE(path string, sid SID) error {
	return mergeACE(path, ACE{SID: sid}, windows.REVOKE_ACCESS)
}

// mergeACE applies one EXPLICIT_ACCESS entry to path's DACL, keeping the
// DACL's protection as it was.
func mergeACE(path string, ace ACE, mode windows.ACCESS_MODE) error {
	dir, err := isDir(path)
	if err != nil {
		return err
	}
	_, old, protected, err := readDACL(path)
	if err != nil {
		return err
	}
	if old == nil { // a NULL DACL: nothing to revoke, and nothing to merge into
		if mode == windows.REVOKE_ACCESS {
			return nil
		}
		return fmt.Errorf("%q has a NULL DACL: refusing to replace it", path)
	}
	sid, err := windows.StringToSid(string(ace.SID))
	if err != nil {
		return fmt.Errorf("ConvertStringSidToSidW %s: %w", ace.SID, err)
	}
	var pin runtime.Pinner
	pin.Pin(sid)
	defer pin.Unpin()
	inherit := uint32(windows.NO_INHERITANCE)
	if ace.Inherit && dir {
		inherit = windows.SUB_CONTAINERS_AND_OBJECTS_INHERIT
	}
	entry := windows.EXPLICIT_ACCESS{
		AccessPermissions: windows.ACCESS_MASK(ace.Access),
		AccessMode:        mode,
		Inheritance:       inherit,
		Trustee: windows.TRUSTEE{
			TrusteeForm:  windows.TRUSTEE_IS_SID,
			TrusteeType:  windows.TRUSTEE_IS_UNKNOWN,
			TrusteeValue: windows.TrusteeValueFromSID(sid),
		},
	}
	acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{entry}, old)
	if err != nil {
		return fmt.Errorf("SetEntriesInAclW %q: %w", path, err)
	}
	info := windows.SECURITY_INFORMATION(windows.DACL_SECURITY_INFORMATION)
	if protected {
		info |= windows.PROTECTED_DACL_SECURITY_INFORMATION
	} else {
		info |= windows.UNPROTECTED_DACL_SECURITY_INFORMATION
	}
	if err := windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, info, nil, nil, acl, nil); err != nil {
		return fmt.Errorf("SetNamedSecurityInfoW %q: %w", path, err)
	}
	return nil
}

// currentUserSID returns the user SID of the process token.
func currentUserSID() (string, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("GetTokenInformation(TokenUser): %w", err)
	}
	return tu.User.Sid.String(), nil
}

func (winSystem) MkdirPrivate(path string) error {
	user, err := currentUserSID()
	if err != nil {
		return err
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;OICI;FA;;;" + user + ")(A;OICI;FA;;;SY)")
	if err != nil {
		return fmt.Errorf("ConvertStringSecurityDescriptorToSecurityDescriptorW: %w", err)
	}
	sa := windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(sa))
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	if err := windows.CreateDirectory(p, &sa); err != nil {
		return &os.PathError{Op: "CreateDirectoryW", Path: path, Err: err}
	}
	return nil
}

func (winSystem) RemoveAll(path string) error { return os.RemoveAll(path) }

func (winSystem) ReadDir(path string) ([]string, error) {
	es, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name()
	}
	return names, nil
}

func (winSystem) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

func (winSystem) WriteFile(path string, data []byte) error {
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return err
	}
	tmp := path + ".tmp-" + hex.EncodeToString(r[:])
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	return nil
}

func (winSystem) Remove(path string) error { return os.Remove(path) }

func (winSystem) Self() (ProcessID, error) {
	start, err := creationTime(windows.CurrentProcess())
	if err != nil {
		return ProcessID{}, err
	}
	return ProcessID{PID: windows.GetCurrentProcessId(), Start: start}, nil
}

func (winSystem) StartTime(pid uint32) (uint64, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
		return 0, fmt.Errorf("pid %d: %w", pid, ErrProcessGone)
	}
	if err != nil {
		return 0, fmt.Errorf("OpenProcess %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return 0, fmt.Errorf("GetExitCodeProcess %d: %w", pid, err)
	}
	if code != stillActive {
		return 0, fmt.Errorf("pid %d exited: %w", pid, ErrProcessGone)
	}
	return creationTime(h)
}

func creationTime(h windows.Handle) (uint64, error) {
	var c, e, k, u windows.Filetime
	if err := windows.GetProcessTimes(h, &c, &e, &k, &u); err != nil {
		return 0, fmt.Errorf("GetProcessTimes: %w", err)
	}
	return uint64(c.HighDateTime)<<32 | uint64(c.LowDateTime), nil
}

func (winSystem) Identify(path string) (FileIdentity, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return FileIdentity{}, fmt.Errorf("CreateFileW %q: %w", path, err)
	}
	// No access right beyond what opening for attributes needs; backup
	// semantics opens directories, OPEN_REPARSE_POINT the link itself.
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return FileIdentity{}, &os.PathError{Op: "CreateFileW", Path: path, Err: err}
	}
	defer windows.CloseHandle(h)
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return FileIdentity{}, &os.PathError{Op: "GetFileInformationByHandle", Path: path, Err: err}
	}
	return FileIdentity{
		Volume:  info.VolumeSerialNumber,
		Index:   uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow),
		Dir:     info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0,
		Reparse: info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0,
	}, nil
}

//go:build windows

package winacl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// CreateRestrictedToken flags (winnt.h).
const (
	disableMaxPrivilege = 0x1 // drop every privilege but SeChangeNotifyPrivilege
	luaToken            = 0x4 // filtered (non-elevated) form of an admin token
	writeRestricted     = 0x8 // restricting SIDs are checked for write access only
)

const tokenDefaultDACLClass = 6 // TokenDefaultDacl

var (
	procCreateRestrictedToken     = windows.NewLazySystemDLL("advapi32.dll").NewProc("CreateRestrictedToken")
	user32                        = windows.NewLazySystemDLL("user32.dll")
	procCreateDesktopW            = user32.NewProc("CreateDesktopW")
	procCloseDesktop              = user32.NewProc("CloseDesktop")
	procGetProcessWindowStation   = user32.NewProc("GetProcessWindowStation")
	procGetUserObjectInformationW = user32.NewProc("GetUserObjectInformationW")
)

// uoiName is UOI_NAME for GetUserObjectInformationW.
const uoiName = 2

// Run runs spec's command under a write-restricted token in a kill-on-close
// job object and returns its exit code; see RunWith. The launcher calls it
// and, on a *LaunchError, prints the fatal line and exits vocab.FatalExit. Console
// interrupts are absorbed by the launcher (the command in the same console
// gets them too), so it survives to report the command's exit code.
func Run(spec LaunchSpec, stderr io.Writer) (int, error) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	return RunWith(NewWin32(), spec, stderr)
}

// NewWin32 returns the real Win32 layer of the launcher.
func NewWin32() Win32 { return realWin32{} }

type realWin32 struct{}

func (realWin32) ProcessToken() (Handle, error) {
	var t windows.Token
	access := uint32(windows.TOKEN_DUPLICATE | windows.TOKEN_QUERY | windows.TOKEN_ASSIGN_PRIMARY |
		windows.TOKEN_ADJUST_DEFAULT | windows.TOKEN_ADJUST_SESSIONID)
	if err := windows.OpenProcessToken(windows.CurrentProcess(), access, &t); err != nil {
		return 0, fmt.Errorf("OpenProcessToken: %w", err)
	}
	return Handle(t), nil
}

func (realWin32) TokenIdentity(token Handle) (SID, SID, error) {
	t := windows.Token(token)
	tu, err := t.GetTokenUser()
	if err != nil {
		return "", "", fmt.Errorf("GetTokenInformation(TokenUser): %w", err)
	}
	user := SID(tu.User.Sid.String())
	groups, err := t.GetTokenGroups()
	if err != nil {
		return "", "", fmt.Errorf("GetTokenInformation(TokenGroups): %w", err)
	}
	for _, g := range groups.AllGroups() {
		if g.Attributes&windows.SE_GROUP_LOGON_ID == windows.SE_GROUP_LOGON_ID {
			return user, SID(g.Sid.String()), nil
		}
	}
	// Some tokens mark no group as the logon SID but answer TokenLogonSid;
	// an SSH or service logon may have none at all, which RunWith handles.
	var n uint32
	_ = windows.GetTokenInformation(t, windows.TokenLogonSid, nil, 0, &n)
	if n > 0 {
		buf := make([]byte, n)
		if err := windows.GetTokenInformation(t, windows.TokenLogonSid, &buf[0], n, &n); err == nil {
			tg := (*windows.Tokengroups)(unsafe.Pointer(&buf[0]))
			if gs := tg.AllGroups(); len(gs) > 0 && gs[0].Sid != nil {
				return user, SID(gs[0].Sid.String()), nil
			}
		}
	}
	return user, "", nil
}

func (realWin32) RestrictToken(token Handle, restricting []SID) (Handle, error) {
	var pin runtime.Pinner
	defer pin.Unpin()
	entries := make([]windows.SIDAndAttributes, len(restricting))
	for i, s := range restricting {
		sid, err := windows.StringToSid(string(s))
		if err != nil {
			return 0, fmt.Errorf("ConvertStringSidToSidW %s: %w", s, err)
		}
		pin.Pin(sid)
		entries[i] = windows.SIDAndAttributes{Sid: sid}
	}
	var first *windows.SIDAndAttributes
	if len(entries) > 0 {
		first = &entries[0]
	}
	var out windows.Token
	r1, _, e1 := procCreateRestrictedToken.Call(uintptr(token),
		disableMaxPrivilege|luaToken|writeRestricted,
		0, 0, // no SIDs to disable
		0, 0, // privileges: DISABLE_MAX_PRIVILEGE removes them
		uintptr(len(entries)), uintptr(unsafe.Pointer(first)),
		uintptr(unsafe.Pointer(&out)))
	runtime.KeepAlive(entries)
	if r1 == 0 {
		return 0, fmt.Errorf("CreateRestrictedToken: %w", e1)
	}
	return Handle(out), nil
}

// tokenDefaultDACL is TOKEN_DEFAULT_DACL.
type tokenDefaultDACL struct {
	DefaultDacl *windows.ACL
}

func (realWin32) SetDefaultDACL(token Handle, sids []SID) error {
	var pin runtime.Pinner
	defer pin.Unpin()
	entries := make([]windows.EXPLICIT_ACCESS, len(sids))
	for i, s := range sids {
		sid, err := windows.StringToSid(string(s))
		if err != nil {
			return fmt.Errorf("ConvertStringSidToSidW %s: %w", s, err)
		}
		pin.Pin(sid)
		entries[i] = windows.EXPLICIT_ACCESS{
			AccessPermissions: windows.GENERIC_ALL,
			AccessMode:        windows.GRANT_ACCESS,
			Inheritance:       windows.NO_INHERITANCE,
			Trustee: windows.TRUSTEE{
				TrusteeForm:  windows.TRUSTEE_IS_SID,
				TrusteeType:  windows.TRUSTEE_IS_UNKNOWN,
				TrusteeValue: windows.TrusteeValueFromSID(sid),
			},
		}
	}
	acl, err := windows.ACLFromEntries(entries, nil)
	if err != nil {
		return fmt.Errorf("SetEntriesInAclW: %w", err)
	}
	pin.Pin(acl)
	info := tokenDefaultDACL{DefaultDacl: acl}
	if err := windows.SetTokenInformation(windows.Token(token), tokenDefaultDACLClass,
		(*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		return fmt.Errorf("SetTokenInformation(TokenDefaultDacl): %w", err)
	}
	return nil
}

func (realWin32) CreateJob() (Handle, error) {
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("CreateJobObjectW: %w", err)
	}
	return Handle(h), nil
}

func (realWin32) SetKillOnClose(job Handle) error {
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(windows.Handle(job), windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		return fmt.Errorf("SetInformationJobObject: %w", err)
	}
	return nil
}

// jobUIRestrictions is JOBOBJECT_BASIC_UI_RESTRICTIONS.
type jobUIRestrictions struct {
	UIRestrictionsClass uint32
}

func (realWin32) SetUIRestrictions(job Handle, limits uint32) error {
	info := jobUIRestrictions{UIRestrictionsClass: limits}
	if _, err := windows.SetInformationJobObject(windows.Handle(job), windows.JobObjectBasicUIRestrictions,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		return fmt.Errorf("SetInformationJobObject(JobObjectBasicUIRestrictions): %w", err)
	}
	return nil
}

func (realWin32) CreateDesktop(name string, sids []SID) (Handle, string, error) {
	sddl := "D:P"
	for _, s := range sids {
		sddl += "(A;;GA;;;" + string(s) + ")"
	}
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		return 0, "", fmt.Errorf("ConvertStringSecurityDescriptorToSecurityDescriptorW: %w", err)
	}
	sa := windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, "", err
	}
	h, _, e1 := procCreateDesktopW.Call(uintptr(unsafe.Pointer(n)), 0, 0, 0, uintptr(windows.GENERIC_ALL), uintptr(unsafe.Pointer(&sa)))
	runtime.KeepAlive(sd)
	if h == 0 {
		return 0, "", fmt.Errorf("CreateDesktopW: %w", e1)
	}
	ws, _, e1 := procGetProcessWindowStation.Call()
	if ws == 0 {
		procCloseDesktop.Call(h)
		return 0, "", fmt.Errorf("GetProcessWindowStation: %w", e1)
	}
	buf := make([]uint16, 256)
	var need uint32
	if r, _, e1 := procGetUserObjectInformationW.Call(ws, uoiName, uintptr(unsafe.Pointer(&buf[0])),
		uintptr(len(buf)*2), uintptr(unsafe.Pointer(&need))); r == 0 {
		procCloseDesktop.Call(h)
		return 0, "", fmt.Errorf("GetUserObjectInformationW(UOI_NAME): %w", e1)
	}
	return Handle(h), windows.UTF16ToString(buf) + `\` + name, nil
}

// userObjectFlags is USEROBJECTFLAGS; wsfVisible is WSF_VISIBLE, uoiFlags
// UOI_FLAGS.
type userObjectFlags struct {
	Inherit  int32
	Reserved int32
	Flags    uint32
}

const (
	uoiFlags   = 1
	wsfVisible = 0x1
)

func (realWin32) InteractiveWindowStation() bool {
	ws, _, _ := procGetProcessWindowStation.Call()
	if ws == 0 {
		return true // cannot tell: keep the private desktop mandatory
	}
	var f userObjectFlags
	var need uint32
	if r, _, _ := procGetUserObjectInformationW.Call(ws, uoiFlags, uintptr(unsafe.Pointer(&f)),
		unsafe.Sizeof(f), uintptr(unsafe.Pointer(&need))); r == 0 {
		return true
	}
	return f.Flags&wsfVisible != 0
}

func (realWin32) CloseDesktop(desktop Handle) error {
	if r, _, e1 := procCloseDesktop.Call(uintptr(desktop)); r == 0 {
		return fmt.Errorf("CloseDesktop: %w", e1)
	}
	return nil
}

func (realWin32) IsFile(path string) bool {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return false
	}
	attrs, err := windows.GetFileAttributes(p)
	return err == nil && attrs&windows.FILE_ATTRIBUTE_DIRECTORY == 0
}

// envBlock encodes env as a CREATE_UNICODE_ENVIRONMENT block, sorted
// case-insensitively as CreateProcess expects.
func envBlock(env []string) (*uint16, error) {
	sorted := append([]string(nil), env...)
	sort.SliceStable(sorted, func(i, j int) bool { return strings.ToUpper(sorted[i]) < strings.ToUpper(sorted[j]) })
	var block []uint16
	for _, kv := range sorted {
		u, err := windows.UTF16FromString(kv)
		if err != nil {
			return nil, err
		}
		block = append(block, u...) // u ends with its NUL
	}
	if len(block) == 0 {
		block = append(block, 0)
	}
	block = append(block, 0)
	return &block[0], nil
}

func (realWin32) StartSuspended(token Handle, p ProcessStart) (Handle, Handle, error) {
	app, err := windows.UTF16PtrFromString(p.App)
	if err != nil {
		return 0, 0, err
	}
	cmd, err := windows.UTF16FromString(p.CommandLine)
	if err != nil {
		return 0, 0, err
	}
	dir, err := windows.UTF16PtrFromString(p.Dir)
	if err != nil {
		return 0, 0, err
	}
	env, err := envBlock(p.Env)
	if err != nil {
		return 0, 0, err
	}

	// Inherit only inheritable duplicates of the standard handles, listed
	// explicitly, so no other handle of the launcher (its job, its token)
	// reaches the command.
	self := windows.CurrentProcess()
	var std [3]windows.Handle
	var inherit []windows.Handle
	for i, which := range []uint32{windows.STD_INPUT_HANDLE, windows.STD_OUTPUT_HANDLE, windows.STD_ERROR_HANDLE} {
		h, err := windows.GetStdHandle(which)
		if err != nil || h == 0 || h == windows.InvalidHandle {
			continue
		}
		var dup windows.Handle
		if err := windows.DuplicateHandle(self, h, self, &dup, 0, true, windows.DUPLICATE_SAME_ACCESS); err != nil {
			continue
		}
		std[i] = dup
		inherit = append(inherit, dup)
	}
	defer func() {
		for _, h := range inherit {
			_ = windows.CloseHandle(h)
		}
	}()

	si := new(windows.StartupInfoEx)
	si.Cb = uint32(unsafe.Sizeof(*si))
	if p.Desktop != "" {
		d, err := windows.UTF16PtrFromString(p.Desktop)
		if err != nil {
			return 0, 0, err
		}
		si.Desktop = d
	}
	si.Flags = windows.STARTF_USESTDHANDLES
	si.StdInput, si.StdOutput, si.StdErr = std[0], std[1], std[2]
	flags := uint32(windows.CREATE_SUSPENDED | windows.CREATE_UNICODE_ENVIRONMENT)
	if len(inherit) > 0 {
		attrs, err := windows.NewProcThreadAttributeList(1)
		if err != nil {
			return 0, 0, fmt.Errorf("InitializeProcThreadAttributeList: %w", err)
		}
		defer attrs.Delete()
		if err := attrs.Update(windows.PROC_THREAD_ATTRIBUTE_HANDLE_LIST, unsafe.Pointer(&inherit[0]),
			uintptr(len(inherit))*unsafe.Sizeof(inherit[0])); err != nil {
			return 0, 0, fmt.Errorf("UpdateProcThreadAttribute: %w", err)
		}
		si.ProcThreadAttributeList = attrs.List()
		flags |= windows.EXTENDED_STARTUPINFO_PRESENT
	}
	var pi windows.ProcessInformation
	err = windows.CreateProcessAsUser(windows.Token(token), app, &cmd[0], nil, nil, len(inherit) > 0,
		flags, env, dir, &si.StartupInfo, &pi)
	runtime.KeepAlive(inherit)
	if err != nil {
		var errno windows.Errno
		if errors.As(err, &errno) {
			switch errno {
			case windows.ERROR_BAD_EXE_FORMAT, windows.ERROR_EXE_MACHINE_TYPE_MISMATCH, windows.ERROR_EXE_MARKED_INVALID:
				return 0, 0, fmt.Errorf("CreateProcessAsUserW: %w: %w", errNotExecutable, err)
			}
		}
		return 0, 0, fmt.Errorf("CreateProcessAsUserW: %w", err)
	}
	return Handle(pi.Process), Handle(pi.Thread), nil
}

func (realWin32) AssignToJob(job, process Handle) error {
	if err := windows.AssignProcessToJobObject(windows.Handle(job), windows.Handle(process)); err != nil {
		return fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	return nil
}

func (realWin32) ResumeThread(thread Handle) error {
	if _, err := windows.ResumeThread(windows.Handle(thread)); err != nil {
		return fmt.Errorf("ResumeThread: %w", err)
	}
	return nil
}

func (realWin32) Terminate(process Handle, code uint32) error {
	if err := windows.TerminateProcess(windows.Handle(process), code); err != nil {
		return fmt.Errorf("TerminateProcess: %w", err)
	}
	return nil
}

func (realWin32) Wait(process Handle) (uint32, error) {
	ev, err := windows.WaitForSingleObject(windows.Handle(process), windows.INFINITE)
	if err != nil {
		return 0, fmt.Errorf("WaitForSingleObject: %w", err)
	}
	if ev != windows.WAIT_OBJECT_0 {
		return 0, fmt.Errorf("WaitForSingleObject: unexpected result %#x", ev)
	}
	var code uint32
	if err := windows.GetExitCodeProcess(windows.Handle(process), &code); err != nil {
		return 0, fmt.Errorf("GetExitCodeProcess: %w", err)
	}
	return code, nil
}

func (realWin32) Close(h Handle) error { return windows.CloseHandle(windows.Handle(h)) }

func (realWin32) WriteFile(path string, data []byte) error { return winSystem{}.WriteFile(path, data) }

func (realWin32) RemoveFile(path string) error { return os.Remove(path) }

package winacl

import (
	"fmt"
	"strings"
)

// Access is an NTFS access mask: a set of the named rights below.
type Access uint32

// File and directory rights (winnt.h). For a directory the first bits mean
// list / add file / add subdirectory / delete child.
const (
	ReadData        Access = 0x00000001 // FILE_READ_DATA, FILE_LIST_DIRECTORY
	WriteData       Access = 0x00000002 // FILE_WRITE_DATA, FILE_ADD_FILE; also every named stream
	AppendData      Access = 0x00000004 // FILE_APPEND_DATA, FILE_ADD_SUBDIRECTORY
	ReadEA          Access = 0x00000008 // FILE_READ_EA
	WriteEA         Access = 0x00000010 // FILE_WRITE_EA
	Execute         Access = 0x00000020 // FILE_EXECUTE, FILE_TRAVERSE
	DeleteChild     Access = 0x00000040 // FILE_DELETE_CHILD: delete any child, whatever its own ACL says
	ReadAttributes  Access = 0x00000080 // FILE_READ_ATTRIBUTES
	WriteAttributes Access = 0x00000100 // FILE_WRITE_ATTRIBUTES
	Delete          Access = 0x00010000 // DELETE: delete or rename this object
	ReadControl     Access = 0x00020000 // READ_CONTROL
	WriteDAC        Access = 0x00040000 // WRITE_DAC
	WriteOwner      Access = 0x00080000 // WRITE_OWNER
	Synchronize     Access = 0x00100000 // SYNCHRONIZE
)

// The masks the plan grants and denies, built from the named rights above
// (never from GENERIC_* or "full control").
const (
	// AccessModify is what a write SID gets on its root and a session SID on
	// its temp dir, inherited by everything beneath: read, write, create,
	// delete each object through its own DELETE right. It lacks DeleteChild
	// and, for the restricted check, that changes little: Windows checks
	// the restricting SIDs of a write-restricted token for write rights
	// only, so DELETE and FILE_DELETE_CHILD are decided by the user's own
	// ACEs, and deletes are not confined (see deleteGap). It lacks WriteDAC
	// and WriteOwner, so the command cannot widen ACLs.
	// This is the Windows "Modify" permission (0x1301BF).
	AccessModify = ReadData | WriteData | AppendData | ReadEA | WriteEA | Execute |
		ReadAttributes | WriteAttributes | Delete | ReadControl | Synchronize

	// AccessDenyWrite is denied to a write SID on a protected path,
	// inherited by everything beneath it: every right that changes the
	// object's data (all streams), attributes, EAs, children, name or ACL.
	AccessDenyWrite = WriteData | AppendData | WriteEA | WriteAttributes | DeleteChild |
		Delete | WriteDAC | WriteOwner

	// AccessDenyRename is denied to a write SID, without inheritance, on each
	// directory between a write root and a protected path (a .git holding
	// hooks): renaming that directory away and creating a fresh one in its
	// place would shed the protection. DELETE is decided by the user's own
	// ACEs, not the restricting SIDs, so this probably does not hold on
	// real Windows (deleteGap); it costs nothing and binds if Windows does
	// check it.
	AccessDenyRename = Delete
)

var accessNames = []struct {
	bit  Access
	name string
}{
	{ReadData, "read_data"}, {WriteData, "write_data"}, {AppendData, "append_data"},
	{ReadEA, "read_ea"}, {WriteEA, "write_ea"}, {Execute, "execute"},
	{DeleteChild, "delete_child"}, {ReadAttributes, "read_attributes"},
	{WriteAttributes, "write_attributes"}, {Delete, "delete"},
	{ReadControl, "read_control"}, {WriteDAC, "write_dac"},
	{WriteOwner, "write_owner"}, {Synchronize, "synchronize"},
}

// String lists the named rights in a, joined by "|", with any unnamed bits
// in hex.
func (a Access) String() string {
	if a == 0 {
		return "none"
	}
	var names []string
	rest := a
	for _, n := range accessNames {
		if a&n.bit != 0 {
			names = append(names, n.name)
			rest &^= n.bit
		}
	}
	if rest != 0 {
		names = append(names, fmt.Sprintf("%#x", uint32(rest)))
	}
	return strings.Join(names, "|")
}

// ACE is one access control entry the plan reads or writes.
type ACE struct {
	// SID is the trustee.
	SID SID
	// Access is the mask granted (or denied).
	Access Access
	// Deny makes it an access-denied ACE.
	Deny bool
	// Inherit makes it inheritable by subdirectories and files (OI|CI) when
	// the object is a directory; on a file it has no meaning and the ACL
	// layer ignores it.
	Inherit bool
}

// String describes the ACE, e.g. "deny S-1-5-21-... delete".
func (a ACE) String() string {
	kind, inh := "allow", ""
	if a.Deny {
		kind = "deny"
	}
	if a.Inherit {
		inh = " inherit"
	}
	return fmt.Sprintf("%s %s %s%s", kind, a.SID, a.Access, inh)
}

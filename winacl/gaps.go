package winacl

import (
	"fmt"
	"strings"

	"github.com/bo-agent/sandbox-local/internal/vocab"
)

// Gaps returns the gaps every winacl wrap has, whatever its policy:
// enforcement on Windows is always partial. A Session's Gaps add the
// policy's own: network deny, deny-read paths, missing protected paths. A
// fresh slice each call.
func Gaps() []vocab.Gap {
	return []vocab.Gap{
		deleteGap,
		{Area: vocab.AreaFS, Reason: "objects whose ACL grants Everyone write access stay writable: Everyone must stay a restricting SID for process start-up"},
		{Area: vocab.AreaFS, Reason: "NTFS hard links alias files across the boundary: the ACL belongs to the file, so a file outside the writable roots with a hard link inside one receives the write ACE inherited there"},
		{Area: vocab.AreaFS, Reason: "files on network shares are checked by the SMB server against the user's credentials, not the restricted token's restricting SIDs: the command can write wherever the user can on shares (UNC paths, mapped drives)"},
		{Area: vocab.AreaFS, Reason: "volumes without ACLs (FAT32, exFAT) are writable everywhere: there is no ACL to restrict"},
		{Area: vocab.AreaProc, Reason: "read access is not restricted: the command can read the memory and command lines of the user's other processes, including the agent that started it"},
		{Area: vocab.AreaIPC, Reason: "the console is shared, and COM and RPC reach the user's processes: the private desktop and the job's UI limits keep the command from the user's windows, clipboard, DDE and atoms, but a running process outside the job (the shell, a browser) may still act for it over COM (Start-Process of a URL, for one, may open it in the user's browser)"},
	}
}

// deleteGap: a write-restricted token's restricting SIDs are checked for
// write rights only; DELETE and the parent's FILE_DELETE_CHILD are decided
// by the user's own ACEs.
var deleteGap = vocab.Gap{Area: vocab.AreaFS, Reason: "deletes and renames are not confined: Windows checks a write-restricted token's restricting SIDs for write rights only, so DELETE and the parent's FILE_DELETE_CHILD follow the user's own rights; the command can delete or rename files outside the writable roots, and delete a protected file (.git\\config) and create a new one (protected files are checked and restored after the command)"}

// networkGap: network deny cannot be enforced without administrator rights.
var networkGap = vocab.Gap{Area: vocab.AreaNet, Reason: "network is not confined: blocking it needs a firewall rule or a WFP filter (or an AppContainer, which would also take away reads), and the first two need administrator rights; the proxy variables point at a dead local port and git's ssh at a failing stub, which stops only clients that honour them"}

// denyReadGap reports DenyRead paths, which a write-restricted token cannot
// enforce: it checks its restricting SIDs for write access only.
func denyReadGap(paths []string) []vocab.Gap {
	if len(paths) == 0 {
		return nil
	}
	return []vocab.Gap{{Area: vocab.AreaFS, Reason: fmt.Sprintf("deny-read paths stay readable (%s): a write-restricted token restricts writes only", strings.Join(paths, ", "))}}
}

// missingProtectedGap reports a protected path that does not exist: an ACL
// can only protect an existing object, so the command can create it.
func missingProtectedGap(p string) vocab.Gap {
	return vocab.Gap{Area: vocab.AreaFS, Reason: fmt.Sprintf("read-only subpath %s does not exist, and an ACL can only protect an existing object: the command can create it", p)}
}

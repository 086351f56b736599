package sandbox

import "golang.org/x/sys/unix"

// overlayUpperFS reports whether the file system holding dir is one
// overlayfs takes as an upper layer in a user namespace (it writes
// whiteouts and user.overlay xattrs there). Others (an overlayfs itself,
// as a container's root is; NFS, FUSE, SMB) the kernel refuses or
// half-supports: the module cache then stays the workspace's own, which
// works everywhere, instead of an overlay the launcher could not mount.
func overlayUpperFS(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	switch int64(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.F2FS_SUPER_MAGIC, unix.BCACHEFS_SUPER_MAGIC, zfsSuperMagic:
		return true
	}
	return false
}

// zfsSuperMagic is OpenZFS's f_type (not in the kernel's magic.h): it
// takes an overlay's upper layer from OpenZFS 2.2.
const zfsSuperMagic = 0x2fc12fc1

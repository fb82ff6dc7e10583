package pool

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// tainted checks a contained slot after its reset, when no container can
// write there any more: reset and clean have put back every tracked file
// and removed every other, but not what git does not track of a file. It
// returns what it finds, "" when nothing: a special file (a FIFO, a
// socket, a device), a set-id or sticky bit, a file or directory anyone
// may write, a file with another link (a hard link would share the env's
// file with the link's), or one owned by another user than this
// process's or owner's (the host's user, to whom a root git-apex gave
// the slot for its container: repo.Repo.HostUser), or one that its
// group may write while it belongs to another group than the pool
// directory's (dir's parent, which git-apex made and no container
// reaches: the slot's files get its group or none of their own), or an
// extended attribute (an ACL, system.posix_acl_access or _default, can
// grant another user what the mode bits deny; git's reset keeps them
// all). Symbolic links are not followed.
func tainted(dir string, owner int) string {
	uid := os.Geteuid()
	group := -1
	if info, err := os.Stat(filepath.Dir(dir)); err == nil {
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			group = int(st.Gid)
		}
	}
	found := ""
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			found = "an entry it cannot read (" + err.Error() + ")"
			return filepath.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			found = "an entry it cannot read (" + err.Error() + ")"
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(dir, path)
		mode := info.Mode()
		st, _ := info.Sys().(*syscall.Stat_t)
		switch {
		case mode&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice|fs.ModeIrregular) != 0:
			found = "the special file " + rel
		case mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0:
			found = "a set-id or sticky bit on " + rel
		case mode&fs.ModeSymlink == 0 && mode.Perm()&0o002 != 0:
			found = "a world-writable " + rel
		case st != nil && mode.IsRegular() && uint64(st.Nlink) > 1:
			found = "a second link to " + rel
		case st != nil && int(st.Uid) != uid && int(st.Uid) != owner:
			found = rel + ", owned by another user"
		case st != nil && mode&fs.ModeSymlink == 0 && mode.Perm()&0o020 != 0 && int(st.Gid) != group:
			found = "a group-writable " + rel + " of another group"
		case xattrOn(path) != "":
			found = "the extended attribute " + xattrOn(path) + " on " + rel
		default:
			return nil
		}
		return filepath.SkipAll
	})
	return found
}

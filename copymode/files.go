package copymode

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/gitx"
)

// snapshotFunc is a shell function for the scripts run inside a copied
// container: snapshot writes the worktree's state (ignored files apart)
// as a tree, through an index of its own, and prints the tree. The copy
// of the index keeps its modification time (cp -p): git compares by
// content a file whose stat data match its entry's only when the file is
// not older than the index (racy git), and a copy made later would hide
// a same-size edit made in the second the index was written.
const snapshotFunc = `snapshot() {
	index="$GIT_DIR/apex-snapshot-index"
	rm -f "$index"; cp -p "$GIT_DIR/index" "$index" 2>/dev/null
	GIT_INDEX_FILE="$index" git add -A . && GIT_INDEX_FILE="$index" git write-tree
	set -- $?; rm -f "$index"; return $1
}
`

// snapshotScript runs inside a copied container: it prints the
// worktree's state as a tree (snapshotFunc), then what changed since $1
// (the tree of the last exchange) as `git diff-tree --name-status -z`
// does.
const snapshotScript = snapshotFunc + `tree=$(snapshot) || exit 1
echo "$tree"
exec git diff-tree -r -z --no-renames --name-status "$1" "$tree"`

// archiveScript runs inside a copied container: a tar of the tree $1
// holding the paths after it, taken literally.
const archiveScript = `tree=$1; shift
GIT_LITERAL_PATHSPECS=1 exec git archive --format=tar "$tree" -- "$@"`

// maxListing bounds what the snapshot may print: a tree and the changed
// paths.
const maxListing = 64 << 20

// change is one path the container changed since the last exchange.
type change struct {
	path    string // slash-separated, relative to the worktree
	deleted bool
}

// Incoming is what a copied container changed since the last exchange,
// received, checked and staged on the host, not yet placed in its
// worktree.
type Incoming struct {
	tree     string // the container's worktree as a tree
	changes  []change
	received map[string]incoming
	staged   string // the directory holding the staged files
}

// Receive asks a copied container for the files it changed since the
// last exchange (see the sandbox package's "Copy mode") and stages them
// on the host, checking the whole tar first: an entry that is not a file
// or symlink the snapshot named, that would write outside the worktree,
// into a .git or a submodule directory, or a symlink that leads out of
// the worktree (linkProblem), fails it all. It needs no lock: it writes
// nothing in the worktree. Discard drops what it staged.
func (w Worktree) Receive(ctx context.Context, rt container.Runtime, ctr string) (*Incoming, error) {
	m, err := w.loadManifest()
	if err != nil {
		return nil, err
	}
	var listing, stderr bytes.Buffer
	code, err := rt.Exec(ctx, ctr, container.ExecSpec{Cmd: []string{"sh", "-c", snapshotScript, "snapshot", m.Tree},
		WorkDir: w.Dir, Env: w.GitEnv, Stdout: &limitedBuffer{buf: &listing, left: maxListing}, Stderr: &stderr})
	if err == nil && code != 0 {
		err = fmt.Errorf("exit status %d: %s", code, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list the files changed in the container: %w", err)
	}
	in := &Incoming{}
	if in.tree, in.changes, err = parseSnapshot(listing.String()); err != nil {
		return nil, fmt.Errorf("cannot list the files changed in the container: %w", err)
	}
	if in.staged, err = os.MkdirTemp(w.StateDir, "incoming-files-"); err != nil {
		return nil, err
	}
	if in.received, err = w.receive(ctx, rt, ctr, in.tree, in.changes, in.staged); err != nil {
		in.Discard()
		return nil, err
	}
	return in, nil
}

// Placed is the paths of the files Receive staged (slash-separated,
// relative to the worktree), which Place writes.
func (in *Incoming) Placed() []string {
	var out []string
	for _, c := range in.changes {
		if !c.deleted {
			out = append(out, c.path)
		}
	}
	return out
}

// Discard removes what Receive staged.
func (in *Incoming) Discard() { os.RemoveAll(in.staged) }

// Place writes what Receive staged into the host's worktree. It returns
// how many files it wrote or removed, and the conflicts it kept the
// host's side of. The caller holds the repository lock.
func (w Worktree) Place(in *Incoming) (int, []string, error) {
	m, err := w.loadManifest()
	if err != nil {
		return 0, nil, err
	}
	n, conflicts := 0, []string(nil)
	for _, c := range in.changes {
		wrote, conflict, err := w.place(c, in.received[c.path], m)
		if err != nil {
			// What was placed is recorded, so that the retry (the same
			// changes, the tree not moved on) takes it for the host's own
			// only if the user changed it since.
			return n, conflicts, errors.Join(err, w.saveManifest(m))
		}
		if conflict != "" {
			conflicts = append(conflicts, conflict)
		} else if wrote {
			n++
		}
	}
	m.Tree = in.tree
	return n, conflicts, w.saveManifest(m)
}

// parseSnapshot reads snapshotScript's output.
func parseSnapshot(out string) (string, []change, error) {
	tree, rest, _ := strings.Cut(out, "\n")
	if !gitx.IsObjectID(tree) {
		return "", nil, fmt.Errorf("it answered %q, not a tree", truncate(tree))
	}
	fields := strings.Split(strings.TrimSuffix(rest, "\x00"), "\x00")
	var changes []change
	for i := 0; i+1 < len(fields); i += 2 {
		status, p := fields[i], fields[i+1]
		if !strings.Contains("AMTD", status) || len(status) != 1 {
			return "", nil, fmt.Errorf("it answered %q, not a change", truncate(status))
		}
		if err := checkName(p); err != nil {
			return "", nil, fmt.Errorf("it named %q: %v", truncate(p), err)
		}
		changes = append(changes, change{path: p, deleted: status == "D"})
	}
	if len(fields)%2 != 0 && rest != "" {
		return "", nil, errors.New("its list of changes is cut short")
	}
	return tree, changes, nil
}

// incoming is one file received from the container, staged on the host.
type incoming struct {
	staged string // the staged copy of a regular file
	link   string // a symlink's target
	exec   bool   // a regular file's executable bit
}

// receive asks the container for the changed files of tree (an archive)
// and stages them under staged, checking every entry (checkEntry). Any
// refused entry fails the whole exchange, naming each.
func (w Worktree) receive(ctx context.Context, rt container.Runtime, ctr, tree string, changes []change, staged string) (map[string]incoming, error) {
	want := map[string]bool{}
	args := []string{"sh", "-c", archiveScript, "archive", tree}
	for _, c := range changes {
		if !c.deleted {
			want[c.path] = true
			args = append(args, c.path)
		}
	}
	received := map[string]incoming{}
	if len(want) == 0 {
		return received, nil
	}
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		code, err := rt.Exec(ctx, ctr, container.ExecSpec{Cmd: args, WorkDir: w.Dir, Env: w.GitEnv, Stdout: w.Limit(pw), Stderr: &stderr})
		if err == nil && code != 0 {
			err = fmt.Errorf("exit status %d: %s", code, strings.TrimSpace(stderr.String()))
		}
		pw.CloseWithError(err)
		done <- err
	}()
	var refused []string
	tr := tar.NewReader(pr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			pr.CloseWithError(err)
			<-done
			return nil, fmt.Errorf("cannot read the files sent by the container: %w", err)
		}
		if why := w.checkEntry(hdr, want, received); why != "" {
			refused = append(refused, fmt.Sprintf("%q (%s)", truncate(hdr.Name), why))
			continue
		}
		if err := stage(tr, hdr, staged, len(received), received); err != nil {
			pr.CloseWithError(err)
			<-done
			return nil, err
		}
	}
	io.Copy(io.Discard, pr) // what follows the archive's end
	if err := <-done; err != nil {
		return nil, fmt.Errorf("cannot read the files sent by the container: %w", err)
	}
	deleted := map[string]bool{}
	for _, c := range changes {
		deleted[c.path] = c.deleted
	}
	for _, name := range slices.Sorted(maps.Keys(received)) {
		if in := received[name]; in.link != "" {
			if why := w.linkProblem(name, in.link, received, deleted); why != "" {
				refused = append(refused, fmt.Sprintf("%q (%s)", truncate(name), why))
			}
		}
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("refused what the container sent, and wrote none of it: %s", strings.Join(refused, "; "))
	}
	for p := range want {
		if _, ok := received[p]; !ok {
			return nil, fmt.Errorf("the container did not send %s, which it said had changed", p)
		}
	}
	return received, nil
}

// checkEntry says why a tar entry from the container is refused, or "".
// Directories and the archive's global header are passed over; a file or
// symlink must be one the snapshot named, once. Where a symlink leads is
// checked once all have come (linkProblem).
func (w Worktree) checkEntry(hdr *tar.Header, want map[string]bool, received map[string]incoming) string {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return ""
	}
	name := strings.TrimSuffix(hdr.Name, "/")
	if err := checkName(name); err != nil {
		return err.Error()
	}
	for p := range w.Skip {
		if name == p || strings.HasPrefix(name, p+"/") {
			return "in the submodule directory " + p
		}
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		return ""
	case tar.TypeReg, tar.TypeSymlink:
	default:
		return "not a regular file, directory or symlink"
	}
	if !want[name] {
		return "not a file it said had changed"
	}
	if _, dup := received[name]; dup {
		return "sent twice"
	}
	return ""
}

// maxHops bounds the symlinks one resolution goes through, as the
// kernel's (40) does: more is a loop.
const maxHops = 40

// linkProblem says why the symlink name -> target, once the changes are
// placed, would lead out of the worktree or into a .git; "" when it stays
// inside. Its target is resolved as the file system will: element by
// element, through every symlink on the way, those the container sent
// (received) and those on the host, a path the changes delete being
// none.
func (w Worktree) linkProblem(name, target string, received map[string]incoming, deleted map[string]bool) string {
	if strings.HasPrefix(target, "/") {
		return "a symlink to the absolute path " + truncate(target)
	}
	hops := 0
	at, ok := w.resolve(strings.Split(path.Dir(name), "/"), target, received, deleted, &hops)
	if !ok {
		return "a symlink to " + truncate(target) + ", which leaves the worktree"
	}
	if err := checkName(path.Join(at...)); err != nil {
		return "a symlink to " + truncate(target) + ", which " + err.Error()
	}
	return ""
}

// resolve follows target from the directory at (its elements), and
// returns where it leads; false when it leaves the worktree, through an
// absolute symlink, or through more than maxHops symlinks.
func (w Worktree) resolve(at []string, target string, received map[string]incoming, deleted map[string]bool, hops *int) ([]string, bool) {
	if strings.HasPrefix(target, "/") {
		return nil, false
	}
	at = slices.Clip(slices.DeleteFunc(at, func(e string) bool { return e == "." }))
	for _, elem := range strings.Split(target, "/") {
		switch elem {
		case "", ".":
			continue
		case "..":
			if len(at) == 0 {
				return nil, false
			}
			at = at[: len(at)-1 : len(at)-1]
			continue
		}
		at = append(at, elem)
		link, ok := w.linkAt(path.Join(at...), received, deleted)
		if !ok {
			continue
		}
		if *hops++; *hops > maxHops {
			return nil, false
		}
		if at, ok = w.resolve(at[:len(at)-1:len(at)-1], link, received, deleted, hops); !ok {
			return nil, false
		}
	}
	return at, true
}

// linkAt is the target of the symlink at p once the changes are placed,
// and whether there is one.
func (w Worktree) linkAt(p string, received map[string]incoming, deleted map[string]bool) (string, bool) {
	if in, ok := received[p]; ok {
		return in.link, in.link != ""
	}
	if deleted[p] {
		return "", false
	}
	host := filepath.Join(w.Dir, filepath.FromSlash(p))
	if info, err := os.Lstat(host); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		return "", false
	}
	target, err := os.Readlink(host)
	return target, err == nil
}

// checkName says why a path from the container may not be written in the
// worktree: it is not a plain relative path inside it (fs.ValidPath:
// absolute, with .. or empty elements), or it is in a .git.
func checkName(p string) error {
	if p == "." || !fs.ValidPath(p) {
		return errors.New("leaves the worktree")
	}
	for _, elem := range strings.Split(p, "/") {
		if strings.EqualFold(elem, ".git") {
			return errors.New("is in a .git")
		}
	}
	return nil
}

// stage keeps a checked entry: a regular file's content as staged/<n>, a
// symlink's target.
func stage(tr *tar.Reader, hdr *tar.Header, staged string, n int, received map[string]incoming) error {
	name := strings.TrimSuffix(hdr.Name, "/")
	switch hdr.Typeflag {
	case tar.TypeSymlink:
		received[name] = incoming{link: hdr.Linkname}
	case tar.TypeReg:
		file := filepath.Join(staged, strconv.Itoa(n))
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if err = errors.Join(err, f.Close()); err != nil {
			return fmt.Errorf("cannot keep %s from the container: %w", name, err)
		}
		received[name] = incoming{staged: file, exec: hdr.Mode&0o111 != 0}
	}
	return nil
}

// place applies one change to the host's worktree: it writes (or
// removes) the file when the host's is what the last exchange left;
// otherwise it keeps the host's, saves the container's version beside it
// (<path>.from-<identity>) and says so in conflict. wrote is false when
// nothing needed writing.
func (w Worktree) place(c change, in incoming, m manifest) (wrote bool, conflict string, err error) {
	host := filepath.Join(w.Dir, filepath.FromSlash(c.path))
	if why := w.parentsProblem(c.path); why != "" {
		return false, fmt.Sprintf("%s: %s on the host; kept the host's, the container's is only in the container", c.path, why), nil
	}
	info, statErr := os.Lstat(host)
	before, known := m.Files[c.path]
	untouched := (os.IsNotExist(statErr) && !known) || (statErr == nil && known && statOf(info) == before)
	if c.deleted {
		switch {
		case os.IsNotExist(statErr):
			delete(m.Files, c.path)
			return false, "", nil
		case !untouched:
			return false, fmt.Sprintf("%s: removed in the container, changed on the host; kept the host's", c.path), nil
		}
		if err := os.Remove(host); err != nil {
			return false, "", err
		}
		delete(m.Files, c.path)
		return true, "", nil
	}
	if statErr == nil && !untouched && sameContent(host, info, in) {
		m.Files[c.path] = statOf(info)
		return false, "", nil
	}
	if !untouched {
		beside, err := w.writeBeside(host, in)
		if err != nil {
			return false, "", err
		}
		return false, fmt.Sprintf("%s: changed on the host and in the container; kept the host's, the container's is %s", c.path, beside), nil
	}
	if err := writeIncoming(host, in); err != nil {
		return false, "", err
	}
	info, err = os.Lstat(host)
	if err != nil {
		return false, "", err
	}
	m.Files[c.path] = statOf(info)
	return true, "", nil
}

// parentsProblem says why the directories above p cannot hold it on the
// host (one is a symlink, or not a directory), making the missing ones;
// "" when they can.
func (w Worktree) parentsProblem(p string) string {
	dir := w.Dir
	elems := strings.Split(p, "/")
	for _, elem := range elems[:len(elems)-1] {
		dir = filepath.Join(dir, elem)
		info, err := os.Lstat(dir)
		switch {
		case os.IsNotExist(err):
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err.Error()
			}
		case err != nil:
			return err.Error()
		case !info.IsDir():
			return filepath.Base(dir) + " is not a directory"
		}
	}
	return ""
}

// sameContent reports whether the host's file already holds what came.
func sameContent(host string, info fs.FileInfo, in incoming) bool {
	if in.link != "" {
		target, err := os.Readlink(host)
		return err == nil && target == in.link
	}
	want, err := os.Stat(in.staged)
	if err != nil || !info.Mode().IsRegular() || info.Size() != want.Size() || (info.Mode()&0o111 != 0) != in.exec {
		return false
	}
	a, err1 := os.ReadFile(host)
	b, err2 := os.ReadFile(in.staged)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// writeBeside saves what came for host at host.from-<identity> (with a
// number after it when that is taken), and returns that path.
func (w Worktree) writeBeside(host string, in incoming) (string, error) {
	beside := host + ".from-" + w.Identity
	for i := 2; ; i++ {
		if _, err := os.Lstat(beside); os.IsNotExist(err) {
			break
		}
		beside = fmt.Sprintf("%s.from-%s.%d", host, w.Identity, i)
	}
	return beside, writeIncoming(beside, in)
}

// writeIncoming puts what came at dst, replacing what is there with a
// rename (a directory there is not replaced), through a temporary file
// of a new name beside it.
func writeIncoming(dst string, in incoming) error {
	f, err := os.CreateTemp(filepath.Dir(dst), ".apex-incoming-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if in.link != "" {
		f.Close()
		os.Remove(tmp)
		err = os.Symlink(in.link, tmp)
	} else {
		err = copyStaged(f, in)
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// copyStaged copies a staged file into f and closes it, with the mode
// the container gave it (executable or not), whatever the umask.
func copyStaged(f *os.File, in incoming) error {
	mode := os.FileMode(0o644)
	if in.exec {
		mode = 0o755
	}
	src, err := os.Open(in.staged)
	if err == nil {
		_, err = io.Copy(f, src)
		src.Close()
	}
	return errors.Join(err, f.Chmod(mode), f.Close())
}

// limitedBuffer keeps at most left bytes, then fails the write.
type limitedBuffer struct {
	buf  *bytes.Buffer
	left int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if len(p) > l.left {
		return 0, errors.New("its answer is too long")
	}
	l.left -= len(p)
	return l.buf.Write(p)
}

// truncate shortens what the container said for a message.
func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

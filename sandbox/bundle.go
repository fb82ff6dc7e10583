package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/repo"
)

// checked is a bundle's pack, checked, in a quarantine: see checkBundle.
type checked struct {
	dir  string            // the quarantine
	tips map[string]string // the bundle's refs, to the objects they name
}

// checkBundle indexes the pack of the bundle file into a quarantine
// beside r's objects (gitx.IndexPack: git fsck's checks), taking no
// lock, under ctx alone: it inflates every object, and 4 GiB of zeros
// weigh 4 MiB in a bundle.
func checkBundle(ctx context.Context, r *repo.Repo, file string) (*checked, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pack, tips := bufio.NewReader(f), map[string]string{}
	for line := ""; line != "\n" && err == nil; { // the header ends at an empty line (else index-pack fails)
		line, err = pack.ReadString('\n')
		if oid, ref, _ := strings.Cut(strings.TrimSpace(line), " "); gitx.IsObjectID(oid) { // not a prerequisite (-oid) nor a comment
			tips[ref] = oid
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the bundle's header: %w", err)
	}
	// git prune removes a tmp_objdir-* that a killed git-apex left.
	in := &checked{tips: tips}
	if in.dir, err = os.MkdirTemp(filepath.Join(r.Git.CommonDir, "objects"), "tmp_objdir-incoming-"); err != nil {
		return nil, err
	}
	if err := gitx.IndexPack(ctx, r.Git, in.dir, pack); err != nil {
		in.discard()
		return nil, err
	}
	return in, nil
}

// discard deletes the quarantine, and what take did not move from it.
func (in *checked) discard() { os.RemoveAll(in.dir) }

// take moves the checked pack into the repository's objects and points
// dst at the commit the bundle names for ref: nothing is inflated again.
func (in *checked) take(ctx context.Context, lk *gitx.Locked, ref, dst string) error {
	tip, ok := in.tips[ref]
	if !ok {
		return fmt.Errorf("the bundle holds no %s", ref)
	}
	files, err := filepath.Glob(filepath.Join(in.dir, "pack", "pack-*"))
	for _, last := range []bool{false, true} { // the index last: git finds a pack by it
		for _, file := range files {
			if err == nil && strings.HasSuffix(file, ".idx") == last {
				err = os.Rename(file, filepath.Join(lk.CommonDir, "objects", "pack", filepath.Base(file)))
			}
		}
	}
	if err != nil {
		return err
	}
	_, err = lk.Run(ctx, lk.CommonDir, nil, "update-ref", "--no-deref", "-m", "git-apex", dst, tip+"^{commit}")
	return err
}

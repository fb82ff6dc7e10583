package gitx

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Incoming is a bundle's pack, checked, in a quarantine: see CheckBundle.
type Incoming struct {
	dir  string            // the quarantine
	tips map[string]string // the bundle's refs, to the objects they name
}

// CheckBundle indexes the bundle file's pack into a quarantine borrowing
// the repository's objects, once every object passed git fsck's checks,
// warnings as errors, and all they name are there (git 2.39 fetches a
// bundle unchecked). It takes no lock and runs under ctx alone: it
// inflates every object, and 4 GiB of zeros weigh 4 MiB in a bundle.
func CheckBundle(ctx context.Context, r *Repo, file string) (*Incoming, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pack, tips := bufio.NewReader(f), map[string]string{}
	for line := ""; line != "\n" && err == nil; { // the header ends at an empty line (else index-pack fails)
		line, err = pack.ReadString('\n')
		if oid, ref, _ := strings.Cut(strings.TrimSpace(line), " "); IsObjectID(oid) { // not a prerequisite (-oid) nor a comment
			tips[ref] = oid
		}
	}
	in := &Incoming{tips: tips}
	if err != nil {
		return nil, fmt.Errorf("cannot read the bundle's header: %w", err)
	} else if in.dir, err = os.MkdirTemp(filepath.Join(r.CommonDir, "objects"), "tmp_objdir-incoming-"); err != nil {
		return nil, err // git prune removes a tmp_objdir-* that a killed git-apex left
	}
	env := append(gitEnv()[:len(gitEnv()):len(gitEnv())], "GIT_OBJECT_DIRECTORY="+in.dir, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(r.CommonDir, "objects"))
	if _, err := run(ctx, command{dir: r.CommonDir, args: []string{"index-pack", "--stdin", "--fix-thin", "--strict"}, env: env, stdin: pack}); err != nil {
		in.Discard()
		return nil, fmt.Errorf("it holds objects that git's checks (those of git fsck) refuse: %w", err)
	}
	return in, nil
}

// Discard deletes the quarantine, and what Take did not move from it.
func (in *Incoming) Discard() { os.RemoveAll(in.dir) }

// Take moves the checked pack into the repository's objects and points
// dst at the commit the bundle names for ref: nothing is inflated again.
func (l *Locked) Take(ctx context.Context, in *Incoming, ref, dst string) error {
	tip, ok := in.tips[ref]
	if !ok {
		return fmt.Errorf("the bundle holds no %s", ref)
	}
	files, err := filepath.Glob(filepath.Join(in.dir, "pack", "pack-*"))
	for _, last := range []bool{false, true} { // the index last: git finds a pack by it
		for _, file := range files {
			if err == nil && strings.HasSuffix(file, ".idx") == last {
				err = os.Rename(file, filepath.Join(l.CommonDir, "objects", "pack", filepath.Base(file)))
			}
		}
	}
	if err != nil {
		return err
	}
	_, err = l.runIn(ctx, l.CommonDir, "update-ref", "--no-deref", "-m", "git-apex", dst, tip+"^{commit}")
	return err
}

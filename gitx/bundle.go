package gitx

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
)

// IndexPack indexes pack (a bundle's, after its header) into the object
// directory quarantine, borrowing the repository's objects, once every
// object passed git fsck's checks, warnings as errors, and all they name
// are there (git 2.39 fetches a bundle unchecked). It takes no lock and
// runs under ctx alone: it inflates every object.
func IndexPack(ctx context.Context, r *Repo, quarantine string, pack io.Reader) error {
	env := append(gitEnv()[:len(gitEnv()):len(gitEnv())], "GIT_OBJECT_DIRECTORY="+quarantine, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(r.CommonDir, "objects"))
	if _, err := run(ctx, command{dir: r.CommonDir, args: []string{"index-pack", "--stdin", "--fix-thin", "--strict"}, env: env, stdin: pack}); err != nil {
		return fmt.Errorf("it holds objects that git's checks (those of git fsck) refuse: %w", err)
	}
	return nil
}

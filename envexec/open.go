package envexec

import (
	"os"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/repo"
)

// Editor is the command `git apex open` runs: the user's apex.editor
// (git-apex's own setting, so it wins), else $VISUAL, else $EDITOR. It is
// a shell command, as git's core.editor is; the env's path is appended
// as its last argument.
func Editor(personal repo.Personal) (string, error) {
	for _, editor := range []string{personal.Editor, os.Getenv("VISUAL"), os.Getenv("EDITOR")} {
		if editor != "" {
			return editor, nil
		}
	}
	return "", exitcode.New(exitcode.Usage, "no editor to open: set one with `git config --global apex.editor \"code -w\"`, or set $VISUAL or $EDITOR")
}

// EditorCommand is the argv that runs editor on path: through sh, so an
// editor with arguments ("code -w") works, with the path passed as an
// argument, never put into the command string.
func EditorCommand(editor, path string) []string {
	return []string{"sh", "-c", editor + ` "$@"`, editor, path}
}

// Package shell holds git-apex's shell integration for bash, zsh and
// fish: completion, whose scripts (embedded, printed by `git apex
// completion`) ask the binary (`git-apex __complete -- <words>`) for
// candidates, from the command-line definition and, for identities and
// workflows, from the repository's state and policy; and the function
// `git apex shell-init` prints, with which `git apex cd` changes the
// shell's directory.
package shell

import (
	"context"
	"embed"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/service"
)

//go:embed git-apex.bash git-apex.zsh git-apex.fish init.sh init.fish
var scripts embed.FS

// Shells are the shells this package knows.
var Shells = []string{"bash", "zsh", "fish"}

// Completion is the completion script for a shell.
func Completion(shell string) (string, error) {
	return script(shell, "git-apex."+shell)
}

// Init is the function for a shell that lets `git apex cd <identity>`
// and `git apex start --cd ...` change its directory; bash and zsh share
// one.
func Init(shell string) (string, error) {
	if shell == "fish" {
		return script(shell, "init.fish")
	}
	return script(shell, "init.sh")
}

func script(shell, file string) (string, error) {
	if !slices.Contains(Shells, shell) {
		return "", exitcode.New(exitcode.Usage, "unknown shell %q: use one of %s", shell, strings.Join(Shells, ", "))
	}
	data, err := scripts.ReadFile(file)
	return string(data), err
}

// argument is what a command's positional argument is.
type argument int

const (
	anything  argument = iota // a new name, a file: nothing to offer
	identity                  // an env's identity or a link's alias
	workflow                  // a workflow's name
	shellName                 // a shell this package knows
)

// arguments are, per command, its positional arguments in order; a
// command not named has none worth completing.
var arguments = map[string][]argument{
	"start": {workflow}, "path": {identity}, "remove": {identity}, "link": {anything, identity},
	"unlink": {identity}, "close": {identity}, "finish": {identity}, "log": {identity},
	"exec": {identity}, "shell": {identity}, "cd": {identity}, "open": {identity},
	"completion": {shellName}, "shell-init": {shellName},
}

// flagValues are the values flags take, by flag name, or by command and
// flag name ("batch isolation") where a command takes others; --from
// takes the repository's branches (see flagArgument). Statuses and modes
// are the service's, the lists every front end accepts.
var flagValues = map[string][]string{
	"isolation":       service.Modes,
	"batch isolation": append(slices.Clone(service.Modes), "auto"),
	"color":           cmdline.Colours,
	"sort":            cmdline.Sorts,
	"status":          service.Statuses,
	"mode":            service.Modes,
}

// Source gives what only the repository knows. Each is asked at most
// once, and only when the word being completed needs it.
type Source interface {
	Identities(ctx context.Context) []string
	Workflows(ctx context.Context) []string
	Branches(ctx context.Context) []string
}

// Candidates are the completions of the last of words (the word being
// typed, maybe ""), the others being the words after `git-apex` (or `git
// apex`) before it. They are sorted and begin with the typed word.
func Candidates(ctx context.Context, app *cli.App, words []string, src Source) []string {
	if len(words) == 0 {
		words = []string{""}
	}
	typed, before := words[len(words)-1], words[:len(words)-1]
	flags := app.Flags
	commands := app.VisibleCommands()
	var cmd *cli.Command
	var args []string
	for i := 0; i < len(before); i++ {
		w := before[i]
		switch {
		case w == "--":
			args = append(args, before[i+1:]...)
			i = len(before)
		case strings.HasPrefix(w, "-") && len(w) > 1:
			if cmdline.TakesValue(flags, w) && !strings.Contains(w, "=") {
				i++
			}
		case cmd == nil || len(cmd.Subcommands) > 0 && len(args) == 0 && cmdline.Find(commands, w) != nil:
			next := cmdline.Find(commands, w)
			if next == nil {
				return nil // an unknown command
			}
			cmd, flags, commands = next, next.Flags, next.VisibleCommands()
		default:
			args = append(args, w)
		}
	}
	var out []string
	switch {
	case len(before) > 0 && cmdline.TakesValue(flags, before[len(before)-1]) && !slices.Contains(before, "--"):
		out = flagArgument(ctx, cmd, strings.TrimLeft(before[len(before)-1], "-"), src)
	case strings.HasPrefix(typed, "-"):
		for _, f := range flags {
			if name := f.Names()[0]; len(name) > 1 {
				out = append(out, "--"+name)
			}
		}
		out = append(out, "--help")
	case cmd == nil || len(commands) > 0 && len(args) == 0:
		for _, c := range commands {
			if c.Name != "help" { // cli's own
				out = append(out, c.Name)
			}
		}
	default:
		kinds := arguments[cmd.Name]
		if len(args) < len(kinds) {
			out = values(ctx, kinds[len(args)], src)
		}
	}
	return matching(out, typed)
}

// flagArgument is what flag of cmd (nil: git-apex's own) takes.
func flagArgument(ctx context.Context, cmd *cli.Command, flag string, src Source) []string {
	if flag == "from" {
		return src.Branches(ctx)
	}
	if cmd != nil {
		if values, ok := flagValues[cmd.Name+" "+flag]; ok {
			return values
		}
	}
	return flagValues[flag]
}

func values(ctx context.Context, kind argument, src Source) []string {
	switch kind {
	case identity:
		return src.Identities(ctx)
	case workflow:
		return src.Workflows(ctx)
	case shellName:
		return Shells
	}
	return nil
}

// matching is the sorted candidates that begin with typed, each once.
func matching(candidates []string, typed string) []string {
	var out []string
	for _, c := range candidates {
		if strings.HasPrefix(c, typed) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// Print writes candidates one per line.
func Print(w io.Writer, candidates []string) error {
	for _, c := range candidates {
		if _, err := fmt.Fprintln(w, c); err != nil {
			return err
		}
	}
	return nil
}

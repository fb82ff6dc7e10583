package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/exitcode"
)

// posixShellInit wraps git in bash and zsh: `git apex cd <identity>` and
// `git apex start --cd ...` change the shell's directory; everything else
// goes to git as it is.
const posixShellInit = `# git-apex shell integration (bash, zsh): lets "git apex cd <identity>" and
# "git apex start --cd ..." change this shell's directory. Enable it with
#   eval "$(git apex shell-init bash)"    # or zsh, in ~/.bashrc or ~/.zshrc
git() {
  if [ "${1-}" = apex ] && [ "${2-}" = cd ]; then
    shift 2
    local __git_apex_dir
    __git_apex_dir=$(command git apex path "$@") || return
    builtin cd -- "$__git_apex_dir"
    return
  fi
  if [ "${1-}" = apex ] && [ "${2-}" = start ]; then
    local __git_apex_arg __git_apex_dir
    for __git_apex_arg in "$@"; do
      if [ "$__git_apex_arg" = --cd ]; then
        __git_apex_dir=$(command git "$@") || return
        builtin cd -- "$__git_apex_dir"
        return
      fi
    done
  fi
  command git "$@"
}
`

// fishShellInit is posixShellInit for fish.
const fishShellInit = `# git-apex shell integration (fish): lets "git apex cd <identity>" and
# "git apex start --cd ..." change this shell's directory. Enable it with
#   git apex shell-init fish | source    # in ~/.config/fish/config.fish
function git --wraps git
    if test (count $argv) -ge 2; and test "$argv[1]" = apex
        if test "$argv[2]" = cd
            set -l dir (command git apex path $argv[3..-1]); or return
            builtin cd -- $dir
            return
        else if test "$argv[2]" = start; and contains -- --cd $argv
            set -l dir (command git $argv); or return
            builtin cd -- $dir
            return
        end
    end
    command git $argv
end
`

func shellInitCommand() *cli.Command {
	return &cli.Command{
		Name:      "shell-init",
		Usage:     "print a shell function that lets `git apex cd` change directory",
		UsageText: "git apex shell-init bash|zsh|fish",
		Description: "The function wraps git: `git apex cd <identity>` and `git apex start --cd ...` change the " +
			"shell's directory, everything else goes to git unchanged. `git apex path` stays the scripting interface.",
		Action: func(c *cli.Context) error {
			args, err := positional(c, 1, 1, "bash, zsh or fish")
			if err != nil {
				return err
			}
			switch args[0] {
			case "bash", "zsh":
				_, err = c.App.Writer.Write([]byte(posixShellInit))
			case "fish":
				_, err = c.App.Writer.Write([]byte(fishShellInit))
			default:
				return usageError(c, "unknown shell %q: use bash, zsh or fish", args[0])
			}
			return err
		},
	}
}

// cdCommand is what runs when the shell function is not installed: a
// program cannot change its shell's directory, so it says how.
func cdCommand() *cli.Command {
	return &cli.Command{
		Name:      "cd",
		Usage:     "change the shell's directory to an environment (needs `git apex shell-init`)",
		UsageText: "git apex cd <identity>",
		Action: func(c *cli.Context) error {
			if _, err := positional(c, 1, 1, "<identity>"); err != nil {
				return err
			}
			return exitcode.New(exitcode.Usage, "git apex cd needs the shell function: add `eval \"$(git apex shell-init bash)\"` (or zsh, or `git apex shell-init fish | source`) to your shell's startup file; meanwhile, cd \"$(git apex path %s)\"", c.Args().First())
		},
	}
}

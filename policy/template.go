package policy

import (
	"fmt"
	"os"

	"github.com/git-apex/git-apex/exitcode"
)

// WriteTemplate writes Template to path. It refuses (exit 3) to overwrite
// an existing file unless force is set.
func WriteTemplate(path string, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if os.IsExist(err) {
		return exitcode.New(exitcode.Refused, "%s already exists; edit it, or run `git apex init --force` to replace it with the template", path)
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if _, err := f.WriteString(Template); err != nil {
		f.Close()
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return f.Close()
}

// Template is what `git apex init` writes: every setting at its built-in
// default, the optional ones commented out. It decodes to Default().
const Template = `# git-apex isolation policy. Commit this file; every clone shares it.
# Reference: the README's "Policy" section, or ` + "`git apex --help`" + `.
version = 1

[isolation]
# Mode for new environments: "full" (worktree + container), "worktree"
# (a git worktree on its own branch) or "shared" (the main checkout).
default = "worktree"
# true: never fall back from full to worktree to shared; fail instead,
# and refuse --isolation (or the API's, MCP's) weaker than the mode here.
strict = false

# Per-workflow modes; [workflow.NAME].isolation wins over these.
[isolation.overrides]
# feature = "full"

[worktree]
# Where environments live, relative to the main checkout.
# Placeholders: {repo} {workflow} {name} {identity} {branch}.
root = "../{repo}.worktrees"
# Base branch for new branches and merged checks. Unset: the remote's
# default branch, else the main checkout's current branch.
# base = "main"
cleanup_on_merge = true
delete_merged_branches = true
cleanup_on_complete = true
preserve_on_failure = true
stale_after = "7d"
# Most active environments at once; 0 means no limit.
max_active = 0
# Untracked files copied from the main checkout into new environments.
copy = []
submodules = true
# Commands run in each new environment (after ` + "`git apex trust`" + `).
setup = []

[container]
# image = "debian:stable-slim"
# cpus = 2
# memory = "2g"
network = "bridge"
user = "host"
shell = "/bin/sh"
# connect_timeout = "20s"
# How the container gets the worktree: "mount", "copy" (in at the start,
# back after each command), or "auto" (mount when the engine is local).
# transfer = "auto"
# What one exchange may take back from the container (its commits, copy
# mode's files), and how long each read from it may take.
# max_transfer = "1g"
# exchange_timeout = "5m"

# [workflow.feature]
# isolation = "full"
# branch = "feature/{name}"
# base = "main"
# setup = ["make deps"]

# [workflow.review]
# detach = true

[hooks]
post_create = []
pre_remove = []
post_remove = []

[pool]
# Warm worktrees kept ready; 0 means no pool.
size = 0
# Warm containers kept on each engine ([batch].engines, else this
# machine's) for batch tasks in full isolation; 0 means none.
containers = 0
# The most slots the pool holds, whatever asks for more (pool warm --size,
# a batch's parallelism); 0 means no cap but the size asked.
max = 0

[requests]
# Where "git apex start pr 99" (and review 99) finds the request: "github"
# (refs/pull/99/head), "gitlab" (refs/merge-requests/99/head) or "auto".
host = "auto"
# The remote to fetch it from; unset: origin, else the only remote.
# remote = "upstream"

[trash]
# How long the uncommitted work "git apex remove --force" discards stays
# restorable with "git apex restore"; "git apex gc" drops older work.
keep = "14d"
# Ignored files (gitignore patterns) kept in the trash too when an
# environment is removed, each up to 100 MiB; other ignored files are
# deleted with it, and the undo line names them.
# keep_ignored = [".env", "*.local"]

[remove]
# How long processes still running in an environment that "remove --kill"
# ends have between SIGTERM and SIGKILL.
kill_grace = "5s"

[batch]
# Docker contexts to spread "git apex batch" over (each runs -j tasks).
# engines = ["builder-1", "builder-2"]
`

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstall runs ./install.sh into a temporary PREFIX, twice, and checks
// that the installed git-apex runs as a git subcommand and that its man
// page renders, also as `git apex --help`.
func TestInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds git-apex; skipped with -short")
	}
	prefix := filepath.Join(t.TempDir(), "pre fix")
	for range 2 {
		cmd := exec.Command("./install.sh")
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "PREFIX="+prefix)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("install.sh: %v\n%s", err, out)
		}
	}
	bin := filepath.Join(prefix, "bin")
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "MANPAGER=cat", "GIT_PAGER=cat", "MANWIDTH=80")
	out, err := runWithEnv(env, "git", "apex", "--version")
	if err != nil || !strings.HasPrefix(out, "git-apex version ") {
		t.Errorf("git apex --version: %v: %s", err, out)
	}
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("no man on this machine: cannot render git-apex.1 (.ci/run installs man-db)")
	}
	page := filepath.Join(prefix, "share", "man", "man1", "git-apex.1")
	out, err = runWithEnv(env, "man", "-l", page)
	if err != nil || !strings.Contains(out, "git-apex") || !strings.Contains(out, "remove") {
		t.Errorf("man -l %s: %v\n%s", page, err, out)
	}
	// The placeholders survive, and the synopsis is the usage line.
	for _, want := range []string{"git apex link [--json] <alias> [<identity>]", "git apex [--policy FILE] [--color WHEN] <command>"} {
		if !strings.Contains(out, want) {
			t.Errorf("the man page lacks %q:\n%s", want, out)
		}
	}
	out, err = runWithEnv(env, "git", "apex", "--help")
	if err != nil || !strings.Contains(out, "isolated place to work") {
		t.Errorf("git apex --help: %v\n%s", err, out)
	}
	// serve and mcp run the engine build installed beside git-apex, and
	// say what is missing when it is not there.
	token := filepath.Join(t.TempDir(), "token")
	out, err = runWithEnv(env, "git", "apex", "serve", "--print-token", "--token-file", token)
	if data, rerr := os.ReadFile(token); err != nil || rerr != nil || strings.TrimSpace(out) != strings.TrimSpace(string(data)) {
		t.Errorf("git apex serve --print-token: %v: %s (token file: %v)", err, out, rerr)
	}
	engine := filepath.Join(bin, engineName)
	if err := os.Rename(engine, engine+".away"); err != nil {
		t.Fatal(err)
	}
	out, err = runWithEnv([]string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + t.TempDir()}, filepath.Join(bin, "git-apex"), "mcp")
	if err == nil || !strings.Contains(out, "need git-apex-engine, which is not beside") {
		t.Errorf("git-apex mcp without the engine: %v: %s", err, out)
	}
	if err := os.Rename(engine+".away", engine); err != nil {
		t.Fatal(err)
	}
	installed := []string{
		"bin/git-apex", "bin/git-apex-engine", "share/man/man1/git-apex.1", "share/bash-completion/completions/git-apex",
		"share/zsh/site-functions/_git-apex", "share/fish/vendor_conf.d/git-apex.fish",
	}
	for _, f := range installed {
		if _, err := os.Stat(filepath.Join(prefix, f)); err != nil {
			t.Errorf("install.sh did not install %s: %v", f, err)
		}
	}

	// --uninstall removes all of it, and nothing else.
	mine := filepath.Join(prefix, "share", "man", "man1", "other.1")
	if err := os.WriteFile(mine, []byte("not git-apex's"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("./install.sh", "--uninstall")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "PREFIX="+prefix)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install.sh --uninstall: %v\n%s", err, out)
	}
	for _, f := range installed {
		if _, err := os.Stat(filepath.Join(prefix, f)); !os.IsNotExist(err) {
			t.Errorf("install.sh --uninstall left %s (%v)", f, err)
		}
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("install.sh --uninstall removed a file it had not installed: %v", err)
	}
}

func runWithEnv(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

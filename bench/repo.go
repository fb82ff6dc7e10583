package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// generatorVersion is part of the cache key: bump it when the generated
// repositories change shape.
const generatorVersion = 1

// cachedRepo returns a synthetic repository of about n files, making it
// the first time and keeping it under cacheDir. A repository is made in a
// temporary directory and renamed into place, so an interrupted run never
// leaves a half-made one behind to be reused.
func cachedRepo(cacheDir string, n int) (string, error) {
	dir := filepath.Join(cacheDir, fmt.Sprintf("v%d-%d-files", generatorVersion, n))
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cacheDir, "making-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(os.Stderr, "bench: generating a %d-file repository in %s\n", n, dir)
	if err := generate(tmp, n); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// generate writes a repository of n files in a nested tree (about 20
// files a directory, three levels deep), mostly small text files with a
// few large ones, and a history of 20 commits, through git fast-import.
func generate(dir string, n int) error {
	if err := gitIn(dir, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(n), 42))
	paths := treePaths(n)
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	w := bufio.NewWriterSize(stdin, 1<<20)
	mark := 0
	blob := func() int {
		mark++
		content := fileContent(rng)
		fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n%s\n", mark, len(content), content)
		return mark
	}
	const commits = 20
	prevCommit := 0
	for c := 0; c < commits; c++ {
		changed := map[string]int{}
		if c == 0 {
			for _, p := range paths {
				changed[p] = blob()
			}
		} else {
			for range max(1, n/200) {
				changed[paths[rng.IntN(len(paths))]] = blob()
			}
		}
		mark++
		ts := 1767225600 + c*3600
		msg := fmt.Sprintf("commit %d", c+1)
		fmt.Fprintf(w, "commit refs/heads/main\nmark :%d\ncommitter Bench <bench@example.com> %d +0000\ndata %d\n%s\n",
			mark, ts, len(msg), msg)
		if prevCommit > 0 {
			fmt.Fprintf(w, "from :%d\n", prevCommit)
		}
		prevCommit = mark
		for p, m := range changed {
			fmt.Fprintf(w, "M 100644 :%d %s\n", m, p)
		}
		fmt.Fprintln(w)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git fast-import: %w", err)
	}
	return gitIn(dir, "reset", "-q", "--hard", "main")
}

// treePaths names n files spread over a three-level directory tree.
func treePaths(n int) []string {
	leaves := max(1, n/20)
	fan := 1
	for fan*fan*fan < leaves {
		fan++
	}
	paths := make([]string, 0, n)
	for i := range n {
		leaf := i % leaves
		a, b, c := leaf/(fan*fan), (leaf/fan)%fan, leaf%fan
		ext := []string{".go", ".md", ".json", ".txt", ".c"}[i%5]
		paths = append(paths, fmt.Sprintf("pkg%02d/mod%02d/part%02d/file%05d%s", a, b, c, i, ext))
	}
	return paths
}

// fileContent is text of a realistic size: 80% under 2 KB, 18% up to
// 8 KB, 2% up to 64 KB.
func fileContent(rng *rand.Rand) string {
	var size int
	switch r := rng.IntN(100); {
	case r < 80:
		size = 100 + rng.IntN(1900)
	case r < 98:
		size = 2048 + rng.IntN(6144)
	default:
		size = 8192 + rng.IntN(57344)
	}
	var b strings.Builder
	for b.Len() < size {
		for range 8 {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

var words = strings.Fields("func return if else for range var const type struct interface map slice " +
	"error nil true false string int byte package import select case default go defer chan")

func gitIn(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

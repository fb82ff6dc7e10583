// Package cleanstat lets list skip `git status` in an env's worktree that
// has not changed since git last found it clean. A snapshot is the stat
// data (size, mode, inode, modification and change times) of everything
// in the worktree, ignored files included, and of every file outside it
// that can change what git status says: the worktree's HEAD, index and
// config, the branch and base refs, the repository's config and exclude
// files, and the user's. A snapshot is taken before git status runs and
// kept only when status finds the tree clean and nothing in the snapshot
// is racy (changed in the second the snapshot began, when a coarse clock
// could hide a later change). The next snapshot matching it byte for byte
// means nothing git status reads has changed; anything else, git runs.
//
// Git config given in the environment (GIT_CONFIG_*) is part of the
// snapshot. Trees it does not cache: ones with submodules (their state
// lives outside the worktree), more than MaxEntries entries (stat-ing
// them costs what git status does), and repositories with reftable refs.
// The system config file is watched at /etc/gitconfig (or
// GIT_CONFIG_SYSTEM) only, and files a config includes (include.path)
// not at all.
package cleanstat

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// MaxEntries is the most files and directories a cached worktree holds.
const MaxEntries = 20000

// Tree is an env's worktree, as the cache needs it.
type Tree struct {
	Dir       string   // the worktree
	CommonDir string   // the repository's common git dir
	Branch    string   // its branch, short
	Base      string   // the branch ahead/behind counts against, short
	Remote    bool     // Base is a remote-tracking branch (origin/main), not a local one
	More      []string // other files git status reads (core.excludesFile, core.attributesFile); "" is none
}

// Counts is what git status said beyond "clean": how far the branch is
// ahead of and behind its base.
type Counts struct {
	Counted       bool
	Ahead, Behind int
}

// Snapshot is a tree's stat data, digested.
type Snapshot struct {
	Digest string
	Racy   bool // something in it changed in the second it began
	Usable bool // false: the tree is one the cache does not keep
}

// entry is what the cache file holds.
type entry struct {
	Digest string `json:"digest"`
	Counts Counts `json:"counts"`
}

// Take snapshots t.
func Take(t Tree) Snapshot {
	if exists(filepath.Join(t.Dir, ".gitmodules")) || exists(filepath.Join(t.CommonDir, "reftable")) {
		return Snapshot{}
	}
	gitDir, ok := worktreeGitDir(t.Dir)
	if !ok {
		return Snapshot{}
	}
	baseRef := filepath.Join("refs", "heads", t.Base)
	if t.Remote {
		baseRef = filepath.Join("refs", "remotes", t.Base)
	}
	began := time.Now().Truncate(time.Second)
	d := &digest{h: sha256.New(), began: began.UnixNano()}
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" {
		xdg = filepath.Join(home, ".config")
	}
	for _, f := range append([]string{
		filepath.Join(gitDir, "HEAD"), filepath.Join(gitDir, "index"), filepath.Join(gitDir, "config.worktree"),
		filepath.Join(t.CommonDir, "config"), filepath.Join(t.CommonDir, "packed-refs"),
		filepath.Join(t.CommonDir, "info", "exclude"), filepath.Join(t.CommonDir, "info", "attributes"),
		filepath.Join(t.CommonDir, "refs", "heads", t.Branch), filepath.Join(t.CommonDir, baseRef),
		filepath.Join(home, ".gitconfig"), filepath.Join(xdg, "git", "config"), filepath.Join(xdg, "git", "ignore"),
		filepath.Join(xdg, "git", "attributes"), "/etc/gitconfig",
		os.Getenv("GIT_CONFIG_GLOBAL"), os.Getenv("GIT_CONFIG_SYSTEM"),
	}, t.More...) {
		if f != "" {
			d.add(f, f)
		}
	}
	var config []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_CONFIG") {
			config = append(config, kv)
		}
	}
	slices.Sort(config) // each process has its own order
	fmt.Fprintf(d.h, "%q\x00", config)
	entries := 0
	err := filepath.WalkDir(t.Dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if entries++; entries > MaxEntries {
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(t.Dir, path)
		d.add(path, rel)
		return nil
	})
	if err != nil || entries > MaxEntries {
		return Snapshot{}
	}
	return Snapshot{Digest: hex.EncodeToString(d.h.Sum(nil)), Racy: d.racy, Usable: true}
}

// digest hashes stat data, noting what is racy.
type digest struct {
	h     hash.Hash
	began int64 // when the snapshot began, in whole seconds (ns)
	racy  bool
}

func (d *digest) add(path, name string) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		fmt.Fprintf(d.h, "%q missing\x00", name)
		return
	}
	mtime, ctime := unix.TimespecToNsec(st.Mtim), unix.TimespecToNsec(st.Ctim)
	d.racy = d.racy || mtime >= d.began || ctime >= d.began
	fmt.Fprintf(d.h, "%q %o %d %d %d %d\x00", name, st.Mode, st.Size, st.Ino, mtime, ctime)
}

// worktreeGitDir is the git dir a linked worktree's .git file names.
func worktreeGitDir(dir string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return "", false
	}
	gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok || !filepath.IsAbs(gitDir) {
		return "", false
	}
	return gitDir, true
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Dir is where a repository keeps its snapshots, one file per env.
type Dir string

// In is the Dir in a repository's git-apex directory.
func In(apexDir string) Dir { return Dir(filepath.Join(apexDir, "clean")) }

func (d Dir) file(id int64) string { return filepath.Join(string(d), strconv.FormatInt(id, 10)) }

// Lookup returns the counts kept for env id's tree, clean when
// snapshot s was kept, or false when s is not the one kept.
func (d Dir) Lookup(id int64, s Snapshot) (Counts, bool) {
	if !s.Usable {
		return Counts{}, false
	}
	data, err := os.ReadFile(d.file(id))
	var e entry
	if err != nil || json.Unmarshal(data, &e) != nil || e.Digest != s.Digest {
		return Counts{}, false
	}
	return e.Counts, true
}

// Keep records what git status found in env id's tree, of snapshot s
// taken before it ran: clean, with counts c, or not. Only a clean tree's
// snapshot that is usable and not racy is kept; otherwise any earlier one
// is forgotten. A cache that cannot be written only costs time: Keep
// reports nothing.
func (d Dir) Keep(id int64, s Snapshot, clean bool, c Counts) {
	file := d.file(id)
	if !clean || !s.Usable || s.Racy {
		os.Remove(file)
		return
	}
	data, _ := json.Marshal(entry{Digest: s.Digest, Counts: c})
	if os.MkdirAll(string(d), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(string(d), filepath.Base(file)+".new-*")
	if err != nil {
		return
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
		os.Remove(tmp.Name())
	}
}

// Prune forgets every env not in live (files named by other numbers;
// another process's temporary files are left alone).
func (d Dir) Prune(live map[int64]bool) {
	names, _ := os.ReadDir(string(d))
	for _, n := range names {
		if id, err := strconv.ParseInt(n.Name(), 10, 64); err == nil && !live[id] {
			os.Remove(filepath.Join(string(d), n.Name()))
		}
	}
}

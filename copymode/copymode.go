// Package copymode moves a full env's files to and from a container
// whose engine cannot see the host's (another machine, a VM): the
// worktree and its private git directory copied in as one tar stream at
// the start, and what the container changed brought back as a checked
// tar. It records what the host's worktree held at each exchange, so
// that nothing the user changed on the host is overwritten. It knows
// containers only through the container package's Runtime.
package copymode

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/git-apex/git-apex/container"
)

// Worktree is a copied container's worktree, as the exchanges see it.
type Worktree struct {
	Dir      string          // on the host, and at the same path inside
	StateDir string          // the host directory its manifest is kept in
	Identity string          // names the container's versions saved beside conflicts
	Skip     map[string]bool // submodule paths: neither copied nor written
	GitEnv   []string        // the environment of git inside
	// Limit bounds what it takes in from the container (container.Limit).
	Limit func(io.Writer) io.Writer
}

// manifestFile, in a sandbox made for copy mode, records what the host's
// worktree held at the last exchange; its presence marks the mode.
const manifestFile = "copy-manifest.json"

// manifest is what the host's worktree held at the last exchange.
type manifest struct {
	// Tree is the container's worktree as a tree (or the start commit)
	// at the last exchange: what the next one diffs against.
	Tree  string              `json:"tree"`
	Files map[string]fileStat `json:"files"` // by slash path, relative to the worktree
}

// fileStat is what identifies a file's content without reading it.
type fileStat struct {
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime_ns"`
	Mode  uint32 `json:"mode"`
	Ino   uint64 `json:"ino"`
}

func statOf(info fs.FileInfo) fileStat {
	st := fileStat{Size: info.Size(), MTime: info.ModTime().UnixNano(), Mode: uint32(info.Mode())}
	if sys, ok := info.Sys().(*syscall.Stat_t); ok {
		st.Ino = uint64(sys.Ino)
	}
	return st
}

func (w Worktree) loadManifest() (manifest, error) {
	m := manifest{Files: map[string]fileStat{}}
	data, err := os.ReadFile(filepath.Join(w.StateDir, manifestFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s: %v", filepath.Join(w.StateDir, manifestFile), err)
	}
	if m.Files == nil {
		m.Files = map[string]fileStat{}
	}
	return m, nil
}

func (w Worktree) saveManifest(m manifest) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp := filepath.Join(w.StateDir, manifestFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(w.StateDir, manifestFile))
}

// CopyIn gives a created container its files: the worktree's (all but
// its .git and the Skip directories), a .git file naming gitDirInside,
// and the host's gitDir at gitDirInside, owned by owner when it is a
// numeric uid:gid (else by root). It records what the host's worktree
// held.
func (w Worktree) CopyIn(ctx context.Context, rt container.Runtime, id, owner, gitDir, gitDirInside string) error {
	uid, gid, _ := NumericOwner(owner) // else root's
	m, err := w.loadManifest()
	if err != nil {
		return err
	}
	m.Files = map[string]fileStat{}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(w.seed(pw, gitDir, gitDirInside, uid, gid, m.Files))
	}()
	if err := rt.CopyTo(ctx, id, "/", pr); err != nil {
		pr.CloseWithError(err)
		return fmt.Errorf("cannot copy the worktree into the container: %w", err)
	}
	return w.saveManifest(m)
}

// CopyFiles gives a container that was copied in already the files at
// paths (slash paths relative to the worktree, each with the directories
// above it), written on the host since, owned as CopyIn's, and records
// them as what the host held.
func (w Worktree) CopyFiles(ctx context.Context, rt container.Runtime, id, owner string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	uid, gid, _ := NumericOwner(owner)
	m, err := w.loadManifest()
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(w.files(pw, paths, uid, gid, m.Files))
	}()
	if err := rt.CopyTo(ctx, id, "/", pr); err != nil {
		pr.CloseWithError(err)
		return fmt.Errorf("cannot copy the files into the container: %w", err)
	}
	return w.saveManifest(m)
}

// files writes the tar CopyFiles sends.
func (w Worktree) files(out io.Writer, paths []string, uid, gid int, files map[string]fileStat) error {
	tw := tar.NewWriter(out)
	root := strings.TrimPrefix(filepath.ToSlash(w.Dir), "/")
	sent := map[string]bool{}
	for _, p := range paths {
		if err := checkName(p); err != nil {
			return fmt.Errorf("%s %w", p, err)
		}
		elems := strings.Split(p, "/")
		for i := range elems {
			rel := strings.Join(elems[:i+1], "/")
			if sent[rel] {
				continue
			}
			sent[rel] = true
			host := filepath.Join(w.Dir, filepath.FromSlash(rel))
			info, err := os.Lstat(host)
			if err != nil {
				return err
			}
			if err := addEntry(tw, host, path.Join(root, rel), info, uid, gid); err != nil {
				return err
			}
			if rel == p {
				files[rel] = statOf(info)
			}
		}
	}
	return tw.Close()
}

// seed writes the tar CopyIn sends, noting in files the stat data of
// each file of the worktree it holds.
func (w Worktree) seed(out io.Writer, gitDir, gitDirInside string, uid, gid int, files map[string]fileStat) error {
	tw := tar.NewWriter(out)
	root := strings.TrimPrefix(filepath.ToSlash(w.Dir), "/")
	err := filepath.WalkDir(w.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.Dir, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" || w.Skip[rel] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		name := root
		if rel != "." {
			name = path.Join(root, rel)
		}
		if err := addEntry(tw, p, name, info, uid, gid); err != nil {
			return err
		}
		if rel != "." && (info.Mode().IsRegular() || info.Mode()&fs.ModeSymlink != 0) {
			files[rel] = statOf(info)
		}
		return nil
	})
	if err != nil {
		return err
	}
	gitfile := []byte("gitdir: " + gitDirInside + "\n")
	if err := tw.WriteHeader(&tar.Header{Name: path.Join(root, ".git"), Typeflag: tar.TypeReg, Mode: 0o444,
		Size: int64(len(gitfile)), Uid: uid, Gid: gid}); err != nil {
		return err
	}
	if _, err := tw.Write(gitfile); err != nil {
		return err
	}
	inside := strings.TrimPrefix(gitDirInside, "/")
	err = filepath.WalkDir(gitDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(gitDir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		return addEntry(tw, p, path.Join(inside, filepath.ToSlash(rel)), info, uid, gid)
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// addEntry writes one file, directory or symlink of the host to tw as
// name; other kinds of file (sockets, devices) are left out.
func addEntry(tw *tar.Writer, hostPath, name string, info fs.FileInfo, uid, gid int) error {
	hdr := &tar.Header{Name: name, Mode: int64(info.Mode().Perm()), ModTime: info.ModTime(), Uid: uid, Gid: gid}
	switch {
	case info.IsDir():
		hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(hostPath)
		if err != nil {
			return err
		}
		hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
	case info.Mode().IsRegular():
		hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
	default:
		return nil
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if hdr.Typeflag != tar.TypeReg {
		return nil
	}
	f, err := os.Open(hostPath)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(tw, io.LimitReader(f, hdr.Size))
	if err == nil && n != hdr.Size {
		err = fmt.Errorf("%s changed while it was copied", hostPath)
	}
	return err
}

// NumericOwner is owner's uid and gid when it is "uid:gid" in numbers;
// ok is false otherwise.
func NumericOwner(owner string) (uid, gid int, ok bool) {
	uidText, gidText, _ := strings.Cut(owner, ":")
	uid, err1 := strconv.Atoi(uidText)
	gid, err2 := strconv.Atoi(gidText)
	return uid, gid, err1 == nil && err2 == nil
}

// Marked reports whether stateDir holds a copied container's manifest.
func Marked(stateDir string) bool {
	_, err := os.Lstat(filepath.Join(stateDir, manifestFile))
	return err == nil
}

// Begin records, in a fresh stateDir, that the container will be given
// the worktree at commit start.
func Begin(stateDir, start string) error {
	return Worktree{StateDir: stateDir}.saveManifest(manifest{Tree: start})
}

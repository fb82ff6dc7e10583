package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/git-apex/git-apex/exitcode"
)

// The errors of a database that cannot be used as it is. Each says what
// to run, and carries exit code 3: git-apex refuses rather than guess.

// DamagedError is a state database that is not a whole SQLite database:
// empty, truncated, or overwritten. It is never taken for a new one.
type DamagedError struct {
	Path string
	Why  string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("the state database %s is damaged (%s); nothing was changed: run `git apex doctor --fix` to move it aside and rebuild the environments' records from git", e.Path, e.Why)
}

// ExitCode is 3: git-apex refuses to work from a damaged record.
func (e *DamagedError) ExitCode() int { return exitcode.Refused }

// BusyError is a write that waited for another process's write longer
// than the Store's wait.
type BusyError struct {
	Path   string
	Holder string // the process that holds it, as far as /proc/locks tells
	Wait   time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("the state database %s is busy: %s has held it for more than %v; nothing was changed, try again when it is done", e.Path, e.Holder, e.Wait)
}

// ExitCode is 3: nothing was changed, to keep the records whole.
func (e *BusyError) ExitCode() int { return exitcode.Refused }

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// checkFile tells a damaged database file from a good or missing one by
// its header, without opening it: empty, too short, not SQLite, or
// shorter than the pages its header counts.
func checkFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	damaged := func(why string) error { return &DamagedError{Path: path, Why: why} }
	switch {
	case !info.Mode().IsRegular():
		return damaged("it is not a regular file")
	case info.Size() == 0:
		return damaged("it is empty")
	}
	header := make([]byte, 100)
	if _, err := io.ReadFull(f, header); err != nil {
		return damaged("it is shorter than an SQLite header")
	}
	if string(header[:16]) != sqliteMagic {
		return damaged("it is not an SQLite database")
	}
	pageSize := int64(binary.BigEndian.Uint16(header[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(header[28:32]))
	// The page count is valid when the change counter matches the
	// "version valid for" field; the pages in use are then all in the file.
	if [4]byte(header[24:28]) == [4]byte(header[92:96]) && pages*pageSize > info.Size() {
		return damaged(fmt.Sprintf("it is truncated: %d bytes of the %d its header counts", info.Size(), pages*pageSize))
	}
	return nil
}

// explain turns SQLite's errors for a damaged or busy database into
// errors that say what to do.
func (s *Store) explain(err error) error {
	switch classify(err) {
	case damagedFault:
		return &DamagedError{Path: s.path, Why: err.Error()}
	case busyFault:
		return &BusyError{Path: s.path, Holder: lockHolder(s.path), Wait: s.wait}
	}
	return err
}

// sqliteFault is what a SQLite error means to the store.
type sqliteFault int

const (
	otherFault   sqliteFault = iota
	damagedFault             // the file is not a database, or a corrupt one
	busyFault                // another process holds a lock
	uniqueFault              // a unique index refused a row
)

// lockHolder names the other process that holds a lock on the database
// or its WAL index, from /proc/locks: its PID and command line.
func lockHolder(path string) string {
	inodes := map[uint64]bool{}
	for _, p := range []string{path, path + "-shm", path + "-wal"} {
		if info, err := os.Stat(p); err == nil {
			inodes[info.Sys().(*syscall.Stat_t).Ino] = true
		}
	}
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return "another process"
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		// 1: POSIX  ADVISORY  WRITE 1234 fd:01:5678 0 EOF
		if len(fields) < 6 || fields[1] == "->" {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		parts := strings.Split(fields[5], ":")
		if err != nil || pid == os.Getpid() || len(parts) != 3 {
			continue
		}
		ino, err := strconv.ParseUint(parts[2], 10, 64)
		if err != nil || !inodes[ino] {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if cmd := strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " ")); cmd != "" {
			return fmt.Sprintf("process %d (%s)", pid, cmd)
		}
		return fmt.Sprintf("process %d", pid)
	}
	return "another process"
}

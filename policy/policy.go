// Package policy reads .apex.toml, the isolation policy committed in a
// repository: its types and built-in defaults, a strict decoder that names
// file, line and key for every mistake, validation, and the resolution of
// an identity's mode, branch, path and base.
package policy

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// FileName is the policy's name at the top of the main checkout.
const FileName = ".apex.toml"

// Version is the newest policy format this binary reads.
const Version = 1

// Mode is an isolation mode.
type Mode string

// The isolation modes, strongest first.
const (
	Full     Mode = "full"     // a worktree plus a container
	Worktree Mode = "worktree" // a git worktree on its own branch
	Shared   Mode = "shared"   // the branch in the main checkout
)

// UnmarshalText accepts only the three modes.
func (m *Mode) UnmarshalText(text []byte) error {
	mode, err := ParseMode(string(text))
	*m = mode
	return err
}

// ParseMode validates a mode name, as given to --isolation.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Full, Worktree, Shared:
		return m, nil
	}
	return "", fmt.Errorf("unknown isolation mode %q: use full, worktree or shared", s)
}

// Policy is a decoded .apex.toml.
type Policy struct {
	Version   int                 `toml:"version"`
	Isolation Isolation           `toml:"isolation"`
	Worktree  WorktreeSettings    `toml:"worktree"`
	Container Container           `toml:"container"`
	Workflow  map[string]Workflow `toml:"workflow"`
	Hooks     Hooks               `toml:"hooks"`
	Pool      Pool                `toml:"pool"`
	Requests  Requests            `toml:"requests"`
	Batch     Batch               `toml:"batch"`
	Trash     Trash               `toml:"trash"`
	Remove    Remove              `toml:"remove"`

	// File is where the policy was read from; "" for the built-in defaults.
	File string `toml:"-"`
	// lifted is what Bounds reported before KeepBounds put them back.
	lifted map[string]string
}

// Isolation is the [isolation] table.
type Isolation struct {
	Default   Mode            `toml:"default"`
	Strict    bool            `toml:"strict"`
	Overrides map[string]Mode `toml:"overrides"`
}

// WorktreeSettings is the [worktree] table.
type WorktreeSettings struct {
	Root                 string   `toml:"root"`
	Base                 string   `toml:"base"`
	CleanupOnMerge       bool     `toml:"cleanup_on_merge"`
	DeleteMergedBranches bool     `toml:"delete_merged_branches"`
	CleanupOnComplete    bool     `toml:"cleanup_on_complete"`
	PreserveOnFailure    bool     `toml:"preserve_on_failure"`
	StaleAfter           Duration `toml:"stale_after"`
	MaxActive            int      `toml:"max_active"`
	Copy                 []string `toml:"copy"`
	Submodules           bool     `toml:"submodules"`
	Setup                []string `toml:"setup"`
}

// Container is the [container] table.
type Container struct {
	Image   string            `toml:"image"`
	CPUs    float64           `toml:"cpus"`
	Memory  ByteSize          `toml:"memory"`
	Network string            `toml:"network"`
	User    string            `toml:"user"`
	Env     map[string]string `toml:"env"`
	Volumes map[string]string `toml:"volumes"`
	Shell   string            `toml:"shell"` // what `git apex shell` runs inside
	// ConnectTimeout is how long git-apex waits for the container engine
	// to answer before it counts it unreachable.
	ConnectTimeout Duration `toml:"connect_timeout"`
	// Transfer is how the container gets the env's files: "mount" (bind
	// mounts of the host's paths), "copy" (copied in at the start, the
	// results copied back), or "auto": mount when the engine runs on
	// this machine (container.Endpoint.Local), else copy.
	Transfer string `toml:"transfer"`
	// MaxTransfer caps what one exchange takes in from a container: the
	// bundle of its commits, copy mode's tar of its files.
	MaxTransfer ByteSize `toml:"max_transfer"`
	// ExchangeTimeout bounds each read from a container in an exchange.
	ExchangeTimeout Duration `toml:"exchange_timeout"`
}

// Workflow is one [workflow.NAME] table.
type Workflow struct {
	Isolation Mode     `toml:"isolation"`
	Branch    string   `toml:"branch"`
	Base      string   `toml:"base"`
	Setup     []string `toml:"setup"`
	Detach    bool     `toml:"detach"`
}

// Hooks is the [hooks] table of lifecycle commands.
type Hooks struct {
	PostCreate []string `toml:"post_create"`
	PreRemove  []string `toml:"pre_remove"`
	PostRemove []string `toml:"post_remove"`
}

// Requests is the [requests] table: where `start pr N` and `start
// review N` find pull and merge requests.
type Requests struct {
	Remote string `toml:"remote"` // "": origin, else the only remote
	Host   string `toml:"host"`   // github, gitlab, or auto (try both)
}

// Batch is the [batch] table.
type Batch struct {
	// Engines are the Docker contexts a batch spreads its tasks over
	// when --engines names none.
	Engines []string `toml:"engines"`
}

// Remove is the [remove] table.
type Remove struct {
	// KillGrace is how long the processes a removal with --kill ends
	// have between SIGTERM and SIGKILL.
	KillGrace Duration `toml:"kill_grace"`
}

// Hosts are the kinds of host to look for requests on, in order.
func (r Requests) Hosts() []string {
	if r.Host == "auto" {
		return []string{"github", "gitlab"}
	}
	return []string{r.Host}
}

// Trash is the [trash] table.
type Trash struct {
	// Keep is how long the uncommitted work a forced removal discarded
	// stays restorable (`git apex restore`); `git apex gc` drops older.
	Keep Duration `toml:"keep"`
	// KeepIgnored are gitignore patterns ("/.env", "*.local"): the
	// ignored files of an env they match are kept in the trash too, each
	// up to trash.MaxFile, when its worktree is removed. Other ignored
	// files are deleted with it, and named in the undo line.
	KeepIgnored []string `toml:"keep_ignored"`
}

// Pool is the [pool] table.
type Pool struct {
	Size int `toml:"size"`
	// Containers is how many warm containers `pool warm` keeps on each
	// engine ([batch].engines, else the repository's own) for full
	// isolation batch tasks to take; 0: none.
	Containers int `toml:"containers"`
	// Max is the most slots the pool holds, whatever asks for more:
	// `pool warm --size`, a batch's parallelism, warm containers' slots;
	// 0: no cap but the size asked (a batch makes up to its parallelism).
	Max int `toml:"max"`
}

// Default returns the built-in policy, used when there is no .apex.toml
// and as the starting point every file is decoded over. max_active = 0
// and pool size = 0 mean no limit and no pool.
func Default() *Policy {
	return &Policy{
		Version:   Version,
		Isolation: Isolation{Default: Worktree},
		Worktree: WorktreeSettings{
			Root:                 "../{repo}.worktrees",
			CleanupOnMerge:       true,
			DeleteMergedBranches: true,
			CleanupOnComplete:    true,
			PreserveOnFailure:    true,
			StaleAfter:           Duration(7 * 24 * time.Hour),
			Submodules:           true,
		},
		Container: Container{Network: "bridge", User: "host", Shell: "/bin/sh", ConnectTimeout: Duration(20 * time.Second), Transfer: "auto",
			MaxTransfer: 1 << 30, ExchangeTimeout: Duration(5 * time.Minute)},
		Requests: Requests{Host: "auto"},
		Trash:    Trash{Keep: Duration(14 * 24 * time.Hour)},
		Remove:   Remove{KillGrace: Duration(5 * time.Second)},
	}
}

// Duration is a length of time written as Go writes durations ("90m",
// "12h") or in whole days or weeks ("7d", "2w").
type Duration time.Duration

// UnmarshalText parses a Duration.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := ParseDuration(string(text))
	*d = Duration(v)
	return err
}

// maxDuration is the longest duration there is (about 292 years).
const maxDuration = time.Duration(math.MaxInt64)

// ParseDuration parses "7d", "2w" or anything time.ParseDuration takes;
// a value too long to hold is an error, never a wrap-around.
func ParseDuration(s string) (time.Duration, error) {
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err == nil && v >= 0 && v <= int64(maxDuration/unit) {
				return time.Duration(v) * unit, nil
			}
			if err == nil && v > 0 || errors.Is(err, strconv.ErrRange) {
				return 0, fmt.Errorf("invalid duration %q: at most %dw", s, maxDuration/(7*24*time.Hour))
			}
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("invalid duration %q: use a number with a unit, like 30m, 12h, 7d or 2w", s)
	}
	return v, nil
}

// ByteSize is a size in Docker's notation: a number with an
// optional unit b, k, m or g, each 1024 times the one before.
type ByteSize int64

// UnmarshalText parses a ByteSize.
func (b *ByteSize) UnmarshalText(text []byte) error {
	s := strings.ToLower(strings.TrimSpace(string(text)))
	unit := int64(1)
	if n := len(s); n > 0 {
		if i := strings.IndexByte("bkmg", s[n-1]); i >= 0 {
			unit = int64(1) << (10 * i)
			s = s[:n-1]
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v*float64(unit) >= 1) || v*float64(unit) >= math.MaxInt64 { // NaN and Inf fail too
		return fmt.Errorf("invalid size %q: use a number with a unit, like 512m or 2g", string(text))
	}
	*b = ByteSize(v * float64(unit))
	return nil
}

package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-apex/git-apex/exitcode"
)

func TestTemplateDecodesToDefaults(t *testing.T) {
	p, err := Decode(".apex.toml", Template)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	// Printed, so that the template's empty lists equal the defaults' nil ones.
	if fmt.Sprintf("%+v", p) != fmt.Sprintf("%+v", want) {
		t.Errorf("template decodes to\n%+v\nwant\n%+v", p, want)
	}
}

func TestLoadMissingFileGivesDefaults(t *testing.T) {
	p, err := Load(filepath.Join(t.TempDir(), FileName), false)
	if err != nil || !reflect.DeepEqual(p, Default()) {
		t.Fatalf("got %+v, %v", p, err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "nope.toml"), true); exitcode.Of(err) != exitcode.Policy {
		t.Fatalf("explicit missing file: got %v", err)
	}
}

func TestDecodeErrorsNameWhereAndWhat(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		line       int
		want       []string
	}{
		{"syntax", "version = 1\n[isolation\ndefault = \"full\"\n", 2, []string{"expected"}},
		{"unknown key", "version = 1\n\n[worktree]\nrooot = \"x\"\n", 4, []string{`unknown key "rooot"`, "[worktree]"}},
		{"unknown top-level table", "version = 1\n[isolaton]\ndefault = \"full\"\n", 2, []string{"unknown table [isolaton]"}},
		{"unknown key in workflow", "[workflow.feature]\nisolaton = \"full\"\n", 2, []string{`unknown key "isolaton"`, "[workflow.feature]"}},
		{"wrong type", "[isolation]\nstrict = \"yes\"\n", 2, []string{"isolation.strict", "expected bool", "found string"}},
		{"unknown mode", "[isolation]\ndefault = \"ful\"\n", 2, []string{"isolation.default", `"ful"`, "full, worktree or shared"}},
		{"unknown mode in override", "[isolation.overrides]\nfeature = \"box\"\n", 2, []string{`"box"`}},
		{"override of unknown workflow", "[isolation.overrides]\nfeatur = \"full\"\n", 2, []string{"isolation.overrides.featur", `did you mean "feature"`}},
		{"bad duration", "[worktree]\nstale_after = \"soon\"\n", 2, []string{"stale_after", `"soon"`}},
		{"bad trash keep", "[trash]\nkeep = \"fortnight\"\n", 2, []string{"keep", `"fortnight"`}},
		{"no trash keep", "[trash]\nkeep = \"0d\"\n", 2, []string{"trash.keep", "longer than 0"}},
		{"trash keep in days and hours", "[trash]\nkeep = \"1d12h\"\n", 2, []string{"keep", `"1d12h"`}},
		{"empty keep_ignored pattern", "[trash]\nkeep_ignored = [\".env\", \" \"]\n", 2, []string{"trash.keep_ignored", `invalid pattern " "`}},
		{"keep_ignored of two lines", "[trash]\nkeep_ignored = [\".env\\n*.key\"]\n", 2, []string{"trash.keep_ignored", "one gitignore pattern per string"}},
		{"keep_ignored comment", "[trash]\nkeep_ignored = [\"# env\"]\n", 2, []string{"trash.keep_ignored", `"# env"`}},
		{"bad memory", "[container]\nmemory = \"lots\"\n", 2, []string{"memory", `"lots"`}},
		{"bad network", "[container]\nnetwork = \"host\"\n", 2, []string{"container.network", `"bridge" or "none"`}},
		{"no connect timeout", "[container]\nconnect_timeout = \"0s\"\n", 2, []string{"container.connect_timeout", "longer than 0"}},
		{"bad connect timeout", "[container]\nconnect_timeout = \"soon\"\n", 2, []string{"connect_timeout", `"soon"`}},
		{"no exchange timeout", "[container]\nexchange_timeout = \"0s\"\n", 2, []string{"container.exchange_timeout", "longer than 0"}},
		{"bad max transfer", "[container]\nmax_transfer = \"inf\"\n", 2, []string{"max_transfer", `"inf"`}},
		{"zero max transfer", "[container]\nmax_transfer = \"0\"\n", 2, []string{"max_transfer", `"0"`}},
		{"huge max transfer", "[container]\nmax_transfer = \"9e9g\"\n", 2, []string{"max_transfer", `"9e9g"`}},
		{"bad placeholder", "[worktree]\nroot = \"../{rpo}\"\n", 2, []string{"worktree.root", "{rpo}"}},
		{"bad branch template", "[workflow.feature]\nbranch = \"f/{branch}\"\n", 2, []string{"workflow.feature.branch", "{branch}"}},
		{"newer version", "version = 2\n", 1, []string{"upgrade git-apex"}},
		{"no kill grace", "[remove]\nkill_grace = \"0s\"\n", 2, []string{"remove.kill_grace", "longer than 0"}},
		{"long kill grace", "[remove]\nkill_grace = \"1h\"\n", 2, []string{"remove.kill_grace", "at most 10m"}},
		{"bad kill grace", "[remove]\nkill_grace = \"soon\"\n", 2, []string{"kill_grace", `"soon"`}},
		{"negative limit", "[worktree]\nmax_active = -1\n", 2, []string{"max_active"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode("/r/.apex.toml", tc.text)
			if exitcode.Of(err) != exitcode.Policy {
				t.Fatalf("exit code %d for %v", exitcode.Of(err), err)
			}
			msg := err.Error()
			want := append([]string{fmt.Sprintf("/r/.apex.toml:%d:", tc.line)}, tc.want...)
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestModePrecedence(t *testing.T) {
	text := `
[isolation]
default = "shared"
[isolation.overrides]
bugfix = "full"
feature = "full"
[workflow.feature]
isolation = "worktree"
`
	p, err := Decode("p", text)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		policy   *Policy
		workflow string
		flag     Mode
		want     Mode
	}{
		{"flag beats everything", p, "feature", Shared, Shared},
		{"workflow table beats override", p, "feature", "", Worktree},
		{"override beats default", p, "bugfix", "", Full},
		{"default when nothing else", p, "task", "", Shared},
		{"built-in worktree", &Policy{}, "task", "", Worktree},
		{"built-in defaults", Default(), "feature", "", Worktree},
	} {
		if got := tc.policy.Mode(tc.workflow, tc.flag); got != tc.want {
			t.Errorf("%s: Mode(%q, %q) = %q, want %q", tc.name, tc.workflow, tc.flag, got, tc.want)
		}
	}
}

// TestCheckModeUnderStrict: a strict policy's mode for a workflow is the
// weakest that may be asked; without strict, any may.
func TestCheckModeUnderStrict(t *testing.T) {
	strict, err := Decode("/r/.apex.toml", "[isolation]\ndefault = \"worktree\"\nstrict = true\n[workflow.agent]\nisolation = \"full\"\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		workflow string
		flag     Mode
		refused  bool
	}{
		{"agent", Worktree, true}, {"agent", Shared, true}, {"agent", Full, false}, {"agent", "", false},
		{"feature", Shared, true}, {"feature", Worktree, false}, {"feature", Full, false},
	} {
		err := strict.CheckMode(tc.workflow, tc.flag)
		if (err != nil) != tc.refused || err != nil && exitcode.Of(err) != exitcode.Usage {
			t.Errorf("CheckMode(%q, %q) = %v, want refused %v (exit 2)", tc.workflow, tc.flag, err, tc.refused)
		}
	}
	if err := Default().CheckMode("feature", Shared); err != nil {
		t.Errorf("without strict: %v", err)
	}
}

func TestIdentities(t *testing.T) {
	good := map[string]Identity{
		"feature-my-branch": {"feature", "my-branch"},
		"issue-42":          {"issue", "42"},
		"my_flow-x.y_z":     {"my_flow", "x.y_z"},
	}
	for s, want := range good {
		id, err := ParseIdentity(s)
		if err != nil || id != want || id.String() != s {
			t.Errorf("ParseIdentity(%q) = %v, %v", s, id, err)
		}
	}
	bad := []string{"", "feature", "feature-", "-x", "Feature-x", "feature-..", "feature-a..b", "feature-a/b",
		"feature--x", "feature-.x", "feature-$(rm)", "feature-a b", "feature-a;b", "feature-" + strings.Repeat("a", 101)}
	for _, s := range bad {
		if _, err := ParseIdentity(s); exitcode.Of(err) != exitcode.Usage {
			t.Errorf("ParseIdentity(%q) = %v, want a usage error", s, err)
		}
	}
	if _, err := NewIdentity("feature", strings.Repeat("a", 100)); err != nil {
		t.Errorf("100-character name refused: %v", err)
	}
}

func TestUnknownWorkflowSuggests(t *testing.T) {
	p := Default()
	p.Workflow = map[string]Workflow{"deploy": {}}
	for typo, want := range map[string]string{"featur": "feature", "bugfx": "bugfix", "deploi": "deploy", "rev": "review"} {
		err := p.CheckWorkflow(typo)
		if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), `did you mean "`+want+`"`) {
			t.Errorf("CheckWorkflow(%q) = %v", typo, err)
		}
	}
	if err := p.CheckWorkflow("deploy"); err != nil {
		t.Errorf("policy workflow refused: %v", err)
	}
}

func TestBranchAndPath(t *testing.T) {
	p, err := Decode("p", "[workflow.feature]\nbranch = \"feature/{name}\"\n")
	if err != nil {
		t.Fatal(err)
	}
	id := Identity{"feature", "x"}
	if b, err := p.Branch(id, "repo"); err != nil || b != "feature/x" {
		t.Errorf("Branch = %q, %v", b, err)
	}
	if b, err := p.Branch(Identity{"bugfix", "y.lock"}, "repo"); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("Branch of y.lock = %q, %v", b, err)
	}
	path, err := p.EnvPath("", "/src/my repo", "my repo", "/src/my repo/.git", id, "feature/x")
	if err != nil || path != "/src/my repo.worktrees/feature-x" {
		t.Errorf("EnvPath = %q, %v", path, err)
	}
	p.Worktree.Root = ".git/envs"
	if _, err := p.EnvPath("", "/src/r", "r", "/src/r/.git", id, "x"); exitcode.Of(err) != exitcode.Policy {
		t.Errorf("path inside .git accepted: %v", err)
	}
}

func TestDurationAndSize(t *testing.T) {
	for s, want := range map[string]string{"7d": "168h0m0s", "2w": "336h0m0s", "90m": "1h30m0s"} {
		d, err := ParseDuration(s)
		if err != nil || d.String() != want {
			t.Errorf("ParseDuration(%q) = %v, %v", s, d, err)
		}
	}
	var b ByteSize
	if err := b.UnmarshalText([]byte("2g")); err != nil || b != 2<<30 {
		t.Errorf("2g = %d, %v", b, err)
	}
}

func BenchmarkDecodeTemplate(b *testing.B) {
	for b.Loop() {
		if _, err := Decode(FileName, Template); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResolve(b *testing.B) {
	p, _ := Decode("p", "[workflow.feature]\nbranch = \"feature/{name}\"\n")
	id := Identity{"feature", "my-branch"}
	for b.Loop() {
		p.Mode(id.Workflow, "")
		if _, err := p.Branch(id, "repo"); err != nil {
			b.Fatal(err)
		}
		if _, err := p.EnvPath("", "/src/repo", "repo", "/src/repo/.git", id, "feature/my-branch"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseIdentity(b *testing.B) {
	for b.Loop() {
		if _, err := ParseIdentity("feature-my-branch.v2_x"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDurationOverflow(t *testing.T) {
	for _, s := range []string{"106752d", "15251w", "99999999999999999999d", "3000000h"} {
		if d, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", s, d)
		}
	}
	if d, err := ParseDuration("106751d"); err != nil || d <= 0 {
		t.Errorf("ParseDuration(106751d) = %v, %v", d, err)
	}
}

// TestHostSettingsFollowLinks judges copy globs and the root by where
// the file system takes them: a committed link out of bounds makes them
// host settings, and retargeting it changes the hash.
func TestHostSettingsFollowLinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	checkout := filepath.Join(dir, "src", "repo")
	for _, d := range []string{checkout, filepath.Join(dir, "home", ".ssh"), filepath.Join(dir, "home", ".vim"), filepath.Join(checkout, "conf")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Decode(".apex.toml", "[worktree]\nroot = \"envs/pack\"\ncopy = [\".env\", \"conf/*.json\", \"keys/*\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	plain := p.HostSettings(checkout, filepath.Base(checkout))
	if !plain.Empty() || !plain.ForFull() {
		t.Fatalf("no link, yet host settings: %v", plain.Lines())
	}
	link := func(name, target string) {
		os.Remove(filepath.Join(checkout, name))
		if err := os.Symlink(target, filepath.Join(checkout, name)); err != nil {
			t.Fatal(err)
		}
	}
	link("keys", "../../home/.ssh")
	link("envs", "../../home/.vim")
	h := p.HostSettings(checkout, filepath.Base(checkout))
	want := []string{
		"worktree.copy: keys/* (a symbolic link leads it to " + filepath.Join(dir, "home", ".ssh") + ")",
		"worktree.copy (into full environments' containers): .env",
		"worktree.copy (into full environments' containers): conf/*.json",
		"worktree.root: envs/pack (a symbolic link leads it to " + filepath.Join(dir, "home", ".vim", "pack") + ")",
	}
	if !reflect.DeepEqual(h.Lines(), want) {
		t.Errorf("got %q, want %q", h.Lines(), want)
	}
	link("keys", "../../home/.vim")
	if again := p.HostSettings(checkout, filepath.Base(checkout)); again.Hash() == h.Hash() {
		t.Error("retargeting a link kept the hash")
	}
}

// TestBesideCheckout: without approval a root outside the checkout is
// one directory directly beside it, not hidden (the default's name
// excepted, for a hidden checkout).
func TestBesideCheckout(t *testing.T) {
	for target, want := range map[string]bool{
		"/h/proj/envs":            true,
		"/h/proj":                 true,
		"/h/proj.worktrees":       true,
		"/h/envs":                 true,
		"/h/.vim":                 false,
		"/h/.vim/pack/proj/start": false,
		"/h/envs/deeper":          false,
		"/h":                      false,
		"/elsewhere":              false,
		"/h/.proj.worktrees":      false,
	} {
		if got := BesideCheckout(target, "/h/proj"); got != want {
			t.Errorf("BesideCheckout(%s, /h/proj) = %v, want %v", target, got, want)
		}
	}
	if !BesideCheckout("/h/.dotfiles.worktrees", "/h/.dotfiles") {
		t.Error("the default root of a hidden checkout needs approval")
	}
}

// TestBounds: a committed policy may lower the bounds, but what it lifts
// is a host setting, put back by KeepBounds until approved; a pool past
// PoolMax is no policy at all.
func TestBounds(t *testing.T) {
	low, err := Decode(".apex.toml", "[container]\nexchange_timeout = \"1s\"\nmax_transfer = \"1m\"\n[pool]\nsize = 64\ncontainers = 64\n")
	if err != nil {
		t.Fatal(err)
	}
	if b := low.Bounds(); b != nil || !low.HostSettings(t.TempDir(), "repo").Empty() {
		t.Errorf("lowered bounds count as lifted: %v", b)
	}
	p, err := Decode(".apex.toml", "[container]\nexchange_timeout = \"15250w\"\nmax_transfer = \"2g\"\n[pool]\nsize = 1000\ncontainers = 65\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"container.exchange_timeout": "2562000h0m0s", "container.max_transfer": "2147483648", "pool.size": "1000", "pool.containers": "65"}
	if got := p.Bounds(); !reflect.DeepEqual(got, want) {
		t.Errorf("Bounds() = %v, want %v", got, want)
	}
	host := p.HostSettings(t.TempDir(), "repo")
	if host.Empty() || len(host.Lines()) != 4 {
		t.Errorf("lifted bounds are no host settings: %q", host.Lines())
	}
	p.KeepBounds()
	def := Default().Container
	if p.Container.ExchangeTimeout != def.ExchangeTimeout || p.Container.MaxTransfer != def.MaxTransfer || p.Pool.Size != PoolCap || p.Pool.Containers != PoolCap {
		t.Errorf("KeepBounds left %v %v %d %d", p.Container.ExchangeTimeout, p.Container.MaxTransfer, p.Pool.Size, p.Pool.Containers)
	}
	if again := p.HostSettings(t.TempDir(), "repo"); again.Hash() != host.Hash() {
		t.Error("kept bounds changed what an approval covers")
	}
	for _, text := range []string{"[pool]\nsize = 1001\n", "[pool]\ncontainers = 1000000000\n"} {
		if _, err := Decode(".apex.toml", text); err == nil || !strings.Contains(err.Error(), "to 1000") {
			t.Errorf("Decode(%q) = %v, want an error naming the most", text, err)
		}
	}
}

// An approval of a policy whose choices of mode are all full covers its
// commands in containers only; any choice of worktree or shared (the
// default one included) puts them on the host.
func TestRunsCommandsOnHost(t *testing.T) {
	for text, want := range map[string]bool{
		"":                                  true, // the default is worktree
		"[isolation]\ndefault = \"full\"\n": false,
		"[isolation]\ndefault = \"full\"\nstrict = true\n":                                false,
		"[isolation]\ndefault = \"full\"\n[isolation.overrides]\ntask = \"shared\"\n":     true,
		"[isolation]\ndefault = \"full\"\n[workflow.scratch]\nisolation = \"worktree\"\n": true,
		"[isolation]\ndefault = \"full\"\n[workflow.agent]\nisolation = \"full\"\n":       false,
		"[isolation]\ndefault = \"worktree\"\n[workflow.agent]\nisolation = \"full\"\n":   true,
	} {
		p, err := Decode("p", text)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if got := p.RunsCommandsOnHost(); got != want {
			t.Errorf("%q: RunsCommandsOnHost = %v, want %v", text, got, want)
		}
	}
}

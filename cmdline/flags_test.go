package cmdline

import (
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestFlagsFirst(t *testing.T) {
	app := &cli.App{
		Flags: []cli.Flag{&cli.StringFlag{Name: "policy"}},
		Commands: []*cli.Command{
			{Name: "remove", Aliases: []string{"rm"}, Flags: []cli.Flag{
				&cli.BoolFlag{Name: "force", Aliases: []string{"f"}},
				&cli.StringFlag{Name: "from"},
			}},
			{Name: "exec"},
			{Name: "pool", Subcommands: []*cli.Command{
				{Name: "warm", Flags: []cli.Flag{&cli.IntFlag{Name: "size"}}},
			}},
		},
	}
	for in, want := range map[string]string{
		"rm x --force":            "rm --force x",
		"rm x -f y":               "rm -f x y",
		"rm x --from v y":         "rm --from v x y",
		"rm x --from=v":           "rm --from=v x",
		"--policy p rm x --force": "--policy p rm --force x",
		"rm x -- --force":         "rm x -- --force",
		"rm x --nope":             "rm --nope x",
		"rm x - --force":          "rm --force x -",
		"rm x -h":                 "rm -h",
		"exec id ls -la":          "exec id ls -la",
		"exec id -- ls -la":       "exec id -- ls -la",
		"pool warm x --size 3":    "pool warm --size 3 x",
		"frobnicate --force x":    "frobnicate --force x",
		"rm x --from":             "rm --from",
		"rm x --policy p -f":      "--policy p rm -f x",
		"pool warm --policy=p":    "--policy=p pool warm",
	} {
		args := append([]string{"git-apex"}, strings.Fields(in)...)
		got := strings.Join(FlagsFirst(app, args, map[string]int{"exec": 1})[1:], " ")
		if got != want {
			t.Errorf("FlagsFirst(%q) = %q, want %q", in, got, want)
		}
		if !slices.Equal(args[1:], strings.Fields(in)) {
			t.Errorf("FlagsFirst(%q) changed its argument", in)
		}
	}
}

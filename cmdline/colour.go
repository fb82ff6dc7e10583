package cmdline

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/term"
)

// Colours is the --color flag's values.
var Colours = []string{"auto", "always", "never"}

// UseColour decides whether to colour what goes to out: flag (--color),
// else setting (apex.color, else color.ui; git's true means auto), else
// auto: on a terminal that is not "dumb", unless NO_COLOR is set.
func UseColour(flag, setting string, out *os.File) (bool, error) {
	switch flag {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "", "auto":
	default:
		return false, fmt.Errorf("invalid --color %q: use auto, always or never", flag)
	}
	switch setting {
	case "always":
		return true, nil
	case "never", "false":
		return false, nil
	}
	return os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && term.IsTerminal(int(out.Fd())), nil
}

// Width is the width of the terminal out shows on: $COLUMNS when set,
// else the terminal's own; 0 when out is no terminal (a pipe: no limit).
func Width(out *os.File) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if w, _, err := term.GetSize(int(out.Fd())); err == nil {
		return w
	}
	return 0
}

// The colours used, as SGR codes.
const (
	Green  = "32"
	Yellow = "33"
	Red    = "31"
	Cyan   = "36"
	Bold   = "1"
	Dim    = "2"
)

// Paint wraps s in the colour code.
func Paint(code, s string) string { return "\x1b[" + code + "m" + s + "\x1b[0m" }

package hooks

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Offer asks, when asking is true (standard input is a real terminal:
// /dev/null is a character device too), whether to install the hooks in
// dir, and installs them on yes; an answer cut short by end of input is
// no. Elsewhere it says how to install them. Installed hooks are left
// alone. It returns the hooks it installed.
func Offer(dir string, asking bool, in io.Reader, out io.Writer) ([]Status, error) {
	for _, st := range Inspect(dir) {
		if st.Installed {
			return nil, nil
		}
	}
	if !asking {
		fmt.Fprintln(out, "run `git apex hooks install` to remove merged environments automatically after merges and pulls")
		return nil, nil
	}
	fmt.Fprint(out, "install git hooks that remove merged environments after merges and pulls? [Y/n] ")
	answer, err := bufio.NewReader(in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); err != nil || a != "" && a != "y" && a != "yes" {
		return nil, nil
	}
	return Install(dir)
}

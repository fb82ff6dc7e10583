package container

import (
	"fmt"
	"io"
)

// TooLarge is the error of a write past a Limit writer's limit: the
// policy's [container].max_transfer, or the space free on a disk.
type TooLarge struct {
	Limit int64
	Disk  string // the directory whose disk had only Limit bytes free; "": max_transfer
}

func (e *TooLarge) Error() string {
	size := fmt.Sprintf("%d bytes", e.Limit)
	for i, unit := range []string{"g", "m", "k"} {
		if shift := 30 - 10*i; e.Limit >= 1<<shift && e.Limit%(1<<shift) == 0 {
			size = fmt.Sprintf("%d%s", e.Limit>>shift, unit)
			break
		}
	}
	if e.Disk != "" {
		return fmt.Sprintf("it sent more than the %s free on the disk holding %s (make room there)", size, e.Disk)
	}
	return fmt.Sprintf("it sent more than %s, the most [container].max_transfer lets one exchange take (raise it in .apex.toml if the work is that large)", size)
}

// Limit passes at most limit bytes to w (disk: see TooLarge): the write
// that would pass it fails with *TooLarge, writing nothing, and so does
// every write after. An exec whose output fails to be written is stopped
// (Runtime.Exec).
func Limit(w io.Writer, limit int64, disk string) io.Writer {
	return &limited{w: w, left: limit, err: &TooLarge{Limit: limit, Disk: disk}}
}

type limited struct {
	w    io.Writer
	left int64
	err  *TooLarge
}

func (l *limited) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		l.left = -1
		return 0, l.err
	}
	l.left -= int64(len(p))
	return l.w.Write(p)
}

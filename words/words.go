// Package words holds the few helpers that make git-apex's messages read
// as English.
package words

import "strconv"

// Count is n followed by noun, made plural with an "s" unless n is 1:
// "1 commit", "2 commits", "0 slots".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Size is n bytes in the largest binary unit it holds one of, with one
// decimal below 10: "512 B", "3.0 GiB", "100 MiB".
func Size(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	f, i := float64(n), 0
	for ; f >= 1024 && i < len(units)-1; i++ {
		f /= 1024
	}
	if i > 0 && f < 10 {
		return strconv.FormatFloat(f, 'f', 1, 64) + " " + units[i]
	}
	return strconv.FormatFloat(f, 'f', 0, 64) + " " + units[i]
}

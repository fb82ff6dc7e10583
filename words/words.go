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

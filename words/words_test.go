package words

import "testing"

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 tasks", 1: "1 task", 2: "2 tasks", 11: "11 tasks"} {
		if got := Count(n, "task"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{512: "512 B", 3 << 30: "3.0 GiB", 100 << 20: "100 MiB", 1536: "1.5 KiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

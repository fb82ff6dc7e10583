package container

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestLimit(t *testing.T) {
	var buf bytes.Buffer
	w := Limit(&buf, 4<<20, "")
	if _, err := w.Write(make([]byte, 4<<20)); err != nil {
		t.Fatalf("a write up to the limit: %v", err)
	}
	_, err := w.Write([]byte{1})
	var tl *TooLarge
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "more than 4m, the most [container].max_transfer") {
		t.Fatalf("a byte past the limit: %v", err)
	}
	if _, err := w.Write(nil); err == nil || buf.Len() != 4<<20 {
		t.Errorf("a write after: %v, %d bytes kept", err, buf.Len())
	}
	_, err = Limit(&buf, 1000, "/var/x").Write(make([]byte, 1001))
	if err == nil || err.Error() != "it sent more than the 1000 bytes free on the disk holding /var/x (make room there)" {
		t.Errorf("past a disk's free space: %v", err)
	}
}

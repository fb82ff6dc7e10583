package container

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/moby/moby/api/types/system"
	"github.com/moby/moby/client"
)

func TestContextHostReadsTheCurrentContext(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DOCKER_CONFIG", dir)
	t.Setenv("DOCKER_CONTEXT", "")
	if h := contextHost(); h != "" {
		t.Errorf("no config: %q", h)
	}
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"currentContext": "remote"}`), 0o644)
	sum := sha256.Sum256([]byte("remote"))
	meta := filepath.Join(dir, "contexts", "meta", hex.EncodeToString(sum[:]))
	os.MkdirAll(meta, 0o755)
	os.WriteFile(filepath.Join(meta, "meta.json"), []byte(`{"Name":"remote","Endpoints":{"docker":{"Host":"unix:///run/remote.sock"}}}`), 0o644)
	if h := contextHost(); h != "unix:///run/remote.sock" {
		t.Errorf("current context: %q", h)
	}
	t.Setenv("DOCKER_CONTEXT", "default")
	if h := contextHost(); h != "" {
		t.Errorf("DOCKER_CONTEXT=default: %q", h)
	}
}

func TestEngineName(t *testing.T) {
	for _, c := range []struct {
		want string
		v    client.ServerVersionResult
	}{
		{"Docker Engine", client.ServerVersionResult{Components: []system.ComponentVersion{{Name: "Engine"}, {Name: "containerd"}}}},
		{"Docker Engine - Community", client.ServerVersionResult{Platform: client.PlatformInfo{Name: "Docker Engine - Community"},
			Components: []system.ComponentVersion{{Name: "Engine"}}}},
		{"Podman Engine", client.ServerVersionResult{Platform: client.PlatformInfo{Name: "linux/amd64/debian-12"},
			Components: []system.ComponentVersion{{Name: "Podman Engine"}, {Name: "Conmon"}}}},
	} {
		if got := engineName(c.v); got != c.want {
			t.Errorf("engineName(%+v) = %q, want %q", c.v, got, c.want)
		}
	}
}

package container

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/system"
	"github.com/moby/moby/client"
	"github.com/moby/moby/client/pkg/jsonmessage"
)

func TestFindEndpointReadsTheCurrentContext(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DOCKER_CONFIG", dir)
	t.Setenv("DOCKER_CONTEXT", "")
	t.Setenv("DOCKER_HOST", "")
	if ep, err := FindEndpoint(); err != nil || ep.Name != "" {
		t.Errorf("no config: %+v, %v", ep, err)
	}
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"currentContext": "remote"}`), 0o644)
	if _, err := FindEndpoint(); err == nil || !strings.Contains(err.Error(), `no Docker context "remote"`) {
		t.Errorf("a current context that is not there: %v", err)
	}
	writeContext(t, dir, "remote", `{"Name":"remote","Endpoints":{"docker":{"Host":"unix:///run/remote.sock"}}}`)
	if ep, err := FindEndpoint(); err != nil || ep.Host != "unix:///run/remote.sock" || ep.Name != "remote" || ep.TLS != nil {
		t.Errorf("current context: %+v, %v", ep, err)
	}
	t.Setenv("DOCKER_CONTEXT", "default")
	if ep, err := FindEndpoint(); err != nil || ep.Host == "unix:///run/remote.sock" {
		t.Errorf("DOCKER_CONTEXT=default: %+v, %v", ep, err)
	}
	t.Setenv("DOCKER_HOST", "tcp://127.0.0.1:1")
	if ep, err := FindEndpoint(); err != nil || ep.Host != "tcp://127.0.0.1:1" {
		t.Errorf("DOCKER_HOST first: %+v, %v", ep, err)
	}
}

// writeContext writes a Docker context's meta.json where the Docker CLI
// keeps it, and returns its TLS directory (not made).
func writeContext(t *testing.T, dir, name, meta string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:])
	metaDir := filepath.Join(dir, "contexts", "meta", id)
	if err := os.MkdirAll(metaDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(metaDir, "meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "contexts", "tls", id, "docker")
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

func TestPodmanHostFindsTheUsersSocket(t *testing.T) {
	if isSocket(dockerSocket) {
		t.Skip("Docker's default socket is here: podman's are not looked for")
	}
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", dir)
	if h := podmanHost(); h != "" && h != "unix:///run/podman/podman.sock" {
		t.Errorf("no podman socket of the user's: %q", h)
	}
	sock := filepath.Join(dir, "podman", "podman.sock")
	os.MkdirAll(filepath.Dir(sock), 0o755)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	want := "unix://" + sock
	if os.Getuid() == 0 && isSocket("/run/podman/podman.sock") {
		want = "unix:///run/podman/podman.sock" // root's own comes first
	}
	if h := podmanHost(); h != want {
		t.Errorf("podmanHost = %q, want %s", h, want)
	}
}

// TestPullMessages checks the pull's rendering where the output is no
// terminal (a log, a pipe): each layer's changes of state, no progress
// bars; and that the engine's error ends the pull.
func TestPullMessages(t *testing.T) {
	stream := `{"status":"Pulling from library/x","id":"1.0"}
{"status":"Downloading","progressDetail":{"current":10,"total":100},"progress":"[=>   ]","id":"abc"}
{"status":"Download complete","id":"abc"}
{"status":"Digest: sha256:0123"}
`
	var out strings.Builder
	if err := jsonmessage.DisplayStream(strings.NewReader(stream), &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "abc: Download complete\n") || strings.Contains(got, "[=>") {
		t.Errorf("rendered:\n%s", got)
	}
	err := jsonmessage.DisplayStream(strings.NewReader(`{"errorDetail":{"message":"pull access denied"},"error":"pull access denied"}`+"\n"), &out)
	if err == nil || !strings.Contains(err.Error(), "pull access denied") {
		t.Errorf("an error message: %v", err)
	}
}

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// testRegistryImage is the one image the scripts' registry holds, under
// any name: its manifest, and its blobs (the config and one layer) by
// digest.
type testRegistryImage struct {
	manifest []byte
	digest   string // the manifest's
	blobs    map[string][]byte
}

// registryImage builds a registry's image: Debian's static busybox as
// /bin/busybox, with sh, sleep, echo and cat linked to it, an open /tmp,
// and /etc/made-for holding madeFor, so that each script's image (and
// its layer) is new to the engine and pulled whole.
func registryImage(madeFor string) (*testRegistryImage, error) {
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		return nil, err
	}
	program, err := os.ReadFile(busybox)
	if err != nil {
		return nil, err
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	tw.WriteHeader(&tar.Header{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777})
	tw.WriteHeader(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(program))})
	tw.Write(program)
	for _, applet := range []string{"sh", "sleep", "echo", "cat"} {
		tw.WriteHeader(&tar.Header{Name: "bin/" + applet, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777})
	}
	tw.WriteHeader(&tar.Header{Name: "etc/made-for", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(madeFor))})
	tw.Write([]byte(madeFor))
	if err := tw.Close(); err != nil {
		return nil, err
	}
	var compressed bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&compressed, gzip.BestSpeed)
	zw.Write(layer.Bytes())
	if err := zw.Close(); err != nil {
		return nil, err
	}
	config, _ := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH, "os": "linux",
		"config":  map[string]any{"Cmd": []string{"sh"}},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{digestOf(layer.Bytes())}},
		"history": []map[string]string{{"created_by": "git-apex's tests"}},
	})
	img := &testRegistryImage{blobs: map[string][]byte{digestOf(config): config, digestOf(compressed.Bytes()): compressed.Bytes()}}
	img.manifest, _ = json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     manifestType,
		"config":        map[string]any{"mediaType": "application/vnd.docker.container.image.v1+json", "size": len(config), "digest": digestOf(config)},
		"layers": []map[string]any{{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip",
			"size": compressed.Len(), "digest": digestOf(compressed.Bytes())}},
	})
	img.digest = digestOf(img.manifest)
	return img, nil
}

const manifestType = "application/vnd.docker.distribution.manifest.v2+json"

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

var registryPath = regexp.MustCompile(`^/v2/(.+)/(manifests|blobs)/([^/]+)$`)

// cmdRegistry serves, for this script, a registry (the distribution API,
// over plain HTTP on a free loopback port, which engines allow for
// 127.0.0.0/8) that asks every request for USER:PASSWORD (HTTP Basic)
// and holds registryImage under any name and tag. It sets REGISTRY to
// its host:port, and removes the images pulled from it when the script
// ends:
//
//	registry apex:s3cret
func cmdRegistry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 || !strings.Contains(args[0], ":") {
		ts.Fatalf("usage: registry USER:PASSWORD")
	}
	user, password, _ := strings.Cut(args[0], ":")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	addr := l.Addr().String()
	img, err := registryImage(ts.Getenv("WORK") + " " + addr)
	ts.Check(err)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="git-apex test registry"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`))
			return
		}
		if r.URL.Path == "/v2/" {
			w.Write([]byte("{}"))
			return
		}
		m := registryPath.FindStringSubmatch(r.URL.Path)
		var body []byte
		switch {
		case m == nil:
		case m[2] == "manifests":
			body = img.manifest
			w.Header().Set("Content-Type", manifestType)
			w.Header().Set("Docker-Content-Digest", img.digest)
		default:
			body = img.blobs[m[3]]
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Docker-Content-Digest", m[3])
		}
		if body == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if r.Method != http.MethodHead {
			w.Write(body)
		}
	})
	server := &http.Server{Handler: handler}
	go server.Serve(l)
	ts.Defer(func() {
		server.Close()
		engine := engineAt(ts.Getenv("DOCKER_HOST"))
		engine.removeContainers(ts.Getenv("WORK"))
		out, _ := engine.docker("image", "ls", "--format", "{{.Repository}}:{{.Tag}}").Output()
		for _, name := range strings.Fields(string(out)) {
			if strings.HasPrefix(name, addr+"/") {
				engine.docker("rmi", "-f", name).Run()
			}
		}
	})
	ts.Setenv("REGISTRY", addr)
}

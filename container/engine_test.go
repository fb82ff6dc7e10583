package container

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestContextTLS connects through a context whose engine asks for a
// client certificate signed by its own authority: with the context's TLS
// material the engine answers; with the client certificate gone it
// refuses, and so does a context trusting another authority.
func TestContextTLS(t *testing.T) {
	ca, caKey := newCert(t, nil, nil, "apex test CA")
	serverCert, serverKey := newCert(t, ca, caKey, "127.0.0.1")
	clientCert, clientKey := newCert(t, ca, caKey, "apex client")
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	engine := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		if strings.HasSuffix(r.URL.Path, "/version") {
			w.Write([]byte(`{"Version":"99.1","ApiVersion":"1.41","Components":[{"Name":"Engine","Version":"99.1"}]}`))
		}
	}))
	engine.TLS = &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{serverCert.Raw}, PrivateKey: serverKey}},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
	}
	engine.StartTLS()
	defer engine.Close()

	dir := t.TempDir()
	t.Setenv("DOCKER_CONFIG", dir)
	t.Setenv("DOCKER_HOST", "")
	t.Setenv("DOCKER_CERT_PATH", "")
	t.Setenv("DOCKER_CONTEXT", "secure")
	host := "tcp://" + strings.TrimPrefix(engine.URL, "https://")
	tlsDir := writeContext(t, dir, "secure", `{"Name":"secure","Endpoints":{"docker":{"Host":"`+host+`"}}}`)
	writePEM(t, filepath.Join(tlsDir, "ca.pem"), "CERTIFICATE", ca.Raw)
	writePEM(t, filepath.Join(tlsDir, "cert.pem"), "CERTIFICATE", clientCert.Raw)
	der, err := x509.MarshalECPrivateKey(clientKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(tlsDir, "key.pem"), "EC PRIVATE KEY", der)

	version := func() (string, error) {
		ep, err := FindEndpoint()
		if err != nil {
			return "", err
		}
		rt, err := Connect(ep)
		if err != nil {
			return "", err
		}
		defer rt.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return rt.Version(ctx)
	}
	if v, err := version(); err != nil || v != "Docker Engine 99.1" {
		t.Fatalf("with the context's TLS material: %q, %v", v, err)
	}

	// Recorded, the engine is reached again through the context's TLS
	// material whatever DOCKER_HOST and DOCKER_CONTEXT say later.
	ep, err := FindEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONTEXT", "")
	t.Setenv("DOCKER_HOST", "unix:///nowhere/docker.sock")
	again, err := Recorded(ep.Record())
	if err != nil || again.Address() != host || again.String() != host+" (context secure)" {
		t.Fatalf("recorded %s: %v, %v", ep.Record(), again, err)
	}
	if rt, v, err := Reach(context.Background(), again, 10*time.Second); err != nil || v != "Docker Engine 99.1" {
		t.Fatalf("the recorded engine: %q, %v", v, err)
	} else {
		rt.Close()
	}

	// The same material named by DOCKER_HOST, DOCKER_CERT_PATH and
	// DOCKER_TLS_VERIFY: recorded, it is found again with those unset.
	t.Setenv("DOCKER_HOST", host)
	t.Setenv("DOCKER_CERT_PATH", tlsDir)
	t.Setenv("DOCKER_TLS_VERIFY", "1")
	if v, err := version(); err != nil || v != "Docker Engine 99.1" {
		t.Fatalf("with DOCKER_CERT_PATH: %q, %v", v, err)
	}
	ep, err = FindEndpoint()
	if err != nil || ep.TLSDir != tlsDir || ep.SkipVerify {
		t.Fatalf("DOCKER_CERT_PATH endpoint: %+v, %v", ep, err)
	}
	t.Setenv("DOCKER_HOST", "unix:///nowhere/docker.sock")
	t.Setenv("DOCKER_CERT_PATH", "")
	t.Setenv("DOCKER_TLS_VERIFY", "")
	again, err = Recorded(ep.Record())
	if err != nil {
		t.Fatal(err)
	}
	if rt, v, err := Reach(context.Background(), again, 10*time.Second); err != nil || v != "Docker Engine 99.1" {
		t.Fatalf("the engine recorded from DOCKER_CERT_PATH: %q, %v", v, err)
	} else {
		rt.Close()
	}
	t.Setenv("DOCKER_CONTEXT", "secure")
	t.Setenv("DOCKER_HOST", "")
	os.Remove(filepath.Join(tlsDir, "cert.pem"))
	if v, err := version(); err == nil {
		t.Errorf("without a client certificate the engine answered %q", v)
	}
	other, _ := newCert(t, nil, nil, "another CA")
	writePEM(t, filepath.Join(tlsDir, "ca.pem"), "CERTIFICATE", other.Raw)
	if v, err := version(); err == nil {
		t.Errorf("trusting another authority, the engine answered %q", v)
	}
}

// TestRecordDefaultSocket records Docker's default socket by its path,
// and refuses a record it cannot read.
func TestRecordDefaultSocket(t *testing.T) {
	ep, err := Recorded(Endpoint{}.Record())
	if err != nil || ep.Host != "unix://"+dockerSocket || ep.TLS != nil {
		t.Fatalf("default socket recorded: %+v, %v", ep, err)
	}
	if _, err := Recorded("nonsense"); err == nil {
		t.Fatal("an unreadable record was read")
	}
	if EngineName("") != "" || EngineName(Endpoint{Host: "tcp://h:1", Name: "x"}.Record()) != "tcp://h:1 (context x)" {
		t.Fatal("EngineName")
	}
}

// newCert makes a certificate for name: an authority's when parent is
// nil, else one parent signs, valid for name as an IP address when it
// is one.
func newCert(t *testing.T, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	} else {
		signer, signerKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestEndpointLocal(t *testing.T) {
	for host, want := range map[string]bool{
		"":                              true,
		"unix:///var/run/docker.sock":   true,
		"tcp://127.0.0.1:2375":          true,
		"tcp://localhost:2375":          true,
		"tcp://[::1]:2375":              true,
		"ssh://me@127.0.0.1:2222":       true,
		"tcp://192.0.2.7:2376":          false,
		"ssh://builder@ci.example.com":  false,
		"tcp://docker.example.com:2376": false,
	} {
		if got := (Endpoint{Host: host}).Local(); got != want {
			t.Errorf("Endpoint{Host: %q}.Local() = %v, want %v", host, got, want)
		}
	}
}

func TestEndpointRootless(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "engine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ep := Endpoint{Host: "unix://" + sock}
	if got, want := ep.Rootless(), os.Getuid() != 0; got != want {
		t.Errorf("a socket of uid %d: Rootless() = %v, want %v", os.Getuid(), got, want)
	}
	if os.Getuid() == 0 {
		if err := os.Lchown(sock, 4321, 4321); err != nil {
			t.Fatal(err)
		}
		if !ep.Rootless() {
			t.Error("a socket of uid 4321: Rootless() = false, want true")
		}
	}
	for _, host := range []string{"tcp://127.0.0.1:2375", "ssh://me@127.0.0.1", "unix://" + sock + ".missing"} {
		if (Endpoint{Host: host}).Rootless() {
			t.Errorf("Endpoint{Host: %q}.Rootless() = true, want false", host)
		}
	}
}

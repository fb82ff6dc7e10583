package container

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/distribution/reference"
	"github.com/moby/moby/api/types/registry"

	"github.com/git-apex/git-apex/hostexec"
)

// dockerHubKey is the key the Docker CLI's config files Docker Hub's
// credentials under.
const dockerHubKey = "https://index.docker.io/v1/"

// registryAuth is the X-Registry-Auth value for pulling image: the
// credentials the Docker CLI's config.json holds for the image's
// registry, from the registry's credential helper (credHelpers), else
// the config's store (credsStore), else its auths entry. "" when it has
// none, as for a public image.
func registryAuth(ctx context.Context, image string) (string, error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", fmt.Errorf("image %q: %v", image, err)
	}
	server := reference.Domain(named)
	if server == "docker.io" {
		server = dockerHubKey
	}
	cfg, err := readCLIConfig()
	if err != nil {
		return "", err
	}
	var auth registry.AuthConfig
	if helper := cfg.CredHelpers[server]; helper != "" {
		auth, err = fromHelper(ctx, helper, server)
	} else if cfg.CredsStore != "" {
		auth, err = fromHelper(ctx, cfg.CredsStore, server)
	} else {
		auth, err = fromAuths(cfg.Auths, server)
	}
	if err != nil {
		return "", fmt.Errorf("the credentials for %s in %s: %w", server, filepath.Join(configDir(), "config.json"), err)
	}
	if auth == (registry.AuthConfig{}) {
		return "", nil
	}
	auth.ServerAddress = server
	encoded, err := json.Marshal(auth)
	return base64.URLEncoding.EncodeToString(encoded), err
}

// fromAuths is the auths entry for server: keyed by the bare host, or
// by a URL of it ("https://host/v1/"), with "auth" the base64 of
// user:password.
func fromAuths(auths map[string]registry.AuthConfig, server string) (registry.AuthConfig, error) {
	for key, auth := range auths {
		if key != server && hostOf(key) != hostOf(server) {
			continue
		}
		if auth.Auth != "" {
			decoded, err := base64.StdEncoding.DecodeString(auth.Auth)
			if err != nil {
				return registry.AuthConfig{}, fmt.Errorf("its auth is not base64: %v", err)
			}
			user, password, ok := strings.Cut(string(decoded), ":")
			if !ok {
				return registry.AuthConfig{}, errors.New("its auth is not user:password")
			}
			auth.Username, auth.Password = user, password
		}
		return registry.AuthConfig{Username: auth.Username, Password: auth.Password, IdentityToken: auth.IdentityToken}, nil
	}
	return registry.AuthConfig{}, nil
}

// hostOf is the host of a registry key: "host" of "https://host/v1/".
func hostOf(key string) string {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	host, _, _ := strings.Cut(key, "/")
	return host
}

// fromHelper asks the Docker credential helper docker-credential-<name>
// for server's credentials (`get`, the server on its input). A helper
// that has none answers so and exits 1: no credentials, not an error.
func fromHelper(ctx context.Context, name, server string) (registry.AuthConfig, error) {
	var out, stderr bytes.Buffer
	program := "docker-credential-" + name
	code, err := hostexec.Run(ctx, hostexec.Command{
		Argv: []string{program, "get"}, Stdin: strings.NewReader(server),
		Stdout: &out, Stderr: &stderr, Timeout: time.Minute,
	})
	if err != nil {
		return registry.AuthConfig{}, fmt.Errorf("cannot run %s: %v", program, err)
	}
	if code != 0 {
		if strings.Contains(out.String()+stderr.String(), "credentials not found") {
			return registry.AuthConfig{}, nil
		}
		return registry.AuthConfig{}, fmt.Errorf("%s exited %d: %s", program, code, strings.TrimSpace(out.String()+stderr.String()))
	}
	var answer struct{ Username, Secret string }
	if err := json.Unmarshal(out.Bytes(), &answer); err != nil {
		return registry.AuthConfig{}, fmt.Errorf("%s answered no JSON: %v", program, err)
	}
	if answer.Username == "<token>" {
		return registry.AuthConfig{IdentityToken: answer.Secret}, nil
	}
	return registry.AuthConfig{Username: answer.Username, Password: answer.Secret}, nil
}

//go:build engine

package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/api"
	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/mcptools"
)

// The engine build (-tags engine, installed as git-apex-engine) is the
// whole command line with the servers in it: the HTTP API and MCP, with
// the packages they need (an HTTP server, the MCP SDK) that every other
// command would otherwise pay to start. git-apex runs it for serve and mcp.

func serveAction(c *cli.Context) error {
	hostexec.DieWithGit()
	if _, err := cmdline.Positional(c, 0, 0, "no arguments"); err != nil {
		return err
	}
	opts := api.Options{Socket: c.String("socket"), Listen: c.String("listen"), AllowClone: c.Bool("allow-clone"),
		MaxRunning: c.Int("max-running"), TLSCert: c.String("tls-cert"), TLSKey: c.String("tls-key"),
		TokenFile: c.String("token-file"), Repo: repoOptions(c), Log: c.App.ErrWriter}
	if c.Bool("print-token") {
		token, err := api.Token(opts.TokenFile)
		if err != nil {
			return err
		}
		return printLine(c, token)
	}
	if _, err := gitx.Open(c.Context, "."); err == nil || len(c.StringSlice("repo")) == 0 {
		opts.Repos = append(opts.Repos, ".")
	}
	opts.Repos = append(opts.Repos, c.StringSlice("repo")...)
	return api.Serve(c.Context, opts)
}

func mcpAction(c *cli.Context) error {
	hostexec.DieWithGit()
	if _, err := cmdline.Positional(c, 0, 0, "no arguments"); err != nil {
		return err
	}
	// Outside a repository and with no --repo, the client's roots are served.
	opts := mcptools.Options{Version: cmdline.Version(version), Repo: repoOptions(c), Repos: c.StringSlice("repo")}
	if _, err := gitx.Open(c.Context, "."); err == nil {
		opts.Repos = append([]string{"."}, opts.Repos...)
	}
	return mcptools.Serve(c.Context, opts, os.Stdin, os.Stdout)
}

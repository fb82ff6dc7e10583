package main

import (
	"github.com/urfave/cli/v2"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "serve the HTTP/JSON API for orchestrators",
		UsageText: "git apex serve [--socket PATH | --listen 127.0.0.1:PORT] [--repo DIR]... [flags]\ngit apex serve --print-token",
		Description: "Serves the repository of the current directory (when it is in one) and every --repo, until SIGINT or " +
			"SIGTERM: then it stops accepting, lets requests in flight finish, stops running commands (TERM, then KILL) and " +
			"marks their workflows failed. It listens on a unix socket, mode 0600 (default $XDG_RUNTIME_DIR/git-apex/api.sock, " +
			"else $XDG_STATE_HOME/git-apex/api.sock), or with --listen on a loopback TCP address, where every request but " +
			"GET /healthz needs the bearer token kept in $XDG_STATE_HOME/git-apex/token (made on first use; --print-token " +
			"prints it). GET /api/openapi.json describes the endpoints; the README shows them with curl.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "socket", Usage: "listen on the unix socket `PATH`"},
			&cli.StringFlag{Name: "listen", Usage: "listen on TCP `HOST:PORT` (loopback unless TLS is given) instead of a socket"},
			&cli.StringSliceFlag{Name: "repo", Usage: "serve the repository at `DIR` too (repeatable)"},
			&cli.BoolFlag{Name: "allow-clone", Usage: "let a request name its repository by URL; it is cloned once, under the git directory"},
			&cli.IntFlag{Name: "max-running", Usage: "run at most `N` workflows' commands at once (default: the number of CPUs)"},
			&cli.StringFlag{Name: "tls-cert", Usage: "serve TLS with the certificate in `FILE`"},
			&cli.StringFlag{Name: "tls-key", Usage: "serve TLS with the key in `FILE`"},
			&cli.StringFlag{Name: "token-file", Usage: "keep the bearer token in `FILE`"},
			&cli.BoolFlag{Name: "print-token", Usage: "print the bearer token (making it if need be) and exit"},
		},
		Action: serveAction,
	}
}

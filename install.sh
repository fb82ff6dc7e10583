#!/bin/sh
# Builds git-apex and installs it with its man page and shell completion:
#   $PREFIX/bin/git-apex
#   $PREFIX/bin/git-apex-engine                           (serve and mcp run it)
#   $PREFIX/share/man/man1/git-apex.1
#   $PREFIX/share/bash-completion/completions/git-apex   (bash, also for `git apex`)
#   $PREFIX/share/zsh/site-functions/_git-apex           (zsh)
#   $PREFIX/share/fish/vendor_conf.d/git-apex.fish       (fish)
# PREFIX defaults to $HOME/.local. Safe to run again: it replaces them.
# `./install.sh --uninstall` removes exactly these files.
set -eu

PREFIX=${PREFIX:-$HOME/.local}
cd "$(dirname "$0")"

bin=$PREFIX/bin/git-apex
engine=$PREFIX/bin/git-apex-engine
man=$PREFIX/share/man/man1/git-apex.1
bash_completion=$PREFIX/share/bash-completion/completions/git-apex
zsh_completion=$PREFIX/share/zsh/site-functions/_git-apex
fish_completion=$PREFIX/share/fish/vendor_conf.d/git-apex.fish

case "${1-}" in
--uninstall)
	for f in "$bin" "$engine" "$man" "$bash_completion" "$zsh_completion" "$fish_completion"; do
		if [ -e "$f" ]; then
			rm -f "$f"
			echo "removed $f" >&2
		fi
	done
	exit 0
	;;
"") ;;
*)
	echo "install.sh: unknown argument $1: run ./install.sh to install, ./install.sh --uninstall to remove" >&2
	exit 2
	;;
esac

missing=""
for tool in go gcc git; do
	command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
	echo "install.sh: missing:$missing" >&2
	echo "install.sh: git-apex needs Go (https://go.dev/dl), gcc (cgo builds its SQLite driver) and git; install them and run ./install.sh again" >&2
	exit 1
fi

version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

echo "building git-apex $version (the first build compiles SQLite and takes about a minute)" >&2
# The installed binary leaves out urfave/cli's man page generator (it costs
# half a millisecond at every start); a build with it writes the page.
CGO_ENABLED=1 go build -tags urfave_cli_no_docs -ldflags "-X main.version=$version" -o "$build/git-apex" ./cmd/git-apex
# The engine build has the HTTP API and MCP servers; the everyday binary
# leaves them out and runs the engine for serve and mcp.
CGO_ENABLED=1 go build -tags "urfave_cli_no_docs engine" -ldflags "-X main.version=$version" -o "$build/git-apex-engine" ./cmd/git-apex
CGO_ENABLED=1 go build -o "$build/git-apex-man" ./cmd/git-apex
"$build/git-apex-man" man > "$build/git-apex.1"

for f in "$bin" "$engine" "$man" "$bash_completion" "$zsh_completion" "$fish_completion"; do
	mkdir -p "$(dirname "$f")"
done
cp "$build/git-apex-engine" "$engine.new" && mv -f "$engine.new" "$engine"
cp "$build/git-apex" "$bin.new" && mv -f "$bin.new" "$bin"
cp "$build/git-apex.1" "$man"
"$build/git-apex" completion bash > "$bash_completion"
"$build/git-apex" completion zsh > "$zsh_completion"
"$build/git-apex" completion fish > "$fish_completion"
echo "installed $bin, $engine, its man page and completion for bash, zsh and fish under $PREFIX/share" >&2

case ":$PATH:" in
*":$PREFIX/bin:"*) ;;
*) echo "note: $PREFIX/bin is not on your PATH; add it so that \`git apex\` finds git-apex:" >&2
   echo "  export PATH=\"$PREFIX/bin:\$PATH\"" >&2 ;;
esac
if [ "$PREFIX" != "$HOME/.local" ] && [ "$PREFIX" != /usr ] && [ "$PREFIX" != /usr/local ]; then
	echo "note: shells may not look under $PREFIX/share; see \`git apex completion -h\` to load completion by hand" >&2
fi
echo "note: zsh looks in \$fpath: add $PREFIX/share/zsh/site-functions to it before compinit if it is not there" >&2

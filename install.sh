#!/bin/sh
# Builds git-apex and installs it with its man page:
#   $PREFIX/bin/git-apex and $PREFIX/share/man/man1/git-apex.1
# PREFIX defaults to $HOME/.local. Safe to run again: it replaces both.
set -eu

PREFIX=${PREFIX:-$HOME/.local}
cd "$(dirname "$0")"

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
CGO_ENABLED=1 go build -o "$build/git-apex-man" ./cmd/git-apex
"$build/git-apex-man" man > "$build/git-apex.1"

mkdir -p "$PREFIX/bin" "$PREFIX/share/man/man1"
cp "$build/git-apex" "$PREFIX/bin/git-apex.new" && mv -f "$PREFIX/bin/git-apex.new" "$PREFIX/bin/git-apex"
cp "$build/git-apex.1" "$PREFIX/share/man/man1/git-apex.1"
echo "installed $PREFIX/bin/git-apex and $PREFIX/share/man/man1/git-apex.1" >&2

case ":$PATH:" in
*":$PREFIX/bin:"*) ;;
*) echo "note: $PREFIX/bin is not on your PATH; add it so that \`git apex\` finds git-apex:" >&2
   echo "  export PATH=\"$PREFIX/bin:\$PATH\"" >&2 ;;
esac

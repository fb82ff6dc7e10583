#!/bin/sh
# Builds the image the container tests use, with no registry: a rootfs of
# Debian's static busybox and the host's git with its libraries, imported
# with `docker import`. Usage: build-image.sh [TAG] (default apex-test:latest).
set -eu
tag=${1:-apex-test:latest}
root=$(mktemp -d)
chmod 755 "$root" # mktemp made it 0700, which rootless podman keeps as the image's /
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/usr/bin" "$root/tmp" "$root/etc" "$root/root"
chmod 1777 "$root/tmp"
busybox=$(command -v busybox)
cp "$busybox" "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
cp /usr/bin/git "$root/usr/bin/git"
for lib in $(ldd /usr/bin/git | grep -o '/[^ ]*'); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
printf 'root:x:0:0:root:/root:/bin/sh\napex:x:1000:1000:apex:/tmp:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\napex:x:1000:\n' > "$root/etc/group"
tar -C "$root" -c . | docker import - "$tag" >/dev/null
echo "built $tag"

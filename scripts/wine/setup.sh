#!/usr/bin/env bash
# setup.sh: make a Wine prefix in which a2a-courier's windows/amd64 test
# binaries and release binary run (see docs/windows.md).
#
# - installs Debian's wine, wine64 and gcc-mingw-w64-x86-64-win32 with apt
#   when they are missing and this runs as root (otherwise says what to
#   install and stops);
# - creates the prefix ($A2A_WINE_CACHE/prefix, see env.sh);
# - builds bcryptprimitives/bcryptprimitives.c, the stand-in for the
#   bcryptprimitives.dll Wine 8 lacks (every Go 1.24+ program needs its
#   ProcessPrng), and copies it into the prefix's system32;
# - writes the go test -overlay that lets os.RemoveAll work under Wine 8
#   (overlay.sh says why);
# - writes a stamp, so that a second run only checks it: about 0.1 s.
#
# Usage: scripts/wine/setup.sh    (prints the prefix's path last)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=env.sh
. "$here/env.sh"

need_pkgs=()
# Debian's wine is the launcher; wine64 the 64-bit loader it needs here.
command -v wine >/dev/null || need_pkgs+=(wine)
[ -x /usr/lib/wine/wine64 ] || need_pkgs+=(wine64)

dll_src="$here/bcryptprimitives"
dll_sum=$(cat "$dll_src/bcryptprimitives.c" "$dll_src/bcryptprimitives.def" | sha256sum | cut -c1-16)
dll="$a2a_wine_cache/bcryptprimitives-$dll_sum.dll"
[ -f "$dll" ] || command -v x86_64-w64-mingw32-gcc >/dev/null || need_pkgs+=(gcc-mingw-w64-x86-64-win32)

if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "scripts/wine/setup.sh: missing ${need_pkgs[*]}: install them (Debian: apt-get install ${need_pkgs[*]})" >&2
    exit 1
  fi
  echo "installing ${need_pkgs[*]} (apt)" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/tmp/a2a-wine-apt.log 2>&1; then
    # A fresh machine may have no package lists yet.
    apt-get update -qq >/tmp/a2a-wine-apt.log 2>&1
    apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/tmp/a2a-wine-apt.log 2>&1 ||
      { cat /tmp/a2a-wine-apt.log >&2; exit 1; }
  fi
fi

mkdir -p "$a2a_wine_cache"
# One setup at a time: several worktrees (and CI) share the cache.
exec 9>"$a2a_wine_cache/setup.lock"
flock 9

wine_version=$(wine --version)
want="$wine_version dll=$dll_sum"

# The overlay depends on the Go toolchain only, not on the prefix.
"$here/overlay.sh" "$a2a_wine_overlay"

if [ -f "$a2a_wine_stamp" ] && [ "$(cat "$a2a_wine_stamp")" = "$want" ]; then
  echo "$WINEPREFIX"
  exit 0
fi

if [ ! -f "$dll" ]; then
  tmp="$dll.tmp$$"
  x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -Werror -shared -nostdlib -s \
    -Wl,--entry,DllMain -Wl,--no-insert-timestamp \
    -o "$tmp" "$dll_src/bcryptprimitives.c" "$dll_src/bcryptprimitives.def" -ladvapi32 -lkernel32
  mv "$tmp" "$dll"
fi

if [ ! -f "$WINEPREFIX/system.reg" ] || [ ! -d "$WINEPREFIX/drive_c/windows/system32" ]; then
  echo "creating the Wine prefix $WINEPREFIX" >&2
  rm -rf "$WINEPREFIX"
  # wineboot complains that a 64-bit-only prefix has no syswow64
  # rundll32.exe; harmless. Its log is shown only if it fails.
  if ! wineboot --init >"$a2a_wine_cache/wineboot.log" 2>&1; then
    cat "$a2a_wine_cache/wineboot.log" >&2
    exit 1
  fi
fi
wineserver -w # let wineboot finish writing the registry
cp "$dll" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"

# Prove it: a Go program must start in the prefix.
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
cat >"$probe_dir/main.go" <<'EOF'
package main

import (
	"crypto/rand"
	"fmt"
	"os"
)

func main() {
	d, err := os.MkdirTemp("", "a2a-wine-probe")
	if err == nil {
		err = os.WriteFile(d+`\f`, []byte(rand.Text()), 0o600)
	}
	if err == nil {
		err = os.RemoveAll(d)
	}
	if err != nil {
		fmt.Println("probe:", err)
		os.Exit(1)
	}
	fmt.Println("ok")
}
EOF
printf 'module probe\n\ngo 1.24\n' >"$probe_dir/go.mod"
(cd "$probe_dir" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 GOFLAGS= go build -overlay "$a2a_wine_overlay" -o probe.exe .)
a2a_wine_server_up
if ! out=$(wine "$probe_dir/probe.exe" 2>&1) || [ "$out" != ok ]; then
  echo "scripts/wine/setup.sh: a Go program does not run in $WINEPREFIX: $out" >&2
  exit 1
fi

echo "$want" >"$a2a_wine_stamp"
echo "$WINEPREFIX"

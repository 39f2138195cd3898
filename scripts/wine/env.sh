# Sourced by the scripts in scripts/wine: where the Wine test prefix lives
# and how Wine is run. Not executable on its own.
#
# A2A_WINE_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/a2a-courier-wine)
# holds the prefix, the stand-in DLL and the overlay. It is outside the
# repository on purpose: CI runs in a fresh clone each time, and a prefix
# (about 700 MB, 15 s to create) kept beside the clone would be made anew on
# every run; kept here, every clone and worktree on the machine shares one.
# Set A2A_WINE_CACHE to a private directory to get a prefix of your own.

a2a_wine_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
a2a_wine_cache=${A2A_WINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/a2a-courier-wine}

export WINEPREFIX="$a2a_wine_cache/prefix"
# A 64-bit prefix only: Debian's wine64 has no 32-bit half, and Go's
# windows/amd64 binaries need none.
export WINEARCH=win64
# Wine's own diagnostics would mix with the test output (and "fixme:" lines
# are noise for programs that work); WINEDEBUG=... from the caller wins.
export WINEDEBUG=${WINEDEBUG:--all}
# No Mono (mscoree) or Gecko (mshtml): wineboot would offer to download
# them, and nothing here needs .NET or a browser engine.
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=}

# The stamp setup.sh writes once the prefix is complete: the Wine version,
# the hash of the DLL's source and the Go version the overlay is for.
a2a_wine_stamp="$WINEPREFIX/.a2a-courier-ready"
a2a_wine_overlay="$a2a_wine_cache/overlay-$(go env GOVERSION 2>/dev/null || echo nogo).json"

# How long wineserver stays up after its last Windows process exits. Its
# start (with the prefix's services) costs about 1.3 s; kept up, a test
# binary starts in about 0.1 s. Long enough to span a `go test` of several
# packages, short enough not to outlive the run by much.
a2a_wine_linger=${A2A_WINE_LINGER:-30}

# a2a_wine_server_up starts a lingering wineserver for the prefix, and the
# prefix's services with it, unless they are up already. The services
# (services.exe, winedevice.exe, rpcss.exe...) inherit the Unix stdin,
# stdout and stderr of the program whose start boots them, and live as long
# as the wineserver: booted by a test binary, they would hold go test's
# output pipes open for the whole linger (go test then waits 30 s for each
# binary). Booted here, from /dev/null, they hold nothing of the caller's.
a2a_wine_server_up() {
  (
    flock 8
    wineserver -p"$a2a_wine_linger" </dev/null >/dev/null 2>&1 8>&- || true
    # Boot (a new server), or restart the linger of a running one that may
    # be at its end: either way a Windows process has just run from
    # /dev/null, so the server is up for the whole linger with its services
    # holding nothing of the caller's. Without it, a server that ended just
    # after `wineserver -p` found it up was booted again by the test binary,
    # whose services then held go test's pipes (CI: "Test I/O incomplete
    # 1m0s after exiting" on a passing package).
    wine cmd.exe /c exit 0 </dev/null >/dev/null 2>&1 8>&- || true
  ) 8>"$a2a_wine_cache/server.lock"
}

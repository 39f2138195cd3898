#!/usr/bin/env bash
# overlay.sh OUT.json: write a `go build -overlay` file that lets
# os.RemoveAll (and so every t.TempDir cleanup) work under Wine 8, for the
# Wine test runs only.
#
# Why: on Windows, os.RemoveAll deletes each entry with
# internal/syscall/windows.Deleteat, which first asks for POSIX delete
# semantics (NtSetInformationFile, class 64, FileDispositionInformationEx)
# and falls back to the classic FileDispositionInfo when the system answers
# STATUS_INVALID_INFO_CLASS, STATUS_INVALID_PARAMETER or STATUS_NOT_SUPPORTED.
# Wine 8 answers STATUS_NOT_IMPLEMENTED (0xC0000002, "Invalid function"),
# which Go does not take as "unsupported", so the removal fails. Go has no
# GODEBUG for this, the test variable that forces the fallback
# (windows.TestDeleteatFallback) is internal to the standard library, and no
# DLL override can change ntdll's answer.
#
# The overlay is a copy of the toolchain's own at_windows.go with that one
# status added to the fallback's case list. Real Windows (10 1607 and later)
# supports class 64 and never reaches the added case, so the tests' code is
# the same as on Windows; only Wine's removals take the fallback path that
# Go already has for older Windows and for FAT32.
set -euo pipefail
out=${1:?usage: overlay.sh OUT.json}
goroot=$(go env GOROOT)
src="$goroot/src/internal/syscall/windows/at_windows.go"
patched="${out%.json}-at_windows.go"
anchor='	case STATUS_INVALID_INFO_CLASS, // the operating system doesn'"'"'t support FileDispositionInformationEx'

if [ -f "$out" ] && [ -f "$patched" ] && [ "$patched" -nt "$src" ]; then
  exit 0
fi
if [ "$(grep -cxF -- "$anchor" "$src")" != 1 ]; then
  echo "overlay.sh: $src no longer has the line the Wine overlay patches:" >&2
  echo "  $anchor" >&2
  echo "check whether this Go release still needs it (docs/windows.md)" >&2
  exit 1
fi
tmp="$patched.tmp$$"
awk -v anchor="$anchor" '
  { print }
  $0 == anchor { print "\t\tNTStatus(0xC0000002), // STATUS_NOT_IMPLEMENTED: Wine 8 lacks FileDispositionInformationEx (a2a-courier scripts/wine/overlay.sh, tests only)" }
' "$src" >"$tmp"
mv "$tmp" "$patched"
printf '{"Replace":{"%s":"%s"}}\n' "$src" "$patched" >"$out.tmp$$"
mv "$out.tmp$$" "$out"

#!/usr/bin/env bash
# fuzz.sh: run every native Go fuzz target of the module, one after the
# other, each for the same time, with one fuzzing worker.
#
# Targets are the `func FuzzX(f *testing.F)` of the *_fuzz_test.go files.
# Each run starts from the seeds (f.Add and testdata/fuzz/FuzzX/) and the
# local cache of earlier runs ($(go env GOCACHE)/fuzz). A failing input is
# written to <package>/testdata/fuzz/FuzzX/ and printed here, so that a CI
# log keeps it; commit it as a regression seed once the bug is fixed.
#
# Usage: scripts/fuzz.sh                  # 10s per target
#        scripts/fuzz.sh 5m               # 5 minutes per target
#        scripts/fuzz.sh 2m 'SSE|Stream'  # only targets matching a regexp
# Environment: FUZZ_MINIMIZE_TIME (default 5s) bounds the minimisation of
# each new input, which otherwise takes up to a minute of a short run.
# Exit status: 1 if any target failed (all targets run regardless).
set -euo pipefail

fuzztime=${1:-10s}
filter=${2:-.}
minimize=${FUZZ_MINIMIZE_TIME:-5s}
cd "$(dirname "$0")/.."

stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
failed=()
ran=0
while IFS= read -r file; do
	dir=$(dirname "$file")
	for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F).*/\1/p' "$file"); do
		if ! grep -Eq -- "$filter" <<<"$target"; then
			continue
		fi
		ran=$((ran + 1))
		echo "== $target ($dir, $fuzztime)"
		touch "$stamp"
		if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" \
			-parallel 1 -timeout 0 "./$dir"; then
			failed+=("$target")
			while IFS= read -r f; do
				echo "-- failing input $f:"
				cat "$f"
			done < <(find "$dir/testdata/fuzz/$target" -type f -newer "$stamp" 2>/dev/null)
		fi
	done
done < <(git ls-files --cached --others --exclude-standard '*_fuzz_test.go' | sort)

if [[ $ran -eq 0 ]]; then
	echo "no fuzz target matches $filter" >&2
	exit 1
fi
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "all $ran fuzz targets passed ($fuzztime each)"

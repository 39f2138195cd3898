#!/usr/bin/env bash
# bench-show.sh: time and peak memory of `a2a-courier show` on large
# conversations, next to the plain download of the same document with curl.
#
# It builds the binary, starts `a2a-courier dev-server` as a separate process
# seeded (config key `seed`) with conversations of 50 rounds whose tool
# results make them 1, 10 and 100 MiB, then for each size runs curl and show
# RUNS times and reports the medians. Peak RSS is the child's own maximum
# resident set size (wait4 rusage, scripts/peakrss).
#
# Usage: scripts/bench-show.sh            # gzip, as Kibana sends it
#        ENCODINGS="gzip identity" RUNS=7 SIZES="1 10 100" scripts/bench-show.sh
# Output: a Markdown table on stdout; progress on stderr.
set -euo pipefail

RUNS=${RUNS:-5}
SIZES=${SIZES:-"1 10 100"}
ENCODINGS=${ENCODINGS:-gzip}
ROUNDS=${ROUNDS:-50}
KEY=YmVuY2g6YmVuY2gta2V5 # base64 of bench:bench-key

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
server_pid=""
cleanup() {
	if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

command -v curl >/dev/null || { echo "bench-show: curl is needed" >&2; exit 2; }
echo "building…" >&2
(cd "$root" && go build -o "$work/a2a-courier" ./cmd/a2a-courier && go build -o "$work/peakrss" ./scripts/peakrss)

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else printf "%.4f\n", (v[NR/2]+v[NR/2+1])/2}'; }

start_server() { # $1: true to disable gzip
	{
		echo "keys: [{api_key: $KEY, username: bench}]"
		echo "agents: [{id: elastic-ai-agent, name: Elastic AI Agent}]"
		echo "disable_gzip: $1"
		echo "seed:"
		for mb in $SIZES; do
			echo "  - {id: a2a-bench-${mb}mb, rounds: $ROUNDS, bytes: $((mb << 20)), title: Bench $mb MiB}"
		done
	} >"$work/sim.yaml"
	"$work/a2a-courier" dev-server --config "$work/sim.yaml" --addr 127.0.0.1:0 --json >"$work/server.json" 2>"$work/server.err" &
	server_pid=$!
	for _ in $(seq 1 300); do
		if grep -q '"url"' "$work/server.json" 2>/dev/null; then break; fi
		kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err" >&2; exit 1; }
		sleep 0.1
	done
	url=$(sed -n 's/.*"url": *"\([^"]*\)".*/\1/p' "$work/server.json")
	[[ -n $url ]] || { echo "bench-show: the dev-server did not start" >&2; exit 1; }
}

stop_server() {
	kill "$server_pid" 2>/dev/null || true
	wait "$server_pid" 2>/dev/null || true
	server_pid=""
}

echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(free -m | awk '/^Mem:/ {print $2}') MiB RAM, $(go version | cut -d' ' -f3)" >&2
echo
echo "| encoding | document | on the wire | curl download (median) | show (median) | show / curl | show peak RSS (median) | RSS target 1.5×doc+20 MiB |"
echo "|---|---|---|---|---|---|---|---|"
for enc in $ENCODINGS; do
	disable=false
	curl_enc=(--compressed)
	if [[ $enc == identity ]]; then disable=true; curl_enc=(); fi
	start_server "$disable"
	export KIBANA_URL=$url KIBANA_API_KEY=$KEY A2A_COURIER_STATE_DIR=$work/state
	for mb in $SIZES; do
		id=a2a-bench-${mb}mb
		doc_url=$url/api/agent_builder/conversations/$id
		# Warm-up: the simulator renders and compresses a document once.
		curl -sf "${curl_enc[@]}" -H "Authorization: ApiKey $KEY" -o /dev/null "$doc_url"
		"$work/a2a-courier" show "$id" >/dev/null
		size=$(curl -sf -H "Authorization: ApiKey $KEY" "$doc_url" | wc -c)
		wire=$(curl -sf "${curl_enc[@]}" -H "Authorization: ApiKey $KEY" -o /dev/null -w '%{size_download}' "$doc_url")
		: >"$work/curl.txt"
		: >"$work/show.txt"
		: >"$work/rss.txt"
		for _ in $(seq 1 "$RUNS"); do
			# Both commands are timed the same way: the whole process, start-up included.
			"$work/peakrss" "$work/one.txt" curl -sf "${curl_enc[@]}" -H "Authorization: ApiKey $KEY" -o /dev/null "$doc_url"
			read -r wall rss code <"$work/one.txt"
			echo "$wall" >>"$work/curl.txt"
			"$work/peakrss" "$work/one.txt" "$work/a2a-courier" show "$id" >"$work/reply.txt"
			read -r wall rss code <"$work/one.txt"
			[[ $code == 0 ]] || { echo "bench-show: show exited $code" >&2; exit 1; }
			echo "$wall" >>"$work/show.txt"
			echo "$rss" >>"$work/rss.txt"
		done
		[[ $(cat "$work/reply.txt") == "Answer to question $ROUNDS." ]] || { echo "bench-show: unexpected reply" >&2; exit 1; }
		c=$(median <"$work/curl.txt")
		s=$(median <"$work/show.txt")
		r=$(median <"$work/rss.txt")
		echo "  $enc ${mb} MiB: curl $(paste -sd' ' "$work/curl.txt") | show $(paste -sd' ' "$work/show.txt") | rss KiB $(paste -sd' ' "$work/rss.txt")" >&2
		awk -v enc="$enc" -v size="$size" -v wire="$wire" -v c="$c" -v s="$s" -v r="$r" 'BEGIN {
			mib = 1048576; target = 1.5 * size / mib + 20; rss = r / 1024
			printf "| %s | %.1f MiB | %.1f MiB | %.3f s | %.3f s | %.2f× | %.1f MiB | %.1f MiB %s |\n",
				enc, size / mib, wire / mib, c, s, s / c, rss, target, (rss <= target ? "(met)" : "(missed)")
		}'
	done
	stop_server
done

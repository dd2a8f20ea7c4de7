#!/usr/bin/env bash
# Times `paged test` against Debian's `promtool test rules` on the same test
# files in the same run, and prints a Markdown table for RESULTS.md.
#
#   bench/ruletest/bench.sh [ROUNDS]      (default 5; run from anywhere)
#
# Needs /usr/bin/promtool (Debian's prometheus package, 2.42) and the shared
# corpus ($PAGED_SHARED, default ../shared beside the repository).
# Each round runs both tools on each file set, alternating which goes first;
# the table reports the median wall time. paged runs test groups on all
# CPUs by default; the GOMAXPROCS=1 row shows it on one CPU, like promtool.
set -euo pipefail

rounds=${1:-5}
repo=$(cd "$(dirname "$0")/../.." && pwd)
shared=${PAGED_SHARED:-$repo/../shared}
promtool=${PROMTOOL:-/usr/bin/promtool}
[ -x "$promtool" ] || { echo "promtool not found: apt-get install prometheus" >&2; exit 2; }
[ -d "$shared/corpus" ] || { echo "shared corpus not found at $shared (set PAGED_SHARED)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$repo" && go build -o "$tmp/paged" ./cmd/paged)

pt=$shared/corpus/prometheus-prometheus/cmd/promtool/testdata
mx=$shared/corpus/kubernetes-monitoring-kubernetes-mixin/tests

# File sets both tools accept with the same verdict (pass). promtool 2.42
# lacks start_timestamp, fuzzy_compare, --run and the newer histogram
# notation, so the other promtool testdata files are left out.
declare -A sets
sets[promtool-testdata]="$pt/long-period.yml $pt/at-modifier-test.yml $pt/negative-offset-test.yml"
sets[mixin-6-small]="$mx/apiserver-availability-test.yaml $mx/apps_alerts-test.yaml $mx/kube_scheduler-test.yaml $mx/kubelet-test.yaml $mx/resource_alerts-test.yaml $mx/rules-pod-owner-test.yaml"
# Same work for both, different verdicts: 2.42 fails these two (Prometheus 3
# made lookback and range windows left-open); paged passes them.
sets[mixin-2-large]="$mx/absent_alert-test.yaml $mx/tests.yaml"
order=(promtool-testdata mixin-6-small mixin-2-large)

now() { date +%s.%N; }
# timeit OUTVAR CMD...: wall seconds of CMD; exit code in $rc.
timeit() {
	local s e
	s=$(now)
	set +e
	"${@:2}" >/dev/null 2>&1
	rc=$?
	set -e
	e=$(now)
	printf -v "$1" '%s' "$(echo "$e - $s" | bc)"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "| file set | files | promtool 2.42 (s) | exit | paged (s) | exit | paged GOMAXPROCS=1 (s) | ratio promtool/paged | ratio promtool/paged(1 CPU) |"
echo "|---|---|---|---|---|---|---|---|---|"
for name in "${order[@]}"; do
	read -r -a files <<<"${sets[$name]}"
	p=() g=() g1=()
	for ((i = 0; i < rounds; i++)); do
		if ((i % 2 == 0)); then
			timeit t "$promtool" test rules "${files[@]}"; p+=("$t"); prc=$rc
			timeit t "$tmp/paged" test "${files[@]}"; g+=("$t"); grc=$rc
			timeit t env GOMAXPROCS=1 "$tmp/paged" test "${files[@]}"; g1+=("$t")
		else
			timeit t env GOMAXPROCS=1 "$tmp/paged" test "${files[@]}"; g1+=("$t")
			timeit t "$tmp/paged" test "${files[@]}"; g+=("$t"); grc=$rc
			timeit t "$promtool" test rules "${files[@]}"; p+=("$t"); prc=$rc
		fi
	done
	mp=$(median "${p[@]}") mg=$(median "${g[@]}") mg1=$(median "${g1[@]}")
	printf '| %s | %d | %.2f | %d | %.2f | %d | %.2f | %.2f | %.2f |\n' "$name" "${#files[@]}" "$mp" "$prc" "$mg" "$grc" "$mg1" \
		"$(echo "$mp / $mg" | bc -l)" "$(echo "$mp / $mg1" | bc -l)"
done
echo
echo "rounds: $rounds; cpus: $(nproc); load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

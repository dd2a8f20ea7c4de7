#!/usr/bin/env bash
# Re-measures every figure of bench/RESULTS.md, one benchmark after the
# other (never two at once: they share the machine), and keeps each
# benchmark's output in bench/out/all/<name>.txt with the command, the
# start time and the load average before and after.
#
#   bench/run-all.sh [name...]      (default: all of them, about 50 minutes)
#
# Names: embedded notifier e2e engine durable lint ruletest backtest ui chart commit nflog history startup.
# Needs what each benchmark needs (scripts/test.sh installs Prometheus,
# Alertmanager and promtool); lint needs PINT or PINT_SRC (bench/lint.sh);
# embedded compares with a Prometheus 3 built from the module version paged
# uses when PROMETHEUS3 names one (scripts/prometheus3.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out/all
mkdir -p "$out"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/paged" ./cmd/paged

declare -A cmd=(
	[embedded]="go run ./bench/embedded -duration 3m -warmup 30s -paged $bin/paged ${PROMETHEUS3:+-prometheus3 $PROMETHEUS3}"
	[notifier]="go run ./bench/notifier -alerts 2000 -batch 100 -rounds 20"
	[e2e]="go test -tags e2e -count=1 -v -timeout 30m -run TestEndToEnd ./bench/e2e/ -trials 10 -rounds 3"
	[engine]="go test ./bench/engine -run ^\$ -bench 'EngineVsPrometheus|VLLMPack|ActiveAlerts10k|NoSeriesCheck' -benchtime 1x -v -timeout 40m"
	[durable]="PAGED_BENCH_PHASE=60s go test ./bench/engine -run ^\$ -bench DurableState10k -benchtime 1x -v -timeout 25m"
	[lint]="bench/lint.sh 7"
	[startup]="go run ./bench/startup 20"
	[ruletest]="bench/ruletest/bench.sh 3"
	[backtest]="go run ./bench/backtest"
	[ui]="go test ./bench/ui -run ^\$ -bench AlertsPage -benchtime 20x -count 2"
	[chart]="go run ./bench/chart -rounds 5 -n 50"
	[commit]="go test -run ^\$ -bench StateCommit10k -benchtime 50x -count 5 ./engine/"
	[nflog]="go test -run ^\$ -bench NflogDurable -count 2 ./notifier/"
	[history]="go test -run ^\$ -bench 'StateCommit10k|HistoryEvents10k' -benchtime 20x -count 3 ./engine/ && go run ./bench/history"
)
order=(embedded notifier e2e engine durable lint ruletest backtest ui chart commit nflog history startup)
[ $# -gt 0 ] && order=("$@")
for name in "${order[@]}"; do
	c=${cmd[$name]:-}
	[ -n "$c" ] || { echo "unknown benchmark $name" >&2; exit 2; }
	f=$out/$name.txt
	{
		echo "command: $c"
		echo "start: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), commit $(git rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg)"
		echo
	} >"$f"
	echo "== $name: $c" >&2
	start=$(date +%s)
	if ! eval "$c" >>"$f" 2>&1; then
		echo "$name failed; see $f" >&2
	fi
	echo >>"$f"
	echo "end: $(date -u '+%H:%M:%S UTC'), $(($(date +%s) - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$f"
done

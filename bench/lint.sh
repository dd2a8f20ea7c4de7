#!/usr/bin/env bash
# Times `paged lint` (every offline check on), Debian's `promtool check
# rules` and pint (`pint --offline lint`, every offline check on) on the
# same files, in the same run, and prints a Markdown table of wall and CPU
# times with paged's ratio to each.
#
#   bench/lint.sh [runs]        (default 10 runs per command, after 2 warm-ups)
#
# pint: PINT=/path/to/pint, or PINT_SRC=<a git directory of cloudflare/pint>
# (its dependencies come from the Go module proxy; the proxy refuses the
# github.com/cloudflare/pint module itself, so build from a snapshot of the
# repository). Without either, the pint columns are left out.
#
# Needs: go, promtool (apt-get install prometheus), GNU time (/usr/bin/time).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
shared="${PAGED_SHARED:-$here/../shared}"
runs="${1:-10}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

command -v promtool >/dev/null || { echo "promtool not found: apt-get install prometheus" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "GNU time not found: apt-get install time" >&2; exit 2; }
go build -o "$out/paged" "$here/cmd/paged"

pint="${PINT:-}"
if [ -z "$pint" ] && [ -n "${PINT_SRC:-}" ]; then
	mkdir -p "$out/pint-src"
	git -C "$PINT_SRC" archive HEAD | tar -x -C "$out/pint-src"
	(cd "$out/pint-src" && go build -o "$out/pint" ./cmd/pint)
	pint="$out/pint"
	pint_rev="$(git -C "$PINT_SRC" rev-parse --short HEAD)"
fi
pint_rev="${pint_rev:-${PINT_REV:-unknown}}"
# pint needs a config file only to change defaults; an empty one keeps them.
: >"$out/pint.hcl"

# run NAME CMD...: median wall ms and mean CPU (user+system) ms over $runs
# runs after 2 warm-ups; the exit code is ignored (the community files
# have findings).
measure() {
	local walls=() cpus=()
	for i in $(seq 1 $((runs + 2))); do
		/usr/bin/time -f "%e %U %S" -o "$out/t" "$@" >/dev/null 2>&1 || true
		# GNU time puts "Command exited with non-zero status" first.
		read -r e u s < <(tail -n 1 "$out/t")
		if [ "$i" -gt 2 ]; then
			walls+=("$e")
			cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}')")
		fi
	done
	local wall cpu
	wall=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f", m*1000}')
	cpu=$(printf '%s\n' "${cpus[@]}" | awk '{s+=$1} END {printf "%.0f", s/NR*1000}')
	echo "$wall $cpu"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a/b; else printf "-" }'; }

corpus=$(find "$shared/corpus/samber-awesome-prometheus-alerts/dist/rules" -name '*.yml' | sort | tr '\n' ' ')
large="$shared/corpus/prometheus-prometheus/cmd/promtool/testdata/rules_large.yml"
mixins=$(find "$shared/corpus/monitoring-mixins-website/assets" -name '*.yaml' | sort | tr '\n' ' ')
packs=$(find "$here/examples/packs" -name '*.rules.yaml' | sort | tr '\n' ' ')

if [ -n "$pint" ]; then
	echo "| input | files | rules | promtool wall | pint wall | paged wall | paged/pint wall | paged/promtool wall | promtool CPU | pint CPU | paged CPU | paged/pint CPU | paged/promtool CPU |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
else
	echo "| input | files | rules | promtool wall | paged wall | paged/promtool wall | promtool CPU | paged CPU | paged/promtool CPU |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
fi
for spec in "awesome-prometheus-alerts|$corpus" "rules_large.yml (10,000 rules)|$large" "monitoring-mixins|$mixins" "paged packs|$packs"; do
	name="${spec%%|*}"
	files="${spec#*|}"
	[ -n "${files// /}" ] || continue
	nfiles=$(echo $files | wc -w)
	nrules=$(cat $files | grep -cE '^\s*-?\s*(alert|record):' || true)
	# shellcheck disable=SC2086
	read -r pw pc < <(measure promtool check rules $files)
	# shellcheck disable=SC2086
	read -r gw gc < <(measure "$out/paged" lint --format json $files)
	if [ -n "$pint" ]; then
		# shellcheck disable=SC2086
		read -r iw ic < <(measure "$pint" --offline --no-color --config "$out/pint.hcl" lint $files)
		echo "| $name | $nfiles | $nrules | $pw ms | $iw ms | $gw ms | $(ratio "$gw" "$iw") | $(ratio "$gw" "$pw") | $pc ms | $ic ms | $gc ms | $(ratio "$gc" "$ic") | $(ratio "$gc" "$pc") |"
	else
		echo "| $name | $nfiles | $nrules | $pw ms | $gw ms | $(ratio "$gw" "$pw") | $pc ms | $gc ms | $(ratio "$gc" "$pc") |"
	fi
done
echo
echo "$runs runs after 2 warm-ups; wall: median; CPU: mean user+system (GNU time). $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg),"
echo "$(promtool --version 2>&1 | head -1 | cut -d' ' -f1-3), pint $([ -n "$pint" ] && echo "$pint_rev" || echo "not run"), paged $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo dev)."

#!/usr/bin/env bash
# Times `paged lint` (every offline check on) against Debian's
# `promtool check rules` on the same files, in the same run, and prints a
# Markdown table of wall times and the paged/promtool ratio.
#
#   bench/lint.sh [runs]        (default 10 runs per command, after 2 warm-ups)
#
# Needs: go, promtool (apt-get install prometheus), hyperfine (apt-get install hyperfine).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
shared="${PAGED_SHARED:-$here/../shared}"
runs="${1:-10}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

command -v hyperfine >/dev/null || { echo "hyperfine not found: apt-get install hyperfine" >&2; exit 2; }
command -v promtool >/dev/null || { echo "promtool not found: apt-get install prometheus" >&2; exit 2; }
go build -o "$out/paged" "$here/cmd/paged"

# name|files (both tools get the same list; paged's exit code is ignored
# because the community files have findings, as promtool's warnings are)
corpus=$(find "$shared/corpus/samber-awesome-prometheus-alerts/dist/rules" -name '*.yml' | sort | tr '\n' ' ')
large="$shared/corpus/prometheus-prometheus/cmd/promtool/testdata/rules_large.yml"
packs=$(find "$here/examples/packs" -name '*.rules.yaml' | sort | tr '\n' ' ')
mixins=$(find "$shared/corpus/monitoring-mixins-website/assets" -name '*.yaml' | sort | tr '\n' ' ')

echo "| input | files | rules | promtool wall | paged wall | wall ratio | promtool CPU | paged CPU | CPU ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for spec in "awesome-prometheus-alerts|$corpus" "rules_large.yml|$large" "monitoring-mixins|$mixins" "paged packs|$packs"; do
	name="${spec%%|*}"
	files="${spec#*|}"
	[ -n "${files// /}" ] || continue
	nfiles=$(echo $files | wc -w)
	nrules=$(cat $files | grep -cE '^\s*-?\s*(alert|record):' || true)
	hyperfine -N --warmup 2 --runs "$runs" -i --export-json "$out/r.json" \
		-n promtool "promtool check rules $files" \
		-n paged "$out/paged lint --format json $files" >/dev/null 2>&1
	# median wall time, and mean CPU time (user + system) of each command
	awk -v name="$name" -v nf="$nfiles" -v nr="$nrules" '
		/"command": "promtool"/ {c="p"} /"command": "paged"/ {c="g"}
		/"median":/ { gsub(/[",]/,""); w[c]=$2 }
		/"user":/   { gsub(/[",]/,""); u[c]=$2 }
		/"system":/ { gsub(/[",]/,""); s[c]=$2 }
		END {
			pc = u["p"] + s["p"]; gc = u["g"] + s["g"]
			printf "| %s | %d | %d | %.0f ms | %.0f ms | %.2f | %.0f ms | %.0f ms | %.2f |\n", name, nf, nr,
				w["p"]*1000, w["g"]*1000, w["g"]/w["p"], pc*1000, gc*1000, gc/pc
		}' "$out/r.json"
done
echo
echo "hyperfine, $runs runs after 2 warm-ups; wall: median; CPU: mean user+system. $(nproc) cores, $(promtool --version 2>&1 | head -1 | cut -d' ' -f1-3), paged $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo dev)."

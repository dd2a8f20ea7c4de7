#!/usr/bin/env bash
# paged's reliability suite (bench/reliability, docs/reliability.md): real
# processes on loopback, real faults, and the figures they give, printed
# as a table at the end and written as JSON to bench/out/.
#
#   scripts/reliability.sh                 # short form, paged's scenarios (~2 min)
#   scripts/reliability.sh --peers         # and the same scenarios against Prometheus,
#                                          # Alertmanager and vmalert, in the same run
#   scripts/reliability.sh --long --peers  # full durations (~45 min): the figures of
#                                          # docs/reliability.md
#   scripts/reliability.sh --fuzz 30       # and every fuzz target for 30s each
#   scripts/reliability.sh -- -run TestLoad   # arguments after -- go to go test
#
# The short form is what CI runs. Fuzzing runs only when asked for with
# --fuzz, and by default in the long form (30s per target).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"

form=short
peers=0
fuzz=""
gotest=()
while [ $# -gt 0 ]; do
	case "$1" in
	--long) form=long ;;
	--peers) peers=1 ;;
	--fuzz)
		fuzz="${2:?--fuzz needs seconds per target}"
		shift
		;;
	--)
		shift
		gotest=("$@")
		break
		;;
	*)
		echo "usage: $0 [--long] [--peers] [--fuzz SECONDS] [-- go test flags]" >&2
		exit 2
		;;
	esac
	shift
done

need=()
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
if [ "$peers" = 1 ]; then
	command -v prometheus-alertmanager >/dev/null 2>&1 || need+=(prometheus-alertmanager)
	command -v vmalert >/dev/null 2>&1 || need+=(victoria-metrics)
fi
if [ "${#need[@]}" -gt 0 ]; then
	echo "installing Debian packages: ${need[*]}"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

mkdir -p bench/out
out="$here/bench/out/reliability-$form.json"
log="$here/bench/out/reliability-$form.log"
timeout=10m
skip=()
[ "$form" = long ] && timeout=60m
[ "$peers" = 1 ] || skip=(-skip '^TestPeer')

echo "reliability suite, $form form$([ "$peers" = 1 ] && echo ', with the peers'); log in $log"
status=0
PAGED_RELIABILITY="$form" PAGED_RELIABILITY_OUT="$out" \
	go test -tags reliability -count=1 -v -parallel 32 -timeout "$timeout" "${skip[@]}" "${gotest[@]}" ./bench/reliability/ 2>&1 |
	tee "$log" | grep --line-buffered -E '^(--- |    --- |panic:)' || true
grep -q -E '^ok\s' "$log" || status=1

# Fuzzing. scripts/fuzz.sh runs every fuzz target for the given seconds.
[ -z "$fuzz" ] && [ "$form" = long ] && fuzz=30
fuzzed="skipped (--fuzz SECONDS runs every fuzz target)"
if [ -n "$fuzz" ] && [ "$fuzz" != 0 ]; then
	if [ -x scripts/fuzz.sh ]; then
		if scripts/fuzz.sh "$fuzz"; then
			fuzzed="every target ${fuzz}s, no failure"
		else
			fuzzed="FAILED (see above)"
			status=1
		fi
	else
		# HOOK: scripts/fuzz.sh (every fuzz target for N seconds) is not in
		# this checkout; once it is, it runs here.
		fuzzed="scripts/fuzz.sh not found; no fuzzing"
	fi
fi

# The table that TestMain printed.
sed -n '/^reliability figures/,$p' "$log" | grep -v -E '^(ok|FAIL)\s' || true
echo
echo "fuzz: $fuzzed"
echo "log: $log"
exit "$status"

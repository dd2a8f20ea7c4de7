#!/usr/bin/env bash
# Runs every Go fuzz target of the repository, one after another, for the
# given number of seconds each (default 10), and fails when any of them
# finds an input that breaks it. A failing input is written by Go under the
# package's testdata/fuzz/<FuzzName>/: commit it, and it stays a test case
# of the ordinary `go test`.
#
#   scripts/fuzz.sh        # 10s per target
#   scripts/fuzz.sh 300    # 5 minutes per target
#   PAGED_FUZZ_TARGETS='notifier|FuzzLint' scripts/fuzz.sh 3
#                          # only the targets whose "dir name" matches the
#                          # extended regexp (what CI runs)
set -euo pipefail

secs="${1:-10}"
case "$secs" in
'' | *[!0-9]*)
	echo "usage: $0 [seconds per target]" >&2
	exit 2
	;;
esac

here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
export PAGED_SHARED="${PAGED_SHARED:-$here/../shared}"

# Every "func FuzzName(f *testing.F)" in a _test.go file, as "./dir name".
targets="$(grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' . |
	sed -E 's|^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+).*|\1 \2|' | sort -u)"
if [ -n "${PAGED_FUZZ_TARGETS:-}" ]; then
	targets="$(grep -E -- "$PAGED_FUZZ_TARGETS" <<<"$targets" || true)"
fi
if [ -z "$targets" ]; then
	echo "no fuzz targets found${PAGED_FUZZ_TARGETS:+ matching $PAGED_FUZZ_TARGETS}" >&2
	exit 2
fi

failed=()
n=0
while read -r dir name; do
	n=$((n + 1))
	echo "== $dir $name (${secs}s)"
	# A run can end in "context deadline exceeded" when -fuzztime elapses
	# while a worker is still busy, with no failing input: Go's fuzzer, not
	# the target. Such a run is tried once more; a real failure writes its
	# input under testdata/fuzz and fails both times.
	ok=0
	for attempt in 1 2; do
		if out="$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "${secs}s" "$dir" </dev/null 2>&1)"; then
			ok=1
			break
		fi
		if ! grep -q 'context deadline exceeded' <<<"$out" || grep -q 'Failing input written' <<<"$out"; then
			break
		fi
		echo "$out" | tail -3
		echo "(the fuzzer's deadline, no failing input: once more)"
	done
	echo "$out" | tail -5
	[ "$ok" = 1 ] || failed+=("$dir $name")
done <<<"$targets"

if [ "${#failed[@]}" -gt 0 ]; then
	echo
	echo "fuzz: ${#failed[@]} of $n targets failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: all $n targets ran ${secs}s without a failure"

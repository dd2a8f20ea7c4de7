#!/usr/bin/env bash
# Runs the README's "Two commands", taken from the README itself, as a new
# user would: in a fresh clone of this repository's HEAD, with empty Go
# module and build caches (and an empty tools cache), and prints how long
# each took cold.
#
#   scripts/readme-fresh.sh            # both commands
#   scripts/readme-fresh.sh --demo     # only the first (the demo)
#
# The first command must exit 0 after the demo's alerts fired and
# resolved; the second is the test command, which reads the corpus in
# ../shared (PAGED_SHARED), linked beside the clone as CI lays it out.
# Debian packages already installed stay installed: the test command
# installs them only when missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
only_demo=false
[ "${1:-}" = "--demo" ] && only_demo=true
shared="${PAGED_SHARED:-$root/../shared}"

# The fenced block under "## Two commands": one command a line, comments
# after "#" dropped.
mapfile -t cmds < <(awk '
	/^## Two commands/ { in_section = 1; next }
	in_section && /^## / { exit }
	in_section && /^```/ { if (in_block) exit; in_block = 1; next }
	in_block { sub(/[[:space:]]+#.*$/, ""); if ($0 != "") print }
' "$root/README.md")
if [ "${#cmds[@]}" -ne 2 ]; then
	echo "README.md: want two commands under \"## Two commands\", found ${#cmds[@]}" >&2
	exit 2
fi

work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
git clone -q "$root" "$work/paged"
ln -s "$(cd "$shared" && pwd)" "$work/shared"
export GOMODCACHE="$work/gomod" GOCACHE="$work/gocache" PAGED_TOOLS_DIR="$work/tools"
export GOFLAGS="${GOFLAGS:-} -modcacherw"
unset PAGED_SHARED PAGED_PROMTOOL3
echo "fresh clone of $(git -C "$root" rev-parse --short HEAD) in $work/paged; empty GOMODCACHE, GOCACHE and tools; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# run N CMD: runs the README's command N in the clone, prints its time.
run() {
	local n=$1 cmd=$2 log="$work/cmd$1.log" start end status=0
	echo "[$n] $cmd"
	start=$(date +%s)
	(cd "$work/paged" && timeout 3600 bash -c "$cmd") >"$log" 2>&1 || status=$?
	end=$(date +%s)
	printf '[%d] exit %d after %dm%02ds\n' "$n" "$status" $(((end - start) / 60)) $(((end - start) % 60))
	cp "$log" "${TMPDIR:-/tmp}/readme-fresh-cmd$n.log"
	if [ "$status" -ne 0 ]; then
		tail -n 40 "$log" >&2
		echo "[$n] whole output: ${TMPDIR:-/tmp}/readme-fresh-cmd$n.log" >&2
		exit 1
	fi
}

run 1 "${cmds[0]}"
# The demo's promise: the three alerts fired and resolved.
for alert in VLLMKVCacheSaturated VLLMTimeToFirstTokenHigh VLLMHighErrorRate; do
	for state in FIRING RESOLVED; do
		if ! grep -Eq "^[0-9:]+  $state +[a-z]* *$alert" "$work/cmd1.log"; then
			echo "[1] the demo printed no $state line for $alert" >&2
			tail -n 40 "$work/cmd1.log" >&2
			exit 1
		fi
	done
done
echo "[1] the demo's three alerts fired and resolved"
$only_demo && exit 0
run 2 "${cmds[1]}"
grep -E '^(ok|FAIL|---)' "$work/cmd2.log" | tail -n 3 || true

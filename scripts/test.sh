#!/usr/bin/env bash
# The test command of the README: installs what the tests need when it is
# missing (Debian's prometheus and promtool, prometheus-alertmanager and
# amtool, chromium for the backtest report, victoria-metrics for vmalert),
# helm and Prometheus 3's promtool (go.mod's tool lines, scripts/tools.sh),
# points the tests at the shared corpus, runs every Go test beside the
# reliability suite's short form, then (outside CI) the race detector and a
# short fuzzing pass.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"

need=()
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || need+=(prometheus-alertmanager)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v vmalert >/dev/null 2>&1 || need+=(victoria-metrics)
if [ "${#need[@]}" -gt 0 ]; then
	echo "installing Debian packages: ${need[*]}"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

go vet ./...

# Helm (the chart's lint and render test) and Prometheus 3's promtool (the
# judge of the scrape configs whose discovery Debian's promtool 2.42 is
# built without: kubernetes, consul) have no usable Debian package: they
# are tools of paged's module, built after vet so that they reuse the
# Kubernetes and discovery packages it compiled.
want=()
command -v helm >/dev/null 2>&1 || want+=(helm)
[ -n "${PAGED_PROMTOOL3:-}" ] || want+=(promtool)
if [ "${#want[@]}" -gt 0 ]; then
	echo "building ${want[*]} from go.mod's tool lines"
	tools="$(scripts/tools.sh "${want[@]}")"
	export PATH="$tools:$PATH"
	export PAGED_PROMTOOL3="${PAGED_PROMTOOL3:-$tools/promtool3}"
fi

export PAGED_SHARED="${PAGED_SHARED:-$here/../shared}"
if [ ! -d "$PAGED_SHARED" ]; then
	echo "shared corpus not found at $PAGED_SHARED (set PAGED_SHARED)" >&2
	exit 2
fi

if [ $# -gt 0 ]; then
	exec go test -count=1 -timeout 25m "$@" ./...
fi

# The reliability suite's short form, paged and the peers in the same run
# (docs/reliability.md): real processes that mostly wait on each other, so
# it runs beside the package tests instead of after them.
rel_log="$(mktemp)"
scripts/reliability.sh --peers >"$rel_log" 2>&1 &
rel_pid=$!
trap 'kill "$rel_pid" 2>/dev/null || true; rm -f "$rel_log"' EXIT
status=0
# The package tests yield the CPU to the reliability suite beside them:
# its load scenario counts missed evaluations of a real paged, which the
# package tests' own real processes (cmd/paged) would otherwise take.
nice -n 10 go test -count=1 -timeout 25m ./... || status=1
# The paged-full build (-tags paged_all_discovery, every discovery
# mechanism Prometheus has, Kubernetes's included; the container image's):
# it registers exactly the mechanisms paged knows of, accepts the scrape
# configs the default build refers to it, and the Helm chart's and the
# image's configurations.
go test -count=1 -tags paged_all_discovery -run 'TestAllDiscoveryKnown|TestScrapeConfigsJudgedAsPromtool|TestScripts/check_config|TestHelmChart|TestDockerfile|TestLoadConfigBadFiles|TestScrapeConfigSecretsRedacted' ./config/ ./cmd/paged/ ./deploy/ || status=1
wait "$rel_pid" || status=1
cat "$rel_log"
[ "$status" -eq 0 ] || exit 1

# The packages whose state is shared between goroutines (evaluation and the
# HTTP API, the notification pipeline, gossip) once more under the race
# detector, and the fuzz targets of the inputs a user or a peer hands paged
# (rules, templates, paged.yaml, API bodies, state files, the Slack and
# webhook renderers), a few seconds each. Both compile the whole dependency
# graph once more (instrumented), which on a cold two-core machine is 11
# and 13 minutes: CI, which starts cold and has 20, leaves them to this
# command run outside CI (or to PAGED_CI_FULL=1). The fuzz targets' seed
# corpora ran above, as tests.
if [ -n "${CI:-}" ] && [ -z "${PAGED_CI_FULL:-}" ]; then
	echo "CI: race and fuzz passes not run (cold build; scripts/test.sh outside CI, or PAGED_CI_FULL=1, runs them)"
	exit 0
fi
go test -race -count=1 ./engine/ ./notifier/ ./server/ ./web/
PAGED_FUZZ_TARGETS='rules FuzzLint|engine FuzzExpandTemplate|engine FuzzDecodeState|config FuzzParseConfig|notifier Fuzz(APIBodies|RenderSlack|WebhookPayload)|durable FuzzReplay' \
	scripts/fuzz.sh 3

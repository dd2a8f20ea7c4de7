#!/usr/bin/env bash
# The test command of the README: installs what the tests need when it is
# missing (Debian's prometheus and promtool, prometheus-alertmanager and
# amtool, chromium for the backtest report, victoria-metrics for vmalert),
# helm (from its Go module) and Prometheus 3's promtool (scripts/promtool3.sh),
# points the tests at the shared corpus, runs every Go test, then the
# reliability suite's short form and a short fuzzing pass.
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

# Helm for the chart's lint and render test (no Debian package): built
# from its Go module, once.
if ! command -v helm >/dev/null 2>&1; then
	echo "installing helm from its Go module"
	go install helm.sh/helm/v3/cmd/helm@v3.22.0
	export PATH="$(go env GOPATH)/bin:$PATH"
fi
# Prometheus 3's promtool, the judge of the scrape configs whose discovery
# Debian's promtool 2.42 is built without (kubernetes, consul).
export PAGED_PROMTOOL3="${PAGED_PROMTOOL3:-$(scripts/promtool3.sh)}"

export PAGED_SHARED="${PAGED_SHARED:-$here/../shared}"
if [ ! -d "$PAGED_SHARED" ]; then
	echo "shared corpus not found at $PAGED_SHARED (set PAGED_SHARED)" >&2
	exit 2
fi

go vet ./...
go test -count=1 "$@" ./...
# The packages whose state is shared between goroutines (evaluation and the
# HTTP API, the notification pipeline, gossip) once more under the race
# detector.
if [ $# -eq 0 ]; then
	go test -race -count=1 ./engine/ ./notifier/ ./server/

	# The reliability suite's short form, paged and the peers in the same
	# run (docs/reliability.md), and the fuzz targets of the inputs a user
	# or a peer hands paged (rules, templates, paged.yaml, API bodies,
	# state files, the Slack and webhook renderers), a few seconds each.
	PAGED_FUZZ_TARGETS='rules FuzzLint|engine FuzzExpandTemplate|engine FuzzDecodeState|server FuzzParseConfig|notifier Fuzz(APIBodies|RenderSlack|WebhookPayload)|durable FuzzReplay' \
		scripts/reliability.sh --peers --fuzz 3
fi

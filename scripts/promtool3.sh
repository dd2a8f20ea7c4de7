#!/bin/sh
# Builds Prometheus 3's promtool (the version paged embeds) into $1
# (default: $HOME/.cache/paged/promtool3), for the scrape-config parity
# test of the discovery mechanisms Debian's promtool 2.42 is built without
# (kubernetes, consul, linode, nomad):
#   PAGED_PROMTOOL3=$(scripts/promtool3.sh) go test ./server/ -run TestScrapeConfigsJudgedAsPromtool
set -eu
out=${1:-$HOME/.cache/paged/promtool3}
version=$(cd "$(dirname "$0")/.." && go list -m -f '{{.Version}}' github.com/prometheus/prometheus)
if [ -x "$out" ]; then echo "$out"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$(dirname "$out")"
(cd "$tmp" && go mod init promtool3 >/dev/null 2>&1 &&
	GOFLAGS=-mod=mod go get "github.com/prometheus/prometheus/cmd/promtool@$version" >/dev/null 2>&1 &&
	go build -o "$out" github.com/prometheus/prometheus/cmd/promtool) >&2
echo "$out"

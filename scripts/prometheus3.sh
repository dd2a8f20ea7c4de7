#!/bin/sh
# Builds Prometheus from the module version paged uses (Prometheus 3, every
# discovery mechanism linked, as upstream releases it) into $1 (default:
# $HOME/.cache/paged/prometheus3), for bench/embedded's -prometheus3 peer:
#   PROMETHEUS3=$(scripts/prometheus3.sh) bench/run-all.sh embedded
# The web UI's assets are not in the module: the binary serves the API only.
set -eu
out=${1:-$HOME/.cache/paged/prometheus3}
version=$(cd "$(dirname "$0")/.." && go list -m -f '{{.Version}}' github.com/prometheus/prometheus)
if [ -x "$out" ]; then echo "$out"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$(dirname "$out")"
(cd "$tmp" && go mod init prometheus3 >/dev/null 2>&1 &&
	GOFLAGS=-mod=mod go get "github.com/prometheus/prometheus/cmd/prometheus@$version" >/dev/null 2>&1 &&
	go build -o "$out" github.com/prometheus/prometheus/cmd/prometheus) >&2
echo "$out"

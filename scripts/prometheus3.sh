#!/bin/sh
# Builds a command of Prometheus 3 from the module version paged uses
# (every discovery mechanism linked, as upstream releases it):
#   scripts/prometheus3.sh [prometheus|promtool] [OUT]
# OUT defaults to $HOME/.cache/paged/<command>3; the path is printed.
#   PROMETHEUS3=$(scripts/prometheus3.sh) bench/run-all.sh embedded
# The web UI's assets are not in the module: prometheus serves the API only.
set -eu
cmd=${1:-prometheus}
case $cmd in prometheus | promtool) ;; *) echo "usage: $0 [prometheus|promtool] [OUT]" >&2; exit 2 ;; esac
out=${2:-$HOME/.cache/paged/${cmd}3}
version=$(cd "$(dirname "$0")/.." && go list -m -f '{{.Version}}' github.com/prometheus/prometheus)
if [ -x "$out" ]; then echo "$out"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$(dirname "$out")"
(cd "$tmp" && go mod init "${cmd}3" >/dev/null 2>&1 &&
	GOFLAGS=-mod=mod go get "github.com/prometheus/prometheus/cmd/$cmd@$version" >/dev/null 2>&1 &&
	go build -o "$out" "github.com/prometheus/prometheus/cmd/$cmd") >&2
echo "$out"

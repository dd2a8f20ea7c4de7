#!/bin/sh
# Prints the path of a command of Prometheus 3 at the module version paged
# embeds (every discovery mechanism linked, as upstream releases it),
# building it first with scripts/tools.sh:
#   scripts/prometheus3.sh [prometheus|promtool]
#   PROMETHEUS3=$(scripts/prometheus3.sh) bench/run-all.sh embedded
# The web UI's assets are not in the module: prometheus serves the API only.
set -eu
cmd=${1:-prometheus}
case $cmd in prometheus | promtool) ;; *) echo "usage: $0 [prometheus|promtool]" >&2; exit 2 ;; esac
echo "$("$(dirname "$0")/tools.sh" "$cmd")/${cmd}3"

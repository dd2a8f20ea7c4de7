#!/bin/sh
# Prints the path of Prometheus 3's promtool (the version paged embeds),
# building it first, for the scrape-config parity test of the discovery
# mechanisms Debian's promtool 2.42 is built without (kubernetes, consul,
# linode, nomad):
#   PAGED_PROMTOOL3=$(scripts/promtool3.sh) go test ./config/ -run TestScrapeConfigsJudgedAsPromtool
exec "$(dirname "$0")/prometheus3.sh" promtool

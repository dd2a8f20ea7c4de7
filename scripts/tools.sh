#!/bin/sh
# Builds the programs the tests and benchmarks run that Debian does not
# package (or packages too old), at the versions go.mod's tool lines pin,
# inside paged's own module so that they share its build cache (helm and
# Prometheus link the same Kubernetes and discovery packages paged does):
#   scripts/tools.sh helm promtool [prometheus]
# prints the folder that then holds them, $HOME/.cache/paged/tools/<go.sum
# digest>/, as helm, promtool3 and prometheus3 (the suffix keeps Prometheus
# 3's commands apart from Debian's promtool and prometheus on PATH). A tool
# already built for this go.sum is not built again.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
digest=$(cat "$root/go.mod" "$root/go.sum" | sha256sum | cut -c1-16)
dir=${PAGED_TOOLS_DIR:-$HOME/.cache/paged/tools/$digest}
# name PKG: the file a tool's command is kept as.
name() {
	case $1 in */helm) echo helm ;; *) echo "$(basename "$1")3" ;; esac
}
pkgs=""
for t in "$@"; do
	case $t in
	helm) pkg=helm.sh/helm/v3/cmd/helm ;;
	promtool | prometheus) pkg=github.com/prometheus/prometheus/cmd/$t ;;
	*) echo "usage: $0 helm|promtool|prometheus..." >&2; exit 2 ;;
	esac
	[ -x "$dir/$(name "$pkg")" ] || pkgs="$pkgs $pkg"
done
if [ -n "$pkgs" ]; then
	mkdir -p "$dir"
	tmp=$(mktemp -d "$dir/.build.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# One go build for all of them: the packages they share compile once,
	# on every core.
	(cd "$root" && go build -mod=readonly -o "$tmp/" $pkgs) >&2
	for p in $pkgs; do
		mv "$tmp/$(basename "$p")" "$dir/$(name "$p")"
	done
fi
echo "$dir"

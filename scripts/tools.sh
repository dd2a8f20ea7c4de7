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
pkgs=""
names=""
for t in "$@"; do
	case $t in
	helm) pkg=helm.sh/helm/v3/cmd/helm name=helm ;;
	promtool | prometheus) pkg=github.com/prometheus/prometheus/cmd/$t name=${t}3 ;;
	*) echo "usage: $0 helm|promtool|prometheus..." >&2; exit 2 ;;
	esac
	[ -x "$dir/$name" ] && continue
	pkgs="$pkgs $pkg"
	names="$names $name"
done
if [ -n "$pkgs" ]; then
	mkdir -p "$dir"
	tmp=$(mktemp -d "$dir/.build.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# One go build for all of them: the packages they share compile once,
	# on every core.
	(cd "$root" && go build -mod=readonly -o "$tmp/" $pkgs) >&2
	for p in $pkgs; do
		b=$(basename "$p")
		case $b in helm) n=helm ;; *) n=${b}3 ;; esac
		mv "$tmp/$b" "$dir/$n"
	done
fi
echo "$dir"

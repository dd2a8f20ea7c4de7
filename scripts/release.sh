#!/usr/bin/env bash
# Release builds: static paged binaries for linux and darwin, amd64 and
# arm64, with the version stamped (paged version prints it), and their
# SHA-256 sums. Two archives per platform:
#   paged-VERSION-OS-ARCH       the default build: Kubernetes, file, HTTP,
#                               DNS and Consul discovery
#   paged-full-VERSION-OS-ARCH  -tags paged_all_discovery: every discovery
#                               mechanism Prometheus has (EC2, Azure, GCE...),
#                               with the cloud SDKs' start-up cost
# Both hold a binary named paged (docs/embedded.md says which to take).
#
#   scripts/release.sh [VERSION] [OUTDIR]     # default: git describe, dist/
#   FLAVOURS=default scripts/release.sh       # only the default archives
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
out=${2:-dist}
mkdir -p "$out"
for flavour in ${FLAVOURS:-default full}; do
	case $flavour in
	default) prefix=paged tags="" ;;
	full) prefix=paged-full tags=paged_all_discovery ;;
	*) echo "unknown flavour $flavour (default, full)" >&2; exit 2 ;;
	esac
	for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
		os=${target%/*} arch=${target#*/}
		name="$prefix-$version-$os-$arch"
		echo "building $name" >&2
		CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -tags "$tags" \
			-ldflags "-s -w -X main.version=$version" -o "$out/$name/paged" ./cmd/paged
		cp README.md "$out/$name/"
		tar -C "$out" -czf "$out/$name.tar.gz" "$name"
		rm -rf "${out:?}/$name"
	done
done
(cd "$out" && sha256sum paged-*"$version"-*.tar.gz > "paged-$version.sha256")
ls -l "$out" >&2

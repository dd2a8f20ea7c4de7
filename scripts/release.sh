#!/usr/bin/env bash
# Release builds: static paged binaries for linux and darwin, amd64 and
# arm64, with the version stamped (paged version prints it), and their
# SHA-256 sums.
#
#   scripts/release.sh [VERSION] [OUTDIR]     # default: git describe, dist/
#   GO_TAGS=paged_minimal_discovery scripts/release.sh   # without the cloud SDKs' discovery
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
out=${2:-dist}
mkdir -p "$out"
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
	os=${target%/*} arch=${target#*/}
	name="paged-$version-$os-$arch"
	echo "building $name" >&2
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -tags "${GO_TAGS:-}" \
		-ldflags "-s -w -X main.version=$version" -o "$out/$name/paged" ./cmd/paged
	cp README.md "$out/$name/"
	tar -C "$out" -czf "$out/$name.tar.gz" "$name"
	rm -rf "${out:?}/$name"
done
(cd "$out" && sha256sum paged-"$version"-*.tar.gz > "paged-$version.sha256")
ls -l "$out" >&2

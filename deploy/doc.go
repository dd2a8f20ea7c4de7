// Package deploy holds paged's packaging — the Helm chart (helm/paged),
// the systemd unit (systemd/paged.service) and the container image's
// default configuration (docker/paged.yaml, used by the Dockerfile at the
// repository root) — and the tests that check them with the real tools:
// helm lint and helm template, systemd-analyze verify, docker build.
package deploy

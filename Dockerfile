# syntax=docker/dockerfile:1
# paged's container image: one static binary (the packs and runbooks are
# built into it), a non-root user, state in the /data volume.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t paged .
#   docker run --rm -p 9095:9095 -v paged-data:/data paged
#   docker run --rm -p 9095:9095 paged demo --listen 0.0.0.0:9095
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# The image is paged-full (-tags paged_all_discovery): every discovery
# mechanism Prometheus has, Kubernetes's included, which the Helm chart's
# embedded scraping uses. GO_TAGS="" builds the default binary instead
# (file, HTTP, DNS and Consul discovery; faster start, less memory;
# docs/embedded.md).
ARG GO_TAGS="paged_all_discovery"
RUN CGO_ENABLED=0 go build -trimpath -tags "${GO_TAGS}" -ldflags "-s -w -X main.version=${VERSION}" -o /out/paged ./cmd/paged \
 && mkdir -p /out/data

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/paged /usr/bin/paged
COPY deploy/docker/paged.yaml /etc/paged/paged.yaml
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
VOLUME ["/data"]
WORKDIR /data
EXPOSE 9095 9094
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/bin/paged", "healthcheck", "http://127.0.0.1:9095/-/healthy"]
ENTRYPOINT ["/usr/bin/paged"]
CMD ["run", "--config", "/etc/paged/paged.yaml"]

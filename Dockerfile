# syntax=docker/dockerfile:1
#
# One image with the three VirtFlow binaries in /usr/local/bin:
#   server (default command), worker, nodeagent.
#
#   docker build -t virtflow .      (or make image: stamps the version, see below)
#
# The build context has no .git (.dockerignore), so the version and revision that --version
# and /version show come in as build arguments: make image passes `git describe` and the
# commit; docker compose passes VIRTFLOW_VERSION / VIRTFLOW_REVISION from the environment.
#   docker run -p 8080:8080 -e DATABASE_URL=... -e REDIS_URL=... virtflow

FROM golang:1.26-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0
# Dependencies first, so source edits do not re-download modules.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
ARG REVISION=
RUN go build -trimpath -o /out/ \
      -ldflags="-s -w -X github.com/virtflow/virtflow/internal/platform/version.stampedVersion=${VERSION} -X github.com/virtflow/virtflow/internal/platform/version.stampedRevision=${REVISION}" \
      ./cmd/server ./cmd/worker ./cmd/nodeagent ./cmd/virtflow

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 virtflow \
 && useradd --system --uid 10001 --gid virtflow --home-dir /var/lib/virtflow \
      --shell /usr/sbin/nologin virtflow \
 && install -d -o virtflow -g virtflow /var/lib/virtflow /var/lib/virtflow/images
COPY --from=build /out/ /usr/local/bin/
USER virtflow:virtflow
WORKDIR /var/lib/virtflow
EXPOSE 8080
CMD ["/usr/local/bin/server"]

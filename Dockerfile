# syntax=docker/dockerfile:1
#
# One image with the three VirtFlow binaries in /usr/local/bin:
#   server (default command), worker, nodeagent.
#
#   docker build -t virtflow .
#   docker run -p 8080:8080 -e DATABASE_URL=... -e REDIS_URL=... virtflow

FROM golang:1.26-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0
# Dependencies first, so source edits do not re-download modules.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -trimpath -ldflags='-s -w' -o /out/ ./cmd/server ./cmd/worker ./cmd/nodeagent

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 virtflow \
 && useradd --system --uid 10001 --gid virtflow --home-dir /var/lib/virtflow \
      --shell /usr/sbin/nologin virtflow \
 && install -d -o virtflow -g virtflow /var/lib/virtflow
COPY --from=build /out/ /usr/local/bin/
USER virtflow:virtflow
WORKDIR /var/lib/virtflow
EXPOSE 8080
CMD ["/usr/local/bin/server"]

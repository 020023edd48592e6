# VirtFlow developer targets. CI runs .ci/run, which ends with `make test`.
#
#   make test GOTESTFLAGS='-run TestFoo -v'   extra flags for go test
#   make run ARGS='--addr :9090'              extra arguments for the server
#   make migrations NAME=add_widgets          a migration for ent/schema changes (needs PostgreSQL)

SHELL       := /bin/bash
.SHELLFLAGS := -euo pipefail -c

GO          ?= go
GOTESTFLAGS ?=
ARGS        ?=
BINDIR      := bin
CMDS        := server worker nodeagent

# Version stamping (package internal/platform/version): --version and /version show these. A build
# without .git (a source tarball) passes them in: make build VERSION=v1.2.3 REVISION=<sha>.
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
REVISION    ?= $(shell git rev-parse HEAD 2>/dev/null)
VERSION_PKG := github.com/virtflow/virtflow/internal/platform/version
LDFLAGS     := -X $(VERSION_PKG).stampedVersion=$(VERSION) -X $(VERSION_PKG).stampedRevision=$(REVISION)

# staticcheck, pinned. `go run module@version` fetches and builds exactly this version through
# the module proxy (checked against the checksum database, then cached), so lint needs nothing
# installed beyond Go, and the tool's dependencies stay out of go.mod.
STATICCHECK_VERSION := v0.8.2
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# Go files that gofmt must leave alone: everything except .git, build output,
# data, test fixtures, npm packages and files marked as generated.
GOFMT_FIND  := find . \( -path ./.git -o -path ./bin -o -path ./data -o -path ./artifacts \
                 -o -path ./vendor -o -name node_modules -o -name testdata \) -prune \
                 -o -type f -name '*.go' -print0

.DEFAULT_GOAL := build
.PHONY: build image run demo generate migrations test test-go test-race test-frontend frontend bench lint lint-go lint-frontend clean

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BINDIR)/ $(addprefix ./cmd/,$(CMDS))

# image: the container image, stamped with this checkout's version (the build context has
# no .git, see .dockerignore).
image:
	docker build --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) -t virtflow:$(VERSION) .

run:
	$(GO) run ./cmd/server $(ARGS)

demo:
	$(GO) run ./cmd/server --demo $(ARGS)

generate:
	$(GO) generate ./...

# migrations: write migrations/<timestamp>_$(NAME).sql, the difference between the migration
# files and ent/schema (after `make generate`). It replays the files on a scratch database on
# $$VIRTFLOW_TEST_POSTGRES (default: local PostgreSQL as user postgres) and first recomputes
# store/migrations/atlas.sum, so after a merge of branches that changed ent/schema it is all there is
# to do. The test migrations.TestMigrationsMatchSchema fails in CI while a migration is missing.
migrations:
	@[ -n "$(NAME)" ] || { echo 'usage: make migrations NAME=short_description (lower-case, digits, _)'; exit 2; }
	$(GO) run ./store/migrations/gen -name '$(NAME)'

# test: the whole suite, as CI runs it: Go packages (real PostgreSQL, Redis and libvirtd when
# they run), then the dashboard's unit tests and its end-to-end tests in headless Chromium.
test: test-go test-race test-frontend

test-go:
	$(GO) test -count=1 -p 2 -timeout 15m $(GOTESTFLAGS) ./...

# test-race: the packages where goroutines share state (the GraphQL executor and its caches,
# live status, the placement cache, the viewer cache, the statement cache, the node agent),
# again under the race detector. The agent's guest boots (EndToEnd, the real guests of the
# console and of a restored backup and an image made from a VM: ARealGuest),
# the namespace-built traffic path, the real Prometheus and identity's password hashing are
# left to test-go: under -race they cost minutes and their sharing is across processes. The
# differential test of the executors (graph/difftest) runs its short variant: the queries of
# every client through both executors, then all of them at once.
RACE_PKGS           := ./graph/ ./gateway/livestatus/... ./domain/placement/... ./store/stmtcache/... ./agent/nodeagent/...
RACE_SKIP           := EndToEnd|TestTraffic|ARealGuest|ARealPrometheus
RACE_IDENTITY_TESTS := ViewerCache|Authenticate|Middleware|Websocket|RateLimitParallel
test-race:
	$(GO) test -race -count=1 -p 2 -timeout 15m -skip '$(RACE_SKIP)' $(GOTESTFLAGS) $(RACE_PKGS)
	$(GO) test -race -count=1 -timeout 10m -run '$(RACE_IDENTITY_TESTS)' $(GOTESTFLAGS) ./domain/identity/
	$(GO) test -race -short -count=1 -timeout 10m -run 'TestStockAndRewrittenAgree' $(GOTESTFLAGS) ./graph/difftest/

test-frontend: frontend/node_modules/.package-lock.json
	cd frontend && npm test && npm run e2e

# frontend: rebuild the embedded dashboard (frontend/dist, committed) from frontend/src.
frontend: frontend/node_modules/.package-lock.json
	cd frontend && npm run build

frontend/node_modules/.package-lock.json: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(GOTESTFLAGS) ./...

# lint: what CI requires of every change; fails on any finding. Go: gofmt, a tidy go.mod,
# go vet and staticcheck; generated code (files marked "Code generated ... DO NOT EDIT", e.g.
# ent/ and graph/generated/) is exempt from gofmt and staticcheck, whose findings in such
# files are dropped (staticcheck has no setting for it). Dashboard: ESLint
# (frontend/eslint.config.js).
lint: lint-go lint-frontend

lint-go:
	@echo 'gofmt -l (non-generated files)'
	@unformatted=$$($(GOFMT_FIND) | xargs -0 -r gofmt -l | while IFS= read -r f; do \
		grep -qE '^// Code generated .* DO NOT EDIT\.$$' "$$f" || printf '%s\n' "$$f"; \
	done); \
	if [ -n "$$unformatted" ]; then \
		echo 'These files are not gofmt-ed (run gofmt -w on them):'; \
		printf '  %s\n' $$unformatted; \
		exit 1; \
	fi
	@echo 'go mod tidy -e -diff'
	@$(GO) mod tidy -e -diff || { echo 'go.mod/go.sum are not tidy (diff above): run go mod tidy -e and commit the result'; exit 1; }
	$(GO) vet ./...
	@echo 'staticcheck $(STATICCHECK_VERSION) ./... (findings in generated files dropped)'
	@$(STATICCHECK) -version >/dev/null || { echo 'could not fetch or build staticcheck $(STATICCHECK_VERSION)'; exit 1; }
	@findings=$$({ $(STATICCHECK) ./... 2>&1 || true; } | while IFS= read -r line; do \
		case "$$line" in 'go: downloading '*) continue ;; esac; \
		f=$${line%%:*}; \
		if [ -f "$$f" ] && grep -qE '^// Code generated .* DO NOT EDIT\.$$' "$$f"; then continue; fi; \
		[ "$$line" = 'exit status 1' ] || printf '%s\n' "$$line"; \
	done); \
	if [ -n "$$findings" ]; then printf '%s\n' "$$findings"; exit 1; fi

lint-frontend: frontend/node_modules/.package-lock.json
	cd frontend && npm run lint

clean:
	rm -rf $(BINDIR)/ artifacts/
	rm -f *.test coverage*.out cover.out coverage.html *.coverprofile

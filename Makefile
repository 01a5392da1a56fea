# The two commands: `make run` and `make test`. Both bring up the project's own
# Postgres (with pgvector) and Redis first (deploy/local/stack.sh).
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO ?= go

.PHONY: embed-lexicon check unit clients clients-check run test test-browser docs-screenshots docs-trace-screenshot chromium build stack-up stack-down stack-status vet fmt-check bench-edge bench-search bench-search-text bench-search-users bench-search-users-1m bench-collection bench-purchase bench-warm bench-import clean fuzz lint-go

build:
	$(GO) build -o bin/ ./cmd/...

run: build
	bash deploy/local/run.sh

stack-up:
	bash deploy/local/stack.sh up >/dev/null

stack-down:
	bash deploy/local/stack.sh down

stack-status:
	bash deploy/local/stack.sh status

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Redocly CLI is pinned: its next releases need a newer Node.js than the
# machines have, and a lint that changes under us is no gate.
REDOCLY_CLI ?= @redocly/cli@2.77.0

lint: fmt-check vet lint-go lint-openapi

# golangci-lint at a pinned version (built once into .stack/bin by
# deploy/local/golangci-lint.sh) with .golangci.yml: the import directions of
# the layers (depguard; the rules are in .golangci.yml), unused code, error wrapping (errorlint),
# unchecked errors, staticcheck and gocritic. --allow-parallel-runners: another
# checkout on the same machine may be linting at that moment, and without it
# golangci-lint refuses to start ("parallel golangci-lint is running").
lint-go:
	bash deploy/local/golangci-lint.sh run --allow-parallel-runners ./...

# Lints api/openapi.json with redocly.yaml (errors fail; the accepted
# warnings are listed in .redocly.lint-ignore.yaml).
lint-openapi:
	npx --yes $(REDOCLY_CLI) lint --config redocly.yaml api/openapi.json

# The generated API clients (clients/go, clients/ts), from api/openapi.json
# with pinned generators: `make clients` after the document changes, and
# commit the result. clients-check (part of `make test`, clients/check.sh)
# regenerates into a temporary folder and fails if the committed code differs
# or if a money field is not an exact type.
OAPI_CODEGEN ?= $(GO) run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2
NPM_CI = npm ci --no-audit --no-fund --silent

clients:
	$(OAPI_CODEGEN) -config clients/go/oapi-codegen.yaml api/openapi.json
	cd clients/ts && $(NPM_CI) && npm run --silent generate

# clients/go is a module of its own (the server module's ./... does not
# reach it): it is vetted and its unit tests run here. The server module's
# clients package (go test ./...) installs both clients from an empty
# folder and runs them against a live node.
clients-check:
	OAPI_CODEGEN="$(OAPI_CODEGEN)" bash clients/check.sh
	cd clients/go && $(GO) vet ./... && $(GO) test -count=1 ./...

# Re-vendors the /docs explorer's Swagger UI (see api/docsui/README.md).
SWAGGER_UI_VERSION ?= 5.35.0
swagger-ui:
	tmp="$$(mktemp -d)" && cd "$$tmp" && npm pack --silent swagger-ui-dist@$(SWAGGER_UI_VERSION) >/dev/null && \
	tar xzf swagger-ui-dist-$(SWAGGER_UI_VERSION).tgz && cd package && \
	cp swagger-ui-bundle.js swagger-ui.css favicon-32x32.png LICENSE NOTICE swagger-ui-bundle.js.LICENSE.txt \
	   "$(CURDIR)/api/docsui/swagger-ui/" && rm -rf "$$tmp"

# The browser tests (the dashboard's, the /docs explorer's) drive headless
# Chromium; they skip only where none is installed, so the gate installs it
# from the distribution when it is missing (as root, or with sudo).
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  echo "make: installing chromium for the browser tests"; \
	  if [ "$$(id -u)" -eq 0 ]; then as=; else as=sudo; fi; \
	  $$as apt-get update -qq >/dev/null && \
	  $$as env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; }

# Regenerates the built-in embedder's WordNet table (embed/lexicon, see its
# README) from Debian's wordnet-base, installed here when it is missing (as
# root, or with sudo), and its Moby thesaurus table from the Moby Thesaurus II
# (public domain; the npm package moby, pinned by version and checksum, cached
# outside the checkout). Only needed after changing a generator or the
# vocabulary: the build and the tests read the committed tables. The output
# depends only on WordNet, the Moby file and the vocabulary.
MOBY_VERSION := 1.1.2
MOBY_SHA256 := 68f8b3074d088efe33c1ef8064b76bece39f7774f1718fd7b48125386100b083
MOBY_DIR := $(HOME)/.cache/broll/moby-$(MOBY_VERSION)
embed-lexicon:
	@test -f /usr/share/wordnet/data.noun || { \
	  echo "make: installing wordnet-base for the lexicon generator"; \
	  if [ "$$(id -u)" -eq 0 ]; then as=; else as=sudo; fi; \
	  $$as apt-get update -qq >/dev/null && \
	  $$as env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wordnet-base >/dev/null; }
	@test -f $(MOBY_DIR)/package/words.txt || { \
	  echo "make: fetching the Moby Thesaurus II (npm moby@$(MOBY_VERSION)) for the thesaurus generator"; \
	  mkdir -p $(MOBY_DIR) && cd $(MOBY_DIR) && npm pack --silent moby@$(MOBY_VERSION) >/dev/null && \
	  echo "$(MOBY_SHA256)  moby-$(MOBY_VERSION).tgz" | sha256sum -c --quiet && \
	  tar xzf moby-$(MOBY_VERSION).tgz package/words.txt; }
	BROLL_MOBY=$(MOBY_DIR)/package/words.txt $(GO) generate ./embed

# The fast lane for a first contribution: gofmt, go vet, the linter and the
# tests of every package that needs no outside service (deploy/local/unit-packages.sh
# lists them). No root, no stack, no network once the Go module cache and the
# pinned linter are built (both land outside the checkout's tracked files).
check: fmt-check vet lint-go unit

unit:
	$(GO) test -count=1 $$(bash deploy/local/unit-packages.sh)

test: stack-up chromium fmt-check vet clients-check lint-go
	@if command -v npx >/dev/null 2>&1; then $(MAKE) --no-print-directory lint-openapi; \
	else echo "make test: SKIPPED the OpenAPI lint (npx not found; install Node.js to run make lint-openapi)"; fi
	bash deploy/local/stack.sh gc-test-dbs
	set -a && . .stack/env && set +a && $(GO) test -count=1 -timeout 20m ./...

# Only the browser tests: sign-in to revocation in the dashboard, /docs
# rendering. Screenshots land in .artifacts/screenshots/ (git-ignored).
test-browser: stack-up chromium
	set -a && . .stack/env && set +a && $(GO) test -count=1 -v -run 'TestDashboardInChromium|TestDocsRenderInHeadlessChromium' ./cmd/broll-api ./api

# Refreshes the dashboard screenshots of docs/dashboard.md (docs/dashboard-*.png).
docs-screenshots: stack-up chromium
	set -a && . .stack/env && set +a && BROLL_DASHBOARD_DOCS=1 $(GO) test -count=1 -run TestDashboardInChromium ./cmd/broll-api

# JAEGER_UI: a built jaeger-ui (packages/jaeger-ui/build) of Jaeger's
# version; see docs/operations.md, Traces.
docs-trace-screenshot: stack-up chromium
	@test -n "$(JAEGER_UI)" || { echo "set JAEGER_UI to a built jaeger-ui (docs/operations.md, Traces)"; exit 2; }
	set -a && . .stack/env && set +a && BROLL_JAEGER_UI="$(JAEGER_UI)" $(GO) test -count=1 -run TestTracesInJaeger ./deploy/cluster

clean:
	rm -rf bin

# Explores each fuzz target for FUZZTIME (go test fuzzes one target at a
# time). Not part of `make test`, which runs their seed corpora on every
# run. A failing input is saved under the package's testdata/fuzz/: commit
# it with the fix, and it stays a seed.
FUZZTIME ?= 30s
FUZZFLAGS = -run '^$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
fuzz:
	$(GO) test ./billing $(FUZZFLAGS) -fuzz '^FuzzListParams$$'
	$(GO) test ./catalog/search $(FUZZFLAGS) -fuzz '^FuzzQueryValidate$$'
	$(GO) test ./api $(FUZZFLAGS) -fuzz '^FuzzPurchaseBody$$'
	$(GO) test ./internal/mp4meta $(FUZZFLAGS) -fuzz '^FuzzRead$$'


bench-edge: stack-up
	set -a && . .stack/env && set +a && $(GO) run ./deploy/bench/edge -duration 5s -conns 64

# About 15 minutes: 100k clips, an HNSW build and exact scans to compare with.
bench-search: stack-up
	set -a && . .stack/env && set +a && $(GO) run ./deploy/bench/search -clips 100000 -import 10000 -queries 200

# The same measurement on a real sentence encoder's vectors of the
# benchmark's own clips and queries (deploy/bench/textvectors; the model's
# weights come from npm). Embedding 100,000 texts takes about 20 minutes on
# two cores; the vectors are kept in TEXT_VECTORS and reused when present.
TEXT_VECTORS ?= .artifacts/text-vectors
bench-search-text: stack-up
	@test -s $(TEXT_VECTORS)/model.json || { \
		$(GO) run ./deploy/bench/search -texts $(TEXT_VECTORS) -clips 100000 -queries 200 && \
		cd deploy/bench/textvectors && npm ci --no-audit --no-fund && node embed.js $(abspath $(TEXT_VECTORS)); }
	set -a && . .stack/env && set +a && $(GO) run ./deploy/bench/search -data vectors:$(TEXT_VECTORS) \
		-clips 100000 -import 1000 -queries 200 -ef-search 40,60,80,100,120 $(TEXT_FLAGS)

bench-search-users: stack-up
	set -a && . .stack/env && set +a && $(GO) run ./deploy/bench/search -users -clips 100000 -clients 8 -duration 5s -queries 100

bench-search-users-1m: stack-up
	set -a && . .stack/env && set +a && $(GO) run ./deploy/bench/search -users -clips 1000000 -vectors 100000 -clients 8 -duration 5s -queries 100

# Restarts Postgres (deploy/local/stack.sh restart-postgres): give it a
# stack of its own (BROLL_STACK_DIR; see deploy/bench/warm) and a kept
# catalog (WARM_CATALOG, from `go run ./deploy/bench/search -users -keep` or
# `go run ./deploy/bench/warm -keep` on that stack).
bench-warm:
	@test -n "$(WARM_CATALOG)" || { echo "set WARM_CATALOG to a kept catalog's URL on a stack of the benchmark's own"; exit 2; }
	$(GO) run ./deploy/bench/warm -reuse "$(WARM_CATALOG)"

bench-collection: stack-up
	set -a && . .stack/env && set +a && $(GO) run ./deploy/bench/collection -clips 100000 -items 5000

bench-purchase: stack-up
	set -a && . .stack/env && set +a && $(GO) run ./deploy/bench/purchase -duration 10s -clients 64

# Import to searchable: IMPORT_CLIPS clips (100k) naming IMPORT_DISTINCT
# (200) distinct real MP4 files, through brollctl clips import with the API
# and a worker running (about ten minutes, plus the rendering; see
# docs/performance.md). A shorter run on a busy machine:
# make bench-import IMPORT_CLIPS=10000 IMPORT_DISTINCT=50.
IMPORT_CLIPS ?= 100000
IMPORT_DISTINCT ?= 200
bench-import: stack-up
	set -a && . .stack/env && set +a && $(GO) run ./deploy/bench/import -clips $(IMPORT_CLIPS) -distinct $(IMPORT_DISTINCT)

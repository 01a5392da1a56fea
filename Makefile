# The two commands: `make run` and `make test`. Both bring up the project's own
# Postgres (with pgvector) and Redis first (deploy/local/stack.sh).
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO ?= go

.PHONY: run test build stack-up stack-down stack-status vet fmt-check bench-edge bench-purchase clean

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

test: stack-up fmt-check vet
	bash deploy/local/stack.sh gc-test-dbs
	set -a && . .stack/env && set +a && $(GO) test -count=1 -timeout 20m ./...

clean:
	rm -rf bin

bench-edge: stack-up
	set -a && . .stack/env && set +a && $(GO) run ./deploy/bench/edge -duration 5s -conns 64

bench-purchase: stack-up
	set -a && . .stack/env && set +a && $(GO) run ./deploy/bench/purchase -duration 10s -clients 64

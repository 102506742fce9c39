# Atrium: build, test, demo and benchmark entry points. See README.md.
#
#   make demo    install what is missing, start PostgreSQL and Redis if none
#                run, load the sample database, start Atrium and show a psql
#                session through it (Atrium keeps running; `make stop`)
#   make test    install what is missing, start what is needed, run every test
#
# Everything works as root on a fresh Debian 12 machine and reuses services
# that already run. The deploy/ scripts do the work; this file only orders it.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
export PATH := /usr/local/go/bin:$(PATH)

GO ?= go
BIN := bin/atrium
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
LDFLAGS := -X main.version=$(VERSION)

# The ONNX Runtime library deploy/install.sh puts in the project (cgo loads it
# at run time, so the tests and the binary find it through these).
ORT_LIB := $(CURDIR)/.deps/onnxruntime/lib/libonnxruntime.so
export ATRIUM_ONNXRUNTIME_LIB ?= $(ORT_LIB)

.DEFAULT_GOAL := build
.PHONY: build deps services-status test demo stop bench fmt lint clean distclean help

## build: compile bin/atrium (version from git describe)
build:
	CGO_ENABLED=1 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/atrium
	@echo "built $(BIN) ($(VERSION))"

## deps: install what is missing and start PostgreSQL and Redis if none run
deps:
	deploy/install.sh
	deploy/services.sh start

## services-status: show whether PostgreSQL and Redis answer, and whose they are
services-status:
	deploy/services.sh status

## test: deps, then go vet, every Go test with the race detector, the
## deployment checks (the Dockerfile's build steps as a script, manifests),
## and pgx's own test suite run directly and through Atrium
test: deps
	deploy/validate.sh
	deploy/test.sh
	test/pgx-conformance.sh

## demo: deps, build, sample database, Atrium on 127.0.0.1:6433, psql session
demo: deps build
	deploy/demo.sh start

## stop: stop what the demo started (Atrium; PostgreSQL/Redis only if ours)
stop:
	deploy/demo.sh stop

## bench: run every benchmark under test/bench (each test/bench/NAME/run.sh)
bench: deps build
	@failed=(); \
	for b in test/bench/*/run.sh; do \
		echo "==== $$b"; \
		"$$b" || failed+=("$$b"); \
	done; \
	if [ $${#failed[@]} -gt 0 ]; then echo "benchmarks that failed: $${failed[*]}"; exit 1; fi

## bench-NAME: run one benchmark, e.g. make bench-proxy
bench-%: deps build
	test/bench/$*/run.sh

## fmt: gofmt every Go file
fmt:
	$(GO) fmt ./...

## lint: go vet and a gofmt check
lint:
	$(GO) vet ./...
	@unformatted=$$(find . -name '*.go' -not -path './.deps/*' -not -path './.git/*' -print0 | xargs -0 gofmt -l); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	@echo "lint: ok"

## clean: stop the demo and remove build outputs, logs and benchmark results
clean: stop
	rm -rf bin .run test/bench/results

## distclean: clean, and also remove downloaded dependencies (.deps)
distclean: clean
	rm -rf .deps

## help: list the targets
help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)

# git-apex. `make test` is what CI runs; `./install.sh` (or `make install`)
# installs the binary and its man page under PREFIX (default ~/.local).

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
export CGO_ENABLED := 1

.PHONY: build man test install bench

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/git-apex ./cmd/git-apex

# The man page is generated from the command-line definition.
man: build
	bin/git-apex man > git-apex.1

test:
	$(GO) vet ./...
	@docker image inspect apex-test:latest >/dev/null 2>&1 || \
		echo "make test: no Docker daemon with image apex-test:latest: the container scenarios are SKIPPED (.ci/run starts a daemon and builds the image)"
	$(GO) test ./...

install:
	./install.sh

# Measures git-apex against plain git (BENCHMARKS.md). Never part of test.
bench:
	bench/run

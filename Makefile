# git-apex. `make test` is what CI runs; `./install.sh` (or `make install`)
# installs the binary and its man page under PREFIX (default ~/.local).

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
export CGO_ENABLED := 1

.PHONY: build man test install bench stats

# The binary leaves out urfave/cli's man page generator, which costs half a
# millisecond at every start; `make man` runs it from a build that has it.
# The engine build (serve, mcp) goes beside it.
build:
	$(GO) build -tags urfave_cli_no_docs -ldflags "-X main.version=$(VERSION)" -o bin/git-apex ./cmd/git-apex
	$(GO) build -tags "urfave_cli_no_docs engine" -ldflags "-X main.version=$(VERSION)" -o bin/git-apex-engine ./cmd/git-apex

# The man page is generated from the command-line definition.
man:
	$(GO) run ./cmd/git-apex man > git-apex.1

test:
	$(GO) mod tidy -diff
	$(GO) vet ./...
	$(GO) vet -tags engine ./cmd/git-apex
	@echo "make test: checking that git-apex compiles for macOS"
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet ./...
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet -tags engine ./cmd/git-apex
	@docker image inspect apex-test:latest >/dev/null 2>&1 || \
		echo "make test: no Docker daemon with image apex-test:latest: the container scenarios are SKIPPED (.ci/run starts a daemon and builds the image)"
	@[ -n "$$APEX_TEST_PODMAN_HOST" ] || \
		echo "make test: no podman service (APEX_TEST_PODMAN_HOST): the container scenarios on podman are SKIPPED (.ci/run starts one)"
	$(GO) test -timeout 75m ./...

install:
	./install.sh

# Measures git-apex against plain git (BENCHMARKS.md). Never part of test.
bench:
	bench/run

# Sizes, reported, never gated: lines of Go in each package (tests apart),
# largest first. The rules the house keeps are the layer order and who
# may import what (cmd/git-apex/deps_test.go), not a count.
stats:
	@$(GO) list -f '{{.ImportPath}} {{.Dir}} {{join .GoFiles " "}}' ./... | \
		while read -r pkg dir files; do \
			[ -n "$$files" ] || continue; \
			printf '%6d  %s\n' "$$(cd "$$dir" && cat $$files | wc -l)" "$${pkg#github.com/git-apex/git-apex/}"; \
		done | sort -rn

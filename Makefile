# The one test command (README.md): formatting, vet, the lint of the HTTP
# contract, the Go tests under the race detector, short fuzzing of the
# request decoders, the Python client.
GO ?= go
# The first python3 that has numpy and optuna (the Python client's optional
# tests need them; Debian's python3-numpy and python3-optuna install them for
# /usr/bin/python3, which a pyenv or venv python3 on PATH may shadow), else
# python3, whose tests then skip them (or fail them when CI is set).
PYTHON ?= $(shell for p in python3 /usr/bin/python3; do $$p -c 'import numpy, optuna' >/dev/null 2>&1 && { echo $$p; exit 0; }; done; echo python3)

.PHONY: test fmt-check vet openapi-lint gotest fuzz pytest run bench

test: fmt-check vet openapi-lint gotest fuzz pytest

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Redocly's linter of api/openapi.yaml (rules in redocly.yaml), from npm.
# Without npx it is skipped with a line saying so, except in CI.
REDOCLY = @redocly/cli@2.77.0

openapi-lint:
	@if command -v npx >/dev/null 2>&1; then \
		out=$$(npx --yes $(REDOCLY) lint --format=stylish api/openapi.yaml 2>&1); rc=$$?; \
		printf '%s\n' "$$out" | grep -v '[║╔╚]' | grep -v '^ *$$'; exit $$rc; \
	elif [ -n "$$CI" ]; then echo "openapi-lint: npx not found (CI needs Node.js)"; exit 1; \
	else echo "SKIP openapi-lint: npx not found (install Node.js to lint api/openapi.yaml)"; fi

gotest:
	$(GO) test -race -count=1 ./...

# Every Fuzz target of these packages, a few seconds each. The budget is a
# count of executions, not a duration: Go 1.26's fuzz coordinator can report
# "context deadline exceeded" as a failure when a duration runs out while a
# worker is busy (golang/go#75804, fixed in Go 1.27), which failed CI once.
FUZZ_PKGS = ./internal/cmaes/ ./internal/selfcma/ ./internal/session/ ./internal/httpapi/
FUZZ_TIME ?= 30000x

fuzz:
	@for p in $(FUZZ_PKGS); do \
		[ -d $$p ] || continue; \
		for t in $$($(GO) test -list '^Fuzz' $$p | grep '^Fuzz'); do \
			echo "fuzz $$p $$t"; \
			$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZ_TIME) -fuzzminimizetime 0 $$p || exit 1; \
		done; \
	done

pytest:
	@if [ -d clients/python/tests ]; then cd clients/python && $(PYTHON) -m unittest discover -s tests -v; fi

run:
	$(GO) run ./cmd/server

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...

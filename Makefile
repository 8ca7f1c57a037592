# The one test command (README.md, "The two commands"): formatting, vet,
# staticcheck and gocyclo, the lint of the HTTP contract, the Go tests under
# the race detector, short fuzzing of the request decoders, the Python
# client.
GO ?= go
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
# The first python3 that has numpy and optuna (the Python client's optional
# tests need them; Debian's python3-numpy and python3-optuna install them for
# /usr/bin/python3, which a pyenv or venv python3 on PATH may shadow), else
# python3, whose tests then skip them (or fail them when CI is set).
PYTHON ?= $(shell for p in python3 /usr/bin/python3; do $$p -c 'import numpy, optuna' >/dev/null 2>&1 && { echo $$p; exit 0; }; done; echo python3)

.PHONY: test fmt-check vet lint openapi-lint gotest fuzz pytest run bench

STAGES = fmt-check vet lint openapi-lint gotest fuzz pytest

# Every stage runs, even after one failed. At the end: the tests that were
# skipped, with their reasons (Go's, Python's, a stage's "SKIP" line), and
# the stages that failed; it fails if one did or, when CI is set, if
# anything was skipped (CI must run every test).
test:
	@dir=$$(mktemp -d); trap 'rm -rf "$$dir"' EXIT; failed=(); \
	for s in $(STAGES); do \
		echo "== $$s"; \
		TESTREPORT_SKIPS=$$dir/skips $(MAKE) --no-print-directory $$s 2>&1 | tee "$$dir/$$s.log" || failed+=("$$s"); \
	done; \
	grep -sh '^SKIP ' "$$dir"/*.log >> "$$dir/skips"; \
	grep -sh ' \.\.\. skipped ' "$$dir/pytest.log" | sed 's/^/python /' >> "$$dir/skips"; \
	echo; echo "== summary"; \
	if [ -s "$$dir/skips" ]; then \
		echo "skipped ($$(wc -l < "$$dir/skips")):"; sed 's/^/  /' "$$dir/skips"; \
		if [ -n "$$CI" ]; then failed+=("skipped tests (CI is set: every test must run)"); fi; \
	else echo "skipped: none"; fi; \
	if [ $${#failed[@]} -gt 0 ]; then \
		echo "FAILED stages:"; printf '  %s\n' "$${failed[@]}"; exit 1; \
	fi; \
	echo "all stages passed: $(STAGES)"

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# staticcheck, and gocyclo over 30, pinned in a module of their own
# (internal/tools/lint: its go.mod and go.sum, from the module proxy),
# built into a temporary directory. gocyclo leaves out the tests (a test's
# count is its checks), the LAPACK ports (internal/symeig) and the BBOB
# port (internal/bbob); the functions of internal/tools/lint/gocyclo-allow.txt
# are allowed for now, any other over 30 fails.
LINT_MOD = internal/tools/lint
CYCLO_OVER = 30
CYCLO_IGNORE = _test\.go$$|^internal/(symeig|bbob)/

lint:
	@bin=$$(mktemp -d); trap 'rm -rf "$$bin"' EXIT; \
	$(GO) build -C $(LINT_MOD) -o "$$bin/" honnef.co/go/tools/cmd/staticcheck github.com/fzipp/gocyclo/cmd/gocyclo || exit 1; \
	rc=0; echo "staticcheck ./..."; "$$bin/staticcheck" ./... || rc=1; \
	echo "gocyclo -over $(CYCLO_OVER)"; \
	{ "$$bin/gocyclo" -over $(CYCLO_OVER) -ignore '$(CYCLO_IGNORE)' . || true; } | awk -v allow=$(LINT_MOD)/gocyclo-allow.txt -v over=$(CYCLO_OVER) ' \
		BEGIN { while ((getline l < allow) > 0) if (l !~ /^#/ && split(l, a, " ") == 2) ok[a[1] " " a[2]] = 1 } \
		($$2 " " $$3) in ok { print "allowed for now: " $$0; seen[$$2 " " $$3] = 1; next } \
		{ print "over " over " (split it): " $$0; bad = 1 } \
		END { for (k in ok) if (!(k in seen)) print allow ": " k " is no longer over " over ": remove it"; exit bad }' || rc=1; \
	exit $$rc

# Redocly's linter of api/openapi.yaml (rules in redocly.yaml), from npm.
# Without npx it is skipped with a line saying so, except in CI.
REDOCLY = @redocly/cli@2.77.0

openapi-lint:
	@if command -v npx >/dev/null 2>&1; then \
		out=$$(npx --yes $(REDOCLY) lint --format=stylish api/openapi.yaml 2>&1); rc=$$?; \
		printf '%s\n' "$$out" | grep -v '[║╔╚]' | grep -v '^ *$$'; exit $$rc; \
	elif [ -n "$$CI" ]; then echo "openapi-lint: npx not found (CI needs Node.js)"; exit 1; \
	else echo "SKIP openapi-lint: npx not found (install Node.js to lint api/openapi.yaml)"; fi

# The Go tests, as go test prints them (the output of go test -json, read
# by internal/tools/testreport, which lists the skipped tests at the end, or
# in the file $TESTREPORT_SKIPS for make test's summary). Each package gets
# GOTEST_TIMEOUT rather than go test's 10 minutes, for a busy 2-core
# machine.
#
# cmd/server's end-to-end tests (E2E_TESTS) run the server binary, which
# they build without the race detector: under -race only their harness
# would be slower (TestMemoryBounded writes a 30000-generation session in
# the test process; the package took over 10 minutes under -race on a busy
# 2-core machine). They run in a go test of their own, without -race; the
# rest of cmd/server, in process, with it.
GOTEST_TIMEOUT ?= 30m
GOTEST_PKGS ?= ./...
# Not tests but the writers of the upgrade fixtures, run by hand on the
# commit that made them (-args -write, -args -write-upgrade); anywhere else
# they can only skip, and under CI a skip fails the run.
GOTEST_NOT_TESTS = ^TestWrite([A-Za-z]*Upgrade|Sep|Constrained|Mixed)?Fixtures$$
E2E_PKG = github.com/selfcma/selfcma/cmd/server
E2E_TESTS = ^(TestDamagedCopies|TestEndToEnd.*|TestFullDisk|TestMemoryBounded|TestPostgres.*|TestReadmeSeveralServers|TestDatabase.*|TestStartBeforeDatabase|TestMaxConnections|TestFailover|TestDocsFailover|TestCheckPostgresInUse)$$
GOTEST = $(GO) test -count=1 -timeout $(GOTEST_TIMEOUT) -json

gotest:
	$(GO) build -o /dev/null ./internal/tools/testreport
	@pkgs=$$($(GO) list $(GOTEST_PKGS)) || exit 1; rest=$$(printf '%s\n' $$pkgs | grep -vx '$(E2E_PKG)'); \
	e2e=$$(printf '%s\n' $$pkgs | grep -x '$(E2E_PKG)'); \
	{ rc=0; \
	  if [ -n "$$rest" ]; then echo "go test -race $(GOTEST_PKGS) (but $(E2E_PKG))" >&2; $(GOTEST) -race -skip '$(GOTEST_NOT_TESTS)' $$rest || rc=1; fi; \
	  if [ -n "$$e2e" ]; then \
	    echo "go test -race $$e2e, but the end-to-end tests" >&2; $(GOTEST) -race -skip '$(E2E_TESTS)' $$e2e || rc=1; \
	    echo "go test $$e2e, the end-to-end tests" >&2; $(GOTEST) -run '$(E2E_TESTS)' $$e2e || rc=1; \
	  fi; exit $$rc; } 2>&1 | $(GO) run ./internal/tools/testreport -skips "$$TESTREPORT_SKIPS"

# Every Fuzz target of these packages, a few seconds each. The budget is a
# count of executions, not a duration: Go 1.26's fuzz coordinator can report
# "context deadline exceeded" as a failure when a duration runs out while a
# worker is busy (golang/go#75804, fixed in Go 1.27), which failed CI once.
FUZZ_PKGS = ./internal/enginecodec/ ./internal/session/ ./internal/httpapi/
FUZZ_TIME ?= 30000x

# A target that fails does not stop the others; the failed ones are named
# at the end.
fuzz:
	@failed=(); for p in $(FUZZ_PKGS); do \
		[ -d $$p ] || continue; \
		for t in $$($(GO) test -list '^Fuzz' $$p | grep '^Fuzz'); do \
			echo "fuzz $$p $$t"; \
			$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZ_TIME) -fuzzminimizetime 0 $$p || failed+=("$$p $$t"); \
		done; \
	done; \
	if [ $${#failed[@]} -gt 0 ]; then echo "fuzz targets that failed:"; printf '  %s\n' "$${failed[@]}"; exit 1; fi

pytest:
	@if [ -d clients/python/tests ]; then cd clients/python && $(PYTHON) -m unittest discover -s tests -v; fi

run:
	$(GO) run ./cmd/server

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...

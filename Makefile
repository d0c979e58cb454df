# kasmrt — `make demo` runs the bundled demo, `make test` runs every test,
# `make test-short` the unit and rule layers alone (docs/architecture.md,
# "Test layers"). demo and test install the Debian packages they need
# first (scripts/setup.sh); test-short needs none of them.

GO       ?= go
BIN      := bin/kasmrt
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
REPORTS  ?= reports
# Tests start Xvfb, Chromium and friends; two packages at a time suits a
# two-core machine.
TESTFLAGS ?= -p 2 -timeout 20m

.PHONY: all deps tools tool-actionlint tool-redocly build test test-short demo bench bench-compare fuzz vet mutate mutate-stage clean

all: build

deps:
	@bash scripts/setup.sh

# The ecosystem's own validators, which the tests run on what kasmrt writes
# for other tools: actionlint on the workflows in docs/, @redocly/cli on
# `kasmrt schema api`. Each lands in bin/. One that cannot be fetched
# because its registry is unreachable is left out with a message, and its
# test skips saying so; any other failure to install it fails.
ACTIONLINT_VERSION ?= v1.7.12
ACTIONLINT_MODULE  := github.com/rhysd/actionlint
REDOCLY            ?= @redocly/cli@2.77
TOOLS_NPM          := bin/npm

tools: tool-actionlint tool-redocly

tool-actionlint:
	@mkdir -p bin
	@GOBIN=$(CURDIR)/bin $(GO) install $(ACTIONLINT_MODULE)/cmd/actionlint@$(ACTIONLINT_VERSION) 2>bin/.actionlint.log || { \
		if $(GO) list -m $(ACTIONLINT_MODULE)@$(ACTIONLINT_VERSION) >/dev/null 2>&1; then cat bin/.actionlint.log >&2; exit 1; fi; \
		rm -f bin/actionlint; echo "tools: no actionlint: the Go module proxy is unreachable" >&2; }

tool-redocly:
	@mkdir -p $(TOOLS_NPM)
	@npm ls --prefix $(TOOLS_NPM) $(REDOCLY) >/dev/null 2>&1 || { \
		command -v npm >/dev/null || { echo "tools: no @redocly/cli: npm is not installed" >&2; exit 0; }; \
		npm install --prefix $(TOOLS_NPM) --no-audit --no-fund --silent $(REDOCLY) || { \
			if npm view $(REDOCLY) version >/dev/null 2>&1; then exit 1; fi; \
			rm -rf $(TOOLS_NPM)/node_modules; echo "tools: no @redocly/cli: the npm registry is unreachable" >&2; }; }

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kasmrt
	# The long-lived tesseract next to kasmrt, where drivers/ocr finds it.
	CGO_ENABLED=1 $(GO) build -o bin/kasmrt-ocr ./cmd/kasmrt-ocr

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }

test: deps tools build vet
	$(GO) test $(TESTFLAGS) ./...

# The unit and rule layers, without the integration tests that start Xvfb,
# Chromium, tesseract or an application: they skip under -short
# (internal/testkit's Need). About a minute; none of those programs needed.
test-short:
	$(GO) test -short $(TESTFLAGS) ./...

demo: deps build
	@bash scripts/demo.sh $(BIN) $(REPORTS)

bench: deps build
	$(GO) test -run '^$$' -bench . -benchtime 50x ./drivers/... ./tui/... ./engine/...

# kasmrt side by side with xdotool + scrot + convert, Playwright MCP and
# img2sixel, and a watched run against a headless one, in one run, the two
# tools' samples alternating; prints each part's table as it finishes
# (a failing part says why and the rest go on) and writes the tables into
# docs/benchmarks.md.
bench-compare:
	@bash scripts/bench-compare.sh

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzLoadScenario -fuzztime 30s ./scenarios
	$(GO) test -run '^$$' -fuzz FuzzLoadOperator -fuzztime 30s ./scenarios
	$(GO) test -run '^$$' -fuzz FuzzSecretValue -fuzztime 30s ./engine/report
	$(GO) test -run '^$$' -fuzz FuzzText -fuzztime 30s ./tui/sanitize

# Mutation testing of the engine's rule code against the rule tests on the
# machine double (docs/architecture.md, "Test layers"; every pass's record
# is in docs/dev/mutation.md). The real-session
# tests are left out so a mutant costs seconds, not minutes; the drivers'
# glue and the engine's subpackages are not mutated.
GREMLINS    ?= github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
RULE_TESTS  := ^(TestRules|TestGuardBook|TestInboxUpdateEvents|TestAppDir|TestWebhookNotice|TestModelRequestEventSaysWhy|TestFatalEvidence|TestOutputScanner|TestSecretWords|TestMaskTypedChange|TestZoomCrop|TestPairedSeed|TestManifestIncompleteUntilEnded|TestCheckKeyNames|TestNewRefusesUnknownKeyNames|TestIdentity|TestVersionURL|TestWatchAttached|TestTruncateAndTail|TestParseArgs|TestCanonicalJSON|TestDecideVerdict|TestBuiltin|TestUnimplemented|TestLoopTurns|TestLoopModelFailures|TestLoopBudgets|TestLoopCheckExpectation|TestLoopInbox|TestLoopSteering)
MUTATE_SKIP ?= -E '^(events|model|memory|redact|report|vision|stage)/' -E '^(browser|accessibility|machine|builtins|steer|diagnose|explain)\.go$$'
MUTATE_OUT  ?= $(REPORTS)/mutate.json
# A mutant's tests may run this many times the coverage pass's time before
# gremlins calls it timed out. The rule tests take seconds, so a mutant
# that makes a wait never end is seen in a minute or two, not seven.
MUTATE_TIMEOUT ?= 5
# The stage (engine/stage) has no tests of its own: the engine's rule tests
# exercise it. gremlins pairs a mutant with its own package's tests except
# in integration mode, so mutate-stage runs in that mode, on a snapshot of
# HEAD without the packages above the engine (every mutant would rebuild
# their tests); go test's cache answers for the packages a mutant leaves
# alone.
MUTATE_TREE ?= $(CURDIR)/$(REPORTS)/mutate-tree
STAGE_SKIP  ?= -E '^(events|model|memory|redact|report|vision|internal|testdata)/' -E '^[^/]*\.go$$'

mutate:
	@mkdir -p $(REPORTS)
	GOFLAGS='-run=$(RULE_TESTS) -vet=off -ldflags=-w' $(GO) run $(GREMLINS) unleash --workers 2 --timeout-coefficient $(MUTATE_TIMEOUT) $(MUTATE_SKIP) -o $(MUTATE_OUT) ./engine

mutate-stage:
	@rm -rf $(MUTATE_TREE) && mkdir -p $(MUTATE_TREE)
	git archive HEAD | tar -x -C $(MUTATE_TREE)
	rm -rf $(MUTATE_TREE)/cmd $(MUTATE_TREE)/tui $(MUTATE_TREE)/serve $(MUTATE_TREE)/suite
	cd $(MUTATE_TREE) && GOFLAGS='-run=$(RULE_TESTS) -vet=off -ldflags=-w' $(GO) run $(GREMLINS) unleash -i --coverpkg ./... --workers 2 --timeout-coefficient $(MUTATE_TIMEOUT) $(STAGE_SKIP) -o $(CURDIR)/$(REPORTS)/mutate-stage.json ./engine

clean:
	rm -rf bin $(REPORTS)

# kasmrt — `make demo` runs the bundled demo, `make test` runs the tests.
# Each installs the Debian packages it needs first (scripts/setup.sh).

GO       ?= go
BIN      := bin/kasmrt
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
REPORTS  ?= reports
# Tests start Xvfb, Chromium and friends; two packages at a time suits a
# two-core machine.
TESTFLAGS ?= -p 2 -timeout 20m

.PHONY: all deps build test demo bench bench-compare fuzz vet mutate mutate-stage clean

all: build

deps:
	@bash scripts/setup.sh

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kasmrt
	# The long-lived tesseract next to kasmrt, where drivers/ocr finds it.
	CGO_ENABLED=1 $(GO) build -o bin/kasmrt-ocr ./cmd/kasmrt-ocr

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }

test: deps build vet
	$(GO) test $(TESTFLAGS) ./...

demo: deps build
	@bash scripts/demo.sh $(BIN) $(REPORTS)

bench: deps build
	$(GO) test -run '^$$' -bench . -benchtime 50x ./drivers/... ./tui/... ./engine/...

# kasmrt side by side with xdotool + scrot + convert, Playwright MCP and
# img2sixel, in one run; writes the table into docs/benchmarks.md.
bench-compare:
	@bash scripts/bench-compare.sh

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzLoadScenario -fuzztime 30s ./scenarios
	$(GO) test -run '^$$' -fuzz FuzzLoadOperator -fuzztime 30s ./scenarios
	$(GO) test -run '^$$' -fuzz FuzzSecretValue -fuzztime 30s ./engine/report
	$(GO) test -run '^$$' -fuzz FuzzText -fuzztime 30s ./tui/sanitize

# Mutation testing of the engine's rule code against the rule tests on the
# machine double (docs/architecture.md, "Mutation testing"). The real-session
# tests are left out so a mutant costs seconds, not minutes; the drivers'
# glue and the engine's subpackages are not mutated.
GREMLINS    ?= github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
RULE_TESTS  := ^(TestRules|TestInboxUpdateEvents|TestAppDir|TestWebhookNotice|TestModelRequestEventSaysWhy|TestFatalEvidence|TestOutputScanner|TestSecretWords|TestMaskTypedChange|TestZoomCrop|TestPairedSeed|TestManifestIncompleteUntilEnded|TestCheckKeyNames|TestNewRefusesUnknownKeyNames|TestIdentity|TestVersionURL|TestWatchAttached|TestTruncateAndTail|TestParseArgs|TestCanonicalJSON|TestDecideVerdict|TestBuiltin|TestUnimplemented|TestLoopTurns|TestLoopModelFailures|TestLoopBudgets|TestLoopCheckExpectation|TestLoopInbox|TestLoopSteering)
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

# chromekeeper — `make test` is the one test command (CI runs it via .ci/run).

GO      ?= go
BIN     := bin/chromekeeper
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: build run test vet fmt-check unit e2e bench clean

# The e2e tests start a real Vite dev server, installed from the committed lockfile.
E2E_NODE := e2e/node_modules/.package-lock.json

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/chromekeeper

run: build
	./$(BIN)

# Everything CI runs: formatting, vet, unit tests and e2e tests (real Chromium), all with -race.
test: fmt-check vet $(E2E_NODE)
	$(GO) test -race -count=1 -timeout 12m ./...

$(E2E_NODE): e2e/package.json e2e/package-lock.json
	cd e2e && npm ci --no-audit --no-fund

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

unit:
	$(GO) test -race -count=1 ./browser/... ./session/... ./tools/... ./internal/...

e2e: $(E2E_NODE)
	$(GO) test -race -count=1 ./e2e/...

# Latency and footprint against the real binary; prints a table.
bench: $(E2E_NODE)
	$(GO) test -count=1 -run '^TestBenchmarkTable$$' -v -timeout 20m ./e2e/ -args -bench-table

clean:
	rm -rf bin

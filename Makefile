# Developer shortcuts; CI runs .ci/run (README's test command).
.PHONY: help build test lint fmt bench fuzz

help: ## list the targets
	@grep -E '^[a-z]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

build: ## build ./sentinel
	go build -o sentinel ./cmd/sentinel

test: ## the test suite, as CI runs it
	go test -race -count=1 ./...

lint: ## gofmt, go vet, staticcheck
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -checks 'all,-ST1000,-ST1003,-ST1016,-ST1020,-ST1021,-ST1022' ./...

fmt: ## gofmt the tree
	gofmt -w .

bench: ## the Go benchmarks recorded in BENCHMARKS.md
	go test -run '^$$' -bench 'Pipeline' -benchtime 2000x ./runtime/deliver/
	go test -run '^$$' -bench BenchmarkQuietPoll -benchtime 2s ./providers/localgh/

fuzz: ## each fuzz target for 20 s
	go test -run '^$$' -fuzz '^FuzzParseSubject$$' -fuzztime 20s .
	go test -run '^$$' -fuzz '^FuzzParseEnvelope$$' -fuzztime 20s .
	go test -run '^$$' -fuzz '^FuzzParseInbound$$' -fuzztime 20s ./providers/webhook/
	go test -run '^$$' -fuzz '^FuzzParseInbound$$' -fuzztime 20s ./providers/agentpush/
	go test -run '^$$' -fuzz '^FuzzRenderMessages$$' -fuzztime 20s ./cmd/cli/

# Developer shortcuts; CI runs .ci/run (README's test command).
.PHONY: help build test lint fmt bench fuzz image image-nats up down

help: ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build ./sentinel
	go build -o sentinel ./cmd/sentinel

test: ## the test suite, as CI runs it (the root module, then the GitLab adapter's and e2e/ui's own modules; CI: -json through .ci/testlog.go)
	go test -race -count=1 -timeout 30m -p 4 ./...
	cd adapters/gitlab && go test -race -count=1 ./...
	cd e2e/ui && go test -race -count=1 ./...

lint: ## gofmt, go vet, staticcheck
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)
	go vet ./...
	go vet .ci/testlog.go
	go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -checks 'all,-ST1000,-ST1003,-ST1016,-ST1020,-ST1021,-ST1022' ./...
	cd adapters/gitlab && go vet ./... && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -checks 'all,-ST1000,-ST1003,-ST1016,-ST1020,-ST1021,-ST1022' ./...
	cd e2e/ui && go vet ./... && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -checks 'all,-ST1000,-ST1003,-ST1016,-ST1020,-ST1021,-ST1022' ./...
	go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -checks 'all,-ST1000,-ST1003,-ST1016,-ST1020,-ST1021,-ST1022' .ci/testlog.go

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
	go test -run '^$$' -fuzz '^FuzzMessageLine$$' -fuzztime 20s ./cmd/cli/

# Images are FROM scratch over binaries built here: no registry is needed.
IMAGE      ?= sentinel:dev
NATS_IMAGE ?= sentinel-nats:dev
GOBUILD     = CGO_ENABLED=0 go build -trimpath -ldflags='-s -w'

image: ## build the sentinel:dev image (static binary FROM scratch; see Dockerfile)
	rm -rf bin/image && mkdir -p bin/image/home/data && chmod 0700 bin/image/home/data
	$(GOBUILD) -o bin/image/sentinel ./cmd/sentinel
	docker build -q -t $(IMAGE) -f Dockerfile bin/image

image-nats: ## build sentinel-nats:dev, the nats-server image of deploy/compose.external.yml
	rm -rf bin/image-nats && mkdir -p bin/image-nats/home/data && chmod 0700 bin/image-nats/home/data
	$(GOBUILD) -o bin/image-nats/nats-server github.com/nats-io/nats-server/v2
	$(GOBUILD) -o bin/image-nats/sentinel ./cmd/sentinel
	cp deploy/natsserver/nats.conf bin/image-nats/
	docker build -q -t $(NATS_IMAGE) -f deploy/natsserver/Dockerfile bin/image-nats

up: ## run docker-compose.yml (three nodes), building the image when missing; waits for health
	@docker image inspect $(IMAGE) >/dev/null 2>&1 || $(MAKE) image
	deploy/compose.sh up

down: ## stop docker-compose.yml and remove its volumes
	deploy/compose.sh down

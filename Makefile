# claimcheck — see README.md.
GO        ?= go
BIN       := $(CURDIR)/bin
VERSION   ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/claimcheck/claimcheck/cmd/claimcheck/internal/cli.Version=$(VERSION) -X github.com/claimcheck/claimcheck/cmd/claimcheck-hook/internal/hook.Version=$(VERSION)
# Static binaries: no cgo, so no dynamic loader at start-up (the hook runs on
# every agent event; see docs/performance.md, "Hook start-up").
BUILD     := CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)'
MODULES   := schemas pkg services/ingest services/verifier services/gatekeeper services/rotator cmd/claimcheck-hook cmd/claimcheck deploy
# -race needs cgo; CI machines have gcc. RACE= (empty) runs without it.
RACE      ?= -race
TESTFLAGS ?= -count=1 -timeout 15m

.PHONY: build test unit e2e e2e-agents torture update-clients bench lint fmt-check check-modules manifests clean

# bin/nats-server is the nats-server release claimcheck's modules pin: what a
# cluster runs (deploy/k8s uses the same version) and e2e's cluster test starts.
build:
	@mkdir -p $(BIN)
	$(BUILD) -o $(BIN)/claimcheck ./cmd/claimcheck
	$(BUILD) -tags oneshot_notls -o $(BIN)/claimcheck-hook ./cmd/claimcheck-hook
	$(BUILD) -o $(BIN)/claimcheck-hook-tls ./cmd/claimcheck-hook
	$(BUILD) -o $(BIN)/ingest ./services/ingest/cmd/ingest
	$(BUILD) -o $(BIN)/verifier ./services/verifier/cmd/verifier
	$(BUILD) -o $(BIN)/gatekeeper ./services/gatekeeper/cmd/gatekeeper
	$(BUILD) -o $(BIN)/rotator ./services/rotator/cmd/rotator
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/nats-server github.com/nats-io/nats-server/v2

# The README's test command and what CI runs: workspace shape, formatting,
# every module's unit and integration tests (race detector on), then the
# end-to-end tests against freshly built binaries.
test: check-modules fmt-check lint unit e2e

unit:
	@set -e; for m in $(MODULES); do \
		echo "== go test $$m"; \
		(cd $$m && CGO_ENABLED=1 $(GO) test $(RACE) $(TESTFLAGS) ./...); \
	done
	@echo "== go test -tags oneshot_notls (the lean claimcheck-hook build)"
	cd pkg && CGO_ENABLED=1 $(GO) test $(RACE) $(TESTFLAGS) -tags oneshot_notls ./oneshot/ ./decision/
	cd cmd/claimcheck-hook && CGO_ENABLED=1 $(GO) test $(RACE) $(TESTFLAGS) -tags oneshot_notls ./...
	@echo "== go test tools/cmd/... (make images' ociimage; tools/go.mod, outside the workspace)"
	cd tools && GOWORK=off $(GO) test $(TESTFLAGS) ./cmd/...

# OCI images of the service binaries without a container daemon
# (docs/images.md): one layout bin/images/oci holding claimcheck/<name>:$(VERSION)
# for each, and bin/images/<name>.tar for docker load / podman load. Every
# timestamp is SOURCE_DATE_EPOCH (default: the commit's time), so the same
# binaries give the same digests. ociimage is built from tools/go.mod (outside
# the workspace), which keeps go-containerregistry out of the product modules.
IMAGES            ?= claimcheck ingest verifier gatekeeper rotator
IMAGE_SOURCE      ?= https://github.com/claimcheck/claimcheck
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
.PHONY: images
images: build
	cd tools && GOWORK=off $(GO) build -o $(BIN)/ociimage ./cmd/ociimage
	$(BIN)/ociimage -bin $(BIN) -out $(BIN)/images -names '$(IMAGES)' -version '$(VERSION)' \
		-source '$(IMAGE_SOURCE)' -revision '$(shell git rev-parse HEAD 2>/dev/null)' -epoch '$(SOURCE_DATE_EPOCH)' -arch "$$($(GO) env GOARCH)"

# Every black-box test, e2e/agents (the real agent CLIs) included.
e2e: build
	cd e2e && CLAIMCHECK_BIN=$(BIN) $(GO) test $(TESTFLAGS) ./...

# The torture test (e2e TestTorture; docs/security.md) alone and long:
# TORTURE_DURATION of seeded random faults under a seeded random workload,
# then the oracle. TORTURE_SEED replays a run's schedule; each run's seed,
# fault counts and oracle report are appended to bin/torture.log. make e2e
# runs a short one (45s of faults).
TORTURE_DURATION ?= 30m
TORTURE_SEED     ?=
torture: build
	cd e2e && CLAIMCHECK_BIN=$(BIN) CLAIMCHECK_TORTURE_DURATION=$(TORTURE_DURATION) CLAIMCHECK_TORTURE_SEED=$(TORTURE_SEED) \
		CLAIMCHECK_TORTURE_LOG=$(BIN)/torture.log $(GO) test -count=1 -timeout 0 -v -run '^TestTorture$$' .

# The real agent CLIs pinned in e2e/agents/clients.json against bin/, offline
# in a loopback-only network namespace (docs/agents.md). npm installs each
# client once into $CLAIMCHECK_AGENT_CACHE (default ~/.cache/claimcheck-e2e).
e2e-agents: build
	cd e2e && CLAIMCHECK_BIN=$(BIN) $(GO) test $(TESTFLAGS) ./agents/

# Bumps the pinned clients to npm's newest versions and rewrites their
# contract snapshots from a run of them.
update-clients: build
	./scripts/update-clients.sh
	cd e2e && CLAIMCHECK_BIN=$(BIN) $(GO) test $(TESTFLAGS) ./agents/ -run '^TestClaudeCode$$' -update

# Prints the performance tables (hook latency, ingest throughput, ratios to
# baselines measured in the same run; see docs/performance.md).
# BENCHFLAGS=-quick for a short run.
bench: build
	cd bench && $(GO) run ./cmd/ccbench -bin $(BIN) $(BENCHFLAGS)

# golangci-lint is pinned in tools/go.mod (outside the workspace) and built
# from there; it then runs in workspace mode over every module.
lint:
	@mkdir -p $(BIN)
	cd tools && GOWORK=off $(GO) build -o $(BIN)/golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint
	@set -e; for m in $(MODULES) e2e bench; do echo "== lint $$m"; (cd $$m && $(BIN)/golangci-lint run --config $(CURDIR)/.golangci.yml ./...); done
	@echo "== lint the lean hook build (-tags oneshot_notls)"
	cd pkg && $(BIN)/golangci-lint run --config $(CURDIR)/.golangci.yml --build-tags oneshot_notls ./oneshot/... ./decision/...
	cd cmd/claimcheck-hook && $(BIN)/golangci-lint run --config $(CURDIR)/.golangci.yml --build-tags oneshot_notls ./...

# The Kubernetes manifests (deploy/k8s, docs/deploy.md) as kubectl apply -k
# would send them, one file per overlay, with the claimcheck images pinned to
# the version make images tags ($(VERSION)), under REGISTRY when it is set;
# kustomize is pinned in tools/go.mod.
REGISTRY ?=
manifests:
	@mkdir -p $(BIN)/manifests
	cd tools && GOWORK=off $(GO) build -o $(BIN)/kustomize sigs.k8s.io/kustomize/kustomize/v5
	@set -e; for o in dev prod; do \
		r=$(BIN)/manifests/release-$$o; rm -rf $$r; mkdir -p $$r; \
		printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- %s\nimages:\n' \
			"$$(realpath --relative-to=$$r $(CURDIR)/deploy/k8s/overlays/$$o)" > $$r/kustomization.yaml; \
		for n in $(IMAGES); do \
			printf -- '- name: claimcheck/%s\n  newName: %sclaimcheck/%s\n  newTag: "%s"\n' $$n "$(if $(REGISTRY),$(REGISTRY)/)" $$n "$(VERSION)" \
				>> $$r/kustomization.yaml; \
		done; \
		$(BIN)/kustomize build $$r > $(BIN)/manifests/$$o.yaml; \
		echo "$(BIN)/manifests/$$o.yaml (claimcheck images $(if $(REGISTRY),$(REGISTRY)/)claimcheck/*:$(VERSION))"; \
	done

fmt-check:
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

check-modules:
	./scripts/check-modules.sh

clean:
	rm -rf $(BIN)

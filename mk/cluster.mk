# SPDX-License-Identifier: MIT
# Included by the Makefile (make help lists every target).

.PHONY: go test-go go-check test-cluster test-cluster-long

# ---- idem in Go, and the cluster (doc/cluster.md) ---------------------------
# bindings/go is the Go module github.com/idem-sqlite/idem/bindings/go: a
# cgo package that compiles idem (idem_amalgamation.h, committed) into
# whichever SQLite the binary holds, and the protocol as a library.  It
# builds in module mode with the Go first on PATH (/usr/local/go), its
# modules (go-sqlite3, go-dqlite 1.11, staticcheck) from the module proxy
# that GOPROXY names (the environment's, or Go's default).  Debian gives
# what a module cannot: the C libraries go-dqlite links (libdqlite,
# libraft), SQLite's and xxHash's headers, and iproute2 for the partition
# test.  go-dqlite's cgo flags carry -Wl,-z,now, which go refuses unless
# allowed.  Compiled packages go to Go's build cache (~/.cache/go-build),
# or to build/go where there is no HOME.
CLUSTER      := $(BUILD)/cluster
CLUSTER_PKGS := libdqlite-dev libraft-dev libsqlite3-dev libxxhash-dev iproute2 curl
GO_ENV       := GOFLAGS=-mod=mod CGO_LDFLAGS_ALLOW='-Wl,-z,now' \
                $(if $(HOME),,GOCACHE=$(abspath $(BUILD)/go/cache) GOPATH=$(abspath $(BUILD)/go/path))
GO_SOURCES   := $(wildcard bindings/go/*.go bindings/go/*.c bindings/go/go.* bindings/go/example/*.go)
STATICCHECK  := $(BUILD)/go/bin/staticcheck
STATICCHECK_VERSION := v0.8.2

$(CLUSTER)/.deps: | $(BUILD)/.deps
	@mkdir -p $(CLUSTER)
	$(call need_pkgs,$(CLUSTER_PKGS))

# The package's C: ext/idem.c with the parts it #includes inlined, in the
# package's own directory (go generate does the same); committed, and
# checked fresh by go test (TestAmalgamationFresh).
bindings/go/idem_amalgamation.h: bindings/go/amalgamate.sh $(SOURCES)
	sh bindings/go/amalgamate.sh

$(CLUSTER)/idem-example: $(GO_SOURCES) bindings/go/idem_amalgamation.h | $(CLUSTER)/.deps
	cd bindings/go && $(GO_ENV) go build -o $(abspath $@) ./example

go: $(CLUSTER)/idem-example  ## the Go module (bindings/go) and the example service

$(STATICCHECK): | $(CLUSTER)/.deps
	GOBIN=$(abspath $(BUILD)/go/bin) $(GO_ENV) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

go-check: $(STATICCHECK) bindings/go/idem_amalgamation.h | $(CLUSTER)/.deps  ## gofmt, go vet and staticcheck of bindings/go
	@out=$$(gofmt -l bindings/go); [ -z "$$out" ] || { echo "gofmt: $$out"; exit 1; }
	cd bindings/go && $(GO_ENV) go vet ./... && $(GO_ENV) $(abspath $(STATICCHECK)) ./...

# go test -race of the library (go-sqlite3's bundled SQLite) and of the
# example's package (a go-dqlite node): about 1.5 min cold, 15 s cached.
test-go: go-check go  ## go test -race of bindings/go: the library on go-sqlite3 and on a go-dqlite node
	cd bindings/go && $(GO_ENV) timeout 600 go test -race -count=1 . ./example ./internal/mixed

# The example service on three nodes, and the faults (test/cluster/run.sh).
# Short (CI): every fault once, about 2.5 min; long: several rounds each.
test-cluster: test-go  ## three go-dqlite nodes: duplicates, leader kills, lost COMMIT answers, a partition
	IDEM_CLUSTER_MODE=short timeout 600 bash test/cluster/run.sh

test-cluster-long: test-go  ## the same faults, more rounds and longer partitions (~10 min)
	IDEM_CLUSTER_MODE=long timeout 1800 bash test/cluster/run.sh

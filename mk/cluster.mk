# SPDX-License-Identifier: MIT
# Included by the Makefile (make help lists every target).

.PHONY: go test-go test-cluster test-cluster-long

# ---- idem in Go, and the cluster (doc/cluster.md) ---------------------------
# bindings/go is a cgo package (import path idem.example/idem) that
# compiles idem into itself; idem.Register() puts it into every SQLite
# connection of the process: a go-dqlite node's and mattn/go-sqlite3's.
# It builds offline in GOPATH mode over Debian's Go sources
# (/usr/share/gocode): build/go/src/idem.example/idem is a link to
# bindings/go.  go-dqlite's cgo flags carry -Wl,-z,now, which go refuses
# unless allowed.  The compiled packages go to Go's own build cache
# (~/.cache/go-build, shared by every clone, as npm's cache is: go-dqlite
# and go-sqlite3 are compiled once per machine, not once per clone), or to
# build/go/cache where there is no HOME.
CLUSTER      := $(BUILD)/cluster
GOROOT_SRC   := $(BUILD)/go/src/idem.example
CLUSTER_PKGS := golang-go libdqlite-dev libraft-dev libsqlite3-dev \
                golang-github-canonical-go-dqlite-dev \
                golang-github-mattn-go-sqlite3-dev iproute2
GO_OFFLINE   := GO111MODULE=off GOFLAGS= CGO_LDFLAGS_ALLOW='-Wl,-z,now' \
                GOPATH=$(abspath $(BUILD)/go):/usr/share/gocode \
                $(if $(HOME),,GOCACHE=$(abspath $(BUILD)/go/cache))
GO_SOURCES   := $(wildcard bindings/go/*.go bindings/go/*.c bindings/go/example/*.go)

$(CLUSTER)/.deps: | $(BUILD)/.deps
	@mkdir -p $(CLUSTER)
	$(call need_pkgs,$(CLUSTER_PKGS))

# The package's C: ext/idem.c with its parts inlined, in the package's own
# directory (go generate does the same).
bindings/go/idem_amalgamation.h: bindings/go/amalgamate.sh $(SOURCES)
	sh bindings/go/amalgamate.sh

$(GOROOT_SRC)/idem:
	@mkdir -p $(GOROOT_SRC)
	ln -sfn ../../../../bindings/go $@

$(CLUSTER)/idem-example: $(GO_SOURCES) bindings/go/idem_amalgamation.h | $(CLUSTER)/.deps $(GOROOT_SRC)/idem
	cd $(GOROOT_SRC)/idem/example && $(GO_OFFLINE) go build -o $(abspath $@) .

go: $(CLUSTER)/idem-example  ## the Go package (bindings/go) and the example service

test-go: go  ## go test of bindings/go: mattn/go-sqlite3 and a go-dqlite node have idem
	cd $(GOROOT_SRC)/idem && $(GO_OFFLINE) timeout 300 go test -count=1 -v . ./example

# The example service on three nodes, and the faults (test/cluster/run.sh).
# Short (CI): every fault once, about 2.5 min; long: several rounds each.
test-cluster: test-go  ## three go-dqlite nodes: duplicates, leader kills, lost COMMIT answers, a partition
	IDEM_CLUSTER_MODE=short timeout 600 bash test/cluster/run.sh

test-cluster-long: test-go  ## the same faults, more rounds and longer partitions (~10 min)
	IDEM_CLUSTER_MODE=long timeout 1800 bash test/cluster/run.sh

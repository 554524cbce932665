# SPDX-License-Identifier: MIT
# Included by the Makefile (make help lists every target).

.PHONY: cluster test-cluster

# ---- the cluster (doc/cluster.md) -----------------------------------------
# idem unchanged on 3 dqlite nodes (Debian's dqlite 1.11).  go-dqlite ships
# the dqlite shell and the dqlite-demo node; golang-go and go-dqlite's Debian
# sources build the test client offline (GOPATH mode, /usr/share/gocode).
CLUSTER      := $(BUILD)/cluster
CLUSTER_PKGS := go-dqlite libdqlite-dev libraft-dev golang-go \
                golang-github-canonical-go-dqlite-dev
GO_OFFLINE   := GO111MODULE=off GOFLAGS= GOPATH=/usr/share/gocode \
                GOCACHE=$(abspath $(CLUSTER))/go-cache

cluster: $(CLUSTER)/idem_preload.so $(CLUSTER)/idemcl  ## idem for dqlite nodes, and the test client

$(CLUSTER)/.deps: | $(BUILD)/.deps
	@mkdir -p $(CLUSTER)
	$(call need_pkgs,$(CLUSTER_PKGS))

# idem for the nodes: the same sources, built in (-DSQLITE_CORE) and
# registered by a constructor before the node starts; -DIDEM_REPLICATED
# makes idem_versioned() refuse to run in autocommit.
$(CLUSTER)/idem_preload.so: test/cluster/preload.c $(SOURCES) | $(CLUSTER)/.deps
	$(CC) $(CFLAGS) $(WARN) -fPIC -shared -DSQLITE_CORE -DIDEM_REPLICATED \
	  -o $@ test/cluster/preload.c ext/idem.c -lsqlite3

$(CLUSTER)/idemcl: test/cluster/idemcl.go | $(CLUSTER)/.deps
	$(GO_OFFLINE) go build -o $@ test/cluster/idemcl.go

# Three nodes on 127.0.0.1, killed by PID at the end; about 70 s.
test-cluster: cluster  ## three dqlite nodes: replication, races, leader kills
	timeout 600 bash test/cluster/run.sh

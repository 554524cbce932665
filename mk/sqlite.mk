# SPDX-License-Identifier: MIT
# Included by the Makefile (make help lists every target).

.PHONY: test-new test-old

# ---- the newest SQLite ------------------------------------------------------
# The npm package better-sqlite3@12 carries the amalgamation (3.53): taken
# from build/node-env's copy when make test has installed it, else fetched
# as the tarball only (no install scripts); built once as a shared
# libsqlite3.so.0 (test-cross compiles the same sqlite3.c), idem built
# against its headers (so xIntegrity is in), and the suite run on it
# through LD_LIBRARY_PATH (IDEM_LIB_ONLY: the files that never load the
# library under test ran in make test).  Nothing of it is committed.
NEW      := $(BUILD)/sqlite-new
NEW_OPTS := -DSQLITE_ENABLE_PREUPDATE_HOOK -DSQLITE_ENABLE_SESSION \
            -DSQLITE_ENABLE_COLUMN_METADATA -DSQLITE_ENABLE_FTS5 \
            -DSQLITE_ENABLE_RTREE -DSQLITE_ENABLE_UNLOCK_NOTIFY \
            -DSQLITE_ENABLE_DBSTAT_VTAB -DSQLITE_ENABLE_MATH_FUNCTIONS

NODE_ENV_SQLITE := $(BUILD)/node-env/node_modules/better-sqlite3/deps/sqlite3
$(NEW)/sqlite3.c:
	@mkdir -p $(NEW)
	@if [ -f $(NODE_ENV_SQLITE)/sqlite3.c ]; then \
	  echo "SQLite's amalgamation from build/node-env's better-sqlite3"; \
	  cp $(NODE_ENV_SQLITE)/sqlite3.c $(NODE_ENV_SQLITE)/sqlite3.h \
	     $(NODE_ENV_SQLITE)/sqlite3ext.h $(NEW)/; \
	else \
	  echo "fetching SQLite's amalgamation from npm's better-sqlite3@12 ..."; \
	  cd $(NEW) && rm -f better-sqlite3-*.tgz && npm pack --silent better-sqlite3@12 >/dev/null \
	  && tar xzf better-sqlite3-*.tgz --strip-components=3 \
	       package/deps/sqlite3/sqlite3.c package/deps/sqlite3/sqlite3.h \
	       package/deps/sqlite3/sqlite3ext.h \
	  && rm -f better-sqlite3-*.tgz; \
	fi

# Each SQLite library (and test-cross's objects) is built once per machine:
# mk/cached.sh keeps it in the machine's cache, keyed by its command, its
# compiler and the amalgamation's bytes, and a fresh clone copies it from
# there (IDEM_CACHE=none: no cache).
CACHED := sh mk/cached.sh

$(NEW)/libsqlite3.so.0: $(NEW)/sqlite3.c
	@echo "building the newest SQLite from its amalgamation (half a minute, once per machine) ..."
	$(CACHED) $@ $(CC) -O1 -fPIC -shared -Wl,-soname,libsqlite3.so.0 $(NEW_OPTS) \
	  -o $@ $< -lm -lpthread

$(NEW)/idem.$(SO): $(SOURCES) $(NEW)/sqlite3.c
	$(call loadable,$(NOG_CFLAGS) -I$(NEW))

test-new: all $(NEW)/libsqlite3.so.0 $(NEW)/idem.$(SO)  ## the suite on the newest SQLite (3.53, from npm)
	LD_LIBRARY_PATH=$(abspath $(NEW)) IDEM_LIB=$(abspath $(NEW))/idem.$(SO) IDEM_LIB_ONLY=1 \
	  tclsh tcl/run.tcl

# ---- the oldest SQLite ------------------------------------------------------
# idem needs SQLite 3.40.0 or later: 3.40.0 is the first that keeps a
# SQLITE_VTAB_DIRECTONLY table out of a trigger's INSERT/UPDATE/DELETE (before
# it only reads were kept out: a trigger in a hostile file could write
# claims; test/schema.test schema-6.1, test/hostile.test hostile-14.1);
# idem_versioned() reads pragma_table_list (3.37.0); sqlite_schema (3.33.0),
# xShadowName (3.26.0), sqlite3_str (3.25.0), sqlite3_vtab_nochange
# (3.22.0).  ext/idem.c stops a build against older headers with an #error,
# and sqlite3_idem_init() refuses to load into an older library.
#   make test-old    the whole suite on 3.40.0 (npm's better-sqlite3@8.0.0),
#                    as test-new runs it on 3.53; then the refusals, with
#                    3.39.1 (better-sqlite3@7.6.2): the #error at compile
#                    time, and load_extension()'s error at run time
OLD       := $(BUILD)/sqlite-old
OLDER     := $(BUILD)/sqlite-older
OLD_NPM   := better-sqlite3@8.0.0
OLDER_NPM := better-sqlite3@7.6.2

# $(call npm_sqlite,DIR,PACKAGE): the amalgamation of an npm release.
define npm_sqlite
	@mkdir -p $(1)
	cd $(1) && rm -f better-sqlite3-*.tgz && npm pack --silent $(2) >/dev/null \
	  && tar xzf better-sqlite3-*.tgz --strip-components=3 \
	       package/deps/sqlite3/sqlite3.c package/deps/sqlite3/sqlite3.h \
	       package/deps/sqlite3/sqlite3ext.h \
	  && rm -f better-sqlite3-*.tgz
endef
$(OLD)/sqlite3.c:
	$(call npm_sqlite,$(OLD),$(OLD_NPM))
$(OLDER)/sqlite3.c:
	$(call npm_sqlite,$(OLDER),$(OLDER_NPM))

# 3.40.0 runs the suite (-O1); 3.39.1 only has to refuse to load idem
# (-O0: a third of the compile time).
$(OLD)/libsqlite3.so.0: $(OLD)/sqlite3.c
	$(CACHED) $@ $(CC) -O1 -w -fPIC -shared -Wl,-soname,libsqlite3.so.0 $(NEW_OPTS) \
	  -o $@ $< -lm -lpthread
$(OLDER)/libsqlite3.so.0: $(OLDER)/sqlite3.c
	$(CACHED) $@ $(CC) -O0 -w -fPIC -shared -Wl,-soname,libsqlite3.so.0 $(NEW_OPTS) \
	  -o $@ $< -lm -lpthread

$(OLD)/idem.$(SO): $(SOURCES) $(OLD)/sqlite3.c
	$(call loadable,$(NOG_CFLAGS) -I$(OLD))

test-old: all $(OLD)/libsqlite3.so.0 $(OLD)/idem.$(SO) $(OLDER)/libsqlite3.so.0  ## the suite on the oldest SQLite (3.40.0)
	@echo "older headers (3.39.1): the build must stop with idem's #error"
	@if $(CC) -I$(OLDER) -fsyntax-only ext/idem.c > $(OLDER)/build.log 2>&1; then \
	  echo "FAILED: ext/idem.c compiled against SQLite 3.39.1"; exit 1; fi
	@grep -q 'error: #error "idem needs SQLite 3.40.0 or later' $(OLDER)/build.log \
	  || { cat $(OLDER)/build.log; echo "FAILED: not idem's #error"; exit 1; }
	@grep -m1 '#error' $(OLDER)/build.log
	@echo "older library (3.39.1): load_extension() must refuse"
	LD_LIBRARY_PATH=$(abspath $(OLDER)) tclsh test/old/refuse.tcl $(abspath $(LIB))
	LD_LIBRARY_PATH=$(abspath $(OLD)) IDEM_LIB=$(abspath $(OLD))/idem.$(SO) IDEM_LIB_ONLY=1 \
	  tclsh tcl/run.tcl

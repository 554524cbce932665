/* SPDX-License-Identifier: MIT */
/*
** idem -- the idempotency protocol for writes, as a SQLite extension.
**
** A call (an assistant's tool call, an order, a payment) may arrive twice.
** idem makes the second arrival replay what the first one recorded instead
** of writing again.  Its parts, each in a file of its own, meet only in the
** private header idemInt.h (types, constants, and the interface of each
** part under "Interface to code in idem_X.c").  They are listed, included
** below and declared in idemInt.h lowest first: a part calls only parts
** above it in this list, never one below.
**
**   idem_number.c     RFC 8785 / ECMAScript number text, exact and fast
**   idem_utf8.c       UTF-8 validation of a whole input, 32 bytes at a time
**                     (AVX2, chosen at run time)
**   idem_time.c       the clock, and the time text the claim table stores
**   idem_sql.c        what every part that speaks to SQLite shares: the
**                     conversions of SQL values, the one-row query, and
**                     idemResultError(), the one way an SQL function
**                     reports an error
**   idem_canonical.c  canonical JSON (RFC 8785), a strict parser and sorter:
**                     SQL function idem_canonical(json)
**   idem_key.c        the key: XXH3-128 over a framed (who, conv, tool,
**                     canonical args); SQL functions idem_key(), idem_header()
**   idem_durable.c    an external claim needs a durable commit (§12):
**                     the check, and the option durability=full|relaxed
**
**   The claim table, in three layers: the store, the rules, the module.
**   idem_store.c      where it keeps its calls: the shadow tables (schema,
**                     format, upgrade, damage check), the statement cache
**                     and its lending to cursors, the transaction's list
**                     of local claims, the table's error
**   idem_rows.c       what its rows promise: a format-4 table keeps
**                     created in rid order (a range of created is a range
**                     of rids); integrity_check
**   Its rules (doc/contract.md §4-7), in the order of a call's life:
**   idem_options.c    the table's options, parsed in one place; SQL
**                     functions idem_parse_options(), idem_limits(),
**                     idem_refusal()
**   idem_claim.c      the claim, an INSERT (prepare, write, held), and what
**                     the rules share: a call's status, its release, the
**                     checks of the inner writes
**   idem_outcome.c    the outcome: the transition function of an UPDATE
**                     and the writes it decides, DELETE, and the reply of
**                     a duplicate
**   idem_commit.c     the commit guard: no local claim commits pending,
**                     nor apart from the files its action wrote
**   idem_vtab.c       the module: CREATE VIRTUAL TABLE calls USING idem(...),
**                     its slots, query plans and cursor
**
**   idem_versioned.c  the version guard for ordinary tables:
**                     SELECT idem_versioned('inv', 'ver')
**
** This file is the entry point and builds the whole extension as one
** translation unit, so that every other symbol is static (IDEM_PRIVATE).
** Each part also compiles alone (cc -c -Iinclude -Iext ext/X.c), and the
** objects link with this file built with -DIDEM_PARTS into a loadable
** extension that works as the single build does (test/parts.test).
**
** Load it into the sqlite3 shell:       .load build/idem
** or from SQL:                          SELECT load_extension('build/idem');
** or link build/libidem.a (built with -DSQLITE_CORE) and call
**     sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
** (include/idem.h declares it).  See README.md for the protocol.
*/
#ifndef IDEM_PARTS
# define IDEM_PRIVATE static      /* one translation unit: see idemInt.h */
# define IDEM_PRIVATE_DATA static
#endif
#include "idemInt.h"
SQLITE_EXTENSION_INIT1

/* -DIDEM_PARTS compiles this file as the entry point alone, to be linked
** with the parts compiled each on its own (test/parts.test does it, to
** keep the parts honest: each needs nothing but what idemInt.h declares). */
#ifndef IDEM_PARTS
#include "idem_number.c"
#include "idem_utf8.c"
#include "idem_time.c"
#include "idem_sql.c"
#include "idem_canonical.c"
#include "idem_key.c"
#include "idem_durable.c"
#include "idem_store.c"
#include "idem_rows.c"
#include "idem_options.c"
#include "idem_claim.c"
#include "idem_outcome.c"
#include "idem_commit.c"
#include "idem_vtab.c"
#include "idem_versioned.c"
#endif

/* idem_version(): the extension's version string. */
static void idemVersionFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_text(ctx, IDEM_VERSION, -1, SQLITE_STATIC);
}

#ifdef _WIN32
__declspec(dllexport)
#elif defined(__GNUC__)
__attribute__((visibility("default")))
#endif
int sqlite3_idem_init(
  sqlite3 *db,
  char **pzErrMsg,
  const sqlite3_api_routines *pApi
){
  int rc;
  SQLITE_EXTENSION_INIT2(pApi);
  if( sqlite3_libversion_number()<IDEM_SQLITE_MIN ){
    if( pzErrMsg ){
      *pzErrMsg = sqlite3_mprintf("idem needs SQLite " IDEM_SQLITE_MIN_TEXT
                                  " or later; this is SQLite %s",
                                  sqlite3_libversion());
    }
    return SQLITE_ERROR;
  }
  rc = sqlite3_create_function(db, "idem_version", 0,
      SQLITE_UTF8|SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS, 0,
      idemVersionFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = idemCanonicalRegister(db);
  if( rc==SQLITE_OK ) rc = idemKeyRegister(db);
  if( rc==SQLITE_OK ) rc = idemOptionRegister(db);
  if( rc==SQLITE_OK ) rc = idemVtabRegister(db);
  if( rc==SQLITE_OK ) rc = idemVersionedRegister(db);
  return rc;
}

/* SPDX-License-Identifier: MIT */
/*
** static_example.c -- idem linked statically into a C program.
**
** Build and run, from the top of the repository (after `make`):
**
**   cc -Iinclude test/examples/c/static_example.c build/libidem.a -lsqlite3 \
**      -o build/static_example
**   build/static_example [database]       (default: a fresh in-memory one)
**
** or against an installed idem (make install; idem.pc names SQLite in
** Requires.private, so a static link asks pkg-config with --static):
**
**   cc static_example.c $(pkg-config --cflags --static --libs idem) -o static_example
**
** It registers idem for every connection with sqlite3_auto_extension(),
** opens a database, claims a local tool call, acts and records it as done
** in one transaction, then makes the model's retry arrive: the retry's
** claim is ignored (changes() = 0), it does not act, and it prints the
** reply that the first arrival recorded.  Exit status 0 when all of that
** happened as described.
*/
#include <stdio.h>
#include <stdlib.h>
#include <sqlite3.h>
#include "idem.h"

static sqlite3 *db;

/* Run SQL that returns no row; on error print it and exit. */
static void exec(const char *zSql){
  char *zErr = 0;
  if( sqlite3_exec(db, zSql, 0, 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "error: %s\n  in: %s\n", zErr, zSql);
    sqlite3_free(zErr);
    sqlite3_close(db);
    exit(1);
  }
}

/* Prepare a statement; on error print it and exit. */
static sqlite3_stmt *prepare(const char *zSql){
  sqlite3_stmt *pStmt = 0;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)!=SQLITE_OK ){
    fprintf(stderr, "error: %s\n  in: %s\n", sqlite3_errmsg(db), zSql);
    sqlite3_close(db);
    exit(1);
  }
  return pStmt;
}

/* Run a query with one integer result. */
static sqlite3_int64 one_int(const char *zSql){
  sqlite3_stmt *pStmt = prepare(zSql);
  sqlite3_int64 v = -1;
  if( sqlite3_step(pStmt)==SQLITE_ROW ) v = sqlite3_column_int64(pStmt, 0);
  sqlite3_finalize(pStmt);
  return v;
}

/*
** One arrival of the tool call place_order(sku A0001, qty 2) from alice in
** conversation conv-7.  Claim, act and record commit together; a duplicate
** rolls back its (empty) transaction and does not act.  Returns 1 if this
** arrival acted, 0 if it was a duplicate.
*/
static int place_order(const char *zArgs){
  sqlite3_stmt *pStmt;
  int acted;
  exec("BEGIN IMMEDIATE");
  pStmt = prepare("INSERT OR IGNORE INTO calls(who, conv, tool, args)"
                  " VALUES('alice', 'conv-7', 'place_order', ?1)");
  sqlite3_bind_text(pStmt, 1, zArgs, -1, SQLITE_STATIC);
  if( sqlite3_step(pStmt)!=SQLITE_DONE ){
    fprintf(stderr, "error: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    exit(1);
  }
  sqlite3_finalize(pStmt);
  acted = sqlite3_changes(db)==1;   /* 1: ours; 0: a duplicate */
  if( acted ){
    exec("INSERT INTO orders(sku, qty) VALUES('A0001', 2)");
    pStmt = prepare("UPDATE calls SET status = 'done', id = last_insert_rowid(),"
                    "       result = json_object('order', last_insert_rowid())"
                    " WHERE key = idem_key('alice', 'conv-7', 'place_order', ?1)"
                    "   AND member = 0");
    sqlite3_bind_text(pStmt, 1, zArgs, -1, SQLITE_STATIC);
    if( sqlite3_step(pStmt)!=SQLITE_DONE ){
      fprintf(stderr, "error: %s\n", sqlite3_errmsg(db));
      exit(1);
    }
    sqlite3_finalize(pStmt);
    exec("COMMIT");
  }else{
    exec("ROLLBACK");
  }
  return acted;
}

int main(int argc, char **argv){
  sqlite3_stmt *pStmt;
  int first, second;
  sqlite3_int64 nOrder;

  /* Every connection opened from now on has idem. */
  if( sqlite3_auto_extension((void(*)(void))sqlite3_idem_init)!=SQLITE_OK ){
    fprintf(stderr, "error: sqlite3_auto_extension failed\n");
    return 1;
  }
  if( sqlite3_open(argc>1 ? argv[1] : ":memory:", &db)!=SQLITE_OK ){
    fprintf(stderr, "error: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  sqlite3_busy_timeout(db, 5000);
  exec("CREATE VIRTUAL TABLE IF NOT EXISTS calls USING idem;"
       "CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, sku, qty)");

  printf("idem %s, SQLite %s\n", IDEM_VERSION, sqlite3_libversion());
  first = place_order("{\"sku\":\"A0001\",\"qty\":2}");
  printf("first arrival:  %s\n", first ? "claimed, acted, recorded done"
                                       : "a duplicate (already done before)");
  /* The model retries, with the arguments spelled differently. */
  second = place_order("{ \"qty\": 2.0, \"sku\": \"A0001\" }");
  printf("second arrival: %s\n", second ? "claimed and acted (WRONG)"
                                        : "a duplicate: not acted, replayed");

  pStmt = prepare("SELECT reply FROM calls WHERE key = idem_key('alice',"
                  " 'conv-7', 'place_order', '{\"sku\":\"A0001\",\"qty\":2}')"
                  " AND member = 0");
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    printf("replay: %s\n", (const char*)sqlite3_column_text(pStmt, 0));
  }
  sqlite3_finalize(pStmt);

  nOrder = one_int("SELECT count(*) FROM orders");
  printf("orders: %lld\n", (long long)nOrder);
  sqlite3_close(db);
  return (second==0 && nOrder==1) ? 0 : 1;
}

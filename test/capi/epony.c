/* SPDX-License-Identifier: MIT */
/*
** epony.c -- the claim's INSERT never reaches a virtual table: with
** calls_claim gone from the schema and a module of that very name
** registered by the application (eponymous: no xCreate), a claim fails
** with SQLite's "no such table" and the module is never written.  The
** claim's INSERT is a legacy statement, which takes no
** SQLITE_PREPARE_NO_VTAB; idem prepares it with that flag first where the
** damage check did not find calls_claim (idemStoreInsert()).
**
**   cc -Iinclude test/capi/epony.c build/libidem.a -lsqlite3 -o x && ./x
**
** Prints a line per failed check and "N passed, N failed"; exits 1 on
** failure.
*/
#include <stdio.h>
#include <string.h>
#include <sqlite3.h>
#include "idem.h"
#include "check.h"

static int nWrite = 0;        /* xUpdate calls of the module */

static int epConnect(sqlite3 *db, void *pAux, int argc,
                     const char *const *argv, sqlite3_vtab **ppVtab,
                     char **pzErr){
  sqlite3_vtab *p;
  int rc;
  (void)pAux; (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db, "CREATE TABLE x(key, member, who, conv,"
      " tool, args, kind, status, id, result, note, created, updated,"
      " keyargs, owner, honours_key, sends)");
  if( rc!=SQLITE_OK ) return rc;
  p = sqlite3_malloc(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  *ppVtab = p;
  return SQLITE_OK;
}
static int epDisconnect(sqlite3_vtab *p){ sqlite3_free(p); return SQLITE_OK; }
static int epBestIndex(sqlite3_vtab *p, sqlite3_index_info *pInfo){
  (void)p;
  pInfo->estimatedCost = 1e6;
  return SQLITE_OK;
}
static int epOpen(sqlite3_vtab *p, sqlite3_vtab_cursor **ppCur){
  sqlite3_vtab_cursor *c = sqlite3_malloc(sizeof(*c));
  (void)p;
  if( c==0 ) return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *ppCur = c;
  return SQLITE_OK;
}
static int epClose(sqlite3_vtab_cursor *c){ sqlite3_free(c); return SQLITE_OK; }
static int epFilter(sqlite3_vtab_cursor *c, int i, const char *z, int n,
                    sqlite3_value **a){
  (void)c; (void)i; (void)z; (void)n; (void)a;
  return SQLITE_OK;
}
static int epNext(sqlite3_vtab_cursor *c){ (void)c; return SQLITE_OK; }
static int epEof(sqlite3_vtab_cursor *c){ (void)c; return 1; }
static int epColumn(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int i){
  (void)c; (void)i;
  sqlite3_result_null(ctx);
  return SQLITE_OK;
}
static int epRowid(sqlite3_vtab_cursor *c, sqlite3_int64 *piRowid){
  (void)c;
  *piRowid = 0;
  return SQLITE_OK;
}
static int epUpdate(sqlite3_vtab *p, int argc, sqlite3_value **argv,
                    sqlite3_int64 *piRowid){
  (void)p; (void)argc; (void)argv;
  nWrite++;
  *piRowid = nWrite;
  return SQLITE_OK;
}

static sqlite3_module epModule = {
  0, 0, epConnect, epBestIndex, epDisconnect, 0, epOpen, epClose, epFilter,
  epNext, epEof, epColumn, epRowid, epUpdate, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
};

int main(void){
  sqlite3 *db;
  sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
  if( sqlite3_open(":memory:", &db) ) return 1;
  check(db, "create", "CREATE VIRTUAL TABLE calls USING idem(durability=relaxed)",
        SQLITE_OK, 0);
  check(db, "the shadow table gone",
        "DROP TABLE calls_claim", SQLITE_OK, 0);
  if( sqlite3_create_module(db, "calls_claim", &epModule, 0)!=SQLITE_OK ){
    return 1;
  }
  checkInt(db, "the module is there", "SELECT count(*) FROM calls_claim", 0);
  check(db, "a claim: no such table",
        "INSERT INTO calls(who, conv, tool, args) VALUES('u','c','t','1')",
        SQLITE_ERROR, "idem: calls: no such table: main.calls_claim");
  check(db, "a member row: no such table",
        "INSERT INTO calls(key, member, id) VALUES(idem_key('u','c','t','1'), 1, 2)",
        SQLITE_ERROR, 0);
  if( nWrite==0 ){
    nPass++;
  }else{
    nFail++;
    printf("! the module was written %d times\n", nWrite);
  }
  sqlite3_close(db);
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail!=0;
}

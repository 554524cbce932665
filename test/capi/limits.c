/* SPDX-License-Identifier: MIT */
/*
** limits.c -- a claim whose canonical args exceed SQLite's length limit
** (sqlite3_limit(SQLITE_LIMIT_LENGTH), which Tcl's binding may not offer)
** fails with a clear error under every conflict clause and stores nothing;
** once it fits, its true duplicate is a duplicate (doc/contract.md §4).
** Numbers grow when printed: 1e20 is 21 digits.
**
**   cc -Iinclude test/capi/limits.c build/libidem.a -lsqlite3 -o x && ./x
**
** Prints a line per failed check and "N passed, N failed"; exits 1 on
** failure.
*/
#include <stdio.h>
#include <string.h>
#include <sqlite3.h>
#include "idem.h"
#include "check.h"

int main(void){
  static const char *azClause[] = {
    "", "OR IGNORE", "OR FAIL", "OR ABORT", "OR ROLLBACK", "OR REPLACE"
  };
  char zArgs[200], zSql[400];
  sqlite3 *db;
  int i;
  sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
  if( sqlite3_open(":memory:", &db) ) return 1;
  /* In memory nothing is durable: external claims need durability=relaxed. */
  check(db, "create", "CREATE VIRTUAL TABLE calls USING idem(durability=relaxed)", SQLITE_OK, 0);
  check(db, "one", "CREATE TABLE one(x); INSERT INTO one VALUES(1)", SQLITE_OK, 0);
  /* 16 times 1e20: 83 bytes given, 353 canonical. */
  strcpy(zArgs, "[");
  for(i=0; i<16; i++) strcat(zArgs, i ? ",1e20" : "1e20");
  strcat(zArgs, "]");
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 200);
  for(i=0; i<(int)(sizeof(azClause)/sizeof(azClause[0])); i++){
    check(db, "changes=1", "UPDATE one SET x = x", SQLITE_OK, 0);
    snprintf(zSql, sizeof(zSql), "INSERT %s INTO calls(who, conv, tool, args,"
             " kind) VALUES('u', 'c', 't', '%s', 'external')", azClause[i], zArgs);
    if( strcmp(azClause[i], "OR FAIL")==0 ){
      /* Refused before all else (claim.test, section 9); its message is
      ** longer than the 200 bytes SQLite now allows a string, so SQLite
      ** drops it. */
      check(db, azClause[i], zSql, SQLITE_ERROR, 0);
    }else{
      check(db, azClause[i], zSql, SQLITE_TOOBIG, "idem: calls: args: the"
            " canonical text is 353 bytes, more than SQLite's length limit"
            " (SQLITE_LIMIT_LENGTH, 200); nothing was claimed");
    }
    checkInt(db, "changes", "SELECT changes()", 0);
    checkInt(db, "stored", "SELECT count(*) FROM calls_claim", 0);
  }
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1000000);
  snprintf(zSql, sizeof(zSql), "INSERT INTO calls(who, conv, tool, args,"
           " kind) VALUES('u', 'c', 't', '%s', 'external')", zArgs);
  check(db, "claim", zSql, SQLITE_OK, 0);
  checkInt(db, "args", "SELECT length(args) FROM calls", 353);
  check(db, "duplicate", zSql, SQLITE_CONSTRAINT, "idem: calls: call already claimed");
  sqlite3_close(db);
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail!=0;
}

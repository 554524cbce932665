/* SPDX-License-Identifier: MIT */
/*
** bindkept.c -- the claim's INSERT keeps its bindings from one claim to
** the next (ext/idem_claim.c, "THE CLAIM'S BINDINGS, KEPT"), and never
** left bound to memory that is not the table's: a value the caller bound
** SQLITE_STATIC, then changed after its claim, is not what the INSERT
** holds; a value too long to keep (5 000 bytes) is bound where it lies
** and cleared after the step.  What the INSERT holds is read with
** sqlite3_expanded_sql(), as any code of the application may read every
** statement of its connection (sqlite3_next_stmt()).
**
**   cc -Iinclude test/capi/bindkept.c build/libidem.a -lsqlite3 -o x && ./x
**
** Prints a line per failed check and "N passed, N failed"; exits 1 on
** failure.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "idem.h"
#include "check.h"

/* The expanded text of the table's claim INSERT (sqlite3_free it), or 0. */
static char *insertText(sqlite3 *db){
  sqlite3_stmt *p;
  for(p=sqlite3_next_stmt(db, 0); p; p=sqlite3_next_stmt(db, p)){
    const char *z = sqlite3_sql(p);
    if( z && strstr(z, "INSERT INTO \"main\".\"calls_claim\"") ){
      return sqlite3_expanded_sql(p);
    }
  }
  return 0;
}

/* Check that the claim INSERT's text holds zIn (bIn) or does not. */
static void checkHolds(sqlite3 *db, const char *zName, const char *zWhat,
                       int bIn){
  char *z = insertText(db);
  int ok = z!=0 && (strstr(z, zWhat)!=0)==bIn;
  if( ok ){
    nPass++;
  }else{
    nFail++;
    printf("! %s: %s %s in %.200s\n", zName, zWhat, bIn ? "not" : "still",
           z ? z : "(no INSERT)");
  }
  sqlite3_free(z);
}

int main(void){
  static char zConv[6000];
  sqlite3 *db;
  sqlite3_stmt *pIns = 0;
  sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
  if( sqlite3_open(":memory:", &db) ) return 1;
  check(db, "create", "CREATE VIRTUAL TABLE calls USING idem(durability=relaxed)", SQLITE_OK, 0);
  if( sqlite3_prepare_v2(db, "INSERT INTO calls(who, conv, tool, args, kind)"
        " VALUES('u', ?1, 't', '1', 'external')", -1, &pIns, 0) ){
    printf("! prepare: %s\n", sqlite3_errmsg(db));
    return 1;
  }

  /* 1. A short value, kept: the INSERT holds the table's copy of it,
  ** not the caller's bytes. */
  strcpy(zConv, "conv-one");
  sqlite3_bind_text(pIns, 1, zConv, -1, SQLITE_STATIC);
  if( sqlite3_step(pIns)!=SQLITE_DONE ){ nFail++; printf("! 1.step: %s\n", sqlite3_errmsg(db)); }
  sqlite3_reset(pIns);
  checkHolds(db, "1.kept", "'conv-one'", 1);
  memcpy(zConv, "CONV-TWO", 8);
  checkHolds(db, "1.copy", "'CONV-TWO'", 0);
  checkInt(db, "1.stored", "SELECT count(*) FROM calls WHERE conv = 'conv-one'", 1);

  /* 2. A value too long to keep: bound where it lies, then cleared. */
  memset(zConv, 'a', 5000);
  zConv[5000] = 0;
  sqlite3_bind_text(pIns, 1, zConv, 5000, SQLITE_STATIC);
  if( sqlite3_step(pIns)!=SQLITE_DONE ){ nFail++; printf("! 2.step: %s\n", sqlite3_errmsg(db)); }
  sqlite3_reset(pIns);
  memset(zConv, 'Z', 5000);
  checkHolds(db, "2.cleared", "ZZZZ", 0);
  checkHolds(db, "2.null", "NULL", 1);
  checkInt(db, "2.stored", "SELECT count(*) FROM calls WHERE length(conv) = 5000"
           " AND conv NOT GLOB '*Z*'", 1);

  /* 3. Then short again: kept, and right. */
  strcpy(zConv, "conv-three");
  sqlite3_bind_text(pIns, 1, zConv, -1, SQLITE_STATIC);
  if( sqlite3_step(pIns)!=SQLITE_DONE ){ nFail++; printf("! 3.step: %s\n", sqlite3_errmsg(db)); }
  sqlite3_reset(pIns);
  memcpy(zConv, "CONV-FOUR!", 10);
  checkHolds(db, "3.kept", "'conv-three'", 1);
  checkInt(db, "3.stored", "SELECT count(*) FROM calls WHERE conv = 'conv-three'", 1);

  sqlite3_finalize(pIns);
  sqlite3_close(db);
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail!=0;
}

/* SPDX-License-Identifier: MIT */
/*
** check.h -- the checks the C programs of test/capi/ share: each counts a
** pass or prints "! name: ..." for a failure; main() prints
** "N passed, N failed".  Included by one .c file each (static functions).
*/
#include <stdio.h>
#include <string.h>
#include <sqlite3.h>

static int nPass = 0, nFail = 0;

/* Run zSql; check its primary result code and that the message starts
** with zMsg (NULL: no message check). */
static void check(sqlite3 *db, const char *zName, const char *zSql,
                  int rcWant, const char *zMsg){
  int rc = sqlite3_exec(db, zSql, 0, 0, 0);
  const char *zGot = sqlite3_errmsg(db);
  int ok = (rc&0xff)==rcWant
        && (zMsg==0 || strncmp(zGot, zMsg, strlen(zMsg))==0);
  if( ok ){
    nPass++;
  }else{
    nFail++;
    printf("! %s: rc=%d (want %d) msg=%s\n", zName, rc, rcWant, zGot);
  }
}

static void checkInt(sqlite3 *db, const char *zName, const char *zSql, int iWant){
  sqlite3_stmt *p = 0;
  int iGot = -1;
  if( sqlite3_prepare_v2(db, zSql, -1, &p, 0)==SQLITE_OK
   && sqlite3_step(p)==SQLITE_ROW ){
    iGot = sqlite3_column_int(p, 0);
  }
  sqlite3_finalize(p);
  if( iGot==iWant ){ nPass++; }else{ nFail++; printf("! %s: %d, want %d\n", zName, iGot, iWant); }
}


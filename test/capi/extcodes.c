/* SPDX-License-Identifier: MIT */
/*
** extcodes.c -- the claim protocol with extended result codes switched on
** (sqlite3_extended_result_codes), as dqlite and many applications run.
** A duplicate must still be reported as "already claimed", and a key held
** by another call must still be an error under OR IGNORE.
**
**   cc -Iinclude test/capi/extcodes.c build/libidem.a -lsqlite3 -o x && ./x
**
** Prints one line per check and "N passed, N failed"; exits 1 on failure.
*/
#include <stdio.h>
#include <string.h>
#include <sqlite3.h>
#include "idem.h"
#include "check.h"

int main(void){
  sqlite3 *db;
  sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
  if( sqlite3_open(":memory:", &db) ) return 1;
  sqlite3_extended_result_codes(db, 1);
  /* In memory nothing is durable: external claims need durability=relaxed. */
  check(db, "create", "CREATE VIRTUAL TABLE calls USING idem(durability=relaxed)", SQLITE_OK, 0);
  /* A local claim never commits pending: the autocommit fails. */
  check(db, "local-claim-pending",
    "INSERT INTO calls(who,conv,tool,args) VALUES('u','c','t','{\"a\":1}')",
    SQLITE_ERROR, "idem: calls: local call '");
  check(db, "claim",
    "INSERT INTO calls(who,conv,tool,args,kind) VALUES('u','c','t','{\"a\":1}','external')",
    SQLITE_OK, 0);
  check(db, "duplicate",
    "INSERT INTO calls(who,conv,tool,args) VALUES('u','c','t','{ \"a\" : 1 }')",
    SQLITE_CONSTRAINT, "idem: calls: call already claimed (status: pending)");
  check(db, "duplicate-ignored",
    "INSERT OR IGNORE INTO calls(who,conv,tool,args) VALUES('u','c','t','{\"a\":1}')",
    SQLITE_OK, 0);
  checkInt(db, "duplicate-ignored-changes", "SELECT changes()", 0);
  check(db, "key-held-by-another-call",
    "INSERT OR IGNORE INTO calls(key,who,conv,tool,args)"
    " SELECT key,'mallory','c','t','{\"a\":1}' FROM calls",
    SQLITE_ERROR, "idem: calls: key '");
  check(db, "member",
    "INSERT INTO calls(key,member,id) SELECT key,1,'m' FROM calls WHERE member=0",
    SQLITE_OK, 0);
  check(db, "member-twice",
    "INSERT INTO calls(key,member,id) SELECT key,1,'m' FROM calls WHERE member=0",
    SQLITE_ERROR, "idem: calls: member 1 of call '");
  checkInt(db, "rows", "SELECT count(*) FROM calls", 2);
  sqlite3_close(db);
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail!=0;
}

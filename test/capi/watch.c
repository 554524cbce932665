/* SPDX-License-Identifier: MIT */
/*
** watch.c -- a setting changed between two claims is seen (doc/contract.md
** §12), where a table keeps synchronous and a rollback journal mode from
** one transaction to the next (idem_durable.c, "THE WATCH"): a PRAGMA that
** sets journal_mode takes effect when it is stepped, which may be long
** after it was prepared, before the table's first claim (then the watch
** finds it among the connection's statements) or after it (then the watch
** sees it prepared).  Either way the claim after its step sees the mode.
** And a watched schema detached, another file attached under its name.
**
**   cc -Iinclude test/capi/watch.c build/libidem.a -lsqlite3 -o x && ./x
**
** Prints a line per failed check and "N passed, N failed"; exits 1 on
** failure.
*/
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include "idem.h"
#include "check.h"

#define CLAIM(n) "INSERT INTO c(who, conv, tool, args, kind) VALUES('u', '" n "', 't', '{}', 'external')"
#define MEMORY "idem: c: external claim needs a durable commit: PRAGMA journal_mode=MEMORY"
#define OFF "idem: c: external claim needs a durable commit: PRAGMA journal_mode=OFF"

static sqlite3 *openDb(const char *zDb){
  sqlite3 *db = 0;
  char z[300];
  static const char *az[] = { "", "-journal", "-wal", "-shm" };
  int k;
  for(k=0; k<4; k++){ snprintf(z, sizeof(z), "%s%s", zDb, az[k]); unlink(z); }
  sqlite3_open(zDb, &db);
  check(db, "mode", "PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL", SQLITE_OK, 0);
  return db;
}

static void stepOnce(sqlite3 *db, const char *zName, sqlite3_stmt *p){
  int rc = sqlite3_step(p);
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ){ nPass++; }else{ nFail++; printf("! %s: %s\n", zName, sqlite3_errmsg(db)); }
  sqlite3_finalize(p);
}

int main(void){
  sqlite3 *db;
  sqlite3_stmt *p = 0;
  sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);

  /* 1. Prepared before the table's first claim, stepped after it (the
  ** table made first: a schema change would prepare it again, and the
  ** watch would see that). */
  db = openDb("watch1.db");
  check(db, "1 create", "CREATE VIRTUAL TABLE c USING idem", SQLITE_OK, 0);
  sqlite3_prepare_v2(db, "PRAGMA journal_mode=MEMORY", -1, &p, 0);
  check(db, "1 claim", CLAIM("1"), SQLITE_OK, 0);
  check(db, "1 claim, kept", CLAIM("2"), SQLITE_OK, 0);
  stepOnce(db, "1 step", p);
  check(db, "1 claim after the step", CLAIM("3"), SQLITE_ERROR, MEMORY);
  sqlite3_close(db);

  /* 2. The same, prepared with sqlite3_prepare() (legacy). */
  db = openDb("watch2.db");
  check(db, "2 create", "CREATE VIRTUAL TABLE c USING idem", SQLITE_OK, 0);
  sqlite3_prepare(db, "PRAGMA journal_mode=OFF", -1, &p, 0);
  check(db, "2 claim", CLAIM("1"), SQLITE_OK, 0);
  check(db, "2 claim, kept", CLAIM("2"), SQLITE_OK, 0);
  stepOnce(db, "2 step", p);
  check(db, "2 claim after the step", CLAIM("3"), SQLITE_ERROR, OFF);
  sqlite3_close(db);

  /* 3. Prepared after the first claim, stepped after a second. */
  db = openDb("watch3.db");
  check(db, "3 create", "CREATE VIRTUAL TABLE c USING idem", SQLITE_OK, 0);
  check(db, "3 claim", CLAIM("1"), SQLITE_OK, 0);
  check(db, "3 claim, kept", CLAIM("2"), SQLITE_OK, 0);
  sqlite3_prepare_v2(db, "pragma Main . \"JOURNAL_MODE\" = 'memory'", -1, &p, 0);
  check(db, "3 claim before the step", CLAIM("3"), SQLITE_OK, 0);
  stepOnce(db, "3 step", p);
  check(db, "3 claim after the step", CLAIM("4"), SQLITE_ERROR, MEMORY);
  check(db, "3 back", "PRAGMA journal_mode=DELETE", SQLITE_OK, 0);
  check(db, "3 claim, back", CLAIM("5"), SQLITE_OK, 0);
  checkInt(db, "3 claims", "SELECT count(*) FROM c", 4);
  sqlite3_close(db);

  /* 4. A watched schema detached (its file closed first, the table
  ** disconnected after), another file attached under the same name: its
  ** table watches its own file, and sees its setting changed. */
  db = openDb("watch4.db");
  unlink("watch4a.db"); unlink("watch4b.db");
  check(db, "4 attach", "ATTACH 'watch4a.db' AS aux;"
        " CREATE VIRTUAL TABLE aux.c USING idem", SQLITE_OK, 0);
  check(db, "4 claim", "INSERT INTO aux.c(who, conv, tool, args, kind)"
        " VALUES('u', '1', 't', '{}', 'external')", SQLITE_OK, 0);
  check(db, "4 detach", "DETACH aux; ATTACH 'watch4b.db' AS aux;"
        " CREATE VIRTUAL TABLE aux.c USING idem", SQLITE_OK, 0);
  check(db, "4 claim again", "INSERT INTO aux.c(who, conv, tool, args, kind)"
        " VALUES('u', '1', 't', '{}', 'external')", SQLITE_OK, 0);
  check(db, "4 memory", "PRAGMA aux.journal_mode=MEMORY", SQLITE_OK, 0);
  check(db, "4 claim in MEMORY", "INSERT INTO aux.c(who, conv, tool, args, kind)"
        " VALUES('u', '2', 't', '{}', 'external')", SQLITE_ERROR,
        "idem: c: external claim needs a durable commit: PRAGMA aux.journal_mode=MEMORY");
  check(db, "4 detach again", "DETACH aux", SQLITE_OK, 0);
  sqlite3_close(db);

  unlink("watch1.db"); unlink("watch2.db"); unlink("watch3.db");
  unlink("watch4.db"); unlink("watch4a.db"); unlink("watch4b.db");
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail>0;
}

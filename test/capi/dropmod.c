/* SPDX-License-Identifier: MIT */
/*
** dropmod.c -- idem_options() after sqlite3_drop_modules(): the module and
** the function share the list of open tables, which must outlive the one
** dropped first (built with the extension under ASan by capi.test, where
** a read of freed memory stops the program).
**
**   cc -fsanitize=address -Iinclude -Iext -DSQLITE_CORE ext/idem.c \
**      test/capi/dropmod.c -lsqlite3 -lm -o x && ./x
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
  sqlite3 *db;
  sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
  if( sqlite3_open(":memory:", &db) ) return 1;
  check(db, "create", "CREATE VIRTUAL TABLE calls USING idem(durability=relaxed)", SQLITE_OK, 0);
  check(db, "options", "SELECT idem_options('calls')", SQLITE_OK, 0);
  check(db, "drop table", "DROP TABLE calls", SQLITE_OK, 0);
  if( sqlite3_drop_modules(db, 0)!=SQLITE_OK ) return 1;
  /* The module is gone, the function is not: it finds no table. */
  check(db, "options after drop_modules", "SELECT idem_options('calls')", SQLITE_ERROR,
        "idem: idem_options('calls'): no such table");
  check(db, "plain", "CREATE TABLE plain(x)", SQLITE_OK, 0);
  check(db, "a plain table after drop_modules", "SELECT idem_options('plain')",
        SQLITE_ERROR, "idem: idem_options('plain'): main.plain is not an");
  check(db, "module gone", "CREATE VIRTUAL TABLE c2 USING idem", SQLITE_ERROR,
        "no such module: idem");
  sqlite3_close(db);
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail!=0;
}

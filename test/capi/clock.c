/* SPDX-License-Identifier: MIT */
/*
** clock.c -- retention at its exact boundary (doc/contract.md §10): a
** decided call whose `expires` is the current millisecond is expired (gone
** from SELECT, claimed anew, swept), one millisecond earlier it is not;
** and a clock that goes back (doc/contract.md §7): created never goes
** back in rid order.  idem reads the time from the database's VFS; this
** program wraps the default VFS in one whose clock it sets (Tcl cannot).
**
**   cc -Iinclude test/capi/clock.c build/libidem.a -lsqlite3 -o x && ./x
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

static sqlite3_vfs clockVfs;
static sqlite3_int64 iClockMs;        /* Unix time in ms that the VFS shows */

static int clockCurrentTimeInt64(sqlite3_vfs *pVfs, sqlite3_int64 *piNow){
  (void)pVfs;
  *piNow = iClockMs + (sqlite3_int64)210866760000000;   /* Julian day, ms */
  return SQLITE_OK;
}
static int clockCurrentTime(sqlite3_vfs *pVfs, double *prNow){
  (void)pVfs;
  *prNow = (iClockMs + (sqlite3_int64)210866760000000)/86400000.0;
  return SQLITE_OK;
}

/* Run zFmt with every %s the table name. */
static void run(sqlite3 *db, const char *zName, const char *zTab,
                const char *zFmt, int rcWant){
  char zSql[600];
  snprintf(zSql, sizeof(zSql), zFmt, zTab, zTab, zTab, zTab);
  check(db, zName, zSql, rcWant, 0);
}
static void runInt(sqlite3 *db, const char *zName, const char *zTab,
                   const char *zFmt, int iWant){
  char zSql[600];
  snprintf(zSql, sizeof(zSql), zFmt, zTab, zTab, zTab, zTab);
  checkInt(db, zName, zSql, iWant);
}

/* A local call, claimed and done in one transaction at the clock's time. */
static void done(sqlite3 *db, const char *zTab, const char *zArgs){
  char zSql[600];
  snprintf(zSql, sizeof(zSql), "BEGIN;"
      " INSERT INTO %s(who, conv, tool, args) VALUES('u', 'c', 't', '%s');"
      " UPDATE %s SET status = 'done' WHERE key = idem_key('u', 'c', 't', '%s')"
      " AND member = 0; COMMIT", zTab, zArgs, zTab, zArgs);
  check(db, zArgs, zSql, SQLITE_OK, 0);
}

#define CLAIM(ARGS) "INSERT OR IGNORE INTO %s(who, conv, tool, args, kind)" \
                    " VALUES('u', 'c', 't', '" ARGS "', 'external')"

int main(void){
  const sqlite3_int64 T0 = 1767225600000;   /* 2026-01-01 00:00:00.000 UTC */
  const char *zFile = "clock-test.db";
  sqlite3 *db;
  clockVfs = *sqlite3_vfs_find(0);
  clockVfs.zName = "clock";
  clockVfs.xCurrentTimeInt64 = clockCurrentTimeInt64;
  clockVfs.xCurrentTime = clockCurrentTime;
  sqlite3_vfs_register(&clockVfs, 0);
  sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
  unlink(zFile);
  if( sqlite3_open_v2(zFile, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE,
                      "clock") ) return 1;
  check(db, "create a", "CREATE VIRTUAL TABLE a USING idem(retain='1 second',"
        " durability=relaxed)", SQLITE_OK, 0);
  check(db, "create b", "CREATE VIRTUAL TABLE b USING idem(retain='1 second',"
        " durability=relaxed)", SQLITE_OK, 0);

  /* '2' and '3' done at T0, '1' a millisecond later, in both tables. */
  iClockMs = T0;
  done(db, "a", "2"); done(db, "a", "3");
  done(db, "b", "2"); done(db, "b", "3");
  iClockMs = T0 + 1;
  done(db, "a", "1"); done(db, "b", "1");
  runInt(db, "expires", "a", "SELECT expires = '2026-01-01 00:00:01.000' FROM %s"
         " WHERE args = '2'", 1);

  /* a: one millisecond before '2' and '3' expire they are there, and a
  ** claim's sweep leaves them (it notes when the first one expires). */
  iClockMs = T0 + 999;
  runInt(db, "a visible", "a", "SELECT count(*) FROM %s", 3);
  run(db, "a dup", "a", CLAIM("1"), SQLITE_OK);
  runInt(db, "a dup changes", "a", "SELECT changes()", 0);
  runInt(db, "a not swept", "a", "SELECT count(*) FROM %s_claim", 3);

  /* a: at the very millisecond they expire, SELECT no longer shows them
  ** and the next claim sweeps them. */
  iClockMs = T0 + 1000;
  runInt(db, "a hidden", "a", "SELECT group_concat(args) FROM %s", 1);
  run(db, "a new", "a", CLAIM("9"), SQLITE_OK);
  runInt(db, "a new changes", "a", "SELECT changes()", 1);
  runInt(db, "a swept", "a", "SELECT count(*) FROM %s_claim WHERE args IN ('2','3')", 0);

  /* b: at the millisecond '1' expires, the sweep takes the two older calls
  ** and the claim of '1' meets its expired call: claimed anew. */
  iClockMs = T0 + 1001;
  run(db, "b reclaim", "b", CLAIM("1"), SQLITE_OK);
  runInt(db, "b reclaim changes", "b", "SELECT changes()", 1);
  runInt(db, "b swept", "b", "SELECT count(*) FROM %s_claim WHERE args IN ('2','3')", 0);
  runInt(db, "b pending", "b", "SELECT count(*) FROM %s WHERE args = '1'"
         " AND status = 'pending'", 1);

  /* c: the time a claim and a record write, where a table keeps the text
  ** of the last second it formatted: the first one (a second that is 0),
  ** the same second, the next, the next day, and back.  updated is the
  ** clock's; created too, but where the clock went back (a format-4 table
  ** keeps created from going back in rid order: the latest created). */
  check(db, "create c", "CREATE VIRTUAL TABLE c USING idem(durability=relaxed)",
        SQLITE_OK, 0);
  {
    static const struct {
      sqlite3_int64 ms; const char *zArgs, *zWant, *zCreated;
    } a[] = {
      { 500, "1", "1970-01-01 00:00:00.500", 0 },
      { 1767225600999, "2", "2026-01-01 00:00:00.999", 0 },
      { 1767225600000, "3", "2026-01-01 00:00:00.000", "2026-01-01 00:00:00.999" },
      { 1767225601000, "4", "2026-01-01 00:00:01.000", 0 },
      { 1767311999999, "5", "2026-01-01 23:59:59.999", 0 },
      { 1767312000007, "6", "2026-01-02 00:00:00.007", 0 },
      { 1767225600042, "7", "2026-01-01 00:00:00.042", "2026-01-02 00:00:00.007" },
    };
    int i;
    for(i=0; i<(int)(sizeof(a)/sizeof(a[0])); i++){
      char zSql[300];
      iClockMs = a[i].ms;
      snprintf(zSql, sizeof(zSql), "INSERT INTO c(who, conv, tool, args, kind)"
               " VALUES('u', 'c', 't', '%s', 'external')", a[i].zArgs);
      check(db, "c claim", zSql, SQLITE_OK, 0);
      snprintf(zSql, sizeof(zSql), "SELECT updated = '%s' AND created = '%s'"
               " FROM c WHERE args = '%s'", a[i].zWant,
               a[i].zCreated ? a[i].zCreated : a[i].zWant, a[i].zArgs);
      checkInt(db, a[i].zWant, zSql, 1);
      iClockMs = a[i].ms + 1;
      snprintf(zSql, sizeof(zSql), "UPDATE c SET status = 'done' WHERE key ="
               " idem_key('u', 'c', 't', '%s') AND member = 0", a[i].zArgs);
      check(db, "c record", zSql, SQLITE_OK, 0);
      snprintf(zSql, sizeof(zSql), "SELECT updated = strftime('%%Y-%%m-%%d"
               " %%H:%%M:%%f', %lld / 1000.0, 'unixepoch') FROM c WHERE args = '%s'",
               (long long)(a[i].ms + 1), a[i].zArgs);
      checkInt(db, "c recorded", zSql, 1);
    }
  }

  /* d: the clock goes back an hour, and forward again (doc/contract.md
  ** §7): a claim and a member made meanwhile take the latest created, so
  ** created never goes back in rid order, and a purge by age (a range of
  ** rids in a format-4 table) takes what the same filter takes over a
  ** plain copy of the rows. */
  check(db, "create d", "CREATE VIRTUAL TABLE d USING idem(durability=relaxed)",
        SQLITE_OK, 0);
  iClockMs = T0 + 3600000;                              /* 01:00:00 */
  run(db, "d 1", "d", CLAIM("1"), SQLITE_OK);
  iClockMs = T0;                                        /* back to 00:00 */
  run(db, "d 2", "d", CLAIM("2"), SQLITE_OK);
  run(db, "d 2 member", "d", "INSERT INTO %s(key, member, id)"
      " VALUES(idem_key('u', 'c', 't', '2'), 1, 'm')", SQLITE_OK);
  iClockMs = T0 + 1800000;                              /* 00:30 */
  run(db, "d 3", "d", CLAIM("3"), SQLITE_OK);
  iClockMs = T0 + 7200000;                              /* 02:00 */
  run(db, "d 4", "d", CLAIM("4"), SQLITE_OK);
  runInt(db, "d created", "d", "SELECT group_concat(substr(created, 12, 5), ',')"
         " = '01:00,01:00,01:00,01:00,02:00' AND group_concat(substr(updated,"
         " 12, 5), ',') = '01:00,00:00,00:00,00:30,02:00' FROM (SELECT * FROM %s"
         " ORDER BY rowid)", 1);
  runInt(db, "d order", "d", "SELECT group_concat(rowid) = '1,2,3,4,5' FROM"
         " (SELECT rowid FROM %s ORDER BY created)", 1);
  run(db, "d done", "d", "UPDATE %s SET status = 'done' WHERE member = 0",
      SQLITE_OK);
  run(db, "d copy", "d", "CREATE TABLE dcopy AS SELECT rowid AS r, * FROM %s",
      SQLITE_OK);
  runInt(db, "d range", "d", "SELECT (SELECT group_concat(rowid) FROM %s WHERE"
         " created >= '2026-01-01 01:00:00.000' AND created < '2026-01-01"
         " 02:00') = (SELECT group_concat(r) FROM dcopy WHERE created >="
         " '2026-01-01 01:00:00.000' AND created < '2026-01-01 02:00')", 1);
  run(db, "d purge", "d", "DELETE FROM %s WHERE created < '2026-01-01 01:30'",
      SQLITE_OK);
  runInt(db, "d purged", "d", "SELECT group_concat(rowid) = '5' FROM %s", 1);

  sqlite3_close(db);
  unlink(zFile);
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail!=0;
}

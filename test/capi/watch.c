/* SPDX-License-Identifier: MIT */
/*
** watch.c -- a setting changed between two claims is seen (doc/contract.md
** §12), where a table keeps synchronous and a rollback journal mode from
** one transaction to the next (idem_durable.c, "THE WATCH"): a PRAGMA that
** sets journal_mode takes effect when it is stepped, which may be long
** after it was prepared, before the table's first claim (then the watch
** finds it among the connection's statements) or after it (then the watch
** sees it prepared).  Either way the claim after its step sees the mode.
** And a watched schema detached, another file attached under its name;
** and two copies of idem on one connection, the second (the loadable
** library, if named) watching main's file above the first; and main's
** file closed under a table of another schema that watched it.
**
**   cc -Iinclude test/capi/watch.c build/libidem.a -lsqlite3 -o x && ./x build/idem.so
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
#define SYNC_OFF "idem: c: external claim needs a durable commit: PRAGMA synchronous=OFF"
#define AUX_CLAIM(n) "INSERT INTO aux.c(who, conv, tool, args, kind) VALUES('u', '" n "', 't', '{}', 'external')"

static sqlite3 *openDb(const char *zDb){
  sqlite3 *db = 0;
  char z[300];
  static const char *az[] = { "", "-journal", "-wal", "-shm" };
  int k;
  for(k=0; k<4; k++){ snprintf(z, sizeof(z), "%s%s", zDb, az[k]); unlink(z); }
  sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE|SQLITE_OPEN_URI, 0);
  check(db, "mode", "PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL", SQLITE_OK, 0);
  return db;
}

/* A VFS "wrap" over the default one whose database files answer a file
** control of their own (WRAP_OP), as a VFS shim may: a call the watch
** passes on reaches the file's own method, also where the files watched
** have different ones (the watch's shortcut for those calls is taken only
** while all have the same). */
#define WRAP_OP 0x57524150
static sqlite3_vfs wrapVfs;
static sqlite3_io_methods wrapIo;
static const sqlite3_io_methods *pWrapOrig;
static int wrapFileControl(sqlite3_file *f, int op, void *pArg){
  if( op==WRAP_OP ){ *(int*)pArg = 42; return SQLITE_OK; }
  return pWrapOrig->xFileControl(f, op, pArg);
}
static int wrapOpen(sqlite3_vfs *pVfs, const char *zName, sqlite3_file *f,
                    int flags, int *pOut){
  sqlite3_vfs *pBase = (sqlite3_vfs*)pVfs->pAppData;
  int rc = pBase->xOpen(pBase, zName, f, flags, pOut);
  if( rc==SQLITE_OK && f->pMethods && (flags & SQLITE_OPEN_MAIN_DB) ){
    pWrapOrig = f->pMethods;
    wrapIo = *pWrapOrig;
    wrapIo.xFileControl = wrapFileControl;
    f->pMethods = &wrapIo;
  }
  return rc;
}

static void stepOnce(sqlite3 *db, const char *zName, sqlite3_stmt *p){
  int rc = sqlite3_step(p);
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ){ nPass++; }else{ nFail++; printf("! %s: %s\n", zName, sqlite3_errmsg(db)); }
  sqlite3_finalize(p);
}

int main(int argc, char **argv){
  sqlite3 *db;
  sqlite3_stmt *p = 0;
  /* A watch that found another's state would pass each call back to
  ** itself for ever: a hang is a failure, in seconds (the whole runs in
  ** well under one). */
  alarm(10);
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

  /* 5. Two copies of idem on one connection: this program's (static) and
  ** the loadable library (argv[1]) loaded on top of it, whose table in an
  ** attached file puts its watch on main's file above this copy's.  Each
  ** copy finds its watch by the file, not through pMethods (which is the
  ** other's then): both see the PRAGMAs, and each lets go of its own. */
  if( argc>1 ){
    char *zErr = 0;
    int rc;
    db = openDb("watch5.db");
    unlink("watch5a.db"); unlink("watch5a.db-journal");
    check(db, "5 create", "CREATE VIRTUAL TABLE c USING idem", SQLITE_OK, 0);
    check(db, "5 claim", CLAIM("1"), SQLITE_OK, 0);
    sqlite3_enable_load_extension(db, 1);
    rc = sqlite3_load_extension(db, argv[1], "sqlite3_idem_init", &zErr);
    if( rc==SQLITE_OK ){ nPass++; }else{ nFail++; printf("! 5 load: %s\n", zErr); }
    sqlite3_free(zErr);
    check(db, "5 attach", "ATTACH 'watch5a.db' AS aux; PRAGMA aux.journal_mode=DELETE;"
          " PRAGMA aux.synchronous=FULL; CREATE VIRTUAL TABLE aux.c USING idem",
          SQLITE_OK, 0);
    check(db, "5 claim aux", AUX_CLAIM("1"), SQLITE_OK, 0);
    check(db, "5 claim main", CLAIM("2"), SQLITE_OK, 0);
    check(db, "5 off", "PRAGMA synchronous=OFF; PRAGMA aux.synchronous=OFF", SQLITE_OK, 0);
    check(db, "5 main off", CLAIM("3"), SQLITE_ERROR, SYNC_OFF);
    check(db, "5 aux off", AUX_CLAIM("2"), SQLITE_ERROR,
          "idem: c: external claim needs a durable commit: PRAGMA aux.synchronous=OFF");
    check(db, "5 full", "PRAGMA synchronous=FULL; PRAGMA aux.synchronous=FULL", SQLITE_OK, 0);
    check(db, "5 main full", CLAIM("4"), SQLITE_OK, 0);
    check(db, "5 aux full", AUX_CLAIM("3"), SQLITE_OK, 0);
    check(db, "5 detach", "DETACH aux", SQLITE_OK, 0);
    check(db, "5 main after", CLAIM("5"), SQLITE_OK, 0);
    check(db, "5 memory", "PRAGMA journal_mode=MEMORY", SQLITE_OK, 0);
    check(db, "5 main in MEMORY", CLAIM("6"), SQLITE_ERROR, MEMORY);
    checkInt(db, "5 claims", "SELECT count(*) FROM c", 4);
    sqlite3_close(db);
    unlink("watch5.db"); unlink("watch5a.db");
  }

  /* 6. main's file of the default VFS, then one of "wrap" attached: both
  ** watched, with different file controls; the wrap's own still answers
  ** through the watch, and the watch still sees the PRAGMAs. */
  {
    int x = 0;
    wrapVfs = *sqlite3_vfs_find(0);
    wrapVfs.zName = "wrap";
    wrapVfs.pAppData = sqlite3_vfs_find(0);
    wrapVfs.xOpen = wrapOpen;
    sqlite3_vfs_register(&wrapVfs, 0);
    db = openDb("watch6.db");
    unlink("watch6a.db"); unlink("watch6a.db-journal");
    check(db, "6 create", "CREATE VIRTUAL TABLE c USING idem", SQLITE_OK, 0);
    check(db, "6 claim", CLAIM("1"), SQLITE_OK, 0);
    check(db, "6 attach", "ATTACH 'file:watch6a.db?vfs=wrap' AS aux;"
          " PRAGMA aux.journal_mode=DELETE; PRAGMA aux.synchronous=FULL;"
          " CREATE VIRTUAL TABLE aux.c USING idem", SQLITE_OK, 0);
    check(db, "6 claim aux", AUX_CLAIM("1"), SQLITE_OK, 0);
    if( sqlite3_file_control(db, "aux", WRAP_OP, &x)==SQLITE_OK && x==42 ){
      nPass++;
    }else{
      nFail++;
      printf("! 6 the wrap's file control did not reach it\n");
    }
    check(db, "6 aux off", "PRAGMA aux.synchronous=OFF", SQLITE_OK, 0);
    check(db, "6 claim aux off", AUX_CLAIM("2"), SQLITE_ERROR,
          "idem: c: external claim needs a durable commit: PRAGMA aux.synchronous=OFF");
    check(db, "6 detach", "DETACH aux", SQLITE_OK, 0);
    sqlite3_close(db);
    sqlite3_vfs_unregister(&wrapVfs);
    unlink("watch6.db"); unlink("watch6a.db");
  }

  /* 7. A table in an attached file watches main's file too, and keeps a
  ** pointer to each watch: main's file closed under it (main reopened in
  ** memory by sqlite3_deserialize()) frees main's watch, and the table
  ** must not read it again.  A journal_mode set without a schema (every
  ** schema's, sent to main's file, no longer watched) is then seen by
  ** the settings read at every transaction. */
  db = openDb("watch7.db");
  unlink("watch7a.db"); unlink("watch7a.db-journal");
  check(db, "7 attach", "ATTACH 'watch7a.db' AS aux; PRAGMA aux.journal_mode=DELETE;"
        " PRAGMA aux.synchronous=FULL; CREATE VIRTUAL TABLE aux.c USING idem",
        SQLITE_OK, 0);
  check(db, "7 claim", AUX_CLAIM("1"), SQLITE_OK, 0);
  check(db, "7 claim, kept", AUX_CLAIM("2"), SQLITE_OK, 0);
  if( sqlite3_deserialize(db, "main", 0, 0, 0, SQLITE_DESERIALIZE_RESIZEABLE)
        ==SQLITE_OK ){
    nPass++;
  }else{
    nFail++;
    printf("! 7 deserialize: %s\n", sqlite3_errmsg(db));
  }
  check(db, "7 claim after", AUX_CLAIM("3"), SQLITE_OK, 0);
  check(db, "7 off", "PRAGMA journal_mode=OFF", SQLITE_OK, 0);
  check(db, "7 claim in OFF", AUX_CLAIM("4"), SQLITE_ERROR,
        "idem: c: external claim needs a durable commit: PRAGMA aux.journal_mode=OFF");
  checkInt(db, "7 claims", "SELECT count(*) FROM aux.c", 3);
  sqlite3_close(db);
  unlink("watch7.db"); unlink("watch7a.db");

  unlink("watch1.db"); unlink("watch2.db"); unlink("watch3.db");
  unlink("watch4.db"); unlink("watch4a.db"); unlink("watch4b.db");
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail>0;
}

/* SPDX-License-Identifier: MIT */
/*
** dirsync.c -- a sync that failed is never a success (doc/contract.md
** §12).  An external call's COMMIT that needs its directory synced fails,
** before anything is committed (at xSync), when the directory cannot be
** opened to sync it (a directory without read permission: the unix VFS
** skips the sync and only logs it) or, in DELETE mode at FULL, when idem's
** marker file cannot be made next to the database; a sync that fails
** after the COMMIT (an I/O error) fails the table's next claim.  Root
** reads any directory, so a shim over the default VFS plays them.
**
**   cc -Iinclude test/capi/dirsync.c build/libidem.a -lsqlite3 -o x && ./x
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

static sqlite3_vfs *pRoot;
static sqlite3_vfs dsVfs;
static int bNoDirRead;          /* xAccess: no directory can be read */
static int bNoMarker;           /* xOpen of "...-idem..." fails */
static int bDeleteFails;        /* xDelete(dirSync) of "...-idem..." fails */
static int nMarkerDeleted;

static int isMarker(const char *z){ return z && strstr(z, "-idem")!=0; }

static int dsOpen(sqlite3_vfs *v, const char *z, sqlite3_file *f, int fl, int *po){
  (void)v;
  if( bNoMarker && isMarker(z) ){ f->pMethods = 0; return SQLITE_CANTOPEN; }
  return pRoot->xOpen(pRoot, z, f, fl, po);
}
static int dsDelete(sqlite3_vfs *v, const char *z, int d){
  (void)v;
  if( isMarker(z) ){
    nMarkerDeleted++;
    if( bDeleteFails ){
      pRoot->xDelete(pRoot, z, 0);
      return SQLITE_IOERR_DIR_FSYNC;
    }
  }
  return pRoot->xDelete(pRoot, z, d);
}
static int dsAccess(sqlite3_vfs *v, const char *z, int f, int *p){
  int rc;
  (void)v;
  rc = pRoot->xAccess(pRoot, z, f, p);
  if( bNoDirRead && f==SQLITE_ACCESS_READWRITE && strstr(z, ".db")==0 ) *p = 0;
  return rc;
}
static int dsFull(sqlite3_vfs *v, const char *z, int n, char *o){ (void)v; return pRoot->xFullPathname(pRoot, z, n, o); }
static int dsRandom(sqlite3_vfs *v, int n, char *z){ (void)v; return pRoot->xRandomness(pRoot, n, z); }
static int dsSleep(sqlite3_vfs *v, int n){ (void)v; return pRoot->xSleep(pRoot, n); }
static int dsTime(sqlite3_vfs *v, double *p){ (void)v; return pRoot->xCurrentTime(pRoot, p); }
static int dsTime64(sqlite3_vfs *v, sqlite3_int64 *p){ (void)v; return pRoot->xCurrentTimeInt64(pRoot, p); }
static int dsLastError(sqlite3_vfs *v, int n, char *z){ (void)v; return pRoot->xGetLastError(pRoot, n, z); }

#define CLAIM(n) "INSERT INTO c(who, conv, tool, args, kind) VALUES('u', '" n "', 't', '{}', 'external')"
#define RECORD(n) "UPDATE c SET status = 'done', id = 1, result = 'ok' WHERE key = idem_key('u', '" n "', 't', '{}') AND member = 0"
#define NODIR "idem: c: an external call's COMMIT needs the directory of the database synced, and "
#define NOMARKER "idem: c: an external call's COMMIT in DELETE mode at synchronous=FULL is made durable by a directory sync after it"
#define LOST "idem: c: the directory sync after this table's last COMMIT of an external call failed"

int main(void){
  const char *zDb = "dirsync.db";
  sqlite3 *db = 0;
  int i;
  pRoot = sqlite3_vfs_find(0);
  dsVfs = *pRoot;
  dsVfs.pNext = 0;
  dsVfs.zName = "dirsync";
  dsVfs.xOpen = dsOpen; dsVfs.xDelete = dsDelete; dsVfs.xAccess = dsAccess;
  dsVfs.xFullPathname = dsFull; dsVfs.xRandomness = dsRandom;
  dsVfs.xSleep = dsSleep; dsVfs.xCurrentTime = dsTime;
  dsVfs.xGetLastError = dsLastError; dsVfs.xCurrentTimeInt64 = dsTime64;
  dsVfs.xDlOpen = 0; dsVfs.xDlError = 0; dsVfs.xDlSym = 0; dsVfs.xDlClose = 0;
  dsVfs.xSetSystemCall = 0; dsVfs.xGetSystemCall = 0; dsVfs.xNextSystemCall = 0;
  sqlite3_vfs_register(&dsVfs, 0);
  sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
  for(i=0; i<2; i++){
    const char *zMode = i==0 ? "PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL"
                             : "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL";
    unlink(zDb);
    sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, "dirsync");
    check(db, "mode", zMode, SQLITE_OK, 0);
    check(db, "create", "CREATE VIRTUAL TABLE c USING idem;"
          " CREATE VIRTUAL TABLE cr USING idem(durability=relaxed)", SQLITE_OK, 0);
    /* A directory that cannot be opened: refused at xSync, both modes. */
    bNoDirRead = 1;
    check(db, i ? "no dir read, WAL" : "no dir read, DELETE", CLAIM("1"), SQLITE_ERROR, NODIR);
    checkInt(db, "not committed", "SELECT count(*) FROM c", 0);
    check(db, "relaxed: no sync needed", "INSERT INTO cr(who, conv, tool, args, kind)"
          " VALUES('u', '1', 't', '{}', 'external')", SQLITE_OK, 0);
    check(db, "local: no sync needed", "BEGIN; INSERT INTO c(who, conv, tool, args)"
          " VALUES('u', 'l', 't', '{}'); UPDATE c SET status = 'done' WHERE"
          " key = idem_key('u', 'l', 't', '{}') AND member = 0; COMMIT", SQLITE_OK, 0);
    bNoDirRead = 0;
    /* No marker can be made: refused in DELETE mode at FULL only. */
    bNoMarker = 1;
    check(db, i ? "no marker, WAL" : "no marker, DELETE", CLAIM("2"),
          i ? SQLITE_OK : SQLITE_CANTOPEN, i ? 0 : NOMARKER);
    checkInt(db, "committed in WAL only", "SELECT count(*) FROM c WHERE conv = '2'", i);
    bNoMarker = 0;
    sqlite3_close(db);
  }
  /* A record (an external call's outcome) in WAL mode reads no setting
  ** and syncs no directory; after the connection leaves WAL for DELETE
  ** (between two transactions), the next record's COMMIT is synced again. */
  unlink(zDb);
  sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, "dirsync");
  check(db, "mode", "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
        " CREATE VIRTUAL TABLE c USING idem", SQLITE_OK, 0);
  check(db, "claims", CLAIM("r1") "; " CLAIM("r2") "; " CLAIM("r3"), SQLITE_OK, 0);
  nMarkerDeleted = 0;
  check(db, "record, WAL", RECORD("r1"), SQLITE_OK, 0);
  check(db, "record, WAL again", RECORD("r2"), SQLITE_OK, 0);
  check(db, "to DELETE", "PRAGMA journal_mode=DELETE", SQLITE_OK, 0);
  check(db, "record, DELETE", RECORD("r3"), SQLITE_OK, 0);
  if( nMarkerDeleted==1 ){ nPass++; }else{ nFail++; printf("! WAL then DELETE: marker deleted %d times\n", nMarkerDeleted); }
  checkInt(db, "recorded", "SELECT count(*) FROM c WHERE status = 'done'", 3);
  sqlite3_close(db);
  /* The sync after the COMMIT fails: the COMMIT has returned, and the
  ** table's next claim says so, once. */
  unlink(zDb);
  sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, "dirsync");
  check(db, "mode", "PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL;"
        " CREATE VIRTUAL TABLE c USING idem", SQLITE_OK, 0);
  nMarkerDeleted = 0;
  check(db, "synced", CLAIM("3"), SQLITE_OK, 0);
  checkInt(db, "the marker deleted once", "SELECT 0", 0);
  if( nMarkerDeleted==1 ){ nPass++; }else{ nFail++; printf("! marker deleted %d times\n", nMarkerDeleted); }
  bDeleteFails = 1;
  check(db, "sync fails after", CLAIM("4"), SQLITE_OK, 0);
  bDeleteFails = 0;
  check(db, "next claim told", CLAIM("5"), SQLITE_IOERR, LOST);
  check(db, "once", CLAIM("5"), SQLITE_OK, 0);
  checkInt(db, "claims", "SELECT count(*) FROM c", 3);
  sqlite3_close(db);
  unlink(zDb);
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}

/* SPDX-License-Identifier: MIT */
/*
** nolock.c -- no lock, no claim (doc/contract.md §12): a VFS of the
** application's own whose files do not lock (a shim over the default VFS
** whose xLock does nothing and whose xCheckReservedLock says no lock is
** held), under a name idem does not know, is refused for claims, with a
** message that names it; the same shim that passes the locks through is
** accepted, and two connections through it do not both claim one call.
** Tcl cannot register a VFS.
**
**   cc -Iinclude test/capi/nolock.c build/libidem.a -lsqlite3 -o x && ./x
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
static sqlite3_vfs shimVfs;           /* "nolockshim": no locks */
static sqlite3_vfs passVfs;           /* "lockshim": the root's locks */
static sqlite3_io_methods shimMethods, passMethods;

typedef struct ShimFile ShimFile;
struct ShimFile { sqlite3_file base; sqlite3_file *pReal; };
#define REAL(f) (((ShimFile*)(f))->pReal)

static int shimClose(sqlite3_file *f){ return REAL(f)->pMethods->xClose(REAL(f)); }
static int shimRead(sqlite3_file *f, void *p, int n, sqlite3_int64 o){
  return REAL(f)->pMethods->xRead(REAL(f), p, n, o);
}
static int shimWrite(sqlite3_file *f, const void *p, int n, sqlite3_int64 o){
  return REAL(f)->pMethods->xWrite(REAL(f), p, n, o);
}
static int shimTruncate(sqlite3_file *f, sqlite3_int64 n){
  return REAL(f)->pMethods->xTruncate(REAL(f), n);
}
static int shimSync(sqlite3_file *f, int flags){
  return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int shimFileSize(sqlite3_file *f, sqlite3_int64 *p){
  return REAL(f)->pMethods->xFileSize(REAL(f), p);
}
static int noLock(sqlite3_file *f, int e){ (void)f; (void)e; return SQLITE_OK; }
static int noCheck(sqlite3_file *f, int *p){ (void)f; *p = 0; return SQLITE_OK; }
static int passLock(sqlite3_file *f, int e){ return REAL(f)->pMethods->xLock(REAL(f), e); }
static int passUnlock(sqlite3_file *f, int e){ return REAL(f)->pMethods->xUnlock(REAL(f), e); }
static int passCheck(sqlite3_file *f, int *p){
  return REAL(f)->pMethods->xCheckReservedLock(REAL(f), p);
}
static int shimFcntl(sqlite3_file *f, int op, void *p){
  return REAL(f)->pMethods->xFileControl(REAL(f), op, p);
}
static int shimSector(sqlite3_file *f){ return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int shimDevice(sqlite3_file *f){
  return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int shimOpen(sqlite3_vfs *v, const char *z, sqlite3_file *f, int fl, int *po){
  ShimFile *p = (ShimFile*)f;
  int rc;
  p->pReal = (sqlite3_file*)&p[1];
  rc = pRoot->xOpen(pRoot, z, p->pReal, fl, po);
  f->pMethods = p->pReal->pMethods
              ? (v==&shimVfs ? &shimMethods : &passMethods) : 0;
  return rc;
}
static int shimDelete(sqlite3_vfs *v, const char *z, int d){ (void)v; return pRoot->xDelete(pRoot, z, d); }
static int shimAccess(sqlite3_vfs *v, const char *z, int f, int *p){ (void)v; return pRoot->xAccess(pRoot, z, f, p); }
static int shimFull(sqlite3_vfs *v, const char *z, int n, char *o){ (void)v; return pRoot->xFullPathname(pRoot, z, n, o); }
static int shimRandom(sqlite3_vfs *v, int n, char *z){ (void)v; return pRoot->xRandomness(pRoot, n, z); }
static int shimSleep(sqlite3_vfs *v, int n){ (void)v; return pRoot->xSleep(pRoot, n); }
static int shimTime(sqlite3_vfs *v, double *p){ (void)v; return pRoot->xCurrentTime(pRoot, p); }
static int shimTime64(sqlite3_vfs *v, sqlite3_int64 *p){ (void)v; return pRoot->xCurrentTimeInt64(pRoot, p); }
static int shimLastError(sqlite3_vfs *v, int n, char *z){ (void)v; return pRoot->xGetLastError(pRoot, n, z); }

static void setup(void){
  sqlite3_io_methods m;
  memset(&m, 0, sizeof(m));
  m.iVersion = 1;                       /* no shared memory: WAL needs
                                        ** locking_mode=EXCLUSIVE */
  m.xClose = shimClose; m.xRead = shimRead; m.xWrite = shimWrite;
  m.xTruncate = shimTruncate; m.xSync = shimSync; m.xFileSize = shimFileSize;
  m.xFileControl = shimFcntl; m.xSectorSize = shimSector;
  m.xDeviceCharacteristics = shimDevice;
  shimMethods = passMethods = m;
  shimMethods.xLock = noLock; shimMethods.xUnlock = noLock;
  shimMethods.xCheckReservedLock = noCheck;
  passMethods.xLock = passLock; passMethods.xUnlock = passUnlock;
  passMethods.xCheckReservedLock = passCheck;
  pRoot = sqlite3_vfs_find(0);
  memset(&shimVfs, 0, sizeof(shimVfs));
  shimVfs.iVersion = 2;
  shimVfs.szOsFile = (int)sizeof(ShimFile) + pRoot->szOsFile;
  shimVfs.mxPathname = pRoot->mxPathname;
  shimVfs.zName = "nolockshim";
  shimVfs.xOpen = shimOpen; shimVfs.xDelete = shimDelete;
  shimVfs.xAccess = shimAccess; shimVfs.xFullPathname = shimFull;
  shimVfs.xRandomness = shimRandom; shimVfs.xSleep = shimSleep;
  shimVfs.xCurrentTime = shimTime; shimVfs.xGetLastError = shimLastError;
  shimVfs.xCurrentTimeInt64 = shimTime64;
  passVfs = shimVfs;
  passVfs.zName = "lockshim";
  sqlite3_vfs_register(&shimVfs, 0);
  sqlite3_vfs_register(&passVfs, 0);
}

#define CLAIM "BEGIN; INSERT INTO c(who, conv, tool, args) VALUES('u', 'x', 't', '{}');" \
  " UPDATE c SET status = 'done' WHERE key = idem_key('u', 'x', 't', '{}') AND member = 0;" \
  " COMMIT"
#define NOLOCK "idem: c: a claim needs file locking that arbitrates between" \
  " connections: schema 'main' is opened with vfs=nolockshim, whose file" \
  " does not report the write lock this connection holds"

int main(void){
  const char *zDb = "nolock.db";
  sqlite3 *db = 0, *db2 = 0;
  int i;
  setup();
  sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
  unlink(zDb);
  sqlite3_open(zDb, &db);
  check(db, "create", "CREATE VIRTUAL TABLE c USING idem", SQLITE_OK, 0);
  sqlite3_close(db);
  for(i=0; i<2; i++){
    const char *zMode = i==0 ? "PRAGMA journal_mode=DELETE"
        : "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL";
    sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READWRITE, "nolockshim");
    check(db, "mode", zMode, SQLITE_OK, 0);
    check(db, i ? "nolockshim WAL exclusive" : "nolockshim DELETE",
          CLAIM, SQLITE_ERROR, NOLOCK);
    sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
    checkInt(db, "nothing claimed", "SELECT count(*) FROM c", 0);
    sqlite3_close(db);
  }
  /* The same shim with the root's locks: accepted, and a second
  ** connection waits for the first's claim. */
  unlink(zDb);
  sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, "lockshim");
  sqlite3_open_v2(zDb, &db2, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, "lockshim");
  check(db, "lockshim create", "CREATE VIRTUAL TABLE c USING idem", SQLITE_OK, 0);
  check(db, "lockshim claim", "BEGIN; INSERT INTO c(who, conv, tool, args)"
        " VALUES('u', 'y', 't', '{}')", SQLITE_OK, 0);
  check(db2, "lockshim second", "INSERT INTO c(who, conv, tool, args, kind)"
        " VALUES('u', 'y', 't', '{}', 'external')", SQLITE_BUSY, 0);
  check(db, "lockshim done", "UPDATE c SET status = 'done' WHERE"
        " key = idem_key('u', 'y', 't', '{}') AND member = 0; COMMIT", SQLITE_OK, 0);
  checkInt(db2, "one call", "SELECT count(*) FROM c", 1);
  sqlite3_close(db2);
  sqlite3_close(db);
  /* Shared cache (SQLITE_OPEN_SHAREDCACHE: nothing in the file name says
  ** so): a claim made while the connection is alone is refused at COMMIT
  ** once a second connection shares the cache (its synchronous=OFF would
  ** decide how the COMMIT syncs), and a claim made while it shares too. */
  sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_SHAREDCACHE, 0);
  check(db, "shared alone", "BEGIN; INSERT INTO c(who, conv, tool, args, kind)"
        " VALUES('u', 's', 't', '{}', 'external')", SQLITE_OK, 0);
  sqlite3_open_v2(zDb, &db2, SQLITE_OPEN_READWRITE|SQLITE_OPEN_SHAREDCACHE, 0);
  check(db, "shared at COMMIT", "COMMIT", SQLITE_ERROR,
        "idem: c: a claim needs file locking that arbitrates between"
        " connections: schema 'main' is opened with a shared cache");
  sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
  check(db2, "shared claim", "INSERT INTO c(who, conv, tool, args, kind)"
        " VALUES('u', 's', 't', '{}', 'external')", SQLITE_ERROR,
        "idem: c: a claim needs file locking that arbitrates between"
        " connections: schema 'main' is opened with a shared cache");
  checkInt(db2, "nothing shared claimed", "SELECT count(*) FROM c WHERE conv = 's'", 0);
  sqlite3_close(db2);
  sqlite3_close(db);
  /* ... and after COMMITs made alone, which the connection keeps from one
  ** to the next while no connection opened the file since (the watch
  ** counts SQLITE_FCNTL_PDB): one that joins is seen at the next COMMIT;
  ** one that joined and left is no shared cache. */
  sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_SHAREDCACHE, 0);
  check(db, "alone 1", "BEGIN; INSERT INTO c(who, conv, tool, args, kind)"
        " VALUES('u', 'a1', 't', '{}', 'external'); COMMIT", SQLITE_OK, 0);
  check(db, "alone 2", "BEGIN; INSERT INTO c(who, conv, tool, args, kind)"
        " VALUES('u', 'a2', 't', '{}', 'external'); COMMIT", SQLITE_OK, 0);
  sqlite3_open_v2(zDb, &db2, SQLITE_OPEN_READWRITE|SQLITE_OPEN_SHAREDCACHE, 0);
  check(db, "joined after COMMITs", "BEGIN; INSERT INTO c(who, conv, tool, args, kind)"
        " VALUES('u', 'a3', 't', '{}', 'external')", SQLITE_OK, 0);
  check(db, "joined at COMMIT", "COMMIT", SQLITE_ERROR,
        "idem: c: a claim needs file locking that arbitrates between"
        " connections: schema 'main' is opened with a shared cache");
  sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
  sqlite3_close(db2);
  check(db, "left", "BEGIN; INSERT INTO c(who, conv, tool, args, kind)"
        " VALUES('u', 'a4', 't', '{}', 'external'); COMMIT", SQLITE_OK, 0);
  check(db, "alone again", "BEGIN; INSERT INTO c(who, conv, tool, args, kind)"
        " VALUES('u', 'a5', 't', '{}', 'external'); COMMIT", SQLITE_OK, 0);
  checkInt(db, "claims made alone", "SELECT count(*) FROM c WHERE conv LIKE 'a_'", 4);
  sqlite3_close(db);
  unlink(zDb);
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}

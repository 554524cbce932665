/* SPDX-License-Identifier: MIT */
/*
** crashdrv.c -- run one recipe of the idem protocol once, and kill this
** process with SIGKILL at a chosen point.  test/reliability/crash.py
** builds it, runs it at every point, and checks what is left behind.
**
**   crashdrv LIB CALLS_DB TARGET_DB RECIPE POINT
**
** RECIPE is "local" (claim, act and record in one transaction) or
** "external" (the claim commits alone; then the "send", an INSERT into
** TARGET_DB standing in for the other system; then the record).
**
** POINT is "none" (run to the end), a step (before_claim, after_claim,
** after_action, after_record, after_commit), or PHASE:WHERE for a point
** inside a commit.  PHASE names the commit: "commit" (the local COMMIT),
** "claim" or "record" (the external recipe's two autocommit statements).
** WHERE is one of
**   hook                     the commit hook: every statement done, the
**                            pager's commit not started
**   journal_synced           rollback journal written and synced, before
**                            the first write to the database file
**   db_half_written          after the first page written to the database
**                            file (the others not yet)
**   before_journal_delete    database file written and synced; the journal
**                            still there (its deletion is the commit point)
**   after_journal_delete     just after the journal is deleted
**   wal_before_commit_frame  in WAL mode: every frame of the transaction
**                            written but its commit frame
**   wal_after_commit_frame   the commit frame written, not yet synced, the
**                            wal-index not updated
**   wal_after_sync           the WAL synced, the wal-index not updated
** The journal_* and wal_* points are found by a VFS shim ("crash") that
** watches the writes, syncs and deletes of CALLS_DB's files.
**
** Output, one line on stdout: "exec ID" (this run claimed and executed;
** ID is the effect or arrival rowid) or "replay STATUS ID REPLY" (the call
** was already claimed; nothing executed).  Before a SIGKILL, the point is
** written to stderr as "crashdrv: SIGKILL at POINT".
*/
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>

static const char *zPoint = "none";     /* the whole POINT argument */
static const char *zWhere = "";         /* the part after ':', if any */
static int bArmed = 0;                  /* inside the commit PHASE names */
static int bCommitFrame = 0;            /* the commit frame has been written */

static void die(void){
  fprintf(stderr, "crashdrv: SIGKILL at %s\n", zPoint);
  fflush(stdout);
  fflush(stderr);
  kill(getpid(), SIGKILL);
  for(;;) pause();
}

/* A step of the recipe. */
static void step(const char *zStep){
  if( strcmp(zPoint, zStep)==0 ) die();
}

/* Arm the commit points while the statement that commits PHASE runs. */
static void arm(const char *zPhase){
  size_t n = strlen(zPhase);
  bArmed = strncmp(zPoint, zPhase, n)==0 && zPoint[n]==':';
  bCommitFrame = 0;
}
static int at(const char *z){ return bArmed && strcmp(zWhere, z)==0; }

/* ---- the VFS shim -------------------------------------------------------- */
typedef struct CrashFile CrashFile;
struct CrashFile {
  sqlite3_file base;
  int eType;                    /* SQLITE_OPEN_MAIN_DB, _MAIN_JOURNAL, _WAL */
  sqlite3_file *pReal;          /* the real file, allocated after this */
};
#define REAL(f) (((CrashFile*)(f))->pReal)
#define TYPE(f) (((CrashFile*)(f))->eType)
static sqlite3_vfs *pOrig;

/* Bytes 4..7 of a WAL frame header: the database size after a commit
** frame, 0 in every other frame. */
static int isCommitFrameHeader(const void *z, int n){
  const unsigned char *a = (const unsigned char*)z;
  return n==24 && (a[4] | a[5] | a[6] | a[7])!=0;
}

static int cClose(sqlite3_file *f){
  return REAL(f)->pMethods->xClose(REAL(f));
}
static int cRead(sqlite3_file *f, void *z, int n, sqlite3_int64 off){
  return REAL(f)->pMethods->xRead(REAL(f), z, n, off);
}
static int cWrite(sqlite3_file *f, const void *z, int n, sqlite3_int64 off){
  int rc;
  if( TYPE(f)==SQLITE_OPEN_MAIN_DB && at("journal_synced") ) die();
  if( TYPE(f)==SQLITE_OPEN_WAL && isCommitFrameHeader(z, n)
   && at("wal_before_commit_frame") ) die();
  rc = REAL(f)->pMethods->xWrite(REAL(f), z, n, off);
  if( TYPE(f)==SQLITE_OPEN_MAIN_DB && at("db_half_written") ) die();
  if( TYPE(f)==SQLITE_OPEN_WAL ){
    if( bCommitFrame && at("wal_after_commit_frame") ) die();  /* its page */
    if( isCommitFrameHeader(z, n) ) bCommitFrame = 1;
  }
  return rc;
}
static int cTruncate(sqlite3_file *f, sqlite3_int64 size){
  return REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int cSync(sqlite3_file *f, int flags){
  int rc = REAL(f)->pMethods->xSync(REAL(f), flags);
  if( TYPE(f)==SQLITE_OPEN_WAL && bCommitFrame && at("wal_after_sync") ) die();
  return rc;
}
static int cFileSize(sqlite3_file *f, sqlite3_int64 *pSize){
  return REAL(f)->pMethods->xFileSize(REAL(f), pSize);
}
static int cLock(sqlite3_file *f, int e){
  return REAL(f)->pMethods->xLock(REAL(f), e);
}
static int cUnlock(sqlite3_file *f, int e){
  return REAL(f)->pMethods->xUnlock(REAL(f), e);
}
static int cCheckReservedLock(sqlite3_file *f, int *pOut){
  return REAL(f)->pMethods->xCheckReservedLock(REAL(f), pOut);
}
static int cFileControl(sqlite3_file *f, int op, void *pArg){
  return REAL(f)->pMethods->xFileControl(REAL(f), op, pArg);
}
static int cSectorSize(sqlite3_file *f){
  return REAL(f)->pMethods->xSectorSize(REAL(f));
}
static int cDeviceCharacteristics(sqlite3_file *f){
  return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int cShmMap(sqlite3_file *f, int i, int sz, int b, void volatile **pp){
  return REAL(f)->pMethods->xShmMap(REAL(f), i, sz, b, pp);
}
static int cShmLock(sqlite3_file *f, int ofst, int n, int flags){
  return REAL(f)->pMethods->xShmLock(REAL(f), ofst, n, flags);
}
static void cShmBarrier(sqlite3_file *f){
  REAL(f)->pMethods->xShmBarrier(REAL(f));
}
static int cShmUnmap(sqlite3_file *f, int deleteFlag){
  return REAL(f)->pMethods->xShmUnmap(REAL(f), deleteFlag);
}
static int cFetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp){
  return REAL(f)->pMethods->xFetch(REAL(f), off, n, pp);
}
static int cUnfetch(sqlite3_file *f, sqlite3_int64 off, void *p){
  return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

static const sqlite3_io_methods crashIo = {
  3, cClose, cRead, cWrite, cTruncate, cSync, cFileSize, cLock, cUnlock,
  cCheckReservedLock, cFileControl, cSectorSize, cDeviceCharacteristics,
  cShmMap, cShmLock, cShmBarrier, cShmUnmap, cFetch, cUnfetch
};

static int vOpen(sqlite3_vfs *pVfs, const char *zName, sqlite3_file *f,
                 int flags, int *pOutFlags){
  CrashFile *p = (CrashFile*)f;
  int rc;
  (void)pVfs;
  p->pReal = (sqlite3_file*)&p[1];
  p->eType = flags & (SQLITE_OPEN_MAIN_DB|SQLITE_OPEN_MAIN_JOURNAL|SQLITE_OPEN_WAL);
  rc = pOrig->xOpen(pOrig, zName, p->pReal, flags, pOutFlags);
  f->pMethods = p->pReal->pMethods ? &crashIo : 0;
  return rc;
}
static int vDelete(sqlite3_vfs *pVfs, const char *zName, int syncDir){
  size_t n = strlen(zName);
  int isJournal = n>8 && strcmp(zName+n-8, "-journal")==0;
  int rc;
  (void)pVfs;
  if( isJournal && at("before_journal_delete") ) die();
  rc = pOrig->xDelete(pOrig, zName, syncDir);
  if( isJournal && at("after_journal_delete") ) die();
  return rc;
}
static int vAccess(sqlite3_vfs *v, const char *z, int flags, int *pOut){
  (void)v; return pOrig->xAccess(pOrig, z, flags, pOut);
}
static int vFullPathname(sqlite3_vfs *v, const char *z, int n, char *zOut){
  (void)v; return pOrig->xFullPathname(pOrig, z, n, zOut);
}
static void *vDlOpen(sqlite3_vfs *v, const char *z){
  (void)v; return pOrig->xDlOpen(pOrig, z);
}
static void vDlError(sqlite3_vfs *v, int n, char *z){
  (void)v; pOrig->xDlError(pOrig, n, z);
}
static void (*vDlSym(sqlite3_vfs *v, void *p, const char *z))(void){
  (void)v; return pOrig->xDlSym(pOrig, p, z);
}
static void vDlClose(sqlite3_vfs *v, void *p){
  (void)v; pOrig->xDlClose(pOrig, p);
}
static int vRandomness(sqlite3_vfs *v, int n, char *z){
  (void)v; return pOrig->xRandomness(pOrig, n, z);
}
static int vSleep(sqlite3_vfs *v, int us){
  (void)v; return pOrig->xSleep(pOrig, us);
}
static int vCurrentTime(sqlite3_vfs *v, double *p){
  (void)v; return pOrig->xCurrentTime(pOrig, p);
}
static int vGetLastError(sqlite3_vfs *v, int n, char *z){
  (void)v; return pOrig->xGetLastError(pOrig, n, z);
}
static int vCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *p){
  (void)v; return pOrig->xCurrentTimeInt64(pOrig, p);
}

static sqlite3_vfs crashVfs = {
  2, 0, 1024, 0, "crash", 0,
  vOpen, vDelete, vAccess, vFullPathname, vDlOpen, vDlError, vDlSym,
  vDlClose, vRandomness, vSleep, vCurrentTime, vGetLastError,
  vCurrentTimeInt64, 0, 0, 0
};

/* ---- the recipes ----------------------------------------------------------- */
static sqlite3 *db;        /* CALLS_DB, through the shim */
static sqlite3 *target;    /* TARGET_DB, the other system */

static void fail(sqlite3 *d, const char *zSql){
  fprintf(stderr, "crashdrv: %s\n  in: %s\n", sqlite3_errmsg(d), zSql);
  exit(2);
}
/* Run SQL made with sqlite3_mprintf() formats. */
static void exec(sqlite3 *d, const char *zFmt, ...){
  va_list ap;
  char *zSql;
  va_start(ap, zFmt);
  zSql = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  if( zSql==0 || sqlite3_exec(d, zSql, 0, 0, 0)!=SQLITE_OK ) fail(d, zSql);
  sqlite3_free(zSql);
}
/* The first row of a query, its columns joined by spaces (NULL as "-");
** the caller frees it with sqlite3_free(). */
static char *row(sqlite3 *d, const char *zFmt, ...){
  va_list ap;
  sqlite3_stmt *p;
  char *zSql, *z = 0;
  int i;
  va_start(ap, zFmt);
  zSql = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  if( zSql==0 || sqlite3_prepare_v2(d, zSql, -1, &p, 0)!=SQLITE_OK ) fail(d, zSql);
  if( sqlite3_step(p)!=SQLITE_ROW ) fail(d, zSql);
  for(i=0; i<sqlite3_column_count(p); i++){
    const char *zCol = (const char*)sqlite3_column_text(p, i);
    z = sqlite3_mprintf("%z%s%s", z, i ? " " : "", zCol ? zCol : "-");
  }
  sqlite3_finalize(p);
  sqlite3_free(zSql);
  return z;
}
static int commitHook(void *pArg){
  (void)pArg;
  if( at("hook") ) die();
  return 0;
}

#define WHERE_KEY "key = idem_key(%Q, %Q, %Q, %Q) AND member = 0"

static void replay(const char *who, const char *conv, const char *tool,
                   const char *args){
  char *z = row(db, "SELECT status, id, reply FROM calls WHERE " WHERE_KEY,
                who, conv, tool, args);
  printf("replay %s\n", z);
  sqlite3_free(z);
}

static void local(void){
  const char *who = "alice", *conv = "conv-1", *tool = "order";
  const char *args = "{\"item\":\"pen\",\"qty\":2}";
  sqlite3_int64 eid;
  step("before_claim");
  exec(db, "BEGIN IMMEDIATE");
  exec(db, "INSERT OR IGNORE INTO calls(who, conv, tool, args)"
           " VALUES(%Q, %Q, %Q, %Q)", who, conv, tool, args);
  if( sqlite3_changes(db)==0 ){
    replay(who, conv, tool, args);
    exec(db, "COMMIT");
    return;
  }
  step("after_claim");
  exec(db, "INSERT INTO effects(key, pid) VALUES(idem_key(%Q, %Q, %Q, %Q), %d)",
       who, conv, tool, args, (int)getpid());
  eid = sqlite3_last_insert_rowid(db);
  step("after_action");
  exec(db, "UPDATE calls SET status = 'done', id = %lld,"
           " result = json_object('effect', %lld) WHERE " WHERE_KEY,
       eid, eid, who, conv, tool, args);
  step("after_record");
  arm("commit");
  exec(db, "COMMIT");
  arm("");
  step("after_commit");
  printf("exec %lld\n", eid);
}

static void external(void){
  const char *who = "alice", *conv = "conv-1", *tool = "pay";
  const char *args = "{\"cents\":500}";
  char *zKey;
  sqlite3_int64 aid;
  step("before_claim");
  arm("claim");
  exec(db, "INSERT OR IGNORE INTO calls(who, conv, tool, args, kind)"
           " VALUES(%Q, %Q, %Q, %Q, 'external')", who, conv, tool, args);
  arm("");
  if( sqlite3_changes(db)==0 ){
    replay(who, conv, tool, args);
    return;
  }
  step("after_claim");
  zKey = row(db, "SELECT idem_key(%Q, %Q, %Q, %Q)", who, conv, tool, args);
  exec(target, "INSERT INTO arrivals(key, pid) VALUES(%Q, %d)",
       zKey, (int)getpid());
  aid = sqlite3_last_insert_rowid(target);
  step("after_action");
  arm("record");
  exec(db, "UPDATE calls SET status = 'done', id = %lld,"
           " result = json_object('arrival', %lld) WHERE key = %Q AND member = 0",
       aid, aid, zKey);
  arm("");
  step("after_record");
  printf("exec %lld\n", aid);
  sqlite3_free(zKey);
}

int main(int argc, char **argv){
  char *zErr = 0;
  const char *zColon;
  if( argc!=6 ){
    fprintf(stderr, "usage: %s LIB CALLS_DB TARGET_DB local|external POINT\n",
            argv[0]);
    return 2;
  }
  zPoint = argv[5];
  zColon = strchr(zPoint, ':');
  zWhere = zColon ? zColon+1 : "";

  pOrig = sqlite3_vfs_find(0);
  crashVfs.szOsFile = (int)sizeof(CrashFile) + pOrig->szOsFile;
  crashVfs.mxPathname = pOrig->mxPathname;
  sqlite3_vfs_register(&crashVfs, 0);

  if( sqlite3_open_v2(argv[2], &db, SQLITE_OPEN_READWRITE, "crash")!=SQLITE_OK
   || sqlite3_open_v2(argv[3], &target, SQLITE_OPEN_READWRITE, 0)!=SQLITE_OK ){
    fprintf(stderr, "crashdrv: cannot open %s or %s\n", argv[2], argv[3]);
    return 2;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_busy_timeout(target, 5000);
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, argv[1], 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "crashdrv: %s\n", zErr);
    return 2;
  }
  exec(db, "PRAGMA synchronous = FULL");
  exec(target, "PRAGMA synchronous = FULL");
  sqlite3_commit_hook(db, commitHook, 0);

  if( strcmp(argv[4], "local")==0 ){
    local();
  }else if( strcmp(argv[4], "external")==0 ){
    external();
  }else{
    fprintf(stderr, "crashdrv: unknown recipe '%s'\n", argv[4]);
    return 2;
  }
  sqlite3_close(target);
  sqlite3_close(db);
  return 0;
}

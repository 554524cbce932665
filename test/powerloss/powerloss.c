/* SPDX-License-Identifier: MIT */
/*
** powerloss.c -- external claims at a simulated power loss
** (doc/contract.md §12).
**
**   make build/powerloss
**   build/powerloss [-n RUNS] [-c CLAIMS] [-s SEED] MODE...
**
** MODE is JOURNAL-SYNCHRONOUS[-relaxed], for example wal-full,
** delete-normal or wal-normal-relaxed.  For each mode and each of RUNS
** runs it prints one line:
**
**   MODE: RUNS runs, N claims committed, L lost, R refused, F runs faulty
**
** THE FILE SYSTEM.  A VFS named "powerloss" shims the default one.  For
** every file it keeps the content the disk is known to hold: the file as
** it was when first opened, then as it was at its last xSync.  Writes and
** truncations after that are in the "page cache" only.  At a simulated
** power loss every file is put back to that synced content, so every
** write not followed by an xSync of its file is lost.  (File creation and
** deletion are taken as durable at once: the model does not lose a
** directory entry.  SQLite's synchronous=EXTRA is what syncs the directory
** after a rollback journal is deleted.)
**
** A RUN.  A fresh database is made (ordinary VFS): an idem table (created
** with durability=relaxed when the mode says so) in the journal mode of
** the mode.  A child process opens it through "powerloss", sets the
** synchronous level, and makes CLAIMS external claims, each an INSERT in
** autocommit: a request that leaves once its COMMIT has returned.  After
** each COMMIT returns, the child reports the claim's number on a pipe.
** The power fails at the K-th file operation (write, truncate, sync or
** delete; K random, so it may hit any of them, inside a COMMIT or between
** them, or never): the files go back to their synced content and the
** child exits at once, without closing anything.  The parent then opens
** the database (ordinary VFS) and checks that every reported claim is
** there ("lost" counts those that are not) and that PRAGMA
** integrity_check says ok ("faulty" counts runs where it does not).  A
** claim that idem refuses ends the run ("refused").
**
** The suite (test/durable.test) runs it: with synchronous=FULL no
** committed claim is ever lost, in WAL and in the rollback journal modes;
** with synchronous=NORMAL in WAL and durability=relaxed claims are lost
** (the file system really does drop unsynced writes, so the test can
** fail); and without relaxed idem refuses every external claim there.
*/
#include "../../ext/idem.c"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------ the VFS */

/* What the disk holds for one path. */
typedef struct PlImage PlImage;
struct PlImage {
  char *zPath;
  unsigned char *a;           /* Synced content */
  sqlite3_int64 n;            /* Its size */
  PlImage *pNext;
};

typedef struct PlFile PlFile;
struct PlFile {
  sqlite3_file base;
  PlImage *pImg;              /* 0: not tracked (a temp file) */
  sqlite3_file *pReal;        /* The default VFS's file, right after this */
};

static sqlite3_vfs *plRoot;   /* The default VFS */
static PlImage *plImages;     /* Every tracked path */
static long plOps;            /* File operations so far */
static long plFailAt;         /* Power fails at this operation (0: never) */

static PlImage *plFind(const char *zPath){
  PlImage *p;
  for(p=plImages; p; p=p->pNext){
    if( strcmp(p->zPath, zPath)==0 ) return p;
  }
  return 0;
}

/* Read the whole of path z from the real file system into p. */
static void plLoadFromDisk(PlImage *p){
  struct stat st;
  int fd;
  free(p->a);
  p->a = 0;
  p->n = 0;
  fd = open(p->zPath, O_RDONLY);
  if( fd<0 ) return;
  if( fstat(fd, &st)==0 && st.st_size>0 ){
    p->a = malloc((size_t)st.st_size);
    if( p->a && pread(fd, p->a, (size_t)st.st_size, 0)==st.st_size ){
      p->n = st.st_size;
    }
  }
  close(fd);
}

/* The power fails: every tracked file goes back to its synced content,
** and the process ends without another word to SQLite. */
static void plPowerLoss(void){
  PlImage *p;
  for(p=plImages; p; p=p->pNext){
    int fd = open(p->zPath, O_WRONLY|O_CREAT, 0644);
    if( fd<0 ) continue;
    if( ftruncate(fd, p->n)!=0
     || (p->n && pwrite(fd, p->a, (size_t)p->n, 0)!=p->n) ){
      fprintf(stderr, "powerloss: cannot restore %s\n", p->zPath);
      _exit(2);
    }
    close(fd);
  }
  _exit(99);
}

/* Count one file operation; the power fails at the chosen one. */
static void plTick(void){
  plOps++;
  if( plFailAt && plOps>=plFailAt ) plPowerLoss();
}

static int plClose(sqlite3_file *pFile){
  PlFile *p = (PlFile*)pFile;
  return p->pReal->pMethods->xClose(p->pReal);
}
static int plRead(sqlite3_file *pFile, void *z, int n, sqlite3_int64 off){
  PlFile *p = (PlFile*)pFile;
  return p->pReal->pMethods->xRead(p->pReal, z, n, off);
}
static int plWrite(sqlite3_file *pFile, const void *z, int n, sqlite3_int64 off){
  PlFile *p = (PlFile*)pFile;
  if( p->pImg ) plTick();
  return p->pReal->pMethods->xWrite(p->pReal, z, n, off);
}
static int plTruncate(sqlite3_file *pFile, sqlite3_int64 size){
  PlFile *p = (PlFile*)pFile;
  if( p->pImg ) plTick();
  return p->pReal->pMethods->xTruncate(p->pReal, size);
}
/* A sync makes the file's present content the disk's.  The real fsync()
** is skipped: the model, not the machine, decides what a power loss
** keeps, and the runs stay fast. */
static int plSync(sqlite3_file *pFile, int flags){
  PlFile *p = (PlFile*)pFile;
  if( p->pImg==0 ) return p->pReal->pMethods->xSync(p->pReal, flags);
  plTick();
  plLoadFromDisk(p->pImg);
  return SQLITE_OK;
}
static int plFileSize(sqlite3_file *pFile, sqlite3_int64 *pSize){
  PlFile *p = (PlFile*)pFile;
  return p->pReal->pMethods->xFileSize(p->pReal, pSize);
}
static int plLock(sqlite3_file *pFile, int e){
  PlFile *p = (PlFile*)pFile;
  return p->pReal->pMethods->xLock(p->pReal, e);
}
static int plUnlock(sqlite3_file *pFile, int e){
  PlFile *p = (PlFile*)pFile;
  return p->pReal->pMethods->xUnlock(p->pReal, e);
}
static int plCheckReservedLock(sqlite3_file *pFile, int *pOut){
  PlFile *p = (PlFile*)pFile;
  return p->pReal->pMethods->xCheckReservedLock(p->pReal, pOut);
}
static int plFileControl(sqlite3_file *pFile, int op, void *pArg){
  PlFile *p = (PlFile*)pFile;
  return p->pReal->pMethods->xFileControl(p->pReal, op, pArg);
}
static int plSectorSize(sqlite3_file *pFile){
  PlFile *p = (PlFile*)pFile;
  return p->pReal->pMethods->xSectorSize(p->pReal);
}
static int plDeviceCharacteristics(sqlite3_file *pFile){
  PlFile *p = (PlFile*)pFile;
  return p->pReal->pMethods->xDeviceCharacteristics(p->pReal);
}
static int plShmMap(sqlite3_file *pFile, int i, int n, int b, void volatile **pp){
  PlFile *p = (PlFile*)pFile;
  return p->pReal->pMethods->xShmMap(p->pReal, i, n, b, pp);
}
static int plShmLock(sqlite3_file *pFile, int o, int n, int f){
  PlFile *p = (PlFile*)pFile;
  return p->pReal->pMethods->xShmLock(p->pReal, o, n, f);
}
static void plShmBarrier(sqlite3_file *pFile){
  PlFile *p = (PlFile*)pFile;
  p->pReal->pMethods->xShmBarrier(p->pReal);
}
static int plShmUnmap(sqlite3_file *pFile, int d){
  PlFile *p = (PlFile*)pFile;
  return p->pReal->pMethods->xShmUnmap(p->pReal, d);
}

/* Version 2 methods: no xFetch, so SQLite never maps the file and every
** write goes through xWrite. */
static const sqlite3_io_methods plMethods = {
  2, plClose, plRead, plWrite, plTruncate, plSync, plFileSize, plLock,
  plUnlock, plCheckReservedLock, plFileControl, plSectorSize,
  plDeviceCharacteristics, plShmMap, plShmLock, plShmBarrier, plShmUnmap,
  0, 0
};

static int plOpen(sqlite3_vfs *pVfs, const char *zName, sqlite3_file *pFile,
                  int flags, int *pOutFlags){
  PlFile *p = (PlFile*)pFile;
  int rc;
  (void)pVfs;
  memset(p, 0, sizeof(*p));
  p->pReal = (sqlite3_file*)&p[1];
  if( zName && (flags & SQLITE_OPEN_DELETEONCLOSE)==0 ){
    PlImage *pImg = plFind(zName);
    if( pImg==0 ){
      /* First sight of this path: what is there now is on disk (the run
      ** made it before the child started, or it does not exist yet). */
      pImg = calloc(1, sizeof(*pImg));
      if( pImg==0 ) return SQLITE_NOMEM;
      pImg->zPath = strdup(zName);
      if( pImg->zPath==0 ){ free(pImg); return SQLITE_NOMEM; }
      plLoadFromDisk(pImg);
      pImg->pNext = plImages;
      plImages = pImg;
    }
    p->pImg = pImg;
  }
  rc = plRoot->xOpen(plRoot, zName, p->pReal, flags, pOutFlags);
  if( p->pReal->pMethods ) p->base.pMethods = &plMethods;
  return rc;
}

static int plDelete(sqlite3_vfs *pVfs, const char *zName, int syncDir){
  PlImage **pp;
  (void)pVfs;
  for(pp=&plImages; *pp; pp=&(*pp)->pNext){
    if( strcmp((*pp)->zPath, zName)==0 ){
      PlImage *p = *pp;
      plTick();
      *pp = p->pNext;           /* the file is gone, durably */
      free(p->zPath);
      free(p->a);
      free(p);
      break;
    }
  }
  return plRoot->xDelete(plRoot, zName, syncDir);
}

static int plAccess(sqlite3_vfs *v, const char *z, int f, int *pOut){
  (void)v; return plRoot->xAccess(plRoot, z, f, pOut);
}
static int plFullPathname(sqlite3_vfs *v, const char *z, int n, char *zOut){
  (void)v; return plRoot->xFullPathname(plRoot, z, n, zOut);
}
static void *plDlOpen(sqlite3_vfs *v, const char *z){
  (void)v; return plRoot->xDlOpen(plRoot, z);
}
static void plDlError(sqlite3_vfs *v, int n, char *z){
  (void)v; plRoot->xDlError(plRoot, n, z);
}
static void (*plDlSym(sqlite3_vfs *v, void *p, const char *z))(void){
  (void)v; return plRoot->xDlSym(plRoot, p, z);
}
static void plDlClose(sqlite3_vfs *v, void *p){
  (void)v; plRoot->xDlClose(plRoot, p);
}
static int plRandomness(sqlite3_vfs *v, int n, char *z){
  (void)v; return plRoot->xRandomness(plRoot, n, z);
}
static int plSleep(sqlite3_vfs *v, int n){
  (void)v; return plRoot->xSleep(plRoot, n);
}
static int plCurrentTime(sqlite3_vfs *v, double *p){
  (void)v; return plRoot->xCurrentTime(plRoot, p);
}
static int plGetLastError(sqlite3_vfs *v, int n, char *z){
  (void)v; return plRoot->xGetLastError(plRoot, n, z);
}
static int plCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *p){
  (void)v; return plRoot->xCurrentTimeInt64(plRoot, p);
}

static sqlite3_vfs plVfs = {
  2, 0, 0, 0, "powerloss", 0,
  plOpen, plDelete, plAccess, plFullPathname, plDlOpen, plDlError,
  plDlSym, plDlClose, plRandomness, plSleep, plCurrentTime, plGetLastError,
  plCurrentTimeInt64, 0, 0, 0
};

/* ------------------------------------------------------------- the runs */

typedef struct Mode Mode;
struct Mode {
  const char *zName;          /* As given */
  char zJournal[16];          /* delete, truncate, persist, wal */
  char zSync[16];             /* off, normal, full, extra */
  int bRelaxed;               /* durability=relaxed */
};

static void die(const char *zWhat, sqlite3 *db){
  fprintf(stderr, "powerloss: %s: %s\n", zWhat, db ? sqlite3_errmsg(db) : "");
  exit(1);
}

static void exec(sqlite3 *db, const char *zSql){
  if( sqlite3_exec(db, zSql, 0, 0, 0)!=SQLITE_OK ) die(zSql, db);
}

static void removeFiles(const char *zDb){
  static const char *const azSuffix[] = { "", "-journal", "-wal", "-shm" };
  char z[512];
  size_t i;
  for(i=0; i<sizeof(azSuffix)/sizeof(azSuffix[0]); i++){
    snprintf(z, sizeof(z), "%s%s", zDb, azSuffix[i]);
    unlink(z);
  }
}

/*
** The child: claims through the powerloss VFS until the power fails or
** nClaim are made.  Writes each committed claim's number to fdOut, or
** "R" when idem refuses a claim.
*/
static void child(const Mode *pMode, const char *zDb, int nClaim,
                  long failAt, int fdOut){
  sqlite3 *db = 0;
  sqlite3_stmt *pIns = 0;
  char zSql[200];
  int i;
  if( sqlite3_vfs_register(&plVfs, 0)!=SQLITE_OK ) _exit(3);
  if( sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READWRITE, "powerloss")!=SQLITE_OK ){
    die("open", db);
  }
  snprintf(zSql, sizeof(zSql), "PRAGMA synchronous=%s; PRAGMA wal_autocheckpoint=20;",
           pMode->zSync);
  exec(db, zSql);
  if( strcmp(pMode->zJournal, "wal")!=0 ){
    snprintf(zSql, sizeof(zSql), "PRAGMA journal_mode=%s;", pMode->zJournal);
    exec(db, zSql);
  }
  if( sqlite3_prepare_v2(db, "INSERT INTO calls(who, conv, tool, args, kind)"
        " VALUES('pl', ?1, 'charge', json_object('n', ?1, 'pad',"
        " hex(randomblob(300))), 'external')", -1, &pIns, 0)!=SQLITE_OK ){
    die("prepare", db);
  }
  plOps = 0;
  plFailAt = failAt;                   /* from here on the power may fail */
  for(i=1; i<=nClaim; i++){
    char zLine[32];
    int rc;
    sqlite3_bind_int(pIns, 1, i);
    rc = sqlite3_step(pIns);
    sqlite3_reset(pIns);
    if( rc!=SQLITE_DONE ){
      if( strstr(sqlite3_errmsg(db), "needs a durable commit") ){
        if( write(fdOut, "R\n", 2)!=2 ) _exit(4);
        break;
      }
      die("claim", db);
    }
    /* The COMMIT has returned: the request leaves now. */
    snprintf(zLine, sizeof(zLine), "%d\n", i);
    if( write(fdOut, zLine, strlen(zLine))!=(ssize_t)strlen(zLine) ) _exit(4);
  }
  plPowerLoss();                       /* and the power fails at the end */
}

/* One run of pMode: returns the counts through the pointers. */
static void run(const Mode *pMode, const char *zDb, int nClaim, long failAt,
                int *pnCommitted, int *pnLost, int *pnRefused, int *pnFaulty){
  sqlite3 *db = 0;
  int aFd[2];
  pid_t pid;
  int status;
  char aBuf[65536];
  size_t nBuf = 0;
  ssize_t n;
  char zSql[300];
  char *z;

  removeFiles(zDb);
  if( sqlite3_open(zDb, &db)!=SQLITE_OK ) die("open", db);
  snprintf(zSql, sizeof(zSql),
      "PRAGMA synchronous=OFF; PRAGMA journal_mode=%s;"
      "CREATE VIRTUAL TABLE calls USING idem%s;",
      pMode->zJournal, pMode->bRelaxed ? "(durability=relaxed)" : "");
  exec(db, zSql);
  sqlite3_close(db);

  if( pipe(aFd)!=0 ){ perror("pipe"); exit(1); }
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if( pid<0 ){ perror("fork"); exit(1); }
  if( pid==0 ){
    close(aFd[0]);
    child(pMode, zDb, nClaim, failAt, aFd[1]);
    _exit(0);
  }
  close(aFd[1]);
  while( (n = read(aFd[0], aBuf+nBuf, sizeof(aBuf)-1-nBuf))>0 ) nBuf += (size_t)n;
  close(aFd[0]);
  aBuf[nBuf] = 0;
  if( waitpid(pid, &status, 0)<0 || !WIFEXITED(status)
   || (WEXITSTATUS(status)!=99) ){
    fprintf(stderr, "powerloss: the child failed (status %d)\n", status);
    exit(1);
  }

  /* After the power comes back: open, recover, check. */
  if( sqlite3_open(zDb, &db)!=SQLITE_OK ) die("reopen", db);
  exec(db, "PRAGMA synchronous=OFF");  /* the real disk is not the model */
  {
    sqlite3_stmt *pQ = 0;
    if( sqlite3_prepare_v2(db, "SELECT count(*) FROM calls WHERE conv=?1",
          -1, &pQ, 0)!=SQLITE_OK ){
      die("prepare check", db);
    }
    for(z=strtok(aBuf, "\n"); z; z=strtok(0, "\n")){
      if( z[0]=='R' ){ (*pnRefused)++; continue; }
      (*pnCommitted)++;
      sqlite3_bind_text(pQ, 1, z, -1, SQLITE_STATIC);
      if( sqlite3_step(pQ)!=SQLITE_ROW ) die("check", db);
      if( sqlite3_column_int(pQ, 0)!=1 ) (*pnLost)++;
      sqlite3_reset(pQ);
    }
    sqlite3_finalize(pQ);
    if( sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &pQ, 0)!=SQLITE_OK
     || sqlite3_step(pQ)!=SQLITE_ROW
     || strcmp((const char*)sqlite3_column_text(pQ, 0), "ok")!=0 ){
      (*pnFaulty)++;
    }
    sqlite3_finalize(pQ);
  }
  sqlite3_close(db);
}

static int parseMode(const char *z, Mode *p){
  char zCopy[64];
  char *zSync, *zRel;
  memset(p, 0, sizeof(*p));
  p->zName = z;
  if( strlen(z)>=sizeof(zCopy) ) return 0;
  strcpy(zCopy, z);
  zSync = strchr(zCopy, '-');
  if( zSync==0 ) return 0;
  *zSync++ = 0;
  zRel = strchr(zSync, '-');
  if( zRel ){
    *zRel++ = 0;
    if( strcmp(zRel, "relaxed")!=0 ) return 0;
    p->bRelaxed = 1;
  }
  if( strlen(zCopy)>=sizeof(p->zJournal) || strlen(zSync)>=sizeof(p->zSync) ) return 0;
  strcpy(p->zJournal, zCopy);
  strcpy(p->zSync, zSync);
  return 1;
}

int main(int argc, char **argv){
  int nRun = 50, nClaim = 40;
  unsigned seed = 1;
  const char *zDb = "powerloss.db";
  int i;
  sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
  plRoot = sqlite3_vfs_find(0);
  plVfs.szOsFile = (int)sizeof(PlFile) + plRoot->szOsFile;
  plVfs.mxPathname = plRoot->mxPathname;
  for(i=1; i<argc; i++){
    if( strcmp(argv[i], "-n")==0 && i+1<argc ){ nRun = atoi(argv[++i]); continue; }
    if( strcmp(argv[i], "-c")==0 && i+1<argc ){ nClaim = atoi(argv[++i]); continue; }
    if( strcmp(argv[i], "-s")==0 && i+1<argc ){ seed = (unsigned)atoi(argv[++i]); continue; }
    if( strcmp(argv[i], "-f")==0 && i+1<argc ){ zDb = argv[++i]; continue; }
    {
      Mode m;
      int r, nCommitted = 0, nLost = 0, nRefused = 0, nFaulty = 0;
      if( !parseMode(argv[i], &m) ){
        fprintf(stderr, "powerloss: bad mode '%s' (JOURNAL-SYNC[-relaxed])\n", argv[i]);
        return 1;
      }
      srand(seed);
      for(r=0; r<nRun; r++){
        /* The power fails at a random file operation: within the first
        ** claims, late in the run, or (about one run in eight) never
        ** before the end.  A claim costs some 4 to 12 operations. */
        long failAt = 1 + rand() % (nClaim*12);
        run(&m, zDb, nClaim, failAt, &nCommitted, &nLost, &nRefused, &nFaulty);
      }
      printf("%s: %d runs, %d claims committed, %d lost, %d refused, %d runs faulty\n",
             m.zName, nRun, nCommitted, nLost, nRefused, nFaulty);
      fflush(stdout);
    }
  }
  removeFiles(zDb);
  return 0;
}

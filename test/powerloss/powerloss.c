/* SPDX-License-Identifier: MIT */
/*
** powerloss.c -- claims at a simulated power loss (doc/contract.md §12).
**
**   make build/powerloss
**   build/powerloss [-c CLAIMS] [-s SEED] [-p PATTERNS] [-e EVERY]
**                   [-f FILE] [-v] [-t] [-x] MODE...
**
** -v prints each run that loses something, -t traces every file operation
** of the child on stderr, and -x makes the exit status 1 if a mode that
** idem accepts (without relaxed) loses an external claim or its 'done',
** splits a local claim, or leaves a faulty file, or a mode it refuses
** commits a claim.  (A
** local claim may be lost with its action where a COMMIT is not durable,
** as in WAL at NORMAL: doc/contract.md §12.)
**
** MODE is RECIPE:JOURNAL-SYNC[-FLAG...], for example ext:delete-full,
** local:wal-normal or ext:truncate-normal-exclusive-relaxed:
**
**   RECIPE    ext    an external claim (INSERT, autocommit); once its
**                    COMMIT has returned the request leaves, and its
**                    outcome is recorded (UPDATE ... SET status='done')
**             local  BEGIN; a local claim; its action (a row in another
**                    table of the same database); its outcome; COMMIT
**   JOURNAL   delete, truncate, persist or wal
**   SYNC      off, normal, full or extra
**   FLAG      exclusive  PRAGMA locking_mode=EXCLUSIVE
**             relaxed    the table is created with durability=relaxed
**             nodirsync  play a SQLite built with SQLITE_DISABLE_DIRSYNC:
**                        no directory is ever synced, and idem is told so
**             aux.J.S    (local) the action goes into a second file,
**                        "<FILE>-aux", attached as aux with
**                        journal_mode=J and synchronous=S: one COMMIT
**                        writes both files (doc/contract.md §4)
**             fresh      (with aux.J.S) the aux file is new: its table
**                        is created in the first claim's transaction, so
**                        every page it writes is new
**
** For each mode it prints one line:
**
**   MODE: K cuts, N runs, C committed, L lost, S split, D undone,
**         R refused, F faulty
**
** THE FILE SYSTEM.  A VFS named "powerloss" shims the default one and
** keeps a model of what the disk holds, as a power cut sees it:
**
**   - A file's content: what it held at its last xSync.  Every write and
**     truncation after that is pending.
**   - A directory entry: a path names a file (an inode) durably as of the
**     last directory sync.  Creating a file (xOpen of a path that does not
**     exist) and deleting one (xDelete) are pending directory changes.
**     The directory is synced where the unix VFS syncs it: by xDelete with
**     dirSync set, and by the first xSync of a journal, WAL or
**     super-journal opened with SQLITE_OPEN_CREATE (UNIXFILE_DIRSYNC);
**     never with the flag nodirsync, as in a SQLITE_DISABLE_DIRSYNC build.
**
** At the power cut the files are rewritten as the disk would hold them.
** The loss pattern decides what happens to each pending change (the
** letters of -p, default "arn"):
**
**   a  all lost: every unsynced write, truncation, creation and deletion
**   r  random, seeded by the cut: each pending write is lost, kept, or
**      torn (a random prefix of its 512-byte sectors kept); each
**      truncation and each directory change is kept or lost, each on its
**      own, so later changes may survive earlier ones (reordered).  A
**      deleted file whose deletion is lost comes back with its content as
**      of the cut; a created file whose creation is lost is gone.
**   n  none lost: the operating system wrote everything (a process
**      crash, not a power loss)
**
** The real fsync() is never called, by the child or the parent (which
** uses the VFS without the model): the model, not the machine, decides
** what a power cut keeps, and the runs stay fast.
**
** A RUN.  A fresh database is made (ordinary VFS): the idem table and
** the action table.  A child process opens it through "powerloss", sets
** the mode, and runs CLAIMS claims of the recipe, reporting on a pipe
** each claim whose COMMIT has returned ("C i") and each outcome recorded
** ("D i").  The power fails before the K-th file operation (write,
** truncate, sync, create, delete) and the child exits at once.  The
** parent then opens the database (ordinary VFS, which rolls back a hot
** journal or recovers the WAL) and checks:
**
**   lost     a claim whose COMMIT returned is not there (for a local
**            claim, a failure only if its action is there: split)
**   split    a local claim without its action, an action without its
**            claim, or a local claim left pending
**   undone   an external call whose 'done' was recorded (its UPDATE
**            returned) is not done: pending again, the call would need a
**            reconcile; idem makes the outcome as durable as the claim
**   faulty   PRAGMA integrity_check is not ok
**   refused  idem refused the first claim, or its COMMIT (the run
**            makes no claims)
**
** CUT POINTS.  A first run without a cut counts the file operations of
** the recipe, K; then the power is cut before each operation in turn, 1
** to K, and once after the last (every -e EVERY-th of them only, for a
** short run), for each loss pattern.
**
** The suite (test/durable.test) runs a short slice: every mode idem
** accepts loses nothing, refused modes are refused, and with
** durability=relaxed the refused modes do lose claims (so the file system
** can fail the test).  "make test-powerloss" runs every cut in every mode.
*/
static int plNoDirSync;       /* play a SQLITE_DISABLE_DIRSYNC build */
#define IDEM_DIRSYNC_DISABLED plNoDirSync
#include "../../ext/idem.c"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------ the model */

/* A change to a file's content not yet synced. */
typedef struct PlOp PlOp;
struct PlOp {
  sqlite3_int64 iOff;         /* Offset of a write; new size of a truncate */
  int n;                      /* Bytes written; -1: a truncate */
  unsigned char *a;           /* The bytes written */
  PlOp *pNext;
};

/* A file (an inode): its synced content and its pending changes. */
typedef struct PlInode PlInode;
struct PlInode {
  unsigned char *a;           /* Content as of the last xSync */
  sqlite3_int64 n;
  PlOp *pFirst, *pLast;       /* Pending changes, oldest first */
  unsigned char *aCut;        /* Content after the cut (computed once) */
  sqlite3_int64 nCut;
  int bCut;
};

/* A path of the directory: the file it names durably and now. */
typedef struct PlName PlName;
struct PlName {
  char *zPath;
  PlInode *pDurable;          /* As of the last directory sync (0: none) */
  PlInode *pNow;              /* Now (0: no such file) */
  PlName *pNext;
};

/* A pending directory change: zPath now names pInode (0: deleted). */
typedef struct PlDirOp PlDirOp;
struct PlDirOp {
  PlName *pName;
  PlInode *pInode;
  PlDirOp *pNext;
};

typedef struct PlFile PlFile;
struct PlFile {
  sqlite3_file base;
  PlInode *pInode;            /* 0: not modelled (a temp file) */
  const char *zPath;          /* Its name (for -t) */
  int bDirSync;               /* The unix VFS syncs the directory at the
                              ** first xSync (UNIXFILE_DIRSYNC) */
  sqlite3_file *pReal;        /* The default VFS's file, right after this */
};

static sqlite3_vfs *plRoot;   /* The default VFS */
static PlName *plNames;       /* Every path seen */
static PlDirOp *plDirFirst, *plDirLast;   /* Pending directory changes */
static long plOps;            /* File operations so far */
static long plFailAt;         /* Power fails before this one (0: never) */
static char plPattern;        /* 'a', 'r' or 'n' */
static int plVerbose;         /* -v: print each run that loses */
static int plModel;           /* The child: keep the model.  The parent
                              ** uses the VFS too, without the model, for
                              ** its syncs: a no-op */
static unsigned long long plRand;  /* State of plRandom() */

static void *plAlloc(size_t n){
  void *p = calloc(1, n ? n : 1);
  if( p==0 ){ fprintf(stderr, "powerloss: out of memory\n"); _exit(2); }
  return p;
}

static unsigned plRandom(void){
  plRand ^= plRand << 13;
  plRand ^= plRand >> 7;
  plRand ^= plRand << 17;
  return (unsigned)(plRand >> 11);
}

/* The path's entry; on first sight, what the disk holds there now is
** durable (the parent made it before the child started). */
static PlName *plName(const char *zPath){
  PlName *p;
  struct stat st;
  for(p=plNames; p; p=p->pNext){
    if( strcmp(p->zPath, zPath)==0 ) return p;
  }
  p = plAlloc(sizeof(*p));
  p->zPath = strdup(zPath);
  if( p->zPath==0 ) _exit(2);
  if( stat(zPath, &st)==0 ){
    PlInode *pI = plAlloc(sizeof(*pI));
    int fd = open(zPath, O_RDONLY);
    pI->a = plAlloc((size_t)st.st_size);
    if( fd<0 || pread(fd, pI->a, (size_t)st.st_size, 0)!=st.st_size ){
      fprintf(stderr, "powerloss: cannot read %s\n", zPath);
      _exit(2);
    }
    close(fd);
    pI->n = st.st_size;
    p->pDurable = p->pNow = pI;
  }
  p->pNext = plNames;
  plNames = p;
  return p;
}

static void plDirChange(PlName *pName, PlInode *pInode){
  PlDirOp *p = plAlloc(sizeof(*p));
  p->pName = pName;
  p->pInode = pInode;
  pName->pNow = pInode;
  if( plDirLast ) plDirLast->pNext = p; else plDirFirst = p;
  plDirLast = p;
}

/* A directory sync: every pending directory change is on disk. */
static void plDirSync(void){
  PlName *p;
  if( plNoDirSync ) return;
  for(p=plNames; p; p=p->pNext) p->pDurable = p->pNow;
  plDirFirst = plDirLast = 0;
}

/* Apply a write of n bytes at iOff to (*pa, *pn). */
static void plApply(unsigned char **pa, sqlite3_int64 *pn,
                    const unsigned char *a, int n, sqlite3_int64 iOff){
  if( iOff+n > *pn ){
    unsigned char *aNew = plAlloc((size_t)(iOff+n));
    if( *pn ) memcpy(aNew, *pa, (size_t)*pn);
    free(*pa);
    *pa = aNew;
    *pn = iOff+n;
  }
  memcpy(*pa + iOff, a, (size_t)n);
}

/* The content of pI after the cut, by the loss pattern. */
static void plCutInode(PlInode *pI){
  PlOp *pOp;
  if( pI->bCut ) return;
  pI->bCut = 1;
  pI->nCut = pI->n;
  pI->aCut = plAlloc((size_t)pI->n);
  if( pI->n ) memcpy(pI->aCut, pI->a, (size_t)pI->n);
  for(pOp=pI->pFirst; pOp; pOp=pOp->pNext){
    int eKeep = plPattern=='n' ? 1 : plPattern=='a' ? 0 : (int)(plRandom()%4);
    if( pOp->n<0 ){                              /* a truncation */
      if( eKeep==1 || eKeep==3 ){
        if( pOp->iOff < pI->nCut ) pI->nCut = pOp->iOff;
      }
      continue;
    }
    if( eKeep==2 ){                              /* torn */
      sqlite3_int64 iEnd = pOp->iOff + pOp->n, iFirst = (pOp->iOff/512+1)*512;
      int nSector = (int)((iEnd-1)/512 - pOp->iOff/512) + 1;
      int nKeep = nSector>1 ? (int)(plRandom()%(unsigned)nSector) : 0;
      sqlite3_int64 iKeepEnd = nKeep==0 ? pOp->iOff : iFirst + (sqlite3_int64)(nKeep-1)*512;
      if( iKeepEnd>iEnd ) iKeepEnd = iEnd;
      if( iKeepEnd>pOp->iOff ){
        plApply(&pI->aCut, &pI->nCut, pOp->a, (int)(iKeepEnd-pOp->iOff), pOp->iOff);
      }
    }else if( eKeep ){
      plApply(&pI->aCut, &pI->nCut, pOp->a, pOp->n, pOp->iOff);
    }
  }
}

/* The power fails: every path is rewritten as the disk would hold it,
** and the process ends without another word to SQLite. */
static void plPowerLoss(void){
  PlName *p;
  PlDirOp *pOp;
  for(p=plNames; p; p=p->pNext) p->pNow = p->pDurable;  /* now: after the cut */
  for(pOp=plDirFirst; pOp; pOp=pOp->pNext){
    if( plPattern=='n' || (plPattern=='r' && plRandom()%2) ){
      pOp->pName->pNow = pOp->pInode;
    }
  }
  for(p=plNames; p; p=p->pNext){
    if( p->pNow ){
      int fd = open(p->zPath, O_WRONLY|O_CREAT|O_TRUNC, 0644);
      plCutInode(p->pNow);
      if( fd<0 || (p->pNow->nCut
            && write(fd, p->pNow->aCut, (size_t)p->pNow->nCut)!=p->pNow->nCut) ){
        fprintf(stderr, "powerloss: cannot restore %s\n", p->zPath);
        _exit(2);
      }
      close(fd);
    }else if( unlink(p->zPath)!=0 && errno!=ENOENT && errno!=ENAMETOOLONG ){
      fprintf(stderr, "powerloss: cannot remove %s\n", p->zPath);
      _exit(2);
    }
  }
  _exit(99);
}

/* Count one file operation; the power fails before the chosen one.
** With -t the child traces each one on stderr. */
static int plTrace;
static void plTick(const char *zOp, const char *zPath, sqlite3_int64 iOff, int n){
  if( plTrace ){
    const char *z = strrchr(zPath, '/');
    fprintf(stderr, "%ld %s %s %lld %d\n", plOps+1, zOp, z ? z+1 : zPath,
            (long long)iOff, n);
  }
  plOps++;
  if( plFailAt && plOps>=plFailAt ) plPowerLoss();
}

/* A pending change to pI's content. */
static void plPending(PlInode *pI, const void *a, int n, sqlite3_int64 iOff){
  PlOp *p = plAlloc(sizeof(*p));
  p->iOff = iOff;
  p->n = n;
  if( n>0 ){
    p->a = plAlloc((size_t)n);
    memcpy(p->a, a, (size_t)n);
  }
  if( pI->pLast ) pI->pLast->pNext = p; else pI->pFirst = p;
  pI->pLast = p;
}

/* ------------------------------------------------------------ the VFS */

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
  if( p->pInode ){
    plTick("write", p->zPath, off, n);
    plPending(p->pInode, z, n, off);
  }
  return p->pReal->pMethods->xWrite(p->pReal, z, n, off);
}
static int plTruncate(sqlite3_file *pFile, sqlite3_int64 size){
  PlFile *p = (PlFile*)pFile;
  if( p->pInode ){
    plTick("truncate", p->zPath, size, 0);
    plPending(p->pInode, 0, -1, size);
  }
  return p->pReal->pMethods->xTruncate(p->pReal, size);
}
/* A sync makes the file's present content the disk's (read back from the
** real file, which has every write), and the first sync of a new journal
** syncs the directory too, as os_unix.c does. */
static int plSync(sqlite3_file *pFile, int flags){
  PlFile *p = (PlFile*)pFile;
  PlInode *pI = p->pInode;
  sqlite3_int64 n = 0;
  PlOp *pOp, *pNext;
  int rc;
  (void)flags;
  if( pI==0 ) return SQLITE_OK;          /* a temp file, or the parent */
  plTick(p->bDirSync && !plNoDirSync ? "sync+dir" : "sync", p->zPath, 0, 0);
  rc = p->pReal->pMethods->xFileSize(p->pReal, &n);
  if( rc!=SQLITE_OK ) return rc;
  free(pI->a);
  pI->a = plAlloc((size_t)n);
  pI->n = n;
  if( n>0 ){
    rc = p->pReal->pMethods->xRead(p->pReal, pI->a, (int)n, 0);
    if( rc!=SQLITE_OK ) return rc;
  }
  for(pOp=pI->pFirst; pOp; pOp=pNext){
    pNext = pOp->pNext;
    free(pOp->a);
    free(pOp);
  }
  pI->pFirst = pI->pLast = 0;
  if( p->bDirSync ){
    p->bDirSync = 0;
    plDirSync();
  }
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
  PlName *pCreated = 0;
  int rc;
  (void)pVfs;
  memset(p, 0, sizeof(*p));
  p->pReal = (sqlite3_file*)&p[1];
  if( plModel && zName && (flags & SQLITE_OPEN_DELETEONCLOSE)==0 ){
    PlName *pName = plName(zName);
    p->zPath = zName;
    if( pName->pNow==0 && (flags & SQLITE_OPEN_CREATE) ){
      plTick("create", zName, 0, 0);
      plDirChange(pName, plAlloc(sizeof(PlInode)));
      pCreated = pName;
    }
    p->pInode = pName->pNow;
    p->bDirSync = (flags & SQLITE_OPEN_CREATE)!=0
      && (flags & (SQLITE_OPEN_MAIN_JOURNAL|SQLITE_OPEN_WAL
                   |SQLITE_OPEN_SUPER_JOURNAL))!=0;
  }
  rc = plRoot->xOpen(plRoot, zName, p->pReal, flags, pOutFlags);
  if( rc!=SQLITE_OK && pCreated ){
    plDirChange(pCreated, 0);         /* not created after all (a name too
                                      ** long, a directory not writable) */
  }
  if( p->pReal->pMethods ) p->base.pMethods = &plMethods;
  return rc;
}

static int plDelete(sqlite3_vfs *pVfs, const char *zName, int syncDir){
  PlName *pName;
  int rc;
  (void)pVfs;
  if( !plModel ) return plRoot->xDelete(plRoot, zName, 0);
  pName = plName(zName);
  plTick((syncDir & 1) && !plNoDirSync ? "delete+dir" : "delete", zName, 0, 0);
  rc = plRoot->xDelete(plRoot, zName, 0);
  if( rc==SQLITE_OK ){
    plDirChange(pName, 0);
    if( syncDir & 1 ) plDirSync();
  }
  return rc;
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
  int bLocal;                 /* Recipe local (else ext) */
  char zJournal[16];          /* delete, truncate, persist, wal */
  char zSync[16];             /* off, normal, full, extra */
  int bExclusive;             /* locking_mode=EXCLUSIVE */
  int bRelaxed;               /* durability=relaxed */
  int bNoDirSync;             /* a SQLITE_DISABLE_DIRSYNC build */
  char zAuxJournal[16];       /* aux.J.S: the action's file ("": main) */
  char zAuxSync[16];
  int bFresh;                 /* the aux file is made by the first claim */
};

typedef struct Counts Counts;
struct Counts {
  int nCut, nRun, nCommitted, nLost, nSplit, nUndone, nRefused, nFaulty;
};

static void die(const char *zWhat, sqlite3 *db){
  fprintf(stderr, "powerloss: %s: %s\n", zWhat, db ? sqlite3_errmsg(db) : "");
  exit(1);
}

static void exec(sqlite3 *db, const char *zSql){
  if( sqlite3_exec(db, zSql, 0, 0, 0)!=SQLITE_OK ) die(zSql, db);
}

/* The action's table: "orders" in the main file, or "aux.orders". */
static const char *ordersTable(const Mode *pMode){
  return pMode->zAuxJournal[0] ? "aux.orders" : "orders";
}

static void removeFiles(const char *zDb){
  char z[600];
  glob_t g;
  size_t i;
  unlink(zDb);
  snprintf(z, sizeof(z), "%s-*", zDb);
  if( glob(z, 0, 0, &g)==0 ){
    for(i=0; i<g.gl_pathc; i++) unlink(g.gl_pathv[i]);
    globfree(&g);
  }
}

/* The args of claim i, and its key. */
#define PL_ARGS "json_object('n', ?1, 'pad', printf('%0600d', ?1))"
#define PL_KEY  "idem_key('pl', ?1, 'charge', " PL_ARGS ")"

static void report(int fd, char c, int i){
  char z[32];
  snprintf(z, sizeof(z), "%c %d\n", c, i);
  if( write(fd, z, strlen(z))!=(ssize_t)strlen(z) ) _exit(4);
}

/*
** The child: runs nClaim claims of the recipe through the powerloss VFS
** until the power fails, reporting on fdOut.
*/
static void child(const Mode *pMode, const char *zDb, int nClaim, int fdOut){
  sqlite3 *db = 0;
  sqlite3_stmt *pClaim = 0, *pAction = 0, *pDone = 0;
  char zSql[300];
  int i;
  plModel = 1;
  /* (CREATE: a fresh aux file is made by ATTACH) */
  if( sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE,
                      "powerloss")!=SQLITE_OK ){
    die("open", db);
  }
  snprintf(zSql, sizeof(zSql), "PRAGMA synchronous=%s; PRAGMA wal_autocheckpoint=16;"
           " PRAGMA cache_size=10;%s", pMode->zSync,
           pMode->bExclusive ? " PRAGMA locking_mode=EXCLUSIVE;" : "");
  exec(db, zSql);
  if( strcmp(pMode->zJournal, "wal")!=0 ){
    snprintf(zSql, sizeof(zSql), "PRAGMA journal_mode=%s;", pMode->zJournal);
    exec(db, zSql);
  }
  if( pMode->zAuxJournal[0] ){
    snprintf(zSql, sizeof(zSql), "ATTACH '%s-aux' AS aux;"
             " PRAGMA aux.journal_mode=%s; PRAGMA aux.synchronous=%s;"
             " PRAGMA aux.cache_size=10;", zDb, pMode->zAuxJournal,
             pMode->zAuxSync);
    exec(db, zSql);
  }
  if( sqlite3_prepare_v2(db, "INSERT INTO calls(who, conv, tool, args, kind)"
        " VALUES('pl', ?1, 'charge', " PL_ARGS ", ?2)", -1, &pClaim, 0)
     || sqlite3_prepare_v2(db, "UPDATE calls SET status='done', result='{}'"
        " WHERE key=" PL_KEY " AND member=0", -1, &pDone, 0) ){
    die("prepare", db);
  }
  plOps = 0;
  for(i=1; i<=nClaim; i++){
    int rc;
    if( pMode->bLocal ) exec(db, "BEGIN");
    sqlite3_bind_int(pClaim, 1, i);
    sqlite3_bind_text(pClaim, 2, pMode->bLocal ? "local" : "external", -1, SQLITE_STATIC);
    rc = sqlite3_step(pClaim);
    sqlite3_reset(pClaim);
    if( rc!=SQLITE_DONE ){
      if( strstr(sqlite3_errmsg(db), "idem: ")
       && strstr(sqlite3_errmsg(db), " claim needs ") ){
        if( write(fdOut, "R\n", 2)!=2 ) _exit(4);
        break;
      }
      die("claim", db);
    }
    if( pMode->bLocal ){
      if( pAction==0 ){
        /* (fresh: the table is created in this transaction) */
        if( pMode->bFresh ){
          exec(db, "CREATE TABLE IF NOT EXISTS aux.orders(n INTEGER, pad TEXT)");
        }
        snprintf(zSql, sizeof(zSql), "INSERT INTO %s(n, pad)"
                 " VALUES(?1, printf('%%0900d', ?1))", ordersTable(pMode));
        if( sqlite3_prepare_v2(db, zSql, -1, &pAction, 0) ) die("prepare", db);
      }
      sqlite3_bind_int(pAction, 1, i);
      if( sqlite3_step(pAction)!=SQLITE_DONE ) die("action", db);
      sqlite3_reset(pAction);
    }else{
      report(fdOut, 'C', i);           /* the request leaves now */
    }
    sqlite3_bind_int(pDone, 1, i);
    if( sqlite3_step(pDone)!=SQLITE_DONE || sqlite3_changes(db)!=1 ) die("done", db);
    sqlite3_reset(pDone);
    if( pMode->bLocal ){
      if( sqlite3_exec(db, "COMMIT", 0, 0, 0)!=SQLITE_OK ){
        if( strstr(sqlite3_errmsg(db), " would not commit as one ") ){
          if( write(fdOut, "R\n", 2)!=2 ) _exit(4);
          break;
        }
        die("COMMIT", db);
      }
      report(fdOut, 'C', i);
    }else{
      report(fdOut, 'D', i);
    }
  }
  report(fdOut, 'K', (int)plOps);
  plPowerLoss();                       /* and the power fails at the end */
}

/* After the power comes back: count into *pC what the run shows. */
static void check(const Mode *pMode, const char *zDb, int nClaim,
                  char *zReport, Counts *pC){
  sqlite3 *db = 0;
  sqlite3_stmt *pQ = 0, *pA = 0;
  char *z;
  int i, bFaulty = 0;
  unsigned char aCommitted[1024], aDone[1024];
  memset(aCommitted, 0, sizeof(aCommitted));
  memset(aDone, 0, sizeof(aDone));
  for(z=strtok(zReport, "\n"); z; z=strtok(0, "\n")){
    i = atoi(z+1);
    if( z[0]=='R' ) pC->nRefused++;
    if( z[0]=='C' && i>0 && i<1024 ){ aCommitted[i] = 1; pC->nCommitted++; }
    if( z[0]=='D' && i>0 && i<1024 ) aDone[i] = 1;
  }
  if( sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE,
                      "powerloss")!=SQLITE_OK ){
    die("reopen", db);
  }
  if( pMode->zAuxJournal[0] ){
    char zSql[700];
    snprintf(zSql, sizeof(zSql), "ATTACH '%s-aux' AS aux;"
             " CREATE TABLE IF NOT EXISTS aux.orders(n INTEGER, pad TEXT);", zDb);
    if( sqlite3_exec(db, zSql, 0, 0, 0)!=SQLITE_OK ) bFaulty = 1;
  }
  {
    char zSql[100];
    snprintf(zSql, sizeof(zSql), "SELECT count(*) FROM %s WHERE n=?1",
             ordersTable(pMode));
    if( bFaulty
     || sqlite3_prepare_v2(db, "SELECT status FROM calls WHERE key=" PL_KEY
                           " AND member=0", -1, &pQ, 0)
     || sqlite3_prepare_v2(db, zSql, -1, &pA, 0) ){
      bFaulty = 1;
    }
  }
  for(i=1; !bFaulty && i<=nClaim && i<1024; i++){
    int bClaim = 0, bPending = 0, nAction = 0;
    sqlite3_bind_int(pQ, 1, i);
    switch( sqlite3_step(pQ) ){
      case SQLITE_ROW:
        bClaim = 1;
        bPending = strcmp((const char*)sqlite3_column_text(pQ, 0), "pending")==0;
        break;
      case SQLITE_DONE: break;
      default: bFaulty = 1;
    }
    sqlite3_reset(pQ);
    sqlite3_bind_int(pA, 1, i);
    if( sqlite3_step(pA)==SQLITE_ROW ) nAction = sqlite3_column_int(pA, 0);
    else bFaulty = 1;
    sqlite3_reset(pA);
    if( aCommitted[i] && !bClaim ) pC->nLost++;
    if( aDone[i] && (!bClaim || bPending) ) pC->nUndone++;
    if( pMode->bLocal
     && (nAction>1 || bClaim!=(nAction==1) || (bClaim && bPending)) ){
      pC->nSplit++;
    }
  }
  sqlite3_finalize(pQ);
  sqlite3_finalize(pA);
  if( !bFaulty ){
    if( sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &pQ, 0)!=SQLITE_OK
     || sqlite3_step(pQ)!=SQLITE_ROW
     || strcmp((const char*)sqlite3_column_text(pQ, 0), "ok")!=0 ){
      bFaulty = 1;
    }
    sqlite3_finalize(pQ);
  }
  if( bFaulty ) pC->nFaulty++;
  sqlite3_close(db);
}

/* One run of pMode, the power cut before operation failAt (0: after the
** last) with loss pattern cPattern.  Returns the number of file operations
** the child made (when it got to the end). */
static long run(const Mode *pMode, const char *zDb, int nClaim, long failAt,
                char cPattern, unsigned seed, Counts *pC){
  sqlite3 *db = 0;
  int aFd[2];
  pid_t pid;
  int status;
  char aBuf[65536];
  size_t nBuf = 0;
  ssize_t n;
  char zSql[400];
  char *zOps;
  long nOps = 0;

  removeFiles(zDb);
  if( sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE,
                      "powerloss")!=SQLITE_OK ){
    die("open", db);
  }
  snprintf(zSql, sizeof(zSql),
      "PRAGMA synchronous=OFF; PRAGMA journal_mode=%s;"
      "CREATE VIRTUAL TABLE calls USING idem%s;"
      "CREATE TABLE orders(n INTEGER, pad TEXT);",
      pMode->zJournal, pMode->bRelaxed ? "(durability=relaxed)" : "");
  exec(db, zSql);
  if( pMode->zAuxJournal[0] && !pMode->bFresh ){
    snprintf(zSql, sizeof(zSql), "ATTACH '%s-aux' AS aux;"
        " PRAGMA aux.journal_mode=%s;"
        " CREATE TABLE aux.orders(n INTEGER, pad TEXT); DETACH aux;",
        zDb, strcmp(pMode->zAuxJournal, "wal")==0 ? "wal" : "delete");
    exec(db, zSql);
  }
  sqlite3_close(db);
  /* The child makes the journal (PERSIST and TRUNCATE keep the parent's),
  ** as the first transaction on a database does: its creation is then a
  ** directory change of the run. */
  snprintf(zSql, sizeof(zSql), "%s-journal", zDb);
  unlink(zSql);
  snprintf(zSql, sizeof(zSql), "%s-aux-journal", zDb);
  unlink(zSql);

  if( pipe(aFd)!=0 ){ perror("pipe"); exit(1); }
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if( pid<0 ){ perror("fork"); exit(1); }
  if( pid==0 ){
    close(aFd[0]);
    plFailAt = failAt;
    plPattern = cPattern;
    plNoDirSync = pMode->bNoDirSync;
    plRand = ((unsigned long long)seed<<32) ^ (unsigned long long)failAt*2654435761u
             ^ (unsigned long long)cPattern ^ 0x9e3779b97f4a7c15ull;
    child(pMode, zDb, nClaim, aFd[1]);
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
  zOps = strstr(aBuf, "K ");
  if( zOps ) nOps = atol(zOps+2);
  pC->nRun++;
  {
    Counts c0 = *pC;
    check(pMode, zDb, nClaim, aBuf, pC);
    if( plVerbose && (pC->nLost>c0.nLost || pC->nSplit>c0.nSplit
                      || pC->nFaulty>c0.nFaulty) ){
      printf("  %s: cut before operation %ld, pattern %c: %d lost, %d split,"
             " %d faulty\n", pMode->zName, failAt, cPattern,
             pC->nLost-c0.nLost, pC->nSplit-c0.nSplit, pC->nFaulty-c0.nFaulty);
    }
  }
  return nOps;
}

static int parseMode(const char *z, Mode *p){
  char zCopy[100];
  char *zWord, *zNext;
  int i;
  memset(p, 0, sizeof(*p));
  p->zName = z;
  if( strlen(z)>=sizeof(zCopy) ) return 0;
  strcpy(zCopy, z);
  if( strncmp(zCopy, "ext:", 4)==0 ){
    zWord = zCopy+4;
  }else if( strncmp(zCopy, "local:", 6)==0 ){
    p->bLocal = 1;
    zWord = zCopy+6;
  }else{
    return 0;
  }
  for(i=0; zWord; i++, zWord=zNext){
    zNext = strchr(zWord, '-');
    if( zNext ) *zNext++ = 0;
    if( i==0 ){
      if( strlen(zWord)>=sizeof(p->zJournal) ) return 0;
      strcpy(p->zJournal, zWord);
    }else if( i==1 ){
      if( strlen(zWord)>=sizeof(p->zSync) ) return 0;
      strcpy(p->zSync, zWord);
    }else if( strcmp(zWord, "exclusive")==0 ){
      p->bExclusive = 1;
    }else if( strcmp(zWord, "relaxed")==0 ){
      p->bRelaxed = 1;
    }else if( strcmp(zWord, "nodirsync")==0 ){
      p->bNoDirSync = 1;
    }else if( strcmp(zWord, "fresh")==0 ){
      p->bFresh = 1;
    }else if( strncmp(zWord, "aux.", 4)==0 && p->bLocal
           && strchr(zWord+4, '.') && strlen(zWord)<20 ){
      char *zDot = strchr(zWord+4, '.');
      *zDot = 0;
      strcpy(p->zAuxJournal, zWord+4);
      strcpy(p->zAuxSync, zDot+1);
    }else{
      return 0;
    }
  }
  return i>=2 && (!p->bFresh || p->zAuxJournal[0]);
}

int main(int argc, char **argv){
  int nClaim = 4, nEvery = 1, bExpect = 0, nFail = 0;
  unsigned seed = 1;
  const char *zDb = "powerloss.db";
  const char *zPatterns = "arn";
  int i;
  sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
  plRoot = sqlite3_vfs_find(0);
  plVfs.szOsFile = (int)sizeof(PlFile) + plRoot->szOsFile;
  plVfs.mxPathname = plRoot->mxPathname;
  if( sqlite3_vfs_register(&plVfs, 0)!=SQLITE_OK ) return 3;
  for(i=1; i<argc; i++){
    if( strcmp(argv[i], "-c")==0 && i+1<argc ){ nClaim = atoi(argv[++i]); continue; }
    if( strcmp(argv[i], "-s")==0 && i+1<argc ){ seed = (unsigned)atoi(argv[++i]); continue; }
    if( strcmp(argv[i], "-e")==0 && i+1<argc ){ nEvery = atoi(argv[++i]); continue; }
    if( strcmp(argv[i], "-p")==0 && i+1<argc ){ zPatterns = argv[++i]; continue; }
    if( strcmp(argv[i], "-f")==0 && i+1<argc ){ zDb = argv[++i]; continue; }
    if( strcmp(argv[i], "-v")==0 ){ plVerbose = 1; continue; }
    if( strcmp(argv[i], "-t")==0 ){ plTrace = 1; continue; }
    if( strcmp(argv[i], "-x")==0 ){ bExpect = 1; continue; }
    {
      Mode m;
      Counts c;
      long k, nOps;
      const char *zP;
      if( !parseMode(argv[i], &m) || nClaim<1 || nClaim>1000 || nEvery<1 ){
        fprintf(stderr, "powerloss: bad mode '%s'"
                " (ext|local:JOURNAL-SYNC[-exclusive][-relaxed][-nodirsync]"
                " [-aux.JOURNAL.SYNC[-fresh]])\n", argv[i]);
        return 1;
      }
      memset(&c, 0, sizeof(c));
      /* A run to the end counts the file operations; then a cut before
      ** each of them, for each loss pattern. */
      nOps = run(&m, zDb, nClaim, 0, 'a', seed, &c);
      for(zP=zPatterns; *zP; zP++){
        for(k=1; k<=nOps; k+=nEvery){
          run(&m, zDb, nClaim, k, *zP, seed, &c);
          c.nCut++;
        }
      }
      printf("%s: %d cuts, %d runs, %d committed, %d lost, %d split,"
             " %d undone, %d refused, %d faulty\n", m.zName, c.nCut, c.nRun,
             c.nCommitted, c.nLost, c.nSplit, c.nUndone, c.nRefused, c.nFaulty);
      if( bExpect && !m.bRelaxed
       && (c.nRefused ? c.nCommitted>0
                      : (c.nCommitted==0 || (c.nLost && !m.bLocal)
                         || c.nUndone || c.nSplit || c.nFaulty)) ){
        printf("FAILED: %s: idem %s this mode, and the runs show otherwise\n",
               m.zName, c.nRefused ? "refuses" : "accepts");
        nFail++;
      }
      fflush(stdout);
    }
  }
  removeFiles(zDb);
  return nFail ? 1 : 0;
}

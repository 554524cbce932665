/* SPDX-License-Identifier: MIT */
/*
** idem_durable.c -- a claim must survive what its act survives
** (doc/contract.md §12).
**
**   CREATE VIRTUAL TABLE calls USING idem;                     -- durability=full
**   CREATE VIRTUAL TABLE calls USING idem(durability=relaxed); -- accept the risk
**
** EXTERNAL CLAIMS.  An external claim (kind='external') is the only record
** that a request to another system may have left.  If a power loss takes
** back its COMMIT, the retry finds no claim and sends again.  So where a
** COMMIT is not durable an external claim fails, with an error that names
** the setting, unless the table was created with durability=relaxed.
** What SQLite syncs at COMMIT (pager.c, os_unix.c), and so the verdict:
**
**   where the pages live        the pages of a database with no file
**                               (":memory:", the temp schema, "") or on
**                               the memdb VFS (sqlite3_deserialize(),
**                               "file:/x?vfs=memdb") are in RAM, whatever
**                               its journal_mode says: refused
**   journal_mode=MEMORY or OFF  no rollback journal on disk: refused
**   synchronous=OFF             nothing is synced: refused
**   WAL, synchronous=NORMAL     the WAL is synced at checkpoints only: refused
**   WAL, FULL or EXTRA          the WAL is synced at COMMIT: durable
**   a rollback journal,         the journal's header (its record count) is
**   synchronous=NORMAL          written before the one sync of its records:
**                               a disk that reorders writes can keep the
**                               header and lose a record, or keep a stale
**                               page number under a new page (the checksum
**                               does not cover it), and the next open rolls
**                               back, or corrupts, what was committed; and
**                               TRUNCATE truncates without a sync (also in
**                               locking_mode=EXCLUSIVE: pager.c tests
**                               TRUNCATE first), so the journal can come
**                               back hot: refused
**   TRUNCATE, FULL or EXTRA     truncated and synced: durable
**   PERSIST, FULL or EXTRA      the zeroed header is synced: durable
**   DELETE, EXTRA               the journal is unlinked and the directory
**                               synced: durable
**   DELETE, FULL                the journal is unlinked, and the directory
**                               is not synced (only EXTRA does): a power
**                               loss can bring the journal back hot.  Made
**                               durable here: a transaction that wrote an
**                               external call (its claim or its outcome:
**                               idemDurableRecord()) creates a marker file
**                               next to the database through its VFS at
**                               xSync (where a failure still fails the
**                               COMMIT: idemDurableSyncReady()) and, at the
**                               table's xCommit (after the pager's commit,
**                               before the statement returns), deletes it
**                               with a directory sync, which makes the
**                               journal's unlink durable too
**                               (idemDurableCommit()).  In
**                               locking_mode=EXCLUSIVE the journal is
**                               kept, its header zeroed and synced, as in
**                               PERSIST; the sync is then redundant, and
**                               done anyway (the locking mode may change
**                               before the COMMIT)
**   a SQLite built with         it never syncs a directory, so a journal or
**   SQLITE_DISABLE_DIRSYNC      WAL file it creates (every mode creates
**                               one) or deletes can vanish or come back at
**                               power loss: refused in every mode
**
** An in-memory database could be said to need no durability, since
** nothing in it survives a crash.  But the request that left does survive,
** in the other system; after a restart the retry finds no claim and sends
** again.  So it is refused, and durability=relaxed is how a test or a
** cache says that it knows.  No refusal's advice leads to a setting that
** is then accepted without being durable.
**
** LOCAL CLAIMS.  A local claim's act is a write into the same database, in
** the same transaction: what takes back one must take back the other.
** That needs a journal that can roll back both together:
**
**   journal_mode=OFF            no journal: a failed COMMIT or a ROLLBACK
**                               cannot undo what the transaction wrote, in
**                               memory or in a file, and the claim stays
**                               pending with no owner: refused
**   journal_mode=MEMORY, file   the journal dies with the process: a crash
**                               after SQLite spilled pages to the file
**                               leaves the claim pending forever: refused
**   synchronous=OFF, or NORMAL  a power loss can keep some of the
**   with a rollback journal,    transaction's pages and lose, or tear, the
**   file                        journal that would undo them (see above):
**                               refused unless durability=relaxed
**
** Anything else is atomic: a power loss may take back a committed local
** claim (DELETE at FULL, WAL at NORMAL), but only with its action, and
** the retry does both again.  In memory (no file, temp, memdb) nothing
** survives a crash, and MEMORY rolls back.
**
** Built with -DIDEM_REPLICATED (the dqlite cluster build, test/cluster/)
** there is no check: dqlite runs its connections with synchronous=OFF
** because a COMMIT returns only once its Raft log entry is synced on a
** quorum of nodes; that log, not the SQLite file, is what keeps the claim.
**
** The settings are per connection and per schema (main, temp, attached),
** so they are read for the table's schema, with PRAGMA queries.  Those
** cost more than a claim (SQLite compiles a PRAGMA's value into its
** program: it is prepared at every read), so they are read once per
** transaction, from its first claim that writes: from then on neither
** setting can change (SQLite refuses "PRAGMA synchronous" in a
** transaction, and keeps the journal mode once the transaction has
** written; before, a transaction that only found its claims held may
** still change it, so each claim reads them again until one writes:
** idemDurableWrote()).  The table's xBegin, called before its first write
** in each transaction, forgets them (idemDurableBegin()).  Between two
** transactions either may change, and must be seen: neither leaves a
** trace in the file, but each change goes through a PRAGMA, which a watch
** on the schema's file sees ("THE WATCH" below), and WAL is kept while
** the schema's data version holds, or this connection holds the file in
** WAL ("WAL, KEPT" and "WAL, HELD" below); where no watch can
** be put, both are read again at every transaction.  What cannot
** change for the table (where its pages live, the VFS, DISABLE_DIRSYNC)
** is looked at once.  So a claim stays an index seek.
**
** Interface for the other parts: "Interface to code in idem_durable.c"
** in idemInt.h.  The option itself, durability=full|relaxed, is parsed
** with the others in idem_options.c (IdemOptions.bRelaxedDurability).
*/
#include "idemInt.h"

/* A SQLite that never syncs a directory.  The power-loss harness
** (test/powerloss/powerloss.c) defines IDEM_DIRSYNC_DISABLED to play such
** a build. */
#ifndef IDEM_DIRSYNC_DISABLED
# ifdef SQLITE_CORE
#  define IDEM_DIRSYNC_DISABLED sqlite3_compileoption_used("DISABLE_DIRSYNC")
# else
   /* NULL in a SQLite built with SQLITE_OMIT_COMPILEOPTION_DIAGS */
#  define IDEM_DIRSYNC_DISABLED (sqlite3_api->compileoption_used \
            && sqlite3_compileoption_used("DISABLE_DIRSYNC"))
# endif
#endif

/* xBegin: a new transaction, where the settings may differ. */
IDEM_PRIVATE void idemDurableBegin(IdemDurable *pD){
  pD->bRead = 0;
  pD->bFixed = 0;
  pD->bDirSync = 0;
  pD->bExtWrote = 0;
}

/* A claim of the table wrote in this transaction: SQLite keeps the journal
** mode from now on (before, a transaction that only read, or found its
** claims held, may still change it), so the settings read are kept until
** the transaction ends. */
IDEM_PRIVATE void idemDurableWrote(IdemDurable *pD){
  pD->bFixed = pD->bRead;
}

static void idemWatchUnref(sqlite3*, const char*);

IDEM_PRIVATE void idemDurableClear(IdemDurable *pD, sqlite3 *db,
                                   const char *zDb){
  if( pD->eWatch==1 ){
    idemWatchUnref(db, zDb);
    if( sqlite3_stricmp(zDb, "main")!=0 ) idemWatchUnref(db, "main");
  }
  pD->eWatch = 0;
  pD->pWatch = pD->pWatchMain = 0;
  pD->nAloneAt = 0;
  pD->bVersion = pD->bWalKept = pD->bSyncKept = pD->bModeKept = 0;
  sqlite3_free(pD->zMarkerName);
  sqlite3_free(pD->pMarkerFile);
  pD->zMarkerName = 0;
  pD->pMarkerFile = 0;
  sqlite3_free(pD->zLost);
  sqlite3_free(pD->zDir);
  pD->zMarker = 0;
  pD->zLost = 0;
  pD->zDir = 0;
  pD->bDirKnown = 0;
  sqlite3_free(pD->zSqlSync);
  sqlite3_free(pD->zSqlJournal);
  pD->zSqlSync = 0;
  pD->zSqlJournal = 0;
  pD->eDirSync = 0;                     /* (idemDurableRead() again) */
}

/* Where schema zDb of db keeps its pages: IDEM_STORE_FILE (a database
** file), IDEM_STORE_NOFILE (":memory:", temp, "": nothing survives the
** connection) or IDEM_STORE_MEMDB (the memdb VFS: sqlite3_deserialize(),
** "file:/x?vfs=memdb", which has a name but keeps its pages in RAM). */
IDEM_PRIVATE int idemDurableStore(sqlite3 *db, const char *zDb){
  const char *zFile;
  sqlite3_vfs *pVfs = 0;
  /* The VFS first: newer SQLite reports no file name for memdb either */
  if( sqlite3_file_control(db, zDb, SQLITE_FCNTL_VFS_POINTER, &pVfs)
        ==SQLITE_OK && pVfs && pVfs->zName && strcmp(pVfs->zName, "memdb")==0 ){
    return IDEM_STORE_MEMDB;
  }
  zFile = sqlite3_db_filename(db, zDb);
  return zFile==0 || zFile[0]==0 ? IDEM_STORE_NOFILE : IDEM_STORE_FILE;
}

/*
** Run zSql, a PRAGMA that reads a setting, prepared afresh: SQLite
** compiles a PRAGMA's value into its program (every PRAGMA is run once:
** kept, it would be prepared again at each step, which costs more than
** preparing it anew: 7 500 instructions against 9 000 for synchronous on
** SQLite 3.40).  Its first column as an int into *piVal, or (zOut) its
** text, upper case, into zOut[16].  SQLITE_OK or an error.
*/
static int idemDurablePragma(sqlite3 *db, const char *zSql, int *piVal,
                             char zOut[16]){
  sqlite3_stmt *pStmt = 0;
  int rc = sqlite3_prepare_v3(db, zSql, -1, 0, &pStmt, 0);
  if( rc!=SQLITE_OK ) return rc;
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    if( zOut ){
      const char *z = (const char*)sqlite3_column_text(pStmt, 0);
      int i;
      for(i=0; z && z[i] && i<15; i++){
        char c = z[i];
        zOut[i] = (c>='a' && c<='z') ? (char)(c-'a'+'A') : c;
      }
      zOut[i] = 0;
      if( z==0 ) rc = SQLITE_NOMEM;
    }else{
      *piVal = sqlite3_column_int(pStmt, 0);
    }
  }else if( rc==SQLITE_DONE ){
    rc = SQLITE_ERROR;
  }
  sqlite3_finalize(pStmt);
  return rc==SQLITE_ROW ? SQLITE_OK : rc;
}

/* The schema name of pD's file controls: none for main, which SQLite then
** takes without comparing names (sqlite3DbNameToBtree(): ~100
** instructions less a call on SQLite 3.40, the same schema). */
#define IDEM_FC_DB(pD, zDb) ((pD)->bMain ? (const char*)0 : (zDb))

/*
** THE WATCH.  synchronous and the rollback journal modes leave no trace
** in the file; what every change of them goes through is the PRAGMA that
** sets it, and SQLite sends each PRAGMA, as it prepares it, to the file of
** the schema it names (main's without a name) as SQLITE_FCNTL_PRAGMA
** (pragma.c; R-12238-55120).  So the table's first read puts a watch on
** its schema's file (and main's: "PRAGMA journal_mode=X" without a schema
** sets every schema's, and goes to main's file): the file's methods are
** kept, and its pMethods points at a copy of them (IdemWatch) in which
** only xFileControl differs, which counts, on its way to the file's own,
** the PRAGMAs that set synchronous or journal_mode (and xClose, which
** lets the watch go with the file).  Then:
**
**   synchronous     is applied where its PRAGMA is prepared, right after
**                   the file control: a count that has not moved since
**                   the last read says that it has not changed (nor
**                   SQLite's WAL default, applied when the file goes to
**                   WAL: that moves the data version, checked too)
**   a rollback      is applied where its PRAGMA is stepped, which may be
**   journal mode    long after it was prepared: once a PRAGMA that sets it
**                   has been seen (or, when the watch is put, a statement
**                   of the connection that names journal_mode is there,
**                   prepared and perhaps not yet stepped), it is read at
**                   every transaction, as before; until then it cannot
**                   have changed but by the file (the data version)
**   WAL             kept by the data version, or held by this
**                   connection ("WAL, HELD", "WAL, KEPT" below)
**
** Where no watch can be put (a file that is not the table's own database
** file, a shared cache, a main without a file for another schema's
** table), the settings are read at every transaction, as before.  The
** watch is let go when the last table that asked for it is disconnected
** (through the file control itself, which SQLite calls under the file's
** own locks), or goes with the file when it is closed first (DETACH).
*/
#define IDEM_FCNTL_WATCH 0x6964656d     /* "idem": our copy's alone */
typedef struct IdemWatch IdemWatch;
struct IdemWatch {                      /* (idemInt.h names it) */
  sqlite3_io_methods base;              /* where pMethods points */
  const sqlite3_io_methods *pOrig;      /* the file's own methods */
  sqlite3_file *pFile;                  /* the file watched */
  IdemWatch *pNext;                     /* every watch of this copy */
  int nRef;                             /* tables watching */
  int bMixed;                           /* counted in idemWatchMixed */
  unsigned int nSync;                   /* "PRAGMA synchronous=" seen */
  int bJournal;                         /* "PRAGMA journal_mode=" seen */
  unsigned int nOpen;                   /* SQLITE_FCNTL_PDB seen (a
                                        ** connection joined the cache) */
};
typedef struct IdemWatchArg IdemWatchArg;
struct IdemWatchArg {
  void *pToken;                         /* this copy of idem's */
  int eOp;                              /* 0 read, 1 let go */
  int bDone;                            /* set by the watch */
  unsigned int nSync;
  int bJournal;
  IdemWatch *pWatch;                    /* the watch itself */
};

/*
** The copy of the methods is the file's own but for xFileControl and
** xClose, so every other call goes straight to the file's own method.
** Those two find their watch by the file, in this copy of idem's list of
** watches (under the mutex SQLite keeps for an extension's VFS), never
** through pMethods: another copy of idem (or any other code) may put its
** own copy of the methods above this one later, and pMethods is then
** theirs.  The mutex is held for the lookup only, never across a call
** into the file's methods.
*/
static IdemWatch *idemWatchAll = 0;

/* The file control under every watch of this copy, where they all have
** the same one (as every file of one VFS does), and the number of those
** that have another: while none has, a call the watch only passes on
** (all but the two it answers) goes there with no lookup.  Both change
** under the mutex; read without it, they are right for the file at hand:
** its watch was put, under the mutex, before any call came to it (so
** the file control is set), and a watch with another file control keeps
** the number above 0 for as long as it is there. */
static int (*idemWatchFc)(sqlite3_file*, int, void*) = 0;
static int idemWatchMixed = 0;

/* The watches of this copy freed so far, under the mutex.  A table keeps
** a pointer to its watch (IdemDurable.pWatch) and reads it directly while
** this count is the one it saw when it took the pointer: a watch goes
** only with its file (closed: DETACH, sqlite3_deserialize()) or its last
** table, on the table's own connection, so a watch that was freed has
** moved the count before the table can read it again, and the table then
** asks the file (idemWatchGet()).  Read without the mutex: another
** connection's change of it is either seen or not, and it never frees
** this table's watch. */
static unsigned int idemWatchGen = 0;
#if defined(__GNUC__) || defined(__clang__)
# define IDEM_WATCH_GEN() __atomic_load_n(&idemWatchGen, __ATOMIC_RELAXED)
# define IDEM_WATCH_GEN_MOVE() __atomic_fetch_add(&idemWatchGen, 1, __ATOMIC_RELAXED)
# define IDEM_WATCH_OPENS(w) __atomic_load_n(&(w)->nOpen, __ATOMIC_RELAXED)
#else
# define IDEM_WATCH_GEN() idemWatchLoadLocked(&idemWatchGen)
# define IDEM_WATCH_GEN_MOVE() (idemWatchGen++)
# define IDEM_WATCH_OPENS(w) idemWatchLoadLocked(&(w)->nOpen)
#endif

/* Enter (bEnter) or leave the list's mutex: SQLite's for an extension's
** VFS, where SQLite has mutexes.  A SQLite built with SQLITE_THREADSAFE=0
** has none: its mutex functions are not there to link (idem compiled into
** it: define SQLITE_THREADSAFE=0 for idem too) or are NULL in the table a
** loadable extension calls through (sqlite3_threadsafe() says 0). */
static void idemWatchLock(int bEnter){
#if !defined(SQLITE_THREADSAFE) || SQLITE_THREADSAFE>0
  if( sqlite3_threadsafe() ){
    sqlite3_mutex *m = sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_VFS2);
    if( bEnter ){
      sqlite3_mutex_enter(m);
    }else{
      sqlite3_mutex_leave(m);
    }
  }
#else
  (void)bEnter;
#endif
}

/* The watch of file f (of this copy of idem), or 0; if bUnlink, taken off
** the list as well. */
static IdemWatch *idemWatchFind(sqlite3_file *f, int bUnlink){
  IdemWatch **pp, *w;
  idemWatchLock(1);
  for(pp=&idemWatchAll; (w = *pp)!=0 && w->pFile!=f; pp=&w->pNext){}
  if( w && bUnlink ){
    *pp = w->pNext;
    idemWatchMixed -= w->bMixed;
    IDEM_WATCH_GEN_MOVE();              /* (it is freed next) */
  }
  idemWatchLock(0);
  return w;
}

#if !defined(__GNUC__) && !defined(__clang__)
/* idemWatchGen or a watch's nOpen, read under the mutex where there are
** no atomic loads. */
static unsigned int idemWatchLoadLocked(unsigned int *pN){
  unsigned int n;
  idemWatchLock(1);
  n = *pN;
  idemWatchLock(0);
  return n;
}
#endif

static int idemWatchClose(sqlite3_file *f){
  IdemWatch *w = idemWatchFind(f, 1);
  const sqlite3_io_methods *pOrig;
  if( w==0 ) return SQLITE_MISUSE;      /* (cannot be: put, then closed) */
  pOrig = w->pOrig;
  if( f->pMethods==&w->base ) f->pMethods = pOrig;
  sqlite3_free(w);
  return pOrig->xClose(f);
}
static int idemWatchFileControl(sqlite3_file *f, int op, void *pArg){
  IdemWatch *w;
  if( op!=SQLITE_FCNTL_PRAGMA && op!=IDEM_FCNTL_WATCH && op!=SQLITE_FCNTL_PDB
   && idemWatchMixed==0 ){
    return idemWatchFc(f, op, pArg);    /* (the file's own, see above) */
  }
  w = idemWatchFind(f, 0);
  if( w==0 ) return SQLITE_NOTFOUND;    /* (cannot be: as above) */
  if( op==SQLITE_FCNTL_PDB ){
    /* sqlite3BtreeOpen() sends it to the pager's file each time a
    ** connection opens a B-tree on it: on a file already open, that is
    ** a connection joining its shared cache (3.39 to 3.53).  Counted
    ** under the mutex, as it may come from another thread; read at
    ** xSync (idemDurableSharedNow()). */
    idemWatchLock(1);
    w->nOpen++;
    idemWatchLock(0);
  }else if( op==SQLITE_FCNTL_PRAGMA ){
    const char *const *az = (const char *const*)pArg;
    if( az[2] ){                        /* sets: a read changes nothing */
      if( sqlite3_stricmp(az[1], "synchronous")==0 ) w->nSync++;
      if( sqlite3_stricmp(az[1], "journal_mode")==0 ) w->bJournal = 1;
    }
  }else if( op==IDEM_FCNTL_WATCH
         && ((IdemWatchArg*)pArg)->pToken==(void*)idemWatchFileControl ){
    IdemWatchArg *a = (IdemWatchArg*)pArg;
    a->bDone = 1;
    a->nSync = w->nSync;
    a->bJournal = w->bJournal;
    a->pWatch = w;
    if( a->eOp==1 && --w->nRef<=0 && f->pMethods==&w->base ){
      idemWatchFind(f, 1);
      f->pMethods = w->pOrig;           /* (else let go with the file) */
      sqlite3_free(w);
    }
    return SQLITE_OK;
  }
  return w->pOrig->xFileControl(f, op, pArg);
}

/* True if a statement of db may set journal_mode when it is next
** stepped: its text names journal_mode (or is not kept).  Looked at once,
** when the watch is put; from then on, the watch sees each. */
static int idemWatchPending(sqlite3 *db){
  sqlite3_stmt *p;
  for(p=sqlite3_next_stmt(db, 0); p; p=sqlite3_next_stmt(db, p)){
    const char *z = sqlite3_sql(p);
    if( z==0 ) return 1;
    for(; *z; z++){
      if( (*z=='j' || *z=='J') && sqlite3_strnicmp(z, "journal_mode", 12)==0 ){
        return 1;
      }
    }
  }
  return 0;
}

/* What the watch of schema zDb's file has seen, into *pA: true if there
** is one (of this copy of idem). */
static int idemWatchGet(sqlite3 *db, const char *zDb, IdemWatchArg *pA){
  memset(pA, 0, sizeof(*pA));
  pA->pToken = (void*)idemWatchFileControl;
  return sqlite3_file_control(db, zDb, IDEM_FCNTL_WATCH, pA)==SQLITE_OK
      && pA->bDone;
}

/* A table no longer watches schema zDb's file. */
static void idemWatchUnref(sqlite3 *db, const char *zDb){
  IdemWatchArg a;
  sqlite3_file *pFile = 0;
  if( sqlite3_file_control(db, zDb, SQLITE_FCNTL_FILE_POINTER, &pFile)
        !=SQLITE_OK || pFile==0 || idemWatchFind(pFile, 0)==0 ){
    return;                             /* (closed with its file) */
  }
  memset(&a, 0, sizeof(a));
  a.pToken = (void*)idemWatchFileControl;
  a.eOp = 1;
  sqlite3_file_control(db, zDb, IDEM_FCNTL_WATCH, &a);
}

/* Put a watch on schema zDb's file, or count one more table on it: true
** if watched. */
static int idemWatchRef(sqlite3 *db, const char *zDb){
  sqlite3_file *pFile = 0;
  const sqlite3_io_methods *pM;
  IdemWatch *w;
  if( sqlite3_file_control(db, zDb, SQLITE_FCNTL_FILE_POINTER, &pFile)
        !=SQLITE_OK || pFile==0 || (pM = pFile->pMethods)==0 ){
    return 0;
  }
  if( (w = idemWatchFind(pFile, 0))!=0 ){
    w->nRef++;
    return 1;
  }
  w = (IdemWatch*)sqlite3_malloc(sizeof(*w));
  if( w==0 ) return 0;
  memset(w, 0, sizeof(*w));
  /* The file's own methods, as many as its iVersion says it has (a VFS
  ** built against an older sqlite3.h has a shorter struct) and this build
  ** knows; but the two above. */
  w->base.iVersion = pM->iVersion<3 ? pM->iVersion : 3;
  w->base.xClose = idemWatchClose;
  w->base.xRead = pM->xRead;
  w->base.xWrite = pM->xWrite;
  w->base.xTruncate = pM->xTruncate;
  w->base.xSync = pM->xSync;
  w->base.xFileSize = pM->xFileSize;
  w->base.xLock = pM->xLock;
  w->base.xUnlock = pM->xUnlock;
  w->base.xCheckReservedLock = pM->xCheckReservedLock;
  w->base.xFileControl = idemWatchFileControl;
  w->base.xSectorSize = pM->xSectorSize;
  w->base.xDeviceCharacteristics = pM->xDeviceCharacteristics;
  if( pM->iVersion>=2 ){
    w->base.xShmMap = pM->xShmMap;
    w->base.xShmLock = pM->xShmLock;
    w->base.xShmBarrier = pM->xShmBarrier;
    w->base.xShmUnmap = pM->xShmUnmap;
  }
  if( pM->iVersion>=3 ){
    w->base.xFetch = pM->xFetch;
    w->base.xUnfetch = pM->xUnfetch;
  }
  w->pOrig = pM;
  w->pFile = pFile;
  w->nRef = 1;
  w->bJournal = idemWatchPending(db);
  idemWatchLock(1);
  if( idemWatchFc==0 ) idemWatchFc = pM->xFileControl;
  w->bMixed = pM->xFileControl!=idemWatchFc;
  idemWatchMixed += w->bMixed;
  w->pNext = idemWatchAll;
  idemWatchAll = w;
  idemWatchLock(0);
  pFile->pMethods = &w->base;
  return 1;
}

static int idemDurableSharedCache(sqlite3*);

/* What the watch of the table (eWatch 1) has seen: the "PRAGMA
** synchronous=" it counted into *pnSync, and whether it saw a PRAGMA that
** sets journal_mode into *pbJournal (of main's too, for another schema).
** Read through the pointers the table keeps while no watch was freed
** since (idemDurableWatchSeen(), inline), else asked of the file again
** (idemDurableWatchAsk(): eWatch 2 if it is gone). */
static void idemDurableWatchAsk(IdemDurable *pD, sqlite3 *db,
                                const char *zDb, unsigned int *pnSync,
                                int *pbJournal, unsigned int iGen){
  IdemWatchArg a, aMain;
  memset(&aMain, 0, sizeof(aMain));
  if( !idemWatchGet(db, zDb, &a)
   || (sqlite3_stricmp(zDb, "main")!=0 && !idemWatchGet(db, "main", &aMain)) ){
    pD->eWatch = 2;                     /* (its file is gone) */
    pD->pWatch = pD->pWatchMain = 0;
  }else{
    pD->pWatch = a.pWatch;
    pD->pWatchMain = aMain.pWatch;
    pD->iWatchGen = iGen;
    pD->nAloneAt = 0;                   /* (its count is another's) */
    *pnSync = a.nSync;
    *pbJournal = a.bJournal || aMain.bJournal;
  }
}
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline)) inline
#endif
static void idemDurableWatchSeen(IdemDurable *pD, sqlite3 *db,
                                 const char *zDb, unsigned int *pnSync,
                                 int *pbJournal){
  unsigned int iGen = IDEM_WATCH_GEN();
  if( pD->pWatch && iGen==pD->iWatchGen ){
    *pnSync = pD->pWatch->nSync;        /* (none freed since: see above) */
    *pbJournal = pD->pWatch->bJournal
              || (pD->pWatchMain && pD->pWatchMain->bJournal);
  }else{
    idemDurableWatchAsk(pD, db, zDb, pnSync, pbJournal, iGen);
  }
}

/*
** WAL, HELD.  A "WAL" read while the watch saw no PRAGMA that sets
** journal_mode holds for as long as the watch still sees none, whatever
** the data version says: it was this connection's pager that read the
** file in WAL mode, and a pager in WAL mode keeps its SHARED lock on the
** database file between transactions (pager_unlock() releases it in a
** rollback mode only), while leaving WAL needs an EXCLUSIVE lock
** (sqlite3PagerCloseWal(): every other connection that tries is told
** SQLITE_BUSY, test/durable.test 3.18).  So only this connection can take
** the file out of WAL, and only by a PRAGMA journal_mode that sets it,
** which the watch sees as it is prepared.  The data version is then not
** asked (a file control, ~150 instructions a transaction); it is still
** moved past the table's own COMMITs (idemDurableCommit()), and where the
** watch or the mode is not kept it is asked again, as before.  bJournal:
** the watch saw such a PRAGMA (or is not there to tell).
*/
static int idemDurableWalHeld(const IdemDurable *pD, int bJournal){
  return pD->eWatch==1 && pD->bWalKept && pD->bVersion && !bJournal;
}

/*
** WAL, KEPT.  A connection leaves WAL mode only by rewriting the file's
** header (bytes 18-19, back to 1: sqlite3BtreeSetVersion(), a write
** transaction of its own, outside any other), whether this connection
** runs "PRAGMA journal_mode=DELETE" or another one does and this one's
** pager sees the header at its next read; and every commit, and every
** change seen from another connection, moves the schema's data version
** (SQLITE_FCNTL_DATA_VERSION: the pager's counter, bumped at each commit
** and each cache reset, for this connection's changes as for others').
** So a "WAL" read when the data version was V still holds while it is V
** (or while it is held, above): true if so (zMode is kept), false if
** journal_mode must be read again.
** idemDurableCommit() moves V past the table's own COMMIT.  The other
** journal modes are per connection and change with no trace in the file,
** and synchronous too (set when its PRAGMA is prepared, no file, no
** counter, no expiry): those are read at every transaction.
*/
static int idemDurableWalKept(IdemDurable *pD, sqlite3 *db, const char *zDb){
  unsigned int v = 0;
  if( !pD->bWalKept || !pD->bVersion ) return 0;
  if( pD->eWatch==1 ){
    unsigned int nSync = 0;
    int bJournal = 0;
    idemDurableWatchSeen(pD, db, zDb, &nSync, &bJournal);
    if( idemDurableWalHeld(pD, bJournal) ) return 1;
  }
  if( sqlite3_file_control(db, IDEM_FC_DB(pD, zDb), SQLITE_FCNTL_DATA_VERSION,
                           &v)!=SQLITE_OK
   || v!=pD->iWalVersion ){
    return 0;
  }
  return 1;
}

/* The table's first read: watch its schema's file (and main's), where
** they are its own database files. */
static void idemDurableWatch(IdemDurable *pD, sqlite3 *db, const char *zDb){
  pD->eWatch = 2;
#ifdef IDEM_REPLICATED
  return;
#endif
  if( pD->eStore!=IDEM_STORE_FILE || idemDurableSharedCache(db) ) return;
  if( sqlite3_stricmp(zDb, "main")!=0
   && idemDurableStore(db, "main")!=IDEM_STORE_FILE ){
    return;
  }
  if( !idemWatchRef(db, zDb) ) return;
  if( sqlite3_stricmp(zDb, "main")!=0 && !idemWatchRef(db, "main") ){
    idemWatchUnref(db, zDb);
    return;
  }
  pD->eWatch = 1;
}

/* Read the settings of schema zDb into pD, once per transaction. */
static int idemDurableRead(IdemDurable *pD, sqlite3 *db, const char *zDb,
                           char **pzErr){
  unsigned int v = 0, nSync = 0;        /* what the watch saw: */
  int bJournal = 0;                     /* (and main's, for another schema) */
  int rc, bVersion, mKept = 0;          /* 1 the mode, 2 synchronous */
  if( pD->bRead && pD->bFixed ) return SQLITE_OK;
  if( pD->eDirSync==0 ){
    /* Fixed for the table's life (a DETACH disconnects it): asked once,
    ** not at every claim (the compile-time options are a list that SQLite
    ** searches; the VFS and the file name are the schema's own). */
    pD->bMain = sqlite3_stricmp(zDb, "main")==0;
    if( pD->bMain ){
      memcpy(pD->zPrefix, "PRAGMA ", 8);
      pD->zSqlSync = sqlite3_mprintf("PRAGMA synchronous");
    }else{
      sqlite3_snprintf(sizeof(pD->zPrefix), pD->zPrefix, "PRAGMA %s.", zDb);
      pD->zSqlSync = sqlite3_mprintf("PRAGMA \"%w\".synchronous", zDb);
    }
    pD->zSqlJournal = sqlite3_mprintf("PRAGMA \"%w\".journal_mode", zDb);
    if( pD->zSqlSync==0 || pD->zSqlJournal==0 ){
      sqlite3_free(pD->zSqlSync);
      sqlite3_free(pD->zSqlJournal);
      pD->zSqlSync = pD->zSqlJournal = 0;
      return SQLITE_NOMEM;
    }
    pD->eStore = idemDurableStore(db, zDb);
    pD->pVfs = 0;
    if( sqlite3_file_control(db, zDb, SQLITE_FCNTL_VFS_POINTER, &pD->pVfs)
          !=SQLITE_OK ){
      pD->pVfs = 0;
    }
    pD->eDirSync = IDEM_DIRSYNC_DISABLED ? 2 : 1;
  }
  if( pD->eWatch==0 ) idemDurableWatch(pD, db, zDb);
  /* What is kept: what the watch saw, then the data version (both before
  ** the PRAGMAs, which may see a change and move it) */
  if( pD->eWatch==1 ) idemDurableWatchSeen(pD, db, zDb, &nSync, &bJournal);
  if( idemDurableWalHeld(pD, bJournal) ){
    v = pD->iWalVersion;                /* (WAL, HELD: not asked) */
    bVersion = 1;
  }else{
    bVersion = sqlite3_file_control(db, IDEM_FC_DB(pD, zDb),
                                    SQLITE_FCNTL_DATA_VERSION, &v)==SQLITE_OK;
  }
  if( bVersion && pD->bVersion && v==pD->iWalVersion ){
    if( pD->bWalKept ) mKept |= 1;
    if( pD->eWatch==1 ){
      if( pD->bModeKept && !bJournal ) mKept |= 1;
      if( pD->bSyncKept && nSync==pD->nSyncSet ) mKept |= 2;
    }
  }
  if( (mKept & 2)==0 ){
    rc = idemDurablePragma(db, pD->zSqlSync, &pD->iSync, 0);
    if( rc!=SQLITE_OK ) goto read_error;
    if( pD->iSync<0 ) pD->iSync = 0;
    if( pD->iSync>3 ) pD->iSync = 3;
  }
  if( (mKept & 1)==0 ){
    rc = idemDurablePragma(db, pD->zSqlJournal, 0, pD->zMode);
    if( rc!=SQLITE_OK ) goto read_error;
    pD->bWalKept = strcmp(pD->zMode, "WAL")==0;
  }
  pD->bVersion = bVersion;
  pD->iWalVersion = v;
  pD->bModeKept = pD->eWatch==1 && !bJournal;
  pD->bSyncKept = pD->eWatch==1;
  pD->nSyncSet = nSync;
  pD->bRead = 1;
  return SQLITE_OK;

 read_error:
  if( rc!=SQLITE_NOMEM ){
    *pzErr = sqlite3_mprintf("a claim cannot read the durability"
        " settings of schema '%s': %s", zDb, sqlite3_errmsg(db));
  }
  return rc;
}

/*
** NO LOCK, NO CLAIM.  A claim is unique because SQLite lets one connection
** at a time write the file: two connections whose locks do not see each
** other both claim one call (both requests leave).  So a claim in a
** database file is refused, whatever durability=, where the locking
** cannot arbitrate between connections:
**
**   nolock=1 (URI)          no locks at all
**   immutable=1 (URI)       no locks (and read-only)
**   VFS unix-none,          no locks
**   win32-none
**   VFS unix-dotfile,       locks that a connection with the default VFS
**   unix-flock, unix-afp,   (POSIX advisory locks) does not see
**   unix-proxy
**   any other VFS whose     seen from the claim: in a rollback journal
**   file does not report    mode the claim's statement holds a RESERVED
**   our own write lock      lock, which xCheckReservedLock reports (in WAL
**                           the writer's lock is in the shared memory;
**                           a VFS without it runs WAL in exclusive locking
**                           mode only, which holds the file's lock)
**   shared cache            one pager for several connections, whose
**                           synchronous setting is the last one any of
**                           them set, while this connection reads its own
**                           (a sibling's synchronous=OFF leaves it at
**                           FULL): SQLite discourages shared cache
**
** The VFS and the file cannot change for the table (a DETACH disconnects
** it): they are looked at once, and our own lock until it was seen once;
** the shared cache then, and at the xSync of every transaction that
** claimed or recorded (idemDurableSyncCheck()): a connection may share
** the cache from any moment, and the COMMIT is where it would count.
*/
static int idemDurableSyncReady(IdemDurable*, sqlite3*, const char*, char**);

static const char *const azNoLockVfs[] = {
  "unix-none", "win32-none", "unix-dotfile", "unix-flock", "unix-afp",
  "unix-proxy",
};

/* True if connection db shares a page cache with another connection now
** (shared-cache mode): each shared pager's memory is divided among its
** connections in SQLITE_DBSTATUS_CACHE_USED_SHARED. */
static int idemDurableSharedCache(sqlite3 *db){
  int nUsed = 0, nShared = 0, nHi = 0;
  if( sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_USED, &nUsed, &nHi, 0)
   || sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_USED_SHARED, &nShared, &nHi, 0) ){
    return 0;
  }
  return nShared<nUsed;
}

/* idemDurableSharedCache() at a COMMIT, asked only when it can have
** changed: a table of main with a watch, on a connection with no other
** schema, that saw its cache unshared when the watch had counted n
** B-trees opened on its file (nAloneAt n+1), knows it is unshared still
** while that count holds: a connection can join a shared cache only by opening
** a B-tree on its pager, which tells the file (SQLITE_FCNTL_PDB), and
** only the connections that share it leave it.  Otherwise, and once the
** count moved, both counts of sqlite3_db_status() (~520 instructions). */
static int idemDurableSharedNow(IdemDurable *pD, sqlite3 *db){
  unsigned int n;
  if( pD->eWatch!=1 || pD->pWatch==0 || pD->pWatchMain!=0
   || IDEM_WATCH_GEN()!=pD->iWatchGen || sqlite3_db_name(db, 2)!=0 ){
    return idemDurableSharedCache(db);
  }
  n = IDEM_WATCH_OPENS(pD->pWatch) + 1;
  if( n==pD->nAloneAt ) return 0;       /* (n wraps to 0: asked again) */
  if( idemDurableSharedCache(db) ) return 1;
  pD->nAloneAt = n;
  return 0;
}

/* The error of a claim in a database whose locks cannot arbitrate. */
static char *idemDurableNoLockError(const char *zDb, const char *zWhat,
                                    int bShared){
  return sqlite3_mprintf("a claim needs file locking that arbitrates between"
      " connections: schema '%s' is opened with %s, so %s;"
      " open the database with the default VFS, without nolock=1 or"
      " immutable=1, and not in shared-cache mode", zDb, zWhat,
      bShared ? "this connection's synchronous setting does not say how its"
                " COMMIT is synced, and a claim can be lost at power loss"
              : "another connection could claim the same call at the same"
                " time and both would act");
}

/*
** SQLITE_OK if the locks of schema zDb's file arbitrate between
** connections (or it has no file: private to this connection), else
** SQLITE_ERROR with *pzErr naming the setting.
*/
static int idemDurableLockCheck(IdemDurable *pD, sqlite3 *db,
                                const char *zDb, char **pzErr){
  sqlite3_vfs *pVfs = 0;
  sqlite3_file *pFile = 0;
  const char *zFile;
  char *zWhat = 0;
  int i, bRes = 0, bShared = 0;
  if( pD->eLock==2 ) return SQLITE_OK;   /* (the cache: at xSync) */
  if( pD->eLock==3 && memcmp(pD->zMode, "WAL", 4)==0 ) return SQLITE_OK;
  if( pD->eLock ) goto probe;
  if( idemDurableStore(db, zDb)!=IDEM_STORE_FILE ) return SQLITE_OK;
  zFile = sqlite3_db_filename(db, zDb);
  if( sqlite3_uri_boolean(zFile, "nolock", 0) ){
    zWhat = sqlite3_mprintf("nolock=1, which takes no locks");
    goto no_lock;
  }
  if( sqlite3_stricmp(sqlite3_uri_parameter(zFile, "cache"), "shared")==0 ){
    goto shared_cache;
  }
  if( sqlite3_uri_boolean(zFile, "immutable", 0) ){
    zWhat = sqlite3_mprintf("immutable=1, which takes no locks");
    goto no_lock;
  }
  if( sqlite3_file_control(db, zDb, SQLITE_FCNTL_VFS_POINTER, &pVfs)==SQLITE_OK
   && pVfs && pVfs->zName ){
    for(i=0; i<(int)(sizeof(azNoLockVfs)/sizeof(azNoLockVfs[0])); i++){
      if( strcmp(pVfs->zName, azNoLockVfs[i])==0 ){
        zWhat = sqlite3_mprintf("vfs=%s, whose locks %s", pVfs->zName,
            i<2 ? "are none" : "a connection with the default VFS does not see");
        goto no_lock;
      }
    }
  }
  if( idemDurableSharedCache(db) ) goto shared_cache;
  pD->eLock = 1;

 probe:
  /* Our own write lock, where the file holds it: a statement that writes
  ** holds RESERVED in a rollback journal mode, or EXCLUSIVE in WAL with
  ** locking_mode=EXCLUSIVE (then without shared memory, or with it). */
  if( sqlite3_txn_state(db, zDb)==SQLITE_TXN_WRITE
   && sqlite3_file_control(db, zDb, SQLITE_FCNTL_FILE_POINTER, &pFile)==SQLITE_OK
   && pFile && pFile->pMethods ){
    const sqlite3_io_methods *pM = pFile->pMethods;
    if( pM->iVersion>=2 && pM->xShmMap!=0 && strcmp(pD->zMode, "WAL")==0 ){
      pD->eLock = 3;        /* the writer's lock is in the -shm: not seen
                            ** (probed again in a rollback journal mode) */
      return SQLITE_OK;
    }
    if( pM->xCheckReservedLock(pFile, &bRes)==SQLITE_OK ){
      if( !bRes ){
        pVfs = 0;
        sqlite3_file_control(db, zDb, SQLITE_FCNTL_VFS_POINTER, &pVfs);
        zWhat = sqlite3_mprintf("vfs=%s, whose file does not report the"
            " write lock this connection holds (a VFS without locks)",
            pVfs && pVfs->zName ? pVfs->zName : "?");
        goto no_lock;
      }
      pD->eLock = 2;
    }
  }
  return SQLITE_OK;

 shared_cache:
  bShared = 1;
  zWhat = sqlite3_mprintf("a shared cache (cache=shared or"
      " SQLITE_OPEN_SHAREDCACHE), whose synchronous setting is the last one"
      " any connection sharing it set, while each reads its own");

 no_lock:
  *pzErr = zWhat ? idemDurableNoLockError(zDb, zWhat, bShared) : 0;
  sqlite3_free(zWhat);
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/*
** xSync, before the COMMIT of a transaction that claimed or recorded in
** the table: a connection that shares the cache of a file now is refused
** (idemDurableLockCheck()), since the pager syncs as the last connection
** to set synchronous says; and the directory sync that an external call's
** COMMIT needs must be possible (idemDurableSyncReady()).  SQLITE_OK, or
** an error with *pzErr.
*/
IDEM_PRIVATE int idemDurableSyncCheck(IdemDurable *pD, sqlite3 *db,
                                      const char *zDb, char **pzErr){
  *pzErr = 0;
#ifdef IDEM_REPLICATED
  return SQLITE_OK;
#endif
  if( (pD->bRead || pD->bExtWrote) && pD->eLock>=2
   && idemDurableSharedNow(pD, db) ){
    pD->eLock = 0;                      /* look again, and say why */
    return idemDurableLockCheck(pD, db, zDb, pzErr);
  }
  if( pD->bExtWrote ) return idemDurableSyncReady(pD, db, zDb, pzErr);
  return SQLITE_OK;
}

/* A file in DELETE mode at FULL, whose COMMIT (the journal's unlink) idem
** makes durable by a directory sync at xCommit. */
static int idemDurableDeleteFull(const IdemDurable *pD){
  return pD->eStore==IDEM_STORE_FILE && pD->iSync==2
      && strcmp(pD->zMode, "DELETE")==0;
}

/*
** May a claim (bExternal: an external one) be made in schema zDb of db?
** SQLITE_OK if so (and then, for an external claim in DELETE mode at
** FULL, the directory is synced at COMMIT: idemDurableCommit());
** otherwise SQLITE_ERROR, with *pzErr (sqlite3_malloc'd; the table adds
** "idem: <table>: " in front) naming the
** setting, why, and the ways out.  Other codes (SQLITE_NOMEM, ...) come
** with *pzErr when there is a message to give.
*/
IDEM_PRIVATE int idemDurableCheck(
  IdemDurable *pD,
  sqlite3 *db,
  const char *zDb,
  int bExternal,
  int bRelaxed,
  char **pzErr
){
  static const char *const azSync[] = { "OFF", "NORMAL", "FULL", "EXTRA" };
  const char *zMode, *zPrefix;
  int iSync, rc;

  *pzErr = 0;
#ifdef IDEM_REPLICATED
  return SQLITE_OK;             /* the replicated log is the durability */
#endif
  if( pD->zLost ){                      /* (idemDurableCommit()) */
    *pzErr = pD->zLost;
    pD->zLost = 0;
    return pD->rcLost;
  }
  if( bExternal && bRelaxed && pD->eLock==2 ) return SQLITE_OK;
  rc = idemDurableRead(pD, db, zDb, pzErr);
  if( rc==SQLITE_OK ) rc = idemDurableLockCheck(pD, db, zDb, pzErr);
  if( rc!=SQLITE_OK || (bExternal && bRelaxed) ) return rc;
  zMode = pD->zMode;
  iSync = pD->iSync;
  zPrefix = pD->zPrefix;

  if( !bExternal ){
    if( strcmp(zMode, "OFF")==0 ){
      *pzErr = sqlite3_mprintf("local claim needs a journal:"
          " %sjournal_mode=OFF cannot roll back a claim and its action"
          " together (after a failed COMMIT, a ROLLBACK or a crash), which"
          " would leave the call pending with no owner; set"
          " %sjournal_mode=%s", zPrefix, zPrefix,
          pD->eStore==IDEM_STORE_FILE ? "WAL or DELETE" : "MEMORY");
    }else if( pD->eStore!=IDEM_STORE_FILE ){
      return SQLITE_OK;          /* nothing survives: both vanish together */
    }else if( strcmp(zMode, "MEMORY")==0 ){
      *pzErr = sqlite3_mprintf("local claim needs a journal on disk:"
          " %sjournal_mode=MEMORY cannot roll back a claim and its action"
          " together after a crash, which would leave the call pending"
          " with no owner; set %sjournal_mode=WAL or DELETE",
          zPrefix, zPrefix);
    }else if( !bRelaxed && (iSync==0 || (iSync<2 && strcmp(zMode, "WAL")!=0)) ){
      *pzErr = sqlite3_mprintf("local claim needs a commit that a"
          " power loss cannot tear: %ssynchronous=%s in %s mode can keep a"
          " claim without its action, or its action without the claim; set"
          " %ssynchronous=%s, or create the table with durability=relaxed",
          zPrefix, azSync[iSync], zMode, zPrefix,
          strcmp(zMode, "WAL")==0 ? "NORMAL or FULL"
                                  : "FULL (or journal_mode=WAL)");
    }else{
      return SQLITE_OK;
    }
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }

  if( pD->eStore==IDEM_STORE_NOFILE ){
    *pzErr = sqlite3_mprintf("external claim needs a durable commit:"
        " schema '%s' is %s, which no crash survives, while the request"
        " does: after a restart the retry would send again; keep the table"
        " in a database file, or create it with durability=relaxed", zDb,
        sqlite3_stricmp(zDb, "temp")==0 ? "the temporary database"
                                        : "an in-memory database");
  }else if( pD->eStore==IDEM_STORE_MEMDB ){
    *pzErr = sqlite3_mprintf("external claim needs a durable commit:"
        " schema '%s' is held in memory by the memdb VFS"
        " (sqlite3_deserialize() or vfs=memdb), which no crash survives,"
        " whatever its journal_mode, while the request does: after a"
        " restart the retry would send again; keep the table in a database"
        " file on disk, or create it with durability=relaxed", zDb);
  }else if( strcmp(zMode, "MEMORY")==0 || strcmp(zMode, "OFF")==0 ){
    *pzErr = sqlite3_mprintf("external claim needs a durable commit:"
        " %sjournal_mode=%s can lose it at power loss or a crash; set"
        " %sjournal_mode=WAL (with synchronous=FULL) or DELETE, or create"
        " the table with durability=relaxed", zPrefix, zMode, zPrefix);
  }else if( strcmp(zMode, "WAL")==0 && iSync<2 ){
    *pzErr = sqlite3_mprintf("external claim needs a durable commit:"
        " %ssynchronous=%s in WAL mode can lose it at power loss; set"
        " synchronous=FULL or create the table with durability=relaxed",
        zPrefix, azSync[iSync]);
  }else if( strcmp(zMode, "TRUNCATE")==0 && iSync<2 ){
    *pzErr = sqlite3_mprintf("external claim needs a durable commit:"
        " %ssynchronous=%s in TRUNCATE mode can lose it at power loss (the"
        " journal's truncation is not synced); set synchronous=FULL or"
        " create the table with durability=relaxed", zPrefix, azSync[iSync]);
  }else if( iSync==0 ){
    *pzErr = sqlite3_mprintf("external claim needs a durable commit:"
        " %ssynchronous=OFF can lose it at power loss; set synchronous=FULL"
        " or create the table with durability=relaxed", zPrefix);
  }else if( iSync<2 ){
    *pzErr = sqlite3_mprintf("external claim needs a durable commit:"
        " %ssynchronous=NORMAL in %s mode can lose it at power loss (the"
        " journal's header is synced with its records, not after them);"
        " set synchronous=FULL or create the table with durability=relaxed",
        zPrefix, zMode);
  }else if( pD->eDirSync==2 ){
    *pzErr = sqlite3_mprintf("external claim needs a durable commit:"
        " this SQLite is built with SQLITE_DISABLE_DIRSYNC and never syncs"
        " a directory, so the journal or WAL file it creates or deletes"
        " can vanish or come back at power loss and take the claim back;"
        " use a SQLite built without it, or create the table with"
        " durability=relaxed");
  }else{
    pD->bExtWrote = 1;
    if( idemDurableDeleteFull(pD) ) pD->bDirSync = 1;
    return SQLITE_OK;
  }
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/*
** An UPDATE of an external call (its outcome, a release): no check (the
** outcome is always recorded), but in DELETE mode at FULL its COMMIT is
** made durable like the claim's, so that a 'done' that returned is not
** taken back to 'pending' by a power loss.  Where the settings cannot be
** read, nothing more is done than SQLite does.
*/
IDEM_PRIVATE void idemDurableRecord(IdemDurable *pD, sqlite3 *db,
                                    const char *zDb){
  char *zErr = 0;
#ifdef IDEM_REPLICATED
  return;
#endif
  if( !(pD->bRead && pD->bFixed) && pD->eDirSync!=0
   && idemDurableWalKept(pD, db, zDb) ){
    /* WAL, kept: synchronous decides nothing here (only DELETE at FULL
    ** asks a directory sync), so it is not read.  Nor is bRead set: a
    ** claim later in this transaction reads it, and its verdict needs
    ** it. */
    pD->bExtWrote = 1;
    return;
  }
  if( idemDurableRead(pD, db, zDb, &zErr)!=SQLITE_OK ){
    sqlite3_free(zErr);
    return;
  }
  pD->bExtWrote = 1;
  if( idemDurableDeleteFull(pD) && pD->eDirSync==1 ) pD->bDirSync = 1;
}

/* The directory of file zFile ("/" for the root); NULL without memory. */
static char *idemDurableDir(const char *zFile){
  int n = (int)strlen(zFile);
  while( n>0 && zFile[n-1]!='/' ) n--;
  return n<=1 ? sqlite3_mprintf("/") : sqlite3_mprintf("%.*s", n-1, zFile);
}

/*
** Create the marker, "<db>-idem" and 3 hex digits (no longer than the name
** of the database's own journal, "<db>-journal": where SQLite can make its
** journal, idem can make its marker), next to schema zDb's file, for
** idemDurableCommit() to delete with a directory sync.  SQLITE_OK (the
** name in pD->zMarker) or the VFS's error (with *pzErr).  The name and
** the VFS's file object are made at the table's first marker and kept
** (the file is the table's for its life): each marker writes its 3 digits,
** the next of a sequence from a random start, another on a collision
** (zFile: the database's file name, needed for the first only).
*/
static int idemDurableMarker(IdemDurable *pD, sqlite3_vfs *pVfs,
                             const char *zFile, char **pzErr){
  static const char azHex[] = "0123456789abcdef";
  sqlite3_file *pFile;
  char *z;
  int i, rc = SQLITE_OK, flags = 0;
  if( pD->zMarkerName==0 ){
    /* (two NULs: the VFS reads URI parameters after a file name) */
    pD->zMarkerName = sqlite3_mprintf("%s-idem000%c", zFile, 0);
    if( pD->zMarkerName==0 ) return SQLITE_NOMEM;
    pD->nMarkerName = (int)strlen(pD->zMarkerName);
    sqlite3_randomness(sizeof(pD->iMarker), &pD->iMarker);
  }
  if( pD->pMarkerFile==0 ){
    pD->pMarkerFile = (sqlite3_file*)sqlite3_malloc(pVfs->szOsFile);
    if( pD->pMarkerFile==0 ) return SQLITE_NOMEM;
  }
  pFile = pD->pMarkerFile;
  z = pD->zMarkerName + pD->nMarkerName - 3;
  for(i=0; i<8; i++){
    unsigned int r = pD->iMarker++;
    z[0] = azHex[(r>>8) & 0xf];
    z[1] = azHex[(r>>4) & 0xf];
    z[2] = azHex[r & 0xf];
    memset(pFile, 0, pVfs->szOsFile);
    rc = pVfs->xOpen(pVfs, pD->zMarkerName, pFile, SQLITE_OPEN_READWRITE
           | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXCLUSIVE
           | SQLITE_OPEN_SUPER_JOURNAL, &flags);
    if( pFile->pMethods ) pFile->pMethods->xClose(pFile);
    if( rc==SQLITE_OK ){                /* (else taken by another?) */
      pD->zMarker = pD->zMarkerName;
      break;
    }
  }
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    *pzErr = sqlite3_mprintf("an external call's COMMIT in DELETE mode at"
        " synchronous=FULL is made durable by a directory sync after it,"
        " which idem makes by creating a file next to the database and"
        " deleting it, and \"%.*s-idem...\" cannot be created (%s: a file"
        " name longer than the file system takes, or a directory that"
        " cannot be written): a power loss could take the COMMIT back; use"
        " a shorter file name, journal_mode=WAL, TRUNCATE or PERSIST, or"
        " create the table with durability=relaxed", pD->nMarkerName-8,
        pD->zMarkerName, sqlite3_errstr(rc));
    if( *pzErr==0 ) rc = SQLITE_NOMEM;
  }
  return rc;
}

/*
** xSync, before the COMMIT: a transaction that wrote an external call
** (not relaxed) in a database file whose COMMIT needs a directory sync
** (SQLite's own, of the journal or WAL file it creates or deletes, and
** idem's after a DELETE-mode COMMIT at FULL) fails here, where an error
** still fails the COMMIT, if the sync cannot be made: the directory cannot
** be opened to be synced (the unix VFS then skips the sync, and only
** logs it), or idem's marker cannot be created.  The marker made here is
** deleted, with the directory sync, by idemDurableCommit().
*/
static int idemDurableSyncReady(IdemDurable *pD, sqlite3 *db,
                                const char *zDb, char **pzErr){
  sqlite3_vfs *pVfs = pD->pVfs;
  const char *zFile;
  char *zDir;
  int rc, bOk = 0;
  if( pD->eDirSync!=1 || pD->eStore!=IDEM_STORE_FILE || pVfs==0 ){
    return SQLITE_OK;
  }
  if( !pD->bDirKnown ){
    /* The VFS (pD->pVfs), the file and so its directory are fixed for the
    ** table's life: looked at once, the directory's permission at every
    ** COMMIT. */
    zFile = sqlite3_db_filename(db, zDb);
    if( zFile && zFile[0]=='/' ){       /* a unix path: directories sync */
      if( (pD->zDir = idemDurableDir(zFile))==0 ) return SQLITE_NOMEM;
    }
    pD->bDirKnown = 1;
  }
  if( pD->zDir ){
    zDir = pD->zDir;
    rc = pVfs->xAccess(pVfs, zDir, SQLITE_ACCESS_READWRITE, &bOk);
    if( rc!=SQLITE_OK || !bOk ){
      *pzErr = sqlite3_mprintf("an external call's COMMIT needs the"
          " directory of the database synced, and %s cannot be opened to"
          " sync it (it needs read and write permission; the VFS would"
          " skip the sync and only log it): a power loss could take the"
          " COMMIT back; give the directory read permission, or create the"
          " table with durability=relaxed", zDir);
      return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
  }
  if( pD->bDirSync && pD->zMarker==0 ){
    if( pD->zMarkerName ) return idemDurableMarker(pD, pVfs, 0, pzErr);
    zFile = sqlite3_db_filename(db, zDb);
    if( zFile && zFile[0] ) return idemDurableMarker(pD, pVfs, zFile, pzErr);
  }
  return SQLITE_OK;
}

/*
** xCommit, after the pager's commit and before the statement returns: if
** the transaction wrote an external call in DELETE mode at FULL, sync
** the directory of schema zDb's file, which makes the journal's unlink
** (the COMMIT) durable.  The VFS syncs a directory in xDelete(dirSync=1),
** so the marker made at xSync (idemDurableSyncReady()) is deleted that
** way.  xCommit cannot fail: what can still fail here (the unlink or the
** sync itself, an I/O error) goes to sqlite3_log() and is kept, and the
** table's next claim fails with it (idemDurableCheck()), once.
*/
IDEM_PRIVATE void idemDurableCommit(IdemDurable *pD){
  sqlite3_vfs *pVfs = 0;
  int rc;
  if( pD->bVersion && (pD->bRead || pD->bExtWrote) ){
    /* Past this transaction's own commit, in which the file could not
    ** change otherwise (it held the write lock since the data version was
    ** read, with the settings or seen kept): the pager moves it by one at
    ** each commit of a write transaction (sqlite3PagerCommitPhaseTwo(),
    ** before this xCommit), so the version is the one read, plus one,
    ** without asking the file.  Anything else that moved it since (a
    ** cache reset) moved it further: only ever a read again, never a
    ** setting kept that could have changed. */
    pD->iWalVersion++;
  }
  if( !pD->bDirSync ) return;
  pD->bDirSync = 0;
  if( pD->zMarker==0 ) return;          /* (not a file: nothing to sync) */
  pVfs = pD->pVfs;                      /* (which made the marker) */
  rc = pVfs ? pVfs->xDelete(pVfs, pD->zMarker, 1) : SQLITE_MISUSE;
  if( rc!=SQLITE_OK ){
    sqlite3_log(rc, "idem: cannot sync the directory of %s after an"
                " external call's COMMIT", pD->zMarker);
    sqlite3_free(pD->zLost);
    pD->zLost = sqlite3_mprintf("the directory sync after this table's"
        " last COMMIT of an external call failed (%s, deleting %s): that"
        " COMMIT may not survive a power loss; check the file system, and"
        " the calls of that transaction", sqlite3_errstr(rc), pD->zMarker);
    pD->rcLost = rc;
  }
  pD->zMarker = 0;                      /* (the name is kept) */
}

/* xRollback: the marker of a COMMIT that failed after xSync goes. */
IDEM_PRIVATE void idemDurableRollback(IdemDurable *pD){
  sqlite3_vfs *pVfs = pD->pVfs;
  pD->bDirSync = 0;
  if( pD->zMarker==0 ) return;
  if( pVfs ) pVfs->xDelete(pVfs, pD->zMarker, 0);
  pD->zMarker = 0;
}

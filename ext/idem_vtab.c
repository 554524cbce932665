/* SPDX-License-Identifier: MIT */
/*
** idem_vtab.c -- the idem module: its slots, query plans and cursor.  The
** claim's rules (what an INSERT, UPDATE or DELETE may do) are in
** idem_claim.c, idem_outcome.c and idem_commit.c, the options in
** idem_options.c, the shadow tables and the statements in idem_store.c.
**
**   CREATE VIRTUAL TABLE calls USING idem;                 -- or
**   CREATE VIRTUAL TABLE calls USING idem(local_failure=keep,
**       durability=full, args_mismatch=error, retain='24 hours',
**       stale_after='10 minutes');
**
**   INSERT INTO calls(who, conv, tool, args, kind) VALUES(...);  -- claim
**   SELECT changes();                          -- 1: this caller owns it
**   INSERT INTO calls(key, member, id, result) VALUES(...);      -- member
**   UPDATE calls SET status='done', id=?, result=?
**    WHERE key=? AND member=0;                                  -- record
**   SELECT * FROM calls WHERE key=?;           -- replay the whole group
**   SELECT reply FROM calls WHERE key=? AND member=0;  -- {"id":..,
**                                                      --  "idempotent":true}
**
** Columns: key, member, who, conv, tool, args, kind, status, id, result,
** note, created, updated, and the hidden reply, reconcile, keyargs, owner,
** expires, stale, honours_key, sends and resend_at.
**
**   SELECT idem_options('calls' [, 'main']);   -- the options as parsed
**
** The module stands on the rules of the claim (idem_options.c: the
** options; idem_claim.c: INSERT; idem_outcome.c: UPDATE, DELETE, the
** reply; idem_commit.c: COMMIT) and on the store
** (idem_store.c: the shadow tables, the statements, the transaction's
** list of local claims); it calls the rules for everything a write may
** do, and the store for everything it reads.
**
** TRUST.  The module is SQLITE_VTAB_DIRECTONLY: it writes claims and
** releases them, so it must not be reachable from triggers or views that
** arrive with a database file; applications and operators use it directly.
** SQLITE_VTAB_CONSTRAINT_SUPPORT makes OR IGNORE/OR FAIL/OR ROLLBACK work
** (without it every constraint error is an ABORT).  The store's
** statements are prepared with SQLITE_PREPARE_NO_VTAB: they never reach a
** virtual table, whatever the schema holds.
*/
#include "idemInt.h"

/* Query plans (idxNum).  A created range adds 3*lower+upper, where lower
** is 0 (none), 1 (>) or 2 (>=) and upper 0 (none), 1 (<) or 2 (<=); its
** statement is IDEM_STMT_Q_CREATED plus the same. */
#define IDEM_PLAN_SCAN        0
#define IDEM_PLAN_KEY         1
#define IDEM_PLAN_KEYMEMBER   2
#define IDEM_PLAN_CREATED     3
/* Added to a key plan when the query reads none of who, conv, tool, args,
** keyargs, owner (a replay of status, id, result or reply): the inner query then selects
** NULL in their place instead of copying the call's identity out of every
** row it visits. */
#define IDEM_PLAN_LIGHT      64
#define IDEM_IDENTITY_COLS \
  ((sqlite3_uint64)1<<IDEM_COL_WHO | (sqlite3_uint64)1<<IDEM_COL_CONV \
   | (sqlite3_uint64)1<<IDEM_COL_TOOL | (sqlite3_uint64)1<<IDEM_COL_ARGS \
   | (sqlite3_uint64)1<<IDEM_COL_KEYARGS | (sqlite3_uint64)1<<IDEM_COL_OWNER)
/* Added to a light key plan when the query reads nothing but key, member,
** status, id and result (the replay): the inner query then reads member,
** status, id, result (and expires) alone, each a copy fewer at every
** step, and the key is the one the cursor bound (equal to the row's: the
** shadow key is compared as a blob). */
#define IDEM_PLAN_NARROW    128
/* Added to a key plan that SQLite says reads every column (colUsed all
** ones, as it says for an UPDATE or DELETE of a virtual table; a query
** names at most the table's 22): the inner query leaves out who, conv,
** tool, args, keyargs and updated, which an UPDATE passes as unchanged
** (each a copy fewer), and the cursor reads them from the call's main row
** (IDEM_STMT_Q_MAIN) only if it is asked for them, or for stale or
** resend_at, computed from updated; and a main row's created, read by its
** rid if it is asked for (idemCursorCreated()). */
#define IDEM_PLAN_UPDATE    256
#define IDEM_UPDATE_COLS \
  ((sqlite3_uint64)1<<IDEM_COL_WHO | (sqlite3_uint64)1<<IDEM_COL_CONV \
   | (sqlite3_uint64)1<<IDEM_COL_TOOL | (sqlite3_uint64)1<<IDEM_COL_ARGS \
   | (sqlite3_uint64)1<<IDEM_COL_KEYARGS | (sqlite3_uint64)1<<IDEM_COL_UPDATED)
#define IDEM_UPDATE_MAIN_COLS (IDEM_UPDATE_COLS \
   | (sqlite3_uint64)1<<IDEM_COL_STALE | (sqlite3_uint64)1<<IDEM_COL_RESEND_AT)
#define IDEM_NARROW_COLS \
  ((sqlite3_uint64)1<<IDEM_COL_KEY | (sqlite3_uint64)1<<IDEM_COL_MEMBER \
   | (sqlite3_uint64)1<<IDEM_COL_STATUS | (sqlite3_uint64)1<<IDEM_COL_ID \
   | (sqlite3_uint64)1<<IDEM_COL_RESULT)

typedef struct IdemCursor IdemCursor;
struct IdemCursor {
  sqlite3_vtab_cursor base;   /* Base class.  Must be first */
  sqlite3_stmt *pStmt;        /* The query being stepped */
  int iStmt;                  /* Its IDEM_STMT_* number */
  int bLent;                  /* pStmt is lent (idemStmtLend()) */
  int bEof;                   /* True at end of results */
  int bMember;                /* The current row is a member row */
  int bNarrow;                /* pStmt is IDEM_PLAN_NARROW's: its own
                              ** columns (IDEM_N_*), no key column */
  int bNoIdentity;            /* pStmt is IDEM_PLAN_UPDATE's: no who, conv,
                              ** tool, args, keyargs (from pMain) */
  int iFormat;                /* The table's format when pStmt was lent */
  int bUpdate;                /* An UPDATE's: xColumn was asked nochange */
  unsigned int nWrite;        /* IdemVtab.nWrite when it reached the row */
  sqlite3_stmt *pMain;        /* The main row of a member row's call */
  int bMainLent;              /* pMain is lent (IDEM_STMT_Q_MAIN) */
  char *zReply;               /* Cached reply of the current row */
  unsigned char aKey[IDEM_KEY_BYTES];  /* The key pStmt is bound to */
  int bRetain;                /* Skip the rows of expired calls (retain) */
  int bOneRow;                /* key = ? AND member = ?: the row found is
                              ** the only one (UNIQUE(key, member)) */
  sqlite3_int64 iMember;      /* ... and member, bound: the row's */
  int bUpTo;                  /* Format 4's created range with an upper
                              ** bound: the rows end at the first one
                              ** past it (IDEM_Q_UPTO) */
  int bRid;                   /* iRid holds the current row's rid */
  sqlite3_int64 iRid;         /* (read once: xRowid, the parked row) */
  char zNow[IDEM_TIME_LEN];   /* The time of xFilter: expired before it */
  char zStaleBefore[IDEM_TIME_LEN];   /* stale_after: pending calls quiet
                                      ** since before this are stale */
};

/*
** The tables of one connection that are open (connected), so that
** idem_options() can read the options each was parsed with: the module's
** client data, one per connection (idemVtabRegister()).
*/
typedef struct IdemOpenList IdemOpenList;
struct IdemOpenList {
  IdemVtab *pFirst;
  int nRef;                   /* The module, idem_options()'s two forms,
                              ** and each table in the list */
};

/* One holder of the list lets go of it (the module dropped, a form of
** idem_options() replaced or deleted): freed with the last one, so that
** neither outlives it (sqlite3_drop_modules() frees the module's part
** while the functions are still there). */
static void idemOpenRelease(void *pArg){
  IdemOpenList *pOpen = (IdemOpenList*)pArg;
  if( --pOpen->nRef==0 ) sqlite3_free(pOpen);
}

/* A table leaves the list, and lets go of the reference it holds on it:
** the list outlives its tables, also when the module and the functions
** that held it are gone (another copy of idem loaded on the connection
** registers its own "idem" and idem_options() over them, and this copy's
** tables stay connected until the schema lets them go). */
static void idemOpenUnlink(IdemVtab *p){
  if( p->pOpen ){
    IdemVtab **pp = &p->pOpen->pFirst;
    while( *pp && *pp!=p ) pp = &(*pp)->pNextOpen;
    if( *pp ) *pp = p->pNextOpen;
    idemOpenRelease(p->pOpen);
    p->pOpen = 0;
  }
}

/*
** COPIES.  A replay's xColumn gives each text or blob of the inner query
** as a copy that SQLite owns until it calls the destructor (as for any
** sqlite3_result_text() with one): SQLite frees the copy it makes of a
** column (SQLITE_TRANSIENT) at every reset of the caller's statement, so
** a replay in autocommit paid a malloc() and a free() for it at every
** lookup.  Here a copy given back by SQLite is kept (at most
** IDEM_COPY_SPARE of them, each of up to IDEM_COPY_MAX bytes) for the
** next row or lookup.  A copy outlives nothing it points into: it is the
** table's memory, given back by SQLite when its value is released, and
** the keeper (IdemCopies) is freed with the table or, if copies are still
** out then, with the last of them.  Only where the database is UTF-8 (a
** copy of the value's own bytes, never converted); larger values, blobs
** and text holding a NUL are SQLite's own copies (sqlite3_result_value()).
*/
#define IDEM_COPY_SPARE 4
#define IDEM_COPY_MAX   4096
typedef struct IdemCopies IdemCopies;
typedef struct IdemCopy IdemCopy;
struct IdemCopies {
  int eUtf8;                  /* 1: the database is UTF-8; -1: it is not */
  int bLive;                  /* The table holds it (else freed with the
                              ** last copy given back) */
  int nOut;                   /* Copies SQLite holds */
  int nSpare;                 /* Copies kept, in aSpare[] */
  IdemCopy *aSpare[IDEM_COPY_SPARE];
};
struct IdemCopy {
  IdemCopies *pHome;          /* Given back to it */
  sqlite3_int64 nAlloc;       /* Bytes after this header */
};

/* The destructor of a copy (sqlite3_result_text()'s). */
static void idemCopyFree(void *pData){
  IdemCopy *pCopy = (IdemCopy*)pData - 1;
  IdemCopies *pHome = pCopy->pHome;
  pHome->nOut--;
  if( pHome->bLive && pHome->nSpare<IDEM_COPY_SPARE ){
    pHome->aSpare[pHome->nSpare++] = pCopy;
    return;
  }
  sqlite3_free(pCopy);
  if( !pHome->bLive && pHome->nOut==0 ) sqlite3_free(pHome);
}

/* The table lets go of its copies (idemVtabFree()). */
static void idemCopiesRelease(IdemCopies *pHome){
  if( pHome==0 ) return;
  while( pHome->nSpare>0 ) sqlite3_free(pHome->aSpare[--pHome->nSpare]);
  pHome->bLive = 0;
  if( pHome->nOut==0 ) sqlite3_free(pHome);
}

/*
** The result of ctx: pVal, a value of the cursor's inner query, as a copy
** kept by the table (above) where it can be, else as SQLite copies it.
*/
static void idemResultCopy(IdemVtab *p, sqlite3_context *ctx,
                           sqlite3_value *pVal){
  IdemCopies *pHome = (IdemCopies*)p->pCopies;
  IdemCopy *pCopy;
  const char *z;
  int n;
  if( sqlite3_value_type(pVal)!=SQLITE_TEXT ) goto as_sqlite;
  if( pHome==0 ){
    pHome = (IdemCopies*)sqlite3_malloc(sizeof(*pHome));
    if( pHome==0 ) goto as_sqlite;
    memset(pHome, 0, sizeof(*pHome));
    pHome->bLive = 1;
    /* (read again at the next copy if it could not be read) */
    pHome->eUtf8 = idemDbUtf8(p->db);
    if( pHome->eUtf8==0 ){
      sqlite3_free(pHome);
      goto as_sqlite;
    }
    p->pCopies = pHome;
  }
  if( pHome->eUtf8<0 || (pHome->nSpare==0 && pHome->nOut>=IDEM_COPY_SPARE) ){
    goto as_sqlite;
  }
  n = sqlite3_value_bytes(pVal);
  if( n>=IDEM_COPY_MAX ) goto as_sqlite;
  z = (const char*)sqlite3_value_text(pVal);
  if( z==0 || (int)strlen(z)!=n ) goto as_sqlite;
  pCopy = pHome->nSpare>0 ? pHome->aSpare[pHome->nSpare-1] : 0;
  if( pCopy==0 || pCopy->nAlloc<=n ){
    /* a new copy, or a kept one grown (to 64 bytes at least) */
    sqlite3_int64 nAlloc = n<64 ? 64 : n+1;
    IdemCopy *pNew = (IdemCopy*)sqlite3_realloc64(pCopy,
                                                  sizeof(IdemCopy) + nAlloc);
    if( pNew==0 ) goto as_sqlite;
    pNew->pHome = pHome;
    pNew->nAlloc = nAlloc;
    if( pCopy ) pHome->aSpare[pHome->nSpare-1] = pNew;
    pCopy = pNew;
  }
  if( pHome->nSpare>0 && pCopy==pHome->aSpare[pHome->nSpare-1] ) pHome->nSpare--;
  memcpy(pCopy+1, z, n+1);
  pHome->nOut++;
  sqlite3_result_text(ctx, (const char*)(pCopy+1), -1, idemCopyFree);
  return;
 as_sqlite:
  sqlite3_result_value(ctx, pVal);
}

static void idemVtabFree(IdemVtab *p){
  if( p ){
    idemOpenUnlink(p);
    sqlite3_free(p->pSpareCursor);
    idemCopiesRelease((IdemCopies*)p->pCopies);
    idemStoreClose(p);
    idemDurableClear(&p->durable, p->db, p->zDb);
    idemJsonFree(p->pJson);
    idemJsonFree(p->pJsonKey);
    sqlite3_free(p->base.zErrMsg);    /* one SQLite never took (xDestroy) */
    sqlite3_free(p->zUnusable);
    sqlite3_free(p->zDb);
    sqlite3_free(p->zName);
    sqlite3_free(p);
  }
}

/* ------------------------------------------------------- create/connect */

/*
** xCreate and xConnect.  argv[0] is the module name, argv[1] the schema,
** argv[2] the table name, argv[3...] the options.
*/
static int idemInit(
  sqlite3 *db, IdemOpenList *pOpen, int argc, const char *const*argv,
  sqlite3_vtab **ppVtab, char **pzErr, int bCreate
){
  IdemVtab *p;
  int rc = SQLITE_OK;

  p = (IdemVtab*)sqlite3_malloc(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->now.iSec = -1;
  p->zDb = sqlite3_mprintf("%s", argv[1]);
  p->zName = sqlite3_mprintf("%s", argv[2]);
  if( p->zDb==0 || p->zName==0 ){ rc = SQLITE_NOMEM; goto fail; }
  {
    char *zErr = 0;
    /* An option given twice is refused when the table is made; a table an
    ** older build made so keeps working, the last one winning as then. */
    rc = idemOptionParseAll(&p->opt, argc-3, argv+3,
                            !bCreate, &zErr);
    if( zErr && !bCreate ){
      /* A table made by another build of idem, with an option this one
      ** does not know: connect anyway, so that DROP TABLE works, and refuse
      ** everything else (p->zUnusable). */
      p->zUnusable = sqlite3_mprintf("this build of idem cannot use the"
          " table (%s); it was made by another build: use that build, or"
          " DROP TABLE %s", zErr, p->zName);
      rc = p->zUnusable ? SQLITE_OK : SQLITE_NOMEM;
    }else if( zErr ){
      idemVtabError(p, "%s", zErr);
    }
    sqlite3_free(zErr);
    if( rc!=SQLITE_OK ) goto fail;
  }
  if( sqlite3_file_control(db, p->zDb, SQLITE_FCNTL_VFS_POINTER, &p->pVfs)
      !=SQLITE_OK || p->pVfs==0 ){
    p->pVfs = sqlite3_vfs_find(0);
  }

  if( bCreate && (rc = idemStoreCreate(p))!=SQLITE_OK ) goto fail;

  rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(key TEXT, member INTEGER, who, conv, tool, args TEXT,"
      " kind TEXT, status TEXT, id, result, note TEXT, created TEXT,"
      " updated TEXT, reply TEXT HIDDEN, reconcile TEXT HIDDEN,"
      " keyargs TEXT HIDDEN, owner TEXT HIDDEN, expires TEXT HIDDEN,"
      " stale INTEGER HIDDEN, honours_key INTEGER HIDDEN,"
      " sends INTEGER HIDDEN, resend_at TEXT HIDDEN)");
  if( rc!=SQLITE_OK ){
    idemVtabDbError(p, rc);
    goto fail;
  }
  sqlite3_vtab_config(db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  if( !bCreate && (rc = idemStoreConnect(p))!=SQLITE_OK ) goto fail;
  if( pOpen ){
    p->pOpen = pOpen;                   /* (a reference: idemOpenUnlink()) */
    pOpen->nRef++;
    p->pNextOpen = pOpen->pFirst;
    pOpen->pFirst = p;
  }
  *ppVtab = &p->base;
  return SQLITE_OK;

 fail:
  idemVtabErrorTo(p, pzErr);
  idemVtabFree(p);
  return rc;
}

static int idemCreate(sqlite3 *db, void *pAux, int argc,
                      const char *const*argv, sqlite3_vtab **ppVtab,
                      char **pzErr){
  return idemInit(db, (IdemOpenList*)pAux, argc, argv, ppVtab, pzErr, 1);
}

static int idemConnect(sqlite3 *db, void *pAux, int argc,
                       const char *const*argv, sqlite3_vtab **ppVtab,
                       char **pzErr){
  return idemInit(db, (IdemOpenList*)pAux, argc, argv, ppVtab, pzErr, 0);
}

static int idemDisconnect(sqlite3_vtab *pVtab){
  idemVtabFree((IdemVtab*)pVtab);
  return SQLITE_OK;
}

/* xDestroy: drop the shadow tables (idemStoreDrop()), then the table. */
static int idemDestroy(sqlite3_vtab *pVtab){
  IdemVtab *p = (IdemVtab*)pVtab;
  int rc = idemStoreDrop(p);
  if( rc==SQLITE_OK ) idemVtabFree(p);
  return rc;
}

/* xRename.  Refused while the open transaction has claimed local calls
** in the table, by this object or by another of the connection's for it
** (SQLite makes a new one after a schema reset, as at a ROLLBACK TO over
** DDL): they are checked at xSync under the name their object has then,
** which a ROLLBACK TO, or a RENAME by the other object, takes from under
** it (the COMMIT failed with "no such table", the transaction rolled
** back). */
static int idemRename(sqlite3_vtab *pVtab, const char *zNew){
  IdemVtab *p = (IdemVtab*)pVtab, *q;
  for(q=p->pOpen ? p->pOpen->pFirst : 0; q; q=q->pNextOpen){
    if( q->nTxn>0 && sqlite3_stricmp(q->zDb, p->zDb)==0
     && sqlite3_stricmp(q->zName, p->zName)==0 ){
      idemVtabError(p, "cannot rename %s in a transaction that has claimed"
          " local calls in it (the COMMIT checks them under the table's"
          " name): commit or roll back first, then rename", p->zName);
      return SQLITE_ERROR;
    }
  }
  return idemStoreRename(p, zNew);
}

/* ---------------------------------------------------------- transaction */

static int idemBegin(sqlite3_vtab *pVtab){
  IdemVtab *p = (IdemVtab*)pVtab;
  idemTxnBegin(p);
  /* The durability check (idem_durable.c) keeps its verdict for the
  ** length of a transaction: read the settings again.  The shadow tables
  ** need no look at the schema here: the claim's INSERT fails before it
  ** writes if the schema changed since it was prepared, and is checked
  ** and prepared again (idemStoreInsert()). */
  idemDurableBegin(&p->durable);
  return SQLITE_OK;
}

static int idemSync(sqlite3_vtab *pVtab){
  return idemCommitSync((IdemVtab*)pVtab);
}

/* xCommit, after the pager's commit: an external claim's COMMIT in DELETE
** mode is made durable here (idemDurableCommit()), before the statement
** returns. */
static int idemCommit(sqlite3_vtab *pVtab){
  IdemVtab *p = (IdemVtab*)pVtab;
  idemTxnClear(p);
  idemDurableCommit(&p->durable);
  return SQLITE_OK;
}

static int idemRollback(sqlite3_vtab *pVtab){
  IdemVtab *p = (IdemVtab*)pVtab;
  p->nWrite++;                  /* rows a cursor holds may be gone */
  idemTxnClear(p);
  idemDurableRollback(&p->durable);
  return SQLITE_OK;
}

static int idemSavepointSp(sqlite3_vtab *pVtab, int iSavepoint){
  idemTxnSavepoint((IdemVtab*)pVtab, iSavepoint);
  return SQLITE_OK;
}

static int idemReleaseSp(sqlite3_vtab *pVtab, int iSavepoint){
  idemTxnRelease((IdemVtab*)pVtab, iSavepoint);
  return SQLITE_OK;
}

static int idemRollbackToSp(sqlite3_vtab *pVtab, int iSavepoint){
  ((IdemVtab*)pVtab)->nWrite++;
  idemStmtUnpark((IdemVtab*)pVtab);
  idemTxnRollbackTo((IdemVtab*)pVtab, iSavepoint);
  return SQLITE_OK;
}

/* ------------------------------------------------------------- queries */

/*
** Plans: key = ? is a seek of the call's group (key = ? AND member = ? of
** one row); a created range uses the created index (format 3) or is a
** range of rids (format 4, where created never goes back in rid order:
** it starts at the first rid past the lower bound, idemRowsFrom(),
** and stops at the first row past the upper one); anything else scans.
**
** Every constraint the table consumes (omit=1) gives exactly the rows
** that SQLite would keep if it applied the constraint itself, to a plain
** table with the same columns, whatever the value's storage class:
**   key = ?      the key column is TEXT (BINARY): only text of the 32
**                lowercase hex digits equals a stored key; any other value
**                (uppercase hex, a blob, a number, NULL) equals none.
**   member = ?   the member column is INTEGER: the value equals an integer
**                as SQL compares it (0.0, -0.0 and '0' equal 0), or none
**                (idemValueInt64()).
**   created      the range is run by the shadow table's created column,
**                TEXT too, so a value is compared exactly as SQL compares
**                it with a TEXT column: a number as its text.
** A constraint with another collation than BINARY is left to SQLite.
** Format 4's created range gives those rows in a table whose created
** never goes back in rid order, which only a write outside idem breaks
** (PRAGMA integrity_check reports it): its constraints are not omitted,
** and SQLite checks them again at each row it gives.
*/
static int idemBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int iKey = -1, iMember = -1, iLo = -1, iHi = -1, iEq = -1;
  int eLo = 0, eHi = 0;
  int bRid = ((IdemVtab*)pVtab)->iFormat>=4;    /* created in rid order */
  int i;
  if( ((IdemVtab*)pVtab)->zUnusable ){
    idemVtabError((IdemVtab*)pVtab, "%s", ((IdemVtab*)pVtab)->zUnusable);
    return SQLITE_ERROR;
  }
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( !pC->usable ) continue;
    if( pC->iColumn!=IDEM_COL_MEMBER ){
      const char *zColl = sqlite3_vtab_collation(pInfo, i);
      if( zColl && sqlite3_stricmp(zColl, "BINARY")!=0 ) continue;
    }
    switch( pC->iColumn ){
      case IDEM_COL_KEY:
        if( pC->op==SQLITE_INDEX_CONSTRAINT_EQ ) iKey = i;
        break;
      case IDEM_COL_MEMBER:
        if( pC->op==SQLITE_INDEX_CONSTRAINT_EQ ) iMember = i;
        break;
      case IDEM_COL_CREATED:
        switch( pC->op ){
          case SQLITE_INDEX_CONSTRAINT_EQ: iEq = i; break;
          case SQLITE_INDEX_CONSTRAINT_GT: iLo = i; eLo = 1; break;
          case SQLITE_INDEX_CONSTRAINT_GE: iLo = i; eLo = 2; break;
          case SQLITE_INDEX_CONSTRAINT_LT: iHi = i; eHi = 1; break;
          case SQLITE_INDEX_CONSTRAINT_LE: iHi = i; eHi = 2; break;
        }
        break;
    }
  }
  if( iKey>=0 ){
    pInfo->aConstraintUsage[iKey].argvIndex = 1;
    pInfo->aConstraintUsage[iKey].omit = 1;
    if( iMember>=0 ){
      pInfo->aConstraintUsage[iMember].argvIndex = 2;
      pInfo->aConstraintUsage[iMember].omit = 1;
      pInfo->idxNum = IDEM_PLAN_KEYMEMBER;
      pInfo->idxStr = "key=? AND member=?";
    }else{
      pInfo->idxNum = IDEM_PLAN_KEY;
      pInfo->idxStr = "key=?";
    }
    if( (pInfo->colUsed & IDEM_IDENTITY_COLS)==0 ){
      pInfo->idxNum |= IDEM_PLAN_LIGHT;
    }
    if( (pInfo->colUsed & ~IDEM_NARROW_COLS)==0 ){
      pInfo->idxNum |= IDEM_PLAN_NARROW;
    }
    if( pInfo->colUsed==~(sqlite3_uint64)0 ){
      pInfo->idxNum |= IDEM_PLAN_UPDATE;
    }
    /* key = ? alone is a group (the call and its members): not unique, or
    ** an UPDATE or DELETE would act on its first row only. */
    if( iMember>=0 ) pInfo->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
    pInfo->estimatedCost = iMember>=0 ? 1.0 : 2.0;
    pInfo->estimatedRows = iMember>=0 ? 1 : 2;
    /* The group comes out ordered by member. */
    if( pInfo->nOrderBy==1 && pInfo->aOrderBy[0].iColumn==IDEM_COL_MEMBER
     && !pInfo->aOrderBy[0].desc ){
      pInfo->orderByConsumed = 1;
    }
    return SQLITE_OK;
  }
  if( iEq>=0 ){ iLo = iHi = iEq; eLo = eHi = 2; }
  if( iLo>=0 || iHi>=0 ){
    if( iLo>=0 ){
      pInfo->aConstraintUsage[iLo].argvIndex = 1;
      pInfo->aConstraintUsage[iLo].omit = !bRid;
    }
    if( iHi>=0 ){
      if( iHi!=iLo ){
        pInfo->aConstraintUsage[iHi].argvIndex = iLo>=0 ? 2 : 1;
        pInfo->aConstraintUsage[iHi].omit = !bRid;
      }
    }
    pInfo->idxNum = IDEM_PLAN_CREATED + 3*eLo + eHi;
    pInfo->idxStr = "created range";
    pInfo->estimatedCost = (iLo>=0 && iHi>=0) ? 1000.0 : 10000.0;
    pInfo->estimatedRows = (iLo>=0 && iHi>=0) ? 100 : 1000;
    if( pInfo->nOrderBy==1 && pInfo->aOrderBy[0].iColumn==IDEM_COL_CREATED
     && !pInfo->aOrderBy[0].desc ){
      pInfo->orderByConsumed = 1;
    }
    return SQLITE_OK;
  }
  pInfo->idxNum = IDEM_PLAN_SCAN;
  pInfo->estimatedCost = 1000000.0;
  pInfo->estimatedRows = 100000;
  /* Format 4: the scan's rid order is the order of created. */
  if( bRid && pInfo->nOrderBy==1
   && pInfo->aOrderBy[0].iColumn==IDEM_COL_CREATED
   && !pInfo->aOrderBy[0].desc ){
    pInfo->orderByConsumed = 1;
  }
  return SQLITE_OK;
}

static int idemOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  IdemVtab *p = (IdemVtab*)pVtab;
  IdemCursor *pCur;
  /* The cursor the last xClose kept, if any: a lookup a statement opens
  ** and closes one. */
  pCur = (IdemCursor*)p->pSpareCursor;
  p->pSpareCursor = 0;
  /* A query parked by idemClose() has its key bound where it lies, in the
  ** spare cursor: given back before that cursor is used again. */
  if( pCur && p->pPark ) idemStmtUnpark(p);
  if( pCur==0 ) pCur = (IdemCursor*)sqlite3_malloc(sizeof(*pCur));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->bEof = 1;
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

/* Give the cursor's statements back (or finalize private ones). */
static void idemCursorReset(IdemCursor *pCur){
  IdemVtab *p = (IdemVtab*)pCur->base.pVtab;
  if( pCur->pStmt ){
    idemStmtGiveBack(p, pCur->iStmt, pCur->pStmt, pCur->bLent);
    pCur->pStmt = 0;
    pCur->bLent = 0;
  }
  if( pCur->pMain ){
    idemStmtGiveBack(p, IDEM_STMT_Q_MAIN, pCur->pMain, pCur->bMainLent);
    pCur->pMain = 0;
    pCur->bMainLent = 0;
  }
  sqlite3_free(pCur->zReply);
  pCur->zReply = 0;
  pCur->bEof = 1;
  pCur->bMember = 0;
  pCur->bNarrow = 0;
  pCur->bNoIdentity = 0;
  pCur->bOneRow = 0;
  pCur->bUpTo = 0;
  pCur->bRid = 0;
}

static int idemClose(sqlite3_vtab_cursor *pCursor){
  IdemCursor *pCur = (IdemCursor*)pCursor;
  IdemVtab *p = (IdemVtab*)pCursor->pVtab;
  int i = pCur->iStmt;
  int bParked = 0;
  /* An UPDATE's cursor closed on a row, whose query has every column of
  ** the row (IDEM_STMT_BYRID's) as the table's format has them: kept for
  ** the xUpdate that follows (idemStmtPark()). */
  if( pCur->bUpdate && !pCur->bEof && pCur->pStmt
   && pCur->iFormat==p->iFormat
   && (i==IDEM_STMT_Q_SCAN || i==IDEM_STMT_Q_KEY || i==IDEM_STMT_Q_KEYMEMBER
       || IDEM_STMT_UPDATE_Q(i)
       || (i>=IDEM_STMT_Q_CREATED && i<=IDEM_STMT_Q_CREATED+8)) ){
    idemStmtPark(p, i, pCur->pStmt, pCur->bLent, pCur->nWrite,
                 pCur->bNoIdentity ? pCur->aKey : 0,
                 pCur->bRid ? &pCur->iRid : 0);
    pCur->pStmt = 0;
    pCur->bLent = 0;
    bParked = 1;
  }
  idemCursorReset(pCur);
  if( bParked ){
    /* The parked query's key is bound where it lies, in pCur->aKey
    ** (SQLITE_STATIC, idemFilter()): pCur stays allocated, as the spare,
    ** for as long as the query is parked (idemOpen() unparks it before
    ** the spare is used again), never freed under a bound parameter. */
    sqlite3_free(p->pSpareCursor);
    p->pSpareCursor = pCur;
  }else if( p->pSpareCursor==0 ){
    p->pSpareCursor = pCur;
  }else{
    sqlite3_free(pCur);
  }
  return SQLITE_OK;
}

/*
** Point pCur->pMain at the main row of the current member row's call
** (reused while consecutive members share a key).  A member without its
** call (only in a damaged database) shows NULLs.
*/
static int idemCursorLoadMain(IdemCursor *pCur){
  IdemVtab *p = (IdemVtab*)pCur->base.pVtab;
  const void *aKey;
  int nKey;
  int rc;
  if( pCur->bNarrow || pCur->bNoIdentity ){     /* (no key column) */
    aKey = pCur->aKey;
    nKey = IDEM_KEY_BYTES;
  }else{
    aKey = sqlite3_column_blob(pCur->pStmt, IDEM_Q_KEY);
    nKey = sqlite3_column_bytes(pCur->pStmt, IDEM_Q_KEY);
  }
  if( pCur->pMain ){
    const void *aHave;
    if( sqlite3_stmt_busy(pCur->pMain) ){
      aHave = sqlite3_column_blob(pCur->pMain, IDEM_M_KEY);
      if( aHave && sqlite3_column_bytes(pCur->pMain, IDEM_M_KEY)==nKey
       && memcmp(aHave, aKey, nKey)==0 ){
        return SQLITE_OK;
      }
    }
    sqlite3_reset(pCur->pMain);
  }else{
    rc = idemStmtLend(p, IDEM_STMT_Q_MAIN, &pCur->pMain, &pCur->bMainLent);
    if( rc!=SQLITE_OK ) return rc;
  }
  rc = sqlite3_bind_blob(pCur->pMain, 1, aKey, nKey, SQLITE_TRANSIENT);
  if( rc!=SQLITE_OK ) return idemVtabDbError(p, rc);
  rc = sqlite3_step(pCur->pMain);
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ) return SQLITE_OK;
  return idemVtabDbError(p, sqlite3_reset(pCur->pMain));
}

/*
** True if the current row belongs to a call that has expired (retain,
** doc/contract.md §10): its expires, or its main row's, is at or before
** the time of the query.  Such rows are not shown; claims delete them.
*/
static int idemCursorExpired(IdemCursor *pCur){
  const char *zExp;
  if( pCur->bMember ){
    if( pCur->pMain==0 || !sqlite3_stmt_busy(pCur->pMain)
     || sqlite3_data_count(pCur->pMain)==0 ){
      return 0;
    }
    zExp = (const char*)sqlite3_column_text(pCur->pMain, IDEM_M_EXPIRES);
  }else{
    zExp = (const char*)sqlite3_column_text(pCur->pStmt,
                         pCur->bNarrow ? IDEM_N_EXPIRES : IDEM_Q_EXPIRES);
  }
  return zExp!=0 && strcmp(zExp, pCur->zNow)<=0;
}

/*
** Bind key aKey to ?1 of pStmt, query iStmt of a cursor.  A lent query's
** ?1 is bound to the table's copy of the key (IdemVtab.aQKey[iStmt]),
** once for the statement's life: a lookup copies its key there and binds
** nothing (a bind and the clearing of it at the give-back each take the
** connection's mutex); the statement is lent to one cursor at a time,
** and the copy is rewritten only by that cursor's next xFilter, which
** resets the query first.  Its other bindings are integers or SQLite's
** own copies, so a query given back keeps them (idemStmtGiveBack()): none
** points at memory that can go before the statement.  A private copy
** (finalized when given back) is bound to aKey where it lies.
*/
static int idemBindKey(IdemVtab *p, sqlite3_stmt *pStmt, int iStmt,
                       int bLent, const unsigned char *aKey){
  int rc;
  if( !bLent ){
    return sqlite3_bind_blob(pStmt, 1, aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
  }
  assert( iStmt<=IDEM_STMT_Q_KEYMAIN_U && p->aStmt[iStmt]==pStmt );
  memcpy(p->aQKey[iStmt], aKey, IDEM_KEY_BYTES);
  if( p->aQKeyBound[iStmt] ) return SQLITE_OK;
  rc = sqlite3_bind_blob(pStmt, 1, p->aQKey[iStmt], IDEM_KEY_BYTES,
                         SQLITE_STATIC);
  if( rc==SQLITE_OK ) p->aQKeyBound[iStmt] = 1;
  return rc;
}

/* The next row of pStmt that is shown (not of an expired call). */
static int idemCursorStep(IdemCursor *pCur){
  int rc;
  sqlite3_free(pCur->zReply);
  pCur->zReply = 0;
  pCur->bRid = 0;
  while( (rc = sqlite3_step(pCur->pStmt))==SQLITE_ROW ){
    if( pCur->bUpTo && sqlite3_column_int(pCur->pStmt, IDEM_Q_UPTO)==0 ){
      rc = SQLITE_DONE;       /* past the upper bound: so is every row after */
      break;
    }
    pCur->bEof = 0;
    /* (key = ? AND member = ?: the member bound, which the row's equals) */
    pCur->bMember = (pCur->bOneRow ? pCur->iMember
                     : sqlite3_column_int64(pCur->pStmt,
                         pCur->bNarrow ? IDEM_N_MEMBER : IDEM_Q_MEMBER))!=0;
    if( pCur->bMember ){
      rc = idemCursorLoadMain(pCur);
      if( rc!=SQLITE_OK ) return rc;    /* with its message */
    }
    if( !pCur->bRetain || !idemCursorExpired(pCur) ){
      pCur->nWrite = ((IdemVtab*)pCur->base.pVtab)->nWrite;
      return SQLITE_OK;
    }
  }
  pCur->bEof = 1;
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  {
    IdemVtab *p = (IdemVtab*)pCur->base.pVtab;
    idemVtabDbError(p, rc);
    sqlite3_reset(pCur->pStmt);
    return rc==SQLITE_ROW || rc==SQLITE_DONE ? SQLITE_ERROR : rc;
  }
}

/* xNext.  After the row of a key = ? AND member = ? plan there is none:
** its query is not stepped again to find that out (it is reset when the
** cursor closes or filters again, as after a last row). */
static int idemNext(sqlite3_vtab_cursor *pCursor){
  IdemCursor *pCur = (IdemCursor*)pCursor;
  if( pCur->bOneRow ){
    sqlite3_free(pCur->zReply);
    pCur->zReply = 0;
    pCur->bEof = 1;
    return SQLITE_OK;
  }
  return idemCursorStep(pCur);
}

static int idemFilter(
  sqlite3_vtab_cursor *pCursor, int idxNum, const char *idxStr,
  int argc, sqlite3_value **argv
){
  IdemCursor *pCur = (IdemCursor*)pCursor;
  IdemVtab *p = (IdemVtab*)pCursor->pVtab;
  unsigned char *aKey = pCur->aKey;
  sqlite3_int64 iMember = 0;
  int iStmt, rc;
  int bLight = (idxNum & IDEM_PLAN_LIGHT)!=0;
  int bNarrow = (idxNum & IDEM_PLAN_NARROW)!=0;
  int bUpd = (idxNum & IDEM_PLAN_UPDATE)!=0;
  (void)idxStr; (void)argc;

  idxNum &= ~(IDEM_PLAN_LIGHT|IDEM_PLAN_NARROW|IDEM_PLAN_UPDATE);
  idemCursorReset(pCur);
  pCur->bRetain = p->opt.iRetainMs>0;
  if( pCur->bRetain || p->opt.iStaleAfterMs>0 ){
    sqlite3_int64 iNow = idemNowMs(p->pVfs);
    idemFormatTimeKept(&p->now, iNow, pCur->zNow);
    idemFormatTime(iNow - p->opt.iStaleAfterMs, pCur->zStaleBefore);
  }
  if( idxNum==IDEM_PLAN_KEY || idxNum==IDEM_PLAN_KEYMEMBER ){
    /* A key that is not 32 lowercase hex digits matches nothing. */
    if( !idemKeyFromValue(argv[0], aKey) ){
      return SQLITE_OK;
    }
    if( idxNum==IDEM_PLAN_KEYMEMBER ){
      /* A member equal to no integer (0.5, 'a', NULL) matches nothing. */
      int bInt = idemValueInt64(argv[1], &iMember);
      if( bInt<0 ) return SQLITE_NOMEM;
      if( !bInt ) return SQLITE_OK;
    }
    /* (member = 0, a replay's and a record's: written in the query's
    ** text, one bind fewer) */
    if( bUpd ){
      iStmt = idxNum==IDEM_PLAN_KEY ? IDEM_STMT_Q_KEY_U
            : iMember==0 ? IDEM_STMT_Q_KEYMAIN_U : IDEM_STMT_Q_KEYMEMBER_U;
    }else if( bNarrow ){
      iStmt = idxNum==IDEM_PLAN_KEY ? IDEM_STMT_Q_KEY_N
            : iMember==0 ? IDEM_STMT_Q_KEYMAIN_N : IDEM_STMT_Q_KEYMEMBER_N;
    }else if( bLight ){
      iStmt = idxNum==IDEM_PLAN_KEY ? IDEM_STMT_Q_KEY_L : IDEM_STMT_Q_KEYMEMBER_L;
    }else{
      iStmt = idxNum==IDEM_PLAN_KEY ? IDEM_STMT_Q_KEY : IDEM_STMT_Q_KEYMEMBER;
    }
  }else if( idxNum>=IDEM_PLAN_CREATED ){
    iStmt = IDEM_STMT_Q_CREATED + (idxNum - IDEM_PLAN_CREATED);
  }else{
    iStmt = IDEM_STMT_Q_SCAN;
  }

  rc = idemStmtLend(p, iStmt, &pCur->pStmt, &pCur->bLent);
  if( rc!=SQLITE_OK ) return rc;
  pCur->iStmt = iStmt;
  pCur->iFormat = p->iFormat;
  pCur->bNarrow = iStmt==IDEM_STMT_Q_KEY_N || iStmt==IDEM_STMT_Q_KEYMEMBER_N
                || iStmt==IDEM_STMT_Q_KEYMAIN_N;
  pCur->bNoIdentity = IDEM_STMT_UPDATE_Q(iStmt);
  pCur->bOneRow = idxNum==IDEM_PLAN_KEYMEMBER;
  pCur->iMember = iMember;

  if( idxNum==IDEM_PLAN_KEY || idxNum==IDEM_PLAN_KEYMEMBER ){
    rc = idemBindKey(p, pCur->pStmt, iStmt, pCur->bLent, aKey);
    if( rc==SQLITE_OK && idxNum==IDEM_PLAN_KEYMEMBER
     && iStmt!=IDEM_STMT_Q_KEYMAIN_N && iStmt!=IDEM_STMT_Q_KEYMAIN_U ){
      rc = sqlite3_bind_int64(pCur->pStmt, 2, iMember);
    }
  }else if( idxNum>=IDEM_PLAN_CREATED ){
    int iRange = idxNum - IDEM_PLAN_CREATED;
    int iArg = 0;
    /* The value as given: the shadow table's created is TEXT as well, so
    ** it is compared as SQL compares it with the table's created. */
    if( iRange/3 ) rc = sqlite3_bind_value(pCur->pStmt, 1, argv[iArg++]);
    if( rc==SQLITE_OK && iRange%3 ){
      /* created = ? binds one value to both ends */
      rc = sqlite3_bind_value(pCur->pStmt, 2, argv[iArg<argc ? iArg : 0]);
    }
    if( rc==SQLITE_OK && p->iFormat>=4 ){
      /* From the first rid past the lower bound (none: no row) */
      sqlite3_int64 iFrom = IDEM_RID_MIN;
      if( iRange/3 ){
        rc = idemRowsFrom(p, argv[0], iRange/3==2, &iFrom);
        if( rc==SQLITE_DONE ) return SQLITE_OK;       /* (bEof) */
        if( rc!=SQLITE_OK ){
          idemCursorReset(pCur);
          return rc;                                  /* (its message) */
        }
      }
      rc = sqlite3_bind_int64(pCur->pStmt, 3, iFrom);
      pCur->bUpTo = iRange%3!=0;
    }
  }
  if( rc!=SQLITE_OK ){
    idemVtabDbError(p, rc);
    idemCursorReset(pCur);
    return rc;
  }
  return idemCursorStep(pCur);
}

static int idemEof(sqlite3_vtab_cursor *pCursor){
  return ((IdemCursor*)pCursor)->bEof;
}

/*
** The rid of a narrow query's row, which the query leaves out (a replay
** asks for none; SELECT rowid does): the row's by its key and member
** (UNIQUE), read with the full query of key = ? AND member = ?.  Kept
** out of line: xRowid's common call (an UPDATE's, twice a record) pays
** no registers of it.
*/
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int idemCursorNarrowRid(IdemCursor *pCur){
  IdemVtab *p = (IdemVtab*)pCur->base.pVtab;
  sqlite3_stmt *pRow = 0;
  int bLent = 0;
  sqlite3_int64 iMember = pCur->bOneRow ? pCur->iMember
                        : sqlite3_column_int64(pCur->pStmt, IDEM_N_MEMBER);
  int rc = idemStmtLend(p, IDEM_STMT_Q_KEYMEMBER, &pRow, &bLent);
  if( rc!=SQLITE_OK ) return rc;
  rc = idemBindKey(p, pRow, IDEM_STMT_Q_KEYMEMBER, bLent, pCur->aKey);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_int64(pRow, 2, iMember);
  if( rc==SQLITE_OK ) rc = sqlite3_step(pRow);
  if( rc==SQLITE_ROW ){
    pCur->iRid = sqlite3_column_int64(pRow, IDEM_Q_RID);
    pCur->bRid = 1;
    rc = SQLITE_OK;
  }else if( rc==SQLITE_DONE ){
    /* (the row the query is on is gone: no statement can do that between
    ** a step and its xRowid) */
    rc = SQLITE_CORRUPT_VTAB;
    idemVtabError(p, "%s", sqlite3_errstr(rc));
  }else{
    idemVtabDbError(p, rc);
  }
  idemStmtGiveBack(p, IDEM_STMT_Q_KEYMEMBER, pRow, bLent);
  return rc;
}

/* xRowid.  An UPDATE asks it twice (the old rowid and the new), and its
** xUpdate compares it with the parked row's: read once per row. */
static int idemRowid(sqlite3_vtab_cursor *pCursor, sqlite3_int64 *pRowid){
  IdemCursor *pCur = (IdemCursor*)pCursor;
  if( !pCur->bRid ){
    if( pCur->bNarrow ){
      int rc = idemCursorNarrowRid(pCur);
      if( rc!=SQLITE_OK ) return rc;
    }else{
      pCur->iRid = sqlite3_column_int64(pCur->pStmt, IDEM_Q_RID);
      pCur->bRid = 1;
    }
  }
  *pRowid = pCur->iRid;
  return SQLITE_OK;
}

/*
** The value of column iCol (a virtual-table column number) of the current
** row: from the query itself, or, for the call's columns of a member row,
** from the call's main row.
*/
static sqlite3_value *idemCursorValue(IdemCursor *pCur, int iCol){
  if( pCur->bMember
   || (pCur->bNoIdentity && ((sqlite3_uint64)1<<iCol & IDEM_UPDATE_COLS)) ){
    int iM = -1;
    switch( iCol ){
      case IDEM_COL_WHO:     iM = IDEM_M_WHO;     break;
      case IDEM_COL_CONV:    iM = IDEM_M_CONV;    break;
      case IDEM_COL_TOOL:    iM = IDEM_M_TOOL;    break;
      case IDEM_COL_ARGS:    iM = IDEM_M_ARGS;    break;
      case IDEM_COL_KIND:    iM = IDEM_M_KIND;    break;
      case IDEM_COL_STATUS:  iM = IDEM_M_STATUS;  break;
      case IDEM_COL_NOTE:    iM = IDEM_M_NOTE;    break;
      case IDEM_COL_UPDATED: iM = IDEM_M_UPDATED; break;
      case IDEM_COL_KEYARGS: iM = IDEM_M_KEYARGS; break;
      case IDEM_COL_OWNER:   iM = IDEM_M_OWNER;   break;
      case IDEM_COL_EXPIRES: iM = IDEM_M_EXPIRES; break;
      case IDEM_COL_HONOURS: iM = IDEM_M_HONOURS; break;
      case IDEM_COL_SENDS:   iM = IDEM_M_SENDS;   break;
    }
    if( iM>=0 ){
      if( pCur->pMain==0 || !sqlite3_stmt_busy(pCur->pMain)
       || sqlite3_data_count(pCur->pMain)==0 ){
        return 0;
      }
      return sqlite3_column_value(pCur->pMain, iM);
    }
  }
  switch( iCol ){
    case IDEM_COL_KEYARGS: return sqlite3_column_value(pCur->pStmt, IDEM_Q_KEYARGS);
    case IDEM_COL_OWNER:   return sqlite3_column_value(pCur->pStmt, IDEM_Q_OWNER);
    case IDEM_COL_EXPIRES: return sqlite3_column_value(pCur->pStmt, IDEM_Q_EXPIRES);
    case IDEM_COL_HONOURS: return sqlite3_column_value(pCur->pStmt, IDEM_Q_HONOURS);
    case IDEM_COL_SENDS:   return sqlite3_column_value(pCur->pStmt, IDEM_Q_SENDS);
  }
  return sqlite3_column_value(pCur->pStmt, IDEM_QCOL(iCol));
}

/*
** created of the current row, a main row of an UPDATE's query, which
** leaves it out (IDEM_PLAN_UPDATE): read by the row's rid.  A row gone
** since (only in a damaged database) shows NULL.
*/
static int idemCursorCreated(IdemCursor *pCur, sqlite3_context *ctx){
  IdemVtab *p = (IdemVtab*)pCur->base.pVtab;
  sqlite3_stmt *pRow;
  int rc = idemStmt(p, IDEM_STMT_BYRID, &pRow);
  if( rc!=SQLITE_OK ) return rc;
  rc = sqlite3_bind_int64(pRow, 1, sqlite3_column_int64(pCur->pStmt, IDEM_Q_RID));
  if( rc==SQLITE_OK ) rc = sqlite3_step(pRow);
  if( rc==SQLITE_ROW ){
    sqlite3_result_value(ctx,
        sqlite3_column_value(pRow, IDEM_QCOL(IDEM_COL_CREATED)));
    rc = SQLITE_OK;
  }else if( rc==SQLITE_DONE ){
    rc = SQLITE_OK;
  }else{
    idemVtabDbError(p, rc);
  }
  sqlite3_reset(pRow);
  return rc;
}

/*
** The sends of the current row's call: the stored count, 1 for an
** external call claimed before format 3 (its claim took it for sending
** once), -1 for a local call (nothing is sent).
*/
static sqlite3_int64 idemCursorSends(IdemCursor *pCur){
  sqlite3_value *pKind = idemCursorValue(pCur, IDEM_COL_KIND);
  sqlite3_value *pSends = idemCursorValue(pCur, IDEM_COL_SENDS);
  const char *zKind = pKind ? (const char*)sqlite3_value_text(pKind) : 0;
  if( zKind==0 || strcmp(zKind, "external")!=0 ) return -1;
  if( pSends==0 || sqlite3_value_type(pSends)!=SQLITE_INTEGER ) return 1;
  return sqlite3_value_int64(pSends);
}

/* The result of ctx: pVal, a status.  One of the four words is given as
** the constant it equals, which SQLite need not copy (a replay reads it at
** every lookup). */
static void idemResultStatus(sqlite3_context *ctx, sqlite3_value *pVal){
  if( sqlite3_value_type(pVal)==SQLITE_TEXT ){
    int n = sqlite3_value_bytes(pVal);
    const char *z = (const char*)sqlite3_value_text(pVal);
    IdemStatus e = IDEM_STATUS_OTHER;
    if( z ){
      switch( n ){        /* (by length: the one word it can be) */
        case 4: e = IDEM_STATUS_DONE; break;
        case 6: e = IDEM_STATUS_FAILED; break;
        case 7: e = z[0]=='p' ? IDEM_STATUS_PENDING : IDEM_STATUS_UNKNOWN; break;
      }
    }
    if( e<IDEM_STATUS_OTHER && memcmp(z, azIdemStatus[e], n)==0 ){
      sqlite3_result_text(ctx, azIdemStatus[e], -1, SQLITE_STATIC);
      return;
    }
  }
  sqlite3_result_value(ctx, pVal);
}

/* The value of column iCol of the cursor's row, for xColumn (an UPDATE's
** column that it does not change is not asked for here: idemColumn()).
** Kept out of line: the registers it saves are not paid for by xColumn's
** common call in an UPDATE, once for every column left unchanged. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int idemColumnValue(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                           int iCol){
  IdemCursor *pCur = (IdemCursor*)pCursor;
  IdemVtab *p = (IdemVtab*)pCursor->pVtab;
  sqlite3_value *pVal;

  if( pCur->bNoIdentity && !pCur->bMember
   && ((sqlite3_uint64)1<<iCol & IDEM_UPDATE_MAIN_COLS) ){
    /* Left out of the query: the main row's, which is this row. */
    int rc = idemCursorLoadMain(pCur);
    if( rc!=SQLITE_OK ) return rc;
  }

  switch( iCol ){
    case IDEM_COL_KEY: {
      char zHex[IDEM_KEY_HEX+1];
      int bBound = pCur->bNarrow || pCur->bNoIdentity;   /* no key column */
      const unsigned char *a = bBound ? pCur->aKey
                             : sqlite3_column_blob(pCur->pStmt, IDEM_Q_KEY);
      if( a && (bBound
                || sqlite3_column_bytes(pCur->pStmt, IDEM_Q_KEY)==IDEM_KEY_BYTES) ){
        idemKeyHex(a, zHex);
        sqlite3_result_text(ctx, zHex, IDEM_KEY_HEX, SQLITE_TRANSIENT);
      }else{
        /* Damaged row: show what is there. */
        sqlite3_result_value(ctx, sqlite3_column_value(pCur->pStmt, IDEM_Q_KEY));
      }
      return SQLITE_OK;
    }
    case IDEM_COL_REPLY: {
      if( pCur->zReply==0 ){
        sqlite3_value *pStatus = idemCursorValue(pCur, IDEM_COL_STATUS);
        sqlite3_value *pNote = idemCursorValue(pCur, IDEM_COL_NOTE);
        int rc = idemReply(p,
            sqlite3_column_value(pCur->pStmt, IDEM_QCOL(IDEM_COL_ID)),
            sqlite3_column_value(pCur->pStmt, IDEM_QCOL(IDEM_COL_RESULT)),
            pStatus ? (const char*)sqlite3_value_text(pStatus) : 0,
            pNote ? (const char*)sqlite3_value_text(pNote) : 0,
            idemCursorSends(pCur), &pCur->zReply);
        if( rc ) return rc;
      }
      sqlite3_result_text(ctx, pCur->zReply, -1, SQLITE_TRANSIENT);
      return SQLITE_OK;
    }
    case IDEM_COL_RECONCILE:
      return SQLITE_OK;        /* a command column: reads as NULL */
    case IDEM_COL_CREATED:
      if( pCur->bNoIdentity && !pCur->bMember ) return idemCursorCreated(pCur, ctx);
      break;
    case IDEM_COL_STALE: {
      /* stale_after (doc/contract.md §11): a pending call not updated
      ** since before the query's time minus stale_after. */
      int bStale = 0;
      if( p->opt.iStaleAfterMs>0 ){
        sqlite3_value *pStatus = idemCursorValue(pCur, IDEM_COL_STATUS);
        sqlite3_value *pUpd = idemCursorValue(pCur, IDEM_COL_UPDATED);
        const char *zStatus = pStatus ? (const char*)sqlite3_value_text(pStatus) : 0;
        const char *zUpd = pUpd ? (const char*)sqlite3_value_text(pUpd) : 0;
        bStale = zStatus && zUpd && strcmp(zStatus, "pending")==0
              && strcmp(zUpd, pCur->zStaleBefore)<0;
      }
      sqlite3_result_int(ctx, bStale);
      return SQLITE_OK;
    }
    case IDEM_COL_RESEND_AT: {
      /* doc/contract.md §14: when the call may be taken for sending
      ** again, or NULL if it never may. */
      sqlite3_int64 iAt = -1;
      sqlite3_value *pStatus = idemCursorValue(pCur, IDEM_COL_STATUS);
      sqlite3_value *pKind = idemCursorValue(pCur, IDEM_COL_KIND);
      sqlite3_value *pHon = idemCursorValue(pCur, IDEM_COL_HONOURS);
      sqlite3_value *pUpd = idemCursorValue(pCur, IDEM_COL_UPDATED);
      if( pStatus && pKind && pHon && pUpd ){
        iAt = idemResendAt(&p->opt, (const char*)sqlite3_value_text(pStatus),
            (const char*)sqlite3_value_text(pKind),
            sqlite3_value_int(pHon)==1, idemCursorSends(pCur),
            (const char*)sqlite3_value_text(pUpd));
      }
      if( iAt>=0 ){
        char zAt[IDEM_TIME_LEN];
        idemFormatTime(iAt, zAt);
        sqlite3_result_text(ctx, zAt, -1, SQLITE_TRANSIENT);
      }
      return SQLITE_OK;
    }
  }
  pVal = idemCursorValue(pCur, iCol);
  if( pVal==0 ) return SQLITE_OK;
  if( iCol==IDEM_COL_STATUS ){
    idemResultStatus(ctx, pVal);
  }else{
    sqlite3_result_value(ctx, pVal);
  }
  return SQLITE_OK;
}

/* xColumn of a cursor that may be an UPDATE's.  An UPDATE asks for the
** columns it does not change: leave them unset, so that xUpdate sees
** sqlite3_value_nochange().  Out of line, as idemColumnValue(). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int idemColumnNochange(sqlite3_vtab_cursor *pCursor,
                              sqlite3_context *ctx, int iCol){
  if( sqlite3_vtab_nochange(ctx) ){
    ((IdemCursor*)pCursor)->bUpdate = 1;
    return SQLITE_OK;
  }
  return idemColumnValue(pCursor, ctx, iCol);
}

/* xColumn of a narrow plan's cursor (a replay's): its query has its own
** columns (IDEM_N_*) and no others, which a narrow plan never reads
** (IDEM_NARROW_COLS); a member row's status is its call's; a text is
** given as a kept copy (idemResultCopy()).  Out of line, as
** idemColumnValue(). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int idemColumnNarrow(IdemCursor *pCur, sqlite3_context *ctx, int iCol){
  sqlite3_value *pVal;
  switch( iCol ){
    case IDEM_COL_MEMBER:
      if( pCur->bOneRow ){
        /* (no member in its query: the one bound, which the row's equals) */
        sqlite3_result_int64(ctx, pCur->iMember);
        return SQLITE_OK;
      }
      pVal = sqlite3_column_value(pCur->pStmt, IDEM_N_MEMBER);
      break;
    case IDEM_COL_STATUS:
      pVal = pCur->bMember ? idemCursorValue(pCur, IDEM_COL_STATUS)
                           : sqlite3_column_value(pCur->pStmt, IDEM_N_STATUS);
      if( pVal ) idemResultStatus(ctx, pVal);
      return SQLITE_OK;
    case IDEM_COL_ID:
      pVal = sqlite3_column_value(pCur->pStmt, IDEM_N_ID);
      if( sqlite3_value_type(pVal)==SQLITE_INTEGER ){
        sqlite3_result_int64(ctx, sqlite3_value_int64(pVal));
        return SQLITE_OK;
      }
      break;
    case IDEM_COL_RESULT:
      pVal = sqlite3_column_value(pCur->pStmt, IDEM_N_RESULT);
      break;
    default:          /* the key (the one bound) */
      return idemColumnValue(&pCur->base, ctx, iCol);
  }
  idemResultCopy((IdemVtab*)pCur->base.pVtab, ctx, pVal);
  return SQLITE_OK;
}

/* xColumn.  An UPDATE uses every column (colUsed), so a narrow plan's
** cursor, whose query has only the few columns its statement uses (a
** replay's), is never one: it is not asked nochange. */
static int idemColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx, int iCol){
  if( ((IdemCursor*)pCursor)->bNarrow ){
    return idemColumnNarrow((IdemCursor*)pCursor, ctx, iCol);
  }
  return idemColumnNochange(pCursor, ctx, iCol);
}

/*
** xUpdate: the rowid is idem's; everything else is a rule of the claim
** (idem_claim.c, idem_outcome.c).
*/
static int idemUpdateRow(IdemVtab *p, int argc, sqlite3_value **argv,
                         sqlite3_int64 *pRowid, unsigned int nWrite){
  sqlite3_value **aCol = &argv[2];
  sqlite3_stmt *pRow;
  sqlite3_uint64 mGiven = 0;
  int i;

  if( p->zUnusable ){
    idemVtabError(p, "%s", p->zUnusable);
    return SQLITE_ERROR;
  }
  if( p->iFormat<IDEM_FORMAT_UPGRADE ){
    int rc = idemStoreUpgrade(p);
    if( rc!=SQLITE_OK ) return rc;
  }
  if( argc==1 ){
    return idemOutcomeDelete(p, sqlite3_value_int64(argv[0]));
  }
  if( sqlite3_value_type(argv[0])==SQLITE_NULL ){
    if( sqlite3_value_type(argv[1])!=SQLITE_NULL ){
      idemVtabError(p, "the rowid is assigned by idem; leave it out of the"
                    " INSERT");
      return SQLITE_ERROR;
    }
    return idemClaimInsert(p, aCol, pRowid);
  }
  if( sqlite3_value_int64(argv[0])!=sqlite3_value_int64(argv[1]) ){
    idemVtabError(p, "the rowid cannot be changed; leave it out of the"
                  " UPDATE");
    return SQLITE_ERROR;
  }
  /* The columns the UPDATE gives, asked once (the rules ask of most). */
  for(i=0; i<IDEM_NCOL; i++){
    mGiven |= (sqlite3_uint64)(sqlite3_value_nochange(aCol[i])==0) << i;
  }
  pRow = idemStmtParked(p, sqlite3_value_int64(argv[0]), nWrite);
  if( pRow && IDEM_STMT_UPDATE_Q(p->iPark) ){
    /* Its query left out the key, who, conv, tool, args, keyargs,
    ** updated and created: an UPDATE that gives one of them (to be
    ** compared with the stored one), or a reconcile (whose stale check and
    ** resend read updated), reads the row again. */
    sqlite3_uint64 mReread = IDEM_UPDATE_COLS;
    mReread |= IDEM_COLBIT(IDEM_COL_RECONCILE);    /* (stale, resend) */
    mReread |= IDEM_COLBIT(IDEM_COL_KEY);
    mReread |= IDEM_COLBIT(IDEM_COL_CREATED);
    if( mGiven & mReread ) pRow = 0;
  }
  return idemOutcomeUpdate(p, sqlite3_value_int64(argv[0]), pRow,
                           pRow && p->bParkKey ? p->aParkKey : 0,
                           pRow && p->iPark==IDEM_STMT_Q_KEYMAIN_U, mGiven,
                           aCol);
}

static int idemUpdate(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                      sqlite3_int64 *pRowid){
  IdemVtab *p = (IdemVtab*)pVtab;
  int rc = idemUpdateRow(p, argc, argv, pRowid, p->nWrite++);
  idemStmtUnpark(p);           /* a row is parked for one xUpdate */
  return rc;
}


#if SQLITE_VERSION_NUMBER>=3044000
/* xIntegrity: PRAGMA integrity_check and quick_check (idemRowsIntegrity()). */
static int idemIntegrity(sqlite3_vtab *pVtab, const char *zSchema,
                         const char *zTabName, int isQuick, char **pzErr){
  (void)isQuick; (void)zTabName;
  return idemRowsIntegrity((IdemVtab*)pVtab, zSchema, pzErr);
}
#endif

static sqlite3_module idemModule = {
#if SQLITE_VERSION_NUMBER>=3044000
  4,                    /* iVersion: xIntegrity */
#else
  3,                    /* iVersion: xShadowName */
#endif
  idemCreate,           /* xCreate: make the shadow table */
  idemConnect,          /* xConnect */
  idemBestIndex,        /* xBestIndex: key seek, created range, scan */
  idemDisconnect,       /* xDisconnect */
  idemDestroy,          /* xDestroy: drop the shadow table */
  idemOpen,             /* xOpen */
  idemClose,            /* xClose */
  idemFilter,           /* xFilter */
  idemNext,             /* xNext */
  idemEof,              /* xEof */
  idemColumn,           /* xColumn */
  idemRowid,            /* xRowid: the shadow table's rid */
  idemUpdate,           /* xUpdate: claim, member, record, purge */
  idemBegin,            /* xBegin: durability read again; the slots */
  idemSync,             /* xSync:  track the local claims of the */
  idemCommit,           /* xCommit: transaction, which never commit */
  idemRollback,         /* xRollback: pending (idemCommitSync()) */
  0,                    /* xFindFunction */
  idemRename,           /* xRename: rename the shadow table */
  idemSavepointSp,      /* xSavepoint */
  idemReleaseSp,        /* xRelease */
  idemRollbackToSp,     /* xRollbackTo */
  idemStoreShadowName,  /* xShadowName: <name>_claim, _expiry, _config */
#if SQLITE_VERSION_NUMBER>=3044000
  idemIntegrity,        /* xIntegrity */
#endif
};

/* ------------------------------------------------------- idem_options */

/*
** The schema that table zTab (unqualified) names, as SQLite resolves the
** name: temp first, then main, then the attached schemas in order; in
** *pzDb (sqlite3_free() it).  SQLITE_OK with *pzDb NULL: no such table.
*/
static int idemResolveSchema(sqlite3 *db, const char *zTab, char **pzDb){
  sqlite3_stmt *pList = 0;
  int rc;
  *pzDb = 0;
  rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list"
      " ORDER BY CASE seq WHEN 1 THEN 0 WHEN 0 THEN 1 ELSE seq END", -1,
      &pList, 0);
  while( rc==SQLITE_OK && sqlite3_step(pList)==SQLITE_ROW ){
    const char *zDb = (const char*)sqlite3_column_text(pList, 0);
    sqlite3_stmt *pFound = 0;
    if( zDb==0 ){ rc = SQLITE_NOMEM; break; }
    rc = idemQueryRow(db, &pFound, "SELECT 1 FROM \"%w\".sqlite_schema"
        " WHERE type IN ('table','view') AND name = %Q COLLATE NOCASE",
        zDb, zTab);
    sqlite3_finalize(pFound);
    if( rc==SQLITE_ROW ){
      *pzDb = sqlite3_mprintf("%s", zDb);
      rc = *pzDb ? SQLITE_OK : SQLITE_NOMEM;
      break;
    }
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_reset(pList);
  sqlite3_finalize(pList);
  return rc;
}

/*
** idem_options(table [, schema]): the options that table was parsed with,
** as idem applies them (idemOptionsJson()), read from the open table
** itself, never from the text of its CREATE statement (where a comment
** can hide what idem reads).  Without schema, the table SQLite finds for
** the bare name.  An error if it is not an idem table.
*/
static void idemOptionsFunc(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv){
  IdemOpenList *pOpen = (IdemOpenList*)sqlite3_user_data(ctx);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zTab = (const char*)sqlite3_value_text(argv[0]);
  const char *zGiven = argc>1 ? (const char*)sqlite3_value_text(argv[1]) : 0;
  char *zDb = 0, *zSql = 0, *zOut;
  sqlite3_stmt *pStmt = 0;
  sqlite3_str *s;
  IdemVtab *p;
  int rc;
  if( sqlite3_value_type(argv[0])!=SQLITE_TEXT || zTab==0
   || (argc>1 && (sqlite3_value_type(argv[1])!=SQLITE_TEXT || zGiven==0)) ){
    idemResultError(ctx, SQLITE_ERROR, "idem_options(table [, schema]):"
        " the table and the schema are names (text)");
    return;
  }
  if( zGiven ){
    zDb = sqlite3_mprintf("%s", zGiven);
    rc = zDb ? SQLITE_OK : SQLITE_NOMEM;
  }else{
    rc = idemResolveSchema(db, zTab, &zDb);
  }
  if( rc==SQLITE_OK && zDb ){
    /* Preparing a statement that names the table connects it (xConnect),
    ** if this connection has not yet: its error is the answer. */
    zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".\"%w\"", zDb, zTab);
    if( zSql==0 ) rc = SQLITE_NOMEM;
    else rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
    sqlite3_finalize(pStmt);
    sqlite3_free(zSql);
    if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
      /* The table's own error ("idem: calls: ...") goes as it is. */
      const char *zErr = sqlite3_errmsg(db);
      if( strncmp(zErr, "idem: ", 6)==0 ){
        idemResultError(ctx, rc, "%s", zErr+6);
      }else{
        idemResultError(ctx, rc, "idem_options(%Q): %s", zTab, zErr);
      }
      sqlite3_free(zDb);
      return;
    }
  }
  if( rc!=SQLITE_OK ){
    sqlite3_free(zDb);
    idemResultError(ctx, rc, "idem_options(%Q): %s", zTab, sqlite3_errmsg(db));
    return;
  }
  for(p=zDb ? pOpen->pFirst : 0; p; p=p->pNextOpen){
    if( sqlite3_stricmp(p->zDb, zDb)==0 && sqlite3_stricmp(p->zName, zTab)==0 ){
      break;
    }
  }
  if( p==0 ){
    if( zDb ){
      idemResultError(ctx, SQLITE_ERROR, "idem_options(%Q): %s.%s is not an"
          " idem table", zTab, zDb, zTab);
    }else{
      idemResultError(ctx, SQLITE_ERROR, "idem_options(%Q): no such table",
                      zTab);
    }
    sqlite3_free(zDb);
    return;
  }
  sqlite3_free(zDb);
  if( p->zUnusable ){
    idemResultError(ctx, SQLITE_ERROR, "%s: %s", p->zName, p->zUnusable);
    return;
  }
  s = sqlite3_str_new(db);
  idemOptionJson(s, &p->opt);
  zOut = sqlite3_str_finish(s);
  if( zOut==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, zOut, -1, sqlite3_free);
  sqlite3_result_subtype(ctx, 'J');       /* JSON, for json_extract and ->> */
}

/* idem_options() sets a subtype ('J'): SQLITE_RESULT_SUBTYPE (idemInt.h). */

IDEM_PRIVATE int idemVtabRegister(sqlite3 *db){
  IdemOpenList *pOpen = (IdemOpenList*)sqlite3_malloc(sizeof(*pOpen));
  int rc;
  if( pOpen==0 ) return SQLITE_NOMEM;
  pOpen->pFirst = 0;
  pOpen->nRef = 1;
  /* The module and each form of idem_options() hold the list; SQLite calls
  ** idemOpenRelease() for each when it is dropped, replaced, or when its
  ** registration fails, so each call below takes its reference first. */
  rc = sqlite3_create_module_v2(db, "idem", &idemModule, pOpen, idemOpenRelease);
  if( rc==SQLITE_OK ){
    pOpen->nRef++;
    rc = sqlite3_create_function_v2(db, "idem_options", 1,
        SQLITE_UTF8|SQLITE_DIRECTONLY|SQLITE_RESULT_SUBTYPE, pOpen,
        idemOptionsFunc, 0, 0, idemOpenRelease);
  }
  if( rc==SQLITE_OK ){
    pOpen->nRef++;
    rc = sqlite3_create_function_v2(db, "idem_options", 2,
        SQLITE_UTF8|SQLITE_DIRECTONLY|SQLITE_RESULT_SUBTYPE, pOpen,
        idemOptionsFunc, 0, 0, idemOpenRelease);
  }
  return rc;
}

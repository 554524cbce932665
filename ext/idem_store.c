/* SPDX-License-Identifier: MIT */
/*
** idem_store.c -- where a claim table keeps its calls: the shadow tables
** (their schema, format and upgrade, the damage check, PRAGMA
** integrity_check), the cache of prepared statements and its lending to
** cursors, the list of the open transaction's local claims, and the
** table's error message.  The claim's rules (idem_options.c,
** idem_claim.c, idem_outcome.c, idem_commit.c) and the module
** (idem_vtab.c) stand on it; it calls none of them.
**
** STORAGE.  Real shadow tables in the same schema, so that a claim
** commits and rolls back with the caller's own transaction and the
** database's write lock arbitrates between connections and processes.
** <name>_claim holds the calls:
**
**   rid      INTEGER PRIMARY KEY     the virtual table's rowid
**   key      BLOB                    16 bytes (the 32 hex digits, packed)
**   member   INTEGER                 0: the call itself; 1, 2, ...: members
**   who conv tool args kind status note updated   -- main rows only
**   id result created                             -- every row
**   keyargs owner expires                         -- main rows only
**   honours_key sends                             -- main rows only
**   UNIQUE(key, member)              the arbiter, and the replay's seek
**   UNIQUE(created, rid)             formats 1 to 3 only: purge by age (an
**                                    ordinary index; the UNIQUE form keeps
**                                    its name tied to the table, so RENAME
**                                    carries it).  Format 4 (new tables)
**                                    has none: created never goes back in
**                                    rid order (idem_rows.c, ORDER)
**
** Member rows keep only their own id, result and created: they show their
** call's who, conv, tool, args, kind, status, note, updated, keyargs,
** owner and expires.
**
** <name>_expiry(expires, key), WITHOUT ROWID, is the order in which the
** decided calls of a table with retain expire: the seek of the sweep,
** written only when such a call is decided.  <name>_config(k, v) records
** the format of the shadow tables (IDEM_FORMAT, idemReadFormat()).
**
** STATEMENTS.  Each statement on the shadow tables is prepared on first
** use and kept (idemStmt()), with SQLITE_PREPARE_NO_VTAB: it never
** reaches a virtual table, whatever the schema holds.  The rules use one
** and reset it before they return; a cursor keeps its query across calls,
** so queries are lent (idemStmtLend(), idemStmtGiveBack()), to one cursor
** at a time: a second one gets a private copy.  The claim's INSERT is the
** one exception (idemStoreInsert()): prepared with the legacy
** sqlite3_prepare(), right after a damage check, so that it fails where
** SQLite would prepare it again.
**
** DAMAGE.  idemCheckShadow() looks at the shadow table when the table is
** connected and, after a schema change, before the claim's INSERT runs
** again: if it no longer arbitrates (no UNIQUE(key, member), a conflict
** clause, a trigger, ...), claims are refused; DROP TABLE always works.
**
** TRANSACTIONS.  The local claims made in the open transaction, each with
** the savepoint level it was made at (idemTxn*()): the rules refuse to
** commit one still pending (idemCommitSync(), doc/contract.md §4).
*/
#include "idemInt.h"

IDEM_PRIVATE const char *const azIdemCol[IDEM_NCOL] = {
  "key", "member", "who", "conv", "tool", "args", "kind", "status", "id",
  "result", "note", "created", "updated", "reply", "reconcile", "keyargs",
  "owner", "expires", "stale", "honours_key", "sends", "resend_at"
};

/* ------------------------------------------------------------ errors */

/*
** The table's error message: "idem: <table>: " and the printf-style text.
** Every error about a table is made here, the one place that writes the
** prefix (the callers give the text alone), and reaches the user through
** p->base.zErrMsg; where SQLite takes it from elsewhere (xCreate,
** xConnect and xIntegrity's *pzErr), the message made here is handed over.
** Kept reasons (p->zDamaged, p->zUnusable) are stored without the prefix
** and reported through here.
*/
IDEM_PRIVATE void idemVtabError(IdemVtab *p, const char *zFmt, ...){
  sqlite3_str *s = sqlite3_str_new(0);
  va_list ap;
  sqlite3_str_appendf(s, "idem: %s: ", p->zName);
  va_start(ap, zFmt);
  sqlite3_str_vappendf(s, zFmt, ap);
  va_end(ap);
  sqlite3_free(p->base.zErrMsg);
  p->base.zErrMsg = sqlite3_str_finish(s);
}

/* The table's error, handed over to *pzErr (NULL when out of memory). */
IDEM_PRIVATE void idemVtabErrorTo(IdemVtab *p, char **pzErr){
  *pzErr = p->base.zErrMsg;
  p->base.zErrMsg = 0;
}

/* The table's error for a statement that failed with rc: SQLite's
** message.  Returns rc. */
IDEM_PRIVATE int idemVtabDbError(IdemVtab *p, int rc){
  idemVtabError(p, "%s",
                rc==SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(p->db));
  return rc;
}

/* -------------------------------------------------------- statements */

/* Columns of the query statements (IDEM_STMT_Q_*) and of IDEM_STMT_BYRID:
** IDEM_Q_* and IDEM_QCOL() in idemInt.h. */
#define IDEM_QCOLS \
  "rid, key, member, who, conv, tool, args, kind, status, id, result, " \
  "note, created, updated, keyargs, owner, expires, honours_key, sends"
/* The same, with NULL for who, conv, tool, args, keyargs, owner
** (IDEM_PLAN_LIGHT) */
#define IDEM_QCOLS_LIGHT \
  "rid, key, member, NULL, NULL, NULL, NULL, kind, status, id, result, " \
  "note, created, updated, NULL, NULL, expires, honours_key, sends"

/* A narrow query's columns (IDEM_PLAN_NARROW's, IDEM_N_*), and the member
** last where its text has none; no rid (xRowid looks it up).  Each column
** selected, even a NULL, is an opcode at every row. */
#define IDEM_NCOLS "status, id, result, expires"

/* The same, with NULL for the key, who, conv, tool, args, keyargs and
** updated: an UPDATE's query (IDEM_PLAN_UPDATE), whose key is the one the
** cursor bound (as IDEM_PLAN_NARROW's), and which reads the others from
** the call's main row (IDEM_STMT_Q_MAIN) only if it is asked for them (a
** member row's updated is its call's anyway); xUpdate reads the row
** again where it needs one of them (idem_vtab.c, idemUpdateRow()).  And
** created of a member row only: a main row's is read by its rid
** (IDEM_STMT_BYRID) if the UPDATE asks for it (its WHERE, its SET), which
** a record does not (zM, zCreated: "0" and NULL where member = 0). */
#define IDEM_QCOLS_UPDATE_OF(zM, zCreated) \
  "rid, NULL, " zM ", NULL, NULL, NULL, NULL, kind, status, id, result, " \
  "note, " zCreated ", NULL, NULL, owner, expires, honours_key, sends"
#define IDEM_QCOLS_UPDATE IDEM_QCOLS_UPDATE_OF("member", "CASE WHEN member THEN created END")

/* Columns of IDEM_STMT_MAIN and IDEM_STMT_Q_MAIN: IDEM_M_* in idemInt.h. */
#define IDEM_MCOLS \
  "who, conv, tool, args, kind, status, note, updated, key, keyargs, owner," \
  " expires, honours_key, sends"

/*
** The SQL of each statement, by IDEM_STMT_* number, with %w for the schema
** and the table name, in that order (twice or three times where the table
** is named so often).
*/
#define IDEM_FROM " FROM \"%w\".\"%w_claim\""
#define IDEM_Q_CREATED(zLower, zUpper) \
  "SELECT " IDEM_QCOLS IDEM_FROM " WHERE 1" zLower zUpper " ORDER BY created, rid"
/* Format 4's (no created index, idem_rows.c): the rows from rid ?3 on
** (the first past the lower bound) in rid order, the order of created,
** and whether each is within the upper bound (IDEM_Q_UPTO: the cursor
** stops at the first past it), as SQL compares. */
#define IDEM_Q_RIDS(zUpTo) \
  "SELECT " IDEM_QCOLS ", " zUpTo IDEM_FROM " WHERE rid>=?3 ORDER BY rid"
#define IDEM_PROBE_COLS "SELECT rid, created>?1, created>=?1"
#define IDEM_GT " AND created>?1"
#define IDEM_GE " AND created>=?1"
#define IDEM_LT " AND created<?2"
#define IDEM_LE " AND created<=?2"
#define IDEM_RECORD(zSet) "UPDATE \"%w\".\"%w_claim\" SET status=?2" zSet \
                          ", updated=?6, expires=?7 WHERE rid=?1"
#define IDEM_RECORD_DONE(zSet) \
  "UPDATE \"%w\".\"%w_claim\" SET status='done'" zSet \
  ", updated=?6, expires=?7 WHERE rid=?1"
/* The claim's INSERT, with zCreated the created it writes: ?12 (the
** clock's time, also updated's) in format 3, an expression of it in
** format 4 (zIdemInsert4). */
#define IDEM_INSERT(zCreated) \
  "INSERT INTO \"%w\".\"%w_claim\"(key, member, who, conv, tool," \
  " args, kind, status, id, result, note, created, updated," \
  " keyargs, owner, honours_key, sends)" \
  " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11," zCreated ",?12,?13,?14," \
  "?15,?16)"
static const char *const azIdemSql[IDEM_NSTMT] = {
  /* INSERT */     IDEM_INSERT("?12"),
  /* MAIN */       "SELECT " IDEM_MCOLS IDEM_FROM " WHERE key=?1 AND member=0",
  /* BYRID */      "SELECT " IDEM_QCOLS IDEM_FROM " WHERE rid=?1",
  /* RECORD */     IDEM_RECORD(", id=?3, result=?4, note=?5"),
  /* RELEASE */    "DELETE" IDEM_FROM " WHERE key=?1",
  /* Q_SCAN */     "SELECT " IDEM_QCOLS IDEM_FROM " ORDER BY rid",
  /* Q_KEY */      "SELECT " IDEM_QCOLS IDEM_FROM " WHERE key=?1 ORDER BY member",
  /* Q_KEYMEMBER */"SELECT " IDEM_QCOLS IDEM_FROM " WHERE key=?1 AND member=?2",
  /* Q_MAIN */     "SELECT " IDEM_MCOLS IDEM_FROM " WHERE key=?1 AND member=0",
  /* Q_CREATED + 3*lower + upper */
                   IDEM_Q_CREATED("", ""),
                   IDEM_Q_CREATED("", IDEM_LT),
                   IDEM_Q_CREATED("", IDEM_LE),
                   IDEM_Q_CREATED(IDEM_GT, ""),
                   IDEM_Q_CREATED(IDEM_GT, IDEM_LT),
                   IDEM_Q_CREATED(IDEM_GT, IDEM_LE),
                   IDEM_Q_CREATED(IDEM_GE, ""),
                   IDEM_Q_CREATED(IDEM_GE, IDEM_LT),
                   IDEM_Q_CREATED(IDEM_GE, IDEM_LE),
  /* Q_KEY_L */    "SELECT " IDEM_QCOLS_LIGHT IDEM_FROM " WHERE key=?1 ORDER BY member",
  /* Q_KEYMEMBER_L */
                   "SELECT " IDEM_QCOLS_LIGHT IDEM_FROM " WHERE key=?1 AND member=?2",
  /* Q_KEY_N */    "SELECT " IDEM_NCOLS ", member" IDEM_FROM " WHERE key=?1 ORDER BY member",
  /* Q_KEYMEMBER_N */
                   "SELECT " IDEM_NCOLS IDEM_FROM " WHERE key=?1 AND member=?2",
  /* Q_KEY_U */    "SELECT " IDEM_QCOLS_UPDATE IDEM_FROM " WHERE key=?1 ORDER BY member",
  /* Q_KEYMEMBER_U */
                   "SELECT " IDEM_QCOLS_UPDATE IDEM_FROM " WHERE key=?1 AND member=?2",
  /* Q_KEYMAIN_N */"SELECT " IDEM_NCOLS IDEM_FROM " WHERE key=?1 AND member=0",
  /* Q_KEYMAIN_U */"SELECT " IDEM_QCOLS_UPDATE_OF("0", "NULL") IDEM_FROM " WHERE key=?1 AND member=0",
  /* CALLOF */     "SELECT r.key, c.status FROM \"%w\".\"%w_claim\" AS r"
                   " LEFT JOIN \"%w\".\"%w_claim\" AS c"
                   " ON c.key=r.key AND c.member=0 WHERE r.rid=?1",
  /* COOKIE */     "PRAGMA \"%w\".schema_version",
  /* EXPIRED */    "SELECT expires, key FROM \"%w\".\"%w_expiry\" WHERE expires<=?1"
                   " ORDER BY expires LIMIT " IDEM_SWEEP_LIMIT_TEXT,
  /* EXPIRY_ADD */ "INSERT OR IGNORE INTO \"%w\".\"%w_expiry\"(expires, key)"
                   " VALUES(?1, ?2)",
  /* EXPIRY_DEL */ "DELETE FROM \"%w\".\"%w_expiry\" WHERE expires=?1 AND key=?2",
  /* EXPIRY_NEXT */"SELECT min(expires) FROM \"%w\".\"%w_expiry\"",
  /* RESEND */     "UPDATE \"%w\".\"%w_claim\" SET status='pending',"
                   " sends=coalesce(sends,1)+1, owner=?2, note=?3, updated=?4"
                   " WHERE rid=?1",
  /* RECORD_KEEP + mask-1: a column kept is left out of the SET (SQLite
  ** then writes what is stored), not bound to the value read */
                   IDEM_RECORD(", result=?4, note=?5"),
                   IDEM_RECORD(", id=?3, note=?5"),
                   IDEM_RECORD(", note=?5"),
                   IDEM_RECORD(", id=?3, result=?4"),
                   IDEM_RECORD(", result=?4"),
                   IDEM_RECORD(", id=?3"),
                   IDEM_RECORD(""),
  /* RECORD_DONE + mask: a record of done (the common one), one bind
  ** fewer */
                   IDEM_RECORD_DONE(", id=?3, result=?4, note=?5"),
                   IDEM_RECORD_DONE(", result=?4, note=?5"),
                   IDEM_RECORD_DONE(", id=?3, note=?5"),
                   IDEM_RECORD_DONE(", note=?5"),
                   IDEM_RECORD_DONE(", id=?3, result=?4"),
                   IDEM_RECORD_DONE(", result=?4"),
                   IDEM_RECORD_DONE(", id=?3"),
                   IDEM_RECORD_DONE(""),
  /* PROBE */      IDEM_PROBE_COLS IDEM_FROM " WHERE rid>=?2 ORDER BY rid LIMIT 1",
  /* LASTROW */    IDEM_PROBE_COLS IDEM_FROM " ORDER BY rid DESC LIMIT 1",
};

/*
** Format 4's own statements (idem_rows.c, ORDER).  The claim's INSERT
** writes as created the clock's time (?12), or the created of the row
** with the largest rid if that is later; NULL, which NOT NULL refuses
** before anything is written, if that rid is 2^63-1 (SQLite would pick a
** random one next) or the row's created is none or a blob (idem_rows.c,
** LAST ROW).  The created ranges, by upper bound (3*lower + upper).
*/
static const char zIdemInsert4[] = IDEM_INSERT(
  "coalesce((SELECT CASE WHEN rid<9223372036854775807 THEN CASE"
  " WHEN +created<=?12 THEN ?12 WHEN +created<x'' THEN created END"
  " END" IDEM_FROM " ORDER BY rid DESC LIMIT 1),"
  "(SELECT ?12 WHERE NOT EXISTS(SELECT 1" IDEM_FROM ")))");
static const char *const azIdemCreated4[3] = {
  IDEM_Q_RIDS("1"), IDEM_Q_RIDS("created<?2"), IDEM_Q_RIDS("created<=?2")
};

/*
** Prepare zSql on the table's connection (never reaching a virtual table),
** with the table's error message on failure.
*/
static int idemPrepare(IdemVtab *p, const char *zSql, unsigned int flags,
                       sqlite3_stmt **ppStmt){
  int rc = sqlite3_prepare_v3(p->db, zSql, -1, flags|SQLITE_PREPARE_NO_VTAB,
                              ppStmt, 0);
  return rc==SQLITE_OK ? rc : idemVtabDbError(p, rc);
}

/*
** The SQL of statement i for p's format and options.  A format-1 table
** (before keyargs, owner and expires) or format-2 table (before
** honours_key and sends) is read as it is: those columns read as NULL.
** Writes upgrade it first (idemStoreUpgrade()), so only queries are
** prepared against formats 1 and 2.  A table without retain never sets expires:
** its queries read NULL instead of the column, which a replay then does
** not pay for.  The rewrite is made on the template, before the table's
** name is in it.
*/
static char *idemStmtSql(IdemVtab *p, int i){
  static const char *const azNew[] = { "honours_key", "sends", "expires",
                                       "keyargs", "owner" };
  const char *zTemplate = azIdemSql[i];
  char *zOld = 0, *zSql;
  int nNull = 0, iFirst = 0;
  if( p->iFormat>=4 && i==IDEM_STMT_INSERT ) zTemplate = zIdemInsert4;
  if( p->iFormat>=4 && i>=IDEM_STMT_Q_CREATED && i<=IDEM_STMT_Q_CREATED+8 ){
    zTemplate = azIdemCreated4[(i - IDEM_STMT_Q_CREATED)%3];
  }
  if( p->iFormat<2 ){
    nNull = 5;
  }else if( p->iFormat<3 ){
    nNull = 2;
    if( p->opt.iRetainMs==0 && i!=IDEM_STMT_EXPIRED
     && strncmp(zTemplate, "SELECT", 6)==0 ){
      nNull = 3;
    }
  }else if( p->opt.iRetainMs==0 && i!=IDEM_STMT_EXPIRED
         && strncmp(zTemplate, "SELECT", 6)==0 ){
    nNull = 1;
    iFirst = 2;
  }
  if( nNull ){
    int j;
    zOld = sqlite3_mprintf("%s", zTemplate);
    if( zOld==0 ) return 0;
    for(j=iFirst; j<iFirst+nNull; j++){
      char *z;
      int n = (int)strlen(azNew[j]);
      while( (z = strstr(zOld, azNew[j]))!=0 ){
        memcpy(z, "NULL", 4);
        memmove(z+4, z+n, strlen(z+n)+1);
      }
    }
    zTemplate = zOld;
  }
  zSql = sqlite3_mprintf(zTemplate, p->zDb, p->zName, p->zDb, p->zName,
                         p->zDb, p->zName);
  sqlite3_free(zOld);
  return zSql;
}

/*
** The invariants of the cache and its lending, checked by the asserts of
** a debug build: a statement is lent only while it is cached, only a
** query is lent, and a stale statement (prepared before an upgrade) is
** one still lent, to be finalized when it is given back.
*/
#ifdef IDEM_DEBUG
static void idemStmtCheck(const IdemVtab *p){
  int i;
  for(i=0; i<IDEM_NSTMT; i++){
    assert( p->aLent[i]==0 || p->aLent[i]==1 );
    assert( !p->aLent[i] || (p->aStmt[i]!=0 && IDEM_STMT_LENDABLE(i)) );
    assert( !p->aStale[i] || p->aLent[i] );
  }
}
#else
# define idemStmtCheck(p)
#endif

/* Statement i, prepared on first use and kept (not the claim's INSERT:
** idemStoreInsert()). */
static int idemStmtCached(IdemVtab *p, int i, sqlite3_stmt **ppStmt){
  int rc = SQLITE_OK;
  assert( i>0 && i<IDEM_NSTMT );
  if( p->aStmt[i]==0 ){
    char *zSql = idemStmtSql(p, i);
    if( zSql==0 ) return idemVtabDbError(p, SQLITE_NOMEM);
    rc = idemPrepare(p, zSql, SQLITE_PREPARE_PERSISTENT, &p->aStmt[i]);
    sqlite3_free(zSql);
    if( i<=IDEM_STMT_Q_KEYMAIN_U ) p->aQKeyBound[i] = 0;  /* (nothing bound) */
  }
  *ppStmt = p->aStmt[i];
  return rc;
}

/*
** Statement i in *ppStmt, prepared on first use and kept, for the caller
** to bind, step and reset before it returns (never one lent to a cursor).
*/
IDEM_PRIVATE int idemStmt(IdemVtab *p, int i, sqlite3_stmt **ppStmt){
  assert( !p->aLent[i] );
  return idemStmtCached(p, i, ppStmt);
}

/*
** Lend query i (IDEM_STMT_Q_*) to a cursor, which keeps it across calls:
** the cached statement, marked lent (*pbLent = 1), or, while another
** cursor has it, a private copy (*pbLent = 0).  SQLITE_OK, or an error
** with the table's message.
*/
IDEM_PRIVATE int idemStmtLend(IdemVtab *p, int i, sqlite3_stmt **ppStmt,
                              int *pbLent){
  int rc;
  char *zSql;
  assert( IDEM_STMT_LENDABLE(i) );
  idemStmtUnpark(p);
  *ppStmt = 0;
  *pbLent = 0;
  if( !p->aLent[i] ){
    rc = idemStmtCached(p, i, ppStmt);
    if( rc==SQLITE_OK ){
      p->aLent[i] = 1;
      *pbLent = 1;
    }
    idemStmtCheck(p);
    return rc;
  }
  /* Another cursor has it: a private copy, of the SQL for the table as it
  ** is now (the lent one may be stale). */
  zSql = idemStmtSql(p, i);
  if( zSql==0 ) return idemVtabDbError(p, SQLITE_NOMEM);
  rc = idemPrepare(p, zSql, 0, ppStmt);
  sqlite3_free(zSql);
  return rc;
}

/*
** Give back statement pStmt, query i, that idemStmtLend() lent (bLent) or
** prepared privately (the copy is finalized).  A lent statement is reset
** and kept, or finalized if it went stale meanwhile.
*/
IDEM_PRIVATE void idemStmtGiveBack(IdemVtab *p, int i, sqlite3_stmt *pStmt,
                                   int bLent){
  assert( IDEM_STMT_LENDABLE(i) );
  if( !bLent ){
    assert( pStmt!=p->aStmt[i] );
    sqlite3_finalize(pStmt);
    return;
  }
  assert( p->aLent[i] && p->aStmt[i]==pStmt );
  sqlite3_reset(pStmt);   /* (its bindings kept: idemBindKey(), idem_vtab.c) */
  p->aLent[i] = 0;
  if( p->aStale[i] ){
    sqlite3_finalize(pStmt);
    p->aStmt[i] = 0;
    p->aStale[i] = 0;
  }
  idemStmtCheck(p);
}

/*
** PARKING.  SQLite closes the cursor of an UPDATE of one row (key = ? AND
** member = ?) just before it calls xUpdate for that row, which would then
** read the row again (IDEM_STMT_BYRID).  So the cursor's query, still on
** its row, is parked instead of given back: xUpdate reads the row from it
** (idemStmtParked()) if it is the row being updated and nothing was
** written through the table, nor rolled back, since the cursor reached it
** (IdemVtab.nWrite).  Every xUpdate gives it back at its end, and so does
** the next lend and the end of the transaction: a parked query never
** outlives the statement that parked it by more than that.
*/
IDEM_PRIVATE void idemStmtPark(IdemVtab *p, int i, sqlite3_stmt *pStmt,
                               int bLent, unsigned int nWrite,
                               const unsigned char *aKey,
                               const sqlite3_int64 *piRid){
  idemStmtUnpark(p);
  p->pPark = pStmt;
  p->iPark = i;
  p->bParkLent = bLent;
  p->nParkWrite = nWrite;
  p->bParkKey = aKey!=0;
  if( aKey ) memcpy(p->aParkKey, aKey, IDEM_KEY_BYTES);
  p->iParkRid = piRid ? *piRid : sqlite3_column_int64(pStmt, IDEM_Q_RID);
}

IDEM_PRIVATE sqlite3_stmt *idemStmtParked(IdemVtab *p, sqlite3_int64 iRid,
                                          unsigned int nWrite){
  if( p->pPark && p->nParkWrite==nWrite && p->iParkRid==iRid ){
    return p->pPark;
  }
  return 0;
}

IDEM_PRIVATE void idemStmtUnpark(IdemVtab *p){
  sqlite3_stmt *pStmt = p->pPark;
  if( pStmt ){
    p->pPark = 0;
    idemStmtGiveBack(p, p->iPark, pStmt, p->bParkLent);
  }
}

/*
** Finalize every statement of the cache (before an upgrade, DROP, RENAME
** and disconnect): those lent to a cursor when it gives them back (they
** are stale: the cursor steps on with them, and they are never lent
** again), the others now.  A RENAME or DROP runs even while a cursor on
** the table is open (and then fails: its shadow table is in use).
*/
static void idemStmtFinalizeAll(IdemVtab *p){
  int i;
  idemStmtUnpark(p);
  for(i=0; i<IDEM_NSTMT; i++){
    if( p->aLent[i] ){
      p->aStale[i] = 1;
    }else{
      sqlite3_finalize(p->aStmt[i]);
      p->aStmt[i] = 0;
    }
  }
  p->aCookie[1] = -1;                   /* (idemSchemaCookies()) */
  idemStmtCheck(p);
}

/* ----------------------------------------------------- shadow tables */

/* What tells that the schema changed, into aCookie: [0] the schema
** cookie of the table's schema (PRAGMA schema_version, by this connection
** or another), [1] the times its statement was prepared again.  A change
** to the temp schema (where a TEMP trigger on a shadow table lives) is
** made by this connection alone, and expires every statement of the
** connection (SQLite's OP_SetCookie on temp, ticket #1644; a ROLLBACK
** that undoes a schema change does too), so the cookie's statement is
** prepared again at its next step and [1] moves: one statement read
** where there were two.  A statement made anew (idemStmtFinalizeAll())
** starts from 0 again: aCookie[1] is then set to -1 by it, which no count
** equals. */
static int idemSchemaCookies(IdemVtab *p, sqlite3_int64 aCookie[2]){
  sqlite3_stmt *pStmt;
  int rc = idemStmt(p, IDEM_STMT_COOKIE, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  rc = sqlite3_step(pStmt);
  aCookie[0] = sqlite3_column_int64(pStmt, 0);
  aCookie[1] = sqlite3_stmt_status(pStmt, SQLITE_STMTSTATUS_REPREPARE, 0);
  rc = rc==SQLITE_ROW ? SQLITE_OK : sqlite3_reset(pStmt);
  sqlite3_reset(pStmt);
  return rc;
}

/*
** IDEM'S SCHEMA.  The shadow tables are exactly these, in this order (the
** CREATE TABLE text that SQLite keeps is "CREATE TABLE \"<name>_<suffix>\""
** and the definition).  idemStoreCreate() and idemStoreUpgrade() make them
** from here, and idemCheckShadow() holds the file against here: nothing
** else may be defined on them.  A format-1 table (idem 1.0.0) has only
** <name>_claim, without its last three columns, until its first write
** upgrades it.
*/
static const char *const azIdemShadow[] = { "claim", "expiry", "config" };
#define IDEM_CLAIM_DEF \
  "(rid INTEGER PRIMARY KEY, key BLOB NOT NULL, member INTEGER NOT NULL," \
  " who, conv, tool, args TEXT, kind TEXT, status TEXT, id, result," \
  " note TEXT, created TEXT NOT NULL, updated TEXT," \
  " keyargs TEXT, owner TEXT, expires TEXT," \
  " honours_key INTEGER, sends INTEGER," \
  " UNIQUE(key, member)"
static const char *const azIdemShadowDef[] = {
  IDEM_CLAIM_DEF ", UNIQUE(created, rid))",       /* formats 1 to 3 */
  ("(expires TEXT NOT NULL, key BLOB NOT NULL, PRIMARY KEY(expires, key))"
   " WITHOUT ROWID"),
  "(k TEXT PRIMARY KEY, v) WITHOUT ROWID"
};
/* <name>_claim of format 4: no created index (created never goes back in
** rid order). */
static const char zIdemClaimDef4[] = IDEM_CLAIM_DEF ")";
/* The columns formats 2 (the first three) and 3 (the last two) added to
** <name>_claim, with their types, in the order of its definition (ALTER
** TABLE ADD COLUMN puts each after the last column). */
static const char *const azIdemNewCol[] = { "keyargs TEXT", "owner TEXT",
  "expires TEXT", "honours_key INTEGER", "sends INTEGER" };
#define IDEM_NNEWCOL 5
#define IDEM_NNEWCOL3 2       /* of them, format 3's */
#define IDEM_NSHADOW 3

/* True if some token of zSql that may name a table (a name, quoted or not,
** or a string: SQLite takes a 'string literal' where a table name goes)
** names one of the shadow tables of table zName.  Only where SQLite cannot
** compile the SQL here (idemSchemaTouches()). */
static int idemSqlNamesShadow(const char *zSql, const char *zName){
  IdemToken t;
  char zTok[256], zShadow[256];
  int i;
  for(idemTokenNext(&zSql, &t); t.eType!=IDEM_TK_END; idemTokenNext(&zSql, &t)){
    if( t.eType==IDEM_TK_OTHER && t.z[0]=='\'' && t.n>=2 ){
      IdemToken s = t;              /* 'calls_claim': as the name */
      s.z++; s.n -= 2;
      idemTokenName(&s, zTok, (int)sizeof(zTok));
    }else if( t.eType==IDEM_TK_NAME ){
      idemTokenName(&t, zTok, (int)sizeof(zTok));
    }else{
      continue;
    }
    for(i=0; i<IDEM_NSHADOW; i++){
      sqlite3_snprintf((int)sizeof(zShadow), zShadow, "%s_%s", zName,
                       azIdemShadow[i]);
      if( sqlite3_stricmp(zTok, zShadow)==0 ) return 1;
    }
  }
  return 0;
}

/*
** WHAT TOUCHES A SHADOW TABLE is what SQLite resolves, not a spelling: a
** table name may be bare, quoted in three ways or a 'string literal', and
** a view or a trigger can reach a table through another view.  So a
** trigger's program and a view's are compiled here (EXPLAIN of the
** statements that fire the trigger, of a SELECT from the view: the
** trigger programs are listed with the statement's) and their opcodes
** searched for a cursor on a shadow table's b-tree or a clearing of it
** (its root page, in the table's schema); a table's foreign keys are read
** as SQLite parsed them (PRAGMA foreign_key_list).  Where SQLite cannot
** compile it here (triggers or views switched off on this connection, an
** authorizer that denies, a function that an untrusted schema may not
** call, or the table being connected itself, which SQLite will not
** connect again from inside its own xConnect), the SQL text is searched
** instead, strings counted as names (idemSqlNamesShadow()).
*/
/* The root pages of the shadow tables of p (of <name>_claim alone if
** bClaim), as sqlite_schema's text holds them, and their schema's
** number. */
static int idemRootsLoad(IdemVtab *p, IdemRoots *pR, int bClaim){
  sqlite3_stmt *pStmt = 0;
  int rc;
  memset(pR, 0, sizeof(*pR));
  pR->iDb = -1;
  rc = idemQueryRow(p->db, &pStmt, "SELECT seq FROM pragma_database_list"
                    " WHERE name = '%q'", p->zDb);
  if( rc==SQLITE_ROW ) pR->iDb = sqlite3_column_int(pStmt, 0);
  sqlite3_finalize(pStmt);
  if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ) return rc;
  rc = idemQueryRow(p->db, &pStmt, "SELECT rootpage, type='index' FROM"
      " \"%w\".sqlite_schema"
      " WHERE tbl_name COLLATE NOCASE IN ('%q_claim','%q_%s','%q_%s')"
      " AND rootpage>0", p->zDb, p->zName, p->zName,
      bClaim ? "claim" : "expiry", p->zName, bClaim ? "claim" : "config");
  while( rc==SQLITE_ROW ){
    if( pR->n<(int)(sizeof(pR->a)/sizeof(pR->a[0])) ){
      pR->a[pR->n++] = sqlite3_column_int(pStmt, 0);
      pR->nIdx += sqlite3_column_int(pStmt, 1);
    }
    rc = sqlite3_step(pStmt);
  }
  sqlite3_finalize(pStmt);
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/* Set *pbTouch if trigger zTrig (in schema zSchema, on table or view zTbl)
** can reach a shadow table: its program compiled with each statement that
** fires it, the table found from each schema a TEMP trigger may name. */
static int idemTriggerTouches(IdemVtab *p, const IdemRoots *pR,
                              const char *zSchema, const char *zTbl,
                              int *pbCompiled, int *pbTouch){
  const char *azQ[2];
  int nQ = 0, i, rc = SQLITE_OK;
  azQ[nQ++] = zSchema;
  if( sqlite3_stricmp(zSchema, "temp")==0 && sqlite3_stricmp(p->zDb, "temp") ){
    azQ[nQ++] = p->zDb;
  }
  *pbCompiled = 0;
  for(i=0; i<nQ && rc==SQLITE_OK; i++){
    sqlite3_stmt *pCols = 0;
    sqlite3_str *pSet = sqlite3_str_new(p->db);
    char *zSet;
    int nOk = 0, r;
    /* UPDATE of every column that may be set: each UPDATE OF trigger fires */
    r = idemQueryRow(p->db, &pCols, "SELECT name FROM pragma_table_xinfo('%q',"
                     " '%q') WHERE hidden=0", zTbl, azQ[i]);
    while( r==SQLITE_ROW ){
      const char *zCol = (const char*)sqlite3_column_text(pCols, 0);
      sqlite3_str_appendf(pSet, "%s\"%w\"=\"%w\"",
                          sqlite3_str_length(pSet) ? "," : "", zCol, zCol);
      r = sqlite3_step(pCols);
    }
    sqlite3_finalize(pCols);
    if( (r!=SQLITE_DONE && r!=SQLITE_ERROR) || sqlite3_str_errcode(pSet) ){
      sqlite3_free(sqlite3_str_finish(pSet));
      return r==SQLITE_DONE || r==SQLITE_ERROR ? SQLITE_NOMEM : r;
    }
    zSet = sqlite3_str_finish(pSet);    /* NULL: no column to set */
    r = idemExplainTouches(p->db, pR, sqlite3_mprintf("EXPLAIN INSERT INTO"
            " \"%w\".\"%w\" DEFAULT VALUES", azQ[i], zTbl), pbTouch);
    if( r==SQLITE_OK ) nOk++; else if( r!=SQLITE_ERROR ) rc = r;
    r = idemExplainTouches(p->db, pR, sqlite3_mprintf("EXPLAIN DELETE FROM"
            " \"%w\".\"%w\"", azQ[i], zTbl), pbTouch);
    if( r==SQLITE_OK ) nOk++; else if( r!=SQLITE_ERROR ) rc = r;
    r = zSet==0 ? SQLITE_ERROR : idemExplainTouches(p->db, pR,
            sqlite3_mprintf("EXPLAIN UPDATE \"%w\".\"%w\" SET %s", azQ[i],
                            zTbl, zSet), pbTouch);
    if( r==SQLITE_OK ) nOk++; else if( r!=SQLITE_ERROR ) rc = r;
    sqlite3_free(zSet);
    if( nOk==3 ) *pbCompiled = 1;
  }
  return rc;
}

/* Set *pbTouch if the schema object (zType: 'trigger', 'view' or 'table';
** zSql its text) can reach a shadow table of p, as SQLite resolves it. */
static int idemSchemaTouches(IdemVtab *p, const IdemRoots *pR, int bTriggers,
                             const char *zSchema, const char *zType,
                             const char *zName, const char *zTbl,
                             const char *zSql, int *pbTouch){
  int rc = SQLITE_OK, bCompiled = 0;
  *pbTouch = 0;
  if( zType[0]=='t' && zType[1]=='a' ){
    /* A table: its foreign keys' parents, as SQLite parsed them. */
    sqlite3_stmt *pStmt = 0;
    if( sqlite3_stricmp(zSchema, p->zDb) ) return SQLITE_OK;
    rc = idemQueryRow(p->db, &pStmt, "SELECT \"table\" FROM"
                      " pragma_foreign_key_list('%q', '%q')", zName, zSchema);
    while( rc==SQLITE_ROW && !*pbTouch ){
      const char *zParent = (const char*)sqlite3_column_text(pStmt, 0);
      int i;
      for(i=0; zParent && i<IDEM_NSHADOW; i++){
        char *z = sqlite3_mprintf("%s_%s", p->zName, azIdemShadow[i]);
        if( z==0 ){ sqlite3_finalize(pStmt); return SQLITE_NOMEM; }
        if( sqlite3_stricmp(zParent, z)==0 ) *pbTouch = 1;
        sqlite3_free(z);
      }
      rc = sqlite3_step(pStmt);
    }
    sqlite3_finalize(pStmt);
    return rc==SQLITE_ROW || rc==SQLITE_DONE || rc==SQLITE_ERROR ? SQLITE_OK : rc;
  }
  if( zType[0]=='v' ){
    rc = idemExplainTouches(p->db, pR, sqlite3_mprintf("EXPLAIN SELECT * FROM"
                            " \"%w\".\"%w\"", zSchema, zName), pbTouch);
    bCompiled = rc==SQLITE_OK;
  }else if( bTriggers ){
    rc = idemTriggerTouches(p, pR, zSchema, zTbl, &bCompiled, pbTouch);
  }
  if( rc!=SQLITE_OK && rc!=SQLITE_ERROR ) return rc;   /* no verdict */
  if( !bCompiled && !*pbTouch ) *pbTouch = idemSqlNamesShadow(zSql, p->zName);
  return SQLITE_OK;
}

/*
** What is wrong with shadow table iShadow, whose schema row pStmt holds
** (type, name, tbl_name, sql), or NULL if it is exactly idem's.  Format 1's
** claim table (bFormat2 false: no <name>_config) may lack the columns
** formats 2 and 3 added, format 2's those format 3 added; format 4's
** (bFormat4: <name>_config records format 4 or above) is its own
** definition, without the created index, and only that.
*/
static char *idemShadowDiff(IdemVtab *p, int iShadow, int bFormat2,
                            int bFormat4, sqlite3_stmt *pStmt, int *pbNoMem){
  const char *zType = (const char*)sqlite3_column_text(pStmt, 0);
  const char *zSql = (const char*)sqlite3_column_text(pStmt, 3);
  char *zWant = 0, *zWhy = 0, *zDiff;
  int i;
  if( zType==0 || strcmp(zType, "table")!=0 ){
    zWhy = sqlite3_mprintf("%s_%s is a%s %s, not a table", p->zName,
        azIdemShadow[iShadow], zType && zType[0]=='i' ? "n" : "",
        zType ? zType : "thing");
    if( zWhy==0 ) *pbNoMem = 1;
    return zWhy;
  }
  /* Format 3; format 2 without the columns format 3 added, and format 1
  ** (no <name>_config) without those of both, or with the first of them
  ** (an upgrade adds them one by one). */
  for(i=0; i<=(iShadow!=0 || bFormat4 ? 0 : bFormat2 ? IDEM_NNEWCOL3
                                                    : IDEM_NNEWCOL); i++){
    const char *zDef = iShadow==0 && bFormat4 ? zIdemClaimDef4
                                              : azIdemShadowDef[iShadow];
    char *zCut = 0;
    if( i>0 ){
      /* Drop the last i new columns: from ", <col> TEXT" of the first
      ** dropped to the one after the last. */
      char zFrom[32];
      const char *zA, *zB;
      sqlite3_snprintf((int)sizeof(zFrom), zFrom, " %s,",
                       azIdemNewCol[IDEM_NNEWCOL-i]);
      zA = strstr(zDef, zFrom);
      zB = strstr(zDef, " sends INTEGER,");
      assert( zA && zB );
      zB += strlen(" sends INTEGER,");
      zCut = sqlite3_mprintf("%.*s%s", (int)(zA - zDef), zDef, zB);
      if( zCut==0 ){ *pbNoMem = 1; break; }
      zDef = zCut;
    }
    zWant = sqlite3_mprintf("CREATE TABLE \"%w_%s\"%s", p->zName,
                            azIdemShadow[iShadow], zDef);
    sqlite3_free(zCut);
    if( zWant==0 ){ *pbNoMem = 1; break; }
    zDiff = zSql ? idemSqlDiff(zSql, zWant, pbNoMem)
                 : sqlite3_mprintf("it has no definition");
    sqlite3_free(zWant);
    /* The difference reported is the one from the newest format's. */
    if( zWhy==0 ){
      zWhy = zDiff;
    }else{
      sqlite3_free(zDiff);
    }
    if( zDiff==0 || *pbNoMem ){
      if( zWhy!=zDiff ){ sqlite3_free(zWhy); zWhy = 0; }
      break;
    }
  }
  if( zWhy ){
    char *z = sqlite3_mprintf("%s_%s is not the table idem made: %s",
                              p->zName, azIdemShadow[iShadow], zWhy);
    sqlite3_free(zWhy);
    zWhy = z;
    if( z==0 ) *pbNoMem = 1;
  }
  return zWhy;
}

/*
** The arbiter of claims is the shadow table's UNIQUE(key, member): the
** claim is its one INSERT, and changes() tells who won.  A database
** changed outside idem may have taken that away while the table still
** looks whole: the table made again without the constraint, with a
** conflict clause (in any spelling: an IGNORE or REPLACE turns a duplicate
** into nothing), with a foreign key that deletes claims, as a view; a
** trigger on any shadow table (allowed even with SQLITE_DBCONFIG_DEFENSIVE),
** which can void every claim or record; a trigger or view elsewhere that
** writes or reads the shadow tables behind idem's back.  So the file is
** held against idem's schema (azIdemShadowDef), not searched for known bad
** words: each shadow table, found by name as SQLite finds it (ASCII case
** folded), must be defined exactly as idem defines it; no index but the
** ones its constraints make, no trigger, and no trigger, view or foreign
** key of another table may name a shadow table, in the table's schema or
** in temp.  Anything else, and claims are refused, with p->zDamaged naming
** what was found; reads, records, releases and DROP TABLE still work, and
** PRAGMA integrity_check reports it.  The check runs at connect and again,
** after a schema change, before the claim's INSERT is prepared
** (idemStoreInsert(), idemStoreRecheck()).  p->bClaimSeen: <name>_claim
** was found, and is idem's.  Returns SQLITE_OK (a verdict), or the failure
** that left the check without one (SQLITE_NOMEM, SQLITE_INTERRUPT, ...).
*/
static const char zIdemDamageTail[] = "; the database was changed outside"
                                     " idem: claims are refused";
static int idemCheckShadow(IdemVtab *p){
  sqlite3_stmt *pStmt = 0;
  char *zWhy = 0;
  IdemRoots roots;
  int i, rc, bNoMem = 0, bFormat2 = 0, bFormat4 = 0, bTriggers = 1;

  sqlite3_free(p->zDamaged);
  p->zDamaged = 0;
  p->bClaimSeen = 0;
  rc = idemSchemaCookies(p, p->aCookie);
  if( rc!=SQLITE_OK ) goto done;

  /* 1. Each shadow table, exactly as idem defines it: <name>_config
  ** first, as it tells format 2 (all three) from format 1 (the claim
  ** table alone, maybe without the columns format 2 added). */
  for(i=IDEM_NSHADOW-1; i>=0 && zWhy==0; i--){
    rc = idemQueryRow(p->db, &pStmt, "SELECT type, name, tbl_name, sql FROM"
        " \"%w\".sqlite_schema WHERE name = '%q_%s' COLLATE NOCASE"
        " ORDER BY type='table' DESC", p->zDb, p->zName, azIdemShadow[i]);
    if( rc==SQLITE_ROW ){
      if( i==2 ) bFormat2 = 1;
      zWhy = idemShadowDiff(p, i, bFormat2, bFormat4, pStmt, &bNoMem);
      if( i==0 && zWhy==0 ) p->bClaimSeen = 1;
      if( i==2 && zWhy==0 ){
        /* <name>_config is idem's: the format it records tells which
        ** <name>_claim to hold the file against (idemReadFormat() reports
        ** a format that is not a number this build knows). */
        sqlite3_finalize(pStmt);
        pStmt = 0;
        rc = idemQueryRow(p->db, &pStmt, "SELECT v>=4 FROM \"%w\".\"%w_config\""
                          " WHERE k='format' AND typeof(v)='integer'",
                          p->zDb, p->zName);
        if( rc==SQLITE_ROW ){
          bFormat4 = sqlite3_column_int(pStmt, 0);
        }else if( rc!=SQLITE_DONE ){
          goto done;
        }
      }
    }else if( rc==SQLITE_DONE && i==1 && bFormat2 ){
      zWhy = sqlite3_mprintf("%s_expiry is missing", p->zName);
      if( zWhy==0 ) bNoMem = 1;
    }else if( rc!=SQLITE_DONE ){
      goto done;
    }
    sqlite3_finalize(pStmt);
    pStmt = 0;
  }
  if( zWhy || bNoMem ) goto done;

  /* 2. Nothing else on them: no index but their constraints' (those have
  ** no SQL), no trigger, in the table's schema or in temp. */
  rc = idemQueryRow(p->db, &pStmt, "SELECT type, name, tbl_name FROM"
      " (SELECT type, name, tbl_name, sql FROM \"%w\".sqlite_schema"
      "  UNION ALL SELECT type, name, tbl_name, sql FROM temp.sqlite_schema)"
      " WHERE tbl_name COLLATE NOCASE IN ('%q_claim', '%q_expiry', '%q_config')"
      " AND type<>'table' AND NOT (type='index' AND sql IS NULL)"
      " ORDER BY tbl_name, name", p->zDb, p->zName, p->zName, p->zName);
  if( rc==SQLITE_ROW ){
    const char *zType = (const char*)sqlite3_column_text(pStmt, 0);
    zWhy = zType && strcmp(zType, "trigger")==0
        ? sqlite3_mprintf("%s has a trigger (%s), which can void or change"
              " what idem writes", sqlite3_column_text(pStmt, 2),
              sqlite3_column_text(pStmt, 1))
        : sqlite3_mprintf("%s has %s %s (%s) that idem did not make",
              sqlite3_column_text(pStmt, 2),
              zType && zType[0]=='i' ? "an" : "a", zType,
              sqlite3_column_text(pStmt, 1));
    if( zWhy==0 ) bNoMem = 1;
    goto done;
  }else if( rc!=SQLITE_DONE ){
    goto done;
  }
  sqlite3_finalize(pStmt);
  pStmt = 0;

  /* 3. Nothing elsewhere reaches them: a trigger or view (which could write
  ** or read them behind idem's back), a table's foreign key (whose action
  ** could delete or change claims, or stop idem's own writes), as SQLite
  ** resolves each (idemSchemaTouches()). */
  rc = idemRootsLoad(p, &roots, 0);
  if( rc!=SQLITE_OK ) goto done;
  sqlite3_db_config(p->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, -1, &bTriggers);
  rc = idemQueryRow(p->db, &pStmt, "SELECT type, name, sql, tbl_name, s FROM"
      " (SELECT type, name, tbl_name, sql, '%q' AS s FROM \"%w\".sqlite_schema"
      "  UNION ALL SELECT type, name, tbl_name, sql, 'temp' FROM"
      "  temp.sqlite_schema)"
      " WHERE type IN ('trigger', 'view', 'table') AND sql IS NOT NULL"
      " AND tbl_name COLLATE NOCASE NOT IN ('%q', '%q_claim', '%q_expiry',"
      " '%q_config')", p->zDb, p->zDb, p->zName, p->zName, p->zName, p->zName);
  while( rc==SQLITE_ROW ){
    const char *zType = (const char*)sqlite3_column_text(pStmt, 0);
    const char *zObj = (const char*)sqlite3_column_text(pStmt, 1);
    const char *zSql = (const char*)sqlite3_column_text(pStmt, 2);
    const char *zTbl = (const char*)sqlite3_column_text(pStmt, 3);
    const char *zSchema = (const char*)sqlite3_column_text(pStmt, 4);
    int bTouch = 0;
    if( zType && zObj && zSql && zTbl && zSchema ){
      rc = idemSchemaTouches(p, &roots, bTriggers, zSchema, zType, zObj, zTbl,
                             zSql, &bTouch);
      if( rc!=SQLITE_OK ) goto done;
    }
    if( bTouch ){
      zWhy = sqlite3_mprintf("%s %s names a shadow table of %s (%s)", zType,
          zObj, p->zName, zType[0]=='t' && zType[1]=='a'
            ? "a foreign key could change or block what idem writes"
            : "only idem may use them");
      if( zWhy==0 ) bNoMem = 1;
      break;
    }
    rc = sqlite3_step(pStmt);
  }
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ) rc = SQLITE_OK;

 done:
  sqlite3_finalize(pStmt);
  if( zWhy ){
    p->zDamaged = sqlite3_mprintf("%s%s", zWhy, zIdemDamageTail);
    if( p->zDamaged==0 ) bNoMem = 1;
  }
  sqlite3_free(zWhy);
  if( bNoMem ) rc = SQLITE_NOMEM;
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ) rc = SQLITE_OK;
  if( rc!=SQLITE_OK ){
    /* No verdict: the next idemStoreRecheck() checks again, whatever the
    ** cookies (they were read before the failure), and no claim may be
    ** written meanwhile: a check cut short (SQLITE_INTERRUPT from
    ** sqlite3_interrupt() or a progress handler, out of memory, a
    ** truncated file) has not looked at everything, and the claim's INSERT
    ** prepared after it would run whatever trigger it did not reach. */
    p->aCookie[1] = -1;
  }
  return rc;
}

/*
** A check that failed with rc (out of memory, interrupted, ...) is no
** verdict: the claim fails with the reason, and the next claim checks the
** shadow tables in whole (aCookie[1]) before it prepares the INSERT.
** Returns rc.
*/
static int idemCheckFailed(IdemVtab *p, int rc){
  p->aCookie[1] = -1;
  if( rc!=SQLITE_NOMEM ){
    idemVtabError(p, "cannot check the shadow tables: %s", sqlite3_errstr(rc));
  }
  return rc;
}

/*
** If the schema changed since the last check (its cookie, or the times its
** statement was prepared again: idemSchemaCookies()), check the shadow
** tables again.  A trigger created on this connection does not connect
** the table again, so this is what sees it: before the claim's INSERT is
** prepared (idemStoreInsert()), before a sweep's first write, and at each
** claim while the table is damaged (a DROP TRIGGER since makes it whole
** again).  SQLITE_OK or an error with its message.
*/
IDEM_PRIVATE int idemStoreRecheck(IdemVtab *p){
  sqlite3_int64 aCookie[2];
  int rc = idemSchemaCookies(p, aCookie);
  if( rc!=SQLITE_OK ) return idemVtabDbError(p, rc);
  if( aCookie[0]!=p->aCookie[0] || aCookie[1]!=p->aCookie[1] ){
    rc = idemCheckShadow(p);
    if( rc!=SQLITE_OK ) idemCheckFailed(p, rc);
  }
  return rc;
}

/*
** May the table write a claim?  The damage check again if the schema
** changed since it last ran (idemStoreRecheck()).  SQLITE_OK;
** SQLITE_CORRUPT_VTAB with p->zDamaged as the table's error: claims are
** refused; or another error with its message.
*/
IDEM_PRIVATE int idemStoreClaimable(IdemVtab *p){
  int rc = idemStoreRecheck(p);
  if( rc==SQLITE_OK && p->zDamaged ){
    idemVtabError(p, "%s", p->zDamaged);
    rc = SQLITE_CORRUPT_VTAB;
  }
  return rc;
}

/*
** THE CLAIM'S INSERT.  The one statement that writes a claim or member
** row (IDEM_STMT_INSERT) is prepared with the legacy sqlite3_prepare(),
** every other one with sqlite3_prepare_v3(), which always asks SQLite to
** keep the SQL and prepare the statement again when it must.  SQLite
** never prepares a legacy statement again: when the schema changed since
** it was compiled (the schema's cookie moved, by another connection or by
** this one, DDL earlier in the same transaction included) or the statement
** was expired (any change to temp, where a TEMP trigger on a shadow table
** lives, ticket #1644; a flag PRAGMA, an authorizer, a function or
** collation defined again), sqlite3_step() fails and sqlite3_reset() says
** SQLITE_SCHEMA before the program has written anything: an expired
** statement does not start, and the cookie is compared in OP_Transaction,
** the program's first opcode, before the row and any trigger.  So the
** schema is looked at only when the statement is prepared, and it is
** prepared only right after the damage check has passed against the
** same schema (idemStoreClaimable()): a trigger compiled into it is one
** the check has seen and refused.  The check reads the schema's text and
** SQLite compiles from the schema in memory, which PRAGMA writable_schema
** can set apart: so the program compiled is listed (the same SQL under
** EXPLAIN, prepared right after it) and judged too (idemInsertProgram()),
** and a listing that failed is no verdict (idemCheckFailed()).  After SQLITE_SCHEMA
** (idemStoreInsertStep()) it is finalized, and the next claim checks the
** tables and prepares it again: a change that does not touch them (a
** table of the application's, on any connection) costs one check, never
** an error, and a trigger on them made by this connection between two
** claims of one transaction refuses the second.
**
** sqlite3_prepare() takes no SQLITE_PREPARE_NO_VTAB (nor PERSISTENT): the
** check gives what that flag gives the other statements.  <name>_claim is
** a table defined exactly as idem defines it, never a virtual table, or
** claims are refused before the INSERT is compiled; where the check did
** not find it (p->bClaimSeen), the INSERT is first prepared with the flag,
** for SQLite's own error (a module of that name is never reached).  No
** other connection can change the schema between the check and the step:
** both run inside the claim's xUpdate, in a write transaction.
*/
IDEM_PRIVATE int idemStoreInsert(IdemVtab *p, sqlite3_stmt **ppIns){
  sqlite3_stmt *pIns = p->aStmt[IDEM_STMT_INSERT];
  sqlite3_stmt *pEx = 0;
  char *zSql, *zEx, *zWhy = 0;
  IdemRoots roots;
  int rc;
  *ppIns = pIns;
  if( pIns ) return SQLITE_OK;
  rc = idemStoreClaimable(p);
  if( rc!=SQLITE_OK ) return rc;
  zSql = idemStmtSql(p, IDEM_STMT_INSERT);
  zEx = zSql ? sqlite3_mprintf("EXPLAIN %s", zSql) : 0;
  if( zEx==0 ){
    sqlite3_free(zSql);
    return idemVtabDbError(p, SQLITE_NOMEM);
  }
  if( !p->bClaimSeen ){
    rc = idemPrepare(p, zSql, 0, &pIns);
    sqlite3_finalize(pIns);
    pIns = 0;
  }
  if( rc==SQLITE_OK ){
    /* Its b-trees as the text holds them, then the INSERT and the same
    ** under EXPLAIN, back to back (idemInsertProgram()). */
    rc = idemRootsLoad(p, &roots, 1);
    if( rc==SQLITE_OK ){
      rc = sqlite3_prepare(p->db, zSql, -1, &pIns, 0);
      if( rc!=SQLITE_OK ) idemVtabDbError(p, rc);
    }else{
      rc = idemCheckFailed(p, rc);
    }
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_prepare(p->db, zEx, -1, &pEx, 0);
    if( rc==SQLITE_OK ) rc = idemInsertProgram(pEx, &roots, p->zName, &zWhy);
    sqlite3_finalize(pEx);
    if( rc!=SQLITE_OK ){
      rc = idemCheckFailed(p, rc);
    }else if( zWhy ){
      /* Refused until the schema changes (idemStoreClaimable()). */
      p->zDamaged = sqlite3_mprintf("%s%s", zWhy, zIdemDamageTail);
      rc = p->zDamaged ? SQLITE_CORRUPT_VTAB : SQLITE_NOMEM;
      if( rc==SQLITE_NOMEM ){
        rc = idemCheckFailed(p, rc);
      }else{
        idemVtabError(p, "%s", p->zDamaged);
      }
    }
    if( rc!=SQLITE_OK ){
      sqlite3_finalize(pIns);
      pIns = 0;
    }
  }
  sqlite3_free(zWhy);
  sqlite3_free(zEx);
  sqlite3_free(zSql);
  p->aStmt[IDEM_STMT_INSERT] = *ppIns = pIns;
  p->ins.bBound = 0;                    /* (a new statement: none bound) */
  return rc;
}

/*
** Run the claim's INSERT (bound by the caller), reset it and, unless bKeep
** (idem_claim.c, "THE CLAIM'S BINDINGS, KEPT"), clear its bindings:
** SQLITE_DONE, or the error's code, which for a legacy
** statement is sqlite3_reset()'s (its step says SQLITE_ERROR), with its
** message in the connection.  SQLITE_SCHEMA: nothing was written, the
** statement is finalized, and the next idemStoreInsert() checks the
** shadow tables (in whole: aCookie[1]) before it prepares it again.
** A format-4 INSERT that NOT NULL refused (SQLITE_CONSTRAINT_NOTNULL, no
** message set) was refused for its created (idemRowsRefused()).
*/
IDEM_PRIVATE int idemStoreInsertStep(IdemVtab *p, sqlite3_stmt *pIns,
                                     int bKeep){
  int rc = idemStepWrite(pIns);
  int rc2 = sqlite3_reset(pIns);
  if( !bKeep ){
    sqlite3_clear_bindings(pIns);
    p->ins.bBound = 0;
  }
  if( rc==SQLITE_DONE ) return rc;
  if( p->iFormat>=4 && rc2==SQLITE_CONSTRAINT
   && sqlite3_extended_errcode(p->db)==SQLITE_CONSTRAINT_NOTNULL ){
    return SQLITE_CONSTRAINT_NOTNULL;
  }
  if( rc2==SQLITE_SCHEMA ){
    assert( p->aStmt[IDEM_STMT_INSERT]==pIns );
    sqlite3_finalize(pIns);
    p->aStmt[IDEM_STMT_INSERT] = 0;
    p->aCookie[1] = -1;
  }
  return rc2!=SQLITE_OK ? rc2 : rc;
}

/*
** Append to s what format 2 adds to format 1's <name>_claim (besides its
** three new columns): <name>_expiry, the decided calls of a table with
** retain in the order they expire (written only when such a call is
** decided, so that a claim pays nothing for it), and <name>_config, which
** records the format, iFormat.  IF NOT EXISTS: an upgrade may be finished
** twice.
*/
static void idemAppendFormat2(IdemVtab *p, sqlite3_str *s, int iFormat){
  int i;
  for(i=1; i<IDEM_NSHADOW; i++){
    sqlite3_str_appendf(s, "CREATE TABLE IF NOT EXISTS \"%w\".\"%w_%s\"%s;",
                        p->zDb, p->zName, azIdemShadow[i], azIdemShadowDef[i]);
  }
  sqlite3_str_appendf(s, "INSERT OR REPLACE INTO \"%w\".\"%w_config\"(k, v)"
                      " VALUES('format', %d)", p->zDb, p->zName, iFormat);
}

/*
** The format of the table's shadow tables into p->iFormat: the 'format'
** row of <name>_config, or 1 if there is no <name>_config (a table made by
** idem 1.0.0).  A format newer than this build knows is an error that
** names both, never a silent misreading.
*/
static int idemReadFormat(IdemVtab *p){
  sqlite3_stmt *pStmt = 0;
  int rc;
  p->iFormat = 1;
  rc = idemQueryRow(p->db, &pStmt, "SELECT 1 FROM \"%w\".sqlite_schema"
                    " WHERE type='table' AND name='%q_config'", p->zDb, p->zName);
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_ROW ){
    rc = idemQueryRow(p->db, &pStmt, "SELECT v FROM \"%w\".\"%w_config\""
                      " WHERE k='format'", p->zDb, p->zName);
    if( rc==SQLITE_ROW && sqlite3_column_type(pStmt, 0)==SQLITE_INTEGER ){
      sqlite3_int64 iFormat = sqlite3_column_int64(pStmt, 0);
      sqlite3_finalize(pStmt);
      p->iFormat = iFormat<1 ? 0 : iFormat>IDEM_FORMAT ? IDEM_FORMAT+1 : (int)iFormat;
      if( iFormat>IDEM_FORMAT || iFormat<1 ){
        idemVtabError(p, "the table has format %lld, and this build of idem"
            " (%s) reads formats 1 to %d: open it with the build of idem"
            " that made it, or a newer one", iFormat, IDEM_VERSION,
            IDEM_FORMAT);
        return SQLITE_ERROR;
      }
      return SQLITE_OK;
    }
    sqlite3_finalize(pStmt);
    if( rc==SQLITE_ROW || rc==SQLITE_DONE ){
      idemVtabError(p, "%s_config does not record the table's format; the"
          " database was changed outside idem", p->zName);
      return SQLITE_CORRUPT_VTAB;
    }
  }
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ) return SQLITE_OK;
  if( rc!=SQLITE_NOMEM ){
    idemVtabError(p, "cannot read the table's format: %s",
                  sqlite3_errmsg(p->db));
  }
  return rc;
}

/*
** Upgrade a format-1 or format-2 table to format 3 (IDEM_FORMAT_UPGRADE)
** in place, on the first write of a build that knows format 3; it stays
** format 3 (its created index kept and used: a format-4 table would need
** created in rid order, which old rows need not be).  Add the columns it
** lacks of
** keyargs, owner, expires (format 2), honours_key and sends (format 3) to
** <name>_claim (each a NULL for the rows that are there), the expiry index
** <name>_expiry and <name>_config.  Every step is idempotent, and the format row comes
** last, so that an interrupted upgrade is finished by the next write.
** The cached statements read the old columns as NULL: those not in use are
** finalized now, the others when their cursor gives them back.
*/
IDEM_PRIVATE int idemStoreUpgrade(IdemVtab *p){
  sqlite3_str *s = sqlite3_str_new(p->db);
  char *zSql;
  int i, rc;
  for(i=0; i<IDEM_NNEWCOL; i++){
    sqlite3_stmt *pStmt;
    int nName = (int)(strchr(azIdemNewCol[i], ' ') - azIdemNewCol[i]);
    rc = idemQueryRow(p->db, &pStmt, "SELECT 1 FROM"
                      " pragma_table_info('%q_claim', %Q) WHERE name='%.*s'",
                      p->zName, p->zDb, nName, azIdemNewCol[i]);
    sqlite3_finalize(pStmt);
    if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ){
      sqlite3_free(sqlite3_str_finish(s));
      return rc==SQLITE_NOMEM ? rc : idemVtabDbError(p, rc);
    }
    if( rc==SQLITE_DONE ){
      sqlite3_str_appendf(s, "ALTER TABLE \"%w\".\"%w_claim\" ADD COLUMN %s;",
                          p->zDb, p->zName, azIdemNewCol[i]);
    }
  }
  idemAppendFormat2(p, s, IDEM_FORMAT_UPGRADE);
  zSql = sqlite3_str_finish(s);
  if( zSql==0 ) return idemVtabDbError(p, SQLITE_NOMEM);
  rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    idemVtabError(p, "cannot upgrade the table from format %d to %d: %s",
                  p->iFormat, IDEM_FORMAT_UPGRADE, sqlite3_errmsg(p->db));
    return rc;
  }
  p->iFormat = IDEM_FORMAT_UPGRADE;
  idemStmtFinalizeAll(p);     /* prepared for format 1 or 2 */
  return SQLITE_OK;
}

/*
** Run zSql (freed; NULL: out of memory) to change the shadow tables; on
** failure the table's error says "cannot <zWhat> <name>_claim: <SQLite's
** message>".
*/
static int idemStoreExec(IdemVtab *p, char *zSql, const char *zWhat){
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    idemVtabError(p, "cannot %s %s_claim: %s", zWhat, p->zName,
                  sqlite3_errmsg(p->db));
  }
  return rc;
}

/*
** Make the shadow tables of a new table (xCreate), in format IDEM_FORMAT.
** SQLITE_OK, or the error with the table's message.
*/
IDEM_PRIVATE int idemStoreCreate(IdemVtab *p){
  sqlite3_str *s = sqlite3_str_new(p->db);
  sqlite3_str_appendf(s, "CREATE TABLE \"%w\".\"%w_claim\"%s;", p->zDb,
                      p->zName, zIdemClaimDef4);
  idemAppendFormat2(p, s, IDEM_FORMAT);
  p->iFormat = IDEM_FORMAT;
  p->aCookie[1] = -1;         /* not checked: the first claim checks */
  return idemStoreExec(p, sqlite3_str_finish(s), "create");
}

/*
** The shadow tables of an existing table (xConnect): the damage check,
** and their format.  SQLITE_OK, or the error with the table's message.
*/
IDEM_PRIVATE int idemStoreConnect(IdemVtab *p){
  int rc = idemCheckShadow(p);
  /* A check without a verdict (but out of memory) does not stop the table
  ** from connecting: reads, records and DROP TABLE work; a truncated file
  ** shows with its own message when the table is used, and the first
  ** claim checks again (idemStoreClaimable()). */
  if( rc!=SQLITE_NOMEM ) rc = idemReadFormat(p);
  return rc;
}

/*
** Drop the shadow tables, whatever they have become.  SQLite does not pass
** xDestroy's message on (a failure reads "SQL logic error"), so this must
** not fail on a damaged schema: a view in the claim table's place is
** dropped as a view; anything else of that name (an index, a trigger) is
** not the shadow table and is left alone.
*/
IDEM_PRIVATE int idemStoreDrop(IdemVtab *p){
  sqlite3_str *pSql = sqlite3_str_new(p->db);
  int i, rc = SQLITE_OK;
  idemStmtFinalizeAll(p);
  /* Each shadow table, or the view that replaced it (a damaged database),
  ** found by name as SQLite finds it; one that is not there is skipped. */
  for(i=0; i<IDEM_NSHADOW && rc==SQLITE_OK; i++){
    sqlite3_stmt *pStmt;
    rc = idemQueryRow(p->db, &pStmt, "SELECT type='view' FROM"
                      " \"%w\".sqlite_schema WHERE name='%q_%s' COLLATE NOCASE"
                      " AND type IN ('table','view')", p->zDb, p->zName,
                      azIdemShadow[i]);
    if( rc==SQLITE_ROW ){
      sqlite3_str_appendf(pSql, "DROP %s \"%w\".\"%w_%s\";",
          sqlite3_column_int(pStmt, 0) ? "VIEW" : "TABLE", p->zDb, p->zName,
          azIdemShadow[i]);
      rc = SQLITE_OK;
    }else if( rc==SQLITE_DONE ){
      rc = SQLITE_OK;
    }
    sqlite3_finalize(pStmt);
  }
  if( rc!=SQLITE_OK ){
    sqlite3_free(sqlite3_str_finish(pSql));
    return rc;
  }
  return idemStoreExec(p, sqlite3_str_finish(pSql), "drop");
}

/* Rename the shadow tables with the table (xRename). */
IDEM_PRIVATE int idemStoreRename(IdemVtab *p, const char *zNew){
  char *zSql, *zName;
  int rc;
  idemStmtFinalizeAll(p);
  zName = sqlite3_mprintf("%s", zNew);
  if( p->iFormat>=2 ){
    zSql = sqlite3_mprintf(
        "ALTER TABLE \"%w\".\"%w_claim\" RENAME TO \"%w_claim\";"
        "ALTER TABLE \"%w\".\"%w_expiry\" RENAME TO \"%w_expiry\";"
        "ALTER TABLE \"%w\".\"%w_config\" RENAME TO \"%w_config\"",
        p->zDb, p->zName, zNew, p->zDb, p->zName, zNew, p->zDb, p->zName, zNew);
  }else{
    zSql = sqlite3_mprintf("ALTER TABLE \"%w\".\"%w_claim\" RENAME TO \"%w_claim\"",
                           p->zDb, p->zName, zNew);
  }
  if( zName==0 ){
    sqlite3_free(zSql);
    return SQLITE_NOMEM;
  }
  rc = idemStoreExec(p, zSql, "rename");
  if( rc==SQLITE_OK ){
    sqlite3_free(p->zName);
    p->zName = zName;
  }else{
    sqlite3_free(zName);
  }
  return rc;
}

/* The shadow tables' suffixes (xShadowName). */
IDEM_PRIVATE int idemStoreShadowName(const char *zName){
  return sqlite3_stricmp(zName, "claim")==0
      || sqlite3_stricmp(zName, "expiry")==0
      || sqlite3_stricmp(zName, "config")==0;
}

/* Release what the store holds of p (at disconnect and after DROP). */
IDEM_PRIVATE void idemStoreClose(IdemVtab *p){
  int i;
#ifdef IDEM_DEBUG
  for(i=0; i<IDEM_NSTMT; i++) assert( !p->aLent[i] );   /* no cursor open */
#endif
  idemStmtFinalizeAll(p);
  for(i=0; i<IDEM_INS_NVAL; i++){       /* (after the INSERT bound to them) */
    sqlite3_free(p->ins.aVal[i].z);
  }
  memset(&p->ins, 0, sizeof(p->ins));
  sqlite3_free(p->zDamaged);
  p->zDamaged = 0;
  sqlite3_free(p->aTxn);
  p->aTxn = 0;
  p->nTxn = p->nTxnAlloc = 0;
}

/* ------------------------------------------------------- transaction */

/*
** The local claims made in the open transaction, so that xSync can refuse
** to commit one that is still pending (doc/contract.md §4).  Each carries
** the savepoint level it was made at, so that a ROLLBACK TO (a user's
** savepoint, or a statement's own) forgets the claims it undid.  SQLite
** numbers savepoints from 0, statement savepoints included:
** xSavepoint(N) opens N, xRelease(N) and xRollbackTo(N) end or rewind
** every savepoint from N inward.
*/

/*
** The invariants of the list, checked by the asserts of a debug build:
** within its room; made in order, so the levels never decrease along it;
** none deeper than the savepoint open now.
*/
#ifdef IDEM_DEBUG
static void idemTxnCheck(const IdemVtab *p){
  int i;
  assert( p->nTxn>=0 && p->nTxn<=p->nTxnAlloc );
  assert( p->nTxnAlloc==0 || p->aTxn!=0 );
  assert( p->iTxnLevel>=0 );
  for(i=0; i<p->nTxn; i++){
    assert( p->aTxn[i].iLevel>=0 && p->aTxn[i].iLevel<=p->iTxnLevel );
    assert( i==0 || p->aTxn[i].iLevel>=p->aTxn[i-1].iLevel );
  }
}
#else
# define idemTxnCheck(p)
#endif

IDEM_PRIVATE int idemTxnReserve(IdemVtab *p){
  if( p->nTxn>=p->nTxnAlloc ){
    int nNew = p->nTxnAlloc ? p->nTxnAlloc*2 : 8;
    IdemTxnClaim *aNew = (IdemTxnClaim*)sqlite3_realloc64(p->aTxn,
                                     (sqlite3_uint64)nNew*sizeof(IdemTxnClaim));
    if( aNew==0 ) return SQLITE_NOMEM;
    p->aTxn = aNew;
    p->nTxnAlloc = nNew;
  }
  return SQLITE_OK;
}

IDEM_PRIVATE void idemTxnAdd(IdemVtab *p, const unsigned char aKey[IDEM_KEY_BYTES]){
  if( p->nTxn<p->nTxnAlloc ){           /* idemTxnReserve() made room */
    memcpy(p->aTxn[p->nTxn].aKey, aKey, IDEM_KEY_BYTES);
    p->aTxn[p->nTxn].iLevel = p->iTxnLevel;
    p->nTxn++;
  }
  idemTxnCheck(p);
}

/* A transaction starts, commits or rolls back: no claim is open. */
IDEM_PRIVATE void idemTxnClear(IdemVtab *p){
  idemStmtUnpark(p);
  p->nTxn = 0;
  p->iTxnLevel = 0;
  p->nWin = 0;
  idemTxnCheck(p);
}

/* The running statements of the connection that write, into *pSet. */
static void idemStmtSetOf(sqlite3 *db, IdemStmtSet *pSet){
  sqlite3_stmt *s;
  memset(pSet, 0, sizeof(*pSet));
  for(s=sqlite3_next_stmt(db, 0); s && pSet->n<IDEM_SET_STMTS;
      s=sqlite3_next_stmt(db, s)){
    if( sqlite3_stmt_busy(s) && !sqlite3_stmt_readonly(s) ){
      pSet->ap[pSet->n] = s;
      pSet->aRun[pSet->n++] = sqlite3_stmt_status(s, SQLITE_STMTSTATUS_RUN, 0);
    }
  }
}

/* Open a window at savepoint level iLevel for the statement running now
** (none for a SAVEPOINT command: no writing statement runs). */
static void idemWindowOpen(IdemVtab *p, int iLevel){
  IdemWindow *w;
  if( p->nWin>=IDEM_NWINDOW ) return;   /* deeper than any real nesting */
  w = &p->aWin[p->nWin];
  idemStmtSetOf(p->db, &w->set);
  if( w->set.n==0 ) return;
  w->iLevel = iLevel;
  w->bOwn = w->bDup = 0;
  p->nWin++;
}

IDEM_PRIVATE void idemTxnBegin(IdemVtab *p){
  idemTxnClear(p);
  if( sqlite3_get_autocommit(p->db) ) idemWindowOpen(p, -1);
}

IDEM_PRIVATE IdemWindow *idemTxnWindow(IdemVtab *p){
  IdemStmtSet set;
  int i;
  if( p->nWin==0 ) return 0;            /* every statement of one row */
  idemStmtSetOf(p->db, &set);
  for(i=p->nWin-1; i>=0; i--){
    if( memcmp(&set, &p->aWin[i].set, sizeof(set))==0 ) return &p->aWin[i];
  }
  return 0;
}

/* xSavepoint(iSavepoint): savepoint iSavepoint is open (a user's
** SAVEPOINT, or the statement savepoint of a statement of several rows,
** which opens its window). */
IDEM_PRIVATE void idemTxnSavepoint(IdemVtab *p, int iSavepoint){
  p->iTxnLevel = iSavepoint+1;
  idemWindowOpen(p, iSavepoint);
  idemTxnCheck(p);
}

/* xRelease(iSavepoint): what was made inside the savepoints released now
** belongs to the one around them. */
IDEM_PRIVATE void idemTxnRelease(IdemVtab *p, int iSavepoint){
  int i;
  for(i=0; i<p->nTxn; i++){
    if( p->aTxn[i].iLevel>iSavepoint ) p->aTxn[i].iLevel = iSavepoint;
  }
  p->iTxnLevel = iSavepoint;
  while( p->nWin>0 && p->aWin[p->nWin-1].iLevel>=iSavepoint ) p->nWin--;
  idemTxnCheck(p);
}

/* xRollbackTo(iSavepoint): the claims made inside it are undone;
** savepoint iSavepoint stays open. */
IDEM_PRIVATE void idemTxnRollbackTo(IdemVtab *p, int iSavepoint){
  int i, n = 0;
  for(i=0; i<p->nTxn; i++){
    if( p->aTxn[i].iLevel<=iSavepoint ) p->aTxn[n++] = p->aTxn[i];
  }
  p->nTxn = n;
  p->iTxnLevel = iSavepoint+1;
  while( p->nWin>0 && p->aWin[p->nWin-1].iLevel>iSavepoint ) p->nWin--;
  idemTxnCheck(p);
}

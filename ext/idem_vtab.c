/* SPDX-License-Identifier: MIT */
/*
** idem_vtab.c -- the claim table's plumbing: the idem module's slots, its
** shadow table, statement cache, query plans and cursor.  The claim's
** rules (what an INSERT, UPDATE or DELETE may do) are in idem_claim.c.
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
** expires and stale.
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
**   UNIQUE(key, member)              the arbiter, and the replay's seek
**   UNIQUE(created, rid)             purge by age (an ordinary index; the
**                                    UNIQUE form keeps its name tied to
**                                    the table, so RENAME carries it)
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
** TRANSACTIONS.  The slots xBegin ... xRollbackTo track the local claims
** made in the open transaction; xSync, which runs before it commits,
** refuses to commit one still pending (idemClaimSync(), doc/contract.md
** §4).
**
** DAMAGE.  idemCheckShadow() looks at the shadow table when the table is
** connected and, after a schema change, when the next write transaction
** starts: if it no longer arbitrates (no UNIQUE(key, member), a conflict
** clause, a trigger, ...), claims are refused; DROP TABLE always works.
**
** TRUST.  The module is SQLITE_VTAB_DIRECTONLY: it writes claims and
** releases them, so it must not be reachable from triggers or views that
** arrive with a database file; applications and operators use it directly.
** SQLITE_VTAB_CONSTRAINT_SUPPORT makes OR IGNORE/OR FAIL/OR ROLLBACK work
** (without it every constraint error is an ABORT).  The statements of the
** cache (idemStmt()) are prepared with SQLITE_PREPARE_NO_VTAB: they never
** reach a virtual table, whatever the schema holds.
*/
#include "idemInt.h"

IDEM_PRIVATE const char *const azIdemCol[IDEM_NCOL] = {
  "key", "member", "who", "conv", "tool", "args", "kind", "status", "id",
  "result", "note", "created", "updated", "reply", "reconcile", "keyargs",
  "owner", "expires", "stale"
};

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

typedef struct IdemCursor IdemCursor;
struct IdemCursor {
  sqlite3_vtab_cursor base;   /* Base class.  Must be first */
  sqlite3_stmt *pStmt;        /* The query being stepped */
  int iLent;                  /* aStmt[] slot pStmt came from, or -1 */
  int bEof;                   /* True at end of results */
  sqlite3_stmt *pMain;        /* The main row of a member row's call */
  int bMainLent;              /* pMain is aStmt[IDEM_STMT_Q_MAIN] */
  char *zReply;               /* Cached reply of the current row */
  unsigned char aKey[IDEM_KEY_BYTES];  /* The key pStmt is bound to */
  int bRetain;                /* Skip the rows of expired calls (retain) */
  char zNow[IDEM_TIME_LEN];   /* The time of xFilter: expired before it */
  char zStaleBefore[IDEM_TIME_LEN];   /* stale_after: pending calls quiet
                                      ** since before this are stale */
};

/* Columns of the query statements (IDEM_STMT_Q_*) and of IDEM_STMT_BYRID:
** IDEM_Q_* and IDEM_QCOL() in idemInt.h. */
#define IDEM_QCOLS \
  "rid, key, member, who, conv, tool, args, kind, status, id, result, " \
  "note, created, updated, keyargs, owner, expires"
/* The same, with NULL for who, conv, tool, args, keyargs, owner
** (IDEM_PLAN_LIGHT) */
#define IDEM_QCOLS_LIGHT \
  "rid, key, member, NULL, NULL, NULL, NULL, kind, status, id, result, " \
  "note, created, updated, NULL, NULL, expires"

/* Columns of IDEM_STMT_MAIN and IDEM_STMT_Q_MAIN: IDEM_M_* in idemInt.h. */
#define IDEM_MCOLS \
  "who, conv, tool, args, kind, status, note, updated, key, keyargs, owner," \
  " expires"

/*
** Set the error message of the virtual table (printf-style).
*/
IDEM_PRIVATE void idemVtabError(IdemVtab *p, const char *zFmt, ...){
  va_list ap;
  sqlite3_free(p->base.zErrMsg);
  va_start(ap, zFmt);
  p->base.zErrMsg = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
}

/*
** The message for a statement on the shadow table that failed with rc:
** "idem: <table>: <SQLite's message>" (from sqlite3_malloc(), or NULL).
*/
static char *idemVtabDbMessage(IdemVtab *p, int rc){
  return sqlite3_mprintf("idem: %s: %s", p->zName,
                rc==SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(p->db));
}

/* The same, as the table's error message.  Returns rc. */
IDEM_PRIVATE int idemVtabDbError(IdemVtab *p, int rc){
  sqlite3_free(p->base.zErrMsg);
  p->base.zErrMsg = idemVtabDbMessage(p, rc);
  return rc;
}

/*
** The SQL of each statement, by IDEM_STMT_* number, with %w for the schema
** and the table name, in that order (twice where the table is named twice).
*/
#define IDEM_FROM " FROM \"%w\".\"%w_claim\""
#define IDEM_Q_CREATED(zLower, zUpper) \
  "SELECT " IDEM_QCOLS IDEM_FROM " WHERE 1" zLower zUpper " ORDER BY created, rid"
#define IDEM_GT " AND created>?1"
#define IDEM_GE " AND created>=?1"
#define IDEM_LT " AND created<?2"
#define IDEM_LE " AND created<=?2"
static const char *const azIdemSql[IDEM_NSTMT] = {
  /* INSERT */     "INSERT INTO \"%w\".\"%w_claim\"(key, member, who, conv, tool,"
                   " args, kind, status, id, result, note, created, updated,"
                   " keyargs, owner)"
                   " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?12,?13,?14)",
  /* MAIN */       "SELECT " IDEM_MCOLS IDEM_FROM " WHERE key=?1 AND member=0",
  /* BYRID */      "SELECT " IDEM_QCOLS IDEM_FROM " WHERE rid=?1",
  /* RECORD */     "UPDATE \"%w\".\"%w_claim\" SET status=?2, id=?3, result=?4,"
                   " note=?5, updated=?6, expires=?7 WHERE rid=?1",
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
  /* CALLOF */     "SELECT r.key, c.status FROM \"%w\".\"%w_claim\" AS r"
                   " LEFT JOIN \"%w\".\"%w_claim\" AS c"
                   " ON c.key=r.key AND c.member=0 WHERE r.rid=?1",
  /* COOKIE */     "PRAGMA \"%w\".schema_version",
  /* TEMPCOOKIE */ "PRAGMA temp.schema_version",
  /* EXPIRED */    "SELECT expires, key FROM \"%w\".\"%w_expiry\" WHERE expires<=?1"
                   " ORDER BY expires LIMIT " IDEM_SWEEP_LIMIT_TEXT,
  /* EXPIRY_ADD */ "INSERT OR IGNORE INTO \"%w\".\"%w_expiry\"(expires, key)"
                   " VALUES(?1, ?2)",
  /* EXPIRY_DEL */ "DELETE FROM \"%w\".\"%w_expiry\" WHERE expires=?1 AND key=?2",
  /* EXPIRY_NEXT */"SELECT min(expires) FROM \"%w\".\"%w_expiry\"",
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
** (before keyargs, owner and expires) is read as it is: those columns read
** as NULL.  Writes upgrade it first (idemUpgrade()), so only queries are
** prepared against format 1.  A table without retain never sets expires:
** its queries read NULL instead of the column, which a replay then does
** not pay for.  The rewrite is made on the template, before the table's
** name is in it.
*/
static char *idemStmtSql(IdemVtab *p, int i){
  static const char *const azNew[] = { "expires", "keyargs", "owner" };
  const char *zTemplate = azIdemSql[i];
  char *zOld = 0, *zSql;
  int nNull = 0;
  if( p->iFormat<2 ){
    nNull = 3;
  }else if( p->opt.iRetainMs==0 && i!=IDEM_STMT_EXPIRED
         && strncmp(zTemplate, "SELECT", 6)==0 ){
    nNull = 1;
  }
  if( nNull ){
    int j;
    zOld = sqlite3_mprintf("%s", zTemplate);
    if( zOld==0 ) return 0;
    for(j=0; j<nNull; j++){
      char *z;
      int n = (int)strlen(azNew[j]);
      while( (z = strstr(zOld, azNew[j]))!=0 ){
        memcpy(z, "NULL", 4);
        memmove(z+4, z+n, strlen(z+n)+1);
      }
    }
    zTemplate = zOld;
  }
  zSql = sqlite3_mprintf(zTemplate, p->zDb, p->zName, p->zDb, p->zName);
  sqlite3_free(zOld);
  return zSql;
}

/*
** Statement i in *ppStmt, prepared on first use and kept.
*/
IDEM_PRIVATE int idemStmt(IdemVtab *p, int i, sqlite3_stmt **ppStmt){
  int rc = SQLITE_OK;
  if( p->aStmt[i]==0 ){
    char *zSql = idemStmtSql(p, i);
    if( zSql==0 ) return idemVtabDbError(p, SQLITE_NOMEM);
    rc = idemPrepare(p, zSql, SQLITE_PREPARE_PERSISTENT, &p->aStmt[i]);
    sqlite3_free(zSql);
  }
  *ppStmt = p->aStmt[i];
  return rc;
}

/* Finalize every statement (before DROP, RENAME and disconnect). */
static void idemFinalizeAll(IdemVtab *p){
  int i;
  for(i=0; i<IDEM_NSTMT; i++){
    sqlite3_finalize(p->aStmt[i]);
    p->aStmt[i] = 0;
  }
}

static void idemVtabFree(IdemVtab *p){
  if( p ){
    idemFinalizeAll(p);
    idemDurableClear(&p->durable);
    idemJsonFree(p->pJson);
    idemJsonFree(p->pJsonKey);
    sqlite3_free(p->base.zErrMsg);    /* one SQLite never took (xDestroy) */
    sqlite3_free(p->zDamaged);
    sqlite3_free(p->zUnusable);
    sqlite3_free(p->aTxn);
    sqlite3_free(p->zDb);
    sqlite3_free(p->zName);
    sqlite3_free(p);
  }
}

/* ------------------------------------------------------- create/connect */


/* The schema cookies of the table's schema and of temp (where a TEMP
** trigger on the shadow table lives): a change means the damage check
** must look again. */
static int idemSchemaCookies(IdemVtab *p, sqlite3_int64 aCookie[2]){
  int i, rc = SQLITE_OK;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    sqlite3_stmt *pStmt;
    rc = idemStmt(p, i ? IDEM_STMT_TEMPCOOKIE : IDEM_STMT_COOKIE, &pStmt);
    if( rc!=SQLITE_OK ) break;
    rc = sqlite3_step(pStmt);
    aCookie[i] = sqlite3_column_int64(pStmt, 0);
    rc = rc==SQLITE_ROW ? SQLITE_OK : sqlite3_reset(pStmt);
    sqlite3_reset(pStmt);
  }
  return rc;
}

/* True if the SQL text z says ON CONFLICT, whatever the spacing, case and
** comments in between. */
static int idemHasConflictClause(const char *z){
  static const char zWant[] = "ONCONFLICT";
  int i = 0, n = 0;
  while( z[i] ){
    char c = z[i];
    if( c=='/' && z[i+1]=='*' ){
      const char *zEnd = strstr(&z[i+2], "*/");
      if( zEnd==0 ) break;
      i = (int)(zEnd - z) + 2;
      continue;
    }
    if( c=='-' && z[i+1]=='-' ){
      while( z[i] && z[i]!='\n' ) i++;
      continue;
    }
    i++;
    if( c==' ' || c=='\t' || c=='\n' || c=='\r' || c=='\f' ) continue;
    if( c>='a' && c<='z' ) c -= 'a'-'A';
    if( c==zWant[n] ){
      if( ++n==(int)sizeof(zWant)-1 ) return 1;
    }else{
      n = (c==zWant[0]);
    }
  }
  return 0;
}

/*
** The arbiter of claims is the shadow table's UNIQUE(key, member): the
** claim is its one INSERT, and changes() tells who won.  A database
** changed outside idem may have taken that away while the table still
** looks whole: the table made again without the constraint, or as a view;
** the uniqueness only in a partial index; a conflict clause (ON CONFLICT
** REPLACE or IGNORE) that turns a duplicate into a replaced or ignored row;
** a rid that is not the INTEGER PRIMARY KEY (the table's rowid); a trigger
** on the shadow table (allowed even with SQLITE_DBCONFIG_DEFENSIVE), which
** can void every claim (BEFORE INSERT ... RAISE(IGNORE)) or every record.
** Then claims are refused, with p->zDamaged saying why; reads, releases and
** DROP TABLE still work, and PRAGMA integrity_check reports it.  The check
** runs at connect and again, after a schema change, when a write
** transaction starts (idemVtabRecheck()).
** Returns SQLITE_OK or SQLITE_NOMEM.
*/
static int idemCheckShadow(IdemVtab *p){
  static const char zTail[] = "; the database was changed outside idem:"
                              " claims are refused";
  char *zShadow = sqlite3_mprintf("%s_claim", p->zName);
  sqlite3_stmt *pStmt = 0;
  const char *z;
  char *zWhy = 0;
  int rc;

  sqlite3_free(p->zDamaged);
  p->zDamaged = 0;
  if( zShadow==0 ) return SQLITE_NOMEM;
  rc = idemSchemaCookies(p, p->aCookie);
  if( rc!=SQLITE_OK ) goto done;
  rc = idemQueryRow(p->db, &pStmt, "SELECT type FROM \"%w\".sqlite_schema"
                    " WHERE name=%Q", p->zDb, zShadow);
  if( rc!=SQLITE_ROW ) goto done;
  z = (const char*)sqlite3_column_text(pStmt, 0);
  if( z && strcmp(z, "table")!=0 ){
    zWhy = sqlite3_mprintf("%s_claim is a %s, not a table", p->zName, z);
    goto done;
  }
  sqlite3_finalize(pStmt);
  /* 2 with a whole UNIQUE(key, member), 1 with only a partial one. */
  rc = idemQueryRow(p->db, &pStmt,
      "SELECT max(2 - il.partial) FROM pragma_index_list(%Q, %Q) AS il"
      " WHERE il.\"unique\" AND (SELECT group_concat(name, ',')"
      " FROM (SELECT name FROM pragma_index_info(il.name, %Q) ORDER BY seqno))"
      " = 'key,member'", zShadow, p->zDb, p->zDb);
  if( rc!=SQLITE_ROW ) goto done;
  switch( sqlite3_column_int(pStmt, 0) ){
    case 0:
      zWhy = sqlite3_mprintf("%s_claim has lost its UNIQUE(key, member),"
          " which decides who owns a call", p->zName);
      goto done;
    case 1:
      zWhy = sqlite3_mprintf("%s_claim's UNIQUE(key, member) is only a"
          " partial index, which decides nothing for the rows it leaves out",
          p->zName);
      goto done;
  }
  sqlite3_finalize(pStmt);
  rc = idemQueryRow(p->db, &pStmt, "SELECT group_concat(sql, ';') FROM"
      " \"%w\".sqlite_schema WHERE tbl_name=%Q AND type IN ('table','index')",
      p->zDb, zShadow);
  if( rc!=SQLITE_ROW ) goto done;
  z = (const char*)sqlite3_column_text(pStmt, 0);
  if( z && idemHasConflictClause(z) ){
    zWhy = sqlite3_mprintf("%s_claim carries a conflict clause (ON CONFLICT),"
        " which would replace or ignore a claim instead of refusing the"
        " duplicate", p->zName);
    goto done;
  }
  sqlite3_finalize(pStmt);
  rc = idemQueryRow(p->db, &pStmt,
      "SELECT (SELECT count(*) FROM pragma_table_info(%Q, %Q) WHERE pk>0)=1"
      " AND (SELECT pk=1 AND upper(type)='INTEGER' FROM pragma_table_info(%Q, %Q)"
      " WHERE name='rid')"
      " AND NOT EXISTS(SELECT 1 FROM pragma_index_list(%Q, %Q) WHERE origin='pk')",
      zShadow, p->zDb, zShadow, p->zDb, zShadow, p->zDb);
  if( rc!=SQLITE_ROW ) goto done;
  if( sqlite3_column_int(pStmt, 0)==0 ){
    zWhy = sqlite3_mprintf("%s_claim's rid is not its INTEGER PRIMARY KEY"
        " (the rowid)", p->zName);
    goto done;
  }
  sqlite3_finalize(pStmt);
  rc = idemQueryRow(p->db, &pStmt,
      "SELECT name FROM (SELECT name, tbl_name, type FROM \"%w\".sqlite_schema"
      " UNION ALL SELECT name, tbl_name, type FROM temp.sqlite_schema)"
      " WHERE type='trigger' AND tbl_name=%Q COLLATE NOCASE ORDER BY name",
      p->zDb, zShadow);
  if( rc==SQLITE_ROW ){
    zWhy = sqlite3_mprintf("%s_claim has a trigger (%s), which can void or"
        " change what idem writes", p->zName, sqlite3_column_text(pStmt, 0));
  }

 done:
  sqlite3_finalize(pStmt);
  if( zWhy ){
    p->zDamaged = sqlite3_mprintf("idem: %s: %s%s", p->zName, zWhy, zTail);
    if( p->zDamaged==0 ) rc = SQLITE_NOMEM;
  }else if( rc==SQLITE_ROW ){
    rc = SQLITE_NOMEM;        /* a message that could not be made */
  }
  sqlite3_free(zWhy);
  sqlite3_free(zShadow);
  /* Any other failure of the check (a truncated file) shows again, with
  ** its own message, when the table is used. */
  return rc==SQLITE_NOMEM ? SQLITE_NOMEM : SQLITE_OK;
}

/*
** At the start of each write transaction (xBegin): if the schema changed
** since the last check (a trigger created on this connection does not
** reconnect the table), check the shadow table again.  Once the
** transaction writes, it holds the write lock: no other connection can
** change the schema until it ends, so once per transaction is enough (a
** claim is not charged two PRAGMA queries; DDL that this connection runs
** inside its own write transaction is the application's, and a trigger
** that voids a write is still caught by the changed-rows check).  SQLITE_OK
** or an error with its message.
*/
IDEM_PRIVATE int idemVtabRecheck(IdemVtab *p){
  sqlite3_int64 aCookie[2];
  int rc = idemSchemaCookies(p, aCookie);
  if( rc!=SQLITE_OK ) return idemVtabDbError(p, rc);
  if( aCookie[0]!=p->aCookie[0] || aCookie[1]!=p->aCookie[1] ){
    rc = idemCheckShadow(p);
  }
  return rc;
}

/*
** What format 2 adds to format 1's <name>_claim (besides its three new
** columns): <name>_expiry, the decided calls of a table with retain in
** the order they expire (written only when such a call is decided, so
** that a claim pays nothing for it), and <name>_config, which records the
** format.  Its %w are schema and name, three times; then the format.
*/
#define IDEM_FORMAT2_SQL \
  "CREATE TABLE IF NOT EXISTS \"%w\".\"%w_expiry\"(expires TEXT NOT NULL," \
  " key BLOB NOT NULL, PRIMARY KEY(expires, key)) WITHOUT ROWID;" \
  "CREATE TABLE IF NOT EXISTS \"%w\".\"%w_config\"(k TEXT PRIMARY KEY, v)" \
  " WITHOUT ROWID;" \
  "INSERT OR REPLACE INTO \"%w\".\"%w_config\"(k, v) VALUES('format', %d)"

/*
** The format of the table's shadow tables into p->iFormat: the 'format'
** row of <name>_config, or 1 if there is no <name>_config (a table made by
** idem 1.0.0).  A format newer than this build knows is an error that
** names both, never a silent misreading.
*/
static int idemReadFormat(IdemVtab *p, char **pzErr){
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
      p->iFormat = iFormat<1 ? 0 : iFormat>IDEM_FORMAT ? IDEM_FORMAT+1 : (int)iFormat;
      rc = SQLITE_OK;
      if( iFormat>IDEM_FORMAT || iFormat<1 ){
        *pzErr = sqlite3_mprintf("idem: %s: the table has format %lld, and"
            " this build of idem (%s) reads formats 1 to %d: open it with"
            " the build of idem that made it, or a newer one",
            p->zName, iFormat, IDEM_VERSION, IDEM_FORMAT);
        rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
      }
    }else if( rc==SQLITE_ROW || rc==SQLITE_DONE ){
      *pzErr = sqlite3_mprintf("idem: %s: %s_config does not record the"
          " table's format; the database was changed outside idem",
          p->zName, p->zName);
      rc = *pzErr ? SQLITE_CORRUPT_VTAB : SQLITE_NOMEM;
    }
    sqlite3_finalize(pStmt);
  }
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("idem: %s: cannot read the table's format: %s",
                             p->zName, sqlite3_errmsg(p->db));
  }
  return rc;
}

/*
** Upgrade a format-1 table to format 2 in place, on the first write of a
** build that knows format 2: add keyargs, owner and expires to
** <name>_claim (each a NULL for the rows that are there), the expiry index
** <name>_expiry and <name>_config.  Every step is idempotent, and the format row comes
** last, so that an interrupted upgrade is finished by the next write.
** The cached statements read the old columns as NULL: those not in use are
** finalized now, the others when their cursor gives them back.
*/
static int idemUpgrade(IdemVtab *p){
  static const char *const azCol[] = { "keyargs", "owner", "expires" };
  sqlite3_str *s = sqlite3_str_new(p->db);
  char *zSql;
  int i, rc;
  for(i=0; i<3; i++){
    sqlite3_stmt *pStmt;
    rc = idemQueryRow(p->db, &pStmt, "SELECT 1 FROM"
                      " pragma_table_info('%q_claim', %Q) WHERE name='%s'",
                      p->zName, p->zDb, azCol[i]);
    sqlite3_finalize(pStmt);
    if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ){
      sqlite3_free(sqlite3_str_finish(s));
      return rc==SQLITE_NOMEM ? rc : idemVtabDbError(p, rc);
    }
    if( rc==SQLITE_DONE ){
      sqlite3_str_appendf(s, "ALTER TABLE \"%w\".\"%w_claim\" ADD COLUMN %s TEXT;",
                          p->zDb, p->zName, azCol[i]);
    }
  }
  sqlite3_str_appendf(s, IDEM_FORMAT2_SQL, p->zDb, p->zName, p->zDb, p->zName,
                      p->zDb, p->zName, IDEM_FORMAT);
  zSql = sqlite3_str_finish(s);
  if( zSql==0 ) return idemVtabDbError(p, SQLITE_NOMEM);
  rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    idemVtabError(p, "idem: %s: cannot upgrade the table from format %d to"
                  " %d: %s", p->zName, p->iFormat, IDEM_FORMAT,
                  sqlite3_errmsg(p->db));
    return rc;
  }
  p->iFormat = IDEM_FORMAT;
  for(i=0; i<IDEM_NSTMT; i++){
    if( p->aLent[i] ){
      p->aStale[i] = 1;
    }else{
      sqlite3_finalize(p->aStmt[i]);
      p->aStmt[i] = 0;
    }
  }
  return SQLITE_OK;
}

/*
** xCreate and xConnect.  argv[0] is the module name, argv[1] the schema,
** argv[2] the table name, argv[3...] the options.
*/
static int idemInit(
  sqlite3 *db, int argc, const char *const*argv,
  sqlite3_vtab **ppVtab, char **pzErr, int bCreate
){
  IdemVtab *p;
  int rc = SQLITE_OK;
  int i;

  p = (IdemVtab*)sqlite3_malloc(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->zDb = sqlite3_mprintf("%s", argv[1]);
  p->zName = sqlite3_mprintf("%s", argv[2]);
  if( p->zDb==0 || p->zName==0 ){ rc = SQLITE_NOMEM; goto fail; }
  for(i=3; i<argc; i++){
    char *zErr = 0;
    rc = idemOptionParse(&p->opt, argv[i], &zErr);
    if( rc!=SQLITE_OK && !bCreate && zErr ){
      /* A table made by another build of idem, with an option this one
      ** does not know: connect anyway, so that DROP TABLE works, and refuse
      ** everything else (p->zUnusable). */
      p->zUnusable = sqlite3_mprintf("idem: %s: this build of idem cannot"
          " use the table (%s); it was made by another build: use that"
          " build, or DROP TABLE %s", p->zName, zErr + (strncmp(zErr,
          "idem: ", 6)==0 ? 6 : 0), p->zName);
      sqlite3_free(zErr);
      if( p->zUnusable==0 ){ rc = SQLITE_NOMEM; goto fail; }
      rc = SQLITE_OK;
      break;
    }
    *pzErr = zErr;
    if( rc!=SQLITE_OK ) goto fail;
  }
  if( sqlite3_file_control(db, p->zDb, SQLITE_FCNTL_VFS_POINTER, &p->pVfs)
      !=SQLITE_OK || p->pVfs==0 ){
    p->pVfs = sqlite3_vfs_find(0);
  }

  if( bCreate ){
    char *zSql = sqlite3_mprintf(
      "CREATE TABLE \"%w\".\"%w_claim\"("
        "rid INTEGER PRIMARY KEY, key BLOB NOT NULL, member INTEGER NOT NULL,"
        " who, conv, tool, args TEXT, kind TEXT, status TEXT, id, result,"
        " note TEXT, created TEXT NOT NULL, updated TEXT,"
        " keyargs TEXT, owner TEXT, expires TEXT,"
        " UNIQUE(key, member), UNIQUE(created, rid));"
      IDEM_FORMAT2_SQL,
      p->zDb, p->zName, p->zDb, p->zName, p->zDb, p->zName,
      p->zDb, p->zName, IDEM_FORMAT);
    p->iFormat = IDEM_FORMAT;
    if( zSql==0 ){ rc = SQLITE_NOMEM; goto fail; }
    rc = sqlite3_exec(db, zSql, 0, 0, 0);
    sqlite3_free(zSql);
    if( rc!=SQLITE_OK ){
      *pzErr = sqlite3_mprintf("idem: cannot create %s_claim: %s",
                               p->zName, sqlite3_errmsg(db));
      goto fail;
    }
  }

  rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(key TEXT, member INTEGER, who, conv, tool, args TEXT,"
      " kind TEXT, status TEXT, id, result, note TEXT, created TEXT,"
      " updated TEXT, reply TEXT HIDDEN, reconcile TEXT HIDDEN,"
      " keyargs TEXT HIDDEN, owner TEXT HIDDEN, expires TEXT HIDDEN,"
      " stale INTEGER HIDDEN)");
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("idem: %s", sqlite3_errmsg(db));
    goto fail;
  }
  sqlite3_vtab_config(db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  if( !bCreate && (rc = idemCheckShadow(p))!=SQLITE_OK ) goto fail;
  if( !bCreate && (rc = idemReadFormat(p, pzErr))!=SQLITE_OK ) goto fail;
  *ppVtab = &p->base;
  return SQLITE_OK;

 fail:
  idemVtabFree(p);
  return rc;
}

static int idemCreate(sqlite3 *db, void *pAux, int argc,
                      const char *const*argv, sqlite3_vtab **ppVtab,
                      char **pzErr){
  (void)pAux;
  return idemInit(db, argc, argv, ppVtab, pzErr, 1);
}

static int idemConnect(sqlite3 *db, void *pAux, int argc,
                       const char *const*argv, sqlite3_vtab **ppVtab,
                       char **pzErr){
  (void)pAux;
  return idemInit(db, argc, argv, ppVtab, pzErr, 0);
}

static int idemDisconnect(sqlite3_vtab *pVtab){
  idemVtabFree((IdemVtab*)pVtab);
  return SQLITE_OK;
}

/*
** xDestroy: drop the shadow table, whatever it has become.  SQLite does
** not pass xDestroy's message on (a failure reads "SQL logic error"), so
** it must not fail on a damaged schema: a view in the shadow table's place
** is dropped as a view; anything else of that name (an index, a trigger)
** is not the shadow table and is left alone.
*/
static int idemDestroy(sqlite3_vtab *pVtab){
  IdemVtab *p = (IdemVtab*)pVtab;
  sqlite3_stmt *pStmt;
  int rc, bView = 0;
  char *zSql;
  idemFinalizeAll(p);
  rc = idemQueryRow(p->db, &pStmt, "SELECT type='view' FROM"
                    " \"%w\".sqlite_schema WHERE name=%Q||'_claim'"
                    " AND type IN ('table','view')", p->zDb, p->zName);
  if( rc==SQLITE_ROW ) bView = sqlite3_column_int(pStmt, 0);
  sqlite3_finalize(pStmt);
  if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ) return rc;
  {
    /* The claim table, or the view that replaced it (a damaged database),
    ** then the tables of format 2, if they are there. */
    sqlite3_str *pSql = sqlite3_str_new(p->db);
    if( rc==SQLITE_ROW ){
      sqlite3_str_appendf(pSql, "DROP %s \"%w\".\"%w_claim\";",
                          bView ? "VIEW" : "TABLE", p->zDb, p->zName);
    }
    sqlite3_str_appendf(pSql, "DROP TABLE IF EXISTS \"%w\".\"%w_expiry\";"
                        "DROP TABLE IF EXISTS \"%w\".\"%w_config\"",
                        p->zDb, p->zName, p->zDb, p->zName);
    zSql = sqlite3_str_finish(pSql);
  }
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ){
    idemVtabFree(p);
  }else{
    idemVtabError(p, "idem: cannot drop %s_claim: %s", p->zName,
                  sqlite3_errmsg(p->db));
  }
  return rc;
}

static int idemRename(sqlite3_vtab *pVtab, const char *zNew){
  IdemVtab *p = (IdemVtab*)pVtab;
  char *zSql, *zName;
  int rc;
  idemFinalizeAll(p);
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
  if( zSql==0 || zName==0 ){
    sqlite3_free(zSql);
    sqlite3_free(zName);
    return SQLITE_NOMEM;
  }
  rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ){
    sqlite3_free(p->zName);
    p->zName = zName;
  }else{
    sqlite3_free(zName);
    idemVtabError(p, "idem: cannot rename %s_claim: %s", p->zName,
                  sqlite3_errmsg(p->db));
  }
  return rc;
}

/* ---------------------------------------------------------- transaction */

/*
** The local claims made in the open transaction, so that xSync can refuse
** to commit one that is still pending (doc/contract.md §4).  Each carries
** the savepoint level it was made at, so that a ROLLBACK TO (a user's
** savepoint, or a statement's own) forgets the claims it undid.  SQLite
** numbers savepoints from 0, statement savepoints included:
** xSavepoint(N) opens N, xRelease(N) and xRollbackTo(N) end or rewind
** every savepoint from N inward.
*/
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
}

static void idemTxnClear(IdemVtab *p){
  p->nTxn = 0;
  p->iTxnLevel = 0;
}

static int idemBegin(sqlite3_vtab *pVtab){
  IdemVtab *p = (IdemVtab*)pVtab;
  idemTxnClear(p);
  /* The durability check (idem_durable.c) keeps its verdict for the
  ** length of a transaction: read the settings again. */
  idemDurableBegin(&p->durable);
  return idemVtabRecheck(p);
}

static int idemSync(sqlite3_vtab *pVtab){
  return idemClaimSync((IdemVtab*)pVtab);
}

static int idemCommit(sqlite3_vtab *pVtab){
  idemTxnClear((IdemVtab*)pVtab);
  return SQLITE_OK;
}

static int idemRollback(sqlite3_vtab *pVtab){
  idemTxnClear((IdemVtab*)pVtab);
  return SQLITE_OK;
}

static int idemSavepointSp(sqlite3_vtab *pVtab, int iSavepoint){
  ((IdemVtab*)pVtab)->iTxnLevel = iSavepoint+1;
  return SQLITE_OK;
}

static int idemReleaseSp(sqlite3_vtab *pVtab, int iSavepoint){
  IdemVtab *p = (IdemVtab*)pVtab;
  int i;
  /* What was made inside the savepoints released now belongs to the one
  ** around them. */
  for(i=0; i<p->nTxn; i++){
    if( p->aTxn[i].iLevel>iSavepoint ) p->aTxn[i].iLevel = iSavepoint;
  }
  p->iTxnLevel = iSavepoint;
  return SQLITE_OK;
}

static int idemRollbackToSp(sqlite3_vtab *pVtab, int iSavepoint){
  IdemVtab *p = (IdemVtab*)pVtab;
  int i, n = 0;
  for(i=0; i<p->nTxn; i++){
    if( p->aTxn[i].iLevel<=iSavepoint ) p->aTxn[n++] = p->aTxn[i];
  }
  p->nTxn = n;
  p->iTxnLevel = iSavepoint+1;          /* savepoint iSavepoint stays open */
  return SQLITE_OK;
}

/* The shadow tables' suffixes. */
static int idemShadowName(const char *zName){
  return sqlite3_stricmp(zName, "claim")==0
      || sqlite3_stricmp(zName, "expiry")==0
      || sqlite3_stricmp(zName, "config")==0;
}

/* ------------------------------------------------------------- queries */

/*
** Plans: key = ? is a seek of the call's group (key = ? AND member = ? of
** one row); a created range uses the created index; anything else scans.
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
*/
static int idemBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int iKey = -1, iMember = -1, iLo = -1, iHi = -1, iEq = -1;
  int eLo = 0, eHi = 0;
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
      pInfo->aConstraintUsage[iLo].omit = 1;
    }
    if( iHi>=0 ){
      if( iHi!=iLo ){
        pInfo->aConstraintUsage[iHi].argvIndex = iLo>=0 ? 2 : 1;
        pInfo->aConstraintUsage[iHi].omit = 1;
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
  return SQLITE_OK;
}

static int idemOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  IdemCursor *pCur;
  (void)pVtab;
  pCur = (IdemCursor*)sqlite3_malloc(sizeof(*pCur));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->iLent = -1;
  pCur->bEof = 1;
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

/* Give the cursor's statements back (or finalize private ones). */
static void idemCursorReset(IdemCursor *pCur){
  IdemVtab *p = (IdemVtab*)pCur->base.pVtab;
  if( pCur->pStmt ){
    if( pCur->iLent>=0 ){
      sqlite3_reset(pCur->pStmt);
      sqlite3_clear_bindings(pCur->pStmt);
      p->aLent[pCur->iLent] = 0;
      if( p->aStale[pCur->iLent] ){     /* prepared before an upgrade */
        sqlite3_finalize(pCur->pStmt);
        p->aStmt[pCur->iLent] = 0;
        p->aStale[pCur->iLent] = 0;
      }
    }else{
      sqlite3_finalize(pCur->pStmt);
    }
    pCur->pStmt = 0;
    pCur->iLent = -1;
  }
  if( pCur->pMain ){
    if( pCur->bMainLent ){
      sqlite3_reset(pCur->pMain);
      p->aLent[IDEM_STMT_Q_MAIN] = 0;
      pCur->bMainLent = 0;
      if( p->aStale[IDEM_STMT_Q_MAIN] ){
        sqlite3_finalize(pCur->pMain);
        p->aStmt[IDEM_STMT_Q_MAIN] = 0;
        p->aStale[IDEM_STMT_Q_MAIN] = 0;
      }
    }else{
      sqlite3_finalize(pCur->pMain);
    }
    pCur->pMain = 0;
  }
  sqlite3_free(pCur->zReply);
  pCur->zReply = 0;
  pCur->bEof = 1;
}

static int idemClose(sqlite3_vtab_cursor *pCursor){
  IdemCursor *pCur = (IdemCursor*)pCursor;
  idemCursorReset(pCur);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/*
** Point pCur->pMain at the main row of the current member row's call
** (reused while consecutive members share a key).  A member without its
** call (only in a damaged database) shows NULLs.
*/
static int idemCursorLoadMain(IdemCursor *pCur){
  IdemVtab *p = (IdemVtab*)pCur->base.pVtab;
  const void *aKey = sqlite3_column_blob(pCur->pStmt, IDEM_Q_KEY);
  int nKey = sqlite3_column_bytes(pCur->pStmt, IDEM_Q_KEY);
  int rc;
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
    sqlite3_stmt *pStmt;
    rc = idemStmt(p, IDEM_STMT_Q_MAIN, &pStmt);
    if( rc!=SQLITE_OK ) return rc;
    if( !p->aLent[IDEM_STMT_Q_MAIN] ){
      p->aLent[IDEM_STMT_Q_MAIN] = 1;
      pCur->bMainLent = 1;
      pCur->pMain = pStmt;
    }else{
      rc = idemPrepare(p, sqlite3_sql(pStmt), 0, &pCur->pMain);
      if( rc!=SQLITE_OK ) return rc;
    }
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
  if( sqlite3_column_int64(pCur->pStmt, IDEM_Q_MEMBER)!=0 ){
    if( pCur->pMain==0 || !sqlite3_stmt_busy(pCur->pMain)
     || sqlite3_data_count(pCur->pMain)==0 ){
      return 0;
    }
    zExp = (const char*)sqlite3_column_text(pCur->pMain, IDEM_M_EXPIRES);
  }else{
    zExp = (const char*)sqlite3_column_text(pCur->pStmt, IDEM_Q_EXPIRES);
  }
  return zExp!=0 && strcmp(zExp, pCur->zNow)<=0;
}

static int idemNext(sqlite3_vtab_cursor *pCursor){
  IdemCursor *pCur = (IdemCursor*)pCursor;
  int rc;
  sqlite3_free(pCur->zReply);
  pCur->zReply = 0;
  while( (rc = sqlite3_step(pCur->pStmt))==SQLITE_ROW ){
    pCur->bEof = 0;
    if( sqlite3_column_int64(pCur->pStmt, IDEM_Q_MEMBER)!=0 ){
      rc = idemCursorLoadMain(pCur);
      if( rc!=SQLITE_OK ) return rc;    /* with its message */
    }
    if( !pCur->bRetain || !idemCursorExpired(pCur) ) return SQLITE_OK;
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

static int idemFilter(
  sqlite3_vtab_cursor *pCursor, int idxNum, const char *idxStr,
  int argc, sqlite3_value **argv
){
  IdemCursor *pCur = (IdemCursor*)pCursor;
  IdemVtab *p = (IdemVtab*)pCursor->pVtab;
  unsigned char *aKey = pCur->aKey;
  sqlite3_stmt *pStmt;
  sqlite3_int64 iMember = 0;
  int iStmt, rc;
  int bLight = (idxNum & IDEM_PLAN_LIGHT)!=0;
  (void)idxStr; (void)argc;

  idxNum &= ~IDEM_PLAN_LIGHT;
  idemCursorReset(pCur);
  pCur->bRetain = p->opt.iRetainMs>0;
  if( pCur->bRetain || p->opt.iStaleAfterMs>0 ){
    sqlite3_int64 iNow = idemNowMs(p->pVfs);
    idemFormatTime(iNow, pCur->zNow);
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
    if( bLight ){
      iStmt = idxNum==IDEM_PLAN_KEY ? IDEM_STMT_Q_KEY_L : IDEM_STMT_Q_KEYMEMBER_L;
    }else{
      iStmt = idxNum==IDEM_PLAN_KEY ? IDEM_STMT_Q_KEY : IDEM_STMT_Q_KEYMEMBER;
    }
  }else if( idxNum>=IDEM_PLAN_CREATED ){
    iStmt = IDEM_STMT_Q_CREATED + (idxNum - IDEM_PLAN_CREATED);
  }else{
    iStmt = IDEM_STMT_Q_SCAN;
  }

  rc = idemStmt(p, iStmt, &pStmt);
  if( rc!=SQLITE_OK ) return rc;
  if( !p->aLent[iStmt] ){
    pCur->pStmt = pStmt;
    pCur->iLent = iStmt;
    p->aLent[iStmt] = 1;
  }else{
    /* Another cursor has it: prepare a private copy. */
    rc = idemPrepare(p, sqlite3_sql(pStmt), 0, &pCur->pStmt);
    if( rc!=SQLITE_OK ) return rc;
  }

  if( idxNum==IDEM_PLAN_KEY || idxNum==IDEM_PLAN_KEYMEMBER ){
    rc = sqlite3_bind_blob(pCur->pStmt, 1, aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
    if( rc==SQLITE_OK && idxNum==IDEM_PLAN_KEYMEMBER ){
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
  }
  if( rc!=SQLITE_OK ){
    idemVtabDbError(p, rc);
    idemCursorReset(pCur);
    return rc;
  }
  return idemNext(pCursor);
}

static int idemEof(sqlite3_vtab_cursor *pCursor){
  return ((IdemCursor*)pCursor)->bEof;
}

static int idemRowid(sqlite3_vtab_cursor *pCursor, sqlite3_int64 *pRowid){
  IdemCursor *pCur = (IdemCursor*)pCursor;
  *pRowid = sqlite3_column_int64(pCur->pStmt, IDEM_Q_RID);
  return SQLITE_OK;
}

/*
** The value of column iCol (a virtual-table column number) of the current
** row: from the query itself, or, for the call's columns of a member row,
** from the call's main row.
*/
static sqlite3_value *idemCursorValue(IdemCursor *pCur, int iCol){
  int bMember = sqlite3_column_int64(pCur->pStmt, IDEM_Q_MEMBER)!=0;
  if( bMember ){
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
  }
  return sqlite3_column_value(pCur->pStmt, IDEM_QCOL(iCol));
}

static int idemColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx, int iCol){
  IdemCursor *pCur = (IdemCursor*)pCursor;
  IdemVtab *p = (IdemVtab*)pCursor->pVtab;
  sqlite3_value *pVal;

  /* An UPDATE asks for the columns it does not change: leave them unset,
  ** so that xUpdate sees sqlite3_value_nochange(). */
  if( sqlite3_vtab_nochange(ctx) ) return SQLITE_OK;

  switch( iCol ){
    case IDEM_COL_KEY: {
      char zHex[IDEM_KEY_HEX+1];
      const unsigned char *a = sqlite3_column_blob(pCur->pStmt, IDEM_Q_KEY);
      if( a && sqlite3_column_bytes(pCur->pStmt, IDEM_Q_KEY)==IDEM_KEY_BYTES ){
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
            &pCur->zReply);
        if( rc ) return rc;
      }
      sqlite3_result_text(ctx, pCur->zReply, -1, SQLITE_TRANSIENT);
      return SQLITE_OK;
    }
    case IDEM_COL_RECONCILE:
      return SQLITE_OK;        /* a command column: reads as NULL */
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
  }
  pVal = idemCursorValue(pCur, iCol);
  if( pVal ) sqlite3_result_value(ctx, pVal);
  return SQLITE_OK;
}

/*
** xUpdate: the rowid is idem's; everything else is a rule of the claim
** (idem_claim.c).
*/
static int idemUpdate(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                      sqlite3_int64 *pRowid){
  IdemVtab *p = (IdemVtab*)pVtab;
  sqlite3_value **aCol = &argv[2];

  if( p->zUnusable ){
    idemVtabError(p, "%s", p->zUnusable);
    return SQLITE_ERROR;
  }
  if( p->iFormat<IDEM_FORMAT ){
    int rc = idemUpgrade(p);
    if( rc!=SQLITE_OK ) return rc;
  }
  if( argc==1 ){
    return idemClaimDelete(p, sqlite3_value_int64(argv[0]));
  }
  if( sqlite3_value_type(argv[0])==SQLITE_NULL ){
    if( sqlite3_value_type(argv[1])!=SQLITE_NULL ){
      idemVtabError(p, "idem: %s: the rowid is assigned by idem; leave it"
                    " out of the INSERT", p->zName);
      return SQLITE_ERROR;
    }
    return idemClaimInsert(p, aCol, pRowid);
  }
  if( sqlite3_value_int64(argv[0])!=sqlite3_value_int64(argv[1]) ){
    idemVtabError(p, "idem: %s: the rowid cannot be changed; leave it out"
                  " of the UPDATE", p->zName);
    return SQLITE_ERROR;
  }
  return idemClaimUpdate(p, sqlite3_value_int64(argv[0]), aCol);
}

#if SQLITE_VERSION_NUMBER>=3044000
/*
** xIntegrity: PRAGMA integrity_check / quick_check look inside the shadow
** table for what idem itself would never write.
*/
static int idemIntegrity(sqlite3_vtab *pVtab, const char *zSchema,
                         const char *zTabName, int isQuick, char **pzErr){
  static const struct { const char *zWhere; const char *zWhat; } aCheck[] = {
    { "typeof(key)!='blob' OR length(key)!=16", "keys that are not 16-byte blobs" },
    { "member<0 OR typeof(member)!='integer'", "bad member numbers" },
    { "member=0 AND (who IS NULL OR conv IS NULL OR tool IS NULL OR args IS NULL)",
      "calls without their identity" },
    { "member=0 AND (kind IS NULL OR kind NOT IN ('local','external'))", "bad kinds" },
    { "member=0 AND (status IS NULL OR status NOT IN"
      " ('pending','done','failed','unknown'))", "bad statuses" },
    { "member=0 AND status='unknown' AND kind!='external'", "local calls marked unknown" },
    { "member>0 AND NOT EXISTS (SELECT 1 FROM \"%w\".\"%w_claim\" c"
      " WHERE c.key=x.key AND c.member=0)", "members without their call" },
  };
  IdemVtab *p = (IdemVtab*)pVtab;
  int i, rc;
  (void)isQuick; (void)zTabName;
  if( p->zUnusable || p->zDamaged ){
    *pzErr = sqlite3_mprintf("%s", p->zUnusable ? p->zUnusable : p->zDamaged);
    return *pzErr ? SQLITE_OK : SQLITE_NOMEM;
  }
  for(i=0; i<(int)(sizeof(aCheck)/sizeof(aCheck[0])); i++){
    sqlite3_stmt *pStmt;
    char *zWhere = sqlite3_mprintf(aCheck[i].zWhere, zSchema, p->zName);
    if( zWhere==0 ) return SQLITE_NOMEM;
    rc = idemQueryRow(p->db, &pStmt, "SELECT count(*) FROM \"%w\".\"%w_claim\""
                      " x WHERE %s", zSchema, p->zName, zWhere);
    sqlite3_free(zWhere);
    if( rc==SQLITE_ROW && sqlite3_column_int64(pStmt, 0)>0 ){
      *pzErr = sqlite3_mprintf("idem: %s: %lld %s in %s_claim", p->zName,
                               sqlite3_column_int64(pStmt, 0),
                               aCheck[i].zWhat, p->zName);
      sqlite3_finalize(pStmt);
      return *pzErr ? SQLITE_OK : SQLITE_NOMEM;
    }
    sqlite3_finalize(pStmt);
    if( rc==SQLITE_NOMEM ) return rc;
    if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ){
      /* The check itself failed (no shadow table, a missing column): that
      ** is the finding.  An error returned from xIntegrity would fail the
      ** whole PRAGMA with a bare "SQL logic error". */
      *pzErr = idemVtabDbMessage(p, rc);
      return *pzErr ? SQLITE_OK : SQLITE_NOMEM;
    }
  }
  return SQLITE_OK;
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
  idemRollback,         /* xRollback: pending (idemClaimSync()) */
  0,                    /* xFindFunction */
  idemRename,           /* xRename: rename the shadow table */
  idemSavepointSp,      /* xSavepoint */
  idemReleaseSp,        /* xRelease */
  idemRollbackToSp,     /* xRollbackTo */
  idemShadowName,       /* xShadowName: <name>_claim */
#if SQLITE_VERSION_NUMBER>=3044000
  idemIntegrity,        /* xIntegrity */
#endif
};

IDEM_PRIVATE int idemVtabRegister(sqlite3 *db){
  return sqlite3_create_module(db, "idem", &idemModule, 0);
}

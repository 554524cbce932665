/*
** idem_vtab.c -- the claim and replay virtual table (SPEC.md §4, §5, §7).
**
**   CREATE VIRTUAL TABLE calls USING idem;                 -- or
**   CREATE VIRTUAL TABLE calls USING idem(local_failure=keep);
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
** note, created, updated, and the hidden reply and reconcile.
**
** STORAGE.  One real shadow table, <name>_claim, in the same schema, so
** that a claim commits and rolls back with the caller's own transaction and
** the database's write lock arbitrates between connections and processes:
**
**   rid      INTEGER PRIMARY KEY     the virtual table's rowid
**   key      BLOB                    16 bytes (the 32 hex digits, packed)
**   member   INTEGER                 0: the call itself; 1, 2, ...: members
**   who conv tool args kind status note updated   -- main rows only
**   id result created                             -- every row
**   UNIQUE(key, member)              the arbiter, and the replay's seek
**   UNIQUE(created, rid)             purge by age (an ordinary index; the
**                                    UNIQUE form keeps its name tied to
**                                    the table, so RENAME carries it)
**
** Member rows keep only their own id, result and created: they show their
** call's who, conv, tool, args, kind, status, note and updated.
**
** THE CLAIM.  xUpdate validates everything first and then makes exactly
** one write, the INSERT into <name>_claim, whose UNIQUE(key, member) is
** the arbiter.  A single-row INSERT has no statement journal, so nothing
** may be written before a write that can fail.  On a duplicate the stored
** identity (who, conv, tool, args) is compared: the same call is a
** SQLITE_CONSTRAINT (which OR IGNORE turns into "0 rows changed"); another
** call under the same key is SQLITE_ERROR, never ignorable, and tells
** nothing of the call that holds the key.
**
** TRUST.  The module is SQLITE_VTAB_DIRECTONLY: it writes claims and
** releases them, so it must not be reachable from triggers or views that
** arrive with a database file; applications and operators use it directly.
** SQLITE_VTAB_CONSTRAINT_SUPPORT makes OR IGNORE/OR FAIL/OR ROLLBACK work
** (without it every constraint error is an ABORT).
*/

/* Column numbers of the virtual table. */
#define IDEM_COL_KEY       0
#define IDEM_COL_MEMBER    1
#define IDEM_COL_WHO       2
#define IDEM_COL_CONV      3
#define IDEM_COL_TOOL      4
#define IDEM_COL_ARGS      5
#define IDEM_COL_KIND      6
#define IDEM_COL_STATUS    7
#define IDEM_COL_ID        8
#define IDEM_COL_RESULT    9
#define IDEM_COL_NOTE     10
#define IDEM_COL_CREATED  11
#define IDEM_COL_UPDATED  12
#define IDEM_COL_REPLY    13
#define IDEM_COL_RECONCILE 14
#define IDEM_NCOL         15

static const char *const azIdemCol[IDEM_NCOL] = {
  "key", "member", "who", "conv", "tool", "args", "kind", "status", "id",
  "result", "note", "created", "updated", "reply", "reconcile"
};

/*
** The note recorded on an external call that failed (SPEC §5, §6).
*/
#define IDEM_UNKNOWN_NOTE \
  "the request may already have reached the target system; the target's " \
  "records decide the outcome; it is not retried. idem stops this side " \
  "from sending twice; only a target that honours the Idempotency-Key " \
  "header can refuse a duplicate"

#define IDEM_PENDING_NOTE \
  "the call is in progress, or its process was interrupted; it is not " \
  "executed again"

/*
** Prepared statements, each prepared on first use and kept
** (SQLITE_PREPARE_PERSISTENT) until the table is disconnected, dropped or
** renamed.  The query statements are lent to one cursor at a time; a
** second cursor prepares its own.
*/
#define IDEM_STMT_INSERT      0   /* claim or member row */
#define IDEM_STMT_MAIN        1   /* identity and status of a call by key */
#define IDEM_STMT_BYRID       2   /* one row by rid */
#define IDEM_STMT_RECORD      3   /* set status, id, result, note, updated */
#define IDEM_STMT_RELEASE     4   /* delete a call's group */
#define IDEM_STMT_Q_SCAN      5   /* query: every row */
#define IDEM_STMT_Q_KEY       6   /* query: one call's group */
#define IDEM_STMT_Q_KEYMEMBER 7   /* query: one row by key and member */
#define IDEM_STMT_Q_MAIN      8   /* query: a member row's call */
#define IDEM_STMT_Q_CREATED   9   /* query: created range, 9 forms (9..17) */
#define IDEM_STMT_Q_KEY_L    18   /* IDEM_STMT_Q_KEY without the identity */
#define IDEM_STMT_Q_KEYMEMBER_L 19 /* IDEM_STMT_Q_KEYMEMBER without it */
#define IDEM_STMT_CALLOF     20   /* a row's key and its call's status */
#define IDEM_NSTMT           21

/* Query plans (idxNum).  A created range adds 3*lower+upper, where lower
** is 0 (none), 1 (>) or 2 (>=) and upper 0 (none), 1 (<) or 2 (<=). */
#define IDEM_PLAN_SCAN        0
#define IDEM_PLAN_KEY         1
#define IDEM_PLAN_KEYMEMBER   2
#define IDEM_PLAN_CREATED     3
/* Added to a key plan when the query reads none of who, conv, tool, args
** (a replay of status, id, result or reply): the inner query then selects
** NULL in their place instead of copying the call's identity out of every
** row it visits. */
#define IDEM_PLAN_LIGHT      64
#define IDEM_IDENTITY_COLS \
  ((sqlite3_uint64)1<<IDEM_COL_WHO | (sqlite3_uint64)1<<IDEM_COL_CONV \
   | (sqlite3_uint64)1<<IDEM_COL_TOOL | (sqlite3_uint64)1<<IDEM_COL_ARGS)

typedef struct IdemVtab IdemVtab;
typedef struct IdemCursor IdemCursor;

struct IdemVtab {
  sqlite3_vtab base;          /* Base class.  Must be first */
  sqlite3 *db;                /* The database connection */
  char *zDb;                  /* Schema: "main", "temp", or attached */
  char *zName;                /* Name of the virtual table */
  int bKeepLocalFailure;      /* local_failure=keep */
  sqlite3_vfs *pVfs;          /* For the clock */
  sqlite3_stmt *aStmt[IDEM_NSTMT];  /* Prepared on first use */
  unsigned char aLent[IDEM_NSTMT];  /* True while a cursor uses aStmt[i] */
  IdemJson *pJson;            /* Canonicalizer for args and reply */
  int rcStmt;                 /* Why the last idemStmt() returned NULL */
  char *zDamaged;             /* Why claims are refused, or NULL */
};

struct IdemCursor {
  sqlite3_vtab_cursor base;   /* Base class.  Must be first */
  sqlite3_stmt *pStmt;        /* The query being stepped */
  int iLent;                  /* aStmt[] slot pStmt came from, or -1 */
  int bEof;                   /* True at end of results */
  sqlite3_stmt *pMain;        /* The main row of a member row's call */
  int bMainLent;              /* pMain is aStmt[IDEM_STMT_Q_MAIN] */
  char *zReply;               /* Cached reply of the current row */
  unsigned char aKey[IDEM_KEY_BYTES];  /* The key pStmt is bound to */
};

/* Columns of the query statements (IDEM_STMT_Q_*) and of IDEM_STMT_BYRID. */
#define IDEM_QCOLS \
  "rid, key, member, who, conv, tool, args, kind, status, id, result, " \
  "note, created, updated"
/* The same, with NULL for who, conv, tool, args (IDEM_PLAN_LIGHT) */
#define IDEM_QCOLS_LIGHT \
  "rid, key, member, NULL, NULL, NULL, NULL, kind, status, id, result, " \
  "note, created, updated"
#define IDEM_Q_RID     0
#define IDEM_Q_KEY     1
#define IDEM_Q_MEMBER  2
/* columns 3..13 are virtual columns 2..12: q = c+1 */

/* Columns of IDEM_STMT_MAIN: the call as members show it. */
#define IDEM_MCOLS "who, conv, tool, args, kind, status, note, updated, key"
#define IDEM_M_KEY 8

/*
** Set the error message of the virtual table (printf-style).
*/
static void idemVtabError(IdemVtab *p, const char *zFmt, ...){
  va_list ap;
  sqlite3_free(p->base.zErrMsg);
  va_start(ap, zFmt);
  p->base.zErrMsg = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
}

/*
** The SQL of each statement, by IDEM_STMT_* number, with %w for the schema
** and the table name, in that order (twice where the table is named twice).  The created-range forms (NULL here) are
** made in idemStmt() from their lower and upper bounds.
*/
#define IDEM_FROM " FROM \"%w\".\"%w_claim\""
static const char *const azIdemSql[IDEM_NSTMT] = {
  /* INSERT */     "INSERT INTO \"%w\".\"%w_claim\"(key, member, who, conv, tool,"
                   " args, kind, status, id, result, note, created, updated)"
                   " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?12)",
  /* MAIN */       "SELECT " IDEM_MCOLS IDEM_FROM " WHERE key=?1 AND member=0",
  /* BYRID */      "SELECT " IDEM_QCOLS IDEM_FROM " WHERE rid=?1",
  /* RECORD */     "UPDATE \"%w\".\"%w_claim\" SET status=?2, id=?3, result=?4,"
                   " note=?5, updated=?6 WHERE rid=?1",
  /* RELEASE */    "DELETE" IDEM_FROM " WHERE key=?1",
  /* Q_SCAN */     "SELECT " IDEM_QCOLS IDEM_FROM " ORDER BY rid",
  /* Q_KEY */      "SELECT " IDEM_QCOLS IDEM_FROM " WHERE key=?1 ORDER BY member",
  /* Q_KEYMEMBER */"SELECT " IDEM_QCOLS IDEM_FROM " WHERE key=?1 AND member=?2",
  /* Q_MAIN */     "SELECT " IDEM_MCOLS IDEM_FROM " WHERE key=?1 AND member=0",
  0, 0, 0, 0, 0, 0, 0, 0, 0,        /* Q_CREATED: the nine range forms */
  /* Q_KEY_L */    "SELECT " IDEM_QCOLS_LIGHT IDEM_FROM " WHERE key=?1 ORDER BY member",
  /* Q_KEYMEMBER_L */
                   "SELECT " IDEM_QCOLS_LIGHT IDEM_FROM " WHERE key=?1 AND member=?2",
  /* CALLOF */     "SELECT r.key, c.status FROM \"%w\".\"%w_claim\" AS r"
                   " LEFT JOIN \"%w\".\"%w_claim\" AS c"
                   " ON c.key=r.key AND c.member=0 WHERE r.rid=?1",
};

/*
** Return statement i, preparing it if need be.  NULL on error, with the
** message in the vtab and the error code in p->rcStmt.
*/
static sqlite3_stmt *idemStmt(IdemVtab *p, int i){
  static const char *const azLower[] = { "", " AND created>?1", " AND created>=?1" };
  static const char *const azUpper[] = { "", " AND created<?2", " AND created<=?2" };
  char *zSql;
  int rc;
  if( p->aStmt[i] ) return p->aStmt[i];
  if( azIdemSql[i] ){
    zSql = sqlite3_mprintf(azIdemSql[i], p->zDb, p->zName, p->zDb, p->zName);
  }else{
    int iRange = i - IDEM_STMT_Q_CREATED;
    zSql = sqlite3_mprintf("SELECT " IDEM_QCOLS IDEM_FROM " WHERE 1%s%s"
        " ORDER BY created, rid", p->zDb, p->zName,
        azLower[iRange/3], azUpper[iRange%3]);
  }
  if( zSql==0 ){
    rc = SQLITE_NOMEM;
  }else{
    rc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_PERSISTENT,
                            &p->aStmt[i], 0);
    sqlite3_free(zSql);
  }
  if( rc!=SQLITE_OK ){
    idemVtabError(p, "idem: %s: %s", p->zName,
                  rc==SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(p->db));
    p->rcStmt = rc;
    return 0;
  }
  return p->aStmt[i];
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
    idemJsonFree(p->pJson);
    sqlite3_free(p->base.zErrMsg);    /* one SQLite never took (xDestroy) */
    sqlite3_free(p->zDamaged);
    sqlite3_free(p->zDb);
    sqlite3_free(p->zName);
    sqlite3_free(p);
  }
}

/* ------------------------------------------------------------------ time */

/* The n decimal digits of v (0 <= v < 10^n), leading zeros included. */
static void idemPutDigits(char *z, int v, int n){
  while( n-- > 0 ){
    z[n] = (char)('0' + v%10);
    v /= 10;
  }
}

/*
** Format a Unix time in milliseconds as 'YYYY-MM-DD HH:MM:SS.SSS' (UTC),
** the form of strftime('%Y-%m-%d %H:%M:%f').  zOut: 24 bytes.  The civil
** date comes from the day count in 400-year eras of 146097 days whose years
** start on March 1st, so that leap days fall at a year's end.
*/
static void idemFormatTime(sqlite3_int64 ms, char zOut[24]){
  sqlite3_int64 z, era, doe, yoe, doy, mp, y, m, d, sod;
  if( ms<0 ) ms = 0;
  if( ms>253402300799999 ) ms = 253402300799999;  /* 9999-12-31 23:59:59.999 */
  z = ms / 86400000 + 719468;          /* days since 0000-03-01 */
  sod = ms % 86400000;                 /* ms since midnight */
  era = z / 146097;
  doe = z - era*146097;                                   /* [0, 146096] */
  yoe = (doe - doe/1460 + doe/36524 - doe/146096) / 365;  /* [0, 399] */
  y = yoe + era*400;
  doy = doe - (365*yoe + yoe/4 - yoe/100);                /* [0, 365] */
  mp = (5*doy + 2)/153;                                   /* [0, 11] */
  d = doy - (153*mp + 2)/5 + 1;
  m = mp<10 ? mp+3 : mp-9;
  if( m<=2 ) y++;
  /* Digit by digit: a claim formats the time on every INSERT, and this is
  ** a tenth of the cost of sqlite3_snprintf(). */
  idemPutDigits(zOut, (int)y, 4);
  zOut[4] = '-';
  idemPutDigits(zOut+5, (int)m, 2);
  zOut[7] = '-';
  idemPutDigits(zOut+8, (int)d, 2);
  zOut[10] = ' ';
  idemPutDigits(zOut+11, (int)(sod/3600000), 2);
  zOut[13] = ':';
  idemPutDigits(zOut+14, (int)(sod/60000%60), 2);
  zOut[16] = ':';
  idemPutDigits(zOut+17, (int)(sod/1000%60), 2);
  zOut[19] = '.';
  idemPutDigits(zOut+20, (int)(sod%1000), 3);
  zOut[23] = 0;
}

/*
** The current time, from the VFS's clock (the clock SQLite's 'now' reads).
*/
static void idemNow(IdemVtab *p, char zOut[24]){
  sqlite3_int64 iJdMs = 0;
  if( p->pVfs->iVersion>=2 && p->pVfs->xCurrentTimeInt64 ){
    p->pVfs->xCurrentTimeInt64(p->pVfs, &iJdMs);
  }else{
    double r = 0.0;
    p->pVfs->xCurrentTime(p->pVfs, &r);
    iJdMs = (sqlite3_int64)(r*86400000.0);
  }
  idemFormatTime(iJdMs - (sqlite3_int64)210866760000000, zOut);
}

/* ------------------------------------------------------- create/connect */

/*
** Parse one module argument "name=value".  Returns SQLITE_OK or an error
** with *pzErr set.
*/
static int idemParseOption(IdemVtab *p, const char *zArg, char **pzErr){
  const char *zEq = strchr(zArg, '=');
  int nName, nValue;
  const char *zValue;
  while( *zArg==' ' || *zArg=='\t' || *zArg=='\n' ) zArg++;
  if( zEq==0 ) goto bad;
  nName = (int)(zEq - zArg);
  while( nName>0 && (zArg[nName-1]==' ' || zArg[nName-1]=='\t') ) nName--;
  zValue = zEq+1;
  while( *zValue==' ' || *zValue=='\t' ) zValue++;
  nValue = (int)strlen(zValue);
  while( nValue>0 && (zValue[nValue-1]==' ' || zValue[nValue-1]=='\t'
                      || zValue[nValue-1]=='\n') ) nValue--;
  if( nValue>=2 && (zValue[0]=='\'' || zValue[0]=='"')
   && zValue[nValue-1]==zValue[0] ){
    zValue++; nValue -= 2;
  }
  if( nName==13 && sqlite3_strnicmp(zArg, "local_failure", 13)==0 ){
    if( nValue==7 && sqlite3_strnicmp(zValue, "release", 7)==0 ){
      p->bKeepLocalFailure = 0;
      return SQLITE_OK;
    }
    if( nValue==4 && sqlite3_strnicmp(zValue, "keep", 4)==0 ){
      p->bKeepLocalFailure = 1;
      return SQLITE_OK;
    }
    *pzErr = sqlite3_mprintf("idem: unknown value '%.*s' for local_failure;"
        " use local_failure=release (the default) or local_failure=keep",
        nValue, zValue);
    return SQLITE_ERROR;
  }
 bad:
  *pzErr = sqlite3_mprintf("idem: unknown option '%s'; the options are "
      "local_failure=release (the default) and local_failure=keep", zArg);
  return SQLITE_ERROR;
}

/*
** The arbiter of claims is the shadow table's UNIQUE(key, member).  A
** database changed outside idem may have lost it (the table made again
** without it, or replaced by a view).  Then claims are refused, with
** p->zDamaged saying why; reads, releases and DROP TABLE still work, and
** PRAGMA integrity_check reports it.  Returns SQLITE_OK or SQLITE_NOMEM.
*/
static int idemCheckShadow(IdemVtab *p){
  sqlite3_stmt *pStmt = 0;
  char *zShadow = sqlite3_mprintf("%s_claim", p->zName);
  char *zSql = zShadow ? sqlite3_mprintf(
      "SELECT (SELECT type FROM \"%w\".sqlite_schema WHERE name=%Q),"
      " EXISTS(SELECT 1 FROM pragma_index_list(%Q, %Q) AS il"
      " WHERE il.\"unique\" AND (SELECT group_concat(name, ',') FROM"
      " (SELECT name FROM pragma_index_info(il.name, %Q) ORDER BY seqno))"
      " = 'key,member')", p->zDb, zShadow, zShadow, p->zDb, p->zDb) : 0;
  const char *zType;
  int rc;
  sqlite3_free(zShadow);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW
   && (zType = (const char*)sqlite3_column_text(pStmt, 0))!=0 ){
    if( strcmp(zType, "table")!=0 ){
      p->zDamaged = sqlite3_mprintf("idem: %s: %s_claim is a %s, not a table;"
          " the database was changed outside idem: claims are refused",
          p->zName, p->zName, zType);
      if( p->zDamaged==0 ) rc = SQLITE_NOMEM;
    }else if( sqlite3_column_int(pStmt, 1)==0 ){
      p->zDamaged = sqlite3_mprintf("idem: %s: %s_claim has lost its"
          " UNIQUE(key, member), which decides who owns a call; the database"
          " was changed outside idem: claims are refused", p->zName, p->zName);
      if( p->zDamaged==0 ) rc = SQLITE_NOMEM;
    }
  }
  /* Any other failure of the check (a truncated file) shows again, with
  ** its own message, when the table is used. */
  if( sqlite3_finalize(pStmt)==SQLITE_NOMEM || rc==SQLITE_NOMEM ) return SQLITE_NOMEM;
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
    rc = idemParseOption(p, argv[i], pzErr);
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
        " UNIQUE(key, member), UNIQUE(created, rid))",
      p->zDb, p->zName);
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
      " updated TEXT, reply TEXT HIDDEN, reconcile TEXT HIDDEN)");
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("idem: %s", sqlite3_errmsg(db));
    goto fail;
  }
  sqlite3_vtab_config(db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  if( !bCreate && (rc = idemCheckShadow(p))!=SQLITE_OK ) goto fail;
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

static int idemDestroy(sqlite3_vtab *pVtab){
  IdemVtab *p = (IdemVtab*)pVtab;
  int rc;
  char *zSql;
  idemFinalizeAll(p);
  zSql = sqlite3_mprintf("DROP TABLE IF EXISTS \"%w\".\"%w_claim\"",
                         p->zDb, p->zName);
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
  zSql = sqlite3_mprintf("ALTER TABLE \"%w\".\"%w_claim\" RENAME TO \"%w_claim\"",
                         p->zDb, p->zName, zNew);
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

/* The shadow table's suffix. */
static int idemShadowName(const char *zName){
  return sqlite3_stricmp(zName, "claim")==0;
}

/* ------------------------------------------------------------- queries */

/*
** Plans: key = ? (and member = ?) is a unique seek; a created range uses
** the created index; anything else scans.
*/
static int idemBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int iKey = -1, iMember = -1, iLo = -1, iHi = -1, iEq = -1;
  int eLo = 0, eHi = 0;
  int i;
  (void)pVtab;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( !pC->usable ) continue;
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
    pInfo->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
    pInfo->estimatedCost = 1.0;
    pInfo->estimatedRows = 1;
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
    sqlite3_stmt *pStmt = idemStmt(p, IDEM_STMT_Q_MAIN);
    if( pStmt==0 ) return p->rcStmt;
    if( !p->aLent[IDEM_STMT_Q_MAIN] ){
      p->aLent[IDEM_STMT_Q_MAIN] = 1;
      pCur->bMainLent = 1;
      pCur->pMain = pStmt;
    }else{
      rc = sqlite3_prepare_v2(p->db, sqlite3_sql(pStmt), -1, &pCur->pMain, 0);
      if( rc!=SQLITE_OK ){
        idemVtabError(p, "idem: %s: %s", p->zName, sqlite3_errmsg(p->db));
        return rc;
      }
    }
  }
  sqlite3_bind_blob(pCur->pMain, 1, aKey, nKey, SQLITE_TRANSIENT);
  rc = sqlite3_step(pCur->pMain);
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ) return SQLITE_OK;
  rc = sqlite3_reset(pCur->pMain);
  idemVtabError(p, "idem: %s: %s", p->zName, sqlite3_errmsg(p->db));
  return rc;
}

static int idemNext(sqlite3_vtab_cursor *pCursor){
  IdemCursor *pCur = (IdemCursor*)pCursor;
  int rc = sqlite3_step(pCur->pStmt);
  sqlite3_free(pCur->zReply);
  pCur->zReply = 0;
  if( rc==SQLITE_ROW ){
    pCur->bEof = 0;
    if( sqlite3_column_int64(pCur->pStmt, IDEM_Q_MEMBER)!=0 ){
      rc = idemCursorLoadMain(pCur);
      if( rc!=SQLITE_OK ) return rc;    /* with its message */
    }
    return SQLITE_OK;
  }
  pCur->bEof = 1;
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  {
    IdemVtab *p = (IdemVtab*)pCur->base.pVtab;
    idemVtabError(p, "idem: %s: %s", p->zName, sqlite3_errmsg(p->db));
    sqlite3_reset(pCur->pStmt);
    return rc==SQLITE_ROW || rc==SQLITE_DONE ? SQLITE_ERROR : rc;
  }
}

/*
** Bind a value given for created in the stored text form: text is
** compared as it is; a number is Unix time in seconds (NULL binds NULL,
** which matches nothing).
*/
static void idemBindCreated(sqlite3_stmt *pStmt, int iParam, sqlite3_value *pVal){
  int eType = sqlite3_value_type(pVal);
  if( eType==SQLITE_INTEGER || eType==SQLITE_FLOAT ){
    char zTime[24];
    double r = sqlite3_value_double(pVal);
    if( r<0.0 ) r = 0.0;
    if( r>253402300800.0 ) r = 253402300800.0;
    idemFormatTime((sqlite3_int64)(r*1000.0), zTime);
    sqlite3_bind_text(pStmt, iParam, zTime, -1, SQLITE_TRANSIENT);
  }else{
    sqlite3_bind_value(pStmt, iParam, pVal);
  }
}

static int idemFilter(
  sqlite3_vtab_cursor *pCursor, int idxNum, const char *idxStr,
  int argc, sqlite3_value **argv
){
  IdemCursor *pCur = (IdemCursor*)pCursor;
  IdemVtab *p = (IdemVtab*)pCursor->pVtab;
  unsigned char *aKey = pCur->aKey;
  int iStmt;
  int bLight = (idxNum & IDEM_PLAN_LIGHT)!=0;
  (void)idxStr; (void)argc;

  idxNum &= ~IDEM_PLAN_LIGHT;
  idemCursorReset(pCur);
  if( idxNum==IDEM_PLAN_KEY || idxNum==IDEM_PLAN_KEYMEMBER ){
    /* A key that is not 32 lowercase hex digits matches nothing. */
    if( sqlite3_value_type(argv[0])!=SQLITE_TEXT
     || !idemKeyFromHex((const char*)sqlite3_value_text(argv[0]),
                        sqlite3_value_bytes(argv[0]), aKey) ){
      return SQLITE_OK;
    }
    if( idxNum==IDEM_PLAN_KEYMEMBER
     && sqlite3_value_numeric_type(argv[1])!=SQLITE_INTEGER ){
      return SQLITE_OK;
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

  if( idemStmt(p, iStmt)==0 ) return p->rcStmt;
  if( !p->aLent[iStmt] ){
    pCur->pStmt = p->aStmt[iStmt];
    pCur->iLent = iStmt;
    p->aLent[iStmt] = 1;
  }else{
    /* Another cursor has it: prepare a private copy. */
    int rc = sqlite3_prepare_v2(p->db, sqlite3_sql(p->aStmt[iStmt]), -1,
                                &pCur->pStmt, 0);
    if( rc!=SQLITE_OK ){
      idemVtabError(p, "idem: %s: %s", p->zName, sqlite3_errmsg(p->db));
      return rc;
    }
  }

  if( idxNum==IDEM_PLAN_KEY || idxNum==IDEM_PLAN_KEYMEMBER ){
    sqlite3_bind_blob(pCur->pStmt, 1, aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
    if( idxNum==IDEM_PLAN_KEYMEMBER ){
      sqlite3_bind_int64(pCur->pStmt, 2, sqlite3_value_int64(argv[1]));
    }
  }else if( idxNum>=IDEM_PLAN_CREATED ){
    int iRange = idxNum - IDEM_PLAN_CREATED;
    int iArg = 0;
    if( iRange/3 ) idemBindCreated(pCur->pStmt, 1, argv[iArg++]);
    if( iRange%3 ){
      /* created = ? binds one value to both ends */
      idemBindCreated(pCur->pStmt, 2, argv[iArg<argc ? iArg : 0]);
    }
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

/* ------------------------------------------------------------- replies */

/* A growable string for building replies and messages. */
typedef struct IdemStr IdemStr;
struct IdemStr {
  char *z;
  sqlite3_int64 n, nAlloc;
  int bOom;
};

static void idemStrAppend(IdemStr *s, const char *z, sqlite3_int64 n){
  if( s->bOom ) return;
  if( s->n + n + 1 > s->nAlloc ){
    sqlite3_int64 nNew = (s->nAlloc ? s->nAlloc*2 : 128) + n;
    char *zNew = (char*)sqlite3_realloc64(s->z, nNew);
    if( zNew==0 ){ s->bOom = 1; return; }
    s->z = zNew;
    s->nAlloc = nNew;
  }
  memcpy(s->z + s->n, z, (size_t)n);
  s->n += n;
  s->z[s->n] = 0;
}

/* Append z[0..n) as a JSON string with RFC 8785 escaping. */
static void idemStrAppendJsonString(IdemStr *s, const char *z, sqlite3_int64 n){
  sqlite3_int64 i, iStart = 0;
  idemStrAppend(s, "\"", 1);
  for(i=0; i<n; i++){
    unsigned char c = (unsigned char)z[i];
    if( c<0x20 || c=='"' || c=='\\' ){
      char zEsc[8];
      int nEsc = 2;
      idemStrAppend(s, z+iStart, i-iStart);
      zEsc[0] = '\\';
      switch( c ){
        case '"':  zEsc[1] = '"'; break;
        case '\\': zEsc[1] = '\\'; break;
        case '\b': zEsc[1] = 'b'; break;
        case '\t': zEsc[1] = 't'; break;
        case '\n': zEsc[1] = 'n'; break;
        case '\f': zEsc[1] = 'f'; break;
        case '\r': zEsc[1] = 'r'; break;
        default:
          sqlite3_snprintf(sizeof(zEsc), zEsc, "\\u%04x", c);
          nEsc = 6;
          break;
      }
      idemStrAppend(s, zEsc, nEsc);
      iStart = i+1;
    }
  }
  idemStrAppend(s, z+iStart, n-iStart);
  idemStrAppend(s, "\"", 1);
}

/* Append an SQL value as JSON: numbers as numbers, text as a string (or as
** itself if bJson and it is valid JSON), blobs as hex strings, NULL. */
static int idemStrAppendValue(IdemVtab *p, IdemStr *s, sqlite3_value *pVal, int bJson){
  char zNum[40];
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_INTEGER:
      sqlite3_snprintf(sizeof(zNum), zNum, "%lld", sqlite3_value_int64(pVal));
      idemStrAppend(s, zNum, (sqlite3_int64)strlen(zNum));
      break;
    case SQLITE_FLOAT: {
      double r = sqlite3_value_double(pVal);
      if( r!=r || r-r!=0.0 ){
        idemStrAppend(s, "null", 4);       /* NaN and infinities */
      }else{
        idemStrAppend(s, zNum, idemNumberFormat(r, zNum));
      }
      break;
    }
    case SQLITE_TEXT: {
      const char *z = (const char*)sqlite3_value_text(pVal);
      int n = sqlite3_value_bytes(pVal);
      if( bJson ){
        int rc;
        if( p->pJson==0 && (p->pJson = idemJsonNew())==0 ) return SQLITE_NOMEM;
        rc = idemJsonCanonical(p->pJson, z, n);
        if( rc==SQLITE_NOMEM ) return rc;
        if( rc==SQLITE_OK ){
          int nJ;
          const char *zJ = idemJsonText(p->pJson, &nJ);
          idemStrAppend(s, zJ, nJ);
          break;
        }
      }
      idemStrAppendJsonString(s, z, n);
      break;
    }
    case SQLITE_BLOB: {
      const unsigned char *a = (const unsigned char*)sqlite3_value_blob(pVal);
      int n = sqlite3_value_bytes(pVal), i;
      idemStrAppend(s, "\"", 1);
      for(i=0; i<n; i++){
        sqlite3_snprintf(sizeof(zNum), zNum, "%02x", a[i]);
        idemStrAppend(s, zNum, 2);
      }
      idemStrAppend(s, "\"", 1);
      break;
    }
    default:
      idemStrAppend(s, "null", 4);
      break;
  }
  return s->bOom ? SQLITE_NOMEM : SQLITE_OK;
}

/*
** The reply a duplicate arrival hands back: a canonical JSON object
**   {"id":<id>,"idempotent":true,"message":...,"result":...,"status":...}
** "message" for calls that are not done, "result" when one was recorded
** (embedded as JSON when it is JSON text).
*/
static int idemReply(IdemVtab *p, sqlite3_value *pId, sqlite3_value *pResult,
                     const char *zStatus, const char *zNote, char **pzOut){
  IdemStr s = {0, 0, 0, 0};
  int rc;
  idemStrAppend(&s, "{\"id\":", 6);
  rc = idemStrAppendValue(p, &s, pId, 0);
  if( rc ) goto done;
  idemStrAppend(&s, ",\"idempotent\":true", 18);
  if( zStatus && strcmp(zStatus, "done")!=0 ){
    const char *zMsg = zNote;
    if( strcmp(zStatus, "pending")==0 ) zMsg = IDEM_PENDING_NOTE;
    if( zMsg==0 ) zMsg = "";
    idemStrAppend(&s, ",\"message\":", 11);
    idemStrAppendJsonString(&s, zMsg, (sqlite3_int64)strlen(zMsg));
  }
  if( sqlite3_value_type(pResult)!=SQLITE_NULL ){
    idemStrAppend(&s, ",\"result\":", 10);
    rc = idemStrAppendValue(p, &s, pResult, 1);
    if( rc ) goto done;
  }
  idemStrAppend(&s, ",\"status\":", 10);
  idemStrAppendJsonString(&s, zStatus ? zStatus : "",
                          zStatus ? (sqlite3_int64)strlen(zStatus) : 0);
  idemStrAppend(&s, "}", 1);
  rc = s.bOom ? SQLITE_NOMEM : SQLITE_OK;
 done:
  if( rc ){
    sqlite3_free(s.z);
    s.z = 0;
  }
  *pzOut = s.z;
  return rc;
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
      case IDEM_COL_WHO:     iM = 0; break;
      case IDEM_COL_CONV:    iM = 1; break;
      case IDEM_COL_TOOL:    iM = 2; break;
      case IDEM_COL_ARGS:    iM = 3; break;
      case IDEM_COL_KIND:    iM = 4; break;
      case IDEM_COL_STATUS:  iM = 5; break;
      case IDEM_COL_NOTE:    iM = 6; break;
      case IDEM_COL_UPDATED: iM = 7; break;
    }
    if( iM>=0 ){
      if( pCur->pMain==0 || !sqlite3_stmt_busy(pCur->pMain)
       || sqlite3_data_count(pCur->pMain)==0 ){
        return 0;
      }
      return sqlite3_column_value(pCur->pMain, iM);
    }
  }
  return sqlite3_column_value(pCur->pStmt, iCol+1);
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
            sqlite3_column_value(pCur->pStmt, IDEM_COL_ID+1),
            sqlite3_column_value(pCur->pStmt, IDEM_COL_RESULT+1),
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
  }
  pVal = idemCursorValue(pCur, iCol);
  if( pVal ) sqlite3_result_value(ctx, pVal);
  return SQLITE_OK;
}

/* -------------------------------------------------------------- writes */

/* The text of a status stored in the shadow table, or "" */
static const char *idemText(sqlite3_stmt *pStmt, int iCol){
  const char *z = (const char*)sqlite3_column_text(pStmt, iCol);
  return z ? z : "";
}

/* A decided call (done, or failed and kept) is final. */
static int idemIsDecided(const char *zStatus){
  return strcmp(zStatus, "done")==0 || strcmp(zStatus, "failed")==0;
}

/* True if value pVal holds the bytes of part pPart (type aside). */
static int idemSameBytes(sqlite3_stmt *pStmt, int iCol, const IdemPart *pPart){
  const void *a;
  int n;
  if( sqlite3_column_type(pStmt, iCol)==SQLITE_BLOB ){
    a = sqlite3_column_blob(pStmt, iCol);
  }else{
    a = sqlite3_column_text(pStmt, iCol);
  }
  n = sqlite3_column_bytes(pStmt, iCol);
  if( a==0 ) return pPart->n==0 && sqlite3_column_type(pStmt, iCol)!=SQLITE_NULL;
  return n==pPart->n && memcmp(a, pPart->p, (size_t)n)==0;
}

/*
** The message for a duplicate arrival, by its call's status.
*/
static void idemDuplicateError(IdemVtab *p, const char *zStatus,
                               const char *zHex, int bReplace){
  const char *zWhat;
  if( strcmp(zStatus, "pending")==0 ){
    zWhat = "; it is in progress or was interrupted, and is not executed again";
  }else if( strcmp(zStatus, "unknown")==0 ){
    zWhat = "; its outcome is unknown and it is not retried: the target's"
            " records decide (see the note)";
  }else{
    zWhat = "";
  }
  idemVtabError(p, "idem: %s (status: %s)%s; replay it with"
      " SELECT * FROM \"%w\" WHERE key = '%s'",
      bReplace ? "INSERT OR REPLACE never takes over a claim: call already claimed"
               : "call already claimed",
      zStatus, zWhat, p->zName, zHex);
}

/*
** The packed key in column iCol of the current row of pStmt, or an
** error if it is not a 16-byte blob, as only a database changed outside
** idem can have.
*/
static int idemRowKey(IdemVtab *p, sqlite3_stmt *pStmt, int iCol,
                      unsigned char aKey[16]){
  if( sqlite3_column_type(pStmt, iCol)!=SQLITE_BLOB
   || sqlite3_column_bytes(pStmt, iCol)!=IDEM_KEY_BYTES ){
    idemVtabError(p, "idem: %s: a row of %s_claim has a damaged key (not a"
        " 16-byte blob); the database was changed outside idem: see PRAGMA"
        " integrity_check", p->zName, p->zName);
    return SQLITE_CORRUPT_VTAB;
  }
  memcpy(aKey, sqlite3_column_blob(pStmt, iCol), IDEM_KEY_BYTES);
  return SQLITE_OK;
}

/* A value that must not be given on INSERT: error unless NULL. */
static int idemMustBeNull(IdemVtab *p, sqlite3_value **aCol, int iCol, const char *zWhy){
  if( sqlite3_value_type(aCol[iCol])!=SQLITE_NULL ){
    idemVtabError(p, "idem: %s %s", azIdemCol[iCol], zWhy);
    return 1;
  }
  return 0;
}

/*
** INSERT of a claim (member NULL or 0).  aCol[] holds the new values by
** virtual-table column.
*/
static int idemInsertClaim(IdemVtab *p, sqlite3_value **aCol, sqlite3_int64 *pRowid){
  static const int aPartCol[4] = { IDEM_COL_WHO, IDEM_COL_CONV, IDEM_COL_TOOL, IDEM_COL_ARGS };
  IdemPart aPart[4];
  unsigned char aKey[IDEM_KEY_BYTES];
  char zHex[IDEM_KEY_HEX+1];
  char zNow[24];
  const char *zKind = "local";
  sqlite3_stmt *pIns, *pMain;
  int i, rc, nArgs;
  const char *zArgs;

  /* 1. Validate everything; nothing is written before the claim. */
  for(i=0; i<4; i++){
    int eType = sqlite3_value_type(aCol[aPartCol[i]]);
    if( eType==SQLITE_NULL ){
      idemVtabError(p, "idem: %s is NULL; a claim needs who, conv, tool and args",
                    azIdemCol[aPartCol[i]]);
      return SQLITE_CONSTRAINT_NOTNULL;
    }
    if( i==3 && eType==SQLITE_BLOB ){
      idemVtabError(p, "idem: args is a blob; expected JSON text");
      return SQLITE_MISMATCH;
    }
    if( !idemKeyPart(aCol[aPartCol[i]], &aPart[i]) ) return SQLITE_NOMEM;
  }
  if( sqlite3_value_type(aCol[IDEM_COL_KIND])!=SQLITE_NULL ){
    zKind = (const char*)sqlite3_value_text(aCol[IDEM_COL_KIND]);
    if( zKind==0 ) return SQLITE_NOMEM;
    if( strcmp(zKind, "local")!=0 && strcmp(zKind, "external")!=0 ){
      idemVtabError(p, "idem: kind must be 'local' (a write into this"
                    " database, the default) or 'external', not '%s'", zKind);
      return SQLITE_CONSTRAINT_CHECK;
    }
  }
  if( sqlite3_value_type(aCol[IDEM_COL_STATUS])!=SQLITE_NULL ){
    const char *z = (const char*)sqlite3_value_text(aCol[IDEM_COL_STATUS]);
    if( z==0 ) return SQLITE_NOMEM;
    if( strcmp(z, "pending")!=0 ){
      idemVtabError(p, "idem: a claim starts as 'pending'; record the outcome"
          " afterwards with UPDATE \"%w\" SET status = ... WHERE key = ? AND"
          " member = 0", p->zName);
      return SQLITE_CONSTRAINT_CHECK;
    }
  }
  if( idemMustBeNull(p, aCol, IDEM_COL_CREATED, "is set by idem; leave it out of the INSERT")
   || idemMustBeNull(p, aCol, IDEM_COL_UPDATED, "is set by idem; leave it out of the INSERT")
   || idemMustBeNull(p, aCol, IDEM_COL_REPLY, "is computed by idem; leave it out of the INSERT")
   || idemMustBeNull(p, aCol, IDEM_COL_RECONCILE,
                     "is an UPDATE command for open calls; leave it out of the INSERT") ){
    return SQLITE_CONSTRAINT_CHECK;
  }
  if( p->pJson==0 && (p->pJson = idemJsonNew())==0 ) return SQLITE_NOMEM;
  rc = idemJsonCanonical(p->pJson, (const char*)aPart[3].p, (int)aPart[3].n);
  if( rc==SQLITE_ERROR || rc==SQLITE_TOOBIG ){
    idemVtabError(p, rc==SQLITE_ERROR ? "idem: args must be JSON text: %s"
                                      : "idem: args: %s", idemJsonError(p->pJson));
    return rc;
  }
  if( rc!=SQLITE_OK ) return rc;
  zArgs = idemJsonText(p->pJson, &nArgs);
  aPart[3].p = zArgs;
  aPart[3].n = nArgs;
  if( sqlite3_value_type(aCol[IDEM_COL_KEY])==SQLITE_NULL ){
    idemKeyHash(aPart, aKey);
  }else if( sqlite3_value_type(aCol[IDEM_COL_KEY])!=SQLITE_TEXT
         || !idemKeyFromHex((const char*)sqlite3_value_text(aCol[IDEM_COL_KEY]),
                            sqlite3_value_bytes(aCol[IDEM_COL_KEY]), aKey) ){
    idemVtabError(p, "idem: key must be 32 lowercase hex digits (as"
                  " idem_key() returns), or NULL to compute it");
    return SQLITE_MISMATCH;
  }
  idemKeyHex(aKey, zHex);
  pIns = idemStmt(p, IDEM_STMT_INSERT);
  pMain = idemStmt(p, IDEM_STMT_MAIN);
  if( pIns==0 || pMain==0 ) return p->rcStmt;
  idemNow(p, zNow);

  /* 2. The claim: the one write, arbitrated by UNIQUE(key, member). */
  sqlite3_bind_blob(pIns, 1, aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
  sqlite3_bind_int(pIns, 2, 0);
  for(i=0; i<3; i++){
    if( sqlite3_value_type(aCol[aPartCol[i]])==SQLITE_BLOB ){
      sqlite3_bind_blob(pIns, 3+i, aPart[i].p, (int)aPart[i].n, SQLITE_STATIC);
    }else{
      sqlite3_bind_text(pIns, 3+i, aPart[i].p, (int)aPart[i].n, SQLITE_STATIC);
    }
  }
  sqlite3_bind_text(pIns, 6, zArgs, nArgs, SQLITE_STATIC);
  sqlite3_bind_text(pIns, 7, zKind, -1, SQLITE_STATIC);
  sqlite3_bind_text(pIns, 8, "pending", 7, SQLITE_STATIC);
  sqlite3_bind_value(pIns, 9, aCol[IDEM_COL_ID]);
  sqlite3_bind_value(pIns, 10, aCol[IDEM_COL_RESULT]);
  sqlite3_bind_value(pIns, 11, aCol[IDEM_COL_NOTE]);
  sqlite3_bind_text(pIns, 12, zNow, -1, SQLITE_STATIC);
  rc = sqlite3_step(pIns);
  sqlite3_reset(pIns);
  sqlite3_clear_bindings(pIns);
  if( rc==SQLITE_DONE ){
    *pRowid = sqlite3_last_insert_rowid(p->db);
    return SQLITE_OK;
  }
  if( (rc&0xff)!=SQLITE_CONSTRAINT ){    /* extended codes may be on */
    idemVtabError(p, "idem: %s: %s", p->zName, sqlite3_errmsg(p->db));
    return rc;
  }

  /* 3. The key is held.  By this call (a duplicate) or by another? */
  sqlite3_bind_blob(pMain, 1, aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
  rc = sqlite3_step(pMain);
  if( rc==SQLITE_ROW ){
    int bSame = 1;
    for(i=0; i<4 && bSame; i++) bSame = idemSameBytes(pMain, i, &aPart[i]);
    if( !bSame ){
      idemVtabError(p, "idem: key '%s' is already held by a different call"
          " (another who, conv, tool or args); a key belongs to one call:"
          " compute keys with idem_key() or give each call a fresh key", zHex);
      rc = SQLITE_ERROR;      /* never ignorable, never a "duplicate" */
    }else{
      idemDuplicateError(p, idemText(pMain, 5), zHex,
                         sqlite3_vtab_on_conflict(p->db)==SQLITE_REPLACE);
      rc = SQLITE_CONSTRAINT_UNIQUE;
    }
  }else{
    idemVtabError(p, "idem: %s: %s", p->zName, sqlite3_errmsg(p->db));
    if( rc==SQLITE_DONE ) rc = SQLITE_CORRUPT_VTAB;
  }
  sqlite3_reset(pMain);
  return rc;
}

/*
** INSERT of a member row: INSERT INTO calls(key, member, id, result).
*/
static int idemInsertMember(IdemVtab *p, sqlite3_value **aCol,
                            sqlite3_int64 iMember, sqlite3_int64 *pRowid){
  static const int aNull[] = { IDEM_COL_WHO, IDEM_COL_CONV, IDEM_COL_TOOL,
    IDEM_COL_ARGS, IDEM_COL_KIND, IDEM_COL_STATUS, IDEM_COL_NOTE,
    IDEM_COL_CREATED, IDEM_COL_UPDATED, IDEM_COL_REPLY, IDEM_COL_RECONCILE };
  unsigned char aKey[IDEM_KEY_BYTES];
  char zHex[IDEM_KEY_HEX+1];
  char zNow[24];
  sqlite3_stmt *pIns, *pMain;
  const char *zStatus;
  int i, rc;

  if( sqlite3_value_type(aCol[IDEM_COL_KEY])!=SQLITE_TEXT
   || !idemKeyFromHex((const char*)sqlite3_value_text(aCol[IDEM_COL_KEY]),
                      sqlite3_value_bytes(aCol[IDEM_COL_KEY]), aKey) ){
    idemVtabError(p, "idem: a member row needs the key of its call"
                  " (32 lowercase hex digits)");
    return SQLITE_MISMATCH;
  }
  for(i=0; i<(int)(sizeof(aNull)/sizeof(aNull[0])); i++){
    if( idemMustBeNull(p, aCol, aNull[i], "belongs to the call, not to a"
          " member: a member row is INSERT INTO calls(key, member, id, result)") ){
      return SQLITE_CONSTRAINT_CHECK;
    }
  }
  idemKeyHex(aKey, zHex);
  pIns = idemStmt(p, IDEM_STMT_INSERT);
  pMain = idemStmt(p, IDEM_STMT_MAIN);
  if( pIns==0 || pMain==0 ) return p->rcStmt;

  sqlite3_bind_blob(pMain, 1, aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
  rc = sqlite3_step(pMain);
  if( rc!=SQLITE_ROW ){
    if( rc==SQLITE_DONE ){
      idemVtabError(p, "idem: no call with key '%s'; claim the call before"
                    " adding members", zHex);
      rc = SQLITE_CONSTRAINT_FOREIGNKEY;
    }else{
      idemVtabError(p, "idem: %s: %s", p->zName, sqlite3_errmsg(p->db));
    }
    sqlite3_reset(pMain);
    return rc;
  }
  zStatus = idemText(pMain, 5);
  if( strcmp(zStatus, "pending")!=0 ){
    idemVtabError(p, "idem: members are added only while the call is"
        " pending; call '%s' is %s", zHex, zStatus);
    sqlite3_reset(pMain);
    return SQLITE_CONSTRAINT_CHECK;
  }
  sqlite3_reset(pMain);

  idemNow(p, zNow);
  sqlite3_bind_blob(pIns, 1, aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
  sqlite3_bind_int64(pIns, 2, iMember);
  sqlite3_bind_value(pIns, 9, aCol[IDEM_COL_ID]);
  sqlite3_bind_value(pIns, 10, aCol[IDEM_COL_RESULT]);
  sqlite3_bind_text(pIns, 12, zNow, -1, SQLITE_STATIC);
  rc = sqlite3_step(pIns);
  sqlite3_reset(pIns);
  sqlite3_clear_bindings(pIns);
  if( rc==SQLITE_DONE ){
    *pRowid = sqlite3_last_insert_rowid(p->db);
    return SQLITE_OK;
  }
  if( (rc&0xff)==SQLITE_CONSTRAINT ){
    idemVtabError(p, "idem: member %lld of call '%s' already exists; members are"
                  " written once: give this row another member number",
                  iMember, zHex);
    return SQLITE_CONSTRAINT_UNIQUE;
  }
  idemVtabError(p, "idem: %s: %s", p->zName, sqlite3_errmsg(p->db));
  return rc;
}

/* Delete a call's whole group. */
static int idemRelease(IdemVtab *p, const void *aKey, int nKey){
  sqlite3_stmt *pDel = idemStmt(p, IDEM_STMT_RELEASE);
  int rc;
  if( pDel==0 ) return p->rcStmt;
  sqlite3_bind_blob(pDel, 1, aKey, nKey, SQLITE_TRANSIENT);
  rc = sqlite3_step(pDel);
  sqlite3_reset(pDel);
  if( rc!=SQLITE_DONE ){
    idemVtabError(p, "idem: %s: %s", p->zName, sqlite3_errmsg(p->db));
    return rc;
  }
  return SQLITE_OK;
}

/* Is a new value given for column iCol that differs from the stored one
** (pOld: BYRID statement, column iCol+1)?  Keys compare as hex text. */
static int idemChanges(sqlite3_value **aCol, int iCol, sqlite3_stmt *pOld){
  sqlite3_value *pNew = aCol[iCol];
  const void *a, *b;
  int na, nb;
  if( sqlite3_value_nochange(pNew) ) return 0;
  if( iCol==IDEM_COL_KEY ){
    unsigned char aKey[IDEM_KEY_BYTES];
    if( sqlite3_value_type(pNew)!=SQLITE_TEXT
     || !idemKeyFromHex((const char*)sqlite3_value_text(pNew),
                        sqlite3_value_bytes(pNew), aKey) ) return 1;
    return sqlite3_column_bytes(pOld, IDEM_Q_KEY)!=IDEM_KEY_BYTES
        || memcmp(aKey, sqlite3_column_blob(pOld, IDEM_Q_KEY), IDEM_KEY_BYTES)!=0;
  }
  if( sqlite3_value_type(pNew)==SQLITE_NULL ){
    return sqlite3_column_type(pOld, iCol+1)!=SQLITE_NULL;
  }
  if( sqlite3_column_type(pOld, iCol+1)==SQLITE_NULL ) return 1;
  if( iCol==IDEM_COL_MEMBER ){
    return sqlite3_value_numeric_type(pNew)!=SQLITE_INTEGER
        || sqlite3_value_int64(pNew)!=sqlite3_column_int64(pOld, IDEM_Q_MEMBER);
  }
  a = sqlite3_value_text(pNew);
  na = sqlite3_value_bytes(pNew);
  b = sqlite3_column_text(pOld, iCol+1);
  nb = sqlite3_column_bytes(pOld, iCol+1);
  return na!=nb || (na>0 && memcmp(a, b, na)!=0);
}

/* The value to store for column iCol on UPDATE: the new one, or the old. */
static void idemBindNewOrOld(sqlite3_stmt *pStmt, int iParam,
                             sqlite3_value **aCol, int iCol, sqlite3_stmt *pOld){
  if( sqlite3_value_nochange(aCol[iCol]) ){
    sqlite3_bind_value(pStmt, iParam, sqlite3_column_value(pOld, iCol+1));
  }else{
    sqlite3_bind_value(pStmt, iParam, aCol[iCol]);
  }
}

/*
** UPDATE of the row with rid iRid.  The rules (SPEC §4, §5):
**   pending -> pending   id, result, note may change
**   pending -> done      recorded
**   pending -> failed    local: released (rows deleted) or, with
**                        local_failure=keep, kept as failed;
**                        external: kept as 'unknown' with the note
**   unknown, pending + reconcile = 'arrived'      -> done
**   unknown, pending + reconcile = 'not_arrived'  -> released
**   done, failed         final: every change is an error
** Identity, kind and times never change; members are not updated.
*/
static int idemUpdateRow(IdemVtab *p, sqlite3_int64 iRid, sqlite3_value **aCol){
  static const int aFixed[] = { IDEM_COL_KEY, IDEM_COL_MEMBER, IDEM_COL_WHO,
    IDEM_COL_CONV, IDEM_COL_TOOL, IDEM_COL_ARGS, IDEM_COL_KIND,
    IDEM_COL_CREATED, IDEM_COL_UPDATED, IDEM_COL_REPLY };
  sqlite3_stmt *pOld = idemStmt(p, IDEM_STMT_BYRID);
  sqlite3_stmt *pRec = idemStmt(p, IDEM_STMT_RECORD);
  char zHex[IDEM_KEY_HEX+1];
  char zNow[24];
  const char *zStatus, *zKind, *zNew = 0, *zReconcile = 0;
  char *zNote = 0;
  int bRelease = 0;
  int rc, i;

  if( pOld==0 || pRec==0 ) return p->rcStmt;
  sqlite3_bind_int64(pOld, 1, iRid);
  rc = sqlite3_step(pOld);
  if( rc!=SQLITE_ROW ){
    sqlite3_reset(pOld);
    if( rc==SQLITE_DONE ) return SQLITE_OK;   /* released earlier in this statement */
    idemVtabError(p, "idem: %s: %s", p->zName, sqlite3_errmsg(p->db));
    return rc;
  }
  if( sqlite3_column_bytes(pOld, IDEM_Q_KEY)==IDEM_KEY_BYTES ){
    idemKeyHex(sqlite3_column_blob(pOld, IDEM_Q_KEY), zHex);
  }else{
    memcpy(zHex, "?", 2);
  }
  if( sqlite3_column_int64(pOld, IDEM_Q_MEMBER)!=0 ){
    idemVtabError(p, "idem: member rows are not updated; record the call's"
        " outcome on its main row: UPDATE \"%w\" SET status = ... WHERE"
        " key = '%s' AND member = 0", p->zName, zHex);
    rc = SQLITE_CONSTRAINT_CHECK;
    goto done;
  }
  for(i=0; i<(int)(sizeof(aFixed)/sizeof(aFixed[0])); i++){
    if( idemChanges(aCol, aFixed[i], pOld) ){
      idemVtabError(p, "idem: %s cannot be changed; it is fixed when the"
                    " call is claimed", azIdemCol[aFixed[i]]);
      rc = SQLITE_CONSTRAINT_CHECK;
      goto done;
    }
  }
  zStatus = idemText(pOld, IDEM_COL_STATUS+1);
  zKind = idemText(pOld, IDEM_COL_KIND+1);
  if( sqlite3_value_type(aCol[IDEM_COL_STATUS])!=SQLITE_NULL
   && !sqlite3_value_nochange(aCol[IDEM_COL_STATUS]) ){
    zNew = (const char*)sqlite3_value_text(aCol[IDEM_COL_STATUS]);
  }else if( !sqlite3_value_nochange(aCol[IDEM_COL_STATUS]) ){
    idemVtabError(p, "idem: status cannot be NULL; set it to 'done' or 'failed', or leave it out to keep the call pending");
    rc = SQLITE_CONSTRAINT_NOTNULL;
    goto done;
  }
  if( !sqlite3_value_nochange(aCol[IDEM_COL_RECONCILE])
   && sqlite3_value_type(aCol[IDEM_COL_RECONCILE])!=SQLITE_NULL ){
    zReconcile = (const char*)sqlite3_value_text(aCol[IDEM_COL_RECONCILE]);
  }

  if( idemIsDecided(zStatus) ){
    idemVtabError(p, "idem: call '%s' is already decided (status: %s); a"
        " decided call is final: replay it with SELECT reply FROM \"%w\""
        " WHERE key = '%s'", zHex, zStatus, p->zName, zHex);
    rc = SQLITE_CONSTRAINT_CHECK;
    goto done;
  }

  if( zReconcile ){
    /* The operator's explicit reconciliation of an unknown (or abandoned
    ** pending) call, from the target's records. */
    if( zNew && strcmp(zNew, "done")!=0 ){
      idemVtabError(p, "idem: reconcile = 'arrived' makes the call done and"
          " 'not_arrived' releases it; do not set another status with it");
      rc = SQLITE_CONSTRAINT_CHECK;
      goto done;
    }
    if( strcmp(zReconcile, "arrived")==0 ){
      zNew = "done";
      if( sqlite3_value_nochange(aCol[IDEM_COL_NOTE]) ){
        zNote = sqlite3_mprintf("reconciled: the target's records show that"
                                " the request arrived");
        if( zNote==0 ){ rc = SQLITE_NOMEM; goto done; }
      }
    }else if( strcmp(zReconcile, "not_arrived")==0 ){
      bRelease = 1;
    }else{
      idemVtabError(p, "idem: reconcile must be 'arrived' (the target's"
          " records show the request: the call becomes done) or"
          " 'not_arrived' (they show it never came: the claim is released)");
      rc = SQLITE_CONSTRAINT_CHECK;
      goto done;
    }
  }else if( strcmp(zStatus, "unknown")==0 ){
    idemVtabError(p, "idem: call '%s' has an unknown outcome and is never"
        " released or completed by an ordinary UPDATE; after checking the"
        " target's records, reconcile it: UPDATE \"%w\" SET reconcile ="
        " 'arrived' (or 'not_arrived') WHERE key = '%s' AND member = 0",
        zHex, p->zName, zHex);
    rc = SQLITE_CONSTRAINT_CHECK;
    goto done;
  }else if( zNew==0 || strcmp(zNew, "pending")==0 ){
    zNew = "pending";
  }else if( strcmp(zNew, "done")==0 ){
    /* recorded below */
  }else if( strcmp(zNew, "failed")==0 || strcmp(zNew, "unknown")==0 ){
    if( strcmp(zKind, "external")==0 ){
      const char *zGiven = 0;
      if( !sqlite3_value_nochange(aCol[IDEM_COL_NOTE]) ){
        zGiven = (const char*)sqlite3_value_text(aCol[IDEM_COL_NOTE]);
      }
      zNew = "unknown";
      zNote = zGiven && zGiven[0]
        ? sqlite3_mprintf("%s (reported: %s)", IDEM_UNKNOWN_NOTE, zGiven)
        : sqlite3_mprintf("%s", IDEM_UNKNOWN_NOTE);
      if( zNote==0 ){ rc = SQLITE_NOMEM; goto done; }
    }else if( strcmp(zNew, "unknown")==0 ){
      idemVtabError(p, "idem: a local call's outcome is known: set status"
                    " to 'done' or 'failed'");
      rc = SQLITE_CONSTRAINT_CHECK;
      goto done;
    }else if( !p->bKeepLocalFailure ){
      bRelease = 1;
    }
  }else{
    idemVtabError(p, "idem: status must be 'pending', 'done' or 'failed',"
                  " not '%s'", zNew);
    rc = SQLITE_CONSTRAINT_CHECK;
    goto done;
  }

  if( bRelease ){
    unsigned char aKey[IDEM_KEY_BYTES];
    rc = idemRowKey(p, pOld, IDEM_Q_KEY, aKey);
    if( rc ) goto done;
    sqlite3_reset(pOld);
    rc = idemRelease(p, aKey, IDEM_KEY_BYTES);
    goto done;
  }

  idemNow(p, zNow);
  sqlite3_bind_int64(pRec, 1, iRid);
  sqlite3_bind_text(pRec, 2, zNew, -1, SQLITE_TRANSIENT);
  idemBindNewOrOld(pRec, 3, aCol, IDEM_COL_ID, pOld);
  idemBindNewOrOld(pRec, 4, aCol, IDEM_COL_RESULT, pOld);
  if( zNote ){
    sqlite3_bind_text(pRec, 5, zNote, -1, SQLITE_STATIC);
  }else{
    idemBindNewOrOld(pRec, 5, aCol, IDEM_COL_NOTE, pOld);
  }
  sqlite3_bind_text(pRec, 6, zNow, -1, SQLITE_STATIC);
  sqlite3_reset(pOld);
  rc = sqlite3_step(pRec);
  sqlite3_reset(pRec);
  sqlite3_clear_bindings(pRec);
  if( rc==SQLITE_DONE ){
    rc = SQLITE_OK;
  }else{
    idemVtabError(p, "idem: %s: %s", p->zName, sqlite3_errmsg(p->db));
  }

 done:
  sqlite3_reset(pOld);
  sqlite3_free(zNote);
  return rc;
}

/*
** DELETE of the row with rid iRid: a decided call (done, failed) goes with
** its whole group.  A pending or unknown call is kept: DELETE never
** releases a claim whose outcome is open (SPEC §5, §7); reconcile does.
*/
static int idemDeleteRow(IdemVtab *p, sqlite3_int64 iRid){
  sqlite3_stmt *pRow = idemStmt(p, IDEM_STMT_CALLOF);
  unsigned char aKey[IDEM_KEY_BYTES];
  int rc, bDecided;
  if( pRow==0 ) return p->rcStmt;
  sqlite3_bind_int64(pRow, 1, iRid);
  rc = sqlite3_step(pRow);
  if( rc!=SQLITE_ROW ){
    sqlite3_reset(pRow);
    if( rc==SQLITE_DONE ) return SQLITE_OK;   /* gone with its group */
    idemVtabError(p, "idem: %s: %s", p->zName, sqlite3_errmsg(p->db));
    return rc;
  }
  rc = idemRowKey(p, pRow, 0, aKey);
  /* A member without its call (a damaged database) is removable. */
  bDecided = sqlite3_column_type(pRow, 1)==SQLITE_NULL
          || idemIsDecided(idemText(pRow, 1));
  sqlite3_reset(pRow);
  if( rc || !bDecided ) return rc;
  return idemRelease(p, aKey, IDEM_KEY_BYTES);
}

static int idemUpdate(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                      sqlite3_int64 *pRowid){
  IdemVtab *p = (IdemVtab*)pVtab;
  sqlite3_value **aCol = &argv[2];

  if( argc==1 ){
    return idemDeleteRow(p, sqlite3_value_int64(argv[0]));
  }
  if( sqlite3_value_type(argv[0])==SQLITE_NULL ){
    sqlite3_value *pMember = aCol[IDEM_COL_MEMBER];
    sqlite3_int64 iMember = 0;
    if( sqlite3_value_type(argv[1])!=SQLITE_NULL ){
      idemVtabError(p, "idem: the rowid is assigned by idem; leave it out of the INSERT");
      return SQLITE_CONSTRAINT_CHECK;
    }
    if( p->zDamaged ){
      idemVtabError(p, "%s", p->zDamaged);
      return SQLITE_CORRUPT_VTAB;
    }
    if( sqlite3_value_type(pMember)!=SQLITE_NULL ){
      if( sqlite3_value_numeric_type(pMember)!=SQLITE_INTEGER
       || (iMember = sqlite3_value_int64(pMember))<0 ){
        idemVtabError(p, "idem: member must be 0 (the call) or a positive"
                      " integer (its members 1, 2, ...)");
        return SQLITE_CONSTRAINT_CHECK;
      }
    }
    if( iMember==0 ) return idemInsertClaim(p, aCol, pRowid);
    return idemInsertMember(p, aCol, iMember, pRowid);
  }
  if( sqlite3_value_int64(argv[0])!=sqlite3_value_int64(argv[1]) ){
    idemVtabError(p, "idem: the rowid cannot be changed; leave it out of the UPDATE");
    return SQLITE_CONSTRAINT_CHECK;
  }
  return idemUpdateRow(p, sqlite3_value_int64(argv[0]), aCol);
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
  int i, rc = SQLITE_OK;
  (void)isQuick; (void)zTabName;
  if( p->zDamaged ){
    *pzErr = sqlite3_mprintf("%s", p->zDamaged);
    return *pzErr ? SQLITE_OK : SQLITE_NOMEM;
  }
  for(i=0; i<(int)(sizeof(aCheck)/sizeof(aCheck[0])) && rc==SQLITE_OK; i++){
    sqlite3_stmt *pStmt = 0;
    char *zWhere = sqlite3_mprintf(aCheck[i].zWhere, zSchema, p->zName);
    char *zSql = zWhere ? sqlite3_mprintf(
        "SELECT count(*) FROM \"%w\".\"%w_claim\" x WHERE %s",
        zSchema, p->zName, zWhere) : 0;
    sqlite3_free(zWhere);
    if( zSql==0 ) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
    sqlite3_free(zSql);
    if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      sqlite3_int64 n = sqlite3_column_int64(pStmt, 0);
      if( n>0 ){
        *pzErr = sqlite3_mprintf("idem: %s: %lld %s in %s_claim",
                                 p->zName, n, aCheck[i].zWhat, p->zName);
        if( *pzErr==0 ) rc = SQLITE_NOMEM;
        sqlite3_finalize(pStmt);
        return rc;
      }
    }
    if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
    if( rc==SQLITE_NOMEM ) return rc;
    if( rc!=SQLITE_OK ){
      /* The check itself failed (no shadow table, a missing column): that
      ** is the finding.  An error returned from xIntegrity would fail the
      ** whole PRAGMA with a bare "SQL logic error". */
      *pzErr = sqlite3_mprintf("idem: %s: %s", p->zName, sqlite3_errmsg(p->db));
      return *pzErr ? SQLITE_OK : SQLITE_NOMEM;
    }
  }
  return rc;
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
  0,                    /* xBegin: the shadow table is a real table */
  0,                    /* xSync */
  0,                    /* xCommit */
  0,                    /* xRollback */
  0,                    /* xFindFunction */
  idemRename,           /* xRename: rename the shadow table */
  0,                    /* xSavepoint */
  0,                    /* xRelease */
  0,                    /* xRollbackTo */
  idemShadowName,       /* xShadowName: <name>_claim */
#if SQLITE_VERSION_NUMBER>=3044000
  idemIntegrity,        /* xIntegrity */
#endif
};

static int idemVtabRegister(sqlite3 *db){
  return sqlite3_create_module(db, "idem", &idemModule, 0);
}

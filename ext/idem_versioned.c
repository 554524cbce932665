/* SPDX-License-Identifier: MIT */
/*
** idem_versioned.c -- the version guard for ordinary tables (doc/contract.md §8):
** optimistic concurrency, kept by the database itself.
**
** USAGE
**
**   CREATE TABLE inv(sku TEXT PRIMARY KEY, qty INTEGER,
**                    ver INTEGER NOT NULL DEFAULT 0);
**   SELECT idem_versioned('inv', 'ver');          -- equip; returns 1
**   SELECT idem_versioned('aux.inv', 'ver');      -- a table in schema aux
**   SELECT idem_versioned('inv', 'ver', 'off');   -- remove; returns 0
**
**   -- A writer gives the version it read:
**   UPDATE inv SET qty = 8, ver = 0 WHERE sku = 'A0001';  -- ok: ver is 1
**   UPDATE inv SET qty = 8, ver = 0 WHERE sku = 'A0001';  -- error:
**     idem: version conflict on inv (sku='A0001'): ver is 1, the update
**     gave 0; the row changed after it was read: read it again and redo
**     the change
**   -- or leaves ver out, and the row still advances:
**   UPDATE inv SET qty = qty - 2 WHERE sku = 'A0001' AND ver = 1; -- ver 2
**
** THE RULES
**
**   1. An UPDATE that sets ver to anything but the row's current version
**      (compared with IS) fails with SQLITE_CONSTRAINT_TRIGGER, a message
**      naming the table, the row (rowid, or the PRIMARY KEY values of a
**      WITHOUT ROWID table) and both versions, and changes nothing: the
**      whole statement is rolled back, whatever its OR clause (a version
**      conflict is never ignored, replaced or half-applied).  This includes
**      SET ver = ver + 1: the version is not the writer's to choose.
**   2. Every UPDATE that succeeds advances ver by exactly one, whether it
**      named ver or not (an UPSERT's DO UPDATE too), also when the
**      application's own triggers update the same row again.  A NULL
**      version counts as 0 here: its first update makes it 1.  A row at
**      the largest integer (9223372036854775807) cannot advance: an UPDATE
**      of it fails with SQLITE_ERROR ("version overflow") and changes
**      nothing; the version never becomes a REAL.
**   3. INSERT keeps the version it is given: declare the column
**      "ver INTEGER NOT NULL DEFAULT 0" and new rows start at 0.  A
**      version that is not an integer or NULL is refused, at INSERT and,
**      for rows already there, when the guard is equipped.
**   4. INSERT OR REPLACE (REPLACE INTO) deletes and inserts: it is not an
**      UPDATE and takes the version it is given.  Use UPDATE or UPSERT on
**      versioned rows.
**
** DESIGN
**
** The guard lives in the schema, so it holds for every connection and
** survives close and reopen.  idem_versioned() creates, in the table's own
** schema:
**
**   idem_versioned_<t>_<c>_check    BEFORE UPDATE ON t
**       WHEN NEW.c IS NOT OLD.c and the change is not the guard's own step
**       (below): SELECT idem_versioned_conflict(...), which raises the
**       error.  RAISE() cannot build a message from values in SQLite 3.40,
**       hence the C function.
**   idem_versioned_<t>_<c>_advance  AFTER UPDATE ON t WHEN NEW.c IS OLD.c
**       fails (idem_versioned_conflict() with OLD.c twice: an overflow)
**       when OLD.c is the largest integer or not an integer; notes the
**       step in idem_versioned_advancing, runs
**         UPDATE t SET c = coalesce(OLD.c,0)+1 WHERE <this row> AND c IS OLD.c
**       and deletes the note.  It is kept the last trigger on t to fire
**       (idemvAdvanceLast()).
**   idem_versioned_<t>_<c>_insert   BEFORE INSERT ON t
**       RAISE(ABORT, ...) when NEW.c is neither an integer nor NULL.
**   idem_versioned_advancing(tbl, col, k, v)
**       one table per schema, shared by every guard in it: the rows whose
**       version is being advanced right now.  A row is inserted and deleted
**       inside the same statement, so the table is empty between
**       statements; it is ordinary data, so an error rolls it back with the
**       rest of the statement.
**
** Why the note: the step is itself an UPDATE that changes c from v to v+1,
** exactly like a writer's "SET ver = ver + 1", which must fail.  The only
** difference is who runs it, and a trigger cannot see that, so _advance
** writes it down and _check reads it (the note names the table, the
** column, the row and the version it leaves).
**
** Why it is right under both settings of PRAGMA recursive_triggers.  The
** step's UPDATE always fires _check (a BEFORE trigger that has finished
** is not on the trigger stack), which lets it pass because of the note.
** With recursive_triggers=OFF SQLite does not fire _advance inside
** itself; with recursive_triggers=ON it does, and _advance's WHEN (the
** version is unchanged) is false for the step, so it never loops: since
** _check refuses every other change of c, a change of c that reaches
** _advance is always the step.  The step's "AND c IS OLD.c" makes it a
** no-op when the row's version has already moved on within the statement
** (an application trigger updated the row first, and that update stepped
** it), instead of a second step.  That needs the application's triggers
** to fire before _advance: one that fired after the step and updated the
** row would be an UPDATE of the stepped row, stepped again.  SQLite fires
** a table's triggers newest first, so idem_versioned() makes _advance
** older than every other trigger on the table by creating those again,
** unchanged, after it (idemvAdvanceLast()); triggers made later are newer.
**
** Application triggers on the table see the step as an UPDATE that
** changes only c (use UPDATE OF <columns> or a WHEN to ignore it), after
** they have seen the UPDATE that caused it.
** RETURNING shows the row as the statement wrote it, before the step
** (RETURNING ver + 1 is the stored version).  sqlite3_changes() does not
** count the step; sqlite3_total_changes() does.
**
** Without the extension.  The triggers call idem_versioned_conflict(), so
** a connection that has not loaded idem cannot prepare an UPDATE of a
** guarded table: it fails with "no such function:
** idem_versioned_conflict".  That is deliberate (fail closed): an
** application without idem cannot silently lose an update.  Reads,
** INSERTs and DELETEs work without it.
**
** Trust.  idem_versioned() writes the schema, so it is SQLITE_DIRECTONLY:
** it runs only from top-level SQL, never from a trigger or a view.
** idem_versioned_conflict() only raises an error, so it is
** SQLITE_INNOCUOUS and the triggers work under PRAGMA trusted_schema=OFF.
**
** Transactions.  idem_versioned() makes its changes inside SAVEPOINT
** idem_versioned: atomically on its own, or as part of the caller's
** transaction.  On a replicated engine (dqlite) call it inside an
** explicit BEGIN ... COMMIT (doc/contract.md §7a): a write made by a function in a
** plain SELECT is not replicated otherwise.  On dqlite 1.11 the guard is
** then made on the leader alone, the client is told "1", the leader dies
** at its next request (vfsFileShmLock: Assertion `wal->n_tx == 0'), and
** the next leader has no guard.  Built with -DIDEM_REPLICATED (as the
** cluster build is, test/cluster/), idem_versioned() therefore refuses to
** run in autocommit.  A plain SQLite build keeps autocommit use.
**
** Equipping twice is harmless: triggers that are already exactly right are
** kept, others with the guard's names are replaced (an older idem), and a
** table has at most one version column.  Removal drops the three triggers;
** the empty idem_versioned_advancing table stays (drop it when no guard is
** left).  Renaming the table or the column: SQLite carries the triggers
** along, but their messages keep the old names; turn the guard off before
** the rename and on again after (equipping the new name while the old
** triggers are still there is refused: one version column per table).
** By hand:
**   SELECT name FROM sqlite_schema
**    WHERE type = 'trigger' AND name LIKE 'idem\_versioned\_%' ESCAPE '\';
**   DROP TRIGGER ...;
*/

#include "idemInt.h"

/* Names of the guard's objects. */
#define IDEMV_ADVANCING "idem_versioned_advancing"
#define IDEMV_PREFIX    "idem_versioned_"
#define IDEMV_NTRIGGER  3

/* The largest 64-bit signed integer. */
#define IDEMV_INT64_MAX (((sqlite3_int64)0x7fffffff<<32)|0xffffffff)

static const char *const azIdemvRole[IDEMV_NTRIGGER] = {
  "check", "advance", "insert"
};

/* The table and column that a call of idem_versioned() is about. */
typedef struct IdemvTarget IdemvTarget;
struct IdemvTarget {
  char *zSchema;        /* "main", "temp" or an attached schema */
  char *zTable;         /* The table's name, as declared */
  char *zColumn;        /* The version column's name, as declared */
  const char *zRowid;   /* "rowid", "_rowid_" or "oid"; 0: WITHOUT ROWID */
  int nPk;              /* WITHOUT ROWID: number of PRIMARY KEY columns */
  char **azPk;          /* WITHOUT ROWID: PRIMARY KEY columns, in key order */
};

static void idemvTargetClear(IdemvTarget *p){
  int i;
  sqlite3_free(p->zSchema);
  sqlite3_free(p->zTable);
  sqlite3_free(p->zColumn);
  for(i=0; i<p->nPk; i++) sqlite3_free(p->azPk[i]);
  sqlite3_free(p->azPk);
  memset(p, 0, sizeof(*p));
}

/*
** Append identifier z for a message: as it is when it is a plain
** identifier, else in double quotes (with "" for ").
*/
static void idemvAppendName(sqlite3_str *s, const char *z){
  int i;
  int bPlain = z[0]!=0 && !(z[0]>='0' && z[0]<='9');
  for(i=0; bPlain && z[i]; i++){
    char c = z[i];
    bPlain = (c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9')
          || c=='_';
  }
  if( bPlain ){
    sqlite3_str_appendall(s, z);
  }else{
    sqlite3_str_appendf(s, "\"%w\"", z);
  }
}

/*
** Append value v for a message, as an SQL literal: NULL, 42, 1.5, 'text'
** (with '' for '), X'0A0B'.  A long text or blob is cut after about 100
** bytes, on a UTF-8 character boundary, and marked with "...".
*/
static void idemvAppendValue(sqlite3_str *s, sqlite3_value *v){
  const int mx = 100;
  switch( sqlite3_value_type(v) ){
    case SQLITE_NULL:
      sqlite3_str_appendall(s, "NULL");
      break;
    case SQLITE_INTEGER:
      sqlite3_str_appendf(s, "%lld", sqlite3_value_int64(v));
      break;
    case SQLITE_FLOAT:
      sqlite3_str_appendf(s, "%!.15g", sqlite3_value_double(v));
      break;
    case SQLITE_TEXT: {
      const char *z = (const char*)sqlite3_value_text(v);
      int n = z ? sqlite3_value_bytes(v) : 0;
      int bCut = n>mx;
      if( bCut ){
        n = mx;
        while( n>0 && (((unsigned char)z[n])&0xc0)==0x80 ) n--;
      }
      sqlite3_str_appendf(s, "'%.*q'%s", n, z ? z : "", bCut ? "..." : "");
      break;
    }
    default: {
      const unsigned char *a = (const unsigned char*)sqlite3_value_blob(v);
      int n = sqlite3_value_bytes(v);
      int i;
      sqlite3_str_appendall(s, "X'");
      for(i=0; i<n && i<mx/2; i++) sqlite3_str_appendf(s, "%02X", a[i]);
      sqlite3_str_appendall(s, n>mx/2 ? "'..." : "'");
      break;
    }
  }
}

/*
** Append a row's identity for a message: " rowid 7" when azName is 0 (one
** value, the rowid), else " (a='x', b=2)".
*/
static void idemvAppendRow(
  sqlite3_str *s,
  int n,                       /* Number of key values */
  const char *const *azName,   /* Key column names, or 0 for the rowid */
  sqlite3_value **apVal        /* Key values */
){
  int i;
  if( azName==0 ){
    sqlite3_str_appendall(s, " rowid ");
    idemvAppendValue(s, apVal[0]);
    return;
  }
  sqlite3_str_appendall(s, " (");
  for(i=0; i<n; i++){
    if( i ) sqlite3_str_appendall(s, ", ");
    idemvAppendName(s, azName[i]);
    sqlite3_str_appendchar(s, 1, '=');
    idemvAppendValue(s, apVal[i]);
  }
  sqlite3_str_appendchar(s, 1, ')');
}

/* sqlite3_str_finish(), or 0 with SQLITE_NOMEM in *pRc. */
static char *idemvFinish(sqlite3_str *s, int *pRc){
  char *z;
  if( sqlite3_str_errcode(s) ) *pRc = SQLITE_NOMEM;
  z = sqlite3_str_finish(s);
  if( z==0 && *pRc==SQLITE_OK ) *pRc = SQLITE_NOMEM;
  return z;
}

/*
** SQL function idem_versioned_conflict(TABLE, COLUMN, CURRENT, GIVEN, KEY...)
**
** Called by the _check trigger when an UPDATE gives a version that is not
** the row's current one.  It always fails, with SQLITE_CONSTRAINT_TRIGGER
** and a message naming the table, the row and both versions.  KEY is the
** rowid (one value), or NAME, VALUE pairs of the PRIMARY KEY columns of a
** WITHOUT ROWID table.  Innocuous: it has no effect but the error.
*/
static void idemvConflictFunc(
  sqlite3_context *ctx,
  int argc,
  sqlite3_value **argv
){
  sqlite3_str *s;
  const char *zTable, *zColumn;
  const char *azName[32];
  sqlite3_value *apVal[32];
  sqlite3_value *pCur, *pGiven;
  int nKey, i, bStep, bOverflow, rc = SQLITE_OK;
  char *zMsg;

  if( (argc!=5 && (argc<6 || (argc&1))) || argc>4+2*32
   || sqlite3_value_type(argv[0])!=SQLITE_TEXT
   || sqlite3_value_type(argv[1])!=SQLITE_TEXT
  ){
    idemResultError(ctx, SQLITE_ERROR, "idem_versioned_conflict() is called"
        " by the triggers of idem_versioned(), with (table, column, current,"
        " given, rowid) or (table, column, current, given, name, value, ...)");
    return;
  }
  zTable = (const char*)sqlite3_value_text(argv[0]);
  zColumn = (const char*)sqlite3_value_text(argv[1]);
  pCur = argv[2];
  pGiven = argv[3];
  if( argc==5 ){
    nKey = 1;
    apVal[0] = argv[4];
  }else{
    nKey = (argc-4)/2;
    for(i=0; i<nKey; i++){
      azName[i] = (const char*)sqlite3_value_text(argv[4+2*i]);
      if( azName[i]==0 ) azName[i] = "?";
      apVal[i] = argv[5+2*i];
    }
  }

  /* The same value as current and given: called by _advance, the version
  ** cannot step (it is the largest integer, or not an integer at all). */
  bOverflow = sqlite3_value_type(pCur)==sqlite3_value_type(pGiven)
      && ((sqlite3_value_type(pCur)==SQLITE_INTEGER
           && sqlite3_value_int64(pCur)==sqlite3_value_int64(pGiven))
       || (sqlite3_value_type(pCur)==SQLITE_FLOAT
           && sqlite3_value_double(pCur)==sqlite3_value_double(pGiven)));

  /* Was the given version the current one plus one?  Then the writer is
  ** stepping the version itself, which the guard does. */
  bStep = 0;
  if( sqlite3_value_type(pGiven)==SQLITE_INTEGER ){
    sqlite3_int64 g = sqlite3_value_int64(pGiven);
    if( sqlite3_value_type(pCur)==SQLITE_NULL ){
      bStep = g==1;
    }else if( sqlite3_value_type(pCur)==SQLITE_INTEGER ){
      sqlite3_int64 c = sqlite3_value_int64(pCur);
      bStep = c<IDEMV_INT64_MAX && g==c+1;
    }
  }

  s = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  sqlite3_str_appendall(s, bOverflow ? "version overflow on "
                                     : "version conflict on ");
  idemvAppendName(s, zTable);
  idemvAppendRow(s, nKey, argc==5 ? 0 : azName, apVal);
  sqlite3_str_appendall(s, ": ");
  idemvAppendName(s, zColumn);
  sqlite3_str_appendall(s, " is ");
  idemvAppendValue(s, pCur);
  if( bOverflow ){
    sqlite3_str_appendall(s, sqlite3_value_type(pCur)==SQLITE_INTEGER
        ? ", the largest integer, and cannot advance"
        : ", not an integer, and cannot advance");
    sqlite3_str_appendall(s, "; the update is refused and changes nothing");
  }else{
    sqlite3_str_appendall(s, ", the update gave ");
    idemvAppendValue(s, pGiven);
  }
  if( bOverflow ){
    /* said above */
  }else if( bStep ){
    sqlite3_str_appendall(s, "; ");
    idemvAppendName(s, zColumn);
    sqlite3_str_appendall(s, " advances by itself: give the version that "
        "was read, or leave ");
    idemvAppendName(s, zColumn);
    sqlite3_str_appendall(s, " out");
  }else{
    sqlite3_str_appendall(s, "; the row changed after it was read: read it "
        "again and redo the change");
  }
  zMsg = idemvFinish(s, &rc);
  /* An overflow is not a conflict: no re-read and retry can succeed. */
  idemResultError(ctx, rc ? rc : bOverflow ? SQLITE_ERROR
                                           : SQLITE_CONSTRAINT_TRIGGER,
                  "%s", zMsg);
  sqlite3_free(zMsg);
}

/*
** Set *pzErr to a new message made from zFormat (sqlite3_mprintf()
** conventions), replacing any earlier one.  Returns rc, or SQLITE_NOMEM.
** idemvFunc() reports it through idemResultError(), which puts "idem: "
** in front.
*/
static int idemvError(int rc, char **pzErr, const char *zFormat, ...){
  va_list ap;
  sqlite3_free(*pzErr);
  va_start(ap, zFormat);
  *pzErr = sqlite3_vmprintf(zFormat, ap);
  va_end(ap);
  return *pzErr ? rc : SQLITE_NOMEM;
}

/*
** The error of a statement on db that failed with rc: "idem_versioned()
** could not <zDoing>: <SQLite's message>".
*/
static int idemvDbError(sqlite3 *db, int rc, char **pzErr, const char *zDoing){
  return idemvError(rc, pzErr, "idem_versioned() could not %s: %s",
                    zDoing, sqlite3_errmsg(db));
}

/*
** Prepare zSql (which is freed) on db.  On error *pzErr says what failed,
** and why.
*/
static int idemvPrepare(
  sqlite3 *db,
  char *zSql,
  sqlite3_stmt **ppStmt,
  char **pzErr
){
  int rc;
  *ppStmt = 0;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, ppStmt, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    rc = idemvDbError(db, rc, pzErr, "read the schema");
  }
  return rc;
}

/* The result of a sqlite3_step(): SQLITE_OK for a row or the end, else
** the error, with *pzErr set. */
static int idemvStepError(sqlite3 *db, int rc, char **pzErr){
  if( rc==SQLITE_DONE || rc==SQLITE_ROW ) return SQLITE_OK;
  return idemvDbError(db, rc, pzErr, "read the schema");
}

/*
** Run zSql (which is freed) to change the schema.  On error *pzErr says
** what failed, and why.
*/
static int idemvExec(sqlite3 *db, char *zSql, char **pzErr){
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    rc = idemvDbError(db, sqlite3_extended_errcode(db), pzErr,
                      "change the schema");
  }
  return rc;
}

/* A string copy, or 0 (with SQLITE_NOMEM in *pRc). */
static char *idemvStrdup(const char *z, int *pRc){
  char *zNew = sqlite3_mprintf("%s", z ? z : "");
  if( zNew==0 ) *pRc = SQLITE_NOMEM;
  return zNew;
}

/*
** Look up table zName in schema zSchema (0: temp first, then main, then
** the attached schemas, as SQL resolves a name).  Sets p->zSchema,
** p->zTable and *pbWithoutRowid when found; *pzType to the kind
** ("table", "view", "virtual", "shadow").  Returns SQLITE_OK whether found
** or not (p->zTable==0: not found).
*/
static int idemvFindTable(
  sqlite3 *db,
  const char *zSchema,
  const char *zName,
  IdemvTarget *p,
  char **pzType,
  int *pbWithoutRowid,
  char **pzErr
){
  sqlite3_stmt *pStmt = 0;
  int rc;
  int rcMem = SQLITE_OK;     /* SQLITE_NOMEM if an allocation failed */
  int bBest = 0;             /* 2: temp, the best; 1: another schema */
  rc = idemvPrepare(db, sqlite3_mprintf(
      "SELECT schema, name, type, wr FROM pragma_table_list"
      " WHERE name=?1 COLLATE NOCASE AND (?2 IS NULL OR schema=?2 COLLATE NOCASE)"
  ), &pStmt, pzErr);
  if( rc ) return rc;
  sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
  sqlite3_bind_text(pStmt, 2, zSchema, -1, SQLITE_STATIC);
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const char *zS = (const char*)sqlite3_column_text(pStmt, 0);
    int bThis = sqlite3_stricmp(zS, "temp")==0 ? 2 : 1;
    if( bThis<=bBest ) continue;
    bBest = bThis;
    sqlite3_free(p->zSchema);
    sqlite3_free(p->zTable);
    sqlite3_free(*pzType);
    p->zSchema = idemvStrdup(zS, &rcMem);
    p->zTable = idemvStrdup((const char*)sqlite3_column_text(pStmt, 1), &rcMem);
    *pzType = idemvStrdup((const char*)sqlite3_column_text(pStmt, 2), &rcMem);
    *pbWithoutRowid = sqlite3_column_int(pStmt, 3);
    if( rcMem ) break;
  }
  rc = rcMem ? rcMem : idemvStepError(db, rc, pzErr);
  sqlite3_finalize(pStmt);
  return rc;
}

/*
** Resolve the arguments of idem_versioned() into *p, checking that the
** table is an ordinary table and the column can be a version.
**
** zArg is "table" or "schema.table".  The text before the first '.' is
** taken as a schema when a schema of that name holds the table; otherwise
** the whole text is the table's name (so a table named "a.b" is reached
** as 'a.b', or as 'main.a.b').
*/
static int idemvResolve(
  sqlite3 *db,
  const char *zArg,
  const char *zColArg,
  IdemvTarget *p,
  char **pzErr
){
  sqlite3_stmt *pStmt = 0;
  char *zType = 0;
  char *zDeclType = 0;
  int bWithoutRowid = 0;
  int bRowid = 0, b_Rowid_ = 0, bOid = 0;  /* Columns named like the rowid */
  int bFound = 0;
  int rc = SQLITE_OK;
  int rcLoop = SQLITE_OK;   /* An error found inside the column loop */
  const char *zDot = strchr(zArg, '.');
  int i;

  memset(p, 0, sizeof(*p));
  if( zDot ){
    char *zSchema = sqlite3_mprintf("%.*s", (int)(zDot-zArg), zArg);
    if( zSchema==0 ) return SQLITE_NOMEM;
    rc = idemvFindTable(db, zSchema, zDot+1, p, &zType, &bWithoutRowid, pzErr);
    sqlite3_free(zSchema);
    if( rc ) goto resolve_done;
  }
  if( p->zTable==0 ){
    rc = idemvFindTable(db, 0, zArg, p, &zType, &bWithoutRowid, pzErr);
    if( rc ) goto resolve_done;
  }
  if( p->zTable==0 ){
    rc = idemvError(SQLITE_ERROR, pzErr, "no such table: %s", zArg);
    goto resolve_done;
  }
  if( sqlite3_stricmp(zType, "view")==0 ){
    rc = idemvError(SQLITE_ERROR, pzErr, "%s is a view; a version "
        "column belongs to an ordinary table", p->zTable);
    goto resolve_done;
  }
  if( sqlite3_stricmp(zType, "virtual")==0 ){
    rc = idemvError(SQLITE_ERROR, pzErr, "%s is a virtual table; a "
        "version column belongs to an ordinary table", p->zTable);
    goto resolve_done;
  }
  if( sqlite3_stricmp(zType, "table")!=0 ){
    rc = idemvError(SQLITE_ERROR, pzErr, "%s is a %s table, kept by "
        "its owner; a version column belongs to an ordinary table",
        p->zTable, zType);
    goto resolve_done;
  }
  if( sqlite3_strnicmp(p->zTable, "sqlite_", 7)==0
   || sqlite3_stricmp(p->zTable, IDEMV_ADVANCING)==0
  ){
    rc = idemvError(SQLITE_ERROR, pzErr, "%s is an internal table; a "
        "version column belongs to an ordinary table", p->zTable);
    goto resolve_done;
  }

  /* The columns: the version column, the primary key, the rowid's names. */
  rc = idemvPrepare(db, sqlite3_mprintf(
      "SELECT name, type, pk, hidden FROM pragma_table_xinfo(?1, ?2)"
      " ORDER BY pk"
  ), &pStmt, pzErr);
  if( rc ) goto resolve_done;
  sqlite3_bind_text(pStmt, 1, p->zTable, -1, SQLITE_STATIC);
  sqlite3_bind_text(pStmt, 2, p->zSchema, -1, SQLITE_STATIC);
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const char *zName = (const char*)sqlite3_column_text(pStmt, 0);
    int iPk = sqlite3_column_int(pStmt, 2);
    int iHidden = sqlite3_column_int(pStmt, 3);
    if( zName==0 ){ rcLoop = SQLITE_NOMEM; break; }
    if( sqlite3_stricmp(zName, "rowid")==0 ) bRowid = 1;
    if( sqlite3_stricmp(zName, "_rowid_")==0 ) b_Rowid_ = 1;
    if( sqlite3_stricmp(zName, "oid")==0 ) bOid = 1;
    if( !bFound && sqlite3_stricmp(zName, zColArg)==0 ){
      const char *zDecl = (const char*)sqlite3_column_text(pStmt, 1);
      bFound = 1;
      p->zColumn = idemvStrdup(zName, &rcLoop);
      zDeclType = idemvStrdup(zDecl, &rcLoop);
      if( rcLoop ) break;
      if( iHidden ){
        rcLoop = idemvError(SQLITE_ERROR, pzErr, "%s.%s is a "
            "generated column; a version must be an ordinary column",
            p->zTable, p->zColumn);
        break;
      }
      if( iPk ){
        rcLoop = idemvError(SQLITE_ERROR, pzErr, "%s.%s is part of "
            "the PRIMARY KEY; a version must be an ordinary column",
            p->zTable, p->zColumn);
        break;
      }
    }
    if( iPk && bWithoutRowid ){
      char **azNew = sqlite3_realloc64(p->azPk, sizeof(char*)*(p->nPk+1));
      if( azNew==0 ){ rcLoop = SQLITE_NOMEM; break; }
      p->azPk = azNew;
      p->azPk[p->nPk] = idemvStrdup(zName, &rcLoop);
      if( rcLoop ) break;
      p->nPk++;
    }
  }
  rc = rcLoop ? rcLoop : idemvStepError(db, rc, pzErr);
  if( rc ) goto resolve_done;
  if( !bFound ){
    rc = idemvError(SQLITE_ERROR, pzErr, "table %s has no column "
        "named %s", p->zTable, zColArg);
    goto resolve_done;
  }

  /* INTEGER affinity: the declared type contains "INT" (SQLite's rule). */
  for(i=0; zDeclType[i]; i++){
    if( sqlite3_strnicmp(&zDeclType[i], "int", 3)==0 ) break;
  }
  if( zDeclType[i]==0 ){
    if( zDeclType[0] ){
      rc = idemvError(SQLITE_ERROR, pzErr, "%s.%s is declared %s; a "
          "version column must have INTEGER affinity (declare it %s INTEGER "
          "NOT NULL DEFAULT 0)", p->zTable, p->zColumn, zDeclType, p->zColumn);
    }else{
      rc = idemvError(SQLITE_ERROR, pzErr, "%s.%s is declared without "
          "a type; a version column must have INTEGER affinity (declare it "
          "%s INTEGER NOT NULL DEFAULT 0)", p->zTable, p->zColumn, p->zColumn);
    }
    goto resolve_done;
  }

  if( !bWithoutRowid ){
    p->zRowid = !bRowid ? "rowid" : !b_Rowid_ ? "_rowid_" : !bOid ? "oid" : 0;
    if( p->zRowid==0 ){
      rc = idemvError(SQLITE_ERROR, pzErr, "%s has columns named "
          "rowid, _rowid_ and oid, so its rowid cannot be named; rename one "
          "of them", p->zTable);
      goto resolve_done;
    }
  }else if( p->nPk==0 ){
    rc = idemvError(SQLITE_ERROR, pzErr, "%s is WITHOUT ROWID but "
        "has no PRIMARY KEY", p->zTable);
    goto resolve_done;
  }

resolve_done:
  sqlite3_finalize(pStmt);
  sqlite3_free(zType);
  sqlite3_free(zDeclType);
  return rc;
}

/* Append the row's key over zRef ("NEW" or "OLD"): the rowid, the one
** PRIMARY KEY column, or quote()s of the key columns joined by ','. */
static void idemvAppendKeyExpr(sqlite3_str *s, IdemvTarget *p, const char *zRef){
  int i;
  if( p->zRowid ){
    sqlite3_str_appendf(s, "%s.\"%w\"", zRef, p->zRowid);
  }else if( p->nPk==1 ){
    sqlite3_str_appendf(s, "%s.\"%w\"", zRef, p->azPk[0]);
  }else{
    for(i=0; i<p->nPk; i++){
      sqlite3_str_appendf(s, "%squote(%s.\"%w\")", i ? "||','||" : "",
          zRef, p->azPk[i]);
    }
  }
}

/* Append the row's key as idem_versioned_conflict() takes it: OLD's
** rowid, or 'name',OLD."name" for each PRIMARY KEY column. */
static void idemvAppendKeyArgs(sqlite3_str *s, IdemvTarget *p){
  int i;
  if( p->zRowid ){
    sqlite3_str_appendf(s, "OLD.\"%w\"", p->zRowid);
  }else{
    for(i=0; i<p->nPk; i++){
      sqlite3_str_appendf(s, "%s%Q,OLD.\"%w\"", i ? "," : "",
          p->azPk[i], p->azPk[i]);
    }
  }
}

/*
** The text of trigger iRole (0: check, 1: advance, 2: insert) after
** "CREATE TRIGGER <name> ", as SQLite stores it.
*/
static char *idemvTriggerBody(IdemvTarget *p, int iRole, int *pRc){
  sqlite3_str *s = sqlite3_str_new(0);
  const char *T = p->zTable, *C = p->zColumn;
  int i;
  switch( iRole ){
    case 0:   /* check */
      sqlite3_str_appendf(s,
          "BEFORE UPDATE ON \"%w\"\n"
          "WHEN NEW.\"%w\" IS NOT OLD.\"%w\" AND NOT EXISTS(\n"
          "  SELECT 1 FROM \"" IDEMV_ADVANCING "\"\n"
          "   WHERE tbl=%Q AND col=%Q AND k=", T, C, C, T, C);
      idemvAppendKeyExpr(s, p, "OLD");
      sqlite3_str_appendf(s,
          " AND v IS OLD.\"%w\"\n"
          "     AND NEW.\"%w\" IS coalesce(OLD.\"%w\",0)+1)\n"
          "BEGIN\n"
          "  SELECT idem_versioned_conflict(%Q,%Q,OLD.\"%w\",NEW.\"%w\",",
          C, C, C, T, C, C, C);
      idemvAppendKeyArgs(s, p);
      sqlite3_str_appendall(s, ");\nEND");
      break;

    case 1:   /* advance */
      sqlite3_str_appendf(s,
          "AFTER UPDATE ON \"%w\"\n"
          "WHEN NEW.\"%w\" IS OLD.\"%w\"\n"
          "BEGIN\n"
          "  SELECT idem_versioned_conflict(%Q,%Q,OLD.\"%w\",OLD.\"%w\",",
          T, C, C, T, C, C, C);
      idemvAppendKeyArgs(s, p);
      sqlite3_str_appendf(s, ")\n"
          "   WHERE typeof(OLD.\"%w\") NOT IN ('integer','null')"
          " OR OLD.\"%w\">=%lld;\n"
          "  INSERT INTO \"" IDEMV_ADVANCING "\"(tbl,col,k,v)"
          " VALUES(%Q,%Q,", C, C, IDEMV_INT64_MAX, T, C);
      idemvAppendKeyExpr(s, p, "NEW");
      sqlite3_str_appendf(s, ",OLD.\"%w\");\n"
          "  UPDATE \"%w\" SET \"%w\"=coalesce(OLD.\"%w\",0)+1\n"
          "   WHERE ", C, T, C, C);
      if( p->zRowid ){
        sqlite3_str_appendf(s, "\"%w\"=NEW.\"%w\"", p->zRowid, p->zRowid);
      }else{
        for(i=0; i<p->nPk; i++){
          sqlite3_str_appendf(s, "%s\"%w\"=NEW.\"%w\"", i ? " AND " : "",
              p->azPk[i], p->azPk[i]);
        }
      }
      sqlite3_str_appendf(s, " AND \"%w\" IS OLD.\"%w\";\n"
          "  DELETE FROM \"" IDEMV_ADVANCING "\"\n"
          "   WHERE tbl=%Q AND col=%Q AND k=", C, C, T, C);
      idemvAppendKeyExpr(s, p, "NEW");
      sqlite3_str_appendf(s, " AND v IS OLD.\"%w\";\nEND", C);
      break;

    default: {  /* insert */
      sqlite3_str *m = sqlite3_str_new(0);
      char *zMsg;
      sqlite3_str_appendall(m, "idem: ");
      idemvAppendName(m, T);
      sqlite3_str_appendchar(m, 1, '.');
      idemvAppendName(m, C);
      sqlite3_str_appendall(m, " is the row's version and must be an "
          "integer (or NULL); a new row starts at 0");
      zMsg = idemvFinish(m, pRc);
      sqlite3_str_appendf(s,
          "BEFORE INSERT ON \"%w\"\n"
          "WHEN typeof(NEW.\"%w\") NOT IN ('integer','null')\n"
          "BEGIN\n"
          "  SELECT RAISE(ABORT,%Q);\n"
          "END", T, C, zMsg ? zMsg : "");
      sqlite3_free(zMsg);
      break;
    }
  }
  return idemvFinish(s, pRc);
}

/* The name of trigger iRole: idem_versioned_<table>_<column>_<role>. */
static char *idemvTriggerName(IdemvTarget *p, int iRole, int *pRc){
  char *z = sqlite3_mprintf(IDEMV_PREFIX "%s_%s_%s", p->zTable, p->zColumn,
      azIdemvRole[iRole]);
  if( z==0 ) *pRc = SQLITE_NOMEM;
  return z;
}

/*
** Look up trigger zName in p's schema.  *pzTbl and *pzSql are set to its
** table and text (sqlite3_free() them), or to 0 when there is none.
*/
static int idemvTriggerLookup(
  sqlite3 *db,
  IdemvTarget *p,
  const char *zName,
  char **pzTbl,
  char **pzSql,
  char **pzErr
){
  sqlite3_stmt *pStmt;
  int rc;
  *pzTbl = *pzSql = 0;
  rc = idemQueryRow(db, &pStmt, "SELECT tbl_name, sql FROM \"%w\".sqlite_schema"
      " WHERE type='trigger' AND name=%Q COLLATE NOCASE", p->zSchema, zName);
  if( rc==SQLITE_ROW ){
    rc = SQLITE_OK;
    *pzTbl = idemvStrdup((const char*)sqlite3_column_text(pStmt, 0), &rc);
    *pzSql = idemvStrdup((const char*)sqlite3_column_text(pStmt, 1), &rc);
  }else{
    rc = idemvStepError(db, rc, pzErr);
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/*
** Bind the table (?1) and the names of its guard's three triggers (?2, ?3,
** ?4) to a query of its triggers.  SQLITE_OK, or the error with *pzErr.
*/
static int idemvBindGuard(
  sqlite3 *db,
  sqlite3_stmt *pStmt,
  IdemvTarget *p,
  char **azName,
  char **pzErr
){
  int rc = sqlite3_bind_text(pStmt, 1, p->zTable, -1, SQLITE_STATIC);
  int i;
  for(i=0; i<3 && rc==SQLITE_OK; i++){
    rc = sqlite3_bind_text(pStmt, 2+i, azName[i], -1, SQLITE_STATIC);
  }
  return rc==SQLITE_OK ? rc : idemvDbError(db, rc, pzErr, "read the schema");
}

/*
** Refuse to equip when the table already has a guard on another column
** (a trigger on it named idem_versioned_... that is not one of ours).
*/
static int idemvCheckOtherGuard(
  sqlite3 *db,
  IdemvTarget *p,
  char **azName,
  char **pzErr
){
  sqlite3_stmt *pStmt;
  int rc;
  rc = idemQueryRow(db, &pStmt, "SELECT name FROM \"%w\".sqlite_schema"
      " WHERE type='trigger' AND tbl_name=%Q COLLATE NOCASE"
      "   AND name LIKE 'idem\\_versioned\\_%%' ESCAPE '\\'"
      "   AND name COLLATE NOCASE NOT IN (%Q,%Q,%Q)",
      p->zSchema, p->zTable, azName[0], azName[1], azName[2]);
  if( rc==SQLITE_ROW ){
    rc = idemvError(SQLITE_ERROR, pzErr, "%s already has a version "
        "column guarded by trigger %s; a table has one version column: turn "
        "that guard off first", p->zTable, sqlite3_column_text(pStmt, 0));
  }else{
    rc = idemvStepError(db, rc, pzErr);
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/*
** Refuse to equip a column holding a version that is neither an integer
** nor NULL: the guard could not step it by one.
*/
static int idemvCheckData(sqlite3 *db, IdemvTarget *p, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  sqlite3_str *s = sqlite3_str_new(db);
  int rc = SQLITE_OK;
  int i;
  char *zSql;
  sqlite3_str_appendf(s, "SELECT \"%w\"", p->zColumn);
  if( p->zRowid ){
    sqlite3_str_appendf(s, ",\"%w\"", p->zRowid);
  }else{
    for(i=0; i<p->nPk; i++) sqlite3_str_appendf(s, ",\"%w\"", p->azPk[i]);
  }
  sqlite3_str_appendf(s, " FROM \"%w\".\"%w\""
      " WHERE typeof(\"%w\") NOT IN ('integer','null') LIMIT 1",
      p->zSchema, p->zTable, p->zColumn);
  zSql = idemvFinish(s, &rc);
  if( rc ) return rc;
  rc = idemQueryRow(db, &pStmt, "%s", zSql);
  sqlite3_free(zSql);
  if( rc==SQLITE_ROW ){
    sqlite3_value *apVal[64];
    int n = sqlite3_column_count(pStmt) - 1;
    char *zRow;
    if( n>64 ) n = 64;
    for(i=0; i<n; i++) apVal[i] = sqlite3_column_value(pStmt, i+1);
    s = sqlite3_str_new(db);
    idemvAppendName(s, p->zTable);
    idemvAppendRow(s, n, p->zRowid ? 0 : (const char*const*)p->azPk, apVal);
    sqlite3_str_appendall(s, " has ");
    idemvAppendValue(s, sqlite3_column_value(pStmt, 0));
    rc = SQLITE_OK;
    zRow = idemvFinish(s, &rc);
    if( rc==SQLITE_OK ){
      rc = idemvError(SQLITE_CONSTRAINT, pzErr, "%s.%s holds versions, "
          "which must be integers (or NULL), but %s; make it an integer, "
          "then call idem_versioned() again", p->zTable, p->zColumn, zRow);
    }
    sqlite3_free(zRow);
  }else{
    rc = idemvStepError(db, rc, pzErr);
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/*
** Make _advance (named zAdvance) the last AFTER trigger on the table to
** fire, so that one UPDATE steps a row once.  SQLite fires a table's
** triggers newest first (in the reverse order of their rows in
** sqlite_schema, also after a reopen).  An application trigger that fires
** after _advance and updates the same row would make a second UPDATE of
** it after the step, and so a second step; one that fires before it has
** its UPDATE stepped once, and _advance then finds the row moved on (its
** "AND c IS OLD.c") and steps nothing.  So every other trigger on the
** table that is older than _advance is dropped and created again, from
** its own text, in its order: the application's triggers stay exactly as
** they were, newer than _advance.  (Triggers made later are newer anyway;
** TEMP triggers on the table fire before the schema's own.)  SQLite
** stores a trigger's text as "CREATE TRIGGER " followed by its name
** unqualified, so the schema is put back in front of the name.
*/
static int idemvAdvanceLast(
  sqlite3 *db,
  IdemvTarget *p,
  char **azName,
  char **pzErr
){
  sqlite3_stmt *pStmt = 0;
  char **azRedo = 0;          /* name, sql, name, sql, ... */
  int nRedo = 0;
  int rc, i;
  rc = idemvPrepare(db, sqlite3_mprintf(
      "SELECT name, sql FROM \"%w\".sqlite_schema"
      " WHERE type='trigger' AND tbl_name=?1 COLLATE NOCASE"
      "   AND name COLLATE NOCASE NOT IN (?2,?3,?4)"
      "   AND rowid<(SELECT rowid FROM \"%w\".sqlite_schema"
      "              WHERE type='trigger' AND name=?3 COLLATE NOCASE)"
      " ORDER BY rowid", p->zSchema, p->zSchema
  ), &pStmt, pzErr);
  if( rc==SQLITE_OK ) rc = idemvBindGuard(db, pStmt, p, azName, pzErr);
  if( rc ){ sqlite3_finalize(pStmt); return rc; }
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    char **azNew = sqlite3_realloc64(azRedo, sizeof(char*)*(nRedo+2));
    if( azNew==0 ){ rc = SQLITE_NOMEM; break; }
    azRedo = azNew;
    rc = SQLITE_OK;
    azRedo[nRedo] = idemvStrdup((const char*)sqlite3_column_text(pStmt, 0), &rc);
    azRedo[nRedo+1] = idemvStrdup((const char*)sqlite3_column_text(pStmt, 1), &rc);
    nRedo += 2;
    if( rc ) break;
  }
  if( rc!=SQLITE_NOMEM ) rc = idemvStepError(db, rc, pzErr);
  sqlite3_finalize(pStmt);
  for(i=0; rc==SQLITE_OK && i<nRedo; i+=2){
    const char *zSql = azRedo[i+1];
    if( sqlite3_strnicmp(zSql, "CREATE TRIGGER ", 15)!=0 ){
      rc = idemvError(SQLITE_ERROR, pzErr, "trigger %s on %s must fire"
          " before the version guard, and its text cannot be read to create"
          " it again; drop it, call idem_versioned(), then create it again",
          azRedo[i], p->zTable);
      break;
    }
    rc = idemvExec(db, sqlite3_mprintf("DROP TRIGGER \"%w\".\"%w\"",
          p->zSchema, azRedo[i]), pzErr);
    if( rc==SQLITE_OK ){
      rc = idemvExec(db, sqlite3_mprintf("CREATE TRIGGER \"%w\".%s",
            p->zSchema, zSql+15), pzErr);
    }
  }
  for(i=0; i<nRedo; i++) sqlite3_free(azRedo[i]);
  sqlite3_free(azRedo);
  return rc;
}

/*
** Equip (bOn) or remove the guard of *p.  Runs inside the caller's
** savepoint.
*/
static int idemvApply(sqlite3 *db, IdemvTarget *p, int bOn, char **pzErr){
  char *azName[IDEMV_NTRIGGER] = {0, 0, 0};
  char *zBody = 0, *zTbl = 0, *zSql = 0, *zWant = 0;
  int rc = SQLITE_OK;
  int i;

  for(i=0; i<IDEMV_NTRIGGER; i++) azName[i] = idemvTriggerName(p, i, &rc);
  if( rc ) goto apply_done;

  if( bOn ){
    rc = idemvCheckOtherGuard(db, p, azName, pzErr);
    if( rc==SQLITE_OK ) rc = idemvCheckData(db, p, pzErr);
    if( rc==SQLITE_OK ){
      rc = idemvExec(db, sqlite3_mprintf(
          "CREATE TABLE IF NOT EXISTS \"%w\".\"" IDEMV_ADVANCING "\""
          "(tbl TEXT, col TEXT, k, v)", p->zSchema), pzErr);
    }
    if( rc ) goto apply_done;
  }

  for(i=0; i<IDEMV_NTRIGGER; i++){
    rc = idemvTriggerLookup(db, p, azName[i], &zTbl, &zSql, pzErr);
    if( rc ) goto apply_done;
    if( zTbl && sqlite3_stricmp(zTbl, p->zTable)!=0 ){
      rc = idemvError(SQLITE_ERROR, pzErr, "a trigger named %s "
          "already exists, on table %s; drop or rename it, then call "
          "idem_versioned() again", azName[i], zTbl);
      goto apply_done;
    }
    if( bOn ){
      zBody = idemvTriggerBody(p, i, &rc);
      if( rc ) goto apply_done;
      zWant = sqlite3_mprintf("CREATE TRIGGER \"%w\" %s", azName[i], zBody);
      if( zWant==0 ){ rc = SQLITE_NOMEM; goto apply_done; }
      if( zSql==0 || strcmp(zSql, zWant)!=0 ){
        if( zSql ){
          rc = idemvExec(db, sqlite3_mprintf("DROP TRIGGER \"%w\".\"%w\"",
                p->zSchema, azName[i]), pzErr);
          if( rc ) goto apply_done;
        }
        rc = idemvExec(db, sqlite3_mprintf("CREATE TRIGGER \"%w\".\"%w\" %s",
              p->zSchema, azName[i], zBody), pzErr);
        if( rc ) goto apply_done;
      }
    }else if( zSql ){
      rc = idemvExec(db, sqlite3_mprintf("DROP TRIGGER \"%w\".\"%w\"",
            p->zSchema, azName[i]), pzErr);
      if( rc ) goto apply_done;
    }
    sqlite3_free(zBody);  zBody = 0;
    sqlite3_free(zWant);  zWant = 0;
    sqlite3_free(zTbl);   zTbl = 0;
    sqlite3_free(zSql);   zSql = 0;
  }
  if( bOn ) rc = idemvAdvanceLast(db, p, azName, pzErr);

apply_done:
  for(i=0; i<IDEMV_NTRIGGER; i++) sqlite3_free(azName[i]);
  sqlite3_free(zBody);
  sqlite3_free(zWant);
  sqlite3_free(zTbl);
  sqlite3_free(zSql);
  return rc;
}

/*
** SQL function idem_versioned(TABLE, COLUMN [, 'on' | 'off'])
**
** Equips (returns 1) or removes (returns 0) the version guard of integer
** column COLUMN of ordinary table TABLE ("table" or "schema.table").
** Writes the schema, atomically, inside SAVEPOINT idem_versioned.
*/
static void idemvFunc(
  sqlite3_context *ctx,
  int argc,
  sqlite3_value **argv
){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_stmt *pUndo = 0, *pEnd = 0, *pRollback = 0;
  IdemvTarget tgt;
  char *zErr = 0;
  int rc = SQLITE_OK;
  int bOn = 1;
  int bSavepoint = 0;
  int bAutocommit = sqlite3_get_autocommit(db);
  const char *zTable, *zColumn;

  memset(&tgt, 0, sizeof(tgt));
  if( sqlite3_value_type(argv[0])==SQLITE_NULL
   || sqlite3_value_type(argv[1])==SQLITE_NULL
   || (argc>2 && sqlite3_value_type(argv[2])==SQLITE_NULL)
  ){
    rc = idemvError(SQLITE_MISUSE, &zErr, "idem_versioned(table, "
        "column [, 'on' | 'off']) takes names, not NULL");
    goto func_done;
  }
  zTable = (const char*)sqlite3_value_text(argv[0]);
  zColumn = (const char*)sqlite3_value_text(argv[1]);
  if( zTable==0 || zColumn==0 ){ rc = SQLITE_NOMEM; goto func_done; }
  if( argc>2 ){
    const char *zMode = (const char*)sqlite3_value_text(argv[2]);
    if( zMode==0 ){ rc = SQLITE_NOMEM; goto func_done; }
    if( sqlite3_stricmp(zMode, "off")==0 ){
      bOn = 0;
    }else if( sqlite3_stricmp(zMode, "on")!=0 ){
      rc = idemvError(SQLITE_MISUSE, &zErr, "the third argument of "
          "idem_versioned() is 'on' or 'off', not '%q'", zMode);
      goto func_done;
    }
  }

#ifdef IDEM_REPLICATED
  /* Built for a replicated engine: a write from a plain SELECT in
  ** autocommit would stay on this node (see "Transactions" above). */
  if( bAutocommit ){
    rc = idemvError(SQLITE_MISUSE, &zErr, "idem_versioned() writes the"
        " schema: call it inside BEGIN ... COMMIT");
    goto func_done;
  }
#endif
  if( bOn ){
    /* The guard is made of triggers: on a connection that has them
    ** switched off it would not hold, and an UPDATE here would go through
    ** unguarded (doc/versioned.md, "Where the guard does not hold"). */
    int bTriggers = 1;
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, -1, &bTriggers);
    if( !bTriggers ){
      rc = idemvError(SQLITE_MISUSE, &zErr, "idem_versioned(): triggers are"
          " switched off on this connection (SQLITE_DBCONFIG_ENABLE_TRIGGER"
          " is 0): the guard is made of triggers, and no UPDATE from this"
          " connection would be guarded; switch them on"
          " (sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 1, 0))");
      goto func_done;
    }
  }
  rc = idemvResolve(db, zTable, zColumn, &tgt, &zErr);
  if( rc ) goto func_done;
  /* The way back, prepared before anything is written: after an
  ** out-of-memory error inside this function SQLite prepares nothing more
  ** until the calling statement ends. */
  rc = sqlite3_prepare_v2(db, "ROLLBACK TO idem_versioned", -1, &pUndo, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_prepare_v2(db, "RELEASE idem_versioned", -1, &pEnd, 0);
  }
  if( rc==SQLITE_OK && bAutocommit ){
    rc = sqlite3_prepare_v2(db, "ROLLBACK", -1, &pRollback, 0);
  }
  if( rc ) goto func_done;
  rc = idemvExec(db, sqlite3_mprintf("SAVEPOINT idem_versioned"), &zErr);
  if( rc ) goto func_done;
  bSavepoint = 1;
  rc = idemvApply(db, &tgt, bOn, &zErr);
  if( rc ) goto func_done;
  rc = idemvExec(db, sqlite3_mprintf("RELEASE idem_versioned"), &zErr);
  if( rc==SQLITE_OK ) bSavepoint = 0;

func_done:
  if( bSavepoint ){
    sqlite3_step(pUndo);
    sqlite3_step(pEnd);
    if( bAutocommit && !sqlite3_get_autocommit(db) ) sqlite3_step(pRollback);
  }
  sqlite3_finalize(pUndo);
  sqlite3_finalize(pEnd);
  sqlite3_finalize(pRollback);
  if( rc ){
    idemResultError(ctx, rc, "%s", zErr ? zErr : "idem_versioned() failed");
  }else{
    sqlite3_result_int(ctx, bOn);
  }
  sqlite3_free(zErr);
  idemvTargetClear(&tgt);
}

IDEM_PRIVATE int idemVersionedRegister(sqlite3 *db){
  int rc;
  rc = sqlite3_create_function(db, "idem_versioned", 2,
      SQLITE_UTF8|SQLITE_DIRECTONLY, 0, idemvFunc, 0, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "idem_versioned", 3,
        SQLITE_UTF8|SQLITE_DIRECTONLY, 0, idemvFunc, 0, 0);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "idem_versioned_conflict", -1,
        SQLITE_UTF8|SQLITE_INNOCUOUS, 0, idemvConflictFunc, 0, 0);
  }
  return rc;
}

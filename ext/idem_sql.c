/* SPDX-License-Identifier: MIT */
/*
** idem_sql.c -- what every part that speaks to SQLite shares, below them
** all: the conversions of SQL values, the one-row query, the one way an
** SQL function reports an error, and what a compiled program opens.
**
**   idemValueUtf8(pVal, &n)          the bytes of a TEXT value, no copy
**   idemJsonNumberText(pVal, zOut)   an INTEGER or REAL as its JSON text
**   idemValueInt64(pVal, &i)         the integer a value equals, as SQL
**                                    compares it with an INTEGER column
**   idemQueryRow(db, &pStmt, zFmt, ...)
**                                    prepare a query and step to its row
**   idemDbUtf8(db)                   whether the database's text is UTF-8
**   idemStepWrite(pStmt)             step an INSERT, UPDATE or DELETE to
**                                    its end
**   idemTokenNext(&z, &tok), idemTokenName(&tok, zOut, nOut),
**   idemSqlDiff(zFound, zWant, &bNoMem)
**                                    SQL text as tokens, two texts compared
**   idemResultError(ctx, rc, zFmt, ...)
**                                    an SQL function's error: "idem: ..."
**   idemRootsHas(pR, iDb, iRoot), idemExplainTouches(db, pR, zSql, &b),
**   idemInsertProgram(pEx, pR, zName, &zWhy)
**                                    what a compiled program opens, from
**                                    its EXPLAIN listing
**
** A table's errors have their own helper, which names the table
** (idemVtabError()).
*/
#include "idemInt.h"

/* ------------------------------------------------------------ values */

/*
** The UTF-8 bytes of the TEXT value pVal, and their number in *pn,
** without the copy that sqlite3_value_text() makes of a bound value to
** add a terminator: sqlite3_value_bytes() converts a UTF-16 value to
** UTF-8 in place (a UTF-16 database), after which sqlite3_value_blob()
** gives the bytes as they are.  The result need not be terminated.  NULL
** means out of memory.
*/
IDEM_PRIVATE const char *idemValueUtf8(sqlite3_value *pVal, int *pn){
  int n = sqlite3_value_bytes(pVal);
  const char *z;
  if( n==0 ){
    /* Empty, or a conversion that failed: value_text() tells which. */
    *pn = 0;
    return (const char*)sqlite3_value_text(pVal);
  }
  z = (const char*)sqlite3_value_blob(pVal);
  *pn = z ? n : 0;
  return z;
}

/*
** The JSON text of an SQL integer or real (doc/contract.md §2, §3): an
** integer as its decimal digits, a real as ECMAScript prints that double
** (the printer of canonical JSON: 42.0 gives "42", 0.30000000000000004
** keeps every digit), never SQLite's 15-digit text of a real.  pVal must
** be SQLITE_INTEGER or SQLITE_FLOAT.  Writes zOut (IDEM_JSON_NUMBUF bytes,
** zero-terminated) and returns its length, or -1 for a real that is not
** finite (Inf, -Inf), which has no JSON form.
*/
IDEM_PRIVATE int idemJsonNumberText(sqlite3_value *pVal, char *zOut){
  if( sqlite3_value_type(pVal)==SQLITE_INTEGER ){
    sqlite3_snprintf(IDEM_JSON_NUMBUF, zOut, "%lld", sqlite3_value_int64(pVal));
    return (int)strlen(zOut);
  }else{
    double v = sqlite3_value_double(pVal);
    sqlite3_uint64 bits;
    int n;
    memcpy(&bits, &v, sizeof(bits));
    if( ((bits>>52) & 0x7ff)==0x7ff ) return -1;
    n = idemNumberFormat(v, zOut);
    zOut[n] = 0;
    return n;
  }
}

/*
** Text under numeric affinity, the conversion SQLite applies to text
** compared with an INTEGER column: 1 and *piOut for an integer literal in
** range (spaces around it and a sign allowed: ' 2 ', '-0', '+3'), 2 for
** any other decimal literal ('2.0', '20e-1', an integer out of range),
** which SQLite makes a REAL, 0 for text that is no number ('0x2', '2a').
** (sqlite3_value_numeric_type() on a copy of the value would say it, but
** a copy has no connection, which SQLite 3.53 dereferences there.)
*/
static int idemTextNumeric(const unsigned char *z, int n, sqlite3_int64 *piOut){
  const unsigned char *zEnd = z + n;
  int bNeg = 0, bDot = 0, bAny = 0, bReal = 0;
  sqlite3_uint64 v = 0;
  while( z<zEnd && (*z==' ' || (*z>='\t' && *z<='\r')) ) z++;
  while( zEnd>z && (zEnd[-1]==' ' || (zEnd[-1]>='\t' && zEnd[-1]<='\r')) ) zEnd--;
  if( z<zEnd && (*z=='+' || *z=='-') ){ bNeg = *z=='-'; z++; }
  for(; z<zEnd; z++){
    if( *z=='.' ){
      if( bDot ) return 0;
      bDot = bReal = 1;
      continue;
    }
    if( *z<'0' || *z>'9' ) break;
    bAny = 1;
    if( !bReal ){
      if( v>(UINT64_MAX-(sqlite3_uint64)(*z-'0'))/10 ){
        bReal = 1;                     /* beyond 64 bits: a REAL */
      }else{
        v = v*10 + (sqlite3_uint64)(*z-'0');
      }
    }
  }
  if( !bAny ) return 0;
  if( z<zEnd && (*z=='e' || *z=='E') ){
    int bExp = 0;
    bReal = 1;
    z++;
    if( z<zEnd && (*z=='+' || *z=='-') ) z++;
    for(; z<zEnd && *z>='0' && *z<='9'; z++) bExp = 1;
    if( !bExp ) return 0;
  }
  if( z!=zEnd ) return 0;
  if( bReal ) return 2;
  if( bNeg ){
    if( v>(sqlite3_uint64)1<<63 ) return 2;
    *piOut = (sqlite3_int64)(0 - v);    /* two's complement: -2^63 too */
  }else{
    if( v>((sqlite3_uint64)1<<63)-1 ) return 2;
    *piOut = (sqlite3_int64)v;
  }
  return 1;
}

/* A double that is a whole number in int64's range: 1 and *piOut, or 0. */
static int idemDoubleInt64(double r, sqlite3_int64 *piOut){
  if( r>=-9223372036854775808.0 && r<9223372036854775808.0
   && (double)(sqlite3_int64)r==r ){
    *piOut = (sqlite3_int64)r;
    return 1;
  }
  return 0;
}

IDEM_PRIVATE int idemValueInt64(sqlite3_value *pVal, sqlite3_int64 *piOut){
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_INTEGER:
      *piOut = sqlite3_value_int64(pVal);
      return 1;
    case SQLITE_FLOAT:
      return idemDoubleInt64(sqlite3_value_double(pVal), piOut);
    case SQLITE_TEXT: {
      const unsigned char *z = sqlite3_value_text(pVal);
      int e;
      if( z==0 ) return -1;
      e = idemTextNumeric(z, sqlite3_value_bytes(pVal), piOut);
      /* A REAL literal: SQLite's own text-to-double (which leaves the
      ** value as it is), as the comparison would convert it. */
      return e==2 ? idemDoubleInt64(sqlite3_value_double(pVal), piOut) : e;
    }
  }
  return 0;
}

/* ------------------------------------------------------ one-row query */

/*
** Prepare the query zFmt (printf-style: %w, %q and %Q quote names and
** values) on db and step it once.  Returns SQLITE_ROW with *ppStmt on the
** first row, for the caller to read and sqlite3_finalize(); SQLITE_DONE
** when there is no row; or the error (sqlite3_errmsg(db) says it; no
** text for SQLITE_NOMEM of the SQL's own allocation).  *ppStmt is NULL
** unless SQLITE_ROW is returned.
**
** Not SQLITE_PREPARE_NO_VTAB: the callers read pragma_table_info() and
** its kin, which are (eponymous, built-in) virtual tables.  The claim
** table's own statements are cached instead (idemStmt()).
*/
IDEM_PRIVATE int idemQueryRow(sqlite3 *db, sqlite3_stmt **ppStmt,
                              const char *zFmt, ...){
  sqlite3_stmt *pStmt = 0;
  va_list ap;
  char *zSql;
  int rc;
  *ppStmt = 0;
  va_start(ap, zFmt);
  zSql = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ){
    rc = sqlite3_step(pStmt);
    if( rc==SQLITE_ROW ){
      *ppStmt = pStmt;
      return rc;
    }
    if( rc!=SQLITE_DONE ){
      rc = sqlite3_reset(pStmt);      /* the error, for sqlite3_errmsg() */
      if( rc==SQLITE_OK ) rc = SQLITE_ERROR;
    }
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/* Whether the database's text is UTF-8 (idemInt.h). */
IDEM_PRIVATE int idemDbUtf8(sqlite3 *db){
  sqlite3_stmt *pEnc = 0;
  int eUtf8 = 0;
  if( idemQueryRow(db, &pEnc, "PRAGMA encoding")==SQLITE_ROW ){
    const char *zEnc = (const char*)sqlite3_column_text(pEnc, 0);
    if( zEnc ) eUtf8 = sqlite3_stricmp(zEnc, "UTF-8")==0 ? 1 : -1;
  }
  sqlite3_finalize(pEnc);
  return eUtf8;
}

/*
** Step pStmt, an INSERT, UPDATE or DELETE of the store, to its end:
** SQLITE_DONE or what stopped it.  Under PRAGMA count_changes=1
** (deprecated, still in SQLite 3.40 to 3.53) every such statement
** prepared at the top level returns one row after its last write, the
** number of rows it changed: stepped past, never taken for an error.  (Were
** SQLITE_ROW returned from xUpdate, SQLite would take it for a row of the
** caller's INSERT and run it again and again: a claim that never returns.)
*/
IDEM_PRIVATE int idemStepWrite(sqlite3_stmt *pStmt){
  int rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ) rc = sqlite3_step(pStmt);
  return rc;
}

/* ----------------------------------------------------------- SQL text */

static int idemIsIdChar(unsigned char c){
  return (c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9')
      || c=='_' || c=='$' || c>=0x80;
}

/* The token at *pz into *pTok; *pz moves past it.  Text that ends inside a
** quote is one token to the end: it differs from any definition. */
IDEM_PRIVATE void idemTokenNext(const char **pz, IdemToken *pTok){
  const unsigned char *z = (const unsigned char*)*pz;
  const unsigned char *e;
  for(;;){
    while( *z==' ' || *z=='\t' || *z=='\n' || *z=='\r' || *z=='\f' ) z++;
    if( z[0]=='-' && z[1]=='-' ){
      while( *z && *z!='\n' ) z++;
    }else if( z[0]=='/' && z[1]=='*' ){
      for(z+=2; *z && !(z[0]=='*' && z[1]=='/'); z++){}
      if( *z ) z += 2;
    }else{
      break;
    }
  }
  pTok->z = (const char*)z;
  pTok->eType = IDEM_TK_OTHER;
  if( *z==0 ){
    pTok->eType = IDEM_TK_END;
    e = z;
  }else if( *z=='\'' || *z=='"' || *z=='`' || *z=='[' ){
    unsigned char q = *z=='[' ? ']' : *z;
    for(e=z+1; *e; e++){
      if( *e==q ){
        if( q!=']' && e[1]==q ){ e++; continue; }   /* a doubled quote */
        e++;
        break;
      }
    }
    if( *z!='\'' ) pTok->eType = IDEM_TK_NAME;
  }else if( idemIsIdChar(*z) && !(*z>='0' && *z<='9') ){
    for(e=z; idemIsIdChar(*e); e++){}
    if( e==z+1 && (*z=='x' || *z=='X') && *e=='\'' ){   /* x'0011' */
      for(e++; *e && *e!='\''; e++){}
      if( *e ) e++;
      pTok->eType = IDEM_TK_OTHER;
    }else{
      pTok->eType = IDEM_TK_NAME;
    }
  }else if( idemIsIdChar(*z) || *z=='.' ){              /* a number */
    for(e=z; idemIsIdChar(*e) || *e=='.'
          || ((*e=='+' || *e=='-') && (e[-1]=='e' || e[-1]=='E')); e++){}
  }else{
    e = z+1;
  }
  pTok->n = (int)(e - z);
  *pz = (const char*)e;
}

/* The unquoted text of name token pTok into zOut (nOut bytes; a longer
** name is cut, which only makes it differ). */
IDEM_PRIVATE void idemTokenName(const IdemToken *pTok, char *zOut, int nOut){
  const char *z = pTok->z;
  int n = pTok->n, i, j = 0;
  char q = 0;
  if( n>=2 && (z[0]=='"' || z[0]=='`' || z[0]=='[') ){
    q = z[0]=='[' ? 0 : z[0];
    z++;
    n -= 2;
  }
  for(i=0; i<n && j<nOut-1; i++){
    zOut[j++] = z[i];
    if( q && z[i]==q && i+1<n && z[i+1]==q ) i++;    /* "" is one " */
  }
  zOut[j] = 0;
}

/* True if the two tokens say the same to SQLite. */
static int idemTokenSame(const IdemToken *a, const IdemToken *b){
  char zA[128], zB[128];
  if( a->eType!=b->eType ) return 0;
  if( a->eType!=IDEM_TK_NAME ){
    return a->n==b->n && memcmp(a->z, b->z, (size_t)a->n)==0;
  }
  idemTokenName(a, zA, (int)sizeof(zA));
  idemTokenName(b, zB, (int)sizeof(zB));
  return sqlite3_stricmp(zA, zB)==0;
}

/* The start of SQL text z for a message, into zOut (nOut bytes, at most
** nOut-4 of them from z, then "..." and the terminator): white
** space as one blank, cut short with "..." (never inside a UTF-8
** character). */
static void idemSnippet(const char *z, char *zOut, int nOut){
  int i = 0, bBlank = 0;
  for(; *z && i<nOut-4; z++){
    unsigned char c = (unsigned char)*z;
    if( c==' ' || c=='\t' || c=='\n' || c=='\r' || c=='\f' ){
      bBlank = 1;
      continue;
    }
    if( bBlank && i>0 ){
      if( i+1>=nOut-4 ) break;      /* no room for the blank and a byte */
      zOut[i++] = ' ';
    }
    bBlank = 0;
    zOut[i++] = (char)c;
  }
  if( *z ){
    while( i>0 && ((unsigned char)zOut[i-1] & 0xc0)==0x80 ) i--;   /* continuation */
    if( i>0 && ((unsigned char)zOut[i-1])>=0xc0 ) i--;              /* lead byte */
    memcpy(&zOut[i], "...", 3);
    i += 3;
  }
  zOut[i] = 0;
}

/*
** Compare the SQL text zFound with zWant token by token.  NULL if they say
** the same, else a description of the first difference (sqlite3_malloc'd;
** *pbNoMem set if it could not be made).
*/
IDEM_PRIVATE char *idemSqlDiff(const char *zFound, const char *zWant,
                                int *pbNoMem){
  IdemToken a, b;
  char zA[44], zB[44];
  char *z;
  for(;;){
    idemTokenNext(&zFound, &a);
    idemTokenNext(&zWant, &b);
    if( !idemTokenSame(&a, &b) ) break;
    if( a.eType==IDEM_TK_END ) return 0;
  }
  idemSnippet(a.z, zA, (int)sizeof(zA));
  idemSnippet(b.z, zB, (int)sizeof(zB));
  if( a.eType==IDEM_TK_END ){
    z = sqlite3_mprintf("it ends where idem's goes on with \"%s\"", zB);
  }else if( b.eType==IDEM_TK_END ){
    z = sqlite3_mprintf("it goes on with \"%s\" where idem's ends", zA);
  }else{
    z = sqlite3_mprintf("it has \"%s\" where idem's has \"%s\"", zA, zB);
  }
  if( z==0 ) *pbNoMem = 1;
  return z;
}

/* ------------------------------------------------------------- errors */

/*
** The error of an SQL function: "idem: " and the printf-style text as the
** message, rc as the code.  SQLITE_NOMEM (or a message that cannot be
** made) is SQLite's own out-of-memory error, without text.  Every SQL
** function of idem reports its errors here, and only here.
*/
IDEM_PRIVATE void idemResultError(sqlite3_context *ctx, int rc,
                                  const char *zFmt, ...){
  char *zMsg = 0;
  va_list ap;
  if( rc!=SQLITE_NOMEM ){
    sqlite3_str *s = sqlite3_str_new(0);
    sqlite3_str_append(s, "idem: ", 6);
    va_start(ap, zFmt);
    sqlite3_str_vappendf(s, zFmt, ap);
    va_end(ap);
    zMsg = sqlite3_str_finish(s);
  }
  if( zMsg==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_error(ctx, zMsg, -1);
  sqlite3_free(zMsg);
  if( rc!=SQLITE_ERROR ) sqlite3_result_error_code(ctx, rc);
}

/* ------------------------------------------------- compiled programs */

IDEM_PRIVATE int idemRootsHas(const IdemRoots *pR, int iDb, int iRoot){
  int i;
  if( iDb!=pR->iDb ) return 0;
  for(i=0; i<pR->n; i++) if( pR->a[i]==iRoot ) return 1;
  return 0;
}

/* One opcode of an EXPLAIN listing (columns addr, opcode, p1, p2, p3, p4,
** ...), its name and its first three operands. */
typedef struct IdemOp IdemOp;
struct IdemOp {
  const char *zOp;
  int p1, p2, p3;
};

/* Step the listing pEx to its next opcode, into *pOp: SQLITE_ROW, or how
** the listing ended (SQLITE_DONE, or the error). */
static int idemExplainNext(sqlite3_stmt *pEx, IdemOp *pOp){
  int rc;
  while( (rc = sqlite3_step(pEx))==SQLITE_ROW ){
    pOp->zOp = (const char*)sqlite3_column_text(pEx, 1);
    if( pOp->zOp==0 ) continue;
    pOp->p1 = sqlite3_column_int(pEx, 2);
    pOp->p2 = sqlite3_column_int(pEx, 3);
    pOp->p3 = sqlite3_column_int(pEx, 4);
    break;
  }
  return rc;
}

/* Compile zSql (EXPLAIN) and set *pbTouch if its program, or a trigger
** program it runs, opens or clears a shadow table.  SQLITE_OK if it
** compiled, SQLITE_ERROR if SQLite would not compile it here (SQLITE_ERROR
** or SQLITE_AUTH from the prepare: the caller decides from the text
** instead), or any other failure as it is (SQLITE_NOMEM, SQLITE_INTERRUPT
** from sqlite3_interrupt() or a progress handler, SQLITE_LOCKED, ...):
** no verdict, for the caller to pass on, never to take for either. */
IDEM_PRIVATE int idemExplainTouches(sqlite3 *db, const IdemRoots *pR,
                                    char *zSql, int *pbTouch){
  sqlite3_stmt *pStmt = 0;
  IdemOp op;
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    sqlite3_finalize(pStmt);
    return rc==SQLITE_ERROR || rc==SQLITE_AUTH ? SQLITE_ERROR : rc;
  }
  while( (rc = idemExplainNext(pStmt, &op))==SQLITE_ROW ){
    if( (strcmp(op.zOp, "OpenRead")==0 || strcmp(op.zOp, "OpenWrite")==0
         || strcmp(op.zOp, "ReopenIdx")==0) ? idemRootsHas(pR, op.p3, op.p2)
      : strcmp(op.zOp, "Clear")==0 ? idemRootsHas(pR, op.p2, op.p1)
      : strcmp(op.zOp, "Destroy")==0 ? idemRootsHas(pR, op.p3, op.p1) : 0 ){
      *pbTouch = 1;
    }
  }
  sqlite3_finalize(pStmt);
  return rc==SQLITE_DONE ? SQLITE_OK : rc;      /* (listed in part: none) */
}

/*
** THE PROGRAM THE CLAIM'S INSERT RUNS.  The damage check reads the
** schema's text (sqlite_schema), and SQLite compiles the INSERT from the
** schema it holds in memory: they differ after PRAGMA writable_schema
** edits of sqlite_schema on this connection (a trigger's row deleted that
** way keeps running until the schema is read again).  So the program
** SQLite compiled is looked at too, each time the INSERT is prepared
** (never at a claim): pEx is the same SQL under EXPLAIN, prepared right
** after it with the same interface, no statement run in between, so
** against the same schema in memory; were that schema read again in
** between, the INSERT's OP_Transaction (which holds the schema's
** generation) would fail it with SQLITE_SCHEMA before it writes.  The
** listing holds every trigger program the INSERT can run.  It must write
** <name>_claim and nothing else, as the text says (pR: its b-trees in
** sqlite_schema, from idemRootsLoad()): no trigger program (OP_Program),
** no b-tree opened but those, each of them written, a uniqueness check
** that aborts for each of its indexes (no conflict clause, no constraint
** missing), no row deleted (a REPLACE), no virtual table.  Its own
** b-trees may also be opened to read: a format-4 INSERT reads
** <name>_claim itself, in its subqueries (idem_store.c, zIdemInsert4:
** the last row's rid and created from the table's b-tree, and whether
** there is a row at all from whichever of its b-trees SQLite picks, the
** UNIQUE(key, member) index as 3.40 and 3.53 compile it); an OpenRead
** of one of them passes as its own, and only an OpenWrite counts as
** writing it.  What only the values written would show (a DEFAULT, a
** COLLATE, an affinity) is left to the text; a CHECK or NOT NULL added
** fails the claim, and an IGNORE shows in changes()
** (idemCheckChanges()).  *pzWhy: what is wrong, or NULL; SQLITE_OK, or
** the failure that left no verdict (out of memory, interrupted).
*/
IDEM_PRIVATE int idemInsertProgram(sqlite3_stmt *pEx, const IdemRoots *pR,
                                   const char *zName, char **pzWhy){
  char zTrig[128];
  const char *zHow = 0;
  IdemOp op;
  unsigned int mWritten = 0;
  int i, rc, nUnique = 0, bTrig = 0;
  zTrig[0] = 0;
  *pzWhy = 0;
  while( (rc = idemExplainNext(pEx, &op))==SQLITE_ROW ){
    if( strcmp(op.zOp, "Program")==0 ){
      bTrig = 1;
    }else if( strcmp(op.zOp, "Init")==0 ){
      /* A trigger program's first opcode names it ("-- TRIGGER t") */
      const char *z4 = (const char*)sqlite3_column_text(pEx, 5);
      if( z4 && zTrig[0]==0 && strncmp(z4, "-- TRIGGER ", 11)==0 ){
        sqlite3_snprintf((int)sizeof(zTrig), zTrig, "%s", z4+11);
      }
    }else if( strcmp(op.zOp, "OpenRead")==0 || strcmp(op.zOp, "OpenWrite")==0
           || strcmp(op.zOp, "ReopenIdx")==0 ){
      if( !idemRootsHas(pR, op.p3, op.p2) ){
        if( zHow==0 ) zHow = "opens a b-tree that is not one of its own";
      }else if( op.zOp[4]=='W' ){
        for(i=0; i<pR->n; i++) if( pR->a[i]==op.p2 ) mWritten |= 1u<<i;
      }
    }else if( strcmp(op.zOp, "Delete")==0 || strcmp(op.zOp, "IdxDelete")==0
           || strcmp(op.zOp, "Clear")==0 || strcmp(op.zOp, "Destroy")==0 ){
      if( zHow==0 ) zHow = "deletes rows (a conflict clause that replaces)";
    }else if( op.zOp[0]=='V' && strcmp(op.zOp, "Variable")!=0 ){
      if( zHow==0 ) zHow = "writes a virtual table";
    }else if( strcmp(op.zOp, "Halt")==0 && op.p1==SQLITE_CONSTRAINT_UNIQUE
           && op.p2==2 /* OE_Abort */ ){
      nUnique++;
    }
  }
  if( rc!=SQLITE_DONE ){
    /* Listed in part: no verdict.  A legacy statement's step says
    ** SQLITE_ERROR, its reset the code (SQLITE_INTERRUPT, ...). */
    int rc2 = sqlite3_reset(pEx);
    return rc2!=SQLITE_OK ? rc2 : rc;
  }
  if( zHow==0 && pR->n>0 && mWritten!=(1u<<pR->n)-1 ){
    zHow = "does not write each of its indexes";
  }
  if( zHow==0 && nUnique<pR->nIdx ){
    zHow = "does not abort on a duplicate in each of its UNIQUE"
           " constraints (a conflict clause, or a constraint missing)";
  }
  if( bTrig ){
    *pzWhy = sqlite3_mprintf("%s_claim has a trigger%s%s%s that sqlite_schema"
        " does not show (PRAGMA writable_schema?), which can void or change"
        " what idem writes", zName, zTrig[0] ? " (" : "", zTrig,
        zTrig[0] ? ")" : "");
  }else if( zHow || pR->n==0 ){
    *pzWhy = sqlite3_mprintf("%s_claim in SQLite's memory is not the table"
        " sqlite_schema shows (PRAGMA writable_schema?): the claim's INSERT"
        " %s", zName, zHow ? zHow : "writes no b-tree of its own");
  }else{
    return SQLITE_OK;
  }
  return *pzWhy ? SQLITE_OK : SQLITE_NOMEM;
}

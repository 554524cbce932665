/* SPDX-License-Identifier: MIT */
/*
** idem_rows.c -- what the rows of a claim table promise beyond what
** SQLite's constraints hold: the order a format-4 table keeps them in, and
** PRAGMA integrity_check of what idem itself would never write.  It reads
** the shadow table through the store (idem_store.c); the claim
** (idem_claim.c) and the module (idem_vtab.c) call it.
**
** ORDER.  A format-4 table (doc/choices.md, "Table formats") has no index
** on created: created never goes back in rid order.  The claim's INSERT
** (idem_store.c, zIdemInsert4) writes as created the clock's time or the
** created of the row with the largest rid, whichever is later, and SQLite
** gives the new row that rid + 1; so the order of (created, rid) is the
** order of rid, and a range of created is a range of rids: from the first
** rid past the lower bound (idemRowsFrom(), O(log n) seeks), up to the
** first row past the upper bound (the cursor stops there, idem_vtab.c).
** Past rid 2^63-1 SQLite picks random rids, which would break the order:
** such a claim is refused (idemRowsRefused()).  Only a write outside idem
** breaks the order; integrity_check reports it, by rid.
**
** LAST ROW.  The INSERT's created is NULL, refused, also where the last
** row's created is not text: none, or a blob, which SQLite orders above
** every text (max() passed it on to every later claim).  A number there
** (only a damaged file: the column's TEXT affinity stores a number
** written through SQL as text) is below every text: the clock's time.
** The INSERT compares +created, without its affinity, so that a number
** is not compared as its text (which would pass it on).  It has no max():
** a test of the type beside it read created twice, and each read of a
** text column is a copy (a malloc and a free: ~800 instructions a claim
** on 3.40); its CASE reads created once where the clock is later, as it
** nearly always is.
*/
#include "idemInt.h"

/*
** A RANGE OF CREATED IN FORMAT 4.  The rows whose created is above a lower
** bound are those from some rid on: found by a binary search over the
** rids, each step one seek (IDEM_STMT_PROBE: the first row from a rid on,
** and whether it passes, compared by SQL as the format-3 query compares),
** between the first row and the last (IDEM_STMT_LASTROW): at most 64
** steps, about log2 of the span of rids.  The invariant of the search:
** the first row from rid iHi on passes, every row before rid iLo fails.
** Reads only; the statements are reset before it returns.
*/
static int idemRowsProbe(IdemVtab *p, sqlite3_stmt *pStmt, int iCol,
                         sqlite3_int64 *piRid, int *pbPass){
  int rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    *piRid = sqlite3_column_int64(pStmt, 0);
    *pbPass = sqlite3_column_int(pStmt, iCol);   /* (NULL: fails) */
    rc = SQLITE_OK;
  }else if( rc==SQLITE_DONE ){
    *pbPass = 0;
  }else{
    rc = idemVtabDbError(p, sqlite3_reset(pStmt));
  }
  sqlite3_reset(pStmt);
  return rc;
}

IDEM_PRIVATE int idemRowsFrom(IdemVtab *p, sqlite3_value *pLo, int bGe,
                              sqlite3_int64 *piFrom){
  sqlite3_stmt *pProbe, *pLast;
  sqlite3_int64 iLo = IDEM_RID_MIN, iHi, iRid;
  int bPass, rc, iCol = bGe ? 2 : 1;
  rc = idemStmt(p, IDEM_STMT_LASTROW, &pLast);
  if( rc!=SQLITE_OK ) return rc;
  rc = sqlite3_bind_value(pLast, 1, pLo);
  if( rc!=SQLITE_OK ) return idemVtabDbError(p, rc);
  rc = idemRowsProbe(p, pLast, iCol, &iHi, &bPass);
  if( rc!=SQLITE_OK ) return rc;            /* (SQLITE_DONE: no row) */
  if( !bPass ) return SQLITE_DONE;          /* not even the last row */
  rc = idemStmt(p, IDEM_STMT_PROBE, &pProbe);
  if( rc!=SQLITE_OK ) return rc;
  rc = sqlite3_bind_value(pProbe, 1, pLo);
  if( rc!=SQLITE_OK ) return idemVtabDbError(p, rc);
  while( iLo<iHi ){
    /* (the first step looks at the first row: a bound below every row
    ** ends the search there) */
    sqlite3_int64 iMid = iLo==IDEM_RID_MIN ? iLo
        : iLo + (sqlite3_int64)(((sqlite3_uint64)iHi - (sqlite3_uint64)iLo)/2);
    sqlite3_bind_int64(pProbe, 2, iMid);
    rc = idemRowsProbe(p, pProbe, iCol, &iRid, &bPass);
    if( rc==SQLITE_DONE ) break;  /* (never: a row at iHi or after passes) */
    if( rc!=SQLITE_OK ) return rc;
    if( bPass ){
      iHi = iMid;
    }else if( iRid>=iHi ){
      break;                      /* (never, as above) */
    }else{
      iLo = iRid + 1;
    }
  }
  *piFrom = iHi;
  return SQLITE_OK;
}

/*
** A format-4 claim or member row that NOT NULL refused: the created its
** INSERT computed is NULL when the largest rid is 2^63-1 (only a write
** outside idem makes one; SQLite would give the new row a random rid,
** out of the order of created), or the last row's created is not text:
** none (a damaged file), or a blob (written outside idem), which would
** be every later claim's created (zIdemInsert4).  The table's message,
** and SQLITE_FULL (as SQLite's own AUTOINCREMENT at its last rowid) or
** SQLITE_CORRUPT_VTAB.  Nothing was written.
*/
IDEM_PRIVATE int idemRowsRefused(IdemVtab *p){
  sqlite3_stmt *pStmt = 0;
  int rc = idemQueryRow(p->db, &pStmt, "SELECT rid, typeof(created)"
                        " FROM \"%w\".\"%w_claim\" ORDER BY rid DESC LIMIT 1",
                        p->zDb, p->zName);
  if( rc==SQLITE_ROW && sqlite3_column_int64(pStmt, 0)==IDEM_RID_MAX ){
    idemVtabError(p, "%s_claim holds rid 9223372036854775807, the largest"
        " there is (written outside idem): a new row would take a random"
        " rid, out of the order of created that a purge by age reads;"
        " nothing was claimed (delete that row to claim again)", p->zName);
    rc = SQLITE_FULL;
  }else if( rc==SQLITE_ROW ){
    const char *zType = (const char*)sqlite3_column_text(pStmt, 1);
    char *zWhat = zType==0 ? 0 : strcmp(zType, "null")==0
        ? sqlite3_mprintf("has no created")
        : sqlite3_mprintf("has a created of type %s, not text", zType);
    if( zWhat==0 ){
      rc = SQLITE_NOMEM;
    }else{
      idemVtabError(p, "the last row of %s_claim (rid %lld) %s: the"
          " database was changed outside idem or is damaged; nothing was"
          " claimed", p->zName, sqlite3_column_int64(pStmt, 0), zWhat);
      sqlite3_free(zWhat);
      rc = SQLITE_CORRUPT_VTAB;
    }
  }else if( rc!=SQLITE_NOMEM ){
    idemVtabError(p, "cannot read the last row of %s_claim: %s", p->zName,
                  rc==SQLITE_DONE ? "it is gone" : sqlite3_errstr(rc));
    if( rc==SQLITE_DONE ) rc = SQLITE_CORRUPT_VTAB;
  }
  sqlite3_finalize(pStmt);
  return rc;
}

#if SQLITE_VERSION_NUMBER>=3044000
/*
** PRAGMA integrity_check and quick_check (xIntegrity): look inside the
** shadow table for what idem itself would never write; in format 4, a
** created that is not text, then one that goes back in rid order (the
** first one, by rid: each row's predecessor found by a seek).  A finding, or a check that fails, is
** *pzErr with SQLITE_OK.
*/
IDEM_PRIVATE int idemRowsIntegrity(IdemVtab *p, const char *zSchema,
                                   char **pzErr){
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
  sqlite3_stmt *pStmt;
  int i, rc;
  if( p->zUnusable || p->zDamaged ){
    idemVtabError(p, "%s", p->zUnusable ? p->zUnusable : p->zDamaged);
    idemVtabErrorTo(p, pzErr);
    return *pzErr ? SQLITE_OK : SQLITE_NOMEM;
  }
  for(i=0; i<(int)(sizeof(aCheck)/sizeof(aCheck[0])); i++){
    char *zWhere = sqlite3_mprintf(aCheck[i].zWhere, zSchema, p->zName);
    if( zWhere==0 ) return SQLITE_NOMEM;
    rc = idemQueryRow(p->db, &pStmt, "SELECT count(*) FROM \"%w\".\"%w_claim\""
                      " x WHERE %s", zSchema, p->zName, zWhere);
    sqlite3_free(zWhere);
    if( rc==SQLITE_ROW && sqlite3_column_int64(pStmt, 0)>0 ){
      idemVtabError(p, "%lld %s in %s_claim", sqlite3_column_int64(pStmt, 0),
                    aCheck[i].zWhat, p->zName);
      idemVtabErrorTo(p, pzErr);
      sqlite3_finalize(pStmt);
      return *pzErr ? SQLITE_OK : SQLITE_NOMEM;
    }
    sqlite3_finalize(pStmt);
    if( rc==SQLITE_NOMEM ) return rc;
    if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ){
      /* The check itself failed (no shadow table, a missing column): that
      ** is the finding.  An error returned from xIntegrity would fail the
      ** whole PRAGMA with a bare "SQL logic error". */
      idemVtabDbError(p, rc);
      idemVtabErrorTo(p, pzErr);
      return *pzErr ? SQLITE_OK : SQLITE_NOMEM;
    }
  }
  if( p->iFormat<4 ) return SQLITE_OK;
  rc = idemQueryRow(p->db, &pStmt, "SELECT rid, typeof(created) FROM"
      " \"%w\".\"%w_claim\" WHERE typeof(created)!='text' ORDER BY rid"
      " LIMIT 1", zSchema, p->zName);
  if( rc==SQLITE_ROW ){
    idemVtabError(p, "created is not text in %s_claim at rid %lld (%s):"
        " only a write outside idem makes one; a range of created (a purge"
        " by age) reads the rows in rid order and may miss rows around it",
        p->zName, sqlite3_column_int64(pStmt, 0),
        sqlite3_column_text(pStmt, 1));
  }else if( rc!=SQLITE_DONE && rc!=SQLITE_NOMEM ){
    idemVtabDbError(p, rc);
  }
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_NOMEM ) return rc;
  if( rc!=SQLITE_DONE ){
    idemVtabErrorTo(p, pzErr);
    return *pzErr ? SQLITE_OK : SQLITE_NOMEM;
  }
  rc = idemQueryRow(p->db, &pStmt, "SELECT x.rid, quote(x.created),"
      " b.rid, quote(b.created) FROM \"%w\".\"%w_claim\" x"
      " JOIN \"%w\".\"%w_claim\" b ON b.rid=(SELECT max(rid) FROM"
      " \"%w\".\"%w_claim\" WHERE rid<x.rid) WHERE x.created<b.created"
      " ORDER BY x.rid LIMIT 1", zSchema, p->zName, zSchema, p->zName,
      zSchema, p->zName);
  if( rc==SQLITE_ROW ){
    idemVtabError(p, "created goes back in rid order in %s_claim at rid"
        " %lld (%s, after %s at rid %lld): a range of created (a purge by"
        " age) reads the rows in rid order and would miss rows", p->zName,
        sqlite3_column_int64(pStmt, 0), sqlite3_column_text(pStmt, 1),
        sqlite3_column_text(pStmt, 3), sqlite3_column_int64(pStmt, 2));
  }else if( rc!=SQLITE_DONE && rc!=SQLITE_NOMEM ){
    idemVtabDbError(p, rc);
  }
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_DONE || rc==SQLITE_NOMEM ) return rc==SQLITE_DONE ? SQLITE_OK : rc;
  idemVtabErrorTo(p, pzErr);
  return *pzErr ? SQLITE_OK : SQLITE_NOMEM;
}
#endif

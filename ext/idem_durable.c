/* SPDX-License-Identifier: MIT */
/*
** idem_durable.c -- an external claim must be durable (doc/contract.md
** §12).
**
**   CREATE VIRTUAL TABLE calls USING idem;                     -- durability=full
**   CREATE VIRTUAL TABLE calls USING idem(durability=relaxed); -- accept the risk
**
** An external claim (kind='external') is the only record that a request
** to another system may have left.  If a power loss takes back its COMMIT,
** the retry finds no claim and sends again.  So under a setting where a
** COMMIT is not durable, an external claim fails, with an error that
** names the setting, unless the table was created with durability=relaxed.
** Not durable:
**
**   journal_mode=WAL and synchronous below FULL   the WAL is not synced at
**                                                 COMMIT (NORMAL syncs it
**                                                 only at checkpoints)
**   journal_mode=TRUNCATE and synchronous below   the COMMIT truncates the
**   FULL                                          journal without a sync: a
**                                                 power loss can bring the
**                                                 journal back, and the next
**                                                 open rolls the COMMIT back
**   DELETE or PERSIST and synchronous OFF         nothing is synced
**   journal_mode=MEMORY or OFF                    no rollback journal on
**                                                 disk: a crash in a later
**                                                 transaction can corrupt
**                                                 the file, claims and all
**   a database with no file (":memory:", the      no crash survives it: the
**   temp schema, an empty file name)              claim is gone with it, and
**                                                 the request is not
**
** The last one is a decision: an in-memory or temporary database could be
** said to need no durability, since nothing in it survives a crash.  But
** the request that left does survive, in the other system; after a
** restart the retry finds no claim and sends again, which is the very
** harm of §12.  So it is refused like the others (an in-memory database
** reports journal_mode=MEMORY anyway), and durability=relaxed is how a
** test or a cache says that it knows.
**
** Local claims need no check: their act is a write into the same
** database, in the same transaction, and a power loss takes both back.
**
** Built with -DIDEM_REPLICATED (the dqlite cluster build, test/cluster/)
** there is no check: dqlite runs its connections with synchronous=OFF
** because a COMMIT returns only once its Raft log entry is synced on a
** quorum of nodes; that log, not the SQLite file, is what keeps the claim.
**
** The settings are per connection and per schema (main, temp, attached),
** so they are read for the table's schema, with two PRAGMA queries.  Those
** cost more than a claim (SQLite prepares a PRAGMA again at every run), so
** a durable verdict is kept until the transaction ends: inside one,
** neither setting can change (SQLite refuses "PRAGMA synchronous" in a
** transaction, and keeps the journal mode once the transaction has
** written).  The table's xBegin, called before its first write in each
** transaction, forgets the verdict (idemDurableBegin()).  So a claim stays
** an index seek: a transaction of many external claims reads the settings
** once, and an autocommit claim reads them once next to its own COMMIT.
**
** Interface for the other parts: "Interface to code in idem_durable.c"
** in idemInt.h.  The option itself, durability=full|relaxed, is parsed
** with the others in idem_claim.c (IdemOptions.bRelaxedDurability), and
** the claim calls idemDurableCheck() only when it is full.
*/
#include "idemInt.h"

/* xBegin: a new transaction, where the settings may differ. */
IDEM_PRIVATE void idemDurableBegin(IdemDurable *pD){
  pD->bDurable = 0;
}

IDEM_PRIVATE void idemDurableClear(IdemDurable *pD){
  sqlite3_finalize(pD->pSync);
  sqlite3_finalize(pD->pJournal);
  pD->pSync = 0;
  pD->pJournal = 0;
}

/* Prepare "PRAGMA <zDb>.<zPragma>" into *ppStmt unless it is there. */
static int idemDurablePrepare(
  sqlite3 *db,
  const char *zDb,
  const char *zPragma,
  sqlite3_stmt **ppStmt
){
  char *zSql;
  int rc;
  if( *ppStmt ) return SQLITE_OK;
  zSql = sqlite3_mprintf("PRAGMA \"%w\".%s", zDb, zPragma);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(db, zSql, -1, SQLITE_PREPARE_PERSISTENT, ppStmt, 0);
  sqlite3_free(zSql);
  return rc;
}

/*
** May an external claim be made in schema zDb of db?  SQLITE_OK if a
** COMMIT there is durable; otherwise
** SQLITE_ERROR, with *pzErr (sqlite3_malloc'd) naming the setting and the
** ways out.  Other codes (SQLITE_NOMEM, ...) come with *pzErr when there
** is a message to give.
*/
IDEM_PRIVATE int idemDurableCheck(
  IdemDurable *pD,
  sqlite3 *db,
  const char *zDb,
  char **pzErr
){
  static const char *const azSync[] = { "OFF", "NORMAL", "FULL", "EXTRA" };
  const char *zFile;
  const char *zJournal;
  char zMode[16];
  int iSync, rc, i;
  char zPrefix[80];            /* "PRAGMA " or "PRAGMA aux." for messages */

  *pzErr = 0;
#ifdef IDEM_REPLICATED
  pD->bDurable = 1;             /* the replicated log is the durability */
#endif
  if( pD->bDurable ) return SQLITE_OK;

  zFile = sqlite3_db_filename(db, zDb);
  if( zFile==0 || zFile[0]==0 ){
    *pzErr = sqlite3_mprintf("idem: external claim needs a durable commit:"
        " schema '%s' is %s, which no crash survives, while the request"
        " does: after a restart the retry would send again; keep the table"
        " in a database file, or create it with durability=relaxed", zDb,
        sqlite3_stricmp(zDb, "temp")==0 ? "the temporary database"
                                        : "an in-memory database");
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }

  rc = idemDurablePrepare(db, zDb, "synchronous", &pD->pSync);
  if( rc==SQLITE_OK ) rc = idemDurablePrepare(db, zDb, "journal_mode", &pD->pJournal);
  if( rc!=SQLITE_OK ) goto read_error;
  rc = sqlite3_step(pD->pSync);
  iSync = sqlite3_column_int(pD->pSync, 0);
  sqlite3_reset(pD->pSync);
  if( rc!=SQLITE_ROW ){ rc = rc==SQLITE_DONE ? SQLITE_ERROR : rc; goto read_error; }
  rc = sqlite3_step(pD->pJournal);
  zJournal = (const char*)sqlite3_column_text(pD->pJournal, 0);
  for(i=0; zJournal && zJournal[i] && i<(int)sizeof(zMode)-1; i++){
    char c = zJournal[i];
    zMode[i] = (c>='a' && c<='z') ? (char)(c-'a'+'A') : c;
  }
  zMode[i] = 0;
  sqlite3_reset(pD->pJournal);
  if( rc!=SQLITE_ROW || zJournal==0 ){
    rc = rc==SQLITE_ROW ? SQLITE_NOMEM : rc==SQLITE_DONE ? SQLITE_ERROR : rc;
    goto read_error;
  }
  if( iSync<0 ) iSync = 0;
  if( iSync>3 ) iSync = 3;

  if( sqlite3_stricmp(zDb, "main")==0 ){
    memcpy(zPrefix, "PRAGMA ", 8);
  }else{
    sqlite3_snprintf(sizeof(zPrefix), zPrefix, "PRAGMA %s.", zDb);
  }
  if( strcmp(zMode, "MEMORY")==0 || strcmp(zMode, "OFF")==0 ){
    *pzErr = sqlite3_mprintf("idem: external claim needs a durable commit:"
        " %sjournal_mode=%s can lose it at power loss or a crash; set"
        " %sjournal_mode=WAL (with synchronous=FULL) or DELETE, or create"
        " the table with durability=relaxed", zPrefix, zMode, zPrefix);
  }else if( strcmp(zMode, "WAL")==0 && iSync<2 ){
    *pzErr = sqlite3_mprintf("idem: external claim needs a durable commit:"
        " %ssynchronous=%s in WAL mode can lose it at power loss; set"
        " synchronous=FULL or create the table with durability=relaxed",
        zPrefix, azSync[iSync]);
  }else if( strcmp(zMode, "TRUNCATE")==0 && iSync<2 ){
    *pzErr = sqlite3_mprintf("idem: external claim needs a durable commit:"
        " %ssynchronous=%s in TRUNCATE mode can lose it at power loss (the"
        " journal's truncation is not synced); set synchronous=FULL or"
        " create the table with durability=relaxed", zPrefix, azSync[iSync]);
  }else if( iSync<1 ){
    *pzErr = sqlite3_mprintf("idem: external claim needs a durable commit:"
        " %ssynchronous=OFF can lose it at power loss; set synchronous=FULL"
        " or create the table with durability=relaxed", zPrefix);
  }else{
    pD->bDurable = 1;
    return SQLITE_OK;
  }
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;

 read_error:
  if( rc!=SQLITE_NOMEM ){
    *pzErr = sqlite3_mprintf("idem: external claim: cannot read the"
        " durability settings of schema '%s': %s", zDb, sqlite3_errmsg(db));
  }
  return rc;
}

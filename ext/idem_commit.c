/* SPDX-License-Identifier: MIT */
/*
** idem_commit.c -- the commit guard (doc/contract.md §4), at xSync,
** before the transaction commits: a local claim made in it that is still
** pending fails the COMMIT, and a recorded local call commits only where
** SQLite commits everything the transaction wrote as one (every file
** written takes part in the super-journal: vdbeCommit()).
** It reads the store and the claim's status (idem_claim.c), and never
** calls the module (idem_vtab.c), which calls it.
*/
#include "idemInt.h"

/* True if schema zSchema's pages live in memory: temp, ":memory:", or a
** VFS that keeps them in RAM (memdb: sqlite3_deserialize()). */
static int idemSchemaInMemory(sqlite3 *db, const char *zSchema){
  return idemDurableStore(db, zSchema)!=IDEM_STORE_FILE;
}

/* Schema zSchema's journal_mode, lower case, into zMode (16 bytes; ""
** when it cannot be read).  SQLITE_OK or SQLITE_NOMEM. */
static int idemJournalMode(sqlite3 *db, const char *zSchema, char zMode[16]){
  sqlite3_stmt *pStmt = 0;
  int rc = idemQueryRow(db, &pStmt, "PRAGMA \"%w\".journal_mode", zSchema);
  zMode[0] = 0;
  if( rc==SQLITE_ROW ){
    const char *z = (const char*)sqlite3_column_text(pStmt, 0);
    if( z ) sqlite3_snprintf(16, zMode, "%s", z);
  }
  sqlite3_finalize(pStmt);
  return rc==SQLITE_NOMEM ? SQLITE_NOMEM : SQLITE_OK;
}

/* Schema zSchema's synchronous level, 0 (OFF) to 3 (EXTRA), into *piSync.
** SQLITE_OK or the error of the PRAGMA. */
static int idemSyncLevel(sqlite3 *db, const char *zSchema, int *piSync){
  sqlite3_stmt *pStmt = 0;
  int rc = idemQueryRow(db, &pStmt, "PRAGMA \"%w\".synchronous", zSchema);
  *piSync = rc==SQLITE_ROW ? sqlite3_column_int(pStmt, 0) : 0;
  sqlite3_finalize(pStmt);
  return rc==SQLITE_ROW ? SQLITE_OK : rc==SQLITE_DONE ? SQLITE_ERROR : rc;
}

/*
** The size of the header a rollback journal of schema zSchema starts with,
** as the pager sizes it (setSectorSize() in SQLite's pager.c): 512 bytes
** for temp and in-memory files and where writes are powersafe, else the
** file's sector size (at least 32 bytes or it counts as 512, at most 64 KB).
*/
static sqlite3_int64 idemJournalHeader(sqlite3 *db, const char *zSchema){
  sqlite3_file *pDb = 0;
  int n;
  if( sqlite3_stricmp(zSchema, "temp")==0 || idemSchemaInMemory(db, zSchema) ){
    return 512;
  }
  if( sqlite3_file_control(db, zSchema, SQLITE_FCNTL_FILE_POINTER, &pDb)
        !=SQLITE_OK || pDb==0 || pDb->pMethods==0
   || (pDb->pMethods->xDeviceCharacteristics(pDb)
         & SQLITE_IOCAP_POWERSAFE_OVERWRITE)!=0 ){
    return 512;
  }
  n = pDb->pMethods->xSectorSize(pDb);
  return n<32 ? 512 : n>65536 ? 65536 : n;
}

/*
** Whether this transaction has written schema zSchema (journal mode
** zMode).  A write transaction is not enough: BEGIN IMMEDIATE opens one on
** every database of the connection.  SQLite opens a rollback journal (on
** disk or in memory) at the first page the transaction changes, and
** writes its header then: the header holds the database's size in pages
** when the transaction began (bytes 16-19) and the page size (24-27),
** which the end of a transaction zeroes (PERSIST, and a journal kept by
** locking_mode=EXCLUSIVE), truncates (TRUNCATE, temp) or deletes (DELETE,
** MEMORY).  A journal whose header names no page size is a previous
** transaction's.  Of a database that had pages, every change copies one
** (a new page changes page 1): written if the journal holds more than
** its header.  A database that had none (a fresh attached file, :memory:
** or temp) copies no page, and a write transaction on it writes page 1 at
** its start (newDatabase() in SQLite's btree.c): written if it has more
** pages than that (a table created in it).  A WAL file, or a journal
** that is OFF, keeps nothing to look at before the COMMIT: a write
** transaction on them counts as a write.  SQLITE_OK or an error, the
** verdict in *pbWritten.
*/
static int idemSchemaWritten(sqlite3 *db, const char *zSchema,
                             const char *zMode, int *pbWritten){
  sqlite3_file *pJournal = 0;
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 sz = 0;
  unsigned char aHdr[28];
  int rc;
  *pbWritten = 0;
  if( sqlite3_txn_state(db, zSchema)!=SQLITE_TXN_WRITE ) return SQLITE_OK;
  *pbWritten = 1;
  if( strcmp(zMode, "wal")==0 || strcmp(zMode, "off")==0 ) return SQLITE_OK;
  *pbWritten = 0;
  if( sqlite3_file_control(db, zSchema, SQLITE_FCNTL_JOURNAL_POINTER,
                           &pJournal)!=SQLITE_OK
   || pJournal==0 || pJournal->pMethods==0 ){
    return SQLITE_OK;               /* no journal opened: nothing written */
  }
  *pbWritten = 1;                   /* (what cannot be read counts) */
  if( pJournal->pMethods->xFileSize(pJournal, &sz)!=SQLITE_OK ) return SQLITE_OK;
  if( sz<(sqlite3_int64)sizeof(aHdr) ){
    *pbWritten = 0;
    return SQLITE_OK;
  }
  if( pJournal->pMethods->xRead(pJournal, aHdr, sizeof(aHdr), 0)!=SQLITE_OK ){
    return SQLITE_OK;
  }
  if( (aHdr[24] | aHdr[25] | aHdr[26] | aHdr[27])==0 ){
    *pbWritten = 0;                 /* a previous transaction's journal */
    return SQLITE_OK;
  }
  if( sz>idemJournalHeader(db, zSchema) ) return SQLITE_OK;
  if( (aHdr[16] | aHdr[17] | aHdr[18] | aHdr[19])!=0 ){
    *pbWritten = 0;                 /* had pages, and copied none */
    return SQLITE_OK;
  }
  rc = idemQueryRow(db, &pStmt, "PRAGMA \"%w\".page_count", zSchema);
  if( rc==SQLITE_ROW ){
    *pbWritten = sqlite3_column_int64(pStmt, 0)>1;
    rc = SQLITE_OK;
  }
  sqlite3_finalize(pStmt);
  return rc==SQLITE_DONE ? SQLITE_ERROR : rc;
}

/*
** Why schema zSchema (journal mode zMode, synchronous level iSync) does
** not commit atomically with the other files of the transaction: NULL if
** SQLite commits it through the super-journal with every other file, else
** the reason (sqlite3_malloc'd; *pbNoMem set when it cannot be made).
** SQLite's vdbeCommit() writes a super-journal only when the main database
** is a file and more than one file takes part, and a file takes part only
** with a rollback journal on disk (DELETE, TRUNCATE, PERSIST), in a file
** (not temp, not in memory), at a synchronous level other than OFF; every
** other file commits on its own (doc/contract.md §4).  A file at NORMAL
** takes part, but its journal is not synced before its header: a power
** loss can tear it (idem_durable.c), so it is refused as the table's own
** file is, unless the table is created with durability=relaxed.
*/
static char *idemCommitAlone(IdemVtab *p, const char *zSchema,
                             const char *zMode, int iSync, int *pbNoMem){
  char *zWhy;
  if( sqlite3_stricmp(zSchema, "temp")==0 ){
    zWhy = sqlite3_mprintf("the temp schema commits on its own");
  }else if( idemSchemaInMemory(p->db, zSchema) ){
    zWhy = sqlite3_mprintf("%s is in memory, which a crash empties", zSchema);
  }else if( strcmp(zMode, "wal")==0 ){
    zWhy = sqlite3_mprintf("%s is in WAL mode, where SQLite commits each"
                           " attached file on its own", zSchema);
  }else if( strcmp(zMode, "off")==0 || strcmp(zMode, "memory")==0 ){
    zWhy = sqlite3_mprintf("%s has journal_mode=%s, which cannot roll back"
                           " across a crash", zSchema, zMode);
  }else if( iSync==0 ){
    zWhy = sqlite3_mprintf("%s has synchronous=OFF, which SQLite leaves out"
        " of the super-journal: it commits on its own", zSchema);
  }else if( iSync==1 && !p->opt.bRelaxedDurability ){
    zWhy = sqlite3_mprintf("%s has synchronous=NORMAL in %s mode, whose"
        " journal a power loss can tear", zSchema, zMode);
  }else if( idemSchemaInMemory(p->db, "main") ){
    zWhy = sqlite3_mprintf("the main database is in memory, so SQLite"
        " writes no super-journal and each file commits on its own");
  }else{
    return 0;
  }
  if( zWhy==0 ) *pbNoMem = 1;
  return zWhy;
}

/* idemCommitAlone() for schema zSchema (journal mode zMode, already
** read), its synchronous level read. */
static int idemCommitAloneRead(IdemVtab *p, const char *zSchema,
                               const char *zMode, char **pzWhy, int *pbNoMem){
  int rc, iSync = 2;
  if( sqlite3_stricmp(zSchema, "temp")!=0
   && (rc = idemSyncLevel(p->db, zSchema, &iSync))!=SQLITE_OK ){
    return rc;
  }
  *pzWhy = idemCommitAlone(p, zSchema, zMode, iSync, pbNoMem);
  return SQLITE_OK;
}

/*
** A transaction that records a local call in the table's schema and also
** writes another schema: SQLITE_OK if SQLite commits them all atomically,
** else the error that refuses the COMMIT before anything is written.  A
** local call's action may be in any of those files: committed one file
** at a time, a crash in between would leave the call done without its
** action (a retry replays an action that never happened) or the action
** without its call (a retry does it twice).
*/
static int idemCommitAtomic(IdemVtab *p, const unsigned char *aKey){
  const char *zOther = 0, *z;
  char *zWhy = 0;
  char zMode[16];
  int i, rc, bNoMem = 0, bHeld = 0, bWritten, bOwnRead = 0;
  for(i=0; (z = sqlite3_db_name(p->db, i))!=0 && zWhy==0 && !bNoMem; i++){
    if( sqlite3_stricmp(z, p->zDb)==0
     || sqlite3_txn_state(p->db, z)!=SQLITE_TXN_WRITE ){
      continue;
    }
    if( (rc = idemJournalMode(p->db, z, zMode))!=SQLITE_OK ) return rc;
    if( (rc = idemSchemaWritten(p->db, z, zMode, &bWritten))!=SQLITE_OK ){
      return rc;
    }
    if( !bWritten ) continue;
    zOther = z;
    bHeld = strcmp(zMode, "wal")==0 || strcmp(zMode, "off")==0;
    rc = idemCommitAloneRead(p, z, zMode, &zWhy, &bNoMem);
    if( rc==SQLITE_OK && zWhy==0 && !bNoMem && !bOwnRead ){
      /* The table's own file: once, whichever other file is written */
      bOwnRead = 1;
      rc = idemJournalMode(p->db, p->zDb, zMode);
      if( rc!=SQLITE_OK ) return rc;
      rc = idemCommitAloneRead(p, p->zDb, zMode, &zWhy, &bNoMem);
    }
    if( rc!=SQLITE_OK ){
      sqlite3_free(zWhy);
      return rc;
    }
  }
  if( bNoMem ){
    sqlite3_free(zWhy);
    return SQLITE_NOMEM;
  }
  if( zWhy ){
    char zHex[IDEM_KEY_HEX+1];
    idemKeyHex(aKey, zHex);
    idemVtabError(p, "this transaction records local call '%s' in %s and"
        " also %s %s, and they would not commit as one (%s): a crash"
        " between the two could leave the call recorded without its action"
        " or its action without the call; keep a local call's writes in"
        " the database of its table (%s), or give every file written a"
        " rollback journal on disk (journal_mode=DELETE, TRUNCATE or"
        " PERSIST) at synchronous=FULL with a main database that is a file;"
        " the transaction"
        " was rolled back", zHex, p->zDb,
        bHeld ? "holds a write transaction on" : "writes", zOther, zWhy,
        p->zDb);
    sqlite3_free(zWhy);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/*
** xSync, before the transaction commits: a local claim made in it that is
** still pending fails the COMMIT (which SQLite then rolls back).  Its
** action and its record belong in its own transaction (doc/contract.md
** §4): committed pending, the claim would hold its key forever and its
** action would never run.  External claims commit pending: that is their
** protocol (the claim is on disk before the request leaves).  A local
** claim that is recorded must commit as one with everything else the
** transaction wrote (idemCommitAtomic()).
*/
IDEM_PRIVATE int idemCommitSync(IdemVtab *p){
  sqlite3_stmt *pMain;
  const unsigned char *aLocal = 0;    /* a recorded local claim of ours */
  int i, rc;
  {
    char *zErr = 0;
    rc = idemDurableSyncCheck(&p->durable, p->db, p->zDb, &zErr);
    if( rc!=SQLITE_OK ){
      if( zErr ) idemVtabError(p, "%s; the transaction was rolled back", zErr);
      sqlite3_free(zErr);
      return rc;
    }
  }
  if( p->nTxn==0 ) return SQLITE_OK;
  rc = idemStmt(p, IDEM_STMT_MAIN, &pMain);
  for(i=0; rc==SQLITE_OK && i<p->nTxn; i++){
    rc = sqlite3_bind_blob(pMain, 1, p->aTxn[i].aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
    if( rc!=SQLITE_OK ){
      idemBindError(p, pMain, rc);
      break;
    }
    rc = sqlite3_step(pMain);
    if( rc==SQLITE_ROW ){
      int bLocal = strcmp(idemText(pMain, IDEM_M_KIND), "external")!=0;
      if( idemStatusParse(idemText(pMain, IDEM_M_STATUS))==IDEM_STATUS_PENDING
       && bLocal ){
        char zHex[IDEM_KEY_HEX+1];
        idemKeyHex(p->aTxn[i].aKey, zHex);
        idemVtabError(p, "local call '%s' is still pending at"
            " COMMIT; a local claim never commits pending: record its"
            " outcome in the same transaction (UPDATE \"%w\" SET status ="
            " 'done' ... WHERE key = '%s' AND member = 0, or status ="
            " 'failed'), or roll back; the transaction was rolled back",
            zHex, p->zName, zHex);
        rc = SQLITE_ERROR;
      }else{
        if( bLocal && aLocal==0 ) aLocal = p->aTxn[i].aKey;
        rc = SQLITE_OK;
      }
    }else if( rc==SQLITE_DONE ){
      rc = SQLITE_OK;                   /* released */
    }else{
      idemVtabDbError(p, rc);
    }
    sqlite3_reset(pMain);
  }
  if( rc==SQLITE_OK && aLocal ) rc = idemCommitAtomic(p, aLocal);
  return rc;
}

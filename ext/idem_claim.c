/* SPDX-License-Identifier: MIT */
/*
** idem_claim.c -- the claim (doc/contract.md §4): what an INSERT on an
** idem table may do, a call's claim or a member row; and what the rules
** after it share (idemInt.h, "Interface to code in idem_claim.c"): a
** call's status, the release of a call, the checks and errors of the
** inner writes.  It stands on the store (idem_store.c: the shadow tables,
** the statements, the transaction's list) and never calls the module
** (idem_vtab.c), which calls it.  The options are read in
** idem_options.c, the outcome (UPDATE, DELETE, reconcile, the reply) is
** decided in idem_outcome.c, the COMMIT checked in idem_commit.c.
**
** THE CLAIM, in three steps (idemInsertCall()), as doc/contract.md §4
** says them:
**
**   1. prepare  idemClaimPrepare(): check every value, canonicalize args
**               and keyargs, make the key; nothing is written (a
**               single-row INSERT has no statement journal, so nothing may
**               be written before a write that can fail);
**   2. write    idemClaimWrite(): exactly one write, the INSERT into
**               <name>_claim, whose UNIQUE(key, member) is the arbiter: a
**               new key is this caller's;
**   3. held     idemClaimHeld(): the key was held; by whom?
**
** In step 3 the stored identity (who, conv, tool, and keyargs if the call
** has them, else args) is compared: the same call is a SQLITE_CONSTRAINT
** (which OR IGNORE turns into "0 rows changed"); another call under the
** same key is SQLITE_ERROR, never ignorable, and tells nothing of the call
** that holds the key; the same keyargs with other args is what
** args_mismatch decides (doc/contract.md §9).
**
** RETENTION (doc/contract.md §10).  With retain, deciding a call sets its
** expires and adds it to <name>_expiry.  Expired calls are invisible (the
** cursor skips them).  Before its INSERT a claim deletes at most
** IDEM_SWEEP_LIMIT expired calls (idemSweep()): invisible rows, so the
** INSERT stays the one write that decides.  An expired call that still
** holds the claimed key is deleted when the INSERT meets it, and the
** INSERT is made again.
**
** ERRORS.  That duplicate is the only SQLITE_CONSTRAINT that xUpdate ever
** returns: OR IGNORE silences every constraint error, and "0 rows changed"
** must mean "someone else holds this call" (doc/contract.md §4).  Every
** other refusal, bad input or broken rule alike, is SQLITE_ERROR (or
** SQLITE_MISMATCH for a value of the wrong type), so that it stays an
** error under every conflict clause.
*/
#include "idemInt.h"

/* ------------------------------------------------------------ status */

/* The stored statuses by IdemStatus (idemInt.h). */
IDEM_PRIVATE const char *const azIdemStatus[IDEM_STATUS_OTHER] = {
  "pending", "done", "failed", "unknown"
};

/* The status named by text z (NULL: a stored NULL, shown as ""). */
IDEM_PRIVATE IdemStatus idemStatusParse(const char *z){
  IdemStatus e;
  if( z==0 ) return IDEM_STATUS_OTHER;
  switch( z[0] ){             /* (the four words' first letters differ) */
    case 'p': e = IDEM_STATUS_PENDING; break;
    case 'd': e = IDEM_STATUS_DONE;    break;
    case 'f': e = IDEM_STATUS_FAILED;  break;
    case 'u': e = IDEM_STATUS_UNKNOWN; break;
    default:  return IDEM_STATUS_OTHER;
  }
  return strcmp(z, azIdemStatus[e])==0 ? e : IDEM_STATUS_OTHER;
}

/*
** The text of an SQL value that must be one word (a status, a kind, a
** verdict), or 0 if it cannot be: not text, or text with an embedded NUL,
** which C would silently cut at the NUL.  *pbNoMem is set on OOM.
*/
IDEM_PRIVATE const char *idemWordValue(sqlite3_value *pVal, int *pbNoMem){
  const char *z;
  if( sqlite3_value_type(pVal)!=SQLITE_TEXT ) return 0;
  z = (const char*)sqlite3_value_text(pVal);
  if( z==0 ){ *pbNoMem = 1; return 0; }
  if( (int)strlen(z)!=sqlite3_value_bytes(pVal) ) return 0;
  return z;
}

/* A decided call (done, or failed and kept) is final. */
IDEM_PRIVATE int idemIsDecided(IdemStatus e){
  return e==IDEM_STATUS_DONE || e==IDEM_STATUS_FAILED;
}

/* ------------------------------------------------------------- helpers */

/* The text of column iCol of pStmt's row, or "" */
IDEM_PRIVATE const char *idemText(sqlite3_stmt *pStmt, int iCol){
  const char *z = (const char*)sqlite3_column_text(pStmt, iCol);
  return z ? z : "";
}

/* True if column iCol of pStmt's row holds the bytes of part pPart (type
** aside). */
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
/* A value that must not be given on INSERT: error unless NULL. */
static int idemMustBeNull(IdemVtab *p, sqlite3_value **aCol, int iCol, const char *zWhy){
  if( sqlite3_value_type(aCol[iCol])!=SQLITE_NULL ){
    idemVtabError(p, "%s %s", azIdemCol[iCol], zWhy);
    return 1;
  }
  return 0;
}

/* The error of a bind that failed (a value beyond SQLITE_LIMIT_LENGTH, out
** of memory): pStmt's bindings cleared, the table's message set.  Returns
** rc. */
IDEM_PRIVATE int idemBindError(IdemVtab *p, sqlite3_stmt *pStmt, int rc){
  sqlite3_clear_bindings(pStmt);
  return idemVtabDbError(p, rc);
}

/*
** After an inner write that ran: did it change the rows it must?  A
** trigger on the shadow table (RAISE(IGNORE)) or a conflict clause can
** make a write "succeed" and change nothing, which would turn a claim
** into a second winner or lose a record.  zWhat names the write.  Returns
** SQLITE_OK, or SQLITE_CORRUPT_VTAB with the message.
*/
IDEM_PRIVATE int idemCheckChanges(IdemVtab *p, const char *zWhat,
                                  int bAtLeast, int nWant){
  int n = sqlite3_changes(p->db);
  if( bAtLeast ? n>=nWant : n==nWant ) return SQLITE_OK;
  idemVtabError(p, "%s changed %d rows of %s_claim, not %s%d; the"
      " shadow table was changed outside idem (a trigger or a conflict"
      " clause?): nothing is recorded; see PRAGMA integrity_check",
      zWhat, n, p->zName, bAtLeast ? "at least " : "", nWant);
  return SQLITE_CORRUPT_VTAB;
}

/* Did an inner INSERT fail (rc) on the shadow table's UNIQUE(key, member),
** and on nothing else?  Extended result codes may be on or off. */
static int idemIsUniqueError(IdemVtab *p, int rc){
  int e = sqlite3_extended_errcode(p->db);
  return (rc&0xff)==SQLITE_CONSTRAINT
      && (e==SQLITE_CONSTRAINT_UNIQUE || e==SQLITE_CONSTRAINT_PRIMARYKEY);
}

/* The error of an inner write that failed: a constraint of the shadow
** table other than UNIQUE(key, member) (one that a damaged schema added)
** is never ignorable, so it is not SQLITE_CONSTRAINT. */
IDEM_PRIVATE int idemInnerError(IdemVtab *p, int rc){
  idemVtabDbError(p, rc);
  return (rc&0xff)==SQLITE_CONSTRAINT ? SQLITE_CORRUPT_VTAB : rc;
}

/* Run pStmt (an INSERT, UPDATE or DELETE bound by the caller) and reset
** it: SQLITE_DONE or the error code. */
IDEM_PRIVATE int idemStepReset(sqlite3_stmt *pStmt){
  int rc = idemStepWrite(pStmt);
  sqlite3_reset(pStmt);
  sqlite3_clear_bindings(pStmt);
  return rc;
}

/* Delete a call's whole group: a release (idem_outcome.c), an expired
** call (idemSweep()). */
IDEM_PRIVATE int idemRelease(IdemVtab *p,
                             const unsigned char aKey[IDEM_KEY_BYTES]){
  sqlite3_stmt *pDel;
  int rc = idemStmt(p, IDEM_STMT_RELEASE, &pDel);
  if( rc!=SQLITE_OK ) return rc;
  rc = sqlite3_bind_blob(pDel, 1, aKey, IDEM_KEY_BYTES, SQLITE_TRANSIENT);
  if( rc!=SQLITE_OK ) return idemBindError(p, pDel, rc);
  rc = idemStepWrite(pDel);
  sqlite3_reset(pDel);
  if( rc!=SQLITE_DONE ) return idemInnerError(p, rc);
  return idemCheckChanges(p, "the release's DELETE", 1, 1);
}


/* --------------------------------------------------------------- INSERT */

/*
** The message for a duplicate arrival, by its call's status.
*/
static void idemDuplicateError(IdemVtab *p, const char *zStatus,
                               const char *zHex, int bReplace){
  const char *zWhat;
  switch( idemStatusParse(zStatus) ){
    case IDEM_STATUS_PENDING:
      zWhat = "; it is in progress or was interrupted, and is not executed again";
      break;
    case IDEM_STATUS_UNKNOWN:
      zWhat = "; its outcome is unknown and it is not retried: the target's"
              " records decide (see the note)";
      break;
    default:
      zWhat = "";
      break;
  }
  idemVtabError(p, "%s (status: %s)%s; replay it with"
      " SELECT * FROM \"%w\" WHERE key = '%s'",
      bReplace ? "INSERT OR REPLACE never takes over a claim: call already claimed"
               : "call already claimed",
      zStatus, zWhat, p->zName, zHex);
}

/*
** Check the values of a claim's INSERT, before anything is written: the
** four parts of its identity into aPart[] (aPart[3] the args as given),
** its kind into *pzKind.
*/
static int idemClaimCheck(IdemVtab *p, sqlite3_value **aCol,
                          IdemPart aPart[4], const char **pzKind){
  static const int aPartCol[4] = { IDEM_COL_WHO, IDEM_COL_CONV, IDEM_COL_TOOL, IDEM_COL_ARGS };
  /* What a claim may not set: idem sets or computes them, or they belong
  ** to the outcome, recorded by UPDATE once the call has run. */
  static const struct { int iCol; const char *zWhy; } aNot[] = {
    { IDEM_COL_STATUS, "is set by idem: a claim starts 'pending'; record the"
                       " outcome afterwards with UPDATE ... SET status" },
    { IDEM_COL_ID,     "is the outcome: record it with UPDATE ... SET id once"
                       " the call has run" },
    { IDEM_COL_RESULT, "is the outcome: record it with UPDATE ... SET result"
                       " once the call has run" },
    { IDEM_COL_NOTE,   "is the outcome: record it with UPDATE ... SET note" },
    { IDEM_COL_CREATED, "is set by idem; leave it out of the INSERT" },
    { IDEM_COL_UPDATED, "is set by idem; leave it out of the INSERT" },
    { IDEM_COL_REPLY,   "is computed by idem; leave it out of the INSERT" },
    { IDEM_COL_RECONCILE, "is an UPDATE command for open calls; leave it out"
                          " of the INSERT" },
  };
  int i, rc;
  for(i=0; i<4; i++){
    int eType = sqlite3_value_type(aCol[aPartCol[i]]);
    if( eType==SQLITE_NULL ){
      idemVtabError(p, "%s is NULL; a claim needs who, conv, tool"
                    " and args", azIdemCol[aPartCol[i]]);
      return SQLITE_ERROR;
    }
    if( i==3 && eType==SQLITE_BLOB ){
      idemVtabError(p, "args is a blob; expected JSON text");
      return SQLITE_MISMATCH;
    }
    rc = idemKeyPartFrom(aCol[aPartCol[i]], &aPart[i]);
    if( rc==SQLITE_MISMATCH ){
      idemVtabError(p, "%s " IDEM_KEY_NONFINITE, azIdemCol[aPartCol[i]]);
    }
    if( rc!=SQLITE_OK ) return rc;
  }
  *pzKind = "local";
  if( sqlite3_value_type(aCol[IDEM_COL_KIND])!=SQLITE_NULL ){
    int bNoMem = 0;
    const char *zKind = idemWordValue(aCol[IDEM_COL_KIND], &bNoMem);
    if( bNoMem ) return SQLITE_NOMEM;
    if( zKind==0 || (strcmp(zKind, "local")!=0 && strcmp(zKind, "external")!=0) ){
      idemVtabError(p, "kind must be 'local' (a write into this"
          " database, the default) or 'external' (a request to another"
          " system), in lower case, not %s%s%s", zKind ? "'" : "", zKind ? zKind
            : sqlite3_value_type(aCol[IDEM_COL_KIND])==SQLITE_TEXT
              ? "text with an embedded NUL" : "a value that is not text",
          zKind ? "'" : "");
      return sqlite3_value_type(aCol[IDEM_COL_KIND])==SQLITE_TEXT
             ? SQLITE_ERROR : SQLITE_MISMATCH;
    }
    *pzKind = zKind;
  }
  {                                                      /* §12 */
    char *zErr = 0;
    rc = idemDurableCheck(&p->durable, p->db, p->zDb, (*pzKind)[0]=='e',
                          p->opt.bRelaxedDurability, &zErr);
    if( rc!=SQLITE_OK ){
      if( zErr ) idemVtabError(p, "%s", zErr);
      sqlite3_free(zErr);
      return rc;
    }
  }
  for(i=0; i<(int)(sizeof(aNot)/sizeof(aNot[0])); i++){
    if( idemMustBeNull(p, aCol, aNot[i].iCol, aNot[i].zWhy) ) return SQLITE_ERROR;
  }
  /* The columns of doc/contract.md §9-11.  Their errors are never
  ** constraints: OR IGNORE must not turn them into "a duplicate". */
  if( idemMustBeNull(p, aCol, IDEM_COL_EXPIRES, "is computed by idem (retain); leave it out of the INSERT")
   || idemMustBeNull(p, aCol, IDEM_COL_STALE, "is computed by idem (stale_after); leave it out of the INSERT")
   || idemMustBeNull(p, aCol, IDEM_COL_SENDS, "is counted by idem: 1 at the claim of an external call, one more at each resend; leave it out of the INSERT")
   || idemMustBeNull(p, aCol, IDEM_COL_RESEND_AT, "is computed by idem (honours_key, max_sends, resend_after); leave it out of the INSERT") ){
    return SQLITE_ERROR;
  }
  {                                                      /* §14 */
    sqlite3_value *pHon = aCol[IDEM_COL_HONOURS];
    sqlite3_int64 iHon = -1;
    if( sqlite3_value_type(pHon)!=SQLITE_NULL
     && (idemValueInt64(pHon, &iHon)!=1 || (iHon!=0 && iHon!=1)) ){
      idemVtabError(p, "honours_key must be 1 (the target honours the"
          " Idempotency-Key: an unknown outcome may be resent with the same"
          " key), 0 (it does not) or NULL (the table's option honours_key"
          " decides)");
      return SQLITE_MISMATCH;
    }
    if( iHon==1 && (*pzKind)[0]!='e' ){
      idemVtabError(p, "honours_key = 1 is for external calls: a local"
          " call sends no request (claim it with kind = 'external', or"
          " leave honours_key out)");
      return SQLITE_ERROR;
    }
  }
  if( sqlite3_value_type(aCol[IDEM_COL_KEYARGS])==SQLITE_BLOB ){
    idemVtabError(p, "keyargs is a blob; expected JSON text (or NULL:"
                  " the key is made of all the args)");
    return SQLITE_MISMATCH;
  }
  if( sqlite3_value_type(aCol[IDEM_COL_OWNER])==SQLITE_BLOB ){
    idemVtabError(p, "owner is a blob; expected text (a host and"
                  " process, a worker id) or NULL");
    return SQLITE_MISMATCH;
  }
  return SQLITE_OK;
}

/*
** The key of a claim: the one given (32 lowercase hex digits), or the
** hash of its parts (aPart[3] already canonical).
*/
static int idemClaimKey(IdemVtab *p, sqlite3_value **aCol,
                        const IdemPart aPart[4],
                        unsigned char aKey[IDEM_KEY_BYTES]){
  if( sqlite3_value_type(aCol[IDEM_COL_KEY])==SQLITE_NULL ){
    idemKeyHash(aPart, aKey);
  }else if( !idemKeyFromValue(aCol[IDEM_COL_KEY], aKey) ){
    idemVtabError(p, "key must be 32 lowercase hex digits (as"
                  " idem_key() returns), or NULL to compute it");
    return SQLITE_MISMATCH;
  }
  return SQLITE_OK;
}

/*
** Delete the calls that have expired by zNow (retain, doc/contract.md §10):
** at most IDEM_SWEEP_LIMIT of them, oldest expiry first, each with its
** members, found by a seek on <name>_expiry.  Only decided calls have an
** expiry, and a call is deleted only if its main row still shows that
** expiry (not a later claim of the same key), so no pending or unknown
** call is ever deleted here.  The rows are already invisible, so this
** changes nothing any reader sees: it may run before the claim's INSERT,
** which stays the one write that decides (a claim that then fails as a
** duplicate leaves this harmless cleanup behind).
**
** When a sweep has deleted every expired call, it notes when the next
** one can expire (p->zNextSweep): the earliest expiry left, or now +
** retain, as a call decided from now on expires no sooner.  Claims before
** that time skip the sweep.  The note is only ever too early or too late
** to clean up sooner (another clock, a rolled-back sweep): what readers
** see never depends on it.
*/
static int idemSweep(IdemVtab *p, sqlite3_int64 iNow, const char *zNow){
  unsigned char aKeys[IDEM_SWEEP_LIMIT][IDEM_KEY_BYTES];
  char aExp[IDEM_SWEEP_LIMIT][IDEM_TIME_LEN];
  sqlite3_stmt *pExp, *pMain, *pDel;
  int i, n = 0, rc;
  if( p->zNextSweep[0] && strcmp(zNow, p->zNextSweep)<0 ) return SQLITE_OK;
  /* Its deletes run before the claim's INSERT, whose failure would leave
  ** them (and what a trigger wrote) in the transaction: the shadow tables
  ** are checked first, if the schema changed since (idemStoreClaimable()). */
  if( (rc = idemStoreClaimable(p))!=SQLITE_OK
   || (rc = idemStmt(p, IDEM_STMT_EXPIRED, &pExp))!=SQLITE_OK
   || (rc = idemStmt(p, IDEM_STMT_MAIN, &pMain))!=SQLITE_OK
   || (rc = idemStmt(p, IDEM_STMT_EXPIRY_DEL, &pDel))!=SQLITE_OK ){
    return rc;
  }
  sqlite3_bind_text(pExp, 1, zNow, -1, SQLITE_STATIC);
  while( n<IDEM_SWEEP_LIMIT && (rc = sqlite3_step(pExp))==SQLITE_ROW ){
    const char *z = (const char*)sqlite3_column_text(pExp, 0);
    if( z && strlen(z)<IDEM_TIME_LEN
     && sqlite3_column_type(pExp, 1)==SQLITE_BLOB
     && sqlite3_column_bytes(pExp, 1)==IDEM_KEY_BYTES ){
      memcpy(aExp[n], z, strlen(z)+1);
      memcpy(aKeys[n++], sqlite3_column_blob(pExp, 1), IDEM_KEY_BYTES);
    }
  }
  sqlite3_reset(pExp);
  if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ) return idemVtabDbError(p, rc);
  for(i=0; i<n; i++){
    int bThis = 0;
    sqlite3_bind_blob(pMain, 1, aKeys[i], IDEM_KEY_BYTES, SQLITE_STATIC);
    rc = sqlite3_step(pMain);
    if( rc==SQLITE_ROW ){
      const char *z = (const char*)sqlite3_column_text(pMain, IDEM_M_EXPIRES);
      bThis = z && strcmp(z, aExp[i])==0
           && idemIsDecided(idemStatusParse(idemText(pMain, IDEM_M_STATUS)));
      rc = SQLITE_DONE;
    }
    sqlite3_reset(pMain);
    if( rc!=SQLITE_DONE ) return idemVtabDbError(p, rc);
    if( bThis && (rc = idemRelease(p, aKeys[i]))!=SQLITE_OK ) return rc;
    sqlite3_bind_text(pDel, 1, aExp[i], -1, SQLITE_STATIC);
    sqlite3_bind_blob(pDel, 2, aKeys[i], IDEM_KEY_BYTES, SQLITE_STATIC);
    rc = idemStepReset(pDel);
    if( rc!=SQLITE_DONE ) return idemVtabDbError(p, rc);
  }
  p->zNextSweep[0] = 0;
  if( n<IDEM_SWEEP_LIMIT ){
    sqlite3_stmt *pNext;
    char zLater[IDEM_TIME_LEN];
    const char *zFirst;
    rc = idemStmt(p, IDEM_STMT_EXPIRY_NEXT, &pNext);
    if( rc ) return rc;
    idemFormatTime(iNow + p->opt.iRetainMs, zLater);
    rc = sqlite3_step(pNext);
    if( rc==SQLITE_ROW ){
      zFirst = (const char*)sqlite3_column_text(pNext, 0);
      if( zFirst==0 || strlen(zFirst)>=IDEM_TIME_LEN || strcmp(zFirst, zLater)>0 ){
        zFirst = zLater;
      }
      memcpy(p->zNextSweep, zFirst, strlen(zFirst)+1);
      rc = SQLITE_DONE;
    }
    sqlite3_reset(pNext);
    if( rc!=SQLITE_DONE ) return idemVtabDbError(p, rc);
  }
  return SQLITE_OK;
}

/* What the main row of the call that holds a claim's key says. */
typedef enum IdemHeld {
  IDEM_HELD_DUPLICATE,        /* the same call: SQLITE_CONSTRAINT */
  IDEM_HELD_OTHER_CALL,       /* another who, conv, tool or keyargs/args */
  IDEM_HELD_OTHER_ARGS,       /* the same keyargs, other args (§9) */
  IDEM_HELD_EXPIRED           /* a decided call past its retain: gone */
} IdemHeld;

/*
** 3. The key of a claim is held: by this call (a duplicate,
** SQLITE_CONSTRAINT) or by another (SQLITE_ERROR, never ignorable, never
** a "duplicate")?
** aPart[3] is what names the call: its keyargs if it has them, else its
** args; pArgs its args, bKeyargs whether keyargs were given.  A call
** that has expired is no holder: *pbExpired is set, and the caller
** deletes it and claims again.
*/
static int idemClaimHeld(IdemVtab *p, sqlite3_stmt *pMain,
                         const unsigned char aKey[IDEM_KEY_BYTES],
                         const IdemPart aPart[4], const IdemPart *pArgs,
                         int bKeyargs, const char *zNow, int *pbExpired){
  char zHex[IDEM_KEY_HEX+1];
  int i, rc;
  *pbExpired = 0;
  idemKeyHex(aKey, zHex);
  rc = sqlite3_bind_blob(pMain, 1, aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
  if( rc!=SQLITE_OK ) return idemBindError(p, pMain, rc);
  rc = sqlite3_step(pMain);
  if( rc==SQLITE_ROW ){
    IdemHeld eHeld = IDEM_HELD_DUPLICATE;
    const char *zExp = (const char*)sqlite3_column_text(pMain, IDEM_M_EXPIRES);
    int bStoredKeyargs = sqlite3_column_type(pMain, IDEM_M_KEYARGS)!=SQLITE_NULL;
    if( p->opt.iRetainMs>0 && zExp && strcmp(zExp, zNow)<=0 ){
      eHeld = IDEM_HELD_EXPIRED;
    }else{
      for(i=0; i<3 && eHeld==IDEM_HELD_DUPLICATE; i++){
        if( !idemSameBytes(pMain, IDEM_M_WHO+i, &aPart[i]) ){
          eHeld = IDEM_HELD_OTHER_CALL;
        }
      }
      if( eHeld==IDEM_HELD_DUPLICATE
       && !idemSameBytes(pMain, bStoredKeyargs ? IDEM_M_KEYARGS : IDEM_M_ARGS,
                         &aPart[3]) ){
        eHeld = IDEM_HELD_OTHER_CALL;
      }
      if( eHeld==IDEM_HELD_DUPLICATE && (bKeyargs || bStoredKeyargs)
       && !idemSameBytes(pMain, IDEM_M_ARGS, pArgs) ){
        eHeld = IDEM_HELD_OTHER_ARGS;
      }
    }
    switch( eHeld ){
      case IDEM_HELD_EXPIRED:
        *pbExpired = 1;
        rc = SQLITE_OK;
        break;
      case IDEM_HELD_OTHER_CALL:
        idemVtabError(p, "key '%s' is already held by a different"
            " call (another who, conv, tool or %s); a key belongs to one call:"
            " compute keys with idem_key() or give each call a fresh key",
            zHex, (bKeyargs || bStoredKeyargs) ? "keyargs" : "args");
        rc = SQLITE_ERROR;
        break;
      case IDEM_HELD_OTHER_ARGS:
        if( !p->opt.bArgsMismatchReplay ){
          idemVtabError(p, "key '%s' " IDEM_ARGS_MISMATCH_TEXT
              ": the same who, conv, tool and keyargs, but other"
              " args; a retry must send the arguments of its first call"
              " (args_mismatch=error)", zHex);
          rc = SQLITE_ERROR;
          break;
        }
        /* args_mismatch=replay: an ordinary duplicate. */
        /* fall through */
      default:
        /* Under OR IGNORE the duplicate is no error: a message left
        ** behind would be reported with a later error of the statement
        ** that has none of its own (an SQLITE_BUSY). */
        if( sqlite3_vtab_on_conflict(p->db)!=SQLITE_IGNORE ){
          idemDuplicateError(p, idemText(pMain, IDEM_M_STATUS), zHex,
                             sqlite3_vtab_on_conflict(p->db)==SQLITE_REPLACE);
        }
        rc = SQLITE_CONSTRAINT_UNIQUE;
        break;
    }
  }else{
    idemVtabDbError(p, rc);
    if( rc==SQLITE_DONE ) rc = SQLITE_CORRUPT_VTAB;
  }
  sqlite3_reset(pMain);
  return rc;
}

/*
** A claim, prepared: what its INSERT writes, every value checked and
** computed before anything is written.  The canonical texts live in the
** table's canonicalizers, held until idemClaimFinish().
*/
typedef struct IdemClaim IdemClaim;
struct IdemClaim {
  IdemPart aPart[4];          /* who, conv, tool, and what names the call:
                              ** the canonical keyargs if given, else args */
  IdemPart args;              /* The canonical args, stored whole */
  int bKeyargs;               /* keyargs given (doc/contract.md §9) */
  const char *zKind;          /* "local" or "external" */
  unsigned char aKey[IDEM_KEY_BYTES];  /* The key, given or computed */
  sqlite3_int64 iNow;         /* The time of the claim, */
  char zNow[IDEM_TIME_LEN];   /* ... as created stores it */
  IdemJson *pJson;            /* Holds args' canonical text */
  IdemJson *pJsonKey;         /* Holds keyargs' canonical text */
};

/*
** 1. Prepare a claim (doc/contract.md §2, §4, §9): check every value (a
** part that is NULL, a bad kind, a column a claim may not set),
** canonicalize args and keyargs, and make the key.  Nothing is written:
** a single-row INSERT has no statement journal, so nothing may be written
** before a write that can fail.  Call idemClaimFinish() in any case.
*/
static int idemClaimPrepare(IdemVtab *p, sqlite3_value **aCol,
                            IdemClaim *pC){
  int rc, n;
  memset(pC, 0, sizeof(*pC));
  pC->bKeyargs = sqlite3_value_type(aCol[IDEM_COL_KEYARGS])!=SQLITE_NULL;
  rc = idemClaimCheck(p, aCol, pC->aPart, &pC->zKind);
  if( rc ) return rc;

  /* args, canonical; stored whole, and the key's unless keyargs are
  ** given.  The canonical text can be longer than the text given (1e20
  ** prints 21 digits): if it could not be stored, nothing is claimed. */
  if( (pC->pJson = idemJsonAcquire(&p->pJson))==0 ) return SQLITE_NOMEM;
  rc = idemJsonCanonical(pC->pJson, (const char*)pC->aPart[3].p,
                         (int)pC->aPart[3].n);
  if( rc==SQLITE_ERROR || rc==SQLITE_TOOBIG ){
    idemVtabError(p, rc==SQLITE_ERROR ? "args must be JSON text: %s"
                  : "args: %s", idemJsonError(pC->pJson));
  }
  if( rc ) return rc;
  pC->args.p = idemJsonText(pC->pJson, &n);
  pC->args.n = n;
  if( n>sqlite3_limit(p->db, SQLITE_LIMIT_LENGTH, -1) ){
    idemVtabError(p, "args: the canonical text is %d bytes, more than"
        " SQLite's length limit (SQLITE_LIMIT_LENGTH, %d); nothing was"
        " claimed", n, sqlite3_limit(p->db, SQLITE_LIMIT_LENGTH, -1));
    return SQLITE_TOOBIG;
  }
  pC->aPart[3] = pC->args;

  /* keyargs (§9): the key and the call's identity are made of them. */
  if( pC->bKeyargs ){
    IdemPart k;
    if( (pC->pJsonKey = idemJsonAcquire(&p->pJsonKey))==0 ) return SQLITE_NOMEM;
    rc = idemKeyPartFrom(aCol[IDEM_COL_KEYARGS], &k);
    if( rc==SQLITE_MISMATCH ){
      idemVtabError(p, "keyargs " IDEM_KEY_NONFINITE);
    }
    if( rc ) return rc;
    rc = idemJsonCanonical(pC->pJsonKey, (const char*)k.p, (int)k.n);
    if( rc==SQLITE_ERROR || rc==SQLITE_TOOBIG ){
      idemVtabError(p, "keyargs must be JSON text: %s",
                    idemJsonError(pC->pJsonKey));
    }
    if( rc ) return rc;
    pC->aPart[3].p = idemJsonText(pC->pJsonKey, &n);
    pC->aPart[3].n = n;
  }
  rc = idemClaimKey(p, aCol, pC->aPart, pC->aKey);
  if( rc ) return rc;
  pC->iNow = idemNowMs(p->pVfs);
  idemFormatTimeKept(&p->now, pC->iNow, pC->zNow);
  return SQLITE_OK;
}

/* Give back the canonicalizers a prepared claim holds. */
static void idemClaimFinish(IdemVtab *p, IdemClaim *pC){
  idemJsonRelease(&p->pJsonKey, pC->pJsonKey);
  idemJsonRelease(&p->pJson, pC->pJson);
}

/*
** The claim's INSERT found the schema changed since it was prepared, and
** again once checked and prepared anew (idemStoreInsertStep()): something
** expires every statement of the connection as the claim runs (an
** authorizer or a function set again from a callback).  Nothing was
** written.  The statement is finalized, so sqlite3_errmsg() says "not an
** error" by now: the message says what happened.  SQLITE_SCHEMA.
*/
static int idemSchemaMoved(IdemVtab *p){
  idemVtabError(p, "the schema changed again as the claim's INSERT was"
      " prepared (something expires the connection's statements at each:"
      " an authorizer or a function set again while the claim runs?);"
      " nothing was written");
  return SQLITE_SCHEMA;
}

/*
** THE CLAIM'S BINDINGS, KEPT.  Each sqlite3_bind_*() takes the
** connection's mutex and releases what the parameter held (~150 to 250
** instructions on SQLite 3.40), and a claim bound eleven parameters of its
** INSERT, then cleared all sixteen (~2 800 in all, 6% of a claim a
** transaction).  But bindings outlive sqlite3_reset(), and a text or blob
** bound SQLITE_STATIC is read where it lies when the statement is
** stepped (OP_Variable).  So the INSERT's parameters are bound to the
** table's own copies of the values (IdemVtab.ins), and each claim writes
** its values into the copies and binds again only a parameter whose type,
** length or copy changed: a run of claims with values of the same lengths
** binds nothing.  What is bound stays valid for as long as it is bound:
** constants ('pending', 'local', 'external'), or the table's copies, which
** are freed only after the INSERT is finalized (idemStoreClose()), and
** grown only right before the parameter is bound to the new copy.  Where
** a copy would not do, all the bindings are cleared after the step, as
** before, and bound afresh at the next claim:
**
**   a value longer than IDEM_INS_KEEP_MAX  bound where it lies (the table
**                                          keeps no copy of that size)
**   a database not in UTF-8                SQLite converts a text as it
**                                          binds it, into a copy of its own
**
** A new INSERT (prepared again after SQLITE_SCHEMA, a DROP, a RENAME, an
** upgrade) has nothing bound: idemStoreInsert() forgets them; a member
** row's INSERT clears them first, and after it (idemInsertMember()).
*/
static const int aIdemInsVar[IDEM_INS_NVAL] = { 3, 4, 5, 6, 13, 14 };

/* Value i of the kept bindings (IdemInsKept.aVal[i], parameter
** aIdemInsVar[i]): eType SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL, and its
** n bytes at z.  *pbDirect is set where it is bound where it lies. */
static int idemInsBindValue(IdemInsKept *k, sqlite3_stmt *pIns, int i,
                            int eType, const void *z, int n, int *pbDirect){
  struct IdemInsVal *v = &k->aVal[i];
  const void *zBind;
  if( eType==SQLITE_NULL ){
    /* (nothing bound is NULL: a new INSERT, or one whose bindings were
    ** cleared) */
    int bWas = k->bBound && v->eType!=SQLITE_NULL;
    v->eType = SQLITE_NULL;
    return bWas ? sqlite3_bind_null(pIns, aIdemInsVar[i]) : SQLITE_OK;
  }
  if( n>IDEM_INS_KEEP_MAX ){
    v->eType = 0;
    *pbDirect = 1;
    zBind = z;
  }else{
    if( v->z==0 || v->nAlloc<n ){
      /* (n is more than the copy bound holds: bound again below, before
      ** any step) */
      int nNew = n<64 ? 64 : n;
      char *zNew = (char*)sqlite3_realloc(v->z, nNew);
      if( zNew==0 ) return SQLITE_NOMEM;
      v->z = zNew;
      v->nAlloc = nNew;
    }
    if( n>0 ) memcpy(v->z, z, (size_t)n);
    if( k->bBound && v->eType==eType && v->n==n ) return SQLITE_OK;
    v->eType = eType;
    v->n = n;
    zBind = v->z;
  }
  return eType==SQLITE_BLOB
       ? sqlite3_bind_blob(pIns, aIdemInsVar[i], zBind, n, SQLITE_STATIC)
       : sqlite3_bind_text(pIns, aIdemInsVar[i], (const char*)zBind, n,
                           SQLITE_STATIC);
}

/*
** Bind the claim's INSERT for claim pC (above): SQLITE_OK and *pbKeep,
** true if the bindings may be kept after the step, or the error of a
** bind.
*/
static int idemClaimBind(IdemVtab *p, sqlite3_stmt *pIns,
                         sqlite3_value **aCol, const IdemClaim *pC,
                         int *pbKeep){
  IdemInsKept *k = &p->ins;
  int i, rc = SQLITE_OK, bDirect = 0, n;
  const char *zKind = pC->zKind[0]=='e' ? "external" : "local";
  int bExt = zKind[0]=='e';
  int bHon;
  sqlite3_value *pHon = aCol[IDEM_COL_HONOURS];
  /* (read again at the next claim if it could not be read) */
  if( k->eUtf8==0 ) k->eUtf8 = (signed char)idemDbUtf8(p->db);
  /* §14: an external call honours the key as its claim or the table
  ** says, and was taken for sending once; a local call sends nothing. */
  bHon = bExt && (sqlite3_value_type(pHon)==SQLITE_NULL
                  ? p->opt.bHonoursKey : sqlite3_value_int(pHon)==1);
  if( !k->bBound ){
    rc = sqlite3_bind_blob(pIns, 1, k->aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
    if( rc==SQLITE_OK ) rc = sqlite3_bind_int(pIns, 2, 0);
    if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pIns, 8, "pending", 7, SQLITE_STATIC);
    k->zKind = 0;
    k->nNow = -1;
    k->iHon = -1;
    k->bSends = -1;
  }
  memcpy(k->aKey, pC->aKey, IDEM_KEY_BYTES);
  n = (int)strlen(pC->zNow);
  memcpy(k->zNow, pC->zNow, (size_t)n+1);
  if( rc==SQLITE_OK && n!=k->nNow ){
    rc = sqlite3_bind_text(pIns, 12, k->zNow, n, SQLITE_STATIC);
    k->nNow = n;
  }
  if( rc==SQLITE_OK && zKind!=k->zKind ){
    rc = sqlite3_bind_text(pIns, 7, zKind, -1, SQLITE_STATIC);
    k->zKind = zKind;
  }
  if( rc==SQLITE_OK && bHon!=k->iHon ){
    rc = sqlite3_bind_int(pIns, 15, bHon);
    k->iHon = bHon;
  }
  if( rc==SQLITE_OK && bExt!=k->bSends ){
    rc = bExt ? sqlite3_bind_int(pIns, 16, 1) : sqlite3_bind_null(pIns, 16);
    k->bSends = bExt;
  }
  for(i=0; i<3 && rc==SQLITE_OK; i++){
    const IdemPart *pPart = &pC->aPart[i];
    rc = idemInsBindValue(k, pIns, i,
        sqlite3_value_type(aCol[IDEM_COL_WHO+i])==SQLITE_BLOB
          ? SQLITE_BLOB : SQLITE_TEXT,
        pPart->p, (int)pPart->n, &bDirect);
  }
  if( rc==SQLITE_OK ){
    rc = idemInsBindValue(k, pIns, 3, SQLITE_TEXT, pC->args.p,
                          (int)pC->args.n, &bDirect);
  }
  if( rc==SQLITE_OK ){
    rc = idemInsBindValue(k, pIns, 4, pC->bKeyargs ? SQLITE_TEXT : SQLITE_NULL,
                          pC->aPart[3].p, (int)pC->aPart[3].n, &bDirect);
  }
  if( rc==SQLITE_OK ){
    sqlite3_value *pOwner = aCol[IDEM_COL_OWNER];
    const char *zOwner = 0;
    int eType = SQLITE_NULL;
    if( sqlite3_value_type(pOwner)!=SQLITE_NULL ){
      zOwner = (const char*)sqlite3_value_text(pOwner);
      if( zOwner==0 ) rc = SQLITE_NOMEM;
      eType = SQLITE_TEXT;
    }
    if( rc==SQLITE_OK ){
      rc = idemInsBindValue(k, pIns, 5, eType, zOwner,
                            zOwner ? sqlite3_value_bytes(pOwner) : 0,
                            &bDirect);
    }
  }
  if( rc!=SQLITE_OK ){
    k->bBound = 0;                      /* (cleared by idemBindError()) */
    return rc;
  }
  k->bBound = 1;
  *pbKeep = !bDirect && k->eUtf8>0;
  return SQLITE_OK;
}

/*
** 2. Write the claim with the claim's INSERT (idemStoreInsert()): the one
** INSERT, arbitrated by the shadow table's
** UNIQUE(key, member) (doc/contract.md §4).  SQLITE_OK and *pRowid: the
** key was free and this caller owns the call (a local claim is added to
** the transaction's list, which xSync checks).  *pbHeld: the key is held,
** nothing is written, no message is set.  Else the error, with its
** message: claims refused (a damage the check found when the schema
** changed since the INSERT was prepared: SQLITE_SCHEMA, nothing written).
*/
static int idemClaimWrite(IdemVtab *p, sqlite3_value **aCol,
                          const IdemClaim *pC, sqlite3_int64 *pRowid,
                          int *pbHeld){
  sqlite3_stmt *pIns;
  int rc, nSchema = 0, bKeep = 0;
  *pbHeld = 0;
 again:
  if( (rc = idemStoreInsert(p, &pIns))!=SQLITE_OK ) return rc;
  rc = idemClaimBind(p, pIns, aCol, pC, &bKeep);
  if( rc!=SQLITE_OK ) return idemBindError(p, pIns, rc);
  rc = idemStoreInsertStep(p, pIns, bKeep);
  if( rc==SQLITE_SCHEMA && nSchema++==0 ) goto again;
  if( rc==SQLITE_SCHEMA ) return idemSchemaMoved(p);
  if( rc==SQLITE_CONSTRAINT_NOTNULL ) return idemRowsRefused(p);
  if( rc==SQLITE_DONE ){
    rc = idemCheckChanges(p, "the claim's INSERT", 0, 1);
    if( rc!=SQLITE_OK ) return rc;
    *pRowid = sqlite3_last_insert_rowid(p->db);
    idemDurableWrote(&p->durable);    /* the journal mode is kept now */
    /* A local claim must not commit pending: xSync checks it. */
    if( pC->zKind[0]=='l' ) idemTxnAdd(p, pC->aKey);
    return SQLITE_OK;
  }
  if( idemIsUniqueError(p, rc) ){
    *pbHeld = 1;
    return SQLITE_OK;
  }
  return idemInnerError(p, rc);
}

/*
** INSERT of a call's main row, the claim itself (member NULL or 0):
** prepare (1), write (2), and if the key is held (3), tell by whom
** (idemClaimHeld()): the same call is a duplicate (SQLITE_CONSTRAINT,
** which OR IGNORE turns into "0 rows changed"), another call an error.
** With retain, a few expired calls are deleted first (idemSweep()), and an
** expired call that still holds the key is deleted and the claim written
** again, once.
*/
/*
** Under INSERT OR IGNORE, a statement that claims some calls and finds
** others already claimed would leave its caller unable to tell from
** changes() which claims are its own (doc/contract.md §4): the row that
** would mix the two outcomes is an error instead, which rolls the whole
** statement back.  Only a statement of several rows can mix them, and
** SQLite runs each such statement in a savepoint or a transaction of its
** own, which the store tracks as its window (idemTxnWindow()).  bOwn: this
** row claimed its call; else it found it held.  SQLITE_OK, or the error.
*/
static int idemIgnoreMixed(IdemVtab *p, int bOwn){
  IdemWindow *w = idemTxnWindow(p);
  if( w==0 ) return SQLITE_OK;
  if( bOwn ? w->bDup : w->bOwn ){
    idemVtabError(p, "this INSERT OR IGNORE claimed some calls and found"
        " others already claimed: from changes() its caller could not tell"
        " which are its own, so nothing of the statement is kept; claim"
        " one call per statement, or use a plain INSERT (all or nothing)");
    return SQLITE_ERROR;
  }
  if( bOwn ) w->bOwn = 1; else w->bDup = 1;
  return SQLITE_OK;
}

static int idemInsertCall(IdemVtab *p, sqlite3_value **aCol, sqlite3_int64 *pRowid){
  IdemClaim c;
  sqlite3_stmt *pMain;
  int nTry, bHeld = 0, bExpired;
  int rc = idemClaimPrepare(p, aCol, &c);
  if( rc==SQLITE_OK ) rc = idemTxnReserve(p);
  if( rc==SQLITE_OK && p->opt.iRetainMs>0 ) rc = idemSweep(p, c.iNow, c.zNow);
  for(nTry=0; rc==SQLITE_OK && nTry<2; nTry++){
    rc = idemClaimWrite(p, aCol, &c, pRowid, &bHeld);
    if( rc!=SQLITE_OK || !bHeld ) break;
    rc = idemStmt(p, IDEM_STMT_MAIN, &pMain);   /* (held: by whom?) */
    if( rc!=SQLITE_OK ) break;
    rc = idemClaimHeld(p, pMain, c.aKey, c.aPart, &c.args, c.bKeyargs,
                       c.zNow, &bExpired);
    if( rc!=SQLITE_OK ) break;
    if( !bExpired || nTry>0 ){
      rc = idemVtabDbError(p, SQLITE_CORRUPT_VTAB);
      break;
    }
    /* An expired call held it: gone, its rows are deleted, the claim is
    ** made again and wins. */
    rc = idemRelease(p, c.aKey);
  }
  if( (rc==SQLITE_OK || rc==SQLITE_CONSTRAINT_UNIQUE)
   && sqlite3_vtab_on_conflict(p->db)==SQLITE_IGNORE ){
    int rc2 = idemIgnoreMixed(p, rc==SQLITE_OK);
    if( rc2!=SQLITE_OK ) rc = rc2;
  }
  idemClaimFinish(p, &c);
  return rc;
}

/*
** INSERT of a member row: INSERT INTO calls(key, member, id, result).
*/
static int idemInsertMember(IdemVtab *p, sqlite3_value **aCol,
                            sqlite3_int64 iMember, sqlite3_int64 *pRowid){
  static const int aNull[] = { IDEM_COL_WHO, IDEM_COL_CONV, IDEM_COL_TOOL,
    IDEM_COL_ARGS, IDEM_COL_KIND, IDEM_COL_STATUS, IDEM_COL_NOTE,
    IDEM_COL_CREATED, IDEM_COL_UPDATED, IDEM_COL_REPLY, IDEM_COL_RECONCILE,
    IDEM_COL_KEYARGS, IDEM_COL_OWNER, IDEM_COL_EXPIRES, IDEM_COL_STALE,
    IDEM_COL_HONOURS, IDEM_COL_SENDS, IDEM_COL_RESEND_AT };
  unsigned char aKey[IDEM_KEY_BYTES];
  char zHex[IDEM_KEY_HEX+1];
  char zNow[IDEM_TIME_LEN];
  sqlite3_stmt *pIns, *pMain;
  const char *zStatus;
  int i, rc, nSchema = 0;

  if( !idemKeyFromValue(aCol[IDEM_COL_KEY], aKey) ){
    idemVtabError(p, "member %lld needs the key of its call"
                  " (32 lowercase hex digits)", iMember);
    return SQLITE_MISMATCH;
  }
  for(i=0; i<(int)(sizeof(aNull)/sizeof(aNull[0])); i++){
    if( idemMustBeNull(p, aCol, aNull[i], "belongs to the call, not to a"
          " member: a member row is INSERT INTO calls(key, member, id, result)") ){
      return SQLITE_ERROR;
    }
  }
  idemKeyHex(aKey, zHex);
  if( (rc = idemStmt(p, IDEM_STMT_MAIN, &pMain))!=SQLITE_OK ) return rc;

  rc = sqlite3_bind_blob(pMain, 1, aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
  if( rc!=SQLITE_OK ) return idemBindError(p, pMain, rc);
  rc = sqlite3_step(pMain);
  if( rc!=SQLITE_ROW ){
    if( rc==SQLITE_DONE ){
      idemVtabError(p, "no call with key '%s'; claim the call"
                    " before adding members", zHex);
      rc = SQLITE_ERROR;
    }else{
      idemVtabDbError(p, rc);
    }
    sqlite3_reset(pMain);
    return rc;
  }
  zStatus = idemText(pMain, IDEM_M_STATUS);
  if( idemStatusParse(zStatus)!=IDEM_STATUS_PENDING ){
    idemVtabError(p, "members are added only while the call is"
        " pending; call '%s' is %s", zHex, zStatus);
    sqlite3_reset(pMain);
    return SQLITE_ERROR;
  }
  sqlite3_reset(pMain);

  idemNow(p->pVfs, zNow);
 again:
  if( (rc = idemStoreInsert(p, &pIns))!=SQLITE_OK ) return rc;
  if( p->ins.bBound ){                  /* (a claim's, kept: cleared) */
    sqlite3_clear_bindings(pIns);
    p->ins.bBound = 0;
  }
  rc = sqlite3_bind_blob(pIns, 1, aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_int64(pIns, 2, iMember);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_value(pIns, 9, aCol[IDEM_COL_ID]);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_value(pIns, 10, aCol[IDEM_COL_RESULT]);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pIns, 12, zNow, -1, SQLITE_STATIC);
  if( rc!=SQLITE_OK ) return idemBindError(p, pIns, rc);
  rc = idemStoreInsertStep(p, pIns, 0);
  if( rc==SQLITE_SCHEMA && nSchema++==0 ) goto again;
  if( rc==SQLITE_SCHEMA ) return idemSchemaMoved(p);
  if( rc==SQLITE_CONSTRAINT_NOTNULL ) return idemRowsRefused(p);
  if( rc==SQLITE_DONE ){
    rc = idemCheckChanges(p, "the member's INSERT", 0, 1);
    if( rc==SQLITE_OK ) *pRowid = sqlite3_last_insert_rowid(p->db);
    return rc;
  }
  if( idemIsUniqueError(p, rc) ){
    /* Not a duplicate call: an error under OR IGNORE too. */
    idemVtabError(p, "member %lld of call '%s' already exists;"
                  " members are written once: give this row another member"
                  " number", iMember, zHex);
    return SQLITE_ERROR;
  }
  return idemInnerError(p, rc);
}

/*
** xUpdate's INSERT: a claim (member NULL or 0) or a member row.
*/
IDEM_PRIVATE int idemClaimInsert(IdemVtab *p, sqlite3_value **aCol,
                                 sqlite3_int64 *pRowid){
  sqlite3_value *pMember = aCol[IDEM_COL_MEMBER];
  sqlite3_int64 iMember = 0;
  /* The schema is looked at when the claim's INSERT is prepared, and again
  ** whenever it changed since (idemStoreInsert()).  A damaged table is
  ** refused here, until a change makes it whole again. */
  if( p->zDamaged ){
    int rc = idemStoreClaimable(p);
    if( rc!=SQLITE_OK ) return rc;
  }
  if( sqlite3_vtab_on_conflict(p->db)==SQLITE_FAIL ){
    /* OR FAIL keeps what a statement wrote before its failing row: a
    ** caller told "already claimed" would never act on the claims of the
    ** rows before (doc/contract.md §4). */
    idemVtabError(p, "INSERT OR FAIL is not supported: it keeps the rows"
        " a statement wrote before a failing one, so its caller could not"
        " tell its own claims from a duplicate; use INSERT (all or"
        " nothing), INSERT OR IGNORE or INSERT OR ROLLBACK");
    return SQLITE_ERROR;
  }
  if( sqlite3_value_type(pMember)!=SQLITE_NULL ){
    int bInt = idemValueInt64(pMember, &iMember);
    if( bInt<0 ) return SQLITE_NOMEM;
    if( !bInt || iMember<0 ){
      idemVtabError(p, "member must be 0 (the call) or a positive"
                    " integer (its members 1, 2, ...)");
      return SQLITE_MISMATCH;
    }
  }
  if( iMember==0 ) return idemInsertCall(p, aCol, pRowid);
  return idemInsertMember(p, aCol, iMember, pRowid);
}

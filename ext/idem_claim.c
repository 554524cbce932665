/* SPDX-License-Identifier: MIT */
/*
** idem_claim.c -- the claim's rules (doc/contract.md §4, §5): what an
** INSERT, an UPDATE and a DELETE on an idem table may do, the COMMIT of
** its local claims, its options, and the reply of a duplicate.  It stands
** on the store (idem_store.c: the shadow tables, the statements, the
** transaction's list) and never calls the module (idem_vtab.c), which
** calls it.
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
**
** THE OUTCOME.  An UPDATE of a call's main row goes in three steps:
**
**   1. read   the stored row; refuse what is never allowed (updating a
**             member row, changing a fixed column); parse the stored
**             status and kind and the requested change (IdemChange) once;
**   2. decide idemTransition(): a pure function of (stored status, kind,
**             requested change, table options) -> IdemAction: record a
**             status, release the claim, or refuse with which message;
**   3. apply  idemApply(): run the statement the action names.
**
** The rules live in idemTransition(), one line or one case each.  The
** table's options are one struct (IdemOptions, idemInt.h) parsed in one
** place, idemOptionParse().  A new rule adds its option to IdemOptions
** and idemOptionParse(), its status or verdict
** to the enums below, its case to idemTransition(), its message to
** idemRefuse() and, if it writes something new, its step to idemApply().
**
** DELETE removes a decided call's whole group; an open call (pending or
** unknown) is kept: only reconcile releases it (doc/contract.md §5, §7).
*/
#include "idemInt.h"

/*
** The note recorded on an external call that failed (doc/contract.md §5,
** §6), and the message a pending call's reply carries.
*/
#define IDEM_UNKNOWN_NOTE \
  "the request may already have reached the target system; the target's " \
  "records decide the outcome; it is not retried. idem stops this side " \
  "from sending twice; only a target that honours the Idempotency-Key " \
  "header can refuse a duplicate"

#define IDEM_PENDING_NOTE \
  "the call is in progress, or its process was interrupted; it is not " \
  "executed again"

#define IDEM_RECONCILED_NOTE \
  "reconciled: the target's records show that the request arrived"

/* ------------------------------------------------------------- options */

/* Every option, for the message that rejects an unknown one. */
#define IDEM_OPTIONS_HELP \
  "local_failure=release|keep, durability=full|relaxed," \
  " args_mismatch=error|replay, retain=<duration> and" \
  " stale_after=<duration>"

/* The longest duration accepted: 100 years, in milliseconds. */
#define IDEM_DURATION_MAX ((sqlite3_int64)36525*86400000)

/*
** Parse a duration z[0..n): a number (digits, an optional fraction) and a
** unit, second(s), minute(s), hour(s) or day(s), with or without blanks
** between ("90 seconds", "24 hours", "1.5days").  Returns the duration in
** milliseconds (at least 1), or 0 if the text is not a duration.
*/
static sqlite3_int64 idemDurationParse(const char *z, int n){
  static const struct { const char *zUnit; sqlite3_int64 iMs; } aUnit[] = {
    { "second", 1000 }, { "minute", 60000 }, { "hour", 3600000 },
    { "day", 86400000 },
  };
  double r = 0.0, rScale = 1.0;
  int i = 0, nDigit = 0, j, nUnit;
  while( i<n && z[i]>='0' && z[i]<='9' ){
    if( nDigit<15 ) r = r*10.0 + (z[i]-'0');
    else return 0;
    nDigit++; i++;
  }
  if( i<n && z[i]=='.' ){
    i++;
    while( i<n && z[i]>='0' && z[i]<='9' ){
      rScale /= 10.0;
      r += (z[i]-'0')*rScale;
      nDigit++; i++;
    }
  }
  if( nDigit==0 ) return 0;
  while( i<n && (z[i]==' ' || z[i]=='\t') ) i++;
  nUnit = n - i;
  if( nUnit>0 && (z[n-1]=='s' || z[n-1]=='S') ) nUnit--;
  for(j=0; j<(int)(sizeof(aUnit)/sizeof(aUnit[0])); j++){
    if( nUnit==(int)strlen(aUnit[j].zUnit)
     && sqlite3_strnicmp(z+i, aUnit[j].zUnit, nUnit)==0 ){
      sqlite3_int64 iMs = (sqlite3_int64)(r*(double)aUnit[j].iMs + 0.5);
      if( iMs<1 || iMs>IDEM_DURATION_MAX ) return 0;   /* 36525 days is in */
      return iMs;
    }
  }
  return 0;
}

/*
** The options that take one of two words: the first word (the default)
** stores 0 in the IdemOptions field at iOffset, the second 1.
*/
typedef struct IdemSwitch IdemSwitch;
struct IdemSwitch {
  const char *zName;          /* The option */
  const char *azWord[2];      /* Its values: the default, the other */
  size_t iOffset;             /* offsetof() its int field in IdemOptions */
  const char *zHelp;          /* What the error for another value says */
};
static const IdemSwitch aIdemSwitch[] = {
  { "local_failure", { "release", "keep" },
    offsetof(IdemOptions, bKeepLocalFailure),
    "local_failure=release (the default) or local_failure=keep" },
  { "args_mismatch", { "error", "replay" },
    offsetof(IdemOptions, bArgsMismatchReplay),
    "args_mismatch=error (the default) or args_mismatch=replay" },
  { "durability", { "full", "relaxed" },
    offsetof(IdemOptions, bRelaxedDurability),
    "durability=full (the default: a claim needs a commit that survives"
    " what its act survives) or durability=relaxed (accept that a power"
    " loss may take back a claim)" },
};

/* Note option number iOpt as given; an error if it was given before
** (the last one winning silently would hide a typo or a stale copy). */
static int idemOptionTwice(IdemOptions *pOpt, int iOpt, const char *zName,
                           char **pzErr){
  if( pOpt->mGiven & (1u<<iOpt) ){
    *pzErr = sqlite3_mprintf("%s is given twice; give each option once",
                             zName);
    return 1;
  }
  pOpt->mGiven |= 1u<<iOpt;
  return 0;
}

/*
** Parse one module argument "name=value" into *pOpt.  Returns SQLITE_OK
** or an error with *pzErr set (the text alone: the table's error puts
** "idem: <table>: " in front).  A value may be quoted ('24 hours') or not
** (24 hours): SQLite hands the argument over as it was written.
*/
IDEM_PRIVATE int idemOptionParse(IdemOptions *pOpt, const char *zArg,
                                 char **pzErr){
  const char *zEq = strchr(zArg, '=');
  int nName, nValue, i;
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
  for(i=0; i<(int)(sizeof(aIdemSwitch)/sizeof(aIdemSwitch[0])); i++){
    const IdemSwitch *pSw = &aIdemSwitch[i];
    int j;
    if( nName!=(int)strlen(pSw->zName)
     || sqlite3_strnicmp(zArg, pSw->zName, nName)!=0 ) continue;
    if( idemOptionTwice(pOpt, i, pSw->zName, pzErr) ) return SQLITE_ERROR;
    for(j=0; j<2; j++){
      if( nValue==(int)strlen(pSw->azWord[j])
       && sqlite3_strnicmp(zValue, pSw->azWord[j], nValue)==0 ){
        memcpy((char*)pOpt + pSw->iOffset, &j, sizeof(j));
        return SQLITE_OK;
      }
    }
    *pzErr = sqlite3_mprintf("unknown value '%.*s' for %s; use %s",
                             nValue, zValue, pSw->zName, pSw->zHelp);
    return SQLITE_ERROR;
  }
  if( (nName==6 && sqlite3_strnicmp(zArg, "retain", 6)==0)
   || (nName==11 && sqlite3_strnicmp(zArg, "stale_after", 11)==0) ){
    sqlite3_int64 iMs = idemDurationParse(zValue, nValue);
    if( idemOptionTwice(pOpt, nName==6 ? 3 : 4, nName==6 ? "retain"
                        : "stale_after", pzErr) ){
      return SQLITE_ERROR;
    }
    if( iMs==0 ){
      *pzErr = sqlite3_mprintf("bad duration '%.*s' for %.*s; use a"
          " positive number and a unit of seconds, minutes, hours or days"
          " (at most 36525 days), e.g. %.*s='24 hours'",
          nValue, zValue, nName, zArg, nName, zArg);
      return SQLITE_ERROR;
    }
    if( nName==6 ) pOpt->iRetainMs = iMs; else pOpt->iStaleAfterMs = iMs;
    return SQLITE_OK;
  }
 bad:
  *pzErr = sqlite3_mprintf("unknown option '%s'; the options are "
      IDEM_OPTIONS_HELP, zArg);
  return SQLITE_ERROR;
}

/* ---------------------------------------------------- status and kind */

/* A call's status, stored or asked for. */
typedef enum IdemStatus {
  IDEM_STATUS_PENDING,        /* claimed, outcome not recorded yet */
  IDEM_STATUS_DONE,           /* recorded: final */
  IDEM_STATUS_FAILED,         /* a local call that failed, kept: final */
  IDEM_STATUS_UNKNOWN,        /* an external call that failed: reconcile it */
  IDEM_STATUS_OTHER,          /* any other text (a bad UPDATE, a damaged row) */
  IDEM_STATUS_NULL,           /* UPDATE ... SET status = NULL */
  IDEM_STATUS_ABSENT          /* an UPDATE that leaves status alone */
} IdemStatus;

static const char *const azIdemStatus[] = {
  "pending", "done", "failed", "unknown"
};

/* The status named by text z (NULL: a stored NULL, shown as ""). */
static IdemStatus idemStatusParse(const char *z){
  int i;
  if( z ){
    for(i=0; i<(int)(sizeof(azIdemStatus)/sizeof(azIdemStatus[0])); i++){
      if( strcmp(z, azIdemStatus[i])==0 ) return (IdemStatus)i;
    }
  }
  return IDEM_STATUS_OTHER;
}

/*
** The text of an SQL value that must be one word (a status, a kind, a
** verdict), or 0 if it cannot be: not text, or text with an embedded NUL,
** which C would silently cut at the NUL.  *pbNoMem is set on OOM.
*/
static const char *idemWordValue(sqlite3_value *pVal, int *pbNoMem){
  const char *z;
  if( sqlite3_value_type(pVal)!=SQLITE_TEXT ) return 0;
  z = (const char*)sqlite3_value_text(pVal);
  if( z==0 ){ *pbNoMem = 1; return 0; }
  if( (int)strlen(z)!=sqlite3_value_bytes(pVal) ) return 0;
  return z;
}

/* A decided call (done, or failed and kept) is final. */
static int idemIsDecided(IdemStatus e){
  return e==IDEM_STATUS_DONE || e==IDEM_STATUS_FAILED;
}

/* A call's kind: anything stored but 'external' counts as local. */
typedef enum IdemKind {
  IDEM_KIND_LOCAL,            /* a write into this database (the default) */
  IDEM_KIND_EXTERNAL          /* a request to another system */
} IdemKind;

/* UPDATE ... SET reconcile = ?: the operator's verdict on an open call. */
typedef enum IdemReconcile {
  IDEM_RECONCILE_NONE,        /* not given */
  IDEM_RECONCILE_ARRIVED,     /* the target's records show the request */
  IDEM_RECONCILE_NOT_ARRIVED, /* they show it never came */
  IDEM_RECONCILE_NOT_SENT,    /* the request never left (the owner's word) */
  IDEM_RECONCILE_OTHER        /* anything else */
} IdemReconcile;

/* ------------------------------------------------- the transition table */

/* What an UPDATE asks for, parsed once. */
typedef struct IdemChange IdemChange;
struct IdemChange {
  IdemStatus eStatus;         /* The status asked for, or _NULL, _ABSENT */
  IdemReconcile eReconcile;   /* The verdict given, or _NONE */
  int bNote;                  /* True if a note is given */
};

/* What to do about it. */
typedef enum IdemActionType {
  IDEM_ACT_RECORD,            /* store eStatus (and id, result, note) */
  IDEM_ACT_RELEASE,           /* delete the call's group: it may run again */
  IDEM_ACT_REFUSE             /* an error: eRefusal says which */
} IdemActionType;

/* The note stored by IDEM_ACT_RECORD. */
typedef enum IdemNote {
  IDEM_NOTE_GIVEN,            /* the one given, or the one stored */
  IDEM_NOTE_RECONCILED,       /* IDEM_RECONCILED_NOTE */
  IDEM_NOTE_UNKNOWN           /* IDEM_UNKNOWN_NOTE, and the one given */
} IdemNote;

/* Why an UPDATE is refused: see idemRefuse() for each message. */
typedef enum IdemRefusal {
  IDEM_REFUSE_NULL_STATUS,
  IDEM_REFUSE_DECIDED,
  IDEM_REFUSE_RECONCILE_WITH_STATUS,
  IDEM_REFUSE_BAD_RECONCILE,
  IDEM_REFUSE_UNKNOWN_NEEDS_RECONCILE,
  IDEM_REFUSE_LOCAL_UNKNOWN,
  IDEM_REFUSE_PENDING_NOT_STALE,
  IDEM_REFUSE_NOT_SENT_UNKNOWN,
  IDEM_REFUSE_BAD_STATUS
} IdemRefusal;

typedef struct IdemAction IdemAction;
struct IdemAction {
  IdemActionType eType;
  IdemStatus eStatus;         /* IDEM_ACT_RECORD: the status to store */
  IdemNote eNote;             /* IDEM_ACT_RECORD: the note to store */
  IdemRefusal eRefusal;       /* IDEM_ACT_REFUSE: why */
};

static IdemAction idemAction(IdemActionType eType, IdemStatus eStatus,
                             IdemNote eNote, IdemRefusal eRefusal){
  IdemAction a;
  a.eType = eType;
  a.eStatus = eStatus;
  a.eNote = eNote;
  a.eRefusal = eRefusal;
  return a;
}
#define idemRecord(eStatus, eNote) \
  idemAction(IDEM_ACT_RECORD, eStatus, eNote, IDEM_REFUSE_BAD_STATUS)
#define idemReleaseAction() \
  idemAction(IDEM_ACT_RELEASE, IDEM_STATUS_PENDING, IDEM_NOTE_GIVEN, \
             IDEM_REFUSE_BAD_STATUS)
#define idemRefusal(eRefusal) \
  idemAction(IDEM_ACT_REFUSE, IDEM_STATUS_PENDING, IDEM_NOTE_GIVEN, eRefusal)

/*
** The rules of an UPDATE of a call (doc/contract.md §4, §5), in the order
** they are tried.  Pure: it reads nothing but its arguments.
**
**   pending -> pending   id, result, note may change
**   pending -> done      recorded
**   pending -> failed    local: released (rows deleted) or, with
**                        local_failure=keep, kept as failed;
**                        external: kept as 'unknown' with the note
**   unknown, pending + reconcile = 'arrived'      -> done
**   unknown + reconcile = 'not_arrived'           -> released
**   pending + reconcile = 'not_arrived'           -> released if stale now,
**                        else refused: its owner may still be sending it
**   pending + reconcile = 'not_sent'              -> released (the explicit
**                        word that the request never left)
**   unknown + reconcile = 'not_sent'              -> refused: it may have left
**   done, failed         final: every change is an error
*/
static IdemAction idemTransition(
  IdemStatus eOld,                  /* The stored status */
  IdemKind eKind,                   /* The stored kind */
  int bStale,                       /* A pending call gone quiet (§11) */
  const IdemChange *pChg,           /* What the UPDATE asks for */
  const IdemOptions *pOpt           /* The table's options */
){
  IdemStatus eNew = pChg->eStatus;
  if( eNew==IDEM_STATUS_NULL ) return idemRefusal(IDEM_REFUSE_NULL_STATUS);
  if( idemIsDecided(eOld) ) return idemRefusal(IDEM_REFUSE_DECIDED);

  /* The operator's explicit reconciliation of an unknown (or abandoned
  ** pending) call, from the target's records. */
  if( pChg->eReconcile!=IDEM_RECONCILE_NONE ){
    if( eNew!=IDEM_STATUS_ABSENT && eNew!=IDEM_STATUS_DONE ){
      return idemRefusal(IDEM_REFUSE_RECONCILE_WITH_STATUS);
    }
    switch( pChg->eReconcile ){
      case IDEM_RECONCILE_ARRIVED:
        return idemRecord(IDEM_STATUS_DONE,
                          pChg->bNote ? IDEM_NOTE_GIVEN : IDEM_NOTE_RECONCILED);
      case IDEM_RECONCILE_NOT_ARRIVED:
        /* A pending call's owner may still be working: only a call that
        ** is stale at this very UPDATE (not at a sweeper's earlier
        ** SELECT) is released on the target's word alone. */
        if( eOld==IDEM_STATUS_PENDING && !bStale ){
          return idemRefusal(IDEM_REFUSE_PENDING_NOT_STALE);
        }
        return idemReleaseAction();
      case IDEM_RECONCILE_NOT_SENT:
        if( eOld==IDEM_STATUS_UNKNOWN ){
          return idemRefusal(IDEM_REFUSE_NOT_SENT_UNKNOWN);
        }
        return idemReleaseAction();
      default:
        return idemRefusal(IDEM_REFUSE_BAD_RECONCILE);
    }
  }
  if( eOld==IDEM_STATUS_UNKNOWN ){
    return idemRefusal(IDEM_REFUSE_UNKNOWN_NEEDS_RECONCILE);
  }

  switch( eNew ){
    case IDEM_STATUS_ABSENT:
    case IDEM_STATUS_PENDING:
      return idemRecord(IDEM_STATUS_PENDING, IDEM_NOTE_GIVEN);
    case IDEM_STATUS_DONE:
      return idemRecord(IDEM_STATUS_DONE, IDEM_NOTE_GIVEN);
    case IDEM_STATUS_FAILED:
    case IDEM_STATUS_UNKNOWN:
      if( eKind==IDEM_KIND_EXTERNAL ){
        return idemRecord(IDEM_STATUS_UNKNOWN, IDEM_NOTE_UNKNOWN);
      }
      if( eNew==IDEM_STATUS_UNKNOWN ){
        return idemRefusal(IDEM_REFUSE_LOCAL_UNKNOWN);
      }
      if( pOpt->bKeepLocalFailure ){
        return idemRecord(IDEM_STATUS_FAILED, IDEM_NOTE_GIVEN);
      }
      return idemReleaseAction();
    default:
      return idemRefusal(IDEM_REFUSE_BAD_STATUS);
  }
}

/*
** The message of a refused UPDATE.  zHex is the call's key, zOld its
** stored status, zNew the status asked for.  Returns the error code.
*/
static int idemRefuse(IdemVtab *p, IdemRefusal eRefusal, const char *zHex,
                      const char *zOld, const char *zNew){
  switch( eRefusal ){
    case IDEM_REFUSE_NULL_STATUS:
      idemVtabError(p, "status cannot be NULL; set it to 'done' or 'failed', or leave it out to keep the call pending");
      break;
    case IDEM_REFUSE_DECIDED:
      idemVtabError(p, "call '%s' is already decided (status: %s); a"
          " decided call is final: replay it with SELECT reply FROM \"%w\""
          " WHERE key = '%s'", zHex, zOld, p->zName, zHex);
      break;
    case IDEM_REFUSE_RECONCILE_WITH_STATUS:
      idemVtabError(p, "reconcile = 'arrived' makes the call done,"
          " 'not_arrived' and 'not_sent' release it; do not set another"
          " status with it");
      break;
    case IDEM_REFUSE_BAD_RECONCILE:
      idemVtabError(p, "reconcile must be 'arrived' (the target's"
          " records show the request: the call becomes done),"
          " 'not_arrived' (they show it never came: the claim is released)"
          " or 'not_sent' (a pending call whose request never left: the"
          " claim is released)");
      break;
    case IDEM_REFUSE_UNKNOWN_NEEDS_RECONCILE:
      idemVtabError(p, "call '%s' has an unknown outcome and is never"
          " released or completed by an ordinary UPDATE; after checking the"
          " target's records, reconcile it: UPDATE \"%w\" SET reconcile ="
          " 'arrived' (or 'not_arrived') WHERE key = '%s' AND member = 0",
          zHex, p->zName, zHex);
      break;
    case IDEM_REFUSE_LOCAL_UNKNOWN:
      idemVtabError(p, "call '%s' is local: its outcome is known;"
                    " set status to 'done' or 'failed'", zHex);
      break;
    case IDEM_REFUSE_PENDING_NOT_STALE:
      idemVtabError(p, "call '%s' is pending and not stale: its"
          " owner may still be sending it, so reconcile = 'not_arrived' does"
          " not release it (a pending call is released on the target's"
          " records only once it is stale: the table option stale_after);"
          " if you know that the request never left, say so: UPDATE \"%w\""
          " SET reconcile = 'not_sent' WHERE key = '%s' AND member = 0",
          zHex, p->zName, zHex);
      break;
    case IDEM_REFUSE_NOT_SENT_UNKNOWN:
      idemVtabError(p, "call '%s' has an unknown outcome: its"
          " request may have left, so reconcile = 'not_sent' cannot release"
          " it; after checking the target's records, set reconcile ="
          " 'arrived' or 'not_arrived'", zHex);
      break;
    case IDEM_REFUSE_BAD_STATUS:
      idemVtabError(p, "status must be 'pending', 'done' or"
                    " 'failed', not '%s'", zNew ? zNew : "(not text)");
      break;
  }
  return SQLITE_ERROR;
}

/* ------------------------------------------------------------- helpers */

/* The text of column iCol of pStmt's row, or "" */
static const char *idemText(sqlite3_stmt *pStmt, int iCol){
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

/*
** The packed key in column iCol of the current row of pStmt, or an
** error if it is not a 16-byte blob, as only a database changed outside
** idem can have.
*/
static int idemRowKey(IdemVtab *p, sqlite3_stmt *pStmt, int iCol,
                      unsigned char aKey[IDEM_KEY_BYTES]){
  if( sqlite3_column_type(pStmt, iCol)!=SQLITE_BLOB
   || sqlite3_column_bytes(pStmt, iCol)!=IDEM_KEY_BYTES ){
    idemVtabError(p, "a row of %s_claim has a damaged key (not a"
        " 16-byte blob); the database was changed outside idem: see PRAGMA"
        " integrity_check", p->zName);
    return SQLITE_CORRUPT_VTAB;
  }
  memcpy(aKey, sqlite3_column_blob(pStmt, iCol), IDEM_KEY_BYTES);
  return SQLITE_OK;
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
static int idemBindError(IdemVtab *p, sqlite3_stmt *pStmt, int rc){
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
static int idemCheckChanges(IdemVtab *p, const char *zWhat, int bAtLeast,
                            int nWant){
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
static int idemInnerError(IdemVtab *p, int rc){
  idemVtabDbError(p, rc);
  return (rc&0xff)==SQLITE_CONSTRAINT ? SQLITE_CORRUPT_VTAB : rc;
}

/* Run pStmt (an INSERT, UPDATE or DELETE bound by the caller) and reset
** it: SQLITE_DONE or the error code. */
static int idemStepReset(sqlite3_stmt *pStmt){
  int rc = sqlite3_step(pStmt);
  sqlite3_reset(pStmt);
  sqlite3_clear_bindings(pStmt);
  return rc;
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
   || idemMustBeNull(p, aCol, IDEM_COL_STALE, "is computed by idem (stale_after); leave it out of the INSERT") ){
    return SQLITE_ERROR;
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

static int idemRelease(IdemVtab*, const unsigned char[IDEM_KEY_BYTES]);

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
  if( (rc = idemStmt(p, IDEM_STMT_EXPIRED, &pExp))!=SQLITE_OK
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
          idemVtabError(p, "key '%s' was already used with other"
              " arguments: the same who, conv, tool and keyargs, but other"
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
  idemFormatTime(pC->iNow, pC->zNow);
  return SQLITE_OK;
}

/* Give back the canonicalizers a prepared claim holds. */
static void idemClaimFinish(IdemVtab *p, IdemClaim *pC){
  idemJsonRelease(&p->pJsonKey, pC->pJsonKey);
  idemJsonRelease(&p->pJson, pC->pJson);
}

/*
** 2. Write the claim with pIns (IDEM_STMT_INSERT): the one INSERT,
** arbitrated by the shadow table's
** UNIQUE(key, member) (doc/contract.md §4).  SQLITE_OK and *pRowid: the
** key was free and this caller owns the call (a local claim is added to
** the transaction's list, which xSync checks).  *pbHeld: the key is held,
** nothing is written, no message is set.  Else the error, with its
** message.
*/
static int idemClaimWrite(IdemVtab *p, sqlite3_stmt *pIns, sqlite3_value **aCol,
                          const IdemClaim *pC, sqlite3_int64 *pRowid,
                          int *pbHeld){
  int i, rc;
  *pbHeld = 0;
  rc = sqlite3_bind_blob(pIns, 1, pC->aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_int(pIns, 2, 0);
  for(i=0; i<3 && rc==SQLITE_OK; i++){
    const IdemPart *pPart = &pC->aPart[i];
    if( sqlite3_value_type(aCol[IDEM_COL_WHO+i])==SQLITE_BLOB ){
      rc = sqlite3_bind_blob(pIns, 3+i, pPart->p, (int)pPart->n, SQLITE_STATIC);
    }else{
      rc = sqlite3_bind_text(pIns, 3+i, pPart->p, (int)pPart->n, SQLITE_STATIC);
    }
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_bind_text(pIns, 6, pC->args.p, (int)pC->args.n, SQLITE_STATIC);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pIns, 7, pC->zKind, -1, SQLITE_STATIC);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pIns, 8, "pending", 7, SQLITE_STATIC);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pIns, 12, pC->zNow, -1, SQLITE_STATIC);
  if( rc==SQLITE_OK && pC->bKeyargs ){
    rc = sqlite3_bind_text(pIns, 13, pC->aPart[3].p, (int)pC->aPart[3].n,
                           SQLITE_STATIC);
  }
  if( rc==SQLITE_OK && sqlite3_value_type(aCol[IDEM_COL_OWNER])!=SQLITE_NULL ){
    const char *zOwner = (const char*)sqlite3_value_text(aCol[IDEM_COL_OWNER]);
    rc = zOwner==0 ? SQLITE_NOMEM
       : sqlite3_bind_text(pIns, 14, zOwner,
                           sqlite3_value_bytes(aCol[IDEM_COL_OWNER]),
                           SQLITE_STATIC);
  }
  if( rc!=SQLITE_OK ) return idemBindError(p, pIns, rc);
  rc = idemStepReset(pIns);
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
  sqlite3_stmt *pIns, *pMain;
  int nTry, bHeld = 0, bExpired;
  int rc = idemClaimPrepare(p, aCol, &c);
  if( rc==SQLITE_OK ) rc = idemStmt(p, IDEM_STMT_MAIN, &pMain);
  if( rc==SQLITE_OK ) rc = idemStmt(p, IDEM_STMT_INSERT, &pIns);
  if( rc==SQLITE_OK ) rc = idemTxnReserve(p);
  if( rc==SQLITE_OK && p->opt.iRetainMs>0 ) rc = idemSweep(p, c.iNow, c.zNow);
  for(nTry=0; rc==SQLITE_OK && nTry<2; nTry++){
    rc = idemClaimWrite(p, pIns, aCol, &c, pRowid, &bHeld);
    if( rc!=SQLITE_OK || !bHeld ) break;
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
    IDEM_COL_KEYARGS, IDEM_COL_OWNER, IDEM_COL_EXPIRES, IDEM_COL_STALE };
  unsigned char aKey[IDEM_KEY_BYTES];
  char zHex[IDEM_KEY_HEX+1];
  char zNow[IDEM_TIME_LEN];
  sqlite3_stmt *pIns, *pMain;
  const char *zStatus;
  int i, rc;

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
  if( (rc = idemStmt(p, IDEM_STMT_MAIN, &pMain))!=SQLITE_OK
   || (rc = idemStmt(p, IDEM_STMT_INSERT, &pIns))!=SQLITE_OK ){
    return rc;
  }

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
  rc = sqlite3_bind_blob(pIns, 1, aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_int64(pIns, 2, iMember);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_value(pIns, 9, aCol[IDEM_COL_ID]);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_value(pIns, 10, aCol[IDEM_COL_RESULT]);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pIns, 12, zNow, -1, SQLITE_STATIC);
  if( rc!=SQLITE_OK ) return idemBindError(p, pIns, rc);
  rc = idemStepReset(pIns);
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
  if( p->zDamaged ){    /* checked again at each transaction's start */
    idemVtabError(p, "%s", p->zDamaged);
    return SQLITE_CORRUPT_VTAB;
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

/* --------------------------------------------------------------- UPDATE */

/* Delete a call's whole group. */
static int idemRelease(IdemVtab *p, const unsigned char aKey[IDEM_KEY_BYTES]){
  sqlite3_stmt *pDel;
  int rc = idemStmt(p, IDEM_STMT_RELEASE, &pDel);
  if( rc!=SQLITE_OK ) return rc;
  rc = sqlite3_bind_blob(pDel, 1, aKey, IDEM_KEY_BYTES, SQLITE_TRANSIENT);
  if( rc!=SQLITE_OK ) return idemBindError(p, pDel, rc);
  rc = sqlite3_step(pDel);
  sqlite3_reset(pDel);
  if( rc!=SQLITE_DONE ) return idemInnerError(p, rc);
  return idemCheckChanges(p, "the release's DELETE", 1, 1);
}

/* Is a new value given for column iCol that differs from the stored one
** (pOld: the BYRID statement)?  Keys compare as hex text. */
static int idemChanges(sqlite3_value **aCol, int iCol, sqlite3_stmt *pOld){
  sqlite3_value *pNew = aCol[iCol];
  const void *a, *b;
  int na, nb, iQ;
  if( sqlite3_value_nochange(pNew) ) return 0;
  if( iCol==IDEM_COL_KEY ){
    unsigned char aKey[IDEM_KEY_BYTES];
    if( !idemKeyFromValue(pNew, aKey) ) return 1;
    return sqlite3_column_bytes(pOld, IDEM_Q_KEY)!=IDEM_KEY_BYTES
        || memcmp(aKey, sqlite3_column_blob(pOld, IDEM_Q_KEY), IDEM_KEY_BYTES)!=0;
  }
  switch( iCol ){
    case IDEM_COL_REPLY: case IDEM_COL_STALE:
      /* Computed, not stored: any value given is a change. */
      return sqlite3_value_type(pNew)!=SQLITE_NULL;
    case IDEM_COL_KEYARGS: iQ = IDEM_Q_KEYARGS; break;
    case IDEM_COL_OWNER:   iQ = IDEM_Q_OWNER;   break;
    case IDEM_COL_EXPIRES: iQ = IDEM_Q_EXPIRES; break;
    default:               iQ = IDEM_QCOL(iCol); break;
  }
  if( sqlite3_value_type(pNew)==SQLITE_NULL ){
    return sqlite3_column_type(pOld, iQ)!=SQLITE_NULL;
  }
  if( sqlite3_column_type(pOld, iQ)==SQLITE_NULL ) return 1;
  if( iCol==IDEM_COL_MEMBER ){
    sqlite3_int64 iNew;
    return idemValueInt64(pNew, &iNew)!=1
        || iNew!=sqlite3_column_int64(pOld, IDEM_Q_MEMBER);
  }
  a = sqlite3_value_text(pNew);
  na = sqlite3_value_bytes(pNew);
  b = sqlite3_column_text(pOld, iQ);
  nb = sqlite3_column_bytes(pOld, iQ);
  return na!=nb || (na>0 && memcmp(a, b, na)!=0);
}

/* The value to store for column iCol on UPDATE: the new one, or the old.
** Returns the bind's result. */
static int idemBindNewOrOld(sqlite3_stmt *pStmt, int iParam,
                            sqlite3_value **aCol, int iCol, sqlite3_stmt *pOld){
  if( sqlite3_value_nochange(aCol[iCol]) ){
    return sqlite3_bind_value(pStmt, iParam,
                              sqlite3_column_value(pOld, IDEM_QCOL(iCol)));
  }
  return sqlite3_bind_value(pStmt, iParam, aCol[iCol]);
}

/*
** Refuse an UPDATE of a member row or of a fixed column (identity, kind,
** times): the checks made before the rules.  zHex is the row's key.
*/
static int idemUpdateCheck(IdemVtab *p, sqlite3_stmt *pOld,
                           sqlite3_value **aCol, const char *zHex){
  static const int aFixed[] = { IDEM_COL_KEY, IDEM_COL_MEMBER, IDEM_COL_WHO,
    IDEM_COL_CONV, IDEM_COL_TOOL, IDEM_COL_ARGS, IDEM_COL_KIND,
    IDEM_COL_CREATED, IDEM_COL_UPDATED, IDEM_COL_REPLY, IDEM_COL_KEYARGS,
    IDEM_COL_OWNER, IDEM_COL_EXPIRES, IDEM_COL_STALE };
  int i;
  if( sqlite3_column_int64(pOld, IDEM_Q_MEMBER)!=0 ){
    idemVtabError(p, "member rows are not updated; record the call's"
        " outcome on its main row: UPDATE \"%w\" SET status = ... WHERE"
        " key = '%s' AND member = 0", p->zName, zHex);
    return SQLITE_ERROR;
  }
  for(i=0; i<(int)(sizeof(aFixed)/sizeof(aFixed[0])); i++){
    if( idemChanges(aCol, aFixed[i], pOld) ){
      if( aFixed[i]==IDEM_COL_EXPIRES || aFixed[i]==IDEM_COL_STALE ){
        idemVtabError(p, "%s is computed by idem; leave it out of"
                      " the UPDATE", azIdemCol[aFixed[i]]);
        return SQLITE_ERROR;
      }
      idemVtabError(p, "%s cannot be changed; it is fixed when the"
                    " call is claimed", azIdemCol[aFixed[i]]);
      return SQLITE_ERROR;
    }
  }
  return SQLITE_OK;
}

/*
** What an UPDATE asks for (*pChg), and the text of the status it names
** (*pzNew, for the message that refuses it).
*/
static int idemChangeParse(sqlite3_value **aCol, IdemChange *pChg,
                           const char **pzNew){
  sqlite3_value *pStatus = aCol[IDEM_COL_STATUS];
  sqlite3_value *pReconcile = aCol[IDEM_COL_RECONCILE];
  *pzNew = 0;
  pChg->eStatus = IDEM_STATUS_ABSENT;
  pChg->eReconcile = IDEM_RECONCILE_NONE;
  pChg->bNote = !sqlite3_value_nochange(aCol[IDEM_COL_NOTE]);
  if( !sqlite3_value_nochange(pStatus) ){
    if( sqlite3_value_type(pStatus)==SQLITE_NULL ){
      pChg->eStatus = IDEM_STATUS_NULL;
    }else{
      int bNoMem = 0;
      *pzNew = idemWordValue(pStatus, &bNoMem);
      if( bNoMem ) return SQLITE_NOMEM;
      if( *pzNew==0 ){
        *pzNew = sqlite3_value_type(pStatus)==SQLITE_TEXT
               ? "text with an embedded NUL" : "a value that is not text";
        pChg->eStatus = IDEM_STATUS_OTHER;
      }else{
        pChg->eStatus = idemStatusParse(*pzNew);
      }
    }
  }
  if( !sqlite3_value_nochange(pReconcile)
   && sqlite3_value_type(pReconcile)!=SQLITE_NULL ){
    int bNoMem = 0;
    const char *z = idemWordValue(pReconcile, &bNoMem);
    if( bNoMem ) return SQLITE_NOMEM;
    if( z==0 ){
      pChg->eReconcile = IDEM_RECONCILE_OTHER;
    }else if( strcmp(z, "arrived")==0 ){
      pChg->eReconcile = IDEM_RECONCILE_ARRIVED;
    }else if( strcmp(z, "not_arrived")==0 ){
      pChg->eReconcile = IDEM_RECONCILE_NOT_ARRIVED;
    }else if( strcmp(z, "not_sent")==0 ){
      pChg->eReconcile = IDEM_RECONCILE_NOT_SENT;
    }else{
      pChg->eReconcile = IDEM_RECONCILE_OTHER;
    }
  }
  return SQLITE_OK;
}

/*
** Carry out a decided action on the call in pOld's row (rid iRid): record
** its new status with pRec (IDEM_STMT_RECORD), with the new or old id,
** result and note, or release it.
*/
static int idemApply(IdemVtab *p, const IdemAction *pAct, sqlite3_int64 iRid,
                     sqlite3_stmt *pOld, sqlite3_stmt *pRec,
                     sqlite3_value **aCol){
  char zNow[IDEM_TIME_LEN], zExpires[IDEM_TIME_LEN];
  sqlite3_int64 iNow;
  char *zNote = 0;
  int rc;

  if( pAct->eType==IDEM_ACT_RELEASE ){
    unsigned char aKey[IDEM_KEY_BYTES];
    rc = idemRowKey(p, pOld, IDEM_Q_KEY, aKey);
    sqlite3_reset(pOld);
    return rc ? rc : idemRelease(p, aKey);
  }
  if( pAct->eNote==IDEM_NOTE_RECONCILED ){
    zNote = sqlite3_mprintf("%s", IDEM_RECONCILED_NOTE);
  }else if( pAct->eNote==IDEM_NOTE_UNKNOWN ){
    const char *zGiven = 0;
    if( !sqlite3_value_nochange(aCol[IDEM_COL_NOTE]) ){
      zGiven = (const char*)sqlite3_value_text(aCol[IDEM_COL_NOTE]);
    }
    zNote = zGiven && zGiven[0]
      ? sqlite3_mprintf("%s (reported: %s)", IDEM_UNKNOWN_NOTE, zGiven)
      : sqlite3_mprintf("%s", IDEM_UNKNOWN_NOTE);
  }
  if( pAct->eNote!=IDEM_NOTE_GIVEN && zNote==0 ) return SQLITE_NOMEM;

  iNow = idemNowMs(p->pVfs);
  idemFormatTime(iNow, zNow);
  rc = sqlite3_bind_int64(pRec, 1, iRid);
  if( rc==SQLITE_OK ){
    rc = sqlite3_bind_text(pRec, 2, azIdemStatus[pAct->eStatus], -1, SQLITE_STATIC);
  }
  if( rc==SQLITE_OK ) rc = idemBindNewOrOld(pRec, 3, aCol, IDEM_COL_ID, pOld);
  if( rc==SQLITE_OK ) rc = idemBindNewOrOld(pRec, 4, aCol, IDEM_COL_RESULT, pOld);
  if( rc==SQLITE_OK ){
    if( zNote ){
      rc = sqlite3_bind_text(pRec, 5, zNote, -1, SQLITE_STATIC);
    }else{
      rc = idemBindNewOrOld(pRec, 5, aCol, IDEM_COL_NOTE, pOld);
    }
  }
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pRec, 6, zNow, -1, SQLITE_STATIC);
  if( rc==SQLITE_OK && p->opt.iRetainMs>0 && idemIsDecided(pAct->eStatus) ){
    /* doc/contract.md §10: a decided call's lifetime runs from now.  Its
    ** place in <name>_expiry is written first: alone (if the record
    ** fails) it is harmless, as idemSweep() checks the call. */
    sqlite3_stmt *pAdd;
    unsigned char aKey[IDEM_KEY_BYTES];
    idemFormatTime(iNow + p->opt.iRetainMs, zExpires);
    rc = idemRowKey(p, pOld, IDEM_Q_KEY, aKey);
    if( rc==SQLITE_OK ) rc = idemStmt(p, IDEM_STMT_EXPIRY_ADD, &pAdd);
    if( rc==SQLITE_OK ){
      rc = sqlite3_bind_text(pAdd, 1, zExpires, -1, SQLITE_STATIC);
      if( rc==SQLITE_OK ){
        rc = sqlite3_bind_blob(pAdd, 2, aKey, IDEM_KEY_BYTES, SQLITE_STATIC);
      }
      if( rc!=SQLITE_OK ){
        idemBindError(p, pAdd, rc);
      }else{
        rc = idemStepReset(pAdd);
        rc = rc==SQLITE_DONE ? SQLITE_OK : idemInnerError(p, rc);
      }
    }
    if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pRec, 7, zExpires, -1, SQLITE_STATIC);
  }
  sqlite3_reset(pOld);
  if( rc!=SQLITE_OK ){
    sqlite3_free(zNote);
    return idemBindError(p, pRec, rc);
  }
  rc = idemStepReset(pRec);
  sqlite3_free(zNote);
  if( rc!=SQLITE_DONE ) return idemInnerError(p, rc);
  return idemCheckChanges(p, "the record's UPDATE", 0, 1);
}

/*
** xUpdate's UPDATE of the row with rid iRid: read, decide, apply (see the
** header comment).  Identity, kind and times never change; members are
** not updated.
*/
IDEM_PRIVATE int idemClaimUpdate(IdemVtab *p, sqlite3_int64 iRid,
                                 sqlite3_value **aCol){
  sqlite3_stmt *pOld, *pRec;
  char zHex[IDEM_KEY_HEX+1];
  IdemChange chg;
  IdemAction act;
  IdemKind eKind;
  IdemStatus eOld;
  const char *zOld, *zNew;
  int bStale = 0;
  int rc;

  /* 1. Read. */
  if( (rc = idemStmt(p, IDEM_STMT_RECORD, &pRec))!=SQLITE_OK
   || (rc = idemStmt(p, IDEM_STMT_BYRID, &pOld))!=SQLITE_OK ){
    return rc;
  }
  rc = sqlite3_bind_int64(pOld, 1, iRid);
  if( rc!=SQLITE_OK ) return idemBindError(p, pOld, rc);
  rc = sqlite3_step(pOld);
  if( rc!=SQLITE_ROW ){
    sqlite3_reset(pOld);
    if( rc==SQLITE_DONE ) return SQLITE_OK;   /* released earlier in this statement */
    return idemVtabDbError(p, rc);
  }
  if( sqlite3_column_bytes(pOld, IDEM_Q_KEY)==IDEM_KEY_BYTES ){
    idemKeyHex(sqlite3_column_blob(pOld, IDEM_Q_KEY), zHex);
  }else{
    memcpy(zHex, "?", 2);
  }
  rc = idemUpdateCheck(p, pOld, aCol, zHex);
  if( rc==SQLITE_OK ) rc = idemChangeParse(aCol, &chg, &zNew);
  if( rc ) goto done;
  zOld = idemText(pOld, IDEM_QCOL(IDEM_COL_STATUS));
  eKind = strcmp(idemText(pOld, IDEM_QCOL(IDEM_COL_KIND)), "external")==0
        ? IDEM_KIND_EXTERNAL : IDEM_KIND_LOCAL;

  /* 2. Decide. */
  eOld = idemStatusParse(zOld);
  if( eOld==IDEM_STATUS_PENDING && chg.eReconcile!=IDEM_RECONCILE_NONE
   && p->opt.iStaleAfterMs>0 ){
    /* Stale now (doc/contract.md §11), as the hidden column shows it. */
    char zBefore[IDEM_TIME_LEN];
    idemFormatTime(idemNowMs(p->pVfs) - p->opt.iStaleAfterMs, zBefore);
    bStale = strcmp(idemText(pOld, IDEM_QCOL(IDEM_COL_UPDATED)), zBefore)<0;
  }
  act = idemTransition(eOld, eKind, bStale, &chg, &p->opt);
  if( act.eType==IDEM_ACT_REFUSE ){
    rc = idemRefuse(p, act.eRefusal, zHex, zOld, zNew);
    goto done;
  }

  /* 3. Apply: an external call's outcome as durable as its claim (§12). */
  if( eKind==IDEM_KIND_EXTERNAL && !p->opt.bRelaxedDurability ){
    idemDurableRecord(&p->durable, p->db, p->zDb);
  }
  rc = idemApply(p, &act, iRid, pOld, pRec, aCol);
 done:
  sqlite3_reset(pOld);
  return rc;
}

/* ------------------------------------------------------------- COMMIT */

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
** every database of the connection.  In a rollback journal, every page
** the transaction changes is copied after the journal's header (which a
** temp file's pager writes at BEGIN already): more than the header is a
** write.  A WAL file, or a journal that is OFF, keeps nothing to look at
** before the COMMIT: a write transaction on them counts as a write.
*/
static int idemSchemaWritten(sqlite3 *db, const char *zSchema,
                             const char *zMode){
  sqlite3_file *pJournal = 0;
  sqlite3_int64 sz = 0;
  if( sqlite3_txn_state(db, zSchema)!=SQLITE_TXN_WRITE ) return 0;
  if( strcmp(zMode, "wal")==0 || strcmp(zMode, "off")==0 ) return 1;
  if( sqlite3_file_control(db, zSchema, SQLITE_FCNTL_JOURNAL_POINTER,
                           &pJournal)!=SQLITE_OK
   || pJournal==0 || pJournal->pMethods==0 ){
    return 0;                       /* no journal opened: nothing written */
  }
  if( pJournal->pMethods->xFileSize(pJournal, &sz)!=SQLITE_OK ) return 1;
  return sz>idemJournalHeader(db, zSchema);
}

/*
** Why schema zSchema (journal mode zMode) does not commit atomically with
** the other files of the transaction: NULL if SQLite commits it through
** the super-journal with every other file, else the reason
** (sqlite3_malloc'd; *pbNoMem set when it cannot be made).  SQLite writes
** a super-journal only for files with a rollback journal on disk, and
** only when the main database is a file; the temp schema, a WAL file and
** a journal that is OFF or in MEMORY each commit on their own
** (doc/contract.md §4).
*/
static char *idemCommitAlone(IdemVtab *p, const char *zSchema,
                             const char *zMode, int *pbNoMem){
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
  }else if( idemSchemaInMemory(p->db, "main") ){
    zWhy = sqlite3_mprintf("the main database is in memory, so SQLite"
        " writes no super-journal and each file commits on its own");
  }else{
    return 0;
  }
  if( zWhy==0 ) *pbNoMem = 1;
  return zWhy;
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
  int i, rc, bNoMem = 0, bHeld = 0;
  for(i=0; (z = sqlite3_db_name(p->db, i))!=0 && zWhy==0 && !bNoMem; i++){
    if( sqlite3_stricmp(z, p->zDb)==0
     || sqlite3_txn_state(p->db, z)!=SQLITE_TXN_WRITE ){
      continue;
    }
    if( (rc = idemJournalMode(p->db, z, zMode))!=SQLITE_OK ) return rc;
    if( !idemSchemaWritten(p->db, z, zMode) ) continue;
    zOther = z;
    bHeld = strcmp(zMode, "wal")==0 || strcmp(zMode, "off")==0;
    zWhy = idemCommitAlone(p, z, zMode, &bNoMem);
    if( zWhy==0 && !bNoMem ){
      if( (rc = idemJournalMode(p->db, p->zDb, zMode))!=SQLITE_OK ) return rc;
      zWhy = idemCommitAlone(p, p->zDb, zMode, &bNoMem);
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
        " PERSIST) with a main database that is a file; the transaction"
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
IDEM_PRIVATE int idemClaimSync(IdemVtab *p){
  sqlite3_stmt *pMain;
  const unsigned char *aLocal = 0;    /* a recorded local claim of ours */
  int i, rc;
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

/* --------------------------------------------------------------- DELETE */

/*
** xUpdate's DELETE of the row with rid iRid: a decided call (done, failed)
** goes with its whole group.  A pending or unknown call is kept: DELETE
** never releases a claim whose outcome is open (doc/contract.md §5, §7);
** reconcile does.
*/
IDEM_PRIVATE int idemClaimDelete(IdemVtab *p, sqlite3_int64 iRid){
  sqlite3_stmt *pRow;
  unsigned char aKey[IDEM_KEY_BYTES];
  int rc, bDecided;
  rc = idemStmt(p, IDEM_STMT_CALLOF, &pRow);
  if( rc ) return rc;
  rc = sqlite3_bind_int64(pRow, 1, iRid);
  if( rc!=SQLITE_OK ) return idemBindError(p, pRow, rc);
  rc = sqlite3_step(pRow);
  if( rc!=SQLITE_ROW ){
    sqlite3_reset(pRow);
    if( rc==SQLITE_DONE ) return SQLITE_OK;   /* gone with its group */
    return idemVtabDbError(p, rc);
  }
  rc = idemRowKey(p, pRow, IDEM_C_KEY, aKey);
  /* A member without its call (a damaged database) is removable. */
  bDecided = sqlite3_column_type(pRow, IDEM_C_STATUS)==SQLITE_NULL
          || idemIsDecided(idemStatusParse(idemText(pRow, IDEM_C_STATUS)));
  sqlite3_reset(pRow);
  if( rc || !bDecided ) return rc;
  return idemRelease(p, aKey);
}

/* ---------------------------------------------------------------- reply */

/* Append an SQL value as JSON: numbers as numbers, text as a string (or as
** itself, canonical, if bJson and it is valid JSON), blobs as hex strings,
** NULL as null. */
static int idemAppendValue(IdemVtab *p, sqlite3_str *s, sqlite3_value *pVal,
                           int bJson){
  static const char aHex[] = IDEM_HEX_DIGITS;
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_INTEGER:
    case SQLITE_FLOAT: {
      char zNum[IDEM_JSON_NUMBUF];
      int n = idemJsonNumberText(pVal, zNum);
      if( n<0 ){
        sqlite3_str_append(s, "null", 4);       /* infinities */
      }else{
        sqlite3_str_append(s, zNum, n);
      }
      break;
    }
    case SQLITE_TEXT: {
      const char *z = (const char*)sqlite3_value_text(pVal);
      int n = sqlite3_value_bytes(pVal);
      if( bJson ){
        IdemJson *pJson = idemJsonAcquire(&p->pJson);
        int rc;
        if( pJson==0 ) return SQLITE_NOMEM;
        rc = idemJsonCanonical(pJson, z, n);
        if( rc==SQLITE_OK ){
          int nJ;
          const char *zJ = idemJsonText(pJson, &nJ);
          sqlite3_str_append(s, zJ, nJ);
        }
        idemJsonRelease(&p->pJson, pJson);
        if( rc==SQLITE_NOMEM ) return rc;
        if( rc==SQLITE_OK ) break;
      }
      idemJsonAppendString(s, z, n);
      break;
    }
    case SQLITE_BLOB: {
      const unsigned char *a = (const unsigned char*)sqlite3_value_blob(pVal);
      int n = sqlite3_value_bytes(pVal), i;
      sqlite3_str_appendchar(s, 1, '"');
      for(i=0; i<n; i++){
        char zByte[2];
        zByte[0] = aHex[a[i]>>4];
        zByte[1] = aHex[a[i]&0xf];
        sqlite3_str_append(s, zByte, 2);
      }
      sqlite3_str_appendchar(s, 1, '"');
      break;
    }
    default:
      sqlite3_str_append(s, "null", 4);
      break;
  }
  return sqlite3_str_errcode(s);
}

/*
** The reply a duplicate arrival hands back: a canonical JSON object
**   {"id":<id>,"idempotent":true,"message":...,"result":...,"status":...}
** "message" for calls that are not done, "result" when one was recorded
** (embedded as JSON when it is JSON text).  *pzOut: from sqlite3_malloc().
*/
IDEM_PRIVATE int idemReply(IdemVtab *p, sqlite3_value *pId,
                           sqlite3_value *pResult, const char *zStatus,
                           const char *zNote, char **pzOut){
  sqlite3_str *s = sqlite3_str_new(0);
  IdemStatus eStatus = idemStatusParse(zStatus);
  int rc;
  sqlite3_str_append(s, "{\"id\":", 6);
  rc = idemAppendValue(p, s, pId, 0);
  if( rc ) goto done;
  sqlite3_str_append(s, ",\"idempotent\":true", 18);
  if( zStatus && eStatus!=IDEM_STATUS_DONE ){
    const char *zMsg = zNote;
    if( eStatus==IDEM_STATUS_PENDING ) zMsg = IDEM_PENDING_NOTE;
    if( zMsg==0 ) zMsg = "";
    sqlite3_str_append(s, ",\"message\":", 11);
    idemJsonAppendString(s, zMsg, (sqlite3_int64)strlen(zMsg));
  }
  if( sqlite3_value_type(pResult)!=SQLITE_NULL ){
    sqlite3_str_append(s, ",\"result\":", 10);
    rc = idemAppendValue(p, s, pResult, 1);
    if( rc ) goto done;
  }
  sqlite3_str_append(s, ",\"status\":", 10);
  idemJsonAppendString(s, zStatus ? zStatus : "",
                       zStatus ? (sqlite3_int64)strlen(zStatus) : 0);
  sqlite3_str_appendchar(s, 1, '}');
  rc = sqlite3_str_errcode(s);
 done:
  *pzOut = sqlite3_str_finish(s);
  if( rc ){
    sqlite3_free(*pzOut);
    *pzOut = 0;
  }else if( *pzOut==0 ){
    rc = SQLITE_NOMEM;
  }
  return rc;
}

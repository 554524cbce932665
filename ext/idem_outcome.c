/* SPDX-License-Identifier: MIT */
/*
** idem_outcome.c -- a call's outcome (doc/contract.md §5-7, §14): what
** an UPDATE and a DELETE on an idem table may do, when a call whose
** target honours the key may be resent (idemResendAt()), and the reply a
** duplicate arrival gets.  It stands on the claim (idem_claim.c: the status, the
** release, the inner writes' checks) and the store, and never calls the
** module (idem_vtab.c), which calls it.
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
** place, idemOptionParse() (idem_options.c).  A new rule adds its option
** to IdemOptions and idemOptionParse(), its status to IdemStatus
** (idemInt.h) or its verdict to the enums below, its case to
** idemTransition(), its message to idemRefuse() and, if it writes
** something new, its step to idemApply().
**
** DELETE removes a decided call's whole group; an open call (pending or
** unknown) is kept: only reconcile releases it (doc/contract.md §5, §7).
**
** THE REPLY.  A duplicate arrival reads the call's reply (the hidden
** column): its id, result and status as one canonical JSON object
** (idemReply()).
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

/* The same for a call whose target honours the key (§14). */
#define IDEM_UNKNOWN_RESEND_NOTE \
  "the request may already have reached the target system; the target " \
  "honours the Idempotency-Key, so a retry may send it again with the " \
  "same key from resend_at on, until max_sends; the target's records " \
  "decide the outcome"

#define IDEM_PENDING_NOTE \
  "the call is in progress, or its process was interrupted; it is not " \
  "executed again"

#define IDEM_RECONCILED_NOTE \
  "reconciled: the target's records show that the request arrived"

/* ---------------------------------------------------- kind and verdict */

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
  IDEM_RECONCILE_RESEND,      /* take it for sending again (§14) */
  IDEM_RECONCILE_OTHER        /* anything else */
} IdemReconcile;

/* ------------------------------------------------- the transition table */

/* What an UPDATE asks for, parsed once. */
typedef struct IdemChange IdemChange;
struct IdemChange {
  IdemStatus eStatus;         /* The status asked for, or _NULL, _ABSENT */
  IdemReconcile eReconcile;   /* The verdict given, or _NONE */
  int bNote;                  /* True if a note is given */
  int bKept;                  /* A non-NULL id, result or note is given */
};

/* What to do about it. */
typedef enum IdemActionType {
  IDEM_ACT_RECORD,            /* store eStatus (and id, result, note) */
  IDEM_ACT_RELEASE,           /* delete the call's group: it may run again */
  IDEM_ACT_RESEND,            /* pending again, sends+1, the new owner */
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
  IDEM_REFUSE_RELEASE_KEEPS_NOTHING,
  IDEM_REFUSE_BAD_STATUS,
  IDEM_REFUSE_RESEND_LOCAL,
  IDEM_REFUSE_RESEND_UNDECLARED,
  IDEM_REFUSE_RESEND_EXHAUSTED,
  IDEM_REFUSE_RESEND_PENDING,
  IDEM_REFUSE_RESEND_EARLY,
  IDEM_REFUSE_RESEND_OWNER
} IdemRefusal;

/* What a resend (§14) depends on besides the status and kind, read from
** the call and the clock by the caller of idemTransition(). */
typedef struct IdemSendState IdemSendState;
struct IdemSendState {
  int bHonours;               /* The call honours the key (honours_key) */
  int bExhausted;             /* Its sends have reached max_sends */
  int bEarly;                 /* Its backoff has not run out yet */
};

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
** The rules of an UPDATE of a call (doc/contract.md §4, §5, §14), in the
** order they are tried.  Pure: it reads nothing but its arguments.
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
**   unknown, pending + reconcile = 'resend'       -> pending, sends+1, new
**                        owner, if it is external, honours the key, has
**                        sends left, its backoff ran out and (pending)
**                        it is stale; else refused, saying which
**   done, failed         final: every change is an error
*/
static IdemAction idemTransition(
  IdemStatus eOld,                  /* The stored status */
  IdemKind eKind,                   /* The stored kind */
  int bStale,                       /* A pending call gone quiet (§11) */
  const IdemSendState *pSend,       /* What a resend depends on (§14) */
  const IdemChange *pChg,           /* What the UPDATE asks for */
  const IdemOptions *pOpt           /* The table's options */
){
  IdemStatus eNew = pChg->eStatus;
  if( eNew==IDEM_STATUS_NULL ) return idemRefusal(IDEM_REFUSE_NULL_STATUS);
  if( idemIsDecided(eOld) ) return idemRefusal(IDEM_REFUSE_DECIDED);

  /* §14: the same request, with the same key, taken for sending again. */
  if( pChg->eReconcile==IDEM_RECONCILE_RESEND ){
    if( eNew!=IDEM_STATUS_ABSENT ){
      return idemRefusal(IDEM_REFUSE_RECONCILE_WITH_STATUS);
    }
    if( eKind!=IDEM_KIND_EXTERNAL ) return idemRefusal(IDEM_REFUSE_RESEND_LOCAL);
    if( !pSend->bHonours ) return idemRefusal(IDEM_REFUSE_RESEND_UNDECLARED);
    if( pSend->bExhausted ) return idemRefusal(IDEM_REFUSE_RESEND_EXHAUSTED);
    if( !bStale && eOld==IDEM_STATUS_PENDING ){
      return idemRefusal(IDEM_REFUSE_RESEND_PENDING);
    }
    if( pSend->bEarly ) return idemRefusal(IDEM_REFUSE_RESEND_EARLY);
    return idemAction(IDEM_ACT_RESEND, IDEM_STATUS_PENDING, IDEM_NOTE_GIVEN,
                      IDEM_REFUSE_BAD_STATUS);
  }

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
        if( pChg->bKept ) return idemRefusal(IDEM_REFUSE_RELEASE_KEEPS_NOTHING);
        /* A pending call's owner may still be working: only a call that
        ** is stale at this very UPDATE (not at a sweeper's earlier
        ** SELECT) is released on the target's word alone. */
        if( eOld==IDEM_STATUS_PENDING && !bStale ){
          return idemRefusal(IDEM_REFUSE_PENDING_NOT_STALE);
        }
        return idemReleaseAction();
      case IDEM_RECONCILE_NOT_SENT:
        if( pChg->bKept ) return idemRefusal(IDEM_REFUSE_RELEASE_KEEPS_NOTHING);
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

/* The wait before the resend that follows send nSends (1, 2, ...):
** resend_after doubled with each send, capped (§14). */
static sqlite3_int64 idemResendDelay(const IdemOptions *pOpt,
                                     sqlite3_int64 nSends){
  sqlite3_int64 iBase = idemOptionResendAfter(pOpt);
  sqlite3_int64 iCap = iBase*IDEM_RESEND_CAP;
  sqlite3_int64 iDelay = iBase;
  while( --nSends>0 && iDelay<iCap ) iDelay *= 2;
  return iDelay<iCap ? iDelay : iCap;
}

/*
** resend_at (doc/contract.md §14): when the call may be taken for sending
** again, as Unix time in milliseconds, or -1 if it never may: a local
** call, one that does not honour the key, a decided one, one whose sends
** reached max_sends, a pending one in a table without stale_after.  An
** unknown call may be resent once its backoff after its last update has
** run out; a pending one once it is stale, and not before its backoff.
*/
IDEM_PRIVATE sqlite3_int64 idemResendAt(const IdemOptions *pOpt,
    const char *zStatus, const char *zKind, int bHonours,
    sqlite3_int64 nSends, const char *zUpdated){
  IdemStatus eStatus = idemStatusParse(zStatus);
  sqlite3_int64 iUpdated, iAt;
  if( !bHonours || zKind==0 || strcmp(zKind, "external")!=0 ) return -1;
  if( eStatus!=IDEM_STATUS_UNKNOWN && eStatus!=IDEM_STATUS_PENDING ) return -1;
  if( nSends<1 ) nSends = 1;
  if( nSends>=idemOptionMaxSends(pOpt) ) return -1;
  iUpdated = idemParseTime(zUpdated);
  if( iUpdated<0 ) return -1;
  iAt = iUpdated + idemResendDelay(pOpt, nSends);
  if( eStatus==IDEM_STATUS_PENDING ){
    if( pOpt->iStaleAfterMs==0 ) return -1;
    if( iUpdated + pOpt->iStaleAfterMs > iAt ){
      iAt = iUpdated + pOpt->iStaleAfterMs;
    }
  }
  return iAt;
}

/*
** The message of a refused UPDATE.  zHex is the call's key, zOld its
** stored status, zNew the status asked for, nSends and zAt the call's
** sends and resend_at ("" if NULL).  Returns the error code.
*/
static int idemRefuse(IdemVtab *p, IdemRefusal eRefusal, const char *zHex,
                      const char *zOld, const char *zNew,
                      sqlite3_int64 nSends, const char *zAt){
  switch( eRefusal ){
    case IDEM_REFUSE_RESEND_LOCAL:
      idemVtabError(p, "call '%s' is local: nothing was sent, so"
          " reconcile = 'resend' does not apply (it resends an external"
          " call that honours the key)", zHex);
      break;
    case IDEM_REFUSE_RESEND_UNDECLARED:
      idemVtabError(p, "call '%s' is not declared to go to a target that"
          " honours the Idempotency-Key, so it is never sent again: its"
          " outcome stays %s until the target's records settle it"
          " (reconcile = 'arrived' or 'not_arrived'); declare the target"
          " at the claim (honours_key = 1) or with the table option"
          " honours_key=yes", zHex, zOld);
      break;
    case IDEM_REFUSE_RESEND_EXHAUSTED:
      idemVtabError(p, "call '%s' was taken for sending %lld times, the"
          " most max_sends allows (%d): it is not sent again; its outcome"
          " stays %s until the target's records settle it (reconcile ="
          " 'arrived' or 'not_arrived')", zHex, nSends,
          idemOptionMaxSends(&p->opt), zOld);
      break;
    case IDEM_REFUSE_RESEND_PENDING:
      idemVtabError(p, "call '%s' is pending and not stale: its owner may"
          " still be sending it, so reconcile = 'resend' does not take it"
          " over%s%s%s", zHex, zAt[0] ? " before " : " (the table has no"
          " stale_after, so a pending call is never taken over)",
          zAt[0] ? zAt : "", zAt[0] ? " (resend_at)" : "");
      break;
    case IDEM_REFUSE_RESEND_EARLY:
      idemVtabError(p, "call '%s' may be resent from %s (resend_at) on,"
          " not before: its backoff after %lld send%s has not run out",
          zHex, zAt, nSends, nSends==1 ? "" : "s");
      break;
    case IDEM_REFUSE_RESEND_OWNER:
      idemVtabError(p, "reconcile = 'resend' needs the new sender's owner,"
          " other than the one that holds call '%s': UPDATE \"%w\" SET"
          " reconcile = 'resend', owner = ? WHERE key = '%s' AND member ="
          " 0; the owner is the fence: the old sender's late record then"
          " lands nowhere", zHex, p->zName, zHex);
      break;
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
          " 'not_arrived' and 'not_sent' release it, 'resend' makes it"
          " pending again; do not set another status with it");
      break;
    case IDEM_REFUSE_BAD_RECONCILE:
      idemVtabError(p, "reconcile must be 'arrived' (the target's"
          " records show the request: the call becomes done),"
          " 'not_arrived' (they show it never came: the claim is released),"
          " 'not_sent' (a pending call whose request never left: the"
          " claim is released) or 'resend' (a call whose target honours the"
          " key: sent again, with the same key, by a new owner)");
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
    case IDEM_REFUSE_RELEASE_KEEPS_NOTHING:
      idemVtabError(p, "call '%s': reconcile = 'not_arrived' and 'not_sent'"
          " release the call (its rows go) and keep nothing, so an id,"
          " result or note given with them would be lost; they go with"
          " reconcile = 'arrived' only", zHex);
      break;
    case IDEM_REFUSE_BAD_STATUS:
      idemVtabError(p, "status must be 'pending', 'done' or"
                    " 'failed', not '%s'", zNew ? zNew : "(not text)");
      break;
  }
  return SQLITE_ERROR;
}

/* ------------------------------------------------------------- helpers */

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


/* The key of pOld's row: aRowKey where pOld has no key column (an
** UPDATE's own query, which bound it), else its key column's. */
static int idemOldKey(IdemVtab *p, sqlite3_stmt *pOld,
                      const unsigned char *aRowKey,
                      unsigned char aKey[IDEM_KEY_BYTES]){
  if( aRowKey ){
    memcpy(aKey, aRowKey, IDEM_KEY_BYTES);
    return SQLITE_OK;
  }
  return idemRowKey(p, pOld, IDEM_Q_KEY, aKey);
}

/* --------------------------------------------------------------- UPDATE */

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
    case IDEM_COL_REPLY: case IDEM_COL_STALE: case IDEM_COL_RESEND_AT:
      /* Computed, not stored: any value given is a change. */
      return sqlite3_value_type(pNew)!=SQLITE_NULL;
    case IDEM_COL_KEYARGS: iQ = IDEM_Q_KEYARGS; break;
    case IDEM_COL_HONOURS: iQ = IDEM_Q_HONOURS; break;
    case IDEM_COL_SENDS:   iQ = IDEM_Q_SENDS;   break;
    case IDEM_COL_OWNER:   iQ = IDEM_Q_OWNER;   break;
    case IDEM_COL_EXPIRES: iQ = IDEM_Q_EXPIRES; break;
    default:               iQ = IDEM_QCOL(iCol); break;
  }
  if( sqlite3_value_type(pNew)==SQLITE_NULL ){
    return sqlite3_column_type(pOld, iQ)!=SQLITE_NULL;
  }
  if( sqlite3_column_type(pOld, iQ)==SQLITE_NULL ) return 1;
  if( iCol==IDEM_COL_MEMBER || iCol==IDEM_COL_HONOURS
   || iCol==IDEM_COL_SENDS ){
    sqlite3_int64 iNew;
    return idemValueInt64(pNew, &iNew)!=1
        || iNew!=sqlite3_column_int64(pOld, iQ);
  }
  a = sqlite3_value_text(pNew);
  na = sqlite3_value_bytes(pNew);
  b = sqlite3_column_text(pOld, iQ);
  nb = sqlite3_column_bytes(pOld, iQ);
  return na!=nb || (na>0 && memcmp(a, b, na)!=0);
}

/* The new value an UPDATE gives column iCol (one it keeps is left out of
** the record's SET: IDEM_STMT_RECORD_KEEP).  A new text is bound where it
** is, not copied (nor copied by sqlite3_value_text() to end it with a
** NUL: idemValueUtf8()): xUpdate's arguments live until it returns, past
** the step of pStmt (idemStepReset() clears the bindings).  Returns the
** bind's result. */
static int idemBindNew(sqlite3_stmt *pStmt, int iParam, sqlite3_value **aCol,
                       int iCol){
  sqlite3_value *pNew = aCol[iCol];
  if( sqlite3_value_type(pNew)==SQLITE_TEXT ){
    int n;
    const char *z = idemValueUtf8(pNew, &n);
    if( z==0 ) return SQLITE_NOMEM;
    return sqlite3_bind_text(pStmt, iParam, z, n, SQLITE_STATIC);
  }
  return sqlite3_bind_value(pStmt, iParam, pNew);
}

/*
** Refuse an UPDATE of a member row or of a fixed column (identity, kind,
** times): the checks made before the rules.  zHex is the row's key; bMain:
** the row is known to be a main row (its query's text says member = 0);
** mGiven: the columns given.
*/
static int idemUpdateCheck(IdemVtab *p, sqlite3_stmt *pOld,
                           sqlite3_value **aCol, sqlite3_uint64 mGiven,
                           const char *zHex, int bResend, int bMain){
  static const int aFixed[] = { IDEM_COL_KEY, IDEM_COL_MEMBER, IDEM_COL_WHO,
    IDEM_COL_CONV, IDEM_COL_TOOL, IDEM_COL_ARGS, IDEM_COL_KIND,
    IDEM_COL_CREATED, IDEM_COL_UPDATED, IDEM_COL_REPLY, IDEM_COL_KEYARGS,
    IDEM_COL_OWNER, IDEM_COL_EXPIRES, IDEM_COL_STALE, IDEM_COL_HONOURS,
    IDEM_COL_SENDS, IDEM_COL_RESEND_AT };
  int i;
  if( !bMain && sqlite3_column_int64(pOld, IDEM_Q_MEMBER)!=0 ){
    idemVtabError(p, "member rows are not updated; record the call's"
        " outcome on its main row: UPDATE \"%w\" SET status = ... WHERE"
        " key = '%s' AND member = 0", p->zName, zHex);
    return SQLITE_ERROR;
  }
  /* A record gives none of them (only the outcome's columns): nothing to
  ** compare. */
  if( (mGiven & ~(IDEM_COLBIT(IDEM_COL_STATUS) | IDEM_COLBIT(IDEM_COL_ID)
                  | IDEM_COLBIT(IDEM_COL_RESULT) | IDEM_COLBIT(IDEM_COL_NOTE)
                  | IDEM_COLBIT(IDEM_COL_RECONCILE)))==0 ){
    return SQLITE_OK;
  }
  for(i=0; i<(int)(sizeof(aFixed)/sizeof(aFixed[0])); i++){
    if( (mGiven & IDEM_COLBIT(aFixed[i]))==0 ) continue;
    /* The new sender of a resend names itself (§14). */
    if( bResend && aFixed[i]==IDEM_COL_OWNER ) continue;
    if( idemChanges(aCol, aFixed[i], pOld) ){
      if( aFixed[i]==IDEM_COL_SENDS ){
        idemVtabError(p, "sends is counted by idem; take the call for"
            " sending again with UPDATE \"%w\" SET reconcile = 'resend',"
            " owner = ? WHERE key = '%s' AND member = 0", p->zName, zHex);
        return SQLITE_ERROR;
      }
      if( aFixed[i]==IDEM_COL_OWNER ){
        idemVtabError(p, "owner cannot be changed; it is fixed when the"
            " call is claimed, and changes only with reconcile = 'resend'"
            " (a new sender takes the call)");
        return SQLITE_ERROR;
      }
      if( aFixed[i]==IDEM_COL_EXPIRES || aFixed[i]==IDEM_COL_STALE
       || aFixed[i]==IDEM_COL_RESEND_AT ){
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
/* True if the UPDATE sets column iCol (mGiven) to a value, not NULL. */
static int idemGivenNotNull(sqlite3_value **aCol, sqlite3_uint64 mGiven,
                            int iCol){
  return (mGiven & IDEM_COLBIT(iCol))!=0
      && sqlite3_value_type(aCol[iCol])!=SQLITE_NULL;
}

static int idemChangeParse(sqlite3_value **aCol, sqlite3_uint64 mGiven,
                           IdemChange *pChg, const char **pzNew){
  sqlite3_value *pStatus = aCol[IDEM_COL_STATUS];
  sqlite3_value *pReconcile = aCol[IDEM_COL_RECONCILE];
  *pzNew = 0;
  pChg->eStatus = IDEM_STATUS_ABSENT;
  pChg->eReconcile = IDEM_RECONCILE_NONE;
  pChg->bNote = (mGiven & IDEM_COLBIT(IDEM_COL_NOTE))!=0;
  pChg->bKept = idemGivenNotNull(aCol, mGiven, IDEM_COL_ID)
             || idemGivenNotNull(aCol, mGiven, IDEM_COL_RESULT)
             || idemGivenNotNull(aCol, mGiven, IDEM_COL_NOTE);
  if( mGiven & IDEM_COLBIT(IDEM_COL_STATUS) ){
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
  if( (mGiven & IDEM_COLBIT(IDEM_COL_RECONCILE))
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
    }else if( strcmp(z, "resend")==0 ){
      pChg->eReconcile = IDEM_RECONCILE_RESEND;
    }else{
      pChg->eReconcile = IDEM_RECONCILE_OTHER;
    }
  }
  return SQLITE_OK;
}

/* The sends of pOld's call: the stored count, or 1 (a call claimed before
** the count was kept was sent once).  Read by a resend (and its refusal's
** message) alone: a record does not pay for the column. */
static sqlite3_int64 idemOldSends(sqlite3_stmt *pOld){
  sqlite3_value *pSends = sqlite3_column_value(pOld, IDEM_Q_SENDS);
  return sqlite3_value_type(pSends)==SQLITE_INTEGER
       ? sqlite3_value_int64(pSends) : 1;
}

/*
** Done with pOld, the row an UPDATE changes: the BYRID statement is reset;
** the row of the cursor that the UPDATE runs on (bCursor) is the
** cursor's, which SQLite steps or closes itself.
*/
static void idemOldDone(sqlite3_stmt *pOld, int bCursor){
  if( !bCursor ) sqlite3_reset(pOld);
}

/*
** Take the call in pOld's row (rid iRid) for sending again (§14): pending,
** one more send, updated now, the new owner, the note given (or none: the
** unknown note no longer holds).
*/
static int idemResend(IdemVtab *p, sqlite3_int64 iRid, sqlite3_stmt *pOld,
                      int bCursor, sqlite3_value **aCol){
  char zNow[IDEM_TIME_LEN];
  sqlite3_stmt *pRes;
  int rc = idemStmt(p, IDEM_STMT_RESEND, &pRes);
  idemOldDone(pOld, bCursor);
  if( rc!=SQLITE_OK ) return rc;
  idemNow(p->pVfs, zNow);
  rc = sqlite3_bind_int64(pRes, 1, iRid);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_value(pRes, 2, aCol[IDEM_COL_OWNER]);
  if( rc==SQLITE_OK && !sqlite3_value_nochange(aCol[IDEM_COL_NOTE]) ){
    rc = sqlite3_bind_value(pRes, 3, aCol[IDEM_COL_NOTE]);
  }else if( rc==SQLITE_OK ){
    rc = sqlite3_bind_null(pRes, 3);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pRes, 4, zNow, -1, SQLITE_STATIC);
  if( rc!=SQLITE_OK ) return idemBindError(p, pRes, rc);
  rc = idemStepReset(pRes);
  if( rc!=SQLITE_DONE ) return idemInnerError(p, rc);
  return idemCheckChanges(p, "the resend's UPDATE", 0, 1);
}

/*
** Carry out a decided action on the call in pOld's row (rid iRid): record
** its new status (IDEM_STMT_RECORD, or the form of it that leaves out what
** the UPDATE keeps of id, result and note), with the new id, result and
** note given, or release it.
*/
static int idemApply(IdemVtab *p, const IdemAction *pAct, sqlite3_int64 iRid,
                     sqlite3_stmt *pOld, int bCursor,
                     const unsigned char *aRowKey, sqlite3_uint64 mGiven,
                     sqlite3_value **aCol){
  char zNow[IDEM_TIME_LEN], zExpires[IDEM_TIME_LEN];
  sqlite3_int64 iNow;
  char *zNote = 0;
  sqlite3_stmt *pRec;
  int rc, mKeep = 0;

  if( pAct->eType==IDEM_ACT_RELEASE ){
    unsigned char aKey[IDEM_KEY_BYTES];
    rc = idemOldKey(p, pOld, aRowKey, aKey);
    idemOldDone(pOld, bCursor);
    return rc ? rc : idemRelease(p, aKey);
  }
  if( pAct->eType==IDEM_ACT_RESEND ){
    return idemResend(p, iRid, pOld, bCursor, aCol);
  }
  if( pAct->eNote==IDEM_NOTE_RECONCILED ){
    zNote = sqlite3_mprintf("%s", IDEM_RECONCILED_NOTE);
  }else if( pAct->eNote==IDEM_NOTE_UNKNOWN ){
    const char *zGiven = 0;
    if( mGiven & IDEM_COLBIT(IDEM_COL_NOTE) ){
      zGiven = (const char*)sqlite3_value_text(aCol[IDEM_COL_NOTE]);
    }
    sqlite3_int64 nSent = sqlite3_column_type(pOld, IDEM_Q_SENDS)==SQLITE_NULL
                        ? 1 : sqlite3_column_int64(pOld, IDEM_Q_SENDS);
    const char *zBase = sqlite3_column_int(pOld, IDEM_Q_HONOURS)==1
                        && nSent<idemOptionMaxSends(&p->opt)
                      ? IDEM_UNKNOWN_RESEND_NOTE : IDEM_UNKNOWN_NOTE;
    zNote = zGiven && zGiven[0]
      ? sqlite3_mprintf("%s (reported: %s)", zBase, zGiven)
      : sqlite3_mprintf("%s", zBase);
  }
  if( pAct->eNote!=IDEM_NOTE_GIVEN && zNote==0 ) return SQLITE_NOMEM;

  if( (mGiven & IDEM_COLBIT(IDEM_COL_ID))==0 ) mKeep |= 1;
  if( (mGiven & IDEM_COLBIT(IDEM_COL_RESULT))==0 ) mKeep |= 2;
  if( zNote==0 && (mGiven & IDEM_COLBIT(IDEM_COL_NOTE))==0 ) mKeep |= 4;
  rc = idemStmt(p, pAct->eStatus==IDEM_STATUS_DONE ? IDEM_STMT_RECORD_DONE+mKeep
                : mKeep ? IDEM_STMT_RECORD_KEEP+mKeep-1 : IDEM_STMT_RECORD, &pRec);
  if( rc!=SQLITE_OK ){
    sqlite3_free(zNote);
    idemOldDone(pOld, bCursor);
    return rc;
  }
  iNow = idemNowMs(p->pVfs);
  idemFormatTimeKept(&p->now, iNow, zNow);
  rc = sqlite3_bind_int64(pRec, 1, iRid);
  if( rc==SQLITE_OK && pAct->eStatus!=IDEM_STATUS_DONE ){
    rc = sqlite3_bind_text(pRec, 2, azIdemStatus[pAct->eStatus], -1, SQLITE_STATIC);
  }
  if( rc==SQLITE_OK && !(mKeep & 1) ) rc = idemBindNew(pRec, 3, aCol, IDEM_COL_ID);
  if( rc==SQLITE_OK && !(mKeep & 2) ) rc = idemBindNew(pRec, 4, aCol, IDEM_COL_RESULT);
  if( rc==SQLITE_OK ){
    if( zNote ){
      rc = sqlite3_bind_text(pRec, 5, zNote, -1, SQLITE_STATIC);
    }else if( !(mKeep & 4) ){
      rc = idemBindNew(pRec, 5, aCol, IDEM_COL_NOTE);
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
    rc = idemOldKey(p, pOld, aRowKey, aKey);
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
  idemOldDone(pOld, bCursor);
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
** not updated.  pRow, if not NULL, is a query that holds the row as it is
** now, in the columns of IDEM_STMT_BYRID (the cursor the UPDATE runs on:
** idem_vtab.c), read instead of reading the row again; aRowKey, if not
** NULL, its key, which pRow leaves out.
*/
IDEM_PRIVATE int idemOutcomeUpdate(IdemVtab *p, sqlite3_int64 iRid,
                                   sqlite3_stmt *pRow,
                                   const unsigned char *aRowKey, int bMain,
                                   sqlite3_uint64 mGiven,
                                   sqlite3_value **aCol){
  sqlite3_stmt *pOld;
  char zHex[IDEM_KEY_HEX+1];
  IdemChange chg;
  IdemAction act;
  IdemKind eKind;
  IdemStatus eOld;
  const char *zOld, *zNew;
  IdemSendState send;
  sqlite3_int64 nSends;
  char zAt[IDEM_TIME_LEN];
  int bStale = 0;
  int rc;

  /* 1. Read. */
  if( pRow ){
    pOld = pRow;
  }else{
    if( (rc = idemStmt(p, IDEM_STMT_BYRID, &pOld))!=SQLITE_OK ) return rc;
    rc = sqlite3_bind_int64(pOld, 1, iRid);
    if( rc!=SQLITE_OK ) return idemBindError(p, pOld, rc);
    rc = sqlite3_step(pOld);
    if( rc!=SQLITE_ROW ){
      sqlite3_reset(pOld);
      if( rc==SQLITE_DONE ) return SQLITE_OK;   /* released earlier in this statement */
      return idemVtabDbError(p, rc);
    }
  }
  if( aRowKey ){
    idemKeyHex(aRowKey, zHex);
  }else if( sqlite3_column_bytes(pOld, IDEM_Q_KEY)==IDEM_KEY_BYTES ){
    idemKeyHex(sqlite3_column_blob(pOld, IDEM_Q_KEY), zHex);
  }else{
    memcpy(zHex, "?", 2);
  }
  rc = idemChangeParse(aCol, mGiven, &chg, &zNew);
  if( rc==SQLITE_OK ){
    rc = idemUpdateCheck(p, pOld, aCol, mGiven, zHex,
                         chg.eReconcile==IDEM_RECONCILE_RESEND, bMain);
  }
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
  memset(&send, 0, sizeof(send));
  nSends = 0;                           /* (read by a resend, its one use) */
  zAt[0] = 0;
  if( chg.eReconcile==IDEM_RECONCILE_RESEND ){
    /* §14: the call's declaration, its sends and its backoff, now. */
    sqlite3_int64 iUpdated, iAt;
    const char *zUpd = idemText(pOld, IDEM_QCOL(IDEM_COL_UPDATED));
    nSends = idemOldSends(pOld);
    send.bHonours = sqlite3_column_int(pOld, IDEM_Q_HONOURS)==1;
    send.bExhausted = nSends>=idemOptionMaxSends(&p->opt);
    iUpdated = idemParseTime(zUpd);
    send.bEarly = iUpdated<0
        || idemNowMs(p->pVfs) < iUpdated + idemResendDelay(&p->opt, nSends);
    iAt = idemResendAt(&p->opt, zOld, eKind==IDEM_KIND_EXTERNAL
                       ? "external" : "local", send.bHonours, nSends, zUpd);
    if( iAt>=0 ) idemFormatTime(iAt, zAt);
  }
  act = idemTransition(eOld, eKind, bStale, &send, &chg, &p->opt);
  if( act.eType==IDEM_ACT_RESEND ){
    /* The new sender names itself, and is not the one that held it: the
    ** owner is the fence against the old sender's late record.  It is
    ** taken as a claim takes it: a number is its text (the column's
    ** affinity stores it so), a blob an error. */
    sqlite3_value *pOwner = aCol[IDEM_COL_OWNER];
    int bGiven = (mGiven & IDEM_COLBIT(IDEM_COL_OWNER))!=0;
    if( bGiven && sqlite3_value_type(pOwner)==SQLITE_BLOB ){
      idemVtabError(p, "owner is a blob; expected text (a host and"
                    " process, a worker id): the new sender's");
      rc = SQLITE_MISMATCH;
      goto done;
    }
    if( !bGiven || sqlite3_value_type(pOwner)==SQLITE_NULL
     || !idemChanges(aCol, IDEM_COL_OWNER, pOld) ){
      act = idemRefusal(IDEM_REFUSE_RESEND_OWNER);
    }else if( ((mGiven & IDEM_COLBIT(IDEM_COL_ID))
               && idemChanges(aCol, IDEM_COL_ID, pOld))
           || ((mGiven & IDEM_COLBIT(IDEM_COL_RESULT))
               && idemChanges(aCol, IDEM_COL_RESULT, pOld)) ){
      /* A resend records no outcome: an id or result given with it would
      ** be dropped, never silently. */
      idemVtabError(p, "reconcile = 'resend' takes call '%s' for sending"
          " again and records no outcome, so it sets no id or result:"
          " the new sender records them with its answer (UPDATE \"%w\" SET"
          " status = 'done', id = ?, result = ? WHERE key = '%s' AND"
          " member = 0 AND owner = ?)", zHex, p->zName, zHex);
      rc = SQLITE_ERROR;
      goto done;
    }
  }
  if( act.eType==IDEM_ACT_REFUSE ){
    rc = idemRefuse(p, act.eRefusal, zHex, zOld, zNew, nSends, zAt);
    goto done;
  }

  /* 3. Apply: an external call's outcome as durable as its claim (§12). */
  if( eKind==IDEM_KIND_EXTERNAL && !p->opt.bRelaxedDurability ){
    idemDurableRecord(&p->durable, p->db, p->zDb);
  }
  rc = idemApply(p, &act, iRid, pOld, pRow!=0, aRowKey, mGiven, aCol);
  /* The transaction wrote: SQLite keeps its journal mode from now on, so
  ** the settings just read hold for its next records too, as after a
  ** claim that writes (idem_durable.c). */
  if( rc==SQLITE_OK ) idemDurableWrote(&p->durable);
 done:
  idemOldDone(pOld, pRow!=0);
  return rc;
}

/* --------------------------------------------------------------- DELETE */

/*
** xUpdate's DELETE of the row with rid iRid: a decided call (done, failed)
** goes with its whole group.  A pending or unknown call is kept: DELETE
** never releases a claim whose outcome is open (doc/contract.md §5, §7);
** reconcile does.
*/
IDEM_PRIVATE int idemOutcomeDelete(IdemVtab *p, sqlite3_int64 iRid){
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
**   {"id":<id>,"idempotent":true,"message":...,"result":...,"sends":n,
**    "status":...}
** "message" for calls that are not done, "result" when one was recorded
** (embedded as JSON when it is JSON text), "sends" for an external call
** (nSends>=0: how many times it was taken for sending, §14).  *pzOut: from sqlite3_malloc().
*/
IDEM_PRIVATE int idemReply(IdemVtab *p, sqlite3_value *pId,
                           sqlite3_value *pResult, const char *zStatus,
                           const char *zNote, sqlite3_int64 nSends,
                           char **pzOut){
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
  if( nSends>=0 ){
    sqlite3_str_appendf(s, ",\"sends\":%lld", nSends);
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

/* SPDX-License-Identifier: MIT */
/*
** idem_options.c -- a claim table's options, CREATE VIRTUAL TABLE ...
** USING idem(name=value, ...), parsed in one place, idemOptionParse(),
** into the table's IdemOptions (idemInt.h), as fts5_config.c parses
** fts5's:
**
**   local_failure=release|keep   a local call that failed (contract §5)
**   durability=full|relaxed      what a claim's commit survives (§12)
**   args_mismatch=error|replay   the same keyargs, other args (§9)
**   retain=<duration>            how long a decided call stays (§10)
**   stale_after=<duration>       when a pending call is stale (§11)
**   honours_key=no|yes           external calls' targets honour the key (§14)
**   max_sends=<1 to 100>         the most sends of such a call (§14)
**   resend_after=<duration>      the first resend's wait, doubled (§14)
**
** idemOptionJson() writes them back as idem_options() (idem_vtab.c) shows
** them.  The same parse and the same JSON answer the SQL functions here,
** which the packages read instead of keeping copies of these rules
** (doc/contract.md §5):
**
**   idem_parse_options(table, option, ...)  the options as CREATE VIRTUAL
**         TABLE table USING idem(option, ...) parses them, as JSON (that of
**         idem_options()), or CREATE's error for them, word for word
**   idem_limits()     {"note_max":2000,"resend_refusals":3}: the limits
**                     the packages keep (idemInt.h)
**   idem_statuses()   ["unknown","pending","failed","done"]: the statuses
**                     a call can have, in the order an operator reads them
**   idem_refusal(message)  'args_mismatch' for the error of a claim refused
**                     under args_mismatch=error, else NULL: the refusal's
**                     kind, so that no package matches message text
**   idem_database_uri(schema)  a URI that opens the schema's file as this
**                     connection opened it (its parameters and VFS), for a
**                     package's connection of its own (sync Python's
**                     heartbeat)
**
** A new option adds its field to IdemOptions, its parse here (an option
** of two words is one line of aIdemSwitch[]), and its rule where it acts:
** idem_claim.c, idem_outcome.c or idem_durable.c.  It calls only
** idem_sql.c (idemResultError()) and SQLite.
*/
#include "idemInt.h"

/* Every option, for the message that rejects an unknown one. */
#define IDEM_OPTIONS_HELP \
  "local_failure=release|keep, durability=full|relaxed," \
  " args_mismatch=error|replay, retain=<duration>," \
  " stale_after=<duration>, honours_key=no|yes, max_sends=<1 to 100>" \
  " and resend_after=<duration>"


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
  const char *zRelaxed;       /* Why the other word weakens what a claim
                              ** promises by default, or NULL */
};
static const IdemSwitch aIdemSwitch[] = {
  { "local_failure", { "release", "keep" },
    offsetof(IdemOptions, bKeepLocalFailure),
    "local_failure=release (the default) or local_failure=keep", 0 },
  { "args_mismatch", { "error", "replay" },
    offsetof(IdemOptions, bArgsMismatchReplay),
    "args_mismatch=error (the default) or args_mismatch=replay",
    "a duplicate with other arguments replays the first call instead of"
    " failing" },
  { "durability", { "full", "relaxed" },
    offsetof(IdemOptions, bRelaxedDurability),
    "durability=full (the default: a claim needs a commit that survives"
    " what its act survives) or durability=relaxed (accept that a power"
    " loss may take back a claim)",
    "a power loss may take back a claim, and its call may then run again" },
  { "honours_key", { "no", "yes" },
    offsetof(IdemOptions, bHonoursKey),
    "honours_key=no (the default: an unknown external call is never sent"
    " again) or honours_key=yes (the table's external calls go to targets"
    " that honour the Idempotency-Key: one with an unknown outcome may be"
    " resent with the same key)",
    "an external call whose outcome is unknown is sent again with the same"
    " key, which is safe only where the target honours it" },
};
/* The bits of IdemOptions.mGiven past the switches' (one each, by their
** place in aIdemSwitch). */
#define IDEM_GIVEN_RETAIN        8
#define IDEM_GIVEN_STALE_AFTER   9
#define IDEM_GIVEN_MAX_SENDS    10
#define IDEM_GIVEN_RESEND_AFTER 11

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

static void idemDurationText(sqlite3_str*, sqlite3_int64);

/*
** Parse one module argument "name=value" into *pOpt.  Returns SQLITE_OK
** or an error with *pzErr set (the text alone: the table's error puts
** "idem: <table>: " in front).  A value may be quoted ('24 hours') or not
** (24 hours): SQLite hands the argument over as it was written.  bOld:
** the options of a table that exists (its connect), where a stale_after
** shorter than three heartbeats, refused since, is taken as it was.
*/
static int idemOptionParse(IdemOptions *pOpt, const char *zArg, int bOld,
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
  if( nName==9 && sqlite3_strnicmp(zArg, "max_sends", 9)==0 ){
    int n = 0;
    if( idemOptionTwice(pOpt, IDEM_GIVEN_MAX_SENDS, "max_sends", pzErr) ){
      return SQLITE_ERROR;
    }
    for(i=0; i<nValue && i<4 && zValue[i]>='0' && zValue[i]<='9'; i++){
      n = n*10 + (zValue[i]-'0');
    }
    if( nValue==0 || i<nValue || n<1 || n>IDEM_MAX_SENDS_LIMIT ){
      *pzErr = sqlite3_mprintf("bad value '%.*s' for max_sends; use a whole"
          " number from 1 to %d: how many times a call that honours the key"
          " may be taken for sending, the claim included (the default is"
          " %d)", nValue, zValue, IDEM_MAX_SENDS_LIMIT, IDEM_MAX_SENDS);
      return SQLITE_ERROR;
    }
    pOpt->nMaxSends = n;
    return SQLITE_OK;
  }
  if( (nName==6 && sqlite3_strnicmp(zArg, "retain", 6)==0)
   || (nName==11 && sqlite3_strnicmp(zArg, "stale_after", 11)==0)
   || (nName==12 && sqlite3_strnicmp(zArg, "resend_after", 12)==0) ){
    sqlite3_int64 iMs = idemDurationParse(zValue, nValue);
    if( idemOptionTwice(pOpt, nName==6 ? IDEM_GIVEN_RETAIN
                        : nName==11 ? IDEM_GIVEN_STALE_AFTER
                        : IDEM_GIVEN_RESEND_AFTER, nName==6 ? "retain"
                        : nName==11 ? "stale_after" : "resend_after", pzErr) ){
      return SQLITE_ERROR;
    }
    if( iMs==0 ){
      *pzErr = sqlite3_mprintf("bad duration '%.*s' for %.*s; use a"
          " positive number and a unit of seconds, minutes, hours or days"
          " (at most 36525 days), e.g. %.*s='24 hours'",
          nValue, zValue, nName, zArg, nName, zArg);
      return SQLITE_ERROR;
    }
    if( nName==11 && iMs<3*IDEM_HEARTBEAT_MIN_MS && !bOld ){
      /* Three beats at the heartbeat's floor: a shorter stale_after would
      ** mark a call stale while its owner waits and beats (§11). */
      sqlite3_str *s = sqlite3_str_new(0);
      sqlite3_str_appendf(s, "stale_after='%.*s' is shorter than ",
                          nValue, zValue);
      idemDurationText(s, 3*IDEM_HEARTBEAT_MIN_MS);
      sqlite3_str_appendall(s, ", three heartbeats: the owner of a pending"
          " external call touches it every third of stale_after, and at"
          " most every ");
      idemDurationText(s, IDEM_HEARTBEAT_MIN_MS);
      sqlite3_str_appendall(s, " (each touch is a write), so its call"
          " would go stale while the owner waits; use stale_after='");
      idemDurationText(s, 3*IDEM_HEARTBEAT_MIN_MS);
      sqlite3_str_appendall(s, "' or longer");
      *pzErr = sqlite3_str_finish(s);
      return SQLITE_ERROR;
    }
    if( nName==6 ) pOpt->iRetainMs = iMs;
    else if( nName==11 ) pOpt->iStaleAfterMs = iMs;
    else pOpt->iResendAfterMs = iMs;
    return SQLITE_OK;
  }
 bad:
  *pzErr = sqlite3_mprintf("unknown option '%s'; the options are "
      IDEM_OPTIONS_HELP, zArg);
  return SQLITE_ERROR;
}

/*
** Parse the module arguments azArg[0..nArg) ("name=value" each, as SQLite
** hands them to xCreate) into *pOpt, zeroed first: SQLITE_OK, or an error
** with *pzErr set (NULL when out of memory).  CREATE VIRTUAL TABLE
** (idem_vtab.c) and idem_parse_options() both parse here.  bTwiceOk: an
** option given twice is no error, the last one winning, and a stale_after
** under three heartbeats is taken (the connect of a table an older build
** made so).
*/
IDEM_PRIVATE int idemOptionParseAll(IdemOptions *pOpt, int nArg,
                                    const char *const *azArg, int bTwiceOk,
                                    char **pzErr){
  int i;
  memset(pOpt, 0, sizeof(*pOpt));
  *pzErr = 0;
  for(i=0; i<nArg; i++){
    if( bTwiceOk ) pOpt->mGiven = 0;
    if( idemOptionParse(pOpt, azArg[i], bTwiceOk, pzErr)!=SQLITE_OK ){
      return SQLITE_ERROR;
    }
  }
  return SQLITE_OK;
}

/* max_sends and resend_after as they act: given, or the default (§14). */
IDEM_PRIVATE int idemOptionMaxSends(const IdemOptions *pOpt){
  return pOpt->nMaxSends ? pOpt->nMaxSends : IDEM_MAX_SENDS;
}
IDEM_PRIVATE sqlite3_int64 idemOptionResendAfter(const IdemOptions *pOpt){
  return pOpt->iResendAfterMs ? pOpt->iResendAfterMs : IDEM_RESEND_AFTER_MS;
}

/* The heartbeat of a pending external call, in ms (§11); 0: none. */
static sqlite3_int64 idemOptionHeartbeat(const IdemOptions *pOpt){
  sqlite3_int64 iMs = pOpt->iStaleAfterMs/3;
  if( pOpt->iStaleAfterMs==0 ) return 0;
  return iMs<IDEM_HEARTBEAT_MIN_MS ? IDEM_HEARTBEAT_MIN_MS : iMs;
}

/*
** A duration in words that idem reads back as the same duration: the
** largest unit it is a whole number of ('1 day', '36 hours', '90
** seconds'), else seconds with a fraction ('1.5 seconds').
*/
static void idemDurationText(sqlite3_str *s, sqlite3_int64 iMs){
  static const struct { const char *zUnit; sqlite3_int64 iMs; } aUnit[] = {
    { "day", 86400000 }, { "hour", 3600000 }, { "minute", 60000 },
    { "second", 1000 },
  };
  int i;
  for(i=0; i<(int)(sizeof(aUnit)/sizeof(aUnit[0])); i++){
    if( iMs%aUnit[i].iMs==0 ){
      sqlite3_int64 n = iMs/aUnit[i].iMs;
      sqlite3_str_appendf(s, "%lld %s%s", n, aUnit[i].zUnit, n==1 ? "" : "s");
      return;
    }
  }
  if( iMs%100==0 ){
    sqlite3_str_appendf(s, "%lld.%lld seconds", iMs/1000, (iMs%1000)/100);
  }else if( iMs%10==0 ){
    sqlite3_str_appendf(s, "%lld.%02lld seconds", iMs/1000, (iMs%1000)/10);
  }else{
    sqlite3_str_appendf(s, "%lld.%03lld seconds", iMs/1000, iMs%1000);
  }
}

/*
** Append *pOpt to s as idem_options() gives it (doc/contract.md §5):
**
**   {"options": {"local_failure": "release", "args_mismatch": "error",
**                "durability": "full", "honours_key": "no",
**                "retain": null | <ms>, "stale_after": null | <ms>,
**                "max_sends": 5, "resend_after": <ms>},
**    "shown":   {each option as an error names it: "retain='1 day'",
**                "durability=full (the default)", "no stale_after"},
**    "relaxed": {each option whose value weakens what a claim promises
**                by default, with why: args_mismatch=replay,
**                durability=relaxed, honours_key=yes, any retain},
**    "heartbeat": null | <ms>: how often the packages touch a pending
**                external call while its request is out (§11)}
**
** Every text here is ASCII without quotes or backslashes: it needs no
** JSON escaping.
*/
IDEM_PRIVATE void idemOptionJson(sqlite3_str *s, const IdemOptions *pOpt){
  static const char *const azDur[2] = { "retain", "stale_after" };
  const int nSw = (int)(sizeof(aIdemSwitch)/sizeof(aIdemSwitch[0]));
  sqlite3_int64 aiDur[2], iBeat;
  int i, bSep, iPart;
  aiDur[0] = pOpt->iRetainMs;
  aiDur[1] = pOpt->iStaleAfterMs;
  for(iPart=0; iPart<3; iPart++){
    sqlite3_str_appendf(s, "%s\"%s\":{", iPart ? "," : "{",
                        iPart==0 ? "options" : iPart==1 ? "shown" : "relaxed");
    bSep = 0;
    for(i=0; i<nSw; i++){
      const IdemSwitch *pSw = &aIdemSwitch[i];
      int b;
      memcpy(&b, (const char*)pOpt + pSw->iOffset, sizeof(b));
      b = b!=0;
      if( iPart==2 && !(b && pSw->zRelaxed) ) continue;
      sqlite3_str_appendf(s, "%s\"%s\":", bSep ? "," : "", pSw->zName);
      bSep = 1;
      if( iPart==0 ){
        sqlite3_str_appendf(s, "\"%s\"", pSw->azWord[b]);
      }else if( iPart==1 ){
        sqlite3_str_appendf(s, "\"%s=%s%s\"", pSw->zName, pSw->azWord[b],
                            b ? "" : " (the default)");
      }else{
        sqlite3_str_appendf(s, "\"%s=%s: %s\"", pSw->zName, pSw->azWord[b],
                            pSw->zRelaxed);
      }
    }
    for(i=0; i<2; i++){
      /* Any retain lets a decided call run again once it is forgotten; a
      ** stale_after only marks calls for an operator. */
      if( iPart==2 && (i!=0 || aiDur[i]==0) ) continue;
      sqlite3_str_appendf(s, "%s\"%s\":", bSep ? "," : "", azDur[i]);
      bSep = 1;
      if( iPart==0 ){
        if( aiDur[i] ) sqlite3_str_appendf(s, "%lld", aiDur[i]);
        else sqlite3_str_appendall(s, "null");
      }else if( aiDur[i]==0 ){
        sqlite3_str_appendf(s, "\"no %s\"", azDur[i]);
      }else{
        sqlite3_str_appendf(s, "\"%s='", azDur[i]);
        idemDurationText(s, aiDur[i]);
        sqlite3_str_appendall(s, "'");
        if( iPart==2 ){
          sqlite3_str_appendall(s, ": a decided call is forgotten ");
          idemDurationText(s, aiDur[i]);
          sqlite3_str_appendall(s, " after it was decided, and an arrival"
                                   " after that runs it again");
        }
        sqlite3_str_appendall(s, "\"");
      }
    }
    if( iPart<2 ){
      /* §14: the sends and the backoff, given or the default. */
      int nMax = idemOptionMaxSends(pOpt);
      sqlite3_int64 iAfter = idemOptionResendAfter(pOpt);
      if( iPart==0 ){
        sqlite3_str_appendf(s, "%s\"max_sends\":%d,\"resend_after\":%lld",
                            bSep ? "," : "", nMax, iAfter);
      }else{
        sqlite3_str_appendf(s, "%s\"max_sends\":\"max_sends=%d%s\","
                            "\"resend_after\":\"resend_after='", bSep ? "," : "",
                            nMax, pOpt->nMaxSends ? "" : " (the default)");
        idemDurationText(s, iAfter);
        sqlite3_str_appendf(s, "'%s\"",
                            pOpt->iResendAfterMs ? "" : " (the default)");
      }
    }
    sqlite3_str_appendall(s, "}");
  }
  iBeat = idemOptionHeartbeat(pOpt);
  if( iBeat ) sqlite3_str_appendf(s, ",\"heartbeat\":%lld}", iBeat);
  else sqlite3_str_appendall(s, ",\"heartbeat\":null}");
}

/* ------------------------------------------------ the packages' functions */

/* Usage of idem_parse_options(), in its errors. */
#define IDEM_PARSE_USAGE "idem_parse_options(table, option, ...)"

/*
** idem_parse_options(table, option, ...): the options as CREATE VIRTUAL
** TABLE <table> USING idem(<option>, ...) parses them, each option one
** module argument as SQLite hands it over ("retain='30 days'"), as JSON,
** idemOptionJson() (that of idem_options()); or the error that CREATE
** would give, word for word ("idem: <table>: unknown value ..."): table is
** used for nothing but that message, and refused when it holds a '.'
** (doc/contract.md §5: the packages' one rule for a schema-qualified
** name, which CREATE itself takes as a name of main).  Deterministic:
** nothing is read.
*/
static void idemParseOptionsFunc(sqlite3_context *ctx, int argc,
                                 sqlite3_value **argv){
  IdemOptions opt;
  const char **azArg = 0;
  const char *zTab;
  char *zErr = 0, *zOut;
  sqlite3_str *s;
  int i, rc;
  if( argc<1 ){
    idemResultError(ctx, SQLITE_ERROR, IDEM_PARSE_USAGE ": the table's name"
        " comes first, then each option");
    return;
  }
  for(i=0; i<argc; i++){
    if( sqlite3_value_type(argv[i])!=SQLITE_TEXT ){
      idemResultError(ctx, SQLITE_ERROR, IDEM_PARSE_USAGE ": argument %d is"
          " not text; give the table's name, then each option as CREATE"
          " VIRTUAL TABLE takes it (name=value)", i+1);
      return;
    }
  }
  zTab = (const char*)sqlite3_value_text(argv[0]);
  if( zTab==0 ) goto nomem;
  if( strchr(zTab, '.')!=0 ){
    idemResultError(ctx, SQLITE_ERROR, "the table name %Q holds a '.': a"
        " package makes and uses its table in the main database by the name"
        " it is given, where SQL would read a schema before the '.'"
        " (temp.calls: the table calls of the schema temp); give the table's"
        " name alone", zTab);
    return;
  }
  azArg = (const char**)sqlite3_malloc64(sizeof(char*)*(argc>1 ? argc-1 : 1));
  if( azArg==0 ) goto nomem;
  for(i=1; i<argc; i++){
    if( (azArg[i-1] = (const char*)sqlite3_value_text(argv[i]))==0 ) goto nomem;
  }
  rc = idemOptionParseAll(&opt, argc-1, azArg, 0, &zErr);
  sqlite3_free(azArg);
  azArg = 0;
  if( rc!=SQLITE_OK ){
    if( zErr==0 ) goto nomem;
    idemResultError(ctx, SQLITE_ERROR, "%s: %s", zTab, zErr);
    sqlite3_free(zErr);
    return;
  }
  s = sqlite3_str_new(0);
  idemOptionJson(s, &opt);
  if( (zOut = sqlite3_str_finish(s))==0 ) goto nomem;
  sqlite3_result_text(ctx, zOut, -1, sqlite3_free);
  sqlite3_result_subtype(ctx, 'J');       /* JSON, for json_extract and ->> */
  return;

 nomem:
  sqlite3_free(azArg);
  sqlite3_result_error_nomem(ctx);
}

/* idem_limits(): the limits the packages keep, as JSON (idemInt.h). */
static void idemLimitsFunc(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv){
  char *zOut;
  (void)argc; (void)argv;
  zOut = sqlite3_mprintf("{\"note_max\":%d,\"resend_refusals\":%d}",
                         IDEM_NOTE_MAX, IDEM_RESEND_REFUSALS);
  if( zOut==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, zOut, -1, sqlite3_free);
  sqlite3_result_subtype(ctx, 'J');
}

/*
** idem_statuses(): the statuses a call can have, as a JSON array, in the
** order an operator reads them, what needs a person first:
** ["unknown","pending","failed","done"].  A package's operator tools list
** and accept these (doc/contract.md §5), and keep no copy of them.
*/
static void idemStatusesFunc(sqlite3_context *ctx, int argc,
                             sqlite3_value **argv){
  static const IdemStatus aOrder[] = {
    IDEM_STATUS_UNKNOWN, IDEM_STATUS_PENDING, IDEM_STATUS_FAILED,
    IDEM_STATUS_DONE
  };
  sqlite3_str *s = sqlite3_str_new(0);
  char *zOut;
  int i;
  (void)argc; (void)argv;
  for(i=0; i<(int)(sizeof(aOrder)/sizeof(aOrder[0])); i++){
    sqlite3_str_appendf(s, "%c\"%s\"", i ? ',' : '[', azIdemStatus[aOrder[i]]);
  }
  sqlite3_str_appendchar(s, 1, ']');
  if( (zOut = sqlite3_str_finish(s))==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, zOut, -1, sqlite3_free);
  sqlite3_result_subtype(ctx, 'J');
}

/* Append z to s as a URI writes it: %HH for '%', '?', '#', a blank or a
** control character, and for '&' and '=' too when bParam (a parameter's
** name or value), as sqlite3_uri_parameter() reads them back. */
static void idemUriAppend(sqlite3_str *s, const char *z, int bParam){
  for(; *z; z++){
    unsigned char c = (unsigned char)*z;
    if( c<=' ' || c==0x7f || c=='%' || c=='?' || c=='#'
     || (bParam && (c=='&' || c=='=')) ){
      sqlite3_str_appendf(s, "%%%02X", c);
    }else{
      sqlite3_str_appendchar(s, 1, (char)c);
    }
  }
}

/*
** idem_database_uri(schema): a URI that opens schema's file the way this
** connection opened it: file:<path>, then each URI parameter it was opened
** with (mode, cache, psow, ...) and vfs=<the VFS it uses>; NULL for a
** schema with no file (in memory, temp).  A package that opens a
** connection of its own to the same database (sync Python's heartbeat,
** doc/contract.md §11) opens it with this, SQLITE_OPEN_URI: a path alone
** would take the default VFS and lose the parameters.  What a URI cannot
** say (a PRAGMA set on the connection, open flags given without a URI) it
** does not carry.
*/
static void idemDatabaseUriFunc(sqlite3_context *ctx, int argc,
                                sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zDb = (const char*)sqlite3_value_text(argv[0]);
  const char *zFile, *zKey;
  sqlite3_vfs *pVfs = 0;
  sqlite3_str *s;
  char *zOut;
  char cSep = '?';
  int i;
  (void)argc;
  if( sqlite3_value_type(argv[0])!=SQLITE_TEXT || zDb==0 ){
    idemResultError(ctx, SQLITE_ERROR, "idem_database_uri(schema): the"
        " schema is a name (text), such as 'main'");
    return;
  }
  zFile = sqlite3_db_filename(db, zDb);
  if( zFile==0 ){
    const char *zName;
    for(i=0; (zName = sqlite3_db_name(db, i))!=0; i++){
      if( sqlite3_stricmp(zName, zDb)==0 ) return;     /* temp: no file */
    }
    idemResultError(ctx, SQLITE_ERROR, "idem_database_uri(%Q): no such"
        " schema", zDb);
    return;
  }
  if( zFile[0]==0 ) return;             /* in memory: no file */
  s = sqlite3_str_new(0);
  sqlite3_str_appendall(s, zFile[0]=='/' ? "file://" : "file:");
  idemUriAppend(s, zFile, 0);
  for(i=0; (zKey = sqlite3_uri_key(zFile, i))!=0; i++){
    if( sqlite3_stricmp(zKey, "vfs")==0 ) continue;
    sqlite3_str_appendchar(s, 1, cSep);
    idemUriAppend(s, zKey, 1);
    sqlite3_str_appendchar(s, 1, '=');
    idemUriAppend(s, sqlite3_uri_parameter(zFile, zKey), 1);
    cSep = '&';
  }
  if( sqlite3_file_control(db, zDb, SQLITE_FCNTL_VFS_POINTER, &pVfs)==SQLITE_OK
   && pVfs && pVfs->zName ){
    sqlite3_str_appendf(s, "%cvfs=", cSep);
    idemUriAppend(s, pVfs->zName, 1);
  }
  if( (zOut = sqlite3_str_finish(s))==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, zOut, -1, sqlite3_free);
}

/*
** idem_refusal(message): the kind of an error of idem, by its message
** (sqlite3_errmsg(), whole), for a package to raise a typed error without
** matching text itself: 'args_mismatch' for a claim refused under
** args_mismatch=error ("idem: <table>: key '<key>' was already used with
** other arguments..."), NULL for any other message or value.
*/
static void idemRefusalFunc(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv){
  const char *z = (const char*)sqlite3_value_text(argv[0]);
  const int nText = (int)sizeof(IDEM_ARGS_MISMATCH_TEXT)-1;
  (void)argc;
  if( sqlite3_value_type(argv[0])!=SQLITE_TEXT || z==0
   || strncmp(z, "idem: ", 6)!=0 ){
    return;
  }
  /* After the table's name: ": key '" 32 hex digits "' " and the words. */
  for(z=strstr(z+6, ": key '"); z; z=strstr(z+1, ": key '")){
    const char *zKey = z+7;
    int i;
    for(i=0; i<2*IDEM_KEY_BYTES; i++){
      if( !((zKey[i]>='0' && zKey[i]<='9') || (zKey[i]>='a' && zKey[i]<='f')) ){
        break;
      }
    }
    if( i==2*IDEM_KEY_BYTES && zKey[i]=='\'' && zKey[i+1]==' '
     && strncmp(zKey+i+2, IDEM_ARGS_MISMATCH_TEXT, nText)==0 ){
      sqlite3_result_text(ctx, "args_mismatch", -1, SQLITE_STATIC);
      return;
    }
  }
}

/* Register idem_parse_options(), idem_limits(), idem_statuses() and
** idem_refusal(), each of which reads nothing but its arguments, and
** idem_database_uri(), which reads the connection. */
IDEM_PRIVATE int idemOptionRegister(sqlite3 *db){
  const int f = SQLITE_UTF8|SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS;
  int rc = sqlite3_create_function(db, "idem_parse_options", -1,
      f|SQLITE_RESULT_SUBTYPE, 0, idemParseOptionsFunc, 0, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "idem_limits", 0,
        f|SQLITE_RESULT_SUBTYPE, 0, idemLimitsFunc, 0, 0);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "idem_statuses", 0,
        f|SQLITE_RESULT_SUBTYPE, 0, idemStatusesFunc, 0, 0);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "idem_refusal", 1, f, 0,
        idemRefusalFunc, 0, 0);
  }
  if( rc==SQLITE_OK ){
    /* It reads the connection (a file's path): not from a view or a
    ** trigger, as idem_options(). */
    rc = sqlite3_create_function(db, "idem_database_uri", 1,
        SQLITE_UTF8|SQLITE_DIRECTONLY, 0, idemDatabaseUriFunc, 0, 0);
  }
  return rc;
}

/* SPDX-License-Identifier: MIT */
/*
** oom.c -- allocation faults for every operation of idem.
**
**   make test-oom           (builds build/oom and runs it)
**   build/oom [-v] [-x] [-q | -m] [-s [OPERATION=]STRIDE ...] [OPERATION ...]
**
**     -v         one line per run
**     -x         run the persistent faults that are the same run as the
**                benign one (below) all the same, printing any that is not
**     -q         the file database only (not :memory: too)
**     -m         :memory: only (not the file database: .ci/run runs the
**                file database under ASan, make test-asan-oom)
**     -s STRIDE  fail allocation 1, 1+STRIDE, 1+2*STRIDE, ... only (for the
**                slow runs under valgrind)
**     -s OPERATION=STRIDE
**                the same for that operation alone (.ci/run: rename, whose
**                ALTER TABLE makes some 4 900 allocations, four of SQLite's
**                renames and schema parses, in a third of the ASan run)
**     OPERATION  only these (names as printed)
**
** The extension is linked from make's build/libidem.a (-DSQLITE_CORE), or
** under ASan from build/asan/libidem.a, built with the same flags
** (-DIDEM_OOM_LINKED; without it, it is compiled into this file, one
** translation unit), and registered with sqlite3_auto_extension().  A
** wrapper around SQLite's own allocator (SQLITE_CONFIG_GETMALLOC, then
** SQLITE_CONFIG_MALLOC) fails the Nth allocation, and in a second pass
** every allocation from the Nth on ("benign" and "persistent" faults).
**
** A persistent fault at N whose benign run asked for no memory after its
** fault is not run again: that benign run was one of it too (allocation N
** failed and, there being no other after it, every one from N on), checked
** as strictly.  Run again, it is the same run allocation for allocation
** but where the operation does not repeat itself exactly: -x runs them,
** and prints the ones that took another path (here one to three of
** "range"'s, at faults 701-703 of ~890, not the same from one process to
** the next: it is not the fault that decides; cause not pinned down).
**
** For each operation, for N = 1, 2, ... until a run meets no fault:
**   1. a fresh database is set up with injection off;
**   2. the operation runs with injection on (in autocommit mode, and again
**      inside an explicit transaction that already wrote a row);
**   3. with injection off again, it is checked that
**      - a run that failed failed with SQLITE_NOMEM, or with an error whose
**        message says "out of memory" (never a wrong verdict such as
**        "already claimed", never a crash);
**      - a run that succeeded gave exactly the rows and the changes() that
**        the run without faults gives;
**      - the database holds exactly what it held before the operation (it
**        failed) or what the run without faults leaves (it succeeded):
**        never half of it.  In a transaction, SQLite may roll the whole
**        transaction back on SQLITE_NOMEM; that is accepted too;
**      - PRAGMA integrity_check says ok;
**      - once the connection is closed, no allocation is outstanding
**        beyond what was before it was opened (no leak).
** One documented exception: when memory stays exhausted (persistent
** faults), idem_versioned() may fail with the transaction of its savepoint
** still open (SQLite prepares nothing more inside the calling statement
** once an allocation has failed there, so it cannot roll back); the
** application rolls back, and then nothing of it may be left.
** This runs on a file database in a temporary directory and on :memory:.
** The last line is "N passed, N failed"; the exit status is 1 on failure.
*/
/* make test-oom and test-asan-oom link a libidem.a that make builds
** anyway (build/ and build/asan/), not one more compile of idem:
** -DIDEM_OOM_LINKED. */
#ifdef IDEM_OOM_LINKED
# include <sqlite3.h>
# include <string.h>
# include <stdarg.h>
# include "../../include/idem.h"
#else
# include "../../ext/idem.c"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ------------------------------------------------------ the allocator */
static sqlite3_mem_methods memDefault;  /* SQLite's own */
static struct {
  int bArmed;               /* Inject faults */
  int iFail;                /* Fail the allocation with this number... */
  int bPersist;             /* ...and, if true, every one after it */
  int nCall;                /* Allocations seen while armed */
  int nFault;               /* Faults injected while armed */
  int nCallArmed;           /* nCall when last disarmed */
  sqlite3_int64 nOutstanding;   /* Allocations not yet freed */
} oom;

static int oomShouldFail(void){
  if( !oom.bArmed ) return 0;
  oom.nCall++;
  if( oom.nCall==oom.iFail || (oom.bPersist && oom.nCall>oom.iFail) ){
    oom.nFault++;
    return 1;
  }
  return 0;
}
static void *oomMalloc(int n){
  void *p;
  if( oomShouldFail() ) return 0;
  p = memDefault.xMalloc(n);
  if( p ) oom.nOutstanding++;
  return p;
}
static void oomFree(void *p){
  if( p ) oom.nOutstanding--;
  memDefault.xFree(p);
}
static void *oomRealloc(void *p, int n){
  void *pNew;
  if( oomShouldFail() ) return 0;
  pNew = memDefault.xRealloc(p, n);
  if( pNew && p==0 ) oom.nOutstanding++;
  return pNew;
}
static int oomSize(void *p){ return memDefault.xSize(p); }
static int oomRoundup(int n){ return memDefault.xRoundup(n); }
static int oomInit(void *p){ return memDefault.xInit(p); }
static void oomShutdown(void *p){ memDefault.xShutdown(p); }

static void oomArm(int iFail, int bPersist){
  oom.iFail = iFail;
  oom.bPersist = bPersist;
  oom.nCall = 0;
  oom.nFault = 0;
  oom.bArmed = 1;
}
/* Disarm; return the number of faults injected. */
static int oomDisarm(void){
  oom.bArmed = 0;
  oom.nCallArmed = oom.nCall;
  return oom.nFault;
}

/* ------------------------------------------------------- text buffers */
typedef struct Buf Buf;
struct Buf { char *z; size_t n, nAlloc; };

static void bufAppend(Buf *b, const char *z, size_t n){
  if( b->n + n + 1 > b->nAlloc ){
    b->nAlloc = (b->n + n + 1)*2;
    b->z = realloc(b->z, b->nAlloc);
    if( b->z==0 ){ fprintf(stderr, "oom.c: out of real memory\n"); exit(2); }
  }
  memcpy(b->z + b->n, z, n);
  b->n += n;
  b->z[b->n] = 0;
}
static void bufPrintf(Buf *b, const char *zFmt, ...){
  char *z;
  va_list ap;
  va_start(ap, zFmt);
  z = sqlite3_vmprintf(zFmt, ap);    /* only ever called disarmed */
  va_end(ap);
  if( z==0 ){ fprintf(stderr, "oom.c: sqlite3_vmprintf failed\n"); exit(2); }
  bufAppend(b, z, strlen(z));
  sqlite3_free(z);
}
static void bufReset(Buf *b){ b->n = 0; if( b->z ) b->z[0] = 0; }
static const char *bufText(Buf *b){ return b->z ? b->z : ""; }

/* ------------------------------------------------------ the operations */
static char *zDoc;          /* A large document: nesting, sorting, escapes */
static char zK1[33], zK2[33];   /* Keys of the claims the setups make */

/* Bind the named parameters :doc, :k1, :k2 that pStmt has. */
static void bindParams(sqlite3_stmt *pStmt){
  int i;
  if( (i = sqlite3_bind_parameter_index(pStmt, ":doc"))>0 ){
    sqlite3_bind_text(pStmt, i, zDoc, -1, SQLITE_STATIC);
  }
  if( (i = sqlite3_bind_parameter_index(pStmt, ":k1"))>0 ){
    sqlite3_bind_text(pStmt, i, zK1, -1, SQLITE_STATIC);
  }
  if( (i = sqlite3_bind_parameter_index(pStmt, ":k2"))>0 ){
    sqlite3_bind_text(pStmt, i, zK2, -1, SQLITE_STATIC);
  }
}

/*
** Run every statement of zSql; the rows (and, after each statement that
** writes, changes()) go to pOut -- built with plain malloc, as the
** allocator may be armed.  Returns the first error code, or SQLITE_OK.
*/
static int runSql(sqlite3 *db, const char *zSql, Buf *pOut){
  const char *zTail = zSql;
  int rc = SQLITE_OK;
  while( rc==SQLITE_OK && zTail && zTail[0] ){
    sqlite3_stmt *pStmt = 0;
    rc = sqlite3_prepare_v2(db, zTail, -1, &pStmt, &zTail);
    if( rc!=SQLITE_OK || pStmt==0 ) break;
    bindParams(pStmt);
    while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
      int i;
      for(i=0; i<sqlite3_column_count(pStmt); i++){
        /* Numbers are printed here: a conversion to text by SQLite could
        ** fail, and the operation would seem to fail when it did not. */
        int eType = sqlite3_column_type(pStmt, i);
        char z[64];
        z[0] = "?iftbn"[eType];
        z[1] = ':';
        z[2] = 0;
        if( eType==SQLITE_INTEGER ){
          snprintf(z+2, sizeof(z)-2, "%lld", sqlite3_column_int64(pStmt, i));
        }else if( eType==SQLITE_FLOAT ){
          snprintf(z+2, sizeof(z)-2, "%.17g", sqlite3_column_double(pStmt, i));
        }
        bufAppend(pOut, z, strlen(z));
        if( eType==SQLITE_TEXT ){
          const char *zText = (const char*)sqlite3_column_text(pStmt, i);
          if( zText==0 ){
            rc = SQLITE_NOMEM;      /* no room for its terminating NUL */
            break;
          }
          bufAppend(pOut, zText, strlen(zText));
        }else if( eType==SQLITE_BLOB ){
          bufAppend(pOut, "(blob)", 6);
        }
        bufAppend(pOut, "|", 1);
      }
      if( rc!=SQLITE_ROW ) break;
      bufAppend(pOut, "\n", 1);
    }
    if( rc==SQLITE_DONE ){
      rc = SQLITE_OK;
      if( !sqlite3_stmt_readonly(pStmt) ){
        char z[40];
        snprintf(z, sizeof(z), "changes=%d\n", sqlite3_changes(db));
        bufAppend(pOut, z, strlen(z));
      }
    }
    if( rc==SQLITE_OK ){
      rc = sqlite3_finalize(pStmt);
    }else{
      sqlite3_finalize(pStmt);
    }
  }
  return rc;
}

/*
** Everything the database holds that an operation may change: the schema,
** and every row of every ordinary table, but created, updated and expires
** (times).
** Run disarmed.
*/
static int dumpDb(sqlite3 *db, Buf *pOut){
  sqlite3_stmt *pTab = 0;
  int rc;
  bufReset(pOut);
  rc = sqlite3_prepare_v2(db, "SELECT type, name, tbl_name, sql,"
      " sql LIKE 'CREATE VIRTUAL%' FROM sqlite_schema ORDER BY type, name",
      -1, &pTab, 0);
  if( rc ) return rc;
  while( sqlite3_step(pTab)==SQLITE_ROW ){
    const char *zType = (const char*)sqlite3_column_text(pTab, 0);
    const char *zName = (const char*)sqlite3_column_text(pTab, 1);
    bufPrintf(pOut, "%s %s on %s: %s\n", zType, zName,
              sqlite3_column_text(pTab, 2), sqlite3_column_text(pTab, 3));
    if( strcmp(zType, "table")==0 && !sqlite3_column_int(pTab, 4)
     && strncmp(zName, "sqlite_", 7)!=0 ){
      sqlite3_stmt *pRow = 0;
      /* <name>_config and <name>_expiry have no rowid: their key orders */
      const char *zTabSql = (const char*)sqlite3_column_text(pTab, 3);
      char *zSql = sqlite3_mprintf("SELECT * FROM \"%w\" ORDER BY %s", zName,
          zTabSql && strstr(zTabSql, "WITHOUT ROWID") ? "1, 2" : "rowid");
      rc = sqlite3_prepare_v2(db, zSql, -1, &pRow, 0);
      sqlite3_free(zSql);
      if( rc ) break;
      while( sqlite3_step(pRow)==SQLITE_ROW ){
        int i;
        bufAppend(pOut, "  ", 2);
        for(i=0; i<sqlite3_column_count(pRow); i++){
          const char *zCol = sqlite3_column_name(pRow, i);
          if( strcmp(zCol, "created")==0 || strcmp(zCol, "updated")==0
           || strcmp(zCol, "expires")==0 ) continue;
          if( sqlite3_column_type(pRow, i)==SQLITE_BLOB ){
            const unsigned char *a = sqlite3_column_blob(pRow, i);
            int j, n = sqlite3_column_bytes(pRow, i);
            bufPrintf(pOut, "%s=x'", zCol);
            for(j=0; j<n; j++) bufPrintf(pOut, "%02x", a[j]);
            bufAppend(pOut, "' ", 2);
          }else{
            bufPrintf(pOut, "%s=%s ", zCol, sqlite3_column_text(pRow, i));
          }
        }
        bufAppend(pOut, "\n", 1);
      }
      rc = sqlite3_finalize(pRow);
      if( rc ) break;
    }
  }
  sqlite3_finalize(pTab);
  return rc;
}

/* K1 stays pending between statements, so it is external: a local claim
** never commits pending (doc/contract.md §4).  LOCAL_K1 makes it local
** afterwards, as an older idem could leave it. */
#define CLAIM_K1 \
  "INSERT INTO calls(who,conv,tool,args,kind)" \
  " VALUES('alice','c1','send','{\"b\":2,\"a\":1}','external');"
#define LOCAL_K1 "UPDATE calls_claim SET kind='local' WHERE member=0;"
#define CLAIM_K2 \
  "INSERT INTO calls(who,conv,tool,args,kind)" \
  " VALUES('alice','c1','charge','{\"amount\":5,\"cur\":\"EUR\"}','external');"
#define MEMBERS_K1 \
  "INSERT INTO calls(key,member,id,result) VALUES(:k1,1,101,'{\"row\":1}');" \
  "INSERT INTO calls(key,member,id,result) VALUES(:k1,2,102,'{\"row\":2}');"
#define DONE_K1 \
  "UPDATE calls SET status='done', id=42, result='{\"order\":42}'" \
  " WHERE key=:k1 AND member=0;"
#define UNKNOWN_K2 \
  "UPDATE calls SET status='failed', note='timeout' WHERE key=:k2 AND member=0;"
/* durability=relaxed: the driver runs with synchronous=OFF and in
** :memory:, where external claims are refused otherwise (doc/contract.md
** §12); "claim-external-checked" runs the durability check itself. */
#define TABLE "CREATE VIRTUAL TABLE calls USING idem(durability=relaxed);"
/* A table with the options of doc/contract.md §9-11, and K1 decided and
** already expired (its expiry written into the past). */
#define TABLE_RETAIN \
  "CREATE VIRTUAL TABLE calls USING idem(durability=relaxed," \
  " retain='1 hour', stale_after='1 minute', args_mismatch=error);"
#define EXPIRED_K1 \
  "UPDATE calls_claim SET expires='2000-01-01 00:00:00.000' WHERE member=0;" \
  "UPDATE calls_expiry SET expires='2000-01-01 00:00:00.000';"
#define CLAIM_K3 \
  "INSERT INTO calls(who,conv,tool,args,keyargs,owner,kind)" \
  " VALUES('bob','c3','send','{\"to\":\"x\",\"text\":\"hi\"}','{\"to\":\"x\"}','w1','external');"
/* A table whose external calls honour the key (doc/contract.md §14), and
** K2 unknown since long ago: its resend is due. */
#define TABLE_RESEND \
  "CREATE VIRTUAL TABLE calls USING idem(durability=relaxed," \
  " honours_key=yes, resend_after='1 hour', stale_after='1 minute');"
#define TABLE_RESEND1 \
  "CREATE VIRTUAL TABLE calls USING idem(durability=relaxed," \
  " honours_key=yes, max_sends=1);"
#define AGED_K2 \
  "UPDATE calls_claim SET updated='2000-01-01 00:00:00.000' WHERE member=0;"
#define INV \
  "CREATE TABLE inv(sku TEXT PRIMARY KEY, qty INTEGER," \
  " ver INTEGER NOT NULL DEFAULT 0);" \
  "INSERT INTO inv VALUES('A',10,0),('B',5,3);"

typedef struct Op Op;
struct Op {
  const char *zName;
  const char *zSetup;       /* Run disarmed first */
  const char *zRun;         /* The operation, armed */
  int bReopen;              /* Open the connection again, armed, to run it */
  int bMayStayOpen;         /* Documented: when memory stays exhausted, it
                            ** may fail with its transaction still open,
                            ** which the application rolls back */
  const char *zAfter;       /* Run disarmed after it (and its checks): the
                            ** same outcome as after a run without faults
                            ** (a fault leaves nothing that changes what
                            ** the connection does next), or NULL */
};

static const Op aOp[] = {
  { "canonical", "", "SELECT idem_canonical(:doc);"
      "SELECT idem_canonical('[\"\\u00e9\\ud83d\\ude00\\t\",1E30,-0.0,0.1]')", 0, 0, 0 },
  /* Objects out of order that wait for the end (idemJsonEmit). */
  { "canonical-nested", "", "SELECT idem_canonical('[{\"b\":{\"d\":{\"f\":\"'"
      " || hex(zeroblob(60)) || '\",\"e\":2},\"c\":1},\"a\":0},"
      "{\"z\":{\"y\":[0,{\"q\":\"' || hex(zeroblob(60)) || '\",\"p\":1}],"
      "\"x\":0},\"w\":1}]')", 0, 0, 0 },
  { "key", "", "SELECT idem_key('alice','c1','send',:doc), idem_key(1, 2.5,"
      " x'00ff', '{\"b\":[1.0],\"a\":\"x\"}'), idem_header(:k1)", 0, 0, 0 },
  { "canonical-error", "", "SELECT idem_canonical('{\"a\":1,\"b\":[1,2],\"a\":3}')", 0, 0, 0 },
  { "key-error", "", "SELECT idem_key('alice','c1','send','[1,]')", 0, 0, 0 },
  { "key-null", "", "SELECT idem_key('alice',NULL,'send','[]')", 0, 0, 0 },
  { "create", "", "CREATE VIRTUAL TABLE calls USING idem(local_failure=release)", 0, 0, 0 },
  { "connect", TABLE CLAIM_K1 MEMBERS_K1,
      "SELECT key, member, who, status, id, result FROM calls ORDER BY rowid", 1, 0, 0 },
  { "claim", TABLE, CLAIM_K1, 0, 0, 0 },
  { "claim-external", TABLE,
      "INSERT OR IGNORE INTO calls(who,conv,tool,args,kind)"
      " VALUES('alice','c1','charge','{\"cur\":\"EUR\",\"amount\":5.0}','external')", 0, 0, 0 },
  { "claim-external-checked",
      "PRAGMA synchronous=FULL; CREATE VIRTUAL TABLE calls USING idem;",
      "INSERT INTO calls(who,conv,tool,args,kind)"
      " VALUES('alice','c1','charge','{\"amount\":5}','external')", 0, 0, 0 },
  /* The schema changed since the claim's INSERT was prepared: it fails
  ** with SQLITE_SCHEMA, and the shadow tables are checked and the INSERT
  ** prepared again (idemStoreInsert()); with a trigger on calls_claim,
  ** the claim is refused. */
  { "claim-schema-changed", TABLE CLAIM_K1 "CREATE TABLE mine(a);",
      "INSERT INTO calls(who,conv,tool,args,kind)"
      " VALUES('alice','c1','charge','{\"amount\":5}','external')", 0, 0, 0 },
  { "claim-trigger-made", TABLE CLAIM_K1
      "CREATE TRIGGER t AFTER INSERT ON calls_claim BEGIN SELECT 1; END;",
      "INSERT INTO calls(who,conv,tool,args,kind)"
      " VALUES('alice','c1','charge','{\"amount\":5}','external')", 0, 0,
      "INSERT INTO calls(who,conv,tool,args,kind)"
      " VALUES('alice','c1','charge','{\"amount\":5}','external')" },
  /* A trigger on calls_claim that sqlite_schema no longer shows (its row
  ** deleted with PRAGMA writable_schema on this connection) still runs in
  ** memory: the program SQLite compiled for the INSERT is listed
  ** (idemInsertProgram()) and the claim refused; a listing that failed is
  ** no verdict, and the claim after it is refused as without faults. */
  { "claim-trigger-hidden", TABLE CLAIM_K1 "CREATE TABLE tlog(x);"
      "CREATE TRIGGER t AFTER INSERT ON calls_claim BEGIN"
      " INSERT INTO tlog VALUES(new.who); END;"
      "PRAGMA writable_schema=ON; DELETE FROM sqlite_schema WHERE name='t';"
      "PRAGMA writable_schema=OFF;",
      "INSERT INTO calls(who,conv,tool,args,kind)"
      " VALUES('alice','c1','charge','{\"amount\":5}','external')", 0, 0,
      "INSERT INTO calls(who,conv,tool,args,kind)"
      " VALUES('alice','c1','charge','{\"amount\":5}','external');"
      "SELECT count(*) FROM tlog" },
  { "claim-doc", TABLE,
      "INSERT INTO calls(who,conv,tool,args,kind) VALUES('bob','c2','bulk',:doc,'external')", 0, 0, 0 },
  { "duplicate-ignore", TABLE CLAIM_K1,
      "INSERT OR IGNORE INTO calls(who,conv,tool,args)"
      " VALUES('alice','c1','send',' { \"a\" : 1 , \"b\" : 2.0 } ')", 0, 0, 0 },
  { "duplicate", TABLE CLAIM_K1 DONE_K1,
      "INSERT INTO calls(who,conv,tool,args) VALUES('alice','c1','send','{\"a\":1,\"b\":2}')", 0, 0, 0 },
  { "other-call", TABLE CLAIM_K1,
      "INSERT OR IGNORE INTO calls(key,who,conv,tool,args)"
      " VALUES(:k1,'mallory','c1','send','{}')", 0, 0, 0 },
  { "member", TABLE CLAIM_K1,
      "INSERT INTO calls(key,member,id,result) VALUES(:k1,1,7,'{\"row\":1}')", 0, 0, 0 },
  { "complete", TABLE CLAIM_K1 MEMBERS_K1,
      "UPDATE calls SET status='done', id=42, result='{\"ok\":true}'"
      " WHERE key=:k1 AND member=0", 0, 0, 0 },
  { "external-failure", TABLE CLAIM_K2,
      "UPDATE calls SET status='failed', note='timeout after 30 s'"
      " WHERE key=:k2 AND member=0", 0, 0, 0 },
  { "local-release", TABLE CLAIM_K1 MEMBERS_K1 LOCAL_K1,
      "UPDATE calls SET status='failed' WHERE key=:k1 AND member=0", 0, 0, 0 },
  { "reconcile", TABLE CLAIM_K2 UNKNOWN_K2,
      "UPDATE calls SET reconcile='arrived', id=9 WHERE key=:k2 AND member=0", 0, 0, 0 },
  { "replay", TABLE CLAIM_K1 MEMBERS_K1 DONE_K1,
      "SELECT key, member, who, conv, tool, args, kind, status, id, result, note"
      " FROM calls WHERE key=:k1", 0, 0, 0 },
  { "replay-narrow", TABLE CLAIM_K1 MEMBERS_K1 DONE_K1,
      "SELECT status, id, result FROM calls WHERE key=:k1 AND member=0;"
      "SELECT member, status, id, result FROM calls WHERE key=:k1;"
      "SELECT rowid, status FROM calls WHERE key=:k1 AND member=1", 0, 0, 0 },
  { "reply", TABLE CLAIM_K1 MEMBERS_K1 DONE_K1 CLAIM_K2 UNKNOWN_K2,
      "SELECT reply FROM calls WHERE key=:k1 AND member=0;"
      "SELECT reply FROM calls WHERE key=:k2 AND member=0;"
      "SELECT member, reply FROM calls WHERE key=:k1 AND member>0", 0, 0, 0 },
  { "scan", TABLE CLAIM_K1 MEMBERS_K1 CLAIM_K2,
      "SELECT key, member, who, status FROM calls ORDER BY rowid", 0, 0, 0 },
  { "purge", TABLE CLAIM_K1 MEMBERS_K1 DONE_K1 CLAIM_K2
      "INSERT INTO calls(who,conv,tool,args,kind) VALUES('carol','c3','send','[]','external');",
      "DELETE FROM calls WHERE created < '9999-12-31'", 0, 0, 0 },
  { "range", TABLE CLAIM_K1 MEMBERS_K1 DONE_K1 CLAIM_K2,
      "SELECT key, member FROM calls WHERE created > '2000' AND created <= '9999';"
      "SELECT count(*) FROM calls WHERE created >= (SELECT max(created) FROM calls)",
      0, 0, 0 },
  { "purge-unixepoch", TABLE CLAIM_K1 DONE_K1 CLAIM_K2,
      "DELETE FROM calls WHERE created < strftime('%Y-%m-%d %H:%M:%f',"
      " unixepoch('now','+1 day'), 'unixepoch')", 0, 0, 0 },
  { "rename", TABLE CLAIM_K1 MEMBERS_K1 DONE_K1,
      "ALTER TABLE calls RENAME TO calls2", 0, 0, 0 },
  { "drop", TABLE CLAIM_K1 MEMBERS_K1, "DROP TABLE calls", 0, 0, 0 },
  { "claim-keyargs", TABLE_RETAIN, CLAIM_K3, 0, 0, 0 },
  { "args-mismatch", TABLE_RETAIN CLAIM_K3,
      "INSERT OR IGNORE INTO calls(who,conv,tool,args,keyargs)"
      " VALUES('bob','c3','send','{\"to\":\"x\",\"text\":\"hello\"}','{\"to\":\"x\"}')", 0, 0, 0 },
  { "retain-decide", TABLE_RETAIN CLAIM_K1 MEMBERS_K1, DONE_K1, 0, 0, 0 },
  { "retain-sweep", TABLE_RETAIN CLAIM_K1 MEMBERS_K1 DONE_K1 EXPIRED_K1, CLAIM_K3, 0, 0, 0 },
  { "retain-reclaim", TABLE_RETAIN CLAIM_K1 MEMBERS_K1 DONE_K1 EXPIRED_K1,
      "INSERT INTO calls(who,conv,tool,args,kind)"
      " VALUES('alice','c1','send','{\"a\":1,\"b\":2}','external')", 0, 0, 0 },
  { "retain-read", TABLE_RETAIN CLAIM_K1 MEMBERS_K1 DONE_K1 CLAIM_K3,
      "SELECT key, member, keyargs, owner, expires, stale FROM calls ORDER BY rowid", 0, 0, 0 },
  { "resend", TABLE_RESEND CLAIM_K2 UNKNOWN_K2 AGED_K2,
      "UPDATE calls SET reconcile='resend', owner='w2' WHERE key=:k2 AND member=0", 0, 0, 0 },
  { "resend-stale", TABLE_RESEND CLAIM_K2 AGED_K2,
      "UPDATE calls SET reconcile='resend', owner='w2' WHERE key=:k2 AND member=0", 0, 0, 0 },
  { "resend-refused", TABLE_RESEND1 CLAIM_K2 UNKNOWN_K2 AGED_K2,
      "UPDATE calls SET reconcile='resend', owner='w2' WHERE key=:k2 AND member=0", 0, 0, 0 },
  { "resend-read", TABLE_RESEND CLAIM_K2 UNKNOWN_K2,
      "SELECT sends, honours_key, resend_at IS NOT NULL, reply FROM calls"
      " WHERE key=:k2", 0, 0, 0 },
  { "options", TABLE_RETAIN, "SELECT idem_options('calls')", 1, 0, 0 },
  { "options-open", TABLE_RETAIN,
      "SELECT idem_options('calls'), idem_options('calls','main')", 0, 0, 0 },
  { "parse-options", "",
      "SELECT idem_parse_options('t', 'retain=''30 days''', 'local_failure=keep',"
      " 'max_sends=7'), idem_limits(),"
      " idem_refusal('idem: t: key ''0123456789abcdef0123456789abcdef'' was"
      " already used with other arguments')", 0, 0, 0 },
  { "parse-options-error", "",
      "SELECT idem_parse_options('t', 'retain=1 day', 'color=blue')", 0, 0, 0 },
  { "statuses", "", "SELECT idem_statuses()", 0, 0, 0 },
  { "database-uri", "", "SELECT idem_database_uri('main'),"
      " idem_database_uri('temp')", 0, 0, 0 },
  { "versioned-equip", INV, "SELECT idem_versioned('inv','ver')", 0, 1, 0 },
  { "versioned-update", INV "SELECT idem_versioned('inv','ver');",
      "UPDATE inv SET qty=8, ver=0 WHERE sku='A'", 0, 0, 0 },
  { "versioned-conflict", INV "SELECT idem_versioned('inv','ver');",
      "UPDATE inv SET qty=1, ver=7 WHERE sku='B'", 0, 0, 0 },
  { "versioned-off", INV "SELECT idem_versioned('inv','ver');",
      "SELECT idem_versioned('inv','ver','off')", 0, 1, 0 },
};
#define N_OP ((int)(sizeof(aOp)/sizeof(aOp[0])))

/* ------------------------------------------------------------ the driver */
static char zDir[256];      /* Temporary directory */
static int bVerbose;

/* Where a run ended up. */
typedef struct Outcome Outcome;
struct Outcome {
  int rc;                   /* Result code of the operation */
  Buf out;                  /* Its rows and changes() */
  Buf err;                  /* Its error message */
};

/* What an operation leaves without faults, and what was there before. */
typedef struct Expect Expect;
struct Expect {
  Outcome ok;               /* The operation's result without faults */
  Buf dumpBefore;           /* Before it */
  Buf dumpBeforeTxn;        /* Before the transaction (transaction mode) */
  Buf dumpAfter;            /* After it */
  Outcome after;            /* Op.zAfter's result without faults */
};

static int openDb(const char *zFile, sqlite3 **pDb){
  int rc = sqlite3_open_v2(zFile, pDb,
      SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE|SQLITE_OPEN_URI, 0);
  return rc;
}

static void removeDb(const char *zFile){
  char z[300];
  if( strcmp(zFile, ":memory:")==0 ) return;
  unlink(zFile);
  snprintf(z, sizeof(z), "%s-journal", zFile); unlink(z);
  snprintf(z, sizeof(z), "%s-wal", zFile); unlink(z);
}

static int execOff(sqlite3 *db, const char *zSql){
  Buf b = {0, 0, 0};
  int rc = runSql(db, zSql, &b);
  if( rc ){
    fprintf(stderr, "oom.c: setup failed: %s\n  in: %s\n", sqlite3_errmsg(db), zSql);
    exit(2);
  }
  free(b.z);
  return rc;
}

/* Is this failure an out-of-memory failure? */
static int isOomError(int rc, const char *zErr){
  if( (rc & 0xff)==SQLITE_NOMEM ) return 1;
  return zErr && strstr(zErr, "out of memory")!=0;
}

typedef struct Stats Stats;
struct Stats {
  int nRun;                 /* Runs with at least one fault */
  int nFault;               /* Faults injected */
  int nNomem;               /* Runs that failed with SQLITE_NOMEM */
  int nOomMsg;              /* ... with another code, "out of memory" */
  int nOk;                  /* Runs that succeeded all the same */
  int nLost;                /* Same error code as without faults, but its
                            ** message was lost to the fault */
  int nTxnRollback;         /* Transaction mode: SQLite rolled it all back */
  int nLeftOpen;            /* Autocommit mode: left open (bMayStayOpen) */
  int nSame;                /* Persistent: the same run as the benign one */
  int nOther;               /* -x: ... that took another path all the same */
};

/*
** One run: set up, run (armed with iFail, bPersist unless iFail==0),
** check.  Returns the number of faults injected, or -1 if a check failed
** (it says why).
*/
static int oneRun(const Op *pOp, const char *zFile, int bTxn, int iFail,
                  int bPersist, Expect *pEx, Stats *pSt){
  sqlite3 *db = 0;
  Outcome o = {0, {0,0,0}, {0,0,0}};
  Buf dump = {0, 0, 0};
  sqlite3_int64 nOutstanding;
  int nFault = 0, bFail = 0, rc;
  char zWhere[200];

  snprintf(zWhere, sizeof(zWhere), "%s [%s, %s, %s, fault %d]", pOp->zName,
           strcmp(zFile, ":memory:")==0 ? ":memory:" : "file",
           bTxn ? "transaction" : "autocommit",
           bPersist ? "persistent" : "benign", iFail);
  removeDb(zFile);
  nOutstanding = oom.nOutstanding;

  if( openDb(zFile, &db) ){ fprintf(stderr, "oom.c: cannot open %s\n", zFile); exit(2); }
  execOff(db, "PRAGMA synchronous=OFF; CREATE TABLE log(x);");
  execOff(db, pOp->zSetup);
  if( pOp->bReopen ){
    sqlite3_close(db);
    db = 0;
  }
  if( iFail==0 && pEx ){
    if( db ) dumpDb(db, &pEx->dumpBeforeTxn);
  }
  if( bTxn && db ) execOff(db, "BEGIN; INSERT INTO log VALUES('in the transaction');");
  if( iFail==0 && pEx && db ) dumpDb(db, &pEx->dumpBefore);

  /* The operation. */
  if( iFail ) oomArm(iFail, bPersist);
  if( pOp->bReopen ){
    rc = openDb(zFile, &db);
    if( rc==SQLITE_OK ) rc = runSql(db, pOp->zRun, &o.out);
  }else{
    rc = runSql(db, pOp->zRun, &o.out);
  }
  o.rc = rc;
  if( rc ){
    const char *z = db ? sqlite3_errmsg(db) : "(no connection)";
    bufAppend(&o.err, z, strlen(z));
  }
  if( iFail ) nFault = oomDisarm();

  if( db==0 && !(pOp->bReopen && iFail && (rc&0xff)==SQLITE_NOMEM) ){
    fprintf(stderr, "! %s: sqlite3_open_v2() gave no connection\n", zWhere);
    return -1;
  }
  if( pOp->bReopen && rc!=SQLITE_OK ){
    /* The connection may not have come up: look from a new one. */
    sqlite3_close(db);
    openDb(zFile, &db);
  }

  /* In autocommit mode no transaction may be left open. */
  if( !bTxn && !sqlite3_get_autocommit(db) ){
    if( pOp->bMayStayOpen && bPersist && o.rc!=SQLITE_OK ){
      if( runSql(db, "ROLLBACK", &dump) ){
        fprintf(stderr, "! %s: ROLLBACK failed: %s\n", zWhere, sqlite3_errmsg(db));
        bFail = 1;
      }
      bufReset(&dump);
      pSt->nLeftOpen++;
    }else{
      fprintf(stderr, "! %s: the operation (rc=%d %s) left a transaction"
              " open\n", zWhere, o.rc, bufText(&o.err));
      bFail = 1;
    }
  }
  /* Close the transaction, if it is still open. */
  if( bTxn && !sqlite3_get_autocommit(db) ){
    if( runSql(db, "COMMIT", &dump) ){
      fprintf(stderr, "! %s: COMMIT after the operation failed: %s\n",
              zWhere, sqlite3_errmsg(db));
      bFail = 1;
    }
  }
  if( dumpDb(db, &dump) ){
    fprintf(stderr, "! %s: cannot read the database: %s\n", zWhere, sqlite3_errmsg(db));
    bFail = 1;
  }

  if( iFail==0 ){
    /* The reference run. */
    if( pEx ){
      free(pEx->ok.out.z);
      free(pEx->ok.err.z);
      pEx->ok = o;
      memset(&o, 0, sizeof(o));
      bufReset(&pEx->dumpAfter);
      bufAppend(&pEx->dumpAfter, bufText(&dump), dump.n);
      if( pOp->bReopen ){
        bufReset(&pEx->dumpBefore);
        bufAppend(&pEx->dumpBefore, bufText(&dump), dump.n);
        bufReset(&pEx->dumpBeforeTxn);
        bufAppend(&pEx->dumpBeforeTxn, bufText(&dump), dump.n);
      }
    }
  }else if( nFault>0 ){
    pSt->nRun++;
    pSt->nFault += nFault;
    if( o.rc==pEx->ok.rc && strcmp(bufText(&o.out), bufText(&pEx->ok.out))==0
     && strcmp(bufText(&o.err), bufText(&pEx->ok.err))==0 ){
      /* Same outcome as without faults. */
      pSt->nOk++;
      if( strcmp(bufText(&dump), bufText(&pEx->dumpAfter))!=0 ){
        fprintf(stderr, "! %s: succeeded, but the database differs from a"
                " run without faults:\n%s--- expected:\n%s", zWhere,
                bufText(&dump), bufText(&pEx->dumpAfter));
        bFail = 1;
      }
    }else if( o.rc!=SQLITE_OK && o.rc==pEx->ok.rc
           && strcmp(bufText(&o.err), sqlite3_errstr(o.rc))==0 ){
      /* The same verdict; SQLite could not copy the message. */
      pSt->nLost++;
      if( strcmp(bufText(&dump), bufText(&pEx->dumpAfter))!=0 ){
        fprintf(stderr, "! %s: failed as without faults, but the database"
                " differs:\n%s--- expected:\n%s", zWhere,
                bufText(&dump), bufText(&pEx->dumpAfter));
        bFail = 1;
      }
    }else if( o.rc!=SQLITE_OK && isOomError(o.rc, bufText(&o.err)) ){
      if( (o.rc & 0xff)==SQLITE_NOMEM ) pSt->nNomem++; else pSt->nOomMsg++;
      if( strcmp(bufText(&dump), bufText(&pEx->dumpBefore))==0 ){
        /* nothing happened */
      }else if( bTxn && strcmp(bufText(&dump), bufText(&pEx->dumpBeforeTxn))==0 ){
        pSt->nTxnRollback++;
      }else{
        fprintf(stderr, "! %s: failed (%s), but the database changed:\n%s"
                "--- expected:\n%s", zWhere, bufText(&o.err), bufText(&dump),
                bufText(&pEx->dumpBefore));
        bFail = 1;
      }
    }else{
      fprintf(stderr, "! %s: wrong outcome: rc=%d %s\n  rows: %s\n"
              "  expected: rc=%d %s\n  rows: %s\n", zWhere, o.rc,
              bufText(&o.err), bufText(&o.out), pEx->ok.rc,
              bufText(&pEx->ok.err), bufText(&pEx->ok.out));
      bFail = 1;
    }
  }

  /* What the connection does next is what it does after a run without
  ** faults (Op.zAfter): a check that failed must run again. */
  if( pOp->zAfter && !bFail ){
    Outcome a = {0, {0,0,0}, {0,0,0}};
    a.rc = runSql(db, pOp->zAfter, &a.out);
    if( a.rc ){
      const char *z = sqlite3_errmsg(db);
      bufAppend(&a.err, z, strlen(z));
    }
    if( iFail==0 ){
      if( pEx ){
        free(pEx->after.out.z);
        free(pEx->after.err.z);
        pEx->after = a;
        memset(&a, 0, sizeof(a));
      }
    }else if( pEx && (a.rc!=pEx->after.rc
           || strcmp(bufText(&a.out), bufText(&pEx->after.out))!=0
           || strcmp(bufText(&a.err), bufText(&pEx->after.err))!=0) ){
      fprintf(stderr, "! %s: after it, %s gave rc=%d %s\n  rows: %s\n"
              "  expected: rc=%d %s\n  rows: %s\n", zWhere, pOp->zAfter,
              a.rc, bufText(&a.err), bufText(&a.out), pEx->after.rc,
              bufText(&pEx->after.err), bufText(&pEx->after.out));
      bFail = 1;
    }
    free(a.out.z); free(a.err.z);
  }

  /* The file is sound. */
  bufReset(&dump);
  if( runSql(db, "PRAGMA integrity_check", &dump)
   || strcmp(bufText(&dump), "t:ok|\n")!=0 ){
    fprintf(stderr, "! %s: integrity_check: %s %s\n", zWhere, bufText(&dump),
            sqlite3_errmsg(db));
    bFail = 1;
  }
  if( sqlite3_close(db)!=SQLITE_OK ){
    fprintf(stderr, "! %s: sqlite3_close() failed: a statement was not"
            " finalized\n", zWhere);
    sqlite3_close_v2(db);
    bFail = 1;
  }
  if( oom.nOutstanding!=nOutstanding ){
    fprintf(stderr, "! %s: %lld allocations leaked\n", zWhere,
            oom.nOutstanding - nOutstanding);
    bFail = 1;
  }
  if( bVerbose && iFail ){
    printf("  %s: %d faults, rc=%d %s\n", zWhere, nFault, o.rc, bufText(&o.err));
  }
  free(o.out.z); free(o.err.z); free(dump.z);
  return bFail ? -1 : nFault;
}

/* A large document: nested, 100 members to sort, escapes, numbers that
** grow when printed. */
static char *makeDoc(void){
  Buf b = {0, 0, 0};
  int i;
  bufAppend(&b, "{", 1);
  for(i=99; i>=0; i--){
    char z[200];
    snprintf(z, sizeof(z), "%s\"k%02d\\u00e9\\n\":[1e20,%d.50,\"\\/\\\"\\u0001\","
             "{\"z\":{\"y\":[[[%d]]]},\"a\":null}]", i==99 ? "" : ",", i, i, i);
    bufAppend(&b, z, strlen(z));
  }
  {
    static const char zEnd[] = ",\"\\ud83d\\ude00\":true,\"\\ue000\":false}";
    bufAppend(&b, zEnd, strlen(zEnd));
  }
  return b.z;
}

int main(int argc, char **argv){
  sqlite3_mem_methods m;
  int nPass = 0, nFail = 0, i, iArg;
  int bQuick = 0;
  int bMemOnly = 0;
  int nStride = 1;
  enum { N_STRIDE = 8 };
  struct { const char *zOp; int n; } aStride[N_STRIDE]; /* -s OPERATION=STRIDE */
  int nOpStride = 0;
  int bCheckSame = 0;       /* -x */
  unsigned char *aLast = 0; /* aLast[N]: the benign run at fault N made no
                            ** allocation after it */
  int nLast = 0, nLastAlloc = 0;
  char zSame[80];
  const char *azFile[2];
  char zFile[300];
  sqlite3 *db;
  sqlite3_stmt *pStmt;

  for(iArg=1; iArg<argc && argv[iArg][0]=='-'; iArg++){
    if( strcmp(argv[iArg], "-v")==0 ) bVerbose = 1;
    else if( strcmp(argv[iArg], "-q")==0 ) bQuick = 1;
    else if( strcmp(argv[iArg], "-m")==0 ) bMemOnly = 1;
    else if( strcmp(argv[iArg], "-x")==0 ) bCheckSame = 1;
    else if( strcmp(argv[iArg], "-s")==0 && iArg+1<argc ){
      const char *z = argv[++iArg];
      const char *zEq = strchr(z, '=');
      int n = atoi(zEq ? zEq+1 : z);
      if( n<1 || (zEq && (zEq==z || nOpStride==N_STRIDE)) ){
        fprintf(stderr, "%s: -s %s: a stride of 1 or more, or OPERATION=STRIDE"
                " (at most %d)\n", argv[0], z, N_STRIDE);
        return 2;
      }
      if( zEq ){
        int k;
        for(k=0; k<N_OP && (strncmp(aOp[k].zName, z, zEq-z)!=0
                            || aOp[k].zName[zEq-z]!=0); k++){}
        if( k==N_OP ){
          fprintf(stderr, "%s: -s %s: no operation of that name\n", argv[0], z);
          return 2;
        }
        aStride[nOpStride].zOp = aOp[k].zName;
        aStride[nOpStride++].n = n;
      }else{
        nStride = n;
      }
    }
    else { fprintf(stderr, "usage: %s [-v] [-x] [-q | -m] [-s [OPERATION=]STRIDE ...] [OPERATION ...]\n", argv[0]); return 2; }
  }

  sqlite3_config(SQLITE_CONFIG_GETMALLOC, &memDefault);
  m.xMalloc = oomMalloc;   m.xFree = oomFree;     m.xRealloc = oomRealloc;
  m.xSize = oomSize;       m.xRoundup = oomRoundup;
  m.xInit = oomInit;       m.xShutdown = oomShutdown;
  m.pAppData = memDefault.pAppData;
  if( sqlite3_config(SQLITE_CONFIG_MALLOC, &m)!=SQLITE_OK ){
    fprintf(stderr, "oom.c: SQLITE_CONFIG_MALLOC failed\n");
    return 2;
  }
  sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);

  snprintf(zDir, sizeof(zDir), "%s/idem-oom-XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if( mkdtemp(zDir)==0 ){ perror("mkdtemp"); return 2; }
  snprintf(zFile, sizeof(zFile), "%s/oom.db", zDir);
  azFile[0] = zFile;
  azFile[1] = ":memory:";

  /* The keys the setups make, and the document. */
  zDoc = makeDoc();
  sqlite3_open(":memory:", &db);
  sqlite3_prepare_v2(db, "SELECT idem_key('alice','c1','send','{\"a\":1,\"b\":2}'),"
      " idem_key('alice','c1','charge','{\"amount\":5,\"cur\":\"EUR\"}')", -1, &pStmt, 0);
  if( sqlite3_step(pStmt)!=SQLITE_ROW ){ fprintf(stderr, "oom.c: no keys\n"); return 2; }
  memcpy(zK1, sqlite3_column_text(pStmt, 0), 33);
  memcpy(zK2, sqlite3_column_text(pStmt, 1), 33);
  sqlite3_finalize(pStmt);
  sqlite3_close(db);

  for(i=0; i<N_OP; i++){
    const Op *pOp = &aOp[i];
    int iFile, bTxn, bPersist, k, nStep = nStride;
    for(k=0; k<nOpStride; k++) if( aStride[k].zOp==pOp->zName ) nStep = aStride[k].n;
    if( iArg<argc ){
      int j, bWant = 0;
      for(j=iArg; j<argc; j++) if( strcmp(argv[j], pOp->zName)==0 ) bWant = 1;
      if( !bWant ) continue;
    }
    for(iFile=(bMemOnly ? 1 : 0); iFile<(bQuick ? 1 : 2); iFile++){
      for(bTxn=0; bTxn<2; bTxn++){
        Expect ex;
        if( pOp->bReopen && (bTxn || iFile==1) ) continue;  /* not meaningful */
        memset(&ex, 0, sizeof(ex));
        /* The run without faults, twice: the second one's allocations set
        ** the baseline of anything SQLite allocates once per process. */
        if( oneRun(pOp, azFile[iFile], bTxn, 0, 0, &ex, 0)<0
         || oneRun(pOp, azFile[iFile], bTxn, 0, 0, &ex, 0)<0 ){
          nFail++;
          continue;
        }
        nLast = 0;
        for(bPersist=0; bPersist<2; bPersist++){
          Stats st;
          int iFail, nFault, bOk = 1;
          char zStep[60] = "";
          memset(&st, 0, sizeof(st));
          if( nStep>1 ){
            snprintf(zStep, sizeof(zStep), "; faults at 1, %d, %d, ... only (-s)",
                     1+nStep, 1+2*nStep);
          }
          for(iFail=1; ; iFail+=nStep){
            /* A benign fault after which the operation asked for no more
            ** memory: failing every allocation from it on is the same run,
            ** allocation for allocation (the driver is deterministic), so
            ** it is not run again (-x runs it, and checks that it is). */
            int bSame = bPersist && iFail<nLast && aLast[iFail];
            if( bSame && !bCheckSame ){
              st.nSame++;
              continue;
            }
            nFault = oneRun(pOp, azFile[iFile], bTxn, iFail, bPersist, &ex, &st);
            if( nFault<0 ){ bOk = 0; break; }
            if( bSame ){
              st.nSame++;
              if( nFault!=1 || oom.nCallArmed!=iFail ){
                /* Not an error: the same fault point, another path (the
                ** operation does not repeat itself exactly: see above) */
                printf("  %s: persistent fault %d: %d faults, %d allocations,"
                       " where its benign run made no more (another path)\n",
                       pOp->zName, iFail, nFault, oom.nCallArmed);
                st.nOther++;
              }
            }
            if( !bPersist ){
              if( iFail>=nLastAlloc ){
                nLastAlloc = 2*iFail + 64;
                aLast = realloc(aLast, nLastAlloc);
                if( aLast==0 ){ fprintf(stderr, "oom.c: out of real memory\n"); exit(2); }
              }
              while( nLast<=iFail ) aLast[nLast++] = 0;
              aLast[iFail] = (nFault==1 && oom.nCallArmed==iFail);
            }
            if( nFault==0 ) break;
            if( iFail>100000 ){
              fprintf(stderr, "! %s: no end after %d faults\n", pOp->zName, iFail);
              bOk = 0;
              break;
            }
          }
          if( st.nSame ){
            snprintf(zSame, sizeof(zSame), "; %d the same as benign, %s",
                     st.nSame, !bCheckSame ? "not run again" :
                     st.nOther ? "run (-x): some took another path" : "run (-x)");
          }else{
            zSame[0] = 0;
          }
          printf("%-18s %-8s %-11s %-10s %4d runs, %5d faults injected:"
                 " %d SQLITE_NOMEM, %d \"out of memory\", %d message lost,"
                 " %d ok, %d transactions rolled back%s%s%s\n",
                 pOp->zName, iFile ? ":memory:" : "file",
                 bTxn ? "transaction" : "autocommit",
                 bPersist ? "persistent" : "benign", st.nRun, st.nFault,
                 st.nNomem, st.nOomMsg, st.nLost, st.nOk, st.nTxnRollback,
                 st.nLeftOpen ? ", some left open and rolled back" : "",
                 zStep, zSame);
          if( bOk ) nPass++; else nFail++;
          fflush(stdout);
        }
        free(ex.ok.out.z); free(ex.ok.err.z); free(ex.dumpBefore.z);
        free(ex.dumpBeforeTxn.z); free(ex.dumpAfter.z);
        free(ex.after.out.z); free(ex.after.err.z);
      }
    }
  }

  removeDb(zFile);
  rmdir(zDir);
  free(zDoc);
  free(aLast);
  printf("%d passed, %d failed\n", nPass, nFail);
  fflush(stdout);
  return nFail ? 1 : 0;
}

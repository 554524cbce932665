/* SPDX-License-Identifier: MIT */
/*
** bench.c -- idem against the baselines a user would pick (make bench).
**
**   bench [options]     prints one table: figure, idem, baseline, ratio,
**                       target, PASS/MISS, and the ratio of CPU times
**
**   --lib PATH          the extension to load (default build/idem)
**   --docs N            documents (default 20000)
**   --claims N          claims per run (default 100000)
**   --info N            calls for the figures shown for information
**                       (record, SELECT *, reply, join; default 5000)
**   --auto N            autocommit claims per run (default 10000)
**   --runs N            runs; each time is the median (default 5)
**   --scale N           the large table of the scale figure (default
**                       1000000; 0 skips it; make bench-long: 10000000)
**   --small N           the small table of the scale figure (default 10000)
**   --batch N           claims per transaction at scale (default 10000)
**   --auto-batch N      autocommit claims at scale (default 2000)
**   --tables LIST       claim tables, of idem,hand,canon,rowid (default
**                       idem,hand; the others are shown for information)
**   --scale-table T     the table of the scale figure (default idem; a
**                       baseline's own scaling, for comparison)
**   --pragma 'N=V'      a PRAGMA for every database (default none)
**   --dir DIR           where the databases go (default a fresh /tmp dir)
**   --only LIST         figures, of key,key-bound,canonical,
**                       canonical-bound,calls,auto,scale (default all)
**   --write-docs FILE   write the documents into an SQLite file (table
**                       docs: i, who, conv, tool, args) and stop; for
**                       bench_py.py
**   --docs-file FILE    take the documents from such a file instead (the
**                       first --docs of them): another corpus
**                       (shapes.py --write-corpora writes three)
**
** It loads the extension as a user does (sqlite3_load_extension), against
** the system's libsqlite3, so it measures what users load.
**
** MEASURING.  Each figure is idem against its baseline in the same run,
** the two alternating (idem first in even runs, the baseline first in odd
** ones) so that a noisy neighbour hits both.  The times shown are the
** medians of the runs; the ratio is the median of the runs' ratios.  The
** wall clock decides PASS/MISS; the CPU time of the process (user +
** system) is shown beside it, as a check on a busy machine.  For a
** measure that no neighbour disturbs, test/bench/callgrind.sh counts
** instructions.  The subject's and the baseline's work go through
** distinct functions (measureSubject/measureBaseline, timeClaims,
** timeReplay, ...) so that a profile tells them apart.
**
** THE BASELINES
**
**   json()    SQLite's own json() over the same rows: parse and minify,
**             what an application pays to check its JSON.
**
**   hand      the claim table a user would write instead of idem:
**
**     CREATE TABLE calls(key TEXT PRIMARY KEY, member INTEGER NOT NULL,
**       who, conv, tool, args TEXT, kind TEXT, status TEXT, id, result,
**       note TEXT, created TEXT, updated TEXT) WITHOUT ROWID;
**     INSERT OR IGNORE INTO calls(key, member, who, conv, tool, args, kind,
**       status, created, updated) VALUES(idem_key(?1,?2,?3,?4), 0, ?1,
**       ?2, ?3, ?4, 'external', 'pending', <now>, <now>);
**
**     The claims are external on both sides: they are committed pending
**     and recorded later, as only an external claim may be (a local claim
**     never commits pending, doc/contract.md §4).
**
**     It stores args AS GIVEN.  The issue asks for nothing but idem_key()
**     for the key, and storing the text as it came is the cheapest thing a
**     user can do (one parse per claim; storing it canonical costs a
**     second one), so it is the hardest baseline and the judged one.  The
**     same table with args stored canonical (idem_canonical(?4), exactly
**     the bytes idem stores) is --tables canon, and a rowid table with a
**     UNIQUE key is --tables rowid; both are shown for information.  No
**     hand table has an index on created (nor has idem's since format 4:
**     created kept in rowid order, doc/contract.md §7).  <now> is strftime('%Y-%m-%d %H:%M:%f','now'), idem's form.
**
**   Claims and replay lookups are statements prepared once and stepped
**   with bound parameters, as an application does; lookups go in a fixed
**   shuffled order and each must find its row.  Bytes per claim are
**   page_count * page_size / claims of a database holding nothing else,
**   not vacuumed (as an application's database is).
**
** THE DOCUMENTS are docgen.c's: 0.2-2 KB of realistic tool-call arguments
** from a fixed seed.  Claims cycle through them with distinct (who, conv),
** so that every claim is a new call.
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "docgen.c"

/* ------------------------------------------------------------ settings */
static const char *zLib = "build/idem";
static int nDocs = 20000;
static int nClaims = 100000;
static int nAuto = 10000;
static int nRuns = 5;
static long nScale = 1000000;
static long nSmall = 10000;
static int nBatch = 10000;              /* claims per scale measurement */
static char zDir[512];
static int bOwnDir = 0;
static const char *zOnly = 0;
static const char *zPragma = 0;         /* --pragma: for every database */

static Doc *aDoc;
static const char *zDocsFile = 0;       /* --docs-file */

/* The first n documents of the file zFile (table docs, as --write-docs
** writes it); n is lowered to the number there is. */
static Doc *readDocs(const char *zFile, int *pn){
  sqlite3 *db = 0;
  sqlite3_stmt *p = 0;
  Doc *a = calloc(*pn, sizeof(Doc));
  int i = 0;
  if( sqlite3_open_v2(zFile, &db, SQLITE_OPEN_READONLY, 0)!=SQLITE_OK
   || sqlite3_prepare_v2(db, "SELECT who, conv, tool, args FROM docs"
                             " ORDER BY i LIMIT ?1", -1, &p, 0)!=SQLITE_OK ){
    fprintf(stderr, "bench: %s: %s\n", zFile, sqlite3_errmsg(db));
    exit(1);
  }
  sqlite3_bind_int(p, 1, *pn);
  while( sqlite3_step(p)==SQLITE_ROW ){
    a[i].zWho = strdup((const char*)sqlite3_column_text(p, 0));
    a[i].zConv = strdup((const char*)sqlite3_column_text(p, 1));
    a[i].zTool = strdup((const char*)sqlite3_column_text(p, 2));
    a[i].zArgs = strdup((const char*)sqlite3_column_text(p, 3));
    a[i].nArgs = sqlite3_column_bytes(p, 3);
    i++;
  }
  sqlite3_finalize(p);
  sqlite3_close(db);
  if( i<8 ){
    fprintf(stderr, "bench: %s: %d documents\n", zFile, i);
    exit(1);
  }
  *pn = i;
  return a;
}

/* --------------------------------------------------------------- timing */

/* Every measurement takes two clocks: the wall clock, which the table
** shows, and the process's CPU time (user + system), which a busy machine
** disturbs less; the last column shows the ratio of the CPU times. */
typedef struct Clock Clock;
struct Clock { double rWall, rCpu; };
static double gCpu;             /* CPU time of the last measurement */
static Clock clockNow(void){
  struct timespec t;
  Clock c;
  clock_gettime(CLOCK_MONOTONIC, &t);
  c.rWall = t.tv_sec + t.tv_nsec*1e-9;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  c.rCpu = t.tv_sec + t.tv_nsec*1e-9;
  return c;
}
/* The wall time since t0; the CPU time goes to gCpu. */
static double elapsed(Clock t0){
  Clock t1 = clockNow();
  gCpu = t1.rCpu - t0.rCpu;
  return t1.rWall - t0.rWall;
}
static int cmpDouble(const void *a, const void *b){
  double x = *(const double*)a, y = *(const double*)b;
  return x<y ? -1 : x>y;
}
static double median(double *a, int n){
  double t[64];
  if( n>64 ) n = 64;
  memcpy(t, a, n*sizeof(double));
  qsort(t, n, sizeof(double), cmpDouble);
  return n%2 ? t[n/2] : (t[n/2-1]+t[n/2])/2;
}

/* At exit, even after an error: remove the databases and the directory
** that bench made (not a --dir given by the user). */
static void cleanup(void){
  DIR *d;
  struct dirent *e;
  if( !bOwnDir || (d = opendir(zDir))==0 ) return;
  while( (e = readdir(d))!=0 ){
    char z[1024];
    if( e->d_name[0]=='.' ) continue;
    snprintf(z, sizeof(z), "%s/%s", zDir, e->d_name);
    unlink(z);
  }
  closedir(d);
  rmdir(zDir);
}

/* --------------------------------------------------------------- sqlite */
static void die(sqlite3 *db, const char *zWhat){
  fprintf(stderr, "bench: %s: %s\n", zWhat, db ? sqlite3_errmsg(db) : "");
  exit(1);
}
static void exec(sqlite3 *db, const char *zSql){
  char *zErr = 0;
  if( sqlite3_exec(db, zSql, 0, 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "bench: %s\n  in: %s\n", zErr, zSql);
    exit(1);
  }
}
static sqlite3_stmt *prep(sqlite3 *db, const char *zSql){
  sqlite3_stmt *p = 0;
  if( sqlite3_prepare_v3(db, zSql, -1, SQLITE_PREPARE_PERSISTENT, &p, 0) ){
    fprintf(stderr, "bench: %s\n  in: %s\n", sqlite3_errmsg(db), zSql);
    exit(1);
  }
  return p;
}
static sqlite3_int64 one(sqlite3 *db, const char *zSql){
  sqlite3_stmt *p = prep(db, zSql);
  sqlite3_int64 v = 0;
  if( sqlite3_step(p)==SQLITE_ROW ) v = sqlite3_column_int64(p, 0);
  sqlite3_finalize(p);
  return v;
}
static sqlite3 *openDb(const char *zFile){
  sqlite3 *db = 0;
  char *zErr = 0;
  if( sqlite3_open(zFile, &db)!=SQLITE_OK ) die(db, zFile);
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, zLib, 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "bench: cannot load %s: %s\n", zLib, zErr);
    exit(1);
  }
  sqlite3_enable_load_extension(db, 0);
  if( zPragma ){
    char *zSql = sqlite3_mprintf("PRAGMA %s", zPragma);
    exec(db, zSql);
    sqlite3_free(zSql);
  }
  return db;
}
static void dbPath(char *z, int n, const char *zName){
  snprintf(z, n, "%s/%s", zDir, zName);
}
static void removeDb(const char *zFile){
  char z[600];
  unlink(zFile);
  snprintf(z, sizeof(z), "%s-journal", zFile); unlink(z);
  snprintf(z, sizeof(z), "%s-wal", zFile); unlink(z);
  snprintf(z, sizeof(z), "%s-shm", zFile); unlink(z);
}

/* --------------------------------------------------------------- table */
/* The runs of one side of a figure: wall and CPU time (or bytes) by run. */
typedef struct Series Series;
struct Series {
  double aWall[64];
  double aCpu[64];
};
/* Record run r of a series: the wall time w, and gCpu. */
static void put(Series *p, int r, double w){
  p->aWall[r] = w;
  p->aCpu[r] = gCpu;
}

typedef struct Row Row;
struct Row {
  const char *zName;        /* figure */
  const char *zUnit;        /* "s" or "B" */
  double rSubject, rBase;   /* medians of the wall times (or bytes) */
  double rRatio;            /* median of the runs' ratios */
  double rCpuRatio;         /* the same with CPU times */
  double rTarget;           /* the ratio's target */
  int bJudged;              /* 0: shown for information */
};
static Row aRow[64];
static int nRow = 0;

/* Add a row for subject pS against baseline pB over nRuns runs. */
static void addRow(const char *zName, const char *zUnit, Series *pS,
                   Series *pB, double rTarget, int bJudged){
  Row *r = &aRow[nRow++];
  double aW[64], aC[64];
  int i;
  for(i=0; i<nRuns; i++){
    aW[i] = pS->aWall[i] / pB->aWall[i];
    aC[i] = pS->aCpu[i] / pB->aCpu[i];
  }
  r->zName = zName;
  r->zUnit = zUnit;
  r->rSubject = median(pS->aWall, nRuns);
  r->rBase = median(pB->aWall, nRuns);
  r->rRatio = median(aW, nRuns);
  r->rCpuRatio = median(aC, nRuns);
  r->rTarget = rTarget;
  r->bJudged = bJudged;
  fprintf(stderr, "  %-60s %.3fx (cpu %.3fx)\n", zName, r->rRatio, r->rCpuRatio);
}

static void fmtValue(char *z, int n, double v, const char *zUnit){
  if( zUnit[0]=='B' ) snprintf(z, n, "%.0f B", v);
  else if( v>=1.0 ) snprintf(z, n, "%.2f s", v);
  else if( v>=1e-3 ) snprintf(z, n, "%.1f ms", v*1e3);
  else snprintf(z, n, "%.1f us", v*1e6);
}

static void printTable(void){
  int i;
  printf("| figure | idem | baseline | ratio | target | | CPU ratio |\n");
  printf("|---|---:|---:|---:|---:|---|---:|\n");
  for(i=0; i<nRow; i++){
    Row *r = &aRow[i];
    char zS[32], zB[32], zT[32], zC[32];
    const char *zVerdict = "";
    fmtValue(zS, sizeof(zS), r->rSubject, r->zUnit);
    fmtValue(zB, sizeof(zB), r->rBase, r->zUnit);
    zT[0] = 0;
    if( r->bJudged ){
      snprintf(zT, sizeof(zT), "<= %.1fx", r->rTarget);
      zVerdict = r->rRatio<=r->rTarget ? "PASS" : "MISS";
    }
    if( r->zUnit[0]=='B' ) zC[0] = 0;
    else snprintf(zC, sizeof(zC), "%.2fx", r->rCpuRatio);
    printf("| %s | %s | %s | %.2fx | %s | %s | %s |\n",
           r->zName, zS, zB, r->rRatio, zT, zVerdict, zC);
  }
  fflush(stdout);
}

/* ------------------------------------------------------------- the docs */
static void loadDocs(sqlite3 *db){
  sqlite3_stmt *p;
  int i;
  exec(db, "CREATE TABLE docs(i INTEGER PRIMARY KEY, who TEXT, conv TEXT,"
           " tool TEXT, args TEXT)");
  exec(db, "BEGIN");
  p = prep(db, "INSERT INTO docs VALUES(?1,?2,?3,?4,?5)");
  for(i=0; i<nDocs; i++){
    sqlite3_bind_int(p, 1, i);
    sqlite3_bind_text(p, 2, aDoc[i].zWho, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 3, aDoc[i].zConv, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 4, aDoc[i].zTool, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 5, aDoc[i].zArgs, aDoc[i].nArgs, SQLITE_STATIC);
    if( sqlite3_step(p)!=SQLITE_DONE ) die(db, "docs");
    sqlite3_reset(p);
  }
  sqlite3_finalize(p);
  exec(db, "COMMIT");
}

/* Step a statement to its end; the bytes of column 0 are read, so that
** nothing is left unevaluated.  Returns the time taken. */
static double timeScan(sqlite3_stmt *p){
  Clock t0 = clockNow();
  sqlite3_int64 n = 0;
  int rc;
  while( (rc = sqlite3_step(p))==SQLITE_ROW ) n += sqlite3_column_bytes(p, 0);
  if( rc!=SQLITE_DONE ) die(sqlite3_db_handle(p), sqlite3_sql(p));
  sqlite3_reset(p);
  if( n==0 ) die(0, "empty scan");
  return elapsed(t0);
}

/* The same, one statement per document with the document bound. */
static double timeBound(sqlite3_stmt *p, int nArg){
  Clock t0 = clockNow();
  int i;
  for(i=0; i<nDocs; i++){
    if( nArg==4 ){
      sqlite3_bind_text(p, 1, aDoc[i].zWho, -1, SQLITE_STATIC);
      sqlite3_bind_text(p, 2, aDoc[i].zConv, -1, SQLITE_STATIC);
      sqlite3_bind_text(p, 3, aDoc[i].zTool, -1, SQLITE_STATIC);
    }
    sqlite3_bind_text(p, nArg, aDoc[i].zArgs, aDoc[i].nArgs, SQLITE_STATIC);
    if( sqlite3_step(p)!=SQLITE_ROW ) die(sqlite3_db_handle(p), sqlite3_sql(p));
    if( sqlite3_column_bytes(p, 0)==0 ) die(0, "empty result");
    sqlite3_reset(p);
  }
  return elapsed(t0);
}

/* The subject's and the baseline's measurements go through these two, so
** that a profile tells them apart (callgrind: inclusive cost of each;
** test/bench/callgrind.sh). */
typedef struct Work Work;
struct Work {
  sqlite3_stmt *pStmt;      /* a scan or a bound statement */
  int bBound, nArg;
};
static double __attribute__((noinline)) runWork(Work *w){
  return w->bBound ? timeBound(w->pStmt, w->nArg) : timeScan(w->pStmt);
}
static int nSubject, nBaseline;   /* (so that the compiler keeps two functions) */
static double __attribute__((noinline)) measureSubject(Work *w){
  nSubject++;
  return runWork(w);
}
static double __attribute__((noinline)) measureBaseline(Work *w){
  nBaseline++;
  return runWork(w);
}

/* Subject and baseline statements, timed in alternation. */
static void figureScan(sqlite3 *db, const char *zName, const char *zS,
                       const char *zB, int bBound, int nArg, int bJudged){
  Work s, b;
  Series S, B;
  int r;
  s.pStmt = prep(db, zS); s.bBound = bBound; s.nArg = nArg;
  b.pStmt = prep(db, zB); b.bBound = bBound; b.nArg = 1;
  runWork(&s);              /* one warm-up of each */
  runWork(&b);
  for(r=0; r<nRuns; r++){
    if( r%2==0 ){
      put(&S, r, measureSubject(&s));
      put(&B, r, measureBaseline(&b));
    }else{
      put(&B, r, measureBaseline(&b));
      put(&S, r, measureSubject(&s));
    }
  }
  sqlite3_finalize(s.pStmt);
  sqlite3_finalize(b.pStmt);
  addRow(zName, "s", &S, &B, 1.0, bJudged);
}

static int want(const char *z);
static void figuresFunctions(void){
  sqlite3 *db = openDb(":memory:");
  loadDocs(db);
  if( want("key") ){
    figureScan(db, "`idem_key` over the docs (a scan) / `json()`",
        "SELECT idem_key(who, conv, tool, args) FROM docs",
        "SELECT json(args) FROM docs", 0, 4, 1);
  }
  if( want("key-bound") ){
    figureScan(db, "`idem_key(?,?,?,?)` bound, one doc per step / `json(?)`",
        "SELECT idem_key(?1, ?2, ?3, ?4)", "SELECT json(?1)", 1, 4, 0);
  }
  if( want("canonical") ){
    figureScan(db, "`idem_canonical` over the docs (a scan) / `json()`",
        "SELECT idem_canonical(args) FROM docs",
        "SELECT json(args) FROM docs", 0, 1, 1);
  }
  if( want("canonical-bound") ){
    figureScan(db, "`idem_canonical(?)` bound, one doc per step / `json(?)`",
        "SELECT idem_canonical(?1)", "SELECT json(?1)", 1, 1, 0);
  }
  sqlite3_close(db);
}

/* ------------------------------------------------------------- the calls */

/* Claim i: a document, and a (who, conv) that no other claim has. */
static void callParts(long i, char *zWho, char *zConv, const Doc **ppDoc){
  const Doc *d = &aDoc[i % nDocs];
  snprintf(zWho, 32, "%s", d->zWho);
  snprintf(zConv, 48, "conv-%ld-%ld", i/8, i%nDocs);
  *ppDoc = d;
}

/* The hex keys of claims 0..n-1, computed by idem_key() (untimed). */
static char (*aKey)[33];
static void computeKeys(long n){
  sqlite3 *db = openDb(":memory:");
  sqlite3_stmt *p = prep(db, "SELECT idem_key(?1, ?2, ?3, ?4)");
  long i;
  aKey = malloc(n * sizeof(aKey[0]));
  for(i=0; i<n; i++){
    char zWho[32], zConv[48];
    const Doc *d;
    callParts(i, zWho, zConv, &d);
    sqlite3_bind_text(p, 1, zWho, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 2, zConv, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 3, d->zTool, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 4, d->zArgs, d->nArgs, SQLITE_STATIC);
    if( sqlite3_step(p)!=SQLITE_ROW ) die(db, "idem_key");
    memcpy(aKey[i], sqlite3_column_text(p, 0), 33);
    sqlite3_reset(p);
  }
  sqlite3_finalize(p);
  sqlite3_close(db);
}

/* The claim tables.  T_IDEM is the subject, T_HAND the judged baseline;
** the others are shown for information (--tables). */
#define T_IDEM   0      /* CREATE VIRTUAL TABLE calls USING idem */
#define T_HAND   1      /* the hand-made table, args as given */
#define T_CANON  2      /* the same, args stored canonical */
#define T_ROWID  3      /* a rowid table with a UNIQUE key, args as given */
#define T_N      4
static const char *const azTable[T_N] = { "idem", "hand", "canon", "rowid" };
static const char *const azTableDesc[T_N] = {
  "idem", "hand", "hand, args stored canonical", "hand as a rowid table"
};
static int aUse[T_N] = { 1, 1, 0, 0 };

#define HAND_COLS \
  " member INTEGER NOT NULL, who, conv, tool, args TEXT, kind TEXT," \
  " status TEXT, id, result, note TEXT, created TEXT, updated TEXT"
#define NOW "strftime('%Y-%m-%d %H:%M:%f','now')"

/* bNormal: the table is also used under synchronous=NORMAL in WAL mode,
** where an external claim is refused unless the table says
** durability=relaxed (doc/contract.md §12); the baselines are as durable
** as that, so the figure compares like with like. */
static void createTable(sqlite3 *db, int eTable, int bNormal){
  switch( eTable ){
    case T_IDEM:
      exec(db, bNormal ? "CREATE VIRTUAL TABLE calls USING idem(durability=relaxed)"
                       : "CREATE VIRTUAL TABLE calls USING idem");
      break;
    case T_ROWID:
      exec(db, "CREATE TABLE calls(rid INTEGER PRIMARY KEY,"
               " key TEXT NOT NULL UNIQUE," HAND_COLS ")");
      break;
    default:
      exec(db, "CREATE TABLE calls(key TEXT PRIMARY KEY," HAND_COLS
               ") WITHOUT ROWID");
      break;
  }
}

static const char *claimSql(int eTable){
  switch( eTable ){
    case T_IDEM:
      return "INSERT OR IGNORE INTO calls(who, conv, tool, args, kind)"
             " VALUES(?1, ?2, ?3, ?4, 'external')";
    case T_CANON:
      return "INSERT OR IGNORE INTO calls(key, member, who, conv, tool, args,"
             " kind, status, created, updated) VALUES(idem_key(?1,?2,?3,?4),"
             " 0, ?1, ?2, ?3, idem_canonical(?4), 'external', 'pending', "
             NOW ", " NOW ")";
    default:
      return "INSERT OR IGNORE INTO calls(key, member, who, conv, tool, args,"
             " kind, status, created, updated) VALUES(idem_key(?1,?2,?3,?4),"
             " 0, ?1, ?2, ?3, ?4, 'external', 'pending', " NOW ", " NOW ")";
  }
}

/* Claims iFirst..iFirst+n-1: one transaction (bTxn) or autocommit. */
static double __attribute__((noinline)) timeClaims(
  sqlite3 *db, int eTable, long iFirst, long n, int bTxn
){
  sqlite3_stmt *p = prep(db, claimSql(eTable));
  Clock t0 = clockNow();
  long i;
  if( bTxn ) exec(db, "BEGIN");
  for(i=iFirst; i<iFirst+n; i++){
    char zWho[32], zConv[48];
    const Doc *d;
    callParts(i, zWho, zConv, &d);
    sqlite3_bind_text(p, 1, zWho, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 2, zConv, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 3, d->zTool, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 4, d->zArgs, d->nArgs, SQLITE_STATIC);
    if( sqlite3_step(p)!=SQLITE_DONE ) die(db, "claim");
    if( sqlite3_changes(db)!=1 ) die(0, "a claim that did not win");
    sqlite3_reset(p);
  }
  if( bTxn ) exec(db, "COMMIT");
  sqlite3_finalize(p);
  return elapsed(t0);
}

/* Record the outcome of claims 0..n-1: done, an id, a small result. */
static double __attribute__((noinline)) timeRecord(sqlite3 *db, int eTable, long n){
  sqlite3_stmt *p = prep(db, eTable==T_IDEM
      ? "UPDATE calls SET status = 'done', id = ?2, result = ?3"
        " WHERE key = ?1 AND member = 0"
      : "UPDATE calls SET status = 'done', id = ?2, result = ?3,"
        " updated = " NOW " WHERE key = ?1");
  Clock t0 = clockNow();
  long i;
  exec(db, "BEGIN");
  for(i=0; i<n; i++){
    char zRes[64];
    snprintf(zRes, sizeof(zRes), "{\"order\":%ld,\"ok\":true}", 100000+i);
    sqlite3_bind_text(p, 1, aKey[i], 32, SQLITE_STATIC);
    sqlite3_bind_int64(p, 2, 100000+i);
    sqlite3_bind_text(p, 3, zRes, -1, SQLITE_TRANSIENT);
    if( sqlite3_step(p)!=SQLITE_DONE ) die(db, "record");
    if( sqlite3_changes(db)!=1 ) die(0, "record changed no row");
    sqlite3_reset(p);
  }
  exec(db, "COMMIT");
  sqlite3_finalize(p);
  return elapsed(t0);
}

/* A fixed shuffled order of the claims, for lookups. */
static long *aOrder;
static void makeOrder(long n){
  long i;
  uint64_t s = gSeed;
  gSeed = 0x5eed0fULL;
  aOrder = malloc(n*sizeof(long));
  for(i=0; i<n; i++) aOrder[i] = i;
  for(i=n-1; i>0; i--){
    long j = (long)(rnd64() % (uint64_t)(i+1));
    long t = aOrder[i]; aOrder[i] = aOrder[j]; aOrder[j] = t;
  }
  gSeed = s;
}

/* n lookups by key (the first n of aOrder), one prepared statement stepped
** in autocommit, each expected to find its row; every column is read. */
static double __attribute__((noinline)) timeLookups(
  sqlite3 *db, const char *zSql, long n
){
  sqlite3_stmt *p = prep(db, zSql);
  Clock t0 = clockNow();
  long i;
  sqlite3_int64 nByte = 0;
  for(i=0; i<n; i++){
    int c;
    sqlite3_bind_text(p, 1, aKey[aOrder[i]], 32, SQLITE_STATIC);
    if( sqlite3_step(p)!=SQLITE_ROW ) die(db, "lookup found nothing");
    for(c=0; c<sqlite3_column_count(p); c++) nByte += sqlite3_column_bytes(p, c);
    sqlite3_reset(p);
  }
  sqlite3_finalize(p);
  if( nByte==0 ) die(0, "lookup");
  return elapsed(t0);
}

/* The judged replay: n lookups of status, id, result (its own function,
** so that a profile shows it apart from the other lookups). */
static double __attribute__((noinline)) timeReplay(sqlite3 *db, int eTable, long n){
  return timeLookups(db, eTable==T_IDEM
      ? "SELECT status, id, result FROM calls WHERE key = ?1 AND member = 0"
      : "SELECT status, id, result FROM calls WHERE key = ?1", n);
}

/* The lookups as one join from a table of n keys. */
static double __attribute__((noinline)) timeJoin(
  sqlite3 *db, const char *zSql, long n
){
  sqlite3_stmt *p = prep(db, zSql);
  Clock t0 = clockNow();
  sqlite3_int64 nFound;
  if( sqlite3_step(p)!=SQLITE_ROW ) die(db, "join");
  nFound = sqlite3_column_int64(p, 0);
  sqlite3_finalize(p);
  if( nFound!=n ){
    fprintf(stderr, "bench: join found %lld of %ld\n", (long long)nFound, n);
    exit(1);
  }
  return elapsed(t0);
}

static void loadKeyTable(sqlite3 *db, long n){
  sqlite3_stmt *p;
  long i;
  exec(db, "CREATE TEMP TABLE lk(i INTEGER PRIMARY KEY, key TEXT)");
  exec(db, "BEGIN");
  p = prep(db, "INSERT INTO lk VALUES(?1, ?2)");
  for(i=0; i<n; i++){
    sqlite3_bind_int64(p, 1, i);
    sqlite3_bind_text(p, 2, aKey[aOrder[i]], 32, SQLITE_STATIC);
    if( sqlite3_step(p)!=SQLITE_DONE ) die(db, "lk");
    sqlite3_reset(p);
  }
  sqlite3_finalize(p);
  exec(db, "COMMIT");
}

/* What one run measures on one table. */
#define M_CLAIM     0     /* nClaims claims, one transaction */
#define M_REPLAY    1     /* nClaims lookups: SELECT status, id, result */
#define M_BYTES     2     /* page_count * page_size / nClaims */
#define M_RECORD    3     /* nInfo UPDATEs to done, one transaction */
#define M_REPLAYALL 4     /* nInfo lookups: SELECT * */
#define M_REPLY     5     /* nInfo replies: reply / json_object() */
#define M_JOIN      6     /* nInfo lookups as one join */
#define M_N         7
static int nInfo = 5000;

/* One run on one table.  The claims, the replay and the size are the
** judged figures; the record, SELECT *, reply and join (on nInfo calls,
** after the record) are shown for information. */
static void runCalls(int eTable, int iRun, Series *a){
  char zFile[600], zName[64];
  sqlite3 *db;
  snprintf(zName, sizeof(zName), "calls-%s-%d.db", azTable[eTable], iRun);
  dbPath(zFile, sizeof(zFile), zName);
  removeDb(zFile);
  db = openDb(zFile);
  createTable(db, eTable, 0);
  put(&a[M_CLAIM], iRun, timeClaims(db, eTable, 0, nClaims, 1));
  put(&a[M_REPLAY], iRun, timeReplay(db, eTable, nClaims));
  gCpu = (double)one(db, "PRAGMA page_count")
       * (double)one(db, "PRAGMA page_size") / nClaims;
  put(&a[M_BYTES], iRun, gCpu);
  put(&a[M_RECORD], iRun, timeRecord(db, eTable, nInfo));
  put(&a[M_REPLAYALL], iRun,
      timeLookups(db, "SELECT * FROM calls WHERE key = ?1", nInfo));
  put(&a[M_REPLY], iRun, timeLookups(db, eTable==T_IDEM
      ? "SELECT reply FROM calls WHERE key = ?1 AND member = 0"
      : "SELECT json_object('id', id, 'idempotent', json('true'),"
        " 'result', json(result), 'status', status)"
        " FROM calls WHERE key = ?1", nInfo));
  loadKeyTable(db, nInfo);
  put(&a[M_JOIN], iRun, timeJoin(db, eTable==T_IDEM
      ? "SELECT count(c.status) FROM lk, calls c"
        " WHERE c.key = lk.key AND c.member = 0"
      : "SELECT count(c.status) FROM lk, calls c WHERE c.key = lk.key",
      nInfo));
  sqlite3_close(db);
  removeDb(zFile);
}

static void figuresCalls(void){
  static Series a[T_N][M_N];
  int r, m, t, k;
  static const int aJudged[M_N] = { 1, 1, 1, 0, 0, 0, 0 };
  static const double aTarget[M_N] = { 1.1, 1.1, 1.2, 0, 0, 0, 0 };
  if( nInfo>nClaims ) nInfo = nClaims;
  computeKeys(nClaims);
  makeOrder(nClaims);
  for(r=0; r<nRuns; r++){
    fprintf(stderr, "  calls: run %d of %d\n", r+1, nRuns);
    for(k=0; k<T_N; k++){
      t = r%2==0 ? k : T_N-1-k;       /* idem first, then last */
      if( aUse[t] ) runCalls(t, r, a[t]);
    }
  }
  if( !aUse[T_IDEM] ) return;         /* a profile of the baselines only */
  for(m=0; m<M_N; m++){
    for(t=1; t<T_N; t++){
      char *zName = malloc(300);
      if( !aUse[t] ) continue;
      switch( m ){
        case M_CLAIM:  snprintf(zName, 200, "claims: %d `INSERT` in one transaction", nClaims); break;
        case M_REPLAY: snprintf(zName, 200, "replay: %d lookups by key, one prepared statement", nClaims); break;
        case M_BYTES:  snprintf(zName, 200, "bytes per claim (page_count x page_size / claims, no VACUUM)"); break;
        case M_RECORD: snprintf(zName, 200, "record: %d `UPDATE ... SET status='done'`, one transaction", nInfo); break;
        case M_REPLAYALL: snprintf(zName, 200, "replay: %d `SELECT *` by key", nInfo); break;
        case M_REPLY:  snprintf(zName, 200, "replay: %d replies (`reply` / `json_object()`)", nInfo); break;
        case M_JOIN:   snprintf(zName, 200, "replay: %d lookups as one join", nInfo); break;
      }
      if( t!=T_HAND ){
        size_t n = strlen(zName);
        snprintf(zName+n, 300-n, ", against %s", azTableDesc[t]);
      }
      addRow(zName, m==M_BYTES ? "B" : "s", &a[T_IDEM][m], &a[t][m],
             aTarget[m], aJudged[m] && t==T_HAND);
    }
  }
}

/* ------------------------------------------------------------ autocommit */

/* nAuto claims, each its own transaction, WAL, synchronous=NORMAL. */
static double runAuto(int eTable, int iRun){
  char zFile[600], zName[64];
  sqlite3 *db;
  double t, c;
  snprintf(zName, sizeof(zName), "auto-%s-%d.db", azTable[eTable], iRun);
  dbPath(zFile, sizeof(zFile), zName);
  removeDb(zFile);
  db = openDb(zFile);
  exec(db, "PRAGMA journal_mode=WAL");
  exec(db, "PRAGMA synchronous=NORMAL");
  createTable(db, eTable, 1);
  t = timeClaims(db, eTable, 0, nAuto, 0);
  c = gCpu;
  sqlite3_close(db);
  removeDb(zFile);
  gCpu = c;
  return t;
}

static void figuresAuto(void){
  static Series a[T_N];
  int r, k, t;
  for(r=0; r<nRuns; r++){
    for(k=0; k<T_N; k++){
      t = r%2==0 ? k : T_N-1-k;
      if( aUse[t] ) put(&a[t], r, runAuto(t, r));
    }
  }
  if( !aUse[T_IDEM] ) return;
  for(t=1; t<T_N; t++){
    char *zName = malloc(260);
    if( !aUse[t] ) continue;
    snprintf(zName, 260, "claims: %d in autocommit, WAL, synchronous=NORMAL%s%s",
             nAuto, t==T_HAND ? "" : ", against ",
             t==T_HAND ? "" : azTableDesc[t]);
    addRow(zName, "s", &a[T_IDEM], &a[t], 1.1, t==T_HAND);
  }
}

/* ----------------------------------------------------------------- scale */

/*
** The cost of a claim in a large table against a small one.  Both are
** idem tables, filled with claims in transactions of 100 000.  Then, run
** after run, claims go into each in two ways:
**
**   a batch of nBatch claims in one transaction (rollback journal, the
**   defaults), and
**   nAutoBatch claims in autocommit, WAL, synchronous=NORMAL (an
**   application claiming one call at a time),
**
** in alternation.  The large table keeps growing (by a few percent over
** all runs); a small one is made afresh for each batch, so that it holds
** nSmall claims when the batch starts.  The figure is the median time per
** claim.  The claim numbers of the tables never meet.
*/
static int nAutoBatch = 2000;
static int eScaleTable = 0;       /* --scale-table: T_IDEM, or a baseline */

static double fillScale(sqlite3 *db, long iFirst, long n){
  double t = 0;
  long i;
  for(i=0; i<n; i+=100000){
    long k = n-i < 100000 ? n-i : 100000;
    t += timeClaims(db, eScaleTable, iFirst+i, k, 1);
  }
  return t;
}

static void journal(sqlite3 *db, int bWal){
  exec(db, bWal ? "PRAGMA journal_mode=WAL" : "PRAGMA journal_mode=DELETE");
  exec(db, bWal ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL");
}

/* n claims into db from claim iFirst: in one transaction, or in
** autocommit in WAL mode (bAuto).  Run r of series p: time per claim. */
static void batch(Series *p, int r, sqlite3 *db, long iFirst, long n, int bAuto){
  double t;
  if( bAuto ) journal(db, 1);
  t = timeClaims(db, eScaleTable, iFirst, n, !bAuto);
  gCpu /= n;
  put(p, r, t/n);
  if( bAuto ) journal(db, 0);
}

/* A fresh small table holding nSmall claims. */
static sqlite3 *smallTable(const char *zFile, long *piNext){
  sqlite3 *db;
  removeDb(zFile);
  db = openDb(zFile);
  createTable(db, eScaleTable, 1);
  fillScale(db, *piNext, nSmall);
  *piNext += nSmall;
  return db;
}

static void figuresScale(void){
  char zBig[600], zSmall[600];
  sqlite3 *dbBig;
  static Series S[2], B[2];
  double tFill;
  long iBig = 1000000000L, iSmall = 2000000000L;
  int r, m;
  struct stat st;
  char zA[32], zB[32];
  dbPath(zBig, sizeof(zBig), "scale-big.db");
  dbPath(zSmall, sizeof(zSmall), "scale-small.db");
  removeDb(zBig);
  dbBig = openDb(zBig);
  createTable(dbBig, eScaleTable, 1);
  fprintf(stderr, "  scale: filling %ld claims\n", nScale);
  tFill = fillScale(dbBig, iBig, nScale);
  iBig += nScale;
  for(r=0; r<nRuns; r++){
    for(m=0; m<2; m++){
      long n = m ? nAutoBatch : nBatch;
      sqlite3 *db = smallTable(zSmall, &iSmall);
      if( r%2==0 ){
        batch(&B[m], r, db, iSmall, n, m);
        batch(&S[m], r, dbBig, iBig, n, m);
      }else{
        batch(&S[m], r, dbBig, iBig, n, m);
        batch(&B[m], r, db, iSmall, n, m);
      }
      iSmall += n;
      iBig += n;
      sqlite3_close(db);
      removeDb(zSmall);
    }
  }
  sqlite3_close(dbBig);
  fprintf(stderr, "  scale: filled in %.1f s (%.2f us per claim), %.0f MB\n",
          tFill, tFill*1e6/nScale,
          stat(zBig, &st)==0 ? st.st_size/1048576.0 : 0.0);
  removeDb(zBig);
  snprintf(zA, sizeof(zA), nScale>=1000000 ? "%ldM" : "%ldK",
           nScale>=1000000 ? nScale/1000000 : nScale/1000);
  snprintf(zB, sizeof(zB), "%ldK", nSmall/1000);
  for(m=0; m<2; m++){
    char *zName = malloc(200);
    if( m==0 ){
      snprintf(zName, 200, "per-claim cost at %s claims / at %s:"
               " %d claims in one transaction%s%s", zA, zB, nBatch,
               eScaleTable ? ", all in " : "",
               eScaleTable ? azTableDesc[eScaleTable] : "");
    }else{
      snprintf(zName, 200, "per-claim cost at %s claims / at %s:"
               " %d claims in autocommit, WAL, synchronous=NORMAL%s%s",
               zA, zB, nAutoBatch, eScaleTable ? ", all in " : "",
               eScaleTable ? azTableDesc[eScaleTable] : "");
    }
    addRow(zName, "s", &S[m], &B[m], 2.0, 1);
  }
}

/* ------------------------------------------------------------ docs file */
static void writeDocs(const char *zFile){
  sqlite3 *db;
  removeDb(zFile);
  if( sqlite3_open(zFile, &db)!=SQLITE_OK ) die(db, zFile);
  loadDocs(db);
  sqlite3_close(db);
}

/* --------------------------------------------------------------- machine */
/* The machine, the library and the documents, for the table's caption. */
static void printMachine(void){
  char zModel[256] = "?";
  char zVersion[64] = "?";
  FILE *f = fopen("/proc/cpuinfo", "r");
  struct utsname u;
  sqlite3 *db;
  sqlite3_stmt *p;
  long tot = 0;
  int i, nMin = 1<<30, nMax = 0;
  if( f ){
    char z[512];
    while( fgets(z, sizeof(z), f) ){
      char *c = strchr(z, ':');
      if( strncmp(z, "model name", 10)==0 && c ){
        snprintf(zModel, sizeof(zModel), "%s", c+2);
        zModel[strcspn(zModel, "\n")] = 0;
        break;
      }
    }
    fclose(f);
  }
  uname(&u);
  db = openDb(":memory:");
  p = prep(db, "SELECT idem_version()");
  if( sqlite3_step(p)==SQLITE_ROW ){
    snprintf(zVersion, sizeof(zVersion), "%s", sqlite3_column_text(p, 0));
  }
  sqlite3_finalize(p);
  sqlite3_close(db);
  for(i=0; i<nDocs; i++){
    tot += aDoc[i].nArgs;
    if( aDoc[i].nArgs<nMin ) nMin = aDoc[i].nArgs;
    if( aDoc[i].nArgs>nMax ) nMax = aDoc[i].nArgs;
  }
  printf("idem %s (%s) on SQLite %s; %s, %ld cores online, %s %s %s\n",
         zVersion, zLib, sqlite3_libversion(), zModel,
         sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release, u.machine);
  printf("%d documents of %d..%d bytes (mean %ld)%s%s; each time the median"
         " of %d runs, idem and baseline alternating\n",
         nDocs, nMin, nMax, tot/nDocs, zDocsFile ? " from " : "",
         zDocsFile ? zDocsFile : "", nRuns);
  fflush(stdout);
}

/* Is group z among --only's comma-separated names (or is there no --only)? */
static int inList(const char *zList, const char *z){
  int n = (int)strlen(z);
  const char *p = zList;
  while( p && *p ){
    if( strncmp(p, z, n)==0 && (p[n]==',' || p[n]==0) ) return 1;
    p = strchr(p, ',');
    if( p ) p++;
  }
  return 0;
}
static int want(const char *z){ return zOnly==0 || inList(zOnly, z); }

int main(int argc, char **argv){
  const char *zWriteDocs = 0;
  int i;
  for(i=1; i<argc; i++){
    const char *z = argv[i];
    const char *zVal = i+1<argc ? argv[i+1] : 0;
    if( zVal==0 ) goto usage;
    if( strcmp(z, "--lib")==0 ) zLib = zVal;
    else if( strcmp(z, "--docs")==0 ) nDocs = atoi(zVal);
    else if( strcmp(z, "--claims")==0 ) nClaims = atoi(zVal);
    else if( strcmp(z, "--info")==0 ) nInfo = atoi(zVal);
    else if( strcmp(z, "--auto")==0 ) nAuto = atoi(zVal);
    else if( strcmp(z, "--runs")==0 ) nRuns = atoi(zVal);
    else if( strcmp(z, "--scale")==0 ) nScale = atol(zVal);
    else if( strcmp(z, "--small")==0 ) nSmall = atol(zVal);
    else if( strcmp(z, "--batch")==0 ) nBatch = atoi(zVal);
    else if( strcmp(z, "--auto-batch")==0 ) nAutoBatch = atoi(zVal);
    else if( strcmp(z, "--dir")==0 ) snprintf(zDir, sizeof(zDir), "%s", zVal);
    else if( strcmp(z, "--write-docs")==0 ) zWriteDocs = zVal;
    else if( strcmp(z, "--docs-file")==0 ) zDocsFile = zVal;
    else if( strcmp(z, "--only")==0 ) zOnly = zVal;
    else if( strcmp(z, "--pragma")==0 ) zPragma = zVal;
    else if( strcmp(z, "--scale-table")==0 ){
      for(eScaleTable=0; eScaleTable<T_N; eScaleTable++){
        if( strcmp(zVal, azTable[eScaleTable])==0 ) break;
      }
      if( eScaleTable==T_N ) goto usage;
    }
    else if( strcmp(z, "--tables")==0 ){
      int t;
      for(t=0; t<T_N; t++) aUse[t] = inList(zVal, azTable[t]);
    }
    else goto usage;
    i++;
  }
  if( nRuns<1 || nRuns>64 || nDocs<8 || nClaims<1 || nInfo<1 || nAuto<1
   || nBatch<1 || nAutoBatch<1 || nSmall<1 ) goto usage;
  aDoc = zDocsFile ? readDocs(zDocsFile, &nDocs) : genDocs(nDocs);
  if( zWriteDocs ){
    writeDocs(zWriteDocs);
    return 0;
  }
  if( zDir[0]==0 ){
    snprintf(zDir, sizeof(zDir), "/tmp/idem-bench.XXXXXX");
    if( mkdtemp(zDir)==0 ){ perror("mkdtemp"); return 1; }
    bOwnDir = 1;
    atexit(cleanup);
  }
  printMachine();
  if( want("key") || want("key-bound") || want("canonical")
   || want("canonical-bound") ){
    figuresFunctions();
  }
  if( want("calls") ) figuresCalls();
  if( want("auto") ) figuresAuto();
  if( want("scale") && nScale>0 ) figuresScale();
  printf("\n");
  printTable();
  return 0;
 usage:
  fprintf(stderr, "usage: %s [--lib PATH] [--docs N] [--claims N] [--info N]"
      " [--auto N] [--runs N] [--scale N] [--small N] [--batch N]"
      " [--auto-batch N] [--dir DIR]"
      " [--tables idem,hand,canon,rowid] [--scale-table idem|hand|canon|rowid]"
      " [--pragma 'NAME=VALUE']"
      " [--write-docs FILE] [--docs-file FILE]"
      " [--only key,canonical,calls,auto,scale]\n", argv[0]);
  return 2;
}

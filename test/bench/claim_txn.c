/* SPDX-License-Identifier: MIT */
/*
** claim_txn.c -- one claim a transaction, as a tool runner makes it:
** BEGIN; INSERT ...; COMMIT, each a statement prepared once, into idem
** (an external claim) or into a rowid table with a UNIQUE key computed by
** idem_key() (the baseline of doc/performance.md).  test/bench/claim_txn.sh
** counts the instructions of runClaims() under callgrind.
**
** With "time" for the table, three files in one process, idem, idem with
** durability=relaxed (which reads no setting and makes no directory sync)
** and the rowid table, one claim on each in turn (the order rotated), N
** rounds: prints the median nanoseconds of a claim of each.  On a busy
** machine a sync's time jumps by the millisecond; interleaved one claim
** at a time, the three see the same disk.
**
**   claim_txn LIB delete|wal idem|rowid|time N
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sqlite3.h>
static void ex(sqlite3 *db, const char *z){ char *e=0; if(sqlite3_exec(db,z,0,0,&e)){fprintf(stderr,"%s: %s\n",z,e);exit(1);} }
static sqlite3_stmt *pr(sqlite3 *db, const char *z){ sqlite3_stmt *p; if(sqlite3_prepare_v2(db,z,-1,&p,0)){fprintf(stderr,"%s\n",sqlite3_errmsg(db));exit(1);} return p; }
static void st(sqlite3 *db, sqlite3_stmt *p){ if(sqlite3_step(p)!=SQLITE_DONE){fprintf(stderr,"step %s\n",sqlite3_errmsg(db));exit(1);} sqlite3_reset(p); }
__attribute__((noinline)) void runClaims(sqlite3 *db, sqlite3_stmt *b, sqlite3_stmt *ins, sqlite3_stmt *c, int n0, int n){
  char z[32];
  for(int i=n0;i<n0+n;i++){
    st(db,b);
    snprintf(z,sizeof z,"c%d",i);
    sqlite3_bind_text(ins,1,z,-1,SQLITE_TRANSIENT);
    st(db,ins);
    st(db,c);
  }
}
typedef struct Run { sqlite3 *db; sqlite3_stmt *b, *ins, *c; char f[200]; } Run;
static void open1(Run *r, const char *lib, const char *mode, const char *tab){
  snprintf(r->f,sizeof r->f,"%s/claim-txn-%s-%s-%d.db",getenv("TMPDIR")?getenv("TMPDIR"):"/tmp",mode,tab,(int)getpid());
  unlink(r->f);
  sqlite3_open(r->f,&r->db); sqlite3_enable_load_extension(r->db,1);
  if(sqlite3_load_extension(r->db,lib,0,0)){fprintf(stderr,"load\n");exit(1);}
  char q[200]; snprintf(q,sizeof q,"PRAGMA journal_mode=%s; PRAGMA synchronous=FULL",mode); ex(r->db,q);
  if(!strncmp(tab,"idem",4)){
    ex(r->db,strcmp(tab,"idem") ? "CREATE VIRTUAL TABLE calls USING idem(durability=relaxed)"
                                : "CREATE VIRTUAL TABLE calls USING idem");
    r->ins=pr(r->db,"INSERT OR IGNORE INTO calls(who, conv, tool, args, kind) VALUES('u', ?1, 'charge', '{\"a\":1,\"b\":[1,2,3],\"c\":\"hello\"}', 'external')");
  }else{
    ex(r->db,"CREATE TABLE calls(key TEXT UNIQUE, member INT, who, conv, tool, args, kind, status, created, updated)");
    r->ins=pr(r->db,"INSERT OR IGNORE INTO calls(key, member, who, conv, tool, args, kind, status, created, updated) VALUES(idem_key('u',?1,'charge','{\"a\":1,\"b\":[1,2,3],\"c\":\"hello\"}'), 0, 'u', ?1, 'charge', '{\"a\":1,\"b\":[1,2,3],\"c\":\"hello\"}', 'external', 'pending', strftime('%Y-%m-%dT%H:%M:%fZ'), strftime('%Y-%m-%dT%H:%M:%fZ'))");
  }
  r->b=pr(r->db,"BEGIN"); r->c=pr(r->db,"COMMIT");
  runClaims(r->db,r->b,r->ins,r->c,0,50);      /* warm */
}
static void close1(Run *r){
  sqlite3_finalize(r->b); sqlite3_finalize(r->c); sqlite3_finalize(r->ins); sqlite3_close(r->db);
  static const char *az[] = { "", "-wal", "-shm", "-journal" };
  for(int k=0; k<4; k++){ char g[300]; snprintf(g,sizeof g,"%s%s",r->f,az[k]); unlink(g); }
}
static int cmp(const void *a, const void *b){ double x=*(const double*)a, y=*(const double*)b; return x<y ? -1 : x>y; }
int main(int argc, char **argv){
  if( argc!=5 ){ fprintf(stderr, "usage: claim_txn LIB delete|wal idem|rowid|time N\n"); return 1; }
  const char *lib=argv[1], *mode=argv[2], *tab=argv[3]; int n=atoi(argv[4]);
  if( strcmp(tab,"time")==0 ){
    static const char *azTab[3] = { "idem", "idem-relaxed", "rowid" };
    Run r[3]; double *a[3]; int k, i;
    if( n<1 ) n = 1;
    for(k=0; k<3; k++){ open1(&r[k], lib, mode, azTab[k]); a[k]=malloc(sizeof(double)*n); }
    for(i=0; i<n; i++){
      for(int j=0; j<3; j++){
        struct timespec t0, t1;
        k = (i+j)%3;
        clock_gettime(CLOCK_MONOTONIC,&t0);
        runClaims(r[k].db,r[k].b,r[k].ins,r[k].c,1000+i,1);
        clock_gettime(CLOCK_MONOTONIC,&t1);
        a[k][i] = (t1.tv_sec-t0.tv_sec)*1e9 + (t1.tv_nsec-t0.tv_nsec);
      }
    }
    for(k=0; k<3; k++){
      qsort(a[k], n, sizeof(double), cmp);
      printf("%s %.0f\n", azTab[k], a[k][n/2]);
      close1(&r[k]); free(a[k]);
    }
    return 0;
  }
  Run r;
  open1(&r, lib, mode, tab);
  runClaims(r.db,r.b,r.ins,r.c,1000,n);
  close1(&r);
  return 0;
}

/* SPDX-License-Identifier: MIT */
/*
** claim_txn.c -- one claim a transaction, as a tool runner makes it:
** BEGIN; INSERT ...; COMMIT, each a statement prepared once, into idem
** (an external claim) or into a rowid table with a UNIQUE key computed by
** idem_key() (the baseline of doc/performance.md).  test/bench/claim_txn.sh
** counts the instructions of runClaims() under callgrind.
**
**   claim_txn LIB delete|wal idem|rowid N
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
int main(int argc, char **argv){
  if( argc!=5 ){ fprintf(stderr, "usage: claim_txn LIB delete|wal idem|rowid N\n"); return 1; }
  const char *lib=argv[1], *mode=argv[2], *tab=argv[3]; int n=atoi(argv[4]);
  sqlite3 *db; char f[200]; snprintf(f,sizeof f,"%s/claim-txn-%s-%s-%d.db",getenv("TMPDIR")?getenv("TMPDIR"):"/tmp",mode,tab,(int)getpid());
  unlink(f);
  sqlite3_open(f,&db); sqlite3_enable_load_extension(db,1);
  if(sqlite3_load_extension(db,lib,0,0)){fprintf(stderr,"load\n");return 1;}
  char q[200]; snprintf(q,sizeof q,"PRAGMA journal_mode=%s; PRAGMA synchronous=FULL",mode); ex(db,q);
  sqlite3_stmt *ins;
  if(!strcmp(tab,"idem")){
    ex(db,"CREATE VIRTUAL TABLE calls USING idem");
    ins=pr(db,"INSERT OR IGNORE INTO calls(who, conv, tool, args, kind) VALUES('u', ?1, 'charge', '{\"a\":1,\"b\":[1,2,3],\"c\":\"hello\"}', 'external')");
  }else{
    ex(db,"CREATE TABLE calls(key TEXT UNIQUE, member INT, who, conv, tool, args, kind, status, created, updated)");
    ins=pr(db,"INSERT OR IGNORE INTO calls(key, member, who, conv, tool, args, kind, status, created, updated) VALUES(idem_key('u',?1,'charge','{\"a\":1,\"b\":[1,2,3],\"c\":\"hello\"}'), 0, 'u', ?1, 'charge', '{\"a\":1,\"b\":[1,2,3],\"c\":\"hello\"}', 'external', 'pending', strftime('%Y-%m-%dT%H:%M:%fZ'), strftime('%Y-%m-%dT%H:%M:%fZ'))");
  }
  sqlite3_stmt *b=pr(db,"BEGIN"), *c=pr(db,"COMMIT");
  runClaims(db,b,ins,c,0,50);      /* warm */
  runClaims(db,b,ins,c,1000,n);
  sqlite3_finalize(b); sqlite3_finalize(c); sqlite3_finalize(ins); sqlite3_close(db);
  { static const char *az[] = { "", "-wal", "-shm", "-journal" };
    for(int k=0; k<4; k++){ char g[300]; snprintf(g,sizeof g,"%s%s",f,az[k]); unlink(g); } }
  return 0;
}

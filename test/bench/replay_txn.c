/* SPDX-License-Identifier: MIT */
/*
** replay_txn.c -- a replay and a record one at a time, as a tool runner
** makes them (claim_txn.c's sibling): a replay is a SELECT of status, id,
** result by key in autocommit; a record is BEGIN; UPDATE ... SET
** status='done', id=?, result=? WHERE key=? ... AND owner=?; COMMIT.
** Each statement prepared once, on idem or on a rowid table with a UNIQUE
** key computed by idem_key() (the baseline of doc/performance.md).
** test/bench/replay_txn.sh counts the instructions of runReplays() and
** runRecords() under callgrind.
**
**   replay_txn LIB delete|wal idem|rowid replay|record N
**
** The calls are claimed (and, for replay, recorded done) beforehand, in
** one transaction; N of them are then replayed or recorded, in a fixed
** shuffled order.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#define NCALL 1400
static char aKey[NCALL][33];
static void ex(sqlite3 *db, const char *z){ char *e=0; if(sqlite3_exec(db,z,0,0,&e)){fprintf(stderr,"%s: %s\n",z,e);exit(1);} }
static sqlite3_stmt *pr(sqlite3 *db, const char *z){ sqlite3_stmt *p; if(sqlite3_prepare_v2(db,z,-1,&p,0)){fprintf(stderr,"%s: %s\n",z,sqlite3_errmsg(db));exit(1);} return p; }
static void st(sqlite3 *db, sqlite3_stmt *p){ if(sqlite3_step(p)!=SQLITE_DONE){fprintf(stderr,"step %s\n",sqlite3_errmsg(db));exit(1);} sqlite3_reset(p); }
static int order(int i){ return (int)(((long)i*7919L) % NCALL); }
__attribute__((noinline)) void runReplays(sqlite3 *db, sqlite3_stmt *q, int n0, int n){
  long nByte = 0;
  for(int i=n0;i<n0+n;i++){
    sqlite3_bind_text(q,1,aKey[order(i)],32,SQLITE_STATIC);
    if( sqlite3_step(q)!=SQLITE_ROW ){fprintf(stderr,"replay found nothing: %s\n",sqlite3_errmsg(db));exit(1);}
    for(int c=0;c<3;c++) nByte += sqlite3_column_bytes(q,c);
    sqlite3_reset(q);
  }
  if( nByte==0 ){ fprintf(stderr,"replay read nothing\n"); exit(1); }
}
__attribute__((noinline)) void runRecords(sqlite3 *db, sqlite3_stmt *b, sqlite3_stmt *u, sqlite3_stmt *c, int n0, int n){
  char z[64];
  for(int i=n0;i<n0+n;i++){
    st(db,b);
    snprintf(z,sizeof z,"{\"order\":%d,\"ok\":true}",100000+i);
    sqlite3_bind_text(u,1,aKey[order(i)],32,SQLITE_STATIC);
    sqlite3_bind_int64(u,2,100000+i);
    sqlite3_bind_text(u,3,z,-1,SQLITE_TRANSIENT);
    st(db,u);
    if( sqlite3_changes(db)!=1 ){ fprintf(stderr,"record changed no row\n"); exit(1); }
    st(db,c);
  }
}
int main(int argc, char **argv){
  if( argc!=6 ){ fprintf(stderr, "usage: replay_txn LIB delete|wal idem|rowid replay|record N\n"); return 1; }
  const char *lib=argv[1], *mode=argv[2], *tab=argv[3], *what=argv[4]; int n=atoi(argv[5]);
  int bIdem=!strcmp(tab,"idem"), bReplay=!strcmp(what,"replay");
  if( n<0 || n+50>NCALL ){ fprintf(stderr,"N: 0..%d\n",NCALL-50); return 1; }
  sqlite3 *db; char f[200]; snprintf(f,sizeof f,"%s/replay-txn-%s-%s-%s-%d.db",getenv("TMPDIR")?getenv("TMPDIR"):"/tmp",mode,tab,what,(int)getpid());
  unlink(f);
  sqlite3_open(f,&db); sqlite3_enable_load_extension(db,1);
  if(sqlite3_load_extension(db,lib,0,0)){fprintf(stderr,"load\n");return 1;}
  char q[200]; snprintf(q,sizeof q,"PRAGMA journal_mode=%s; PRAGMA synchronous=FULL",mode); ex(db,q);
  const char *zArgs = "'{\"a\":1,\"b\":[1,2,3],\"c\":\"hello\"}'";
  char zIns[800], zDone[400];
  if( bIdem ){
    ex(db,"CREATE VIRTUAL TABLE calls USING idem");
    snprintf(zIns,sizeof zIns,"INSERT INTO calls(who, conv, tool, args, kind, owner) VALUES('u', ?1, 'charge', %s, 'external', 'w1')",zArgs);
    snprintf(zDone,sizeof zDone,"UPDATE calls SET status='done', id=?2, result=?3 WHERE key=?1 AND member=0 AND owner='w1'");
  }else{
    ex(db,"CREATE TABLE calls(key TEXT UNIQUE, member INT, who, conv, tool, args, kind, status, id, result, note, created, updated, owner)");
    snprintf(zIns,sizeof zIns,"INSERT INTO calls(key, member, who, conv, tool, args, kind, status, created, updated, owner) VALUES(idem_key('u',?1,'charge',%s), 0, 'u', ?1, 'charge', %s, 'external', 'pending', strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ'), strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ'), 'w1')",zArgs,zArgs);
    snprintf(zDone,sizeof zDone,"UPDATE calls SET status='done', id=?2, result=?3, updated=strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ') WHERE key=?1 AND owner='w1'");
  }
  {   /* the calls, and their keys */
    sqlite3_stmt *ins=pr(db,zIns), *k;
    char z[800]; snprintf(z,sizeof z,"SELECT idem_key('u',?1,'charge',%s)",zArgs);
    k=pr(db,z);
    ex(db,"BEGIN");
    for(int i=0;i<NCALL;i++){
      char zConv[32]; snprintf(zConv,sizeof zConv,"c%d",i);
      sqlite3_bind_text(ins,1,zConv,-1,SQLITE_TRANSIENT); st(db,ins);
      sqlite3_bind_text(k,1,zConv,-1,SQLITE_TRANSIENT);
      if( sqlite3_step(k)!=SQLITE_ROW ){fprintf(stderr,"key\n");return 1;}
      memcpy(aKey[i],sqlite3_column_text(k,0),33); sqlite3_reset(k);
    }
    ex(db,"COMMIT");
    sqlite3_finalize(ins); sqlite3_finalize(k);
  }
  sqlite3_stmt *b=pr(db,"BEGIN"), *c=pr(db,"COMMIT"), *u=pr(db,zDone);
  if( bReplay ){
    sqlite3_stmt *s=pr(db, bIdem ? "SELECT status, id, result FROM calls WHERE key=?1 AND member=0"
                                 : "SELECT status, id, result FROM calls WHERE key=?1");
    ex(db,"BEGIN");                   /* every call done: a replay finds its outcome */
    for(int i=0;i<NCALL;i++){
      sqlite3_bind_text(u,1,aKey[i],32,SQLITE_STATIC);
      sqlite3_bind_int64(u,2,100000+i);
      sqlite3_bind_text(u,3,"{\"order\":1,\"ok\":true}",-1,SQLITE_STATIC);
      st(db,u);
    }
    ex(db,"COMMIT");
    runReplays(db,s,0,50);            /* warm */
    runReplays(db,s,50,n);
    sqlite3_finalize(s);
  }else{
    runRecords(db,b,u,c,0,50);        /* warm */
    runRecords(db,b,u,c,50,n);
  }
  sqlite3_finalize(b); sqlite3_finalize(c); sqlite3_finalize(u); sqlite3_close(db);
  { static const char *az[] = { "", "-wal", "-shm", "-journal" };
    for(int j=0; j<4; j++){ char g[300]; snprintf(g,sizeof g,"%s%s",f,az[j]); unlink(g); } }
  return 0;
}

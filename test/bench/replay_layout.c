/* SPDX-License-Identifier: MIT */
/*
** replay_layout.c -- what a replay, a record and a claim cost in plain SQL
** (no virtual table) on four layouts of the claim table, one operation at
** a time as a tool runner makes them: the measure behind "Replay and
** record" in doc/performance.md, which asks whether another format could
** bring a replay within 1.3x of a rowid table's without losing the claim
** or the record.  test/bench/replay_layout.sh counts the instructions of
** runOps() under callgrind.
**
**   replay_layout f4|cov|wr|split wal|delete 0|1|2 N
**
** Layouts (the columns of format 4's <name>_claim, args 1.2 KB):
**   f4     format 4: a rowid table, UNIQUE(key, member)
**   cov    the key's index covers the outcome: (key, member, status, id,
**          result) UNIQUE, no other index
**   wr     WITHOUT ROWID keyed by (key, member), rid a column with its own
**          UNIQUE index
**   split  the request in a rowid table without a key index, the outcome
**          (key, member, rid, status, id, result, note, updated, expires,
**          sends) in a WITHOUT ROWID table keyed by (key, member)
** Operations: 0 a replay (SELECT status, id, result by key and member 0,
** autocommit); 1 a record (BEGIN; UPDATE of status, id, result, updated
** by rid, as idem's record writes; COMMIT); 2 a claim (BEGIN; INSERT;
** COMMIT; split: two INSERTs).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#define NCALL 1400
static unsigned char aKey[NCALL+400][16];
static char zArgs[1300];
static sqlite3_stmt *pIns, *pIns2, *pB, *pC, *pUpd, *pSel;
static void ex(sqlite3 *db, const char *z){ char *e=0; if(sqlite3_exec(db,z,0,0,&e)){fprintf(stderr,"%s: %s\n",z,e);exit(1);} }
static sqlite3_stmt *pr(sqlite3 *db, const char *z){ sqlite3_stmt *p; if(sqlite3_prepare_v2(db,z,-1,&p,0)){fprintf(stderr,"%s: %s\n",z,sqlite3_errmsg(db));exit(1);} return p; }
static void st(sqlite3 *db, sqlite3_stmt *p){ int rc=sqlite3_step(p); if(rc!=SQLITE_DONE && rc!=SQLITE_ROW){fprintf(stderr,"step: %s\n",sqlite3_errmsg(db));exit(1);} sqlite3_reset(p); }
static int order(int i){ return (int)(((long)i*7919L) % NCALL); }
static void claim1(sqlite3 *db, int i){
  sqlite3_bind_blob(pIns,1,aKey[i],16,SQLITE_STATIC);
  sqlite3_bind_int64(pIns,2,i+1);
  st(db,pIns);
  if( pIns2 ){
    sqlite3_bind_blob(pIns2,1,aKey[i],16,SQLITE_STATIC);
    sqlite3_bind_int64(pIns2,2,i+1);
    st(db,pIns2);
  }
}
__attribute__((noinline)) void runOps(sqlite3 *db, int op, int n0, int n){
  long nByte = 0;
  for(int i=n0;i<n0+n;i++){
    if( op==0 ){
      sqlite3_bind_blob(pSel,1,aKey[order(i)],16,SQLITE_STATIC);
      if( sqlite3_step(pSel)!=SQLITE_ROW ){ fprintf(stderr,"replay found nothing\n"); exit(1); }
      for(int c=0;c<3;c++) nByte += sqlite3_column_bytes(pSel,c);
      sqlite3_reset(pSel);
    }else if( op==1 ){
      char z[64]; snprintf(z,sizeof z,"{\"order\":%d,\"ok\":true}",100000+i);
      st(db,pB);
      sqlite3_bind_int64(pUpd,1,order(i)+1);
      sqlite3_bind_int64(pUpd,2,100000+i);
      sqlite3_bind_text(pUpd,3,z,-1,SQLITE_TRANSIENT);
      st(db,pUpd);
      if( sqlite3_changes(db)!=1 ){ fprintf(stderr,"record changed no row\n"); exit(1); }
      st(db,pC);
    }else{
      st(db,pB); claim1(db,NCALL+i); st(db,pC);
    }
  }
  if( op==0 && nByte==0 ){ fprintf(stderr,"replay read nothing\n"); exit(1); }
}
int main(int argc, char **argv){
  if( argc!=5 ){ fprintf(stderr,"usage: replay_layout f4|cov|wr|split wal|delete 0|1|2 N\n"); return 1; }
  const char *zShape=argv[1], *zMode=argv[2]; int op=atoi(argv[3]), n=atoi(argv[4]);
  int bSplit = !strcmp(zShape,"split");
  if( n<0 || n+50>400 ){ fprintf(stderr,"N: 0..350\n"); return 1; }
  sqlite3 *db; char f[300], z[3000];
  snprintf(f,sizeof f,"%s/replay-layout-%s-%s-%d.db",getenv("TMPDIR")?getenv("TMPDIR"):"/tmp",zShape,zMode,(int)getpid());
  unlink(f); sqlite3_open(f,&db);
  snprintf(z,sizeof z,"PRAGMA journal_mode=%s; PRAGMA synchronous=FULL",zMode); ex(db,z);
  srand(1);
  for(int i=0;i<NCALL+400;i++) for(int j=0;j<16;j++) aKey[i][j]=(unsigned char)(rand()>>7);
  for(int i=0;i<1200;i++) zArgs[i]="abcdefghij{}\":,0123"[i%19];
  zArgs[1200]=0;
  const char *zCols = "who, conv, tool, args TEXT, kind TEXT, status TEXT, id, result,"
    " note TEXT, created TEXT NOT NULL, updated TEXT, keyargs TEXT, owner TEXT,"
    " expires TEXT, honours_key INTEGER, sends INTEGER";
  if( !strcmp(zShape,"f4") ){
    snprintf(z,sizeof z,"CREATE TABLE c(rid INTEGER PRIMARY KEY, key BLOB NOT NULL, member INTEGER NOT NULL, %s, UNIQUE(key, member))",zCols);
  }else if( !strcmp(zShape,"cov") ){
    snprintf(z,sizeof z,"CREATE TABLE c(rid INTEGER PRIMARY KEY, key BLOB NOT NULL, member INTEGER NOT NULL, %s); CREATE UNIQUE INDEX c_cov ON c(key, member, status, id, result)",zCols);
  }else if( !strcmp(zShape,"wr") ){
    snprintf(z,sizeof z,"CREATE TABLE c(key BLOB NOT NULL, member INTEGER NOT NULL, rid INTEGER NOT NULL, %s, PRIMARY KEY(key, member)) WITHOUT ROWID; CREATE UNIQUE INDEX c_rid ON c(rid)",zCols);
  }else if( bSplit ){
    snprintf(z,sizeof z,"CREATE TABLE c(rid INTEGER PRIMARY KEY, key BLOB NOT NULL, member INTEGER NOT NULL, %s); CREATE TABLE o(key BLOB NOT NULL, member INTEGER NOT NULL, rid INTEGER NOT NULL, status TEXT, id, result, note TEXT, updated TEXT, expires TEXT, sends INTEGER, PRIMARY KEY(key, member)) WITHOUT ROWID",zCols);
  }else{
    fprintf(stderr,"layout: f4, cov, wr or split\n"); return 1;
  }
  ex(db,z);
  snprintf(z,sizeof z,"INSERT INTO c(rid, key, member, who, conv, tool, args, kind, status, created, updated, owner) VALUES(?2, ?1, 0, 'u', 'c1', 'charge', '%s', 'external', 'pending', strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ'), strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ'), 'w1')",zArgs);
  pIns=pr(db,z);
  if( bSplit ) pIns2=pr(db,"INSERT INTO o(key, member, rid, status, updated) VALUES(?1, 0, ?2, 'pending', strftime('%Y-%m-%dT%H:%M:%fZ'))");
  pB=pr(db,"BEGIN"); pC=pr(db,"COMMIT");
  pUpd=pr(db, bSplit
    ? "UPDATE o SET status='done', id=?2, result=?3, updated=strftime('%Y-%m-%dT%H:%M:%fZ') WHERE key=(SELECT key FROM c WHERE rid=?1) AND member=0"
    : "UPDATE c SET status='done', id=?2, result=?3, updated=strftime('%Y-%m-%dT%H:%M:%fZ') WHERE rid=?1");
  pSel=pr(db, bSplit ? "SELECT status, id, result FROM o WHERE key=?1 AND member=0"
                     : "SELECT status, id, result FROM c WHERE key=?1 AND member=0");
  ex(db,"BEGIN"); for(int i=0;i<NCALL;i++) claim1(db,i); ex(db,"COMMIT");
  if( op==0 ){                    /* every call done: a replay finds its outcome */
    ex(db,"BEGIN");
    for(int i=0;i<NCALL;i++){
      sqlite3_bind_int64(pUpd,1,i+1); sqlite3_bind_int64(pUpd,2,i);
      sqlite3_bind_text(pUpd,3,"{\"order\":1,\"ok\":true}",-1,SQLITE_STATIC);
      st(db,pUpd);
    }
    ex(db,"COMMIT");
  }
  runOps(db,op,0,50);             /* warm */
  runOps(db,op,50,n);
  sqlite3_finalize(pIns); sqlite3_finalize(pIns2); sqlite3_finalize(pB);
  sqlite3_finalize(pC); sqlite3_finalize(pUpd); sqlite3_finalize(pSel);
  sqlite3_close(db);
  { static const char *az[] = { "", "-wal", "-shm", "-journal" };
    for(int j=0; j<4; j++){ char g[320]; snprintf(g,sizeof g,"%s%s",f,az[j]); unlink(g); } }
  return 0;
}

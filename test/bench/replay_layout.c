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
**   replay_layout f4|cov|wr|split|rk|rkf|rkc|rkfc wal|delete 0|1|2|3|4 N
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
**   rk     the rid made of the key: a rowid table with no index, a row's
**          rid its key's home, the key's first 47 bits (bits 16 to 62 of
**          the rid), with the member in its 16 low bits (home()); a key
**          whose home another key holds has its rows in the overflow:
**          negative rids, found by ov(key PRIMARY KEY, rid) WITHOUT ROWID
**          (empty but in operation 3)
**   rkf    rk with the outcome (status, id, result) the row's first columns
**   rkc    rk with format 3's UNIQUE(created, rid), which a range of
**          created needs once rid order is not created's (contract §7)
**   rkfc   rkf with UNIQUE(created, rid)
** Operations: 0 a replay (SELECT status, id, result by key and member 0,
** autocommit; rk*: by home rid, key and member 0: the stored key checked);
** 1 a record (BEGIN; UPDATE of status, id, result, updated by rid, as
** idem's record writes; COMMIT); 2 a claim (BEGIN; INSERT; COMMIT; split:
** two INSERTs; rk*: the INSERT gives the home rid); rk* only: 3 a replay
** of a key whose home holds another key (the home's query finds no row,
** then the rid is read from ov), 4 a replay by home rid alone, the stored
** key not checked nor bound (what the check costs: 0 less 4).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#define NCALL 1400
static unsigned char aKey[NCALL+400][16];
static char zArgs[1300];
static sqlite3_stmt *pIns, *pIns2, *pB, *pC, *pUpd, *pSel, *pOv, *pSel4;
static int bHome;                 /* an rk* layout: the rid made of the key */
/* The home rid of key k, member 0: the key's first 47 bits in bits 16 to
** 62, the member's 16 bits below them. */
static sqlite3_int64 home(const unsigned char *k){
  unsigned long long h = 0;
  for(int j=0;j<8;j++) h = (h<<8) | k[j];
  return (sqlite3_int64)((h>>17)<<16);
}
/* The rid of call i: its home (rk*), or i+1 */
static sqlite3_int64 ridOf(int i){ return bHome ? home(aKey[i]) : i+1; }
static void ex(sqlite3 *db, const char *z){ char *e=0; if(sqlite3_exec(db,z,0,0,&e)){fprintf(stderr,"%s: %s\n",z,e);exit(1);} }
static sqlite3_stmt *pr(sqlite3 *db, const char *z){ sqlite3_stmt *p; if(sqlite3_prepare_v2(db,z,-1,&p,0)){fprintf(stderr,"%s: %s\n",z,sqlite3_errmsg(db));exit(1);} return p; }
static void st(sqlite3 *db, sqlite3_stmt *p){ int rc=sqlite3_step(p); if(rc!=SQLITE_DONE && rc!=SQLITE_ROW){fprintf(stderr,"step: %s\n",sqlite3_errmsg(db));exit(1);} sqlite3_reset(p); }
static int order(int i){ return (int)(((long)i*7919L) % NCALL); }
static void claim1(sqlite3 *db, int i){
  sqlite3_bind_blob(pIns,1,aKey[i],16,SQLITE_STATIC);
  sqlite3_bind_int64(pIns,2,ridOf(i));
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
    if( op==0 || op==3 || op==4 ){
      const unsigned char *k = aKey[order(i)];
      sqlite3_stmt *p = op==4 ? pSel4 : pSel;
      if( op!=4 ) sqlite3_bind_blob(p,1,k,16,SQLITE_STATIC);
      if( bHome ) sqlite3_bind_int64(p,2,home(k));
      if( sqlite3_step(p)!=SQLITE_ROW ){
        sqlite3_reset(p);
        if( op!=3 ){ fprintf(stderr,"replay found nothing\n"); exit(1); }
        /* the home holds another key: the overflow's rid */
        p = pOv;
        sqlite3_bind_blob(p,1,k,16,SQLITE_STATIC);
        if( sqlite3_step(p)!=SQLITE_ROW ){ fprintf(stderr,"overflow found nothing\n"); exit(1); }
      }else if( op==3 ){ fprintf(stderr,"home held the key\n"); exit(1); }
      for(int c=0;c<3;c++) nByte += sqlite3_column_bytes(p,c);
      sqlite3_reset(p);
    }else if( op==1 ){
      char z[64]; snprintf(z,sizeof z,"{\"order\":%d,\"ok\":true}",100000+i);
      st(db,pB);
      sqlite3_bind_int64(pUpd,1,ridOf(order(i)));
      sqlite3_bind_int64(pUpd,2,100000+i);
      sqlite3_bind_text(pUpd,3,z,-1,SQLITE_TRANSIENT);
      st(db,pUpd);
      if( sqlite3_changes(db)!=1 ){ fprintf(stderr,"record changed no row\n"); exit(1); }
      st(db,pC);
    }else{
      st(db,pB); claim1(db,NCALL+i); st(db,pC);
    }
  }
  if( op!=1 && op!=2 && nByte==0 ){ fprintf(stderr,"replay read nothing\n"); exit(1); }
}
int main(int argc, char **argv){
  if( argc!=5 ){ fprintf(stderr,"usage: replay_layout f4|cov|wr|split|rk|rkf|rkc|rkfc wal|delete 0|1|2|3|4 N\n"); return 1; }
  const char *zShape=argv[1], *zMode=argv[2]; int op=atoi(argv[3]), n=atoi(argv[4]);
  int bSplit = !strcmp(zShape,"split");
  bHome = zShape[0]=='r' && zShape[1]=='k';
  if( op<0 || op>4 || (op>2 && !bHome) ){ fprintf(stderr,"op: 0, 1, 2; 3 and 4 for rk*\n"); return 1; }
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
  }else if( bHome ){
    int bFirst = strchr(zShape+2,'f')!=0, bCreated = strchr(zShape+2,'c')!=0;
    const char *zOut = "status TEXT, id, result, key BLOB NOT NULL, member INTEGER NOT NULL,"
      " who, conv, tool, args TEXT, kind TEXT, note TEXT, created TEXT NOT NULL,"
      " updated TEXT, keyargs TEXT, owner TEXT, expires TEXT, honours_key INTEGER,"
      " sends INTEGER";
    snprintf(z,sizeof z,"CREATE TABLE c(rid INTEGER PRIMARY KEY, %s%s%s%s);"
      " CREATE TABLE ov(key BLOB PRIMARY KEY, rid INTEGER NOT NULL) WITHOUT ROWID",
      bFirst ? zOut : "key BLOB NOT NULL, member INTEGER NOT NULL, ",
      bFirst ? "" : zCols, bCreated ? ", " : "", bCreated ? "UNIQUE(created, rid)" : "");
  }else if( bSplit ){
    snprintf(z,sizeof z,"CREATE TABLE c(rid INTEGER PRIMARY KEY, key BLOB NOT NULL, member INTEGER NOT NULL, %s); CREATE TABLE o(key BLOB NOT NULL, member INTEGER NOT NULL, rid INTEGER NOT NULL, status TEXT, id, result, note TEXT, updated TEXT, expires TEXT, sends INTEGER, PRIMARY KEY(key, member)) WITHOUT ROWID",zCols);
  }else{
    fprintf(stderr,"layout: f4, cov, wr, split, rk, rkf, rkc or rkfc\n"); return 1;
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
            : bHome ? "SELECT status, id, result FROM c WHERE rid=?2 AND key=?1 AND member=0"
                    : "SELECT status, id, result FROM c WHERE key=?1 AND member=0");
  if( bHome ){
    pSel4=pr(db,"SELECT status, id, result FROM c WHERE rid=?2");
    pOv=pr(db,"SELECT status, id, result FROM c WHERE rid=(SELECT rid FROM ov WHERE key=?1)");
  }
  ex(db,"BEGIN");
  if( op==3 ){
    /* Each call's home held by another key (its last byte changed, the
    ** same home), claimed first; the call in the overflow, rid -(i+1)<<16 */
    sqlite3_stmt *pO = pr(db,"INSERT INTO ov(key, rid) VALUES(?1, ?2)");
    for(int i=0;i<NCALL;i++){
      unsigned char k2[16]; memcpy(k2,aKey[i],16); k2[15] ^= 0x5a;
      sqlite3_bind_blob(pIns,1,k2,16,SQLITE_TRANSIENT);
      sqlite3_bind_int64(pIns,2,home(aKey[i]));
      st(db,pIns);
      sqlite3_bind_blob(pIns,1,aKey[i],16,SQLITE_STATIC);
      sqlite3_bind_int64(pIns,2,-(sqlite3_int64)(i+1)*65536);
      st(db,pIns);
      sqlite3_bind_blob(pO,1,aKey[i],16,SQLITE_STATIC);
      sqlite3_bind_int64(pO,2,-(sqlite3_int64)(i+1)*65536);
      st(db,pO);
    }
    sqlite3_finalize(pO);
  }else{
    for(int i=0;i<NCALL;i++) claim1(db,i);
  }
  ex(db,"COMMIT");
  if( op==0 || op>=3 ){           /* every call done: a replay finds its outcome */
    ex(db,"BEGIN");
    for(int i=0;i<NCALL;i++){
      sqlite3_bind_int64(pUpd,1,op==3 ? -(sqlite3_int64)(i+1)*65536 : ridOf(i));
      sqlite3_bind_int64(pUpd,2,i);
      sqlite3_bind_text(pUpd,3,"{\"order\":1,\"ok\":true}",-1,SQLITE_STATIC);
      st(db,pUpd);
    }
    ex(db,"COMMIT");
  }
  runOps(db,op,0,50);             /* warm */
  runOps(db,op,50,n);
  sqlite3_finalize(pIns); sqlite3_finalize(pIns2); sqlite3_finalize(pB);
  sqlite3_finalize(pC); sqlite3_finalize(pUpd); sqlite3_finalize(pSel);
  sqlite3_finalize(pSel4); sqlite3_finalize(pOv);
  sqlite3_close(db);
  { static const char *az[] = { "", "-wal", "-shm", "-journal" };
    for(int j=0; j<4; j++){ char g[320]; snprintf(g,sizeof g,"%s%s",f,az[j]); unlink(g); } }
  return 0;
}

/* SPDX-License-Identifier: MIT */
/*
** fuzz_key.c -- libFuzzer target: four fields -> idem_key() through SQL.
**
** Input layout:
**
**   byte 0        flags: bit 0, 1, 2  bind who, conv, tool as a blob
**                        bit 3        bind args as a blob (an error)
**                        bit 4        bind one part as NULL (an error),
**                                     which one: bits 5-6
**                        bit 7        also claim it in the virtual table
**   then who, conv, tool: each a 2-byte little-endian length (cut to what
**   is left) and its bytes; args is the rest.
**
** The SQL function runs on a :memory: connection, so the whole function
** path (value types, the shared canonicalizer, errors) is exercised.
** Checked:
**   1. determinism: two calls give the same key, or the same error;
**   2. the key is the XXH3-128 of the frame built here, independently of
**      idemKeyHash() (magic, then four length-prefixed parts), over the
**      canonical text of args, printed high 64 bits first;
**   3. errors are clean: SQLITE_ERROR, a message that starts "idem: ", and
**      they come exactly when a part is NULL, args is a blob or args is not
**      acceptable JSON (idemJsonCanonical() says so, with the same words);
**   4. idem_canonical(args) through SQL is the C canonical text;
**   5. with bit 7, INSERT INTO calls(who, conv, tool, args) claims the
**      same key and stores the canonical args, or fails with an "idem: "
**      error and writes nothing;
**   6. idem_header() of the key is 'Idempotency-Key: "<key>"', and
**      idem_header() of the raw args is an "idem: " error unless they are
**      exactly 32 lowercase hex digits.
*/
#ifndef IDEM_FUZZ_BOTH   /* test/fuzz/fuzz_both.c has included it */
#include "../../ext/idem.c"
#endif

#include <stdio.h>
#include <stdlib.h>

static sqlite3 *db;
static sqlite3_stmt *pKey, *pCanon, *pClaim, *pRead, *pHeader;
static IdemJson *pJson;

static void fail(const char *zWhat, const char *zGot, const char *zWant){
  fprintf(stderr, "fuzz_key: %s\n  got:  %s\n  want: %s\n", zWhat,
          zGot ? zGot : "(null)", zWant ? zWant : "(null)");
  abort();
}

static void setup(void){
  sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK ) abort();
  if( sqlite3_exec(db, "CREATE VIRTUAL TABLE calls USING idem", 0, 0, 0) ) abort();
  if( sqlite3_prepare_v2(db, "SELECT idem_key(?1,?2,?3,?4)", -1, &pKey, 0)
   || sqlite3_prepare_v2(db, "SELECT idem_canonical(?1)", -1, &pCanon, 0)
   || sqlite3_prepare_v2(db, "INSERT INTO calls(who,conv,tool,args)"
                             " VALUES(?1,?2,?3,?4)", -1, &pClaim, 0)
   || sqlite3_prepare_v2(db, "SELECT key, args FROM calls", -1, &pRead, 0)
   || sqlite3_prepare_v2(db, "SELECT idem_header(?1)", -1, &pHeader, 0) ){
    fprintf(stderr, "%s\n", sqlite3_errmsg(db));
    abort();
  }
  pJson = idemJsonNew();
  if( pJson==0 ) abort();
}

/* Bind the four parts to pStmt. */
static void bindParts(sqlite3_stmt *pStmt, int flags, const uint8_t *a[4],
                      const int n[4]){
  int i;
  for(i=0; i<4; i++){
    int bBlob = i<3 ? (flags>>i)&1 : (flags>>3)&1;
    if( (flags & 0x10) && ((flags>>5)&3)==i ){
      sqlite3_bind_null(pStmt, i+1);
    }else if( bBlob ){
      sqlite3_bind_blob(pStmt, i+1, n[i] ? (const void*)a[i] : "", n[i], SQLITE_STATIC);
    }else{
      sqlite3_bind_text(pStmt, i+1, n[i] ? (const char*)a[i] : "", n[i], SQLITE_STATIC);
    }
  }
}

/* Run idem_key(): the key into zOut, or the error message (with "!"). */
static void runKey(int flags, const uint8_t *a[4], const int n[4],
                   char *zOut, int nOut){
  int rc;
  bindParts(pKey, flags, a, n);
  rc = sqlite3_step(pKey);
  if( rc==SQLITE_ROW ){
    const char *z = (const char*)sqlite3_column_text(pKey, 0);
    if( sqlite3_column_type(pKey, 0)!=SQLITE_TEXT || z==0 ) fail("key is not text", 0, 0);
    snprintf(zOut, nOut, "%s", z);
  }else{
    if( sqlite3_errcode(db)!=SQLITE_ERROR ){
      char zCode[32];
      snprintf(zCode, sizeof(zCode), "%d", sqlite3_errcode(db));
      fail("error code", zCode, "1 (SQLITE_ERROR)");
    }
    snprintf(zOut, nOut, "!%s", sqlite3_errmsg(db));
  }
  sqlite3_reset(pKey);
  sqlite3_clear_bindings(pKey);
}

static void putLe32(unsigned char *z, int n){
  z[0] = (unsigned char)n; z[1] = (unsigned char)(n>>8);
  z[2] = (unsigned char)(n>>16); z[3] = (unsigned char)(n>>24);
}

int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData){
  const uint8_t *a[4];
  int n[4];
  int flags, i, rc, bNull, bBlobArgs, nCanon = 0;
  size_t iPos = 1;
  char zKey1[600], zKey2[600], zWant[600];
  const char *zCanon = 0;

  if( db==0 ) setup();
  if( nData<1 || nData>0x100000 ) return 0;
  flags = aData[0];
  for(i=0; i<3; i++){
    int len = 0;
    if( iPos+2<=nData ){
      len = aData[iPos] | aData[iPos+1]<<8;
      iPos += 2;
    }else{
      iPos = nData;
    }
    if( (size_t)len>nData-iPos ) len = (int)(nData-iPos);
    a[i] = aData + iPos;
    n[i] = len;
    iPos += len;
  }
  a[3] = aData + iPos;
  n[3] = (int)(nData - iPos);
  bNull = (flags & 0x10)!=0;
  bBlobArgs = (flags & 0x08)!=0 && !(bNull && ((flags>>5)&3)==3);

  /* 1. Determinism. */
  runKey(flags, a, n, zKey1, sizeof(zKey1));
  runKey(flags, a, n, zKey2, sizeof(zKey2));
  if( strcmp(zKey1, zKey2)!=0 ) fail("two calls differ", zKey2, zKey1);

  /* 2, 3. The expected answer. */
  if( bNull ){
    static const char *azPart[] = { "who", "conv", "tool", "args" };
    snprintf(zWant, sizeof(zWant), "!idem: idem_key(): %s is NULL; %s",
             azPart[(flags>>5)&3],
             ((flags>>5)&3)==3 ? "expected JSON text"
                               : "every part of a key must be given");
  }else if( bBlobArgs ){
    snprintf(zWant, sizeof(zWant),
             "!idem: idem_key(): args is a blob; expected JSON text");
  }else{
    rc = idemJsonCanonical(pJson, (const char*)a[3], n[3]);
    if( rc==SQLITE_OK ){
      XXH128_hash_t h;
      XXH128_canonical_t c;
      size_t nFrame = 8;
      unsigned char *zFrame, *z;
      zCanon = idemJsonText(pJson, &nCanon);
      for(i=0; i<3; i++) nFrame += 4 + n[i];
      nFrame += 4 + nCanon;
      zFrame = z = malloc(nFrame);
      if( zFrame==0 ) abort();
      memcpy(z, "idem:v1", 8); z += 8;
      for(i=0; i<4; i++){
        const void *p = i<3 ? (const void*)a[i] : (const void*)zCanon;
        int np = i<3 ? n[i] : nCanon;
        putLe32(z, np); z += 4;
        if( np ) memcpy(z, p, np);
        z += np;
      }
      h = XXH3_128bits(zFrame, nFrame);
      XXH128_canonicalFromHash(&c, h);
      for(i=0; i<16; i++) sprintf(zWant+2*i, "%02x", c.digest[i]);
      free(zFrame);
    }else if( rc==SQLITE_ERROR ){
      snprintf(zWant, sizeof(zWant), "!idem: idem_key(): args must be JSON text: %s",
               idemJsonError(pJson));
    }else{
      abort();
    }
  }
  /* A NULL part comes before args in the order the parts are checked, so
  ** it is the error reported even when args is a blob too. */
  if( strcmp(zKey1, zWant)!=0 ) fail("idem_key()", zKey1, zWant);
  if( zKey1[0]=='!' && strncmp(zKey1, "!idem: ", 7)!=0 ) fail("error prefix", zKey1, "!idem: ...");

  /* 4. idem_canonical() through SQL. */
  if( !bNull && !bBlobArgs ){
    sqlite3_bind_text(pCanon, 1, n[3] ? (const char*)a[3] : "", n[3], SQLITE_STATIC);
    rc = sqlite3_step(pCanon);
    if( zCanon ){
      if( rc!=SQLITE_ROW
       || sqlite3_column_bytes(pCanon, 0)!=nCanon
       || memcmp(sqlite3_column_text(pCanon, 0), zCanon, nCanon)!=0 ){
        fail("idem_canonical()", rc==SQLITE_ROW
             ? (const char*)sqlite3_column_text(pCanon, 0) : sqlite3_errmsg(db), zCanon);
      }
    }else if( rc==SQLITE_ROW ){
      fail("idem_canonical() accepted what the C interface rejects",
           (const char*)sqlite3_column_text(pCanon, 0), zWant);
    }else if( strncmp(sqlite3_errmsg(db), "idem: idem_canonical(): ", 24)!=0 ){
      fail("idem_canonical() error", sqlite3_errmsg(db), "idem: idem_canonical(): ...");
    }
    sqlite3_reset(pCanon);
  }

  /* 6. idem_header(). */
  if( zKey1[0]!='!' ){
    char zHeader[80];
    snprintf(zHeader, sizeof(zHeader), "Idempotency-Key: \"%s\"", zKey1);
    sqlite3_bind_text(pHeader, 1, zKey1, -1, SQLITE_STATIC);
    if( sqlite3_step(pHeader)!=SQLITE_ROW
     || strcmp((const char*)sqlite3_column_text(pHeader, 0), zHeader)!=0 ){
      fail("idem_header(key)", (const char*)sqlite3_column_text(pHeader, 0), zHeader);
    }
    sqlite3_reset(pHeader);
  }
  {
    int bHex = n[3]==32;
    for(i=0; bHex && i<32; i++){
      bHex = (a[3][i]>='0' && a[3][i]<='9') || (a[3][i]>='a' && a[3][i]<='f');
    }
    sqlite3_bind_text(pHeader, 1, n[3] ? (const char*)a[3] : "", n[3], SQLITE_STATIC);
    rc = sqlite3_step(pHeader);
    if( bHex ? rc!=SQLITE_ROW
             : (rc!=SQLITE_ERROR || strncmp(sqlite3_errmsg(db), "idem: ", 6)!=0) ){
      fail("idem_header(args)", rc==SQLITE_ROW
           ? (const char*)sqlite3_column_text(pHeader, 0) : sqlite3_errmsg(db),
           bHex ? "a header" : "an idem: error");
    }
    sqlite3_reset(pHeader);
  }

  /* 5. The claim. */
  if( flags & 0x80 ){
    sqlite3_exec(db, "BEGIN", 0, 0, 0);
    bindParts(pClaim, flags, a, n);
    rc = sqlite3_step(pClaim);
    sqlite3_reset(pClaim);
    sqlite3_clear_bindings(pClaim);
    if( rc==SQLITE_DONE ){
      if( zKey1[0]=='!' ) fail("claimed what idem_key() refuses", "ok", zKey1);
      if( sqlite3_changes(db)!=1 ) fail("claim changed no row", 0, 0);
      if( sqlite3_step(pRead)!=SQLITE_ROW ) fail("claim not there", 0, 0);
      if( strcmp((const char*)sqlite3_column_text(pRead, 0), zKey1)!=0 ){
        fail("claim's key", (const char*)sqlite3_column_text(pRead, 0), zKey1);
      }
      if( sqlite3_column_bytes(pRead, 1)!=nCanon
       || memcmp(sqlite3_column_text(pRead, 1), zCanon, nCanon)!=0 ){
        fail("claim's args", (const char*)sqlite3_column_text(pRead, 1), zCanon);
      }
      if( sqlite3_step(pRead)!=SQLITE_DONE ) fail("more than one row", 0, 0);
      sqlite3_reset(pRead);
    }else{
      if( zKey1[0]!='!' ) fail("claim refused", sqlite3_errmsg(db), zKey1);
      if( strncmp(sqlite3_errmsg(db), "idem: ", 6)!=0 ){
        fail("claim error prefix", sqlite3_errmsg(db), "idem: ...");
      }
      if( sqlite3_step(pRead)!=SQLITE_DONE ) fail("a refused claim wrote", 0, 0);
      sqlite3_reset(pRead);
    }
    sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
  }
  return 0;
}

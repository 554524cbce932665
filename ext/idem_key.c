/*
** idem_key.c -- the key of a call (SPEC.md §2) and its header (§6).
**
**   idem_key(who, conv, tool, args)  -> 32 lowercase hex digits
**   idem_header(key)                 -> 'Idempotency-Key: "<key>"'
**
** The key is XXH3-128 over a frame:
**
**   "idem:v1\0"  then, for who, conv, tool and canonical(args) in turn,
**   a 4-byte little-endian length and the part's bytes
**
** printed as xxHash's canonical (big-endian) form: high 64 bits first.
** The length prefixes make the parts unambiguous.  The format is frozen:
** keys live in databases and travel to other systems.  Text, integer and
** real parts are taken as SQLite's text of them, a blob who/conv/tool as
** its bytes; a NULL part is an error, and args must be JSON text.
**
** Interface for the other parts (all static, one translation unit):
**
**   IdemPart                   a (pointer, length) view of one part
**   idemKeyHash(aPart, aKey)   the 16-byte key of four parts, args already
**                              canonical
**   idemKeyHex(aKey, zHex)     the 32-digit text form
**   idemKeyFromHex(z, n, aKey) parse the text form (1 if valid)
**   idemKeyPart(pVal, &part)   SQLite value -> part (0 if NULL)
**   idemKeyRegister(db)        the SQL functions
*/
#define XXH_INLINE_ALL
#include <xxhash.h>

#define IDEM_KEY_MAGIC      "idem:v1"      /* with its NUL: 8 bytes */
#define IDEM_KEY_MAGIC_LEN  8
#define IDEM_KEY_BYTES      16
#define IDEM_KEY_HEX        32

typedef struct IdemPart IdemPart;
struct IdemPart {
  const void *p;            /* The part's bytes */
  sqlite3_int64 n;          /* Their number */
};

static void idemPutLe32(unsigned char *a, sqlite3_int64 n){
  a[0] = (unsigned char)(n);
  a[1] = (unsigned char)(n>>8);
  a[2] = (unsigned char)(n>>16);
  a[3] = (unsigned char)(n>>24);
}

/*
** The key of four parts, aPart[3] being the canonical args.  Small frames
** (nearly all of them) are hashed in one shot from a stack buffer; larger
** ones are streamed, so that no part is ever copied to the heap.
*/
static void idemKeyHash(const IdemPart aPart[4], unsigned char aKey[16]){
  unsigned char aBuf[2048];
  XXH128_hash_t h;
  XXH128_canonical_t c;
  sqlite3_int64 nFrame = IDEM_KEY_MAGIC_LEN;
  int i;
  for(i=0; i<4; i++) nFrame += 4 + aPart[i].n;
  if( nFrame<=(sqlite3_int64)sizeof(aBuf) ){
    unsigned char *z = aBuf;
    memcpy(z, IDEM_KEY_MAGIC, IDEM_KEY_MAGIC_LEN);
    z += IDEM_KEY_MAGIC_LEN;
    for(i=0; i<4; i++){
      idemPutLe32(z, aPart[i].n);
      z += 4;
      if( aPart[i].n ) memcpy(z, aPart[i].p, (size_t)aPart[i].n);
      z += aPart[i].n;
    }
    h = XXH3_128bits(aBuf, (size_t)nFrame);
  }else{
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    XXH3_128bits_update(&st, IDEM_KEY_MAGIC, IDEM_KEY_MAGIC_LEN);
    for(i=0; i<4; i++){
      unsigned char aLen[4];
      idemPutLe32(aLen, aPart[i].n);
      XXH3_128bits_update(&st, aLen, 4);
      if( aPart[i].n ) XXH3_128bits_update(&st, aPart[i].p, (size_t)aPart[i].n);
    }
    h = XXH3_128bits_digest(&st);
  }
  XXH128_canonicalFromHash(&c, h);
  memcpy(aKey, c.digest, IDEM_KEY_BYTES);
}

static void idemKeyHex(const unsigned char aKey[16], char zHex[33]){
  static const char aDigit[] = "0123456789abcdef";
  int i;
  for(i=0; i<IDEM_KEY_BYTES; i++){
    zHex[2*i] = aDigit[aKey[i]>>4];
    zHex[2*i+1] = aDigit[aKey[i]&0xf];
  }
  zHex[IDEM_KEY_HEX] = 0;
}

/* Value of lowercase hex digit c, or -1. */
static int idemHexDigit(int c){
  if( c>='0' && c<='9' ) return c-'0';
  if( c>='a' && c<='f' ) return c-'a'+10;
  return -1;
}

/* Parse the text form of a key: exactly 32 lowercase hex digits. */
static int idemKeyFromHex(const char *z, sqlite3_int64 n, unsigned char aKey[16]){
  int i;
  if( z==0 || n!=IDEM_KEY_HEX ) return 0;
  for(i=0; i<IDEM_KEY_BYTES; i++){
    int hi = idemHexDigit((unsigned char)z[2*i]);
    int lo = idemHexDigit((unsigned char)z[2*i+1]);
    if( hi<0 || lo<0 ) return 0;
    aKey[i] = (unsigned char)(hi<<4 | lo);
  }
  return 1;
}

/*
** One part from an SQL value: a blob as its bytes, anything else as its
** text.  Returns 0 for NULL, and for an out-of-memory text conversion
** (check sqlite3_errcode or treat as NOMEM when the value was not NULL).
*/
static int idemKeyPart(sqlite3_value *pVal, IdemPart *pPart){
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_NULL:
      return 0;
    case SQLITE_BLOB:
      pPart->p = sqlite3_value_blob(pVal);
      pPart->n = sqlite3_value_bytes(pVal);
      if( pPart->p==0 ) pPart->p = "";
      return 1;
    case SQLITE_TEXT: {
      int n;
      pPart->p = idemValueUtf8(pVal, &n);
      pPart->n = n;
      return pPart->p!=0;
    }
    default:
      pPart->p = sqlite3_value_text(pVal);
      pPart->n = sqlite3_value_bytes(pVal);
      return pPart->p!=0;
  }
}

/*
** The state behind idem_key(): a canonicalizer reused from call to call.
** A call that finds it busy (idem_key() inside idem_key(), through a
** nested statement) uses a private one.
*/
typedef struct IdemKeyFunc IdemKeyFunc;
struct IdemKeyFunc {
  IdemJson *pJson;          /* Reusable canonicalizer, or NULL */
  int bBusy;                /* True while pJson is in use */
};

static void idemKeyFuncFree(void *p){
  IdemKeyFunc *pF = (IdemKeyFunc*)p;
  if( pF ){
    idemJsonFree(pF->pJson);
    sqlite3_free(pF);
  }
}

static const char *const azIdemKeyPart[] = { "who", "conv", "tool", "args" };

/* idem_key(who, conv, tool, args) */
static void idemKeyFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  IdemKeyFunc *pF = (IdemKeyFunc*)sqlite3_user_data(ctx);
  IdemJson *pJson = 0;
  IdemPart aPart[4];
  unsigned char aKey[IDEM_KEY_BYTES];
  char zHex[IDEM_KEY_HEX+1];
  int nText = 0;
  int i, rc;
  (void)argc;

  for(i=0; i<4; i++){
    int eType = sqlite3_value_type(argv[i]);
    if( eType==SQLITE_NULL || (i==3 && eType==SQLITE_BLOB) ){
      char *zErr = sqlite3_mprintf("idem: idem_key(): %s is %s; %s",
          azIdemKeyPart[i], eType==SQLITE_NULL ? "NULL" : "a blob",
          i==3 ? "expected JSON text" : "every part of a key must be given");
      if( zErr==0 ){
        sqlite3_result_error_nomem(ctx);
      }else{
        sqlite3_result_error(ctx, zErr, -1);
        sqlite3_free(zErr);
      }
      return;
    }
    if( !idemKeyPart(argv[i], &aPart[i]) ){
      sqlite3_result_error_nomem(ctx);
      return;
    }
  }

  if( pF->bBusy || pF->pJson==0 ){
    pJson = idemJsonNew();
    if( pJson==0 ){ sqlite3_result_error_nomem(ctx); return; }
    if( !pF->bBusy && pF->pJson==0 ) pF->pJson = pJson;
  }else{
    pJson = pF->pJson;
  }
  if( pJson==pF->pJson ) pF->bBusy = 1;
  rc = idemJsonCanonical(pJson, (const char*)aPart[3].p, (int)aPart[3].n);
  if( rc==SQLITE_OK ){
    aPart[3].p = idemJsonText(pJson, &nText);
    aPart[3].n = nText;
    idemKeyHash(aPart, aKey);
    idemKeyHex(aKey, zHex);
    sqlite3_result_text(ctx, zHex, IDEM_KEY_HEX, SQLITE_TRANSIENT);
  }else if( rc==SQLITE_ERROR || rc==SQLITE_TOOBIG ){
    char *zErr = sqlite3_mprintf(rc==SQLITE_ERROR
                     ? "idem: idem_key(): args must be JSON text: %s"
                     : "idem: idem_key(): args: %s", idemJsonError(pJson));
    if( zErr==0 ){
      sqlite3_result_error_nomem(ctx);
    }else{
      sqlite3_result_error(ctx, zErr, -1);
      sqlite3_free(zErr);
    }
    if( rc!=SQLITE_ERROR ) sqlite3_result_error_code(ctx, rc);
  }else if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else{
    sqlite3_result_error_code(ctx, rc);
  }
  if( pJson==pF->pJson ){
    pF->bBusy = 0;
  }else{
    idemJsonFree(pJson);
  }
}

/* idem_header(key) -> 'Idempotency-Key: "<key>"' (IETF draft form). */
static void idemHeaderFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  unsigned char aKey[IDEM_KEY_BYTES];
  const char *z = (const char*)sqlite3_value_text(argv[0]);
  int n = sqlite3_value_bytes(argv[0]);
  char zOut[64];
  (void)argc;
  if( sqlite3_value_type(argv[0])!=SQLITE_TEXT || !idemKeyFromHex(z, n, aKey) ){
    sqlite3_result_error(ctx,
      "idem: idem_header(): key must be 32 lowercase hex digits, "
      "as idem_key() returns", -1);
    return;
  }
  memcpy(zOut, "Idempotency-Key: \"", 18);
  memcpy(zOut+18, z, IDEM_KEY_HEX);
  zOut[18+IDEM_KEY_HEX] = '"';
  sqlite3_result_text(ctx, zOut, 18+IDEM_KEY_HEX+1, SQLITE_TRANSIENT);
}

static int idemKeyRegister(sqlite3 *db){
  const int flags = SQLITE_UTF8|SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS;
  IdemKeyFunc *pF;
  int rc;
  pF = (IdemKeyFunc*)sqlite3_malloc(sizeof(*pF));
  if( pF==0 ) return SQLITE_NOMEM;
  memset(pF, 0, sizeof(*pF));
  rc = sqlite3_create_function_v2(db, "idem_key", 4, flags, pF,
      idemKeyFunc, 0, 0, idemKeyFuncFree);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "idem_header", 1, flags, 0,
        idemHeaderFunc, 0, 0);
  }
  return rc;
}

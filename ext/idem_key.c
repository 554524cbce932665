/* SPDX-License-Identifier: MIT */
/*
** idem_key.c -- the key of a call (doc/contract.md §2) and its header (§6).
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
** keys live in databases and travel to other systems (doc/contract.md §2).
**
** A part is: text, its UTF-8 bytes; a blob who/conv/tool, its bytes; an
** integer, its decimal digits; a real, the ECMAScript form of that double,
** the printer of canonical JSON (42.0 gives "42", 0.30000000000000004
** keeps every digit), never SQLite's 15-digit text of a real.  So the same
** call bound from Python (42) and from Node (42.0: better-sqlite3 binds
** every JS number as a double) has one key, and two different doubles
** never share one.  args is JSON text, or an SQL integer or real taken as
** that JSON number.  A NULL part, a blob args and a real that is not
** finite (no JSON form) are errors.
**
** Interface for the other parts: "Interface to code in idem_key.c" in
** idemInt.h (IdemPart, idemKeyHash(), idemKeyHex(), idemKeyFromHex(), ...).
*/
#include "idemInt.h"

/* On x86-64 a frame longer than 240 bytes is hashed by xxHash's own AVX2
** kernels where the CPU has AVX2 (chosen at run time, as xxHash's
** xxh_x86dispatch.c does), else by its SSE2 ones: the same hash, with half
** the instructions.  That holds for the frames hashed in one shot and for
** the long ones streamed (idemXxhUpdate(): xxHash's own streaming loop,
** XXH3_update(), given the AVX2 kernels, as xxh_x86dispatch.c's
** XXH3_128bits_update_avx2() does).  The kernels are xxHash's internal
** functions, whose names change between releases: the choice is made only
** for the release it was written against (0.8.1, Debian 12's); any other
** uses the default. */
#ifdef IDEM_AVX2
# define XXH_DISPATCH_AVX2 1
# define XXH_TARGET_AVX2 __attribute__((target("avx2")))
/* The AVX2 kernels load the accumulator as aligned 32-byte vectors; the
** header aligns it for the vector width it was compiled for (SSE2: 16),
** so ask for 32 here, as xxh_x86dispatch.c does (XXH_X86DISPATCH).  An
** optimized build happened to use unaligned loads; -O0 faulted. */
# define XXH_ACC_ALIGN 32
#endif
#define XXH_INLINE_ALL
#include <xxhash.h>

#if defined(XXH_DISPATCH_AVX2) && XXH_VERSION_NUMBER==801
XXH_NO_INLINE XXH_TARGET_AVX2 XXH128_hash_t idemXxhLongAvx2(
  const void *p,
  size_t n
){
  return XXH3_hashLong_128b_internal(p, n, XXH3_kSecret, sizeof(XXH3_kSecret),
                                     XXH3_accumulate_512_avx2,
                                     XXH3_scrambleAcc_avx2);
}
static XXH128_hash_t idemXxh128(const void *p, size_t n){
  if( n>XXH3_MIDSIZE_MAX && idemHasAvx2() ){
    return idemXxhLongAvx2(p, n);
  }
  return XXH3_128bits(p, n);
}
XXH_NO_INLINE XXH_TARGET_AVX2 void idemXxhUpdateAvx2(
  XXH3_state_t *pState,
  const void *p,
  size_t n
){
  XXH3_update(pState, (const xxh_u8*)p, n, XXH3_accumulate_512_avx2,
              XXH3_scrambleAcc_avx2);
}
static void idemXxhUpdate(XXH3_state_t *pState, const void *p, size_t n){
  if( idemHasAvx2() ){
    idemXxhUpdateAvx2(pState, p, n);
  }else{
    XXH3_128bits_update(pState, p, n);
  }
}
#else
# define idemXxh128 XXH3_128bits
# define idemXxhUpdate(S,P,N) XXH3_128bits_update(S,P,N)
#endif

#define IDEM_KEY_MAGIC      "idem:v1"      /* with its NUL: 8 bytes */
#define IDEM_KEY_MAGIC_LEN  8

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
IDEM_PRIVATE void idemKeyHash(const IdemPart aPart[4], unsigned char aKey[16]){
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
    h = idemXxh128(aBuf, (size_t)nFrame);
  }else{
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    idemXxhUpdate(&st, IDEM_KEY_MAGIC, IDEM_KEY_MAGIC_LEN);
    for(i=0; i<4; i++){
      unsigned char aLen[4];
      idemPutLe32(aLen, aPart[i].n);
      idemXxhUpdate(&st, aLen, 4);
      if( aPart[i].n ) idemXxhUpdate(&st, aPart[i].p, (size_t)aPart[i].n);
    }
    h = XXH3_128bits_digest(&st);
  }
  XXH128_canonicalFromHash(&c, h);
  memcpy(aKey, c.digest, IDEM_KEY_BYTES);
}

IDEM_PRIVATE void idemKeyHex(const unsigned char aKey[16], char zHex[33]){
#ifdef IDEM_SSE2
  /* The 32 nibbles at once: each becomes '0' + n, plus 'a'-'0'-10 where
  ** n > 9; the high nibble of each byte goes first. */
  __m128i v = _mm_loadu_si128((const __m128i*)(const void*)aKey);
  __m128i lo = _mm_and_si128(v, _mm_set1_epi8(0x0f));
  __m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(0x0f));
  __m128i a = _mm_unpacklo_epi8(hi, lo);
  __m128i b = _mm_unpackhi_epi8(hi, lo);
  const __m128i nine = _mm_set1_epi8(9);
  const __m128i zero = _mm_set1_epi8('0');
  const __m128i gap = _mm_set1_epi8('a'-'0'-10);
  a = _mm_add_epi8(_mm_add_epi8(a, zero),
                   _mm_and_si128(_mm_cmpgt_epi8(a, nine), gap));
  b = _mm_add_epi8(_mm_add_epi8(b, zero),
                   _mm_and_si128(_mm_cmpgt_epi8(b, nine), gap));
  _mm_storeu_si128((__m128i*)(void*)zHex, a);
  _mm_storeu_si128((__m128i*)(void*)(zHex+16), b);
#else
  static const char aDigit[] = IDEM_HEX_DIGITS;
  int i;
  for(i=0; i<IDEM_KEY_BYTES; i++){
    zHex[2*i] = aDigit[aKey[i]>>4];
    zHex[2*i+1] = aDigit[aKey[i]&0xf];
  }
#endif
  zHex[IDEM_KEY_HEX] = 0;
}

#ifndef IDEM_SSE2
/* Value of lowercase hex digit c, or 0xff.  Uppercase is refused: a key has
** one text form, so that keys compare as text.  (JSON's \u escapes take
** either case: idemJsonHexVal[] in idem_canonical.c.)  Without SSE2 only:
** idemKeyFromHex() reads the 32 digits at once where it has it. */
#define X 0xff
static const unsigned char idemHexVal[256] = {
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,
  0,1,2,3,4,5,6,7,8,9,X,X,X,X,X,X,
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,
  X,10,11,12,13,14,15,X,X,X,X,X,X,X,X,X,
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,
  X,X,X,X,X,X,X,X,X,X,X,X,X,X,X,X
};
#undef X
#endif

/* Parse the text form of a key: exactly 32 lowercase hex digits.  (A
** replay and a record parse a key at every lookup: with SSE2 the 32
** digits at once; elsewhere by a table, and one test at the end.) */
IDEM_PRIVATE int idemKeyFromHex(const char *z, sqlite3_int64 n, unsigned char aKey[16]){
  if( z==0 || n!=IDEM_KEY_HEX ) return 0;
#ifdef IDEM_SSE2
  {
    /* Each byte '0'..'9' or 'a'..'f' (compared signed: a byte from 0x80
    ** is below both); its value its low four bits, 9 more for a letter;
    ** each two (the high half first) one byte of the key. */
    const __m128i m0f = _mm_set1_epi8(0x0f);
    __m128i a = _mm_loadu_si128((const __m128i*)(const void*)z);
    __m128i b = _mm_loadu_si128((const __m128i*)(const void*)(z+16));
    __m128i aL = _mm_and_si128(_mm_cmpgt_epi8(a, _mm_set1_epi8('a'-1)),
                               _mm_cmplt_epi8(a, _mm_set1_epi8('f'+1)));
    __m128i bL = _mm_and_si128(_mm_cmpgt_epi8(b, _mm_set1_epi8('a'-1)),
                               _mm_cmplt_epi8(b, _mm_set1_epi8('f'+1)));
    __m128i aD = _mm_and_si128(_mm_cmpgt_epi8(a, _mm_set1_epi8('0'-1)),
                               _mm_cmplt_epi8(a, _mm_set1_epi8('9'+1)));
    __m128i bD = _mm_and_si128(_mm_cmpgt_epi8(b, _mm_set1_epi8('0'-1)),
                               _mm_cmplt_epi8(b, _mm_set1_epi8('9'+1)));
    __m128i ok = _mm_and_si128(_mm_or_si128(aL, aD), _mm_or_si128(bL, bD));
    const __m128i nine = _mm_set1_epi8(9);
    const __m128i mf0 = _mm_set1_epi16(0x00f0);
    a = _mm_add_epi8(_mm_and_si128(a, m0f), _mm_and_si128(aL, nine));
    b = _mm_add_epi8(_mm_and_si128(b, m0f), _mm_and_si128(bL, nine));
    a = _mm_or_si128(_mm_and_si128(_mm_slli_epi16(a, 4), mf0),
                     _mm_srli_epi16(a, 8));
    b = _mm_or_si128(_mm_and_si128(_mm_slli_epi16(b, 4), mf0),
                     _mm_srli_epi16(b, 8));
    _mm_storeu_si128((__m128i*)(void*)aKey, _mm_packus_epi16(a, b));
    return _mm_movemask_epi8(ok)==0xffff;
  }
#else
  {
    const unsigned char *u = (const unsigned char*)z;
    unsigned int bad = 0;
    int i;
    for(i=0; i<IDEM_KEY_BYTES; i++){
      unsigned int hi = idemHexVal[u[2*i]];
      unsigned int lo = idemHexVal[u[2*i+1]];
      bad |= hi | lo;
      aKey[i] = (unsigned char)(hi<<4 | (lo & 0xf));
    }
    return (bad & 0xf0)==0;
  }
#endif
}

/* The key given as an SQL value: text of exactly 32 lowercase hex digits.
** Read where it lies (idemValueUtf8()): a key bound with its length, as
** drivers bind text, is not copied to end it with a NUL at every lookup. */
IDEM_PRIVATE int idemKeyFromValue(sqlite3_value *pVal,
                                  unsigned char aKey[IDEM_KEY_BYTES]){
  const char *z;
  int n;
  if( sqlite3_value_type(pVal)!=SQLITE_TEXT ) return 0;
  z = idemValueUtf8(pVal, &n);
  return idemKeyFromHex(z, n, aKey);
}

/*
** One part from a non-NULL SQL value (doc/contract.md §2): a blob as its
** bytes, text as its UTF-8 bytes, an integer or a real as its JSON number
** text, written into pPart->aNum.  Returns SQLITE_OK, SQLITE_NOMEM (a text
** conversion failed), or SQLITE_MISMATCH for a real that is not finite.
** The part points into pPart or into pVal: it must not be copied, and
** lives as long as both.
*/
IDEM_PRIVATE int idemKeyPartFrom(sqlite3_value *pVal, IdemPart *pPart){
  int n;
  assert( sqlite3_value_type(pVal)!=SQLITE_NULL );  /* callers refuse NULL */
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_BLOB:
      pPart->p = sqlite3_value_blob(pVal);
      pPart->n = sqlite3_value_bytes(pVal);
      if( pPart->p==0 ) pPart->p = "";
      return SQLITE_OK;
    case SQLITE_TEXT:
      pPart->p = idemValueUtf8(pVal, &n);
      pPart->n = n;
      return pPart->p ? SQLITE_OK : SQLITE_NOMEM;
    case SQLITE_INTEGER:
    case SQLITE_FLOAT:
      n = idemJsonNumberText(pVal, pPart->aNum);
      if( n<0 ) return SQLITE_MISMATCH;
      pPart->p = pPart->aNum;
      pPart->n = n;
      return SQLITE_OK;
    default:                  /* SQLITE_NULL: never, as asserted above */
      pPart->p = sqlite3_value_text(pVal);
      pPart->n = sqlite3_value_bytes(pVal);
      return pPart->p ? SQLITE_OK : SQLITE_NOMEM;
  }
}

/*
** The state behind idem_key(): a canonicalizer reused from call to call
** (idemJsonAcquire()).
*/
typedef struct IdemKeyFunc IdemKeyFunc;
struct IdemKeyFunc {
  IdemJson *pJson;          /* Reusable canonicalizer, or NULL */
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
  IdemJson *pJson;
  IdemPart aPart[4];
  unsigned char aKey[IDEM_KEY_BYTES];
  char zHex[IDEM_KEY_HEX+1];
  int nText = 0;
  int i, rc;
  (void)argc;

  for(i=0; i<4; i++){
    int eType = sqlite3_value_type(argv[i]);
    if( eType==SQLITE_NULL || (i==3 && eType==SQLITE_BLOB) ){
      idemResultError(ctx, SQLITE_ERROR, "idem_key(): %s is %s; %s",
          azIdemKeyPart[i], eType==SQLITE_NULL ? "NULL" : "a blob",
          i==3 ? "expected JSON text" : "every part of a key must be given");
      return;
    }
    if( eType==SQLITE_TEXT ){       /* the usual part: its bytes as they are */
      int n;
      aPart[i].p = idemValueUtf8(argv[i], &n);
      aPart[i].n = n;
      rc = aPart[i].p ? SQLITE_OK : SQLITE_NOMEM;
    }else{
      rc = idemKeyPartFrom(argv[i], &aPart[i]);
    }
    if( rc==SQLITE_MISMATCH ){
      idemResultError(ctx, SQLITE_ERROR, "idem_key(): %s "
                      IDEM_KEY_NONFINITE, azIdemKeyPart[i]);
      return;
    }
    if( rc!=SQLITE_OK ){
      idemResultError(ctx, SQLITE_NOMEM, 0);
      return;
    }
  }

  pJson = idemJsonAcquire(&pF->pJson);
  if( pJson==0 ){ idemResultError(ctx, SQLITE_NOMEM, 0); return; }
  rc = idemJsonCanonical(pJson, (const char*)aPart[3].p, (int)aPart[3].n);
  if( rc==SQLITE_OK ){
    aPart[3].p = idemJsonText(pJson, &nText);
    aPart[3].n = nText;
    idemKeyHash(aPart, aKey);
    idemKeyHex(aKey, zHex);
    sqlite3_result_text(ctx, zHex, IDEM_KEY_HEX, SQLITE_TRANSIENT);
  }else{                    /* SQLITE_ERROR, SQLITE_TOOBIG, SQLITE_NOMEM */
    idemResultError(ctx, rc, rc==SQLITE_ERROR
                    ? "idem_key(): args must be JSON text: %s"
                    : "idem_key(): args: %s", idemJsonError(pJson));
  }
  idemJsonRelease(&pF->pJson, pJson);
}

/* idem_header(key) -> 'Idempotency-Key: "<key>"' (IETF draft form). */
static void idemHeaderFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  unsigned char aKey[IDEM_KEY_BYTES];
  const char *z = (const char*)sqlite3_value_text(argv[0]);
  int n = sqlite3_value_bytes(argv[0]);
  char zOut[64];
  (void)argc;
  if( sqlite3_value_type(argv[0])!=SQLITE_TEXT || !idemKeyFromHex(z, n, aKey) ){
    idemResultError(ctx, SQLITE_ERROR, "idem_header(): key must be 32"
                    " lowercase hex digits, as idem_key() returns");
    return;
  }
  memcpy(zOut, "Idempotency-Key: \"", 18);
  memcpy(zOut+18, z, IDEM_KEY_HEX);
  zOut[18+IDEM_KEY_HEX] = '"';
  sqlite3_result_text(ctx, zOut, 18+IDEM_KEY_HEX+1, SQLITE_TRANSIENT);
}

IDEM_PRIVATE int idemKeyRegister(sqlite3 *db){
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

/* SPDX-License-Identifier: MIT */
/*
** idem_canonical.c -- canonical JSON (RFC 8785, JCS) with a strict parser.
**
** Part of the idem extension; its interface is declared in idemInt.h, and
** idem.c #includes this file, so everything is static.
**
** USAGE
**
**     SELECT idem_canonical('{ "b": 2.50, "a": [1E2, "\u00e9"] }');
**         -- {"a":[100,"é"],"b":2.5}
**
** idem_canonical(J) returns the RFC 8785 canonical text of the JSON text J:
** no insignificant whitespace; object members sorted by the UTF-16 code
** units of their unescaped names, recursively; strings with the minimal
** escaping of RFC 8785 (only '"', '\' and control characters are escaped,
** the latter as \b \t \n \f \r or lowercase \u00xx); numbers as ECMAScript
** prints a double, except that an integer literal beyond 2^53 keeps its
** digits (idem_number.c).  An integer or real argument is that JSON number:
** an integer's digits, a real as ECMAScript prints that double (1.0 -> 1,
** 0.1+0.2 -> 0.30000000000000004; never SQLite's 15-digit text of a real;
** Inf is an error).  It is deterministic and innocuous.
**
** The input must be strict RFC 8259 JSON, whatever SQLite's own json()
** accepts: exactly one value, whitespace only ' ' \t \n \r, no comments,
** no trailing commas, no JSON5, no leading zeros, no raw control characters
** in strings, valid UTF-8.  In addition a duplicate member name (compared
** after unescaping), a lone surrogate escape, a number that overflows a
** double, and nesting deeper than IDEM_JSON_MAX_DEPTH are errors.  Every
** error names the problem and the 1-based byte offset where it was found
** (as json_error_position() counts), for example
**
**     SELECT idem_canonical('{"a":1,"a":2}');
**         -- error: idem: idem_canonical(): duplicate member name "a" at byte 8
**
** The first error found is reported; a duplicate name is found when its
** object's closing '}' is reached.  A NULL or a blob argument is an error.
**
** DESIGN
**
** The C interface (used by idem_key() and the virtual table as well) is an
** IdemJson object that keeps its buffers between calls:
**
**     IdemJson *p = idemJsonNew();
**     if( idemJsonCanonical(p, z, n)==SQLITE_OK ) zCanon = idemJsonText(p,&nCanon);
**     else zWhy = idemJsonError(p);
**     idemJsonFree(p);
**
** One pass, no recursion, no allocation per value.  The parser is a loop
** over an explicit stack of open containers (at most IDEM_JSON_MAX_DEPTH
** frames, inside the IdemJson), and it writes canonical text straight into
** one output buffer as it reads.  An object's members are recorded on a
** member stack (output offsets of each member's name and end, and a sort
** key).  While the object is read each name is compared with the previous
** one; if they all ascend, the output is already canonical.  Otherwise, at
** the '}', the object's member records are sorted (insertion sort when
** small, a bottom-up merge sort otherwise); if the sort saw two names
** equal, the duplicate is reported; else the object's bytes are copied to
** a scratch buffer and written back in sorted order.  Nested objects are
** finished before their parent, so a parent only moves finished texts.
**
** Names are compared on their canonical text, which is unique for a given
** unescaped name.  Raw UTF-8 bytes compare in code point order, and the
** few canonical escapes are decoded on the fly.  UTF-16 order differs from
** code point order only in that U+E000..U+FFFF (lead bytes 0xEE, 0xEF) sort
** after the astral planes (lead bytes 0xF0..0xF4, surrogate pairs in
** UTF-16); the comparator fixes up exactly that case at the first byte that
** differs.  Most comparisons are settled by the sort keys alone: the first
** 8 bytes of each name as one integer, with the same fix-up.
**
** Output never grows faster than input except in numbers ("1e20" prints as
** 21 digits), so the buffer is sized to the input once, and only a number
** checks for room.  Strings are scanned 16 bytes at a time on x86-64 (SSE2)
** and 8 elsewhere (a block with no quote, backslash, control or non-ASCII
** byte is copied whole); UTF-8 is validated as it is copied, a run of
** 2-byte, 3-byte or 4-byte characters a block at a time on x86-64; a run of
** escapes is decoded in one loop.  Buffers larger than IDEM_JSON_KEEP are
** released rather than kept for the next call.
*/
#include "idemInt.h"

/* Maximum nesting of arrays and objects.  "[[...]]" with 1000 brackets each
** side is accepted; 1001 is an error.  The parser never recurses, so the
** limit protects nothing but sanity and the size of IdemJson. */
#define IDEM_JSON_MAX_DEPTH 1000

/* Buffers above this size are freed after use instead of kept. */
#define IDEM_JSON_KEEP (1024*1024)

/* The largest canonical text (idemJsonText() reports an int). */
#define IDEM_JSON_MAX_TEXT 0x7fffffff

/* A member of an object being read: a sort key; offsets into the output
** buffer of the name's opening quote, just past its closing quote, and just
** past the member's value; and the input offset of the name for messages. */
typedef struct IdemJsonMember IdemJsonMember;
struct IdemJsonMember {
  uint64_t iKey;             /* Sort key of the name: idemJsonNameKey() */
  uint32_t iName;
  uint32_t iNameEnd;
  uint32_t iEnd;
  uint32_t iIn;
};

/* An open array or object. */
typedef struct IdemJsonFrame IdemJsonFrame;
struct IdemJsonFrame {
  uint32_t iMember;          /* Object: its first record in aMember[] */
  unsigned char isObject;    /* 1 for an object, 0 for an array */
  unsigned char needSort;    /* Object: names seen so far do not ascend */
};

struct IdemJson {
  unsigned char *zOut;       /* Canonical text of the last call */
  sqlite3_int64 nOut;        /* Its length */
  sqlite3_int64 nOutAlloc;   /* Bytes allocated at zOut */
  unsigned char *zTmp;       /* Scratch for reordering an object */
  sqlite3_int64 nTmpAlloc;
  IdemJsonMember *aMember;   /* Member records of the open objects */
  sqlite3_int64 nMemberAlloc;
  int isBusy;                /* Lent by idemJsonAcquire() */
  IdemJsonFrame aFrame[IDEM_JSON_MAX_DEPTH];
  char zErr[200];            /* Error message of the last call */
};

/* Byte classes inside a string. */
#define IJ_PLAIN  0   /* copied as is */
#define IJ_QUOTE  1   /* '"' */
#define IJ_BSLASH 2   /* '\\' */
#define IJ_CTRL   3   /* 0x00..0x1f: not allowed raw */
#define IJ_U2     4   /* lead byte of a 2-byte sequence */
#define IJ_U3E0   5   /* 0xe0: 3 bytes, second a0..bf */
#define IJ_U3     6   /* 0xe1..0xec, 0xee, 0xef: 3 bytes */
#define IJ_U3ED   7   /* 0xed: 3 bytes, second 80..9f (no surrogates) */
#define IJ_U4F0   8   /* 0xf0: 4 bytes, second 90..bf */
#define IJ_U4     9   /* 0xf1..0xf3: 4 bytes */
#define IJ_U4F4  10   /* 0xf4: 4 bytes, second 80..8f (<= U+10FFFF) */
#define IJ_BAD   11   /* 0x80..0xc1, 0xf5..0xff: never starts a character */

static const unsigned char idemJsonClass[256] = {
  3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,   /* 0x00 */
  3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,   /* 0x10 */
  0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   /* 0x20 */
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   /* 0x30 */
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   /* 0x40 */
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,   /* 0x50 */
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   /* 0x60 */
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   /* 0x70 */
 11,11,11,11,11,11,11,11,11,11,11,11,11,11,11,11,   /* 0x80 */
 11,11,11,11,11,11,11,11,11,11,11,11,11,11,11,11,   /* 0x90 */
 11,11,11,11,11,11,11,11,11,11,11,11,11,11,11,11,   /* 0xa0 */
 11,11,11,11,11,11,11,11,11,11,11,11,11,11,11,11,   /* 0xb0 */
 11,11, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,   /* 0xc0 */
  4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,   /* 0xd0 */
  5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 7, 6, 6,   /* 0xe0 */
  8, 9, 9, 9,10,11,11,11,11,11,11,11,11,11,11,11,   /* 0xf0 */
};

/* For each class of a byte 0x80..0xff: the length of the character that
** it starts (0: none) and the range of its second byte, which rules out
** overlong forms, surrogates and code points beyond U+10FFFF. */
typedef struct IdemJsonUtf8 IdemJsonUtf8;
struct IdemJsonUtf8 { unsigned char n, lo, hi; };
static const IdemJsonUtf8 aIdemJsonUtf8[12] = {
  {0,0,0}, {0,0,0}, {0,0,0}, {0,0,0},   /* ASCII classes: not used */
  {2, 0x80, 0xbf},                       /* IJ_U2 */
  {3, 0xa0, 0xbf},                       /* IJ_U3E0 */
  {3, 0x80, 0xbf},                       /* IJ_U3 */
  {3, 0x80, 0x9f},                       /* IJ_U3ED */
  {4, 0x90, 0xbf},                       /* IJ_U4F0 */
  {4, 0x80, 0xbf},                       /* IJ_U4 */
  {4, 0x80, 0x8f},                       /* IJ_U4F4 */
  {0,0,0},                               /* IJ_BAD */
};

static const char idemJsonHex[] = IDEM_HEX_DIGITS;

/* The value of each hex digit, either case (RFC 8259 lets a \u escape
** write A-F or a-f); 16 for a byte that is not one.  The key's text has a
** decoder of its own, idemKeyFromHex(), which takes lowercase only: a key
** has exactly one text form. */
static const unsigned char idemJsonHexVal[256] = {
  16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,   /* 0x00 */
  16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,   /* 0x10 */
  16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,   /* 0x20 */
   0, 1, 2, 3, 4, 5, 6, 7, 8, 9,16,16,16,16,16,16,   /* 0x30 */
  16,10,11,12,13,14,15,16,16,16,16,16,16,16,16,16,   /* 0x40 */
  16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,   /* 0x50 */
  16,10,11,12,13,14,15,16,16,16,16,16,16,16,16,16,   /* 0x60 */
  16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,   /* 0x70 */
  16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,   /* 0x80 */
  16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,   /* 0x90 */
  16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,   /* 0xa0 */
  16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,   /* 0xb0 */
  16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,   /* 0xc0 */
  16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,   /* 0xd0 */
  16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,   /* 0xe0 */
  16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,   /* 0xf0 */
};

/* Non-zero if the 8 bytes of w hold a '"', a '\\', a byte below 0x20 or a
** byte above 0x7f.  (Bit tricks: each test is exact as to whether some byte
** matches, which is all that is asked.) */
#define IJ_ONES 0x0101010101010101ULL
#define IJ_HIGH 0x8080808080808080ULL
static uint64_t idemJsonSpecial8(uint64_t w){
  uint64_t t = (w - IJ_ONES*0x20)
             | ((w ^ (IJ_ONES*'"')) - IJ_ONES)
             | ((w ^ (IJ_ONES*'\\')) - IJ_ONES);
  return ((t & ~w) | w) & IJ_HIGH;
}

/* On a little-endian machine the lowest flagged byte of that result is
** exactly the first special byte (a borrow only runs towards later bytes),
** so its index is the count of trailing zero bits / 8.  Elsewhere, or with
** -DIDEM_JSON_PORTABLE (to test the other paths), bytes are looked at one
** by one where the position matters. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) \
 && __BYTE_ORDER__==__ORDER_LITTLE_ENDIAN__ && !defined(IDEM_JSON_PORTABLE)
# define IDEM_JSON_LE_WORDS 1
# define IDEM_JSON_CTZ8(m) (__builtin_ctzll(m)>>3)

/* 0x80 in each byte of w that is zero, and nothing else (no borrows). */
static uint64_t idemJsonZeroBytes(uint64_t w){
  return ~(((w & ~IJ_HIGH) + ~IJ_HIGH) | w) & IJ_HIGH;
}

/* On x86-64 (where SSE2 is always there) strings are scanned 16 bytes at
** a time: one bit per byte that is a '"', a '\\', below 0x20 or above 0x7f
** (the last two in one signed comparison: bytes 0x80..0xff are negative). */
# if defined(__SSE2__)
#  include <emmintrin.h>
#  define IDEM_JSON_SSE2 1
static unsigned int idemJsonSpecial16(__m128i v){
  __m128i q = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
  __m128i b = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
  __m128i c = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
  return (unsigned int)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(q, b), c));
}

/* How many of the 16 bytes v, which start with a non-ASCII byte, are
** whole, valid characters of the same length as the first one, for runs of
** 2-byte (Greek, Cyrillic, Hebrew, ...), 3-byte (CJK, Hangul, ...) and
** 4-byte (emoji) characters: the bytes that follow the pattern lead,
** continuation, ... from the start, cut to whole characters and to before
** the first lead byte that is invalid or needs a closer look (0xc0 and
** 0xc1 start overlong forms, 0xe0 may and 0xed may start a surrogate; in a
** run of 4-byte characters the second byte is checked here).  0 means:
** look at one character byte by byte. */
static int idemJsonUtf8Run16(__m128i v, unsigned int c){
  unsigned int m, bad;
  int n;
  if( (c & 0xf0)==0xe0 ){
    const __m128i mask = _mm_setr_epi8(
      (char)0xf0, (char)0xc0, (char)0xc0, (char)0xf0, (char)0xc0, (char)0xc0,
      (char)0xf0, (char)0xc0, (char)0xc0, (char)0xf0, (char)0xc0, (char)0xc0,
      (char)0xf0, (char)0xc0, (char)0xc0, 0);
    const __m128i want = _mm_setr_epi8(
      (char)0xe0, (char)0x80, (char)0x80, (char)0xe0, (char)0x80, (char)0x80,
      (char)0xe0, (char)0x80, (char)0x80, (char)0xe0, (char)0x80, (char)0x80,
      (char)0xe0, (char)0x80, (char)0x80, 0);
    m = (unsigned int)_mm_movemask_epi8(
          _mm_cmpeq_epi8(_mm_and_si128(v, mask), want));
    n = __builtin_ctz(~m) / 3 * 3;
    bad = (unsigned int)_mm_movemask_epi8(_mm_or_si128(
            _mm_cmpeq_epi8(v, _mm_set1_epi8((char)0xe0)),
            _mm_cmpeq_epi8(v, _mm_set1_epi8((char)0xed)))) & 0x1249;
  }else if( (c & 0xe0)==0xc0 ){
    const __m128i mask = _mm_set1_epi16((short)0xc0e0);
    const __m128i want = _mm_set1_epi16((short)0x80c0);
    m = (unsigned int)_mm_movemask_epi8(
          _mm_cmpeq_epi8(_mm_and_si128(v, mask), want));
    n = __builtin_ctz(~m) & ~1;
    bad = (unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(
            _mm_and_si128(v, _mm_set1_epi8((char)0xfe)),
            _mm_set1_epi8((char)0xc0))) & 0x5555;
  }else if( (c & 0xf8)==0xf0 ){
    /* 4-byte characters (emoji are F0 9F xx xx).  A lead must be F0..F4;
    ** after F0 the second byte is 90..BF, after F4 it is 80..8F. */
    const __m128i mask = _mm_set1_epi32((int)0xc0c0c0f8);
    const __m128i want = _mm_set1_epi32((int)0x808080f0);
    unsigned int geF5, isF0, isF4, lt90, gt8F;
    m = (unsigned int)_mm_movemask_epi8(
          _mm_cmpeq_epi8(_mm_and_si128(v, mask), want));
    n = __builtin_ctz(~m) & ~3;
    geF5 = (unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(
             _mm_max_epu8(v, _mm_set1_epi8((char)0xf5)), v));
    isF0 = (unsigned int)_mm_movemask_epi8(
             _mm_cmpeq_epi8(v, _mm_set1_epi8((char)0xf0)));
    isF4 = (unsigned int)_mm_movemask_epi8(
             _mm_cmpeq_epi8(v, _mm_set1_epi8((char)0xf4)));
    lt90 = ~(unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(
             _mm_max_epu8(v, _mm_set1_epi8((char)0x90)), v));
    gt8F = ~(unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(
             _mm_min_epu8(v, _mm_set1_epi8((char)0x8f)), v));
    bad = (geF5 | (isF0 & (lt90>>1)) | (isF4 & (gt8F>>1))) & 0x1111;
  }else{
    return 0;
  }
  if( bad ){
    int k = __builtin_ctz(bad);
    if( k<n ) n = k;
  }
  return n;
}
# endif
#endif

static int idemJsonIsDigit(const unsigned char *s, const unsigned char *zEnd){
  return s<zEnd && *s>='0' && *s<='9';
}

/* The end of the run of digits that starts at s (8 at a time where
** possible: a byte is a digit if its high nibble is 3 both before and
** after adding 6; a carry out of a non-digit byte only reaches the bytes
** after it, so the first non-digit is found exactly). */
static const unsigned char *idemJsonDigits(
  const unsigned char *s,
  const unsigned char *zEnd
){
#ifdef IDEM_JSON_LE_WORDS
  while( zEnd-s>=8 ){
    uint64_t w, x;
    memcpy(&w, s, 8);
    x = ((w & (IJ_ONES*0xf0)) ^ (IJ_ONES*0x30))
      | (((w + IJ_ONES*0x06) & (IJ_ONES*0xf0)) ^ (IJ_ONES*0x30));
    if( x ) return s + IDEM_JSON_CTZ8(idemJsonZeroBytes(x) ^ IJ_HIGH);
    s += 8;
  }
#endif
  while( idemJsonIsDigit(s, zEnd) ) s++;
  return s;
}

/* Skip JSON whitespace: ' ', \t, \n, \r (bits 32, 9, 10, 13 of the mask).
** Indentation after a newline is skipped a word at a time where possible.
** Most calls find no whitespace at all (compact input) or one space (as
** in Python's ", " and ": "), so those tests are made inline, by the macro
** idemJsonSkipWs(), and only other whitespace costs a call.  The byte after
** a single space is looked at only if it is there. */
#define IJ_WS_BITS 0x100002600ULL
#define idemJsonSkipWs(s, zEnd) \
  ((s)>=(zEnd) || *(s)>' ' ? (s) \
   : *(s)==' ' && (s)+1<(zEnd) && (s)[1]>' ' ? (s)+1 \
   : idemJsonSkipWsRun((s), (zEnd)))
static const unsigned char *idemJsonSkipWsRun(
  const unsigned char *s,
  const unsigned char *zEnd
){
  while( s<zEnd && *s<=' ' && ((IJ_WS_BITS>>*s) & 1) ){
    s++;
#ifdef IDEM_JSON_LE_WORDS
    while( zEnd-s>=8 && *s==' ' ){
      uint64_t w, m;
      memcpy(&w, s, 8);
      m = ~idemJsonZeroBytes(w ^ (IJ_ONES*' ')) & IJ_HIGH;  /* non-spaces */
      if( m ){
        s += IDEM_JSON_CTZ8(m);
        break;
      }
      s += 8;
    }
#endif
  }
  return s;
}

/*
** True if the decimal literal whose digits start at zDigits, with its '.'
** at zDot and its last digit (not a '0') just before zEnd, is its own
** canonical text: at most 15 significant digits, and 1e-6 <= |x| < 1e21.
** Such digits are already the shortest that read back as the double
** nearest to them (idem_number.c, step 2), and ECMAScript lays such a
** value out as plain digits with a '.', as JSON wrote it.
*/
static int idemJsonPlainDecimal(
  const unsigned char *zDigits,
  const unsigned char *zDot,
  const unsigned char *zEnd
){
  const unsigned char *f;
  if( zDigits[0]!='0' ) return zEnd-zDigits-1<=15;   /* 1 <= |x| < 1e15 */
  for(f=zDot+1; *f=='0'; f++){}                       /* 0.000ddd */
  return f-zDot-1<=5 && zEnd-f<=15;
}

/* Value of the 4 hex digits at z, or -1.  (Inlined: it is on the path
** of every \u escape.) */
#if defined(__GNUC__)
# define IDEM_JSON_INLINE __attribute__((always_inline)) inline
#else
# define IDEM_JSON_INLINE
#endif
static IDEM_JSON_INLINE int idemJsonHex4(const unsigned char *z){
  unsigned int a = idemJsonHexVal[z[0]], b = idemJsonHexVal[z[1]];
  unsigned int c = idemJsonHexVal[z[2]], d = idemJsonHexVal[z[3]];
  if( (a|b|c|d) & 16 ) return -1;
  return (int)(a<<12 | b<<8 | c<<4 | d);
}

/* Record an error: zWhat, then where (s is the offending position in the
** input z[0..zEnd)).  Returns SQLITE_ERROR.  A '/' that starts a comment is
** named as such instead of the generic complaint. */
static int idemJsonFail(
  IdemJson *p,
  const char *zWhat,
  const unsigned char *z,
  const unsigned char *s,
  const unsigned char *zEnd
){
  if( s>=zEnd ){
    sqlite3_snprintf(sizeof(p->zErr), p->zErr, "%s at end of input", zWhat);
  }else{
    if( s[0]=='/' && s+1<zEnd && (s[1]=='/' || s[1]=='*') ){
      zWhat = "comment (JSON has none)";
    }
    sqlite3_snprintf(sizeof(p->zErr), p->zErr, "%s at byte %lld",
                     zWhat, (sqlite3_int64)(s - z) + 1);
  }
  return SQLITE_ERROR;
}

/* Grow zOut so that it holds at least nNeed bytes, keeping its content.
** Offsets into zOut must fit the uint32_t fields of IdemJsonMember, so the
** buffer never grows beyond IDEM_JSON_MAX_OUT. */
#define IDEM_JSON_MAX_OUT ((sqlite3_int64)IDEM_JSON_MAX_TEXT + 128)
static int idemJsonGrowOut(IdemJson *p, sqlite3_int64 nNeed){
  sqlite3_int64 nNew = p->nOutAlloc*2;
  unsigned char *zNew;
  if( nNeed>IDEM_JSON_MAX_OUT ){
    sqlite3_snprintf(sizeof(p->zErr), p->zErr,
                     "canonical text longer than %d bytes", IDEM_JSON_MAX_TEXT);
    return SQLITE_TOOBIG;
  }
  if( nNew>IDEM_JSON_MAX_OUT ) nNew = IDEM_JSON_MAX_OUT;
  if( nNew<nNeed ) nNew = nNeed;
  zNew = sqlite3_realloc64(p->zOut, nNew);
  if( zNew==0 ){
    sqlite3_snprintf(sizeof(p->zErr), p->zErr, "out of memory");
    return SQLITE_NOMEM;
  }
  p->zOut = zNew;
  p->nOutAlloc = nNew;
  return SQLITE_OK;
}

/* Make room for at least nNeed member records. */
static int idemJsonGrowMembers(IdemJson *p, sqlite3_int64 nNeed){
  sqlite3_int64 nNew = p->nMemberAlloc ? p->nMemberAlloc*2 : 64;
  IdemJsonMember *aNew;
  if( nNew<nNeed ) nNew = nNeed;
  aNew = sqlite3_realloc64(p->aMember, nNew*sizeof(IdemJsonMember));
  if( aNew==0 ){
    sqlite3_snprintf(sizeof(p->zErr), p->zErr, "out of memory");
    return SQLITE_NOMEM;
  }
  p->aMember = aNew;
  p->nMemberAlloc = nNew;
  return SQLITE_OK;
}

/* Decode the canonical escape at z (z[0]=='\\'): its byte value, and its
** length in *pn. */
static int idemJsonUnescape(const unsigned char *z, int *pn){
  *pn = 2;
  switch( z[1] ){
    case 'b': return '\b';
    case 't': return '\t';
    case 'n': return '\n';
    case 'f': return '\f';
    case 'r': return '\r';
    case 'u': *pn = 6; return idemJsonHex4(z+2);
    default:  return z[1];            /* '"' or '\\' */
  }
}

/* Compare the names of two members by the UTF-16 code units of the
** unescaped names, given their canonical texts in zOut. */
static int idemJsonNameCmpText(
  const unsigned char *zOut,
  const IdemJsonMember *pA,
  const IdemJsonMember *pB
){
  const unsigned char *a = zOut + pA->iName + 1;
  const unsigned char *b = zOut + pB->iName + 1;
  sqlite3_int64 na = pA->iNameEnd - pA->iName - 2;
  sqlite3_int64 nb = pB->iNameEnd - pB->iName - 2;
  sqlite3_int64 n = na<nb ? na : nb;
  sqlite3_int64 i = 0;
  while( i<n ){
    int ca = a[i], cb = b[i], la = 1, lb = 1;
    if( ca==cb && ca!='\\' ){ i++; continue; }
    if( ca=='\\' ) ca = idemJsonUnescape(a+i, &la);
    if( cb=='\\' ) cb = idemJsonUnescape(b+i, &lb);
    if( ca!=cb ){
      /* Lead bytes 0xee and 0xef (U+E000..U+FFFF) go after 0xf0..0xf4. */
      if( (ca & 0xfe)==0xee ) ca += 0x10;
      if( (cb & 0xfe)==0xee ) cb += 0x10;
      return ca - cb;
    }
    i += la;   /* equal values have equal canonical escapes */
  }
  return (na>nb) - (na<nb);
}

/* The sort key of the canonical name z[0..n): its first 8 bytes as a
** big-endian integer, with the UTF-16 fix-up of idemJsonNameCmpText()
** applied, except that an escape is replaced by its value and ends the key
** (the rest is 0).  Names whose keys differ compare as their keys do; equal
** keys say nothing (the names may differ beyond the key, or only in the
** bytes that an escape hides), and the texts decide.  z[0..8) must be
** readable even when n<8. */
static uint64_t idemJsonNameKey(const unsigned char *z, sqlite3_int64 n){
  uint64_t k = 0;
  sqlite3_int64 j = 0;
  int i, nEsc;
#ifdef IDEM_JSON_LE_WORDS
  memcpy(&k, z, 8);
  if( n<8 ) k &= ((uint64_t)1 << (8*n)) - 1;
  if( idemJsonZeroBytes(k ^ (IJ_ONES*'\\'))==0 ){
    /* No escape: 0xee, 0xef become 0xfe, 0xff. */
    k += idemJsonZeroBytes((k & (IJ_ONES*0xfe)) ^ (IJ_ONES*0xee)) >> 3;
    return __builtin_bswap64(k);
  }
  k = 0;
#endif
  for(i=0; i<8; i++){
    unsigned int c = 0;
    if( j<n ){
      c = z[j++];
      if( c=='\\' ){
        c = (unsigned int)idemJsonUnescape(z+j-1, &nEsc);
        j = n;
      }else if( (c & 0xfe)==0xee ){
        c += 0x10;
      }
    }
    k = (k<<8) | c;
  }
  return k;
}

static int idemJsonNameCmp(
  const unsigned char *zOut,
  const IdemJsonMember *pA,
  const IdemJsonMember *pB
){
  if( pA->iKey!=pB->iKey ) return pA->iKey<pB->iKey ? -1 : 1;
  return idemJsonNameCmpText(zOut, pA, pB);
}

/* Objects of up to this many members are sorted by counting ranks. */
#define IDEM_JSON_RANK_SORT 16

/* Sort the n members a[0..n) of an object by name, using aTmp[0..n) as
** scratch.  Small objects by insertion sort, larger by bottom-up merge sort
** over runs of 8 that are first insertion-sorted.  Returns non-zero if two
** names compared equal (a correct sort compares every pair of neighbours,
** so a duplicate name is never missed). */
static int idemJsonSortMembers(
  const unsigned char *zOut,
  IdemJsonMember *a,
  IdemJsonMember *aTmp,
  int n
){
  int i, j, w, c, bEqual = 0;
  IdemJsonMember *aSrc = a, *aDst = aTmp;
  if( n<=IDEM_JSON_RANK_SORT ){
    /* Few members whose sort keys all differ (the usual case): the place
    ** of each is the number of keys below its own, counted without a
    ** branch that depends on the data.  Ties go to the sort below. */
    uint64_t aKey[IDEM_JSON_RANK_SORT];
    int aRank[IDEM_JSON_RANK_SORT];
    int nTie = 0;
    for(i=0; i<n; i++){
      aKey[i] = a[i].iKey;
      aRank[i] = 0;
    }
    for(i=1; i<n; i++){
      for(j=0; j<i; j++){          /* each pair once */
        int jBelow = aKey[j]<aKey[i];
        aRank[i] += jBelow;
        aRank[j] += 1-jBelow;
        nTie |= aKey[j]==aKey[i];
      }
    }
    if( nTie==0 ){
      for(i=0; i<n; i++) aTmp[aRank[i]] = a[i];
      memcpy(a, aTmp, n*sizeof(IdemJsonMember));
      return 0;
    }
  }
  for(i=0; i<n; i+=8){
    int iEnd = i+8<n ? i+8 : n;
    for(j=i+1; j<iEnd; j++){
      IdemJsonMember x = a[j];
      int k = j;
      while( k>i && (c = idemJsonNameCmp(zOut, &a[k-1], &x))>=0 ){
        if( c==0 ){ bEqual = 1; break; }
        a[k] = a[k-1];
        k--;
      }
      a[k] = x;
    }
  }
  for(w=8; w<n; w*=2){
    for(i=0; i<n; i+=2*w){
      int iL = i, iMid = i+w<n ? i+w : n, iR = iMid;
      int iEnd = i+2*w<n ? i+2*w : n, k = i;
      while( iL<iMid && iR<iEnd ){
        c = idemJsonNameCmp(zOut, &aSrc[iR], &aSrc[iL]);
        if( c<0 ){
          aDst[k++] = aSrc[iR++];
        }else{
          bEqual |= c==0;
          aDst[k++] = aSrc[iL++];
        }
      }
      while( iL<iMid ) aDst[k++] = aSrc[iL++];
      while( iR<iEnd ) aDst[k++] = aSrc[iR++];
    }
    { IdemJsonMember *aSwap = aSrc; aSrc = aDst; aDst = aSwap; }
  }
  if( aSrc!=a ) memcpy(a, aSrc, n*sizeof(IdemJsonMember));
  return bEqual;
}

/* The object whose n members are a[0..n) has just been read and its names
** do not ascend.  Sort its members, report a duplicate name, and rewrite
** its text in zOut (it ends at zOut[iEnd]) in sorted order. */
static int idemJsonFinishObject(
  IdemJson *p,
  IdemJsonMember *a,
  int n,
  sqlite3_int64 iEnd
){
  sqlite3_int64 iFirst = a[0].iName;
  sqlite3_int64 nText = iEnd - iFirst;
  IdemJsonMember *pDup = 0;
  unsigned char *zTo;
  int i, rc;

  if( n*(sqlite3_int64)2 > p->nMemberAlloc - (a - p->aMember) ){
    sqlite3_int64 iA = a - p->aMember;
    rc = idemJsonGrowMembers(p, iA + n*(sqlite3_int64)2);
    if( rc ) return rc;
    a = p->aMember + iA;
  }
  if( idemJsonSortMembers(p->zOut, a, a+n, n) ){
    /* Of the duplicates, report the one that comes first in the input. */
    for(i=1; i<n; i++){
      if( idemJsonNameCmp(p->zOut, &a[i-1], &a[i])==0 ){
        IdemJsonMember *pLater = a[i-1].iIn > a[i].iIn ? &a[i-1] : &a[i];
        if( pDup==0 || pLater->iIn < pDup->iIn ) pDup = pLater;
      }
    }
  }
  if( pDup ){
    const char *zName = (const char*)p->zOut + pDup->iName;
    int nName = (int)(pDup->iNameEnd - pDup->iName);
    const char *zMore = "";
    if( nName>64 ){
      /* Cut on a character boundary, not inside an escape. */
      int k = 1, nEsc;
      while( k<56 ){
        if( zName[k]=='\\' ){
          idemJsonUnescape((const unsigned char*)zName+k, &nEsc);
          k += nEsc;
        }else{
          for(k++; (zName[k] & 0xc0)==0x80; k++){}
        }
      }
      nName = k;
      zMore = "...\"";
    }
    sqlite3_snprintf(sizeof(p->zErr), p->zErr,
                     "duplicate member name %.*s%s at byte %lld",
                     nName, zName, zMore, (sqlite3_int64)pDup->iIn + 1);
    return SQLITE_ERROR;
  }

  if( p->nTmpAlloc<nText ){
    sqlite3_free(p->zTmp);
    p->nTmpAlloc = 0;
    p->zTmp = sqlite3_malloc64(nText);
    if( p->zTmp==0 ){
      sqlite3_snprintf(sizeof(p->zErr), p->zErr, "out of memory");
      return SQLITE_NOMEM;
    }
    p->nTmpAlloc = nText;
  }
  memcpy(p->zTmp, p->zOut + iFirst, nText);
  zTo = p->zOut + iFirst;
  for(i=0; i<n; i++){
    sqlite3_int64 nMember = a[i].iEnd - a[i].iName;
    if( i ) *zTo++ = ',';
    memcpy(zTo, p->zTmp + (a[i].iName - iFirst), nMember);
    zTo += nMember;
  }
  return SQLITE_OK;
}

/* Copy the string whose opening quote is at *ps to *po as canonical text,
** and advance both past it.  z is the start of the input (for messages). */
static int idemJsonString(
  IdemJson *p,
  const unsigned char *z,
  const unsigned char **ps,
  const unsigned char *zEnd,
  unsigned char **po
){
  const unsigned char *zStart = *ps;
  const unsigned char *s = zStart + 1;
  unsigned char *o = *po;

  *o++ = '"';
  for(;;){
    /* Plain bytes 16, then 8 at a time.  The block is stored whole (the
    ** output has room), then the pointers advance to its first special
    ** byte if any. */
#ifdef IDEM_JSON_SSE2
    while( zEnd-s>=16 ){
      __m128i v = _mm_loadu_si128((const __m128i*)s);
      unsigned int m = idemJsonSpecial16(v);
      _mm_storeu_si128((__m128i*)o, v);
      if( m ){
        int k = __builtin_ctz(m);
        s += k;
        o += k;
        goto special;
      }
      s += 16;
      o += 16;
    }
#endif
    while( zEnd-s>=8 ){
      uint64_t w, m;
      memcpy(&w, s, 8);
      memcpy(o, &w, 8);
      m = idemJsonSpecial8(w);
      if( m ){
#ifdef IDEM_JSON_LE_WORDS
        int k = IDEM_JSON_CTZ8(m);
        s += k;
        o += k;
#else
        while( idemJsonClass[*s]==IJ_PLAIN ){ s++; o++; }
#endif
        goto special;
      }
      s += 8;
      o += 8;
    }
    while( s<zEnd && idemJsonClass[*s]==IJ_PLAIN ) *o++ = *s++;
    if( s>=zEnd ){
      return idemJsonFail(p, "unterminated string", z, zStart, zEnd);
    }
  special:
    if( *s=='"' ){
      *o++ = '"';
      *ps = s+1;
      *po = o;
      return SQLITE_OK;
    }
    if( *s>=0x80 ){
      /* A run of non-ASCII characters, each validated and copied whole:
      ** a lead byte, a second byte in its range, and continuation bytes. */
      do{
#ifdef IDEM_JSON_SSE2
        if( zEnd-s>=16 ){
          __m128i v = _mm_loadu_si128((const __m128i*)s);
          int n = idemJsonUtf8Run16(v, *s);
          if( n ){
            _mm_storeu_si128((__m128i*)o, v);
            s += n;
            o += n;
            continue;
          }
        }
#endif
        /* One character.  n comes from the lead byte by arithmetic, not
        ** from the table, so that finding the next character waits for one
        ** load, not three; for every valid lead byte it equals u->n. */
        unsigned int c = *s;
        int n = 2 + (c>=0xe0) + (c>=0xf0);
        const IdemJsonUtf8 *u = &aIdemJsonUtf8[idemJsonClass[c]];
        if( u->n==0 || zEnd-s<n || s[1]<u->lo || s[1]>u->hi
         || (n>2 && (s[2] & 0xc0)!=0x80)
         || (n>3 && (s[3] & 0xc0)!=0x80) ){
          goto bad_utf8;
        }
        if( zEnd-s>=4 ){
          memcpy(o, s, 4);
        }else{
          memcpy(o, s, 2);    /* n==2 or n==3 */
          o[2] = s[n-1];
        }
        o += n;
        s += n;
      }while( s<zEnd && *s>=0x80 );
      continue;
    }
    switch( idemJsonClass[*s] ){
      case IJ_BSLASH: do{
        /* A run of escapes (as "\u00fc\u00e9" of an ASCII-only encoder)
        ** is decoded without going back to the scan. */
        int c;
        if( zEnd-s<2 ){
          return idemJsonFail(p, "unterminated string", z, zStart, zEnd);
        }
        switch( s[1] ){
          case '"':  case '\\':  c = s[1]; s += 2;  break;
          case '/':  c = '/';   s += 2;  break;
          case 'b':  c = '\b';  s += 2;  break;
          case 'f':  c = '\f';  s += 2;  break;
          case 'n':  c = '\n';  s += 2;  break;
          case 'r':  c = '\r';  s += 2;  break;
          case 't':  c = '\t';  s += 2;  break;
          case 'u':
            if( zEnd-s<6 || (c = idemJsonHex4(s+2))<0 ){
              return idemJsonFail(p, "invalid \\u escape", z, s, zEnd);
            }
            if( c>=0xd800 && c<=0xdfff ){
              int c2;
              if( c>=0xdc00 || zEnd-s<12 || s[6]!='\\' || s[7]!='u'
               || (c2 = idemJsonHex4(s+8))<0xdc00 || c2>0xdfff ){
                char zWhat[40];
                sqlite3_snprintf(sizeof(zWhat), zWhat,
                                 "lone surrogate \\u%04x", c);
                return idemJsonFail(p, zWhat, z, s, zEnd);
              }
              c = 0x10000 + ((c - 0xd800)<<10) + (c2 - 0xdc00);
              s += 6;
            }
            s += 6;
            break;
          default:
            return idemJsonFail(p, "invalid escape", z, s, zEnd);
        }
        if( c<0x80 ){
          if( c<0x20 ){
            *o++ = '\\';
            switch( c ){
              case '\b': *o++ = 'b'; break;
              case '\t': *o++ = 't'; break;
              case '\n': *o++ = 'n'; break;
              case '\f': *o++ = 'f'; break;
              case '\r': *o++ = 'r'; break;
              default:
                o[0] = 'u'; o[1] = '0'; o[2] = '0';
                o[3] = idemJsonHex[c>>4]; o[4] = idemJsonHex[c&15];
                o += 5;
            }
          }else{
            if( c=='"' || c=='\\' ) *o++ = '\\';
            *o++ = (unsigned char)c;
          }
        }else if( c<0x800 ){
          o[0] = (unsigned char)(0xc0 | (c>>6));
          o[1] = (unsigned char)(0x80 | (c & 0x3f));
          o += 2;
        }else if( c<0x10000 ){
          o[0] = (unsigned char)(0xe0 | (c>>12));
          o[1] = (unsigned char)(0x80 | ((c>>6) & 0x3f));
          o[2] = (unsigned char)(0x80 | (c & 0x3f));
          o += 3;
        }else{
          o[0] = (unsigned char)(0xf0 | (c>>18));
          o[1] = (unsigned char)(0x80 | ((c>>12) & 0x3f));
          o[2] = (unsigned char)(0x80 | ((c>>6) & 0x3f));
          o[3] = (unsigned char)(0x80 | (c & 0x3f));
          o += 4;
        }
      }while( s<zEnd && *s=='\\' );
      break;
      case IJ_CTRL:
        return idemJsonFail(p, "unescaped control character in string",
                            z, s, zEnd);
      default:
        goto bad_utf8;
    }
  }
bad_utf8:
  return idemJsonFail(p, "invalid UTF-8", z, s, zEnd);
}

/* Canonicalize zIn[0..nIn), or up to its NUL if nIn<0.  See the header
** comment for the rules, the errors and the design. */
IDEM_PRIVATE int idemJsonCanonical(IdemJson *p, const char *zIn, int nIn){
  const unsigned char *z = (const unsigned char*)zIn;
  const unsigned char *zEnd;
  const unsigned char *s;
  unsigned char *o;
  sqlite3_int64 nNeed;
  sqlite3_int64 nMember = 0;   /* Records in use in p->aMember */
  int nDepth = 0;              /* Open containers in p->aFrame */
  int isObject = 0;            /* The innermost open container is an object */
  int rc;

  p->nOut = 0;
  p->zErr[0] = 0;
  zEnd = z + (nIn<0 ? strlen(zIn) : (size_t)nIn);

  /* Room for the whole input plus slack; see the invariant below.  A buffer
  ** that a big input left behind goes when a small one comes. */
  nNeed = (zEnd - z) + 64;
  if( nNeed<4096 ) nNeed = 4096;
  if( p->nOutAlloc<nNeed
   || (p->nOutAlloc>IDEM_JSON_KEEP && nNeed<=IDEM_JSON_KEEP) ){
    sqlite3_free(p->zOut);
    p->nOutAlloc = 0;
    if( nNeed>IDEM_JSON_MAX_OUT ){
      sqlite3_snprintf(sizeof(p->zErr), p->zErr,
                       "input longer than %d bytes", IDEM_JSON_MAX_TEXT);
      return SQLITE_TOOBIG;
    }
    p->zOut = sqlite3_malloc64(nNeed);
    if( p->zOut==0 ){
      sqlite3_snprintf(sizeof(p->zErr), p->zErr, "out of memory");
      return SQLITE_NOMEM;
    }
    p->nOutAlloc = nNeed;
  }
  o = p->zOut;

  /* Invariant: the room left at o is at least the input left at s plus 8.
  ** Everything but a number writes no more bytes than it reads. */
  s = idemJsonSkipWs(z, zEnd);
  if( s>=zEnd ){
    sqlite3_snprintf(sizeof(p->zErr), p->zErr, "empty input");
    rc = SQLITE_ERROR;
    goto done;
  }
  for(;;){
    /* s is at the start of a value, or of a member if in an object. */
    if( isObject ){
      IdemJsonFrame *pF = &p->aFrame[nDepth-1];
      IdemJsonMember *pM;
      if( nMember>=p->nMemberAlloc ){
        rc = idemJsonGrowMembers(p, nMember+1);
        if( rc ) goto done;
      }
      pM = &p->aMember[nMember++];
      pM->iName = (uint32_t)(o - p->zOut);
      pM->iIn = (uint32_t)(s - z);
#ifdef IDEM_JSON_SSE2
      /* Most names are a few plain ASCII bytes: such a name, quote
      ** included, fits in the 16 bytes after its opening quote, is its own
      ** canonical text, and its sort key is its first 8 bytes. */
      if( zEnd-s>=17 ){
        __m128i v = _mm_loadu_si128((const __m128i*)(s+1));
        unsigned int m = idemJsonSpecial16(v);
        int n = __builtin_ctz(m | 0x10000);
        if( n<16 && s[1+n]=='"' ){
          uint64_t w;
          o[0] = '"';
          _mm_storeu_si128((__m128i*)(o+1), v);
          memcpy(&w, s+1, 8);
          if( n<8 ) w &= ((uint64_t)1 << (8*n)) - 1;
          o[1+n] = '"';
          o += n+2;
          s += n+2;
          pM->iNameEnd = (uint32_t)(o - p->zOut);
          pM->iKey = __builtin_bswap64(w);
          goto name_done;
        }
      }
#elif defined(IDEM_JSON_LE_WORDS)
      /* Most names are a few plain ASCII bytes: such a name, quote
      ** included, fits in the word after its opening quote, is its own
      ** canonical text, and its sort key is that word. */
      if( zEnd-s>=9 ){
        uint64_t w, m;
        int n;
        memcpy(&w, s+1, 8);
        m = idemJsonSpecial8(w);
        n = m ? IDEM_JSON_CTZ8(m) : 8;
        if( n<8 && s[1+n]=='"' ){
          w &= ((uint64_t)1 << (8*n)) - 1;
          o[0] = '"';
          memcpy(o+1, &w, 8);
          o[1+n] = '"';
          o += n+2;
          s += n+2;
          pM->iNameEnd = (uint32_t)(o - p->zOut);
          pM->iKey = __builtin_bswap64(w);
          goto name_done;
        }
      }
#endif
      rc = idemJsonString(p, z, &s, zEnd, &o);
      if( rc ) goto done;
      pM->iNameEnd = (uint32_t)(o - p->zOut);
      pM->iKey = idemJsonNameKey(p->zOut + pM->iName + 1,
                                 pM->iNameEnd - pM->iName - 2);
#ifdef IDEM_JSON_LE_WORDS
    name_done:
#endif
      if( !pF->needSort && nMember-1>pF->iMember
       && idemJsonNameCmp(p->zOut, pM-1, pM)>=0 ){
        pF->needSort = 1;
      }
      s = idemJsonSkipWs(s, zEnd);
      if( s>=zEnd || *s!=':' ){
        rc = idemJsonFail(p, "expected ':'", z, s, zEnd);
        goto done;
      }
      *o++ = ':';
      s = idemJsonSkipWs(s+1, zEnd);
    }

    switch( s<zEnd ? *s : 0 ){
      case '{':
      case '[': {
        IdemJsonFrame *pF;
        unsigned char cOpen = *s;
        if( nDepth>=IDEM_JSON_MAX_DEPTH ){
          char zWhat[40];
          sqlite3_snprintf(sizeof(zWhat), zWhat, "nesting deeper than %d",
                           IDEM_JSON_MAX_DEPTH);
          rc = idemJsonFail(p, zWhat, z, s, zEnd);
          goto done;
        }
        pF = &p->aFrame[nDepth++];
        isObject = cOpen=='{';
        pF->isObject = (unsigned char)isObject;
        pF->needSort = 0;
        pF->iMember = (uint32_t)nMember;
        *o++ = cOpen;
        s = idemJsonSkipWs(s+1, zEnd);
        if( s<zEnd && *s==cOpen+2 ){          /* "{}" or "[]" */
          *o++ = *s++;
          nDepth--;
          isObject = nDepth>0 && p->aFrame[nDepth-1].isObject;
          break;
        }
        if( isObject && (s>=zEnd || *s!='"') ){
          rc = idemJsonFail(p, "expected a member name or '}'", z, s, zEnd);
          goto done;
        }
        continue;
      }
      case '"':
        rc = idemJsonString(p, z, &s, zEnd, &o);
        if( rc ) goto done;
        break;
      case 't':
        if( zEnd-s<4 || memcmp(s, "true", 4)!=0 ) goto expected_value;
        memcpy(o, s, 4); o += 4; s += 4;
        break;
      case 'f':
        if( zEnd-s<5 || memcmp(s, "false", 5)!=0 ) goto expected_value;
        memcpy(o, s, 5); o += 5; s += 5;
        break;
      case 'n':
        if( zEnd-s<4 || memcmp(s, "null", 4)!=0 ) goto expected_value;
        memcpy(o, s, 4); o += 4; s += 4;
        break;
      case '-': case '0': case '1': case '2': case '3': case '4':
      case '5': case '6': case '7': case '8': case '9': {
        const unsigned char *zNum = s;
        const unsigned char *zDigits;
        const unsigned char *zDot = 0;
        const unsigned char *zIntEnd, *zFracEnd;
        int isInt = 1, hasExp = 0;
        if( *s=='-' ) s++;
        zDigits = s;
        if( !idemJsonIsDigit(s, zEnd) ) goto bad_number;
        if( *s=='0' ){
          s++;
          if( idemJsonIsDigit(s, zEnd) ){
            rc = idemJsonFail(p, "leading zero in number", z, zNum, zEnd);
            goto done;
          }
        }else{
          s = idemJsonDigits(s, zEnd);
        }
        zIntEnd = zFracEnd = s;
        if( s<zEnd && *s=='.' ){
          isInt = 0;
          zDot = s;
          s++;
          if( !idemJsonIsDigit(s, zEnd) ) goto bad_number;
          s = zFracEnd = idemJsonDigits(s, zEnd);
        }
        if( s<zEnd && (*s=='e' || *s=='E') ){
          isInt = 0;
          hasExp = 1;
          s++;
          if( s<zEnd && (*s=='+' || *s=='-') ) s++;
          if( !idemJsonIsDigit(s, zEnd) ) goto bad_number;
          s = idemJsonDigits(s, zEnd);
        }
        if( isInt && s-zDigits<=15 ){
          /* Below 2^53: ECMAScript prints it as written, but for -0. */
          if( s-zNum==2 && zNum[0]=='-' && zNum[1]=='0' ){
            *o++ = '0';
          }else{
            memcpy(o, zNum, s-zNum);
            o += s-zNum;
          }
        }else if( zDot && !hasExp && s[-1]!='0'
               && idemJsonPlainDecimal(zDigits, zDot, s) ){
          /* A decimal such as 19.99 or 0.25 is printed as written. */
          memcpy(o, zNum, s-zNum);
          o += s-zNum;
        }else{
          int nNum = (int)(s - zNum);
          sqlite3_int64 iOut = o - p->zOut;
          nNeed = iOut + (zEnd - zNum) + 40;
          if( nNeed>p->nOutAlloc ){
            rc = idemJsonGrowOut(p, nNeed);
            if( rc ) goto done;
            o = p->zOut + iOut;
          }
          nNum = idemNumberCanonical((const char*)zNum, nNum,
                                     (int)(zIntEnd - zNum),
                                     (int)(zFracEnd - zNum), (char*)o);
          if( nNum<0 ){
            rc = idemJsonFail(p, "number overflows a double", z, zNum, zEnd);
            goto done;
          }
          o += nNum;
        }
        break;
      bad_number:
        rc = idemJsonFail(p, "invalid number", z, zNum, zEnd);
        goto done;
      }
      default:
      expected_value:
        rc = idemJsonFail(p, "expected a value", z, s, zEnd);
        goto done;
    }

    /* A value is complete.  Close containers, or find the next item. */
    for(;;){
      IdemJsonFrame *pF;
      s = idemJsonSkipWs(s, zEnd);
      if( nDepth==0 ){
        if( s<zEnd ){
          rc = idemJsonFail(p, "unexpected text after the value", z, s, zEnd);
          goto done;
        }
        rc = SQLITE_OK;
        goto done;
      }
      pF = &p->aFrame[nDepth-1];
      if( isObject ){
        p->aMember[nMember-1].iEnd = (uint32_t)(o - p->zOut);
        if( s<zEnd && *s=='}' ){
          if( pF->needSort ){
            rc = idemJsonFinishObject(p, p->aMember + pF->iMember,
                                      (int)(nMember - pF->iMember),
                                      o - p->zOut);
            if( rc ) goto done;
          }
          nMember = pF->iMember;
        }else if( s<zEnd && *s==',' ){
          const unsigned char *zComma = s;
          *o++ = ',';
          s = idemJsonSkipWs(s+1, zEnd);
          if( s<zEnd && *s=='"' ) break;
          if( s<zEnd && *s=='}' ){
            rc = idemJsonFail(p, "trailing comma", z, zComma, zEnd);
          }else{
            rc = idemJsonFail(p, "expected a member name", z, s, zEnd);
          }
          goto done;
        }else{
          rc = idemJsonFail(p, "expected ',' or '}'", z, s, zEnd);
          goto done;
        }
      }else{
        if( s<zEnd && *s==',' ){
          const unsigned char *zComma = s;
          *o++ = ',';
          s = idemJsonSkipWs(s+1, zEnd);
          if( s<zEnd && *s==']' ){
            rc = idemJsonFail(p, "trailing comma", z, zComma, zEnd);
            goto done;
          }
          break;
        }
        if( s>=zEnd || *s!=']' ){
          rc = idemJsonFail(p, "expected ',' or ']'", z, s, zEnd);
          goto done;
        }
      }
      *o++ = *s++;          /* the '}' or ']' */
      nDepth--;
      isObject = nDepth>0 && p->aFrame[nDepth-1].isObject;
    }
  }

done:
  if( rc==SQLITE_OK ){
    p->nOut = o - p->zOut;
    if( p->nOut>IDEM_JSON_MAX_TEXT ){
      sqlite3_snprintf(sizeof(p->zErr), p->zErr,
                       "canonical text longer than %d bytes", IDEM_JSON_MAX_TEXT);
      p->nOut = 0;
      rc = SQLITE_TOOBIG;
    }else{
      p->zOut[p->nOut] = 0;
    }
  }
  if( p->nTmpAlloc>IDEM_JSON_KEEP ){
    sqlite3_free(p->zTmp);
    p->zTmp = 0;
    p->nTmpAlloc = 0;
  }
  if( p->nMemberAlloc*(sqlite3_int64)sizeof(IdemJsonMember)>IDEM_JSON_KEEP ){
    sqlite3_free(p->aMember);
    p->aMember = 0;
    p->nMemberAlloc = 0;
  }
  return rc;
}

IDEM_PRIVATE IdemJson *idemJsonNew(void){
  IdemJson *p = sqlite3_malloc64(sizeof(IdemJson));
  if( p ) memset(p, 0, sizeof(IdemJson));
  return p;
}

IDEM_PRIVATE void idemJsonFree(IdemJson *p){
  if( p ){
    sqlite3_free(p->zOut);
    sqlite3_free(p->zTmp);
    sqlite3_free(p->aMember);
    sqlite3_free(p);
  }
}

/*
** Lend the canonicalizer *ppShared (made on first use), or a private one
** while it is lent already: a nested call (idem_key() inside idem_key()
** through a nested statement) must not overwrite the text its caller is
** still reading.  NULL when out of memory.  Give it back with
** idemJsonRelease().
*/
IDEM_PRIVATE IdemJson *idemJsonAcquire(IdemJson **ppShared){
  IdemJson *p = *ppShared;
  if( p==0 ){
    p = *ppShared = idemJsonNew();
  }else if( p->isBusy ){
    p = idemJsonNew();
  }
  if( p ) p->isBusy = 1;
  return p;
}

/* Give back a canonicalizer from idemJsonAcquire() (a private one is
** freed).  p may be NULL. */
IDEM_PRIVATE void idemJsonRelease(IdemJson **ppShared, IdemJson *p){
  if( p ){
    p->isBusy = 0;
    if( p!=*ppShared ) idemJsonFree(p);
  }
}

/* The canonical text of the last successful idemJsonCanonical(), valid
** until the next call.  It is also zero-terminated. */
IDEM_PRIVATE const char *idemJsonText(IdemJson *p, int *pnText){
  if( pnText ) *pnText = (int)p->nOut;
  return p->nOut ? (const char*)p->zOut : "";
}

/* What the last idemJsonCanonical() found wrong ("" after success). */
IDEM_PRIVATE const char *idemJsonError(IdemJson *p){
  return p->zErr;
}

/*
** The JSON text of an SQL integer or real (doc/contract.md §2, §3): an
** integer as its decimal digits, a real as ECMAScript prints that double
** (the printer of canonical JSON: 42.0 gives "42", 0.30000000000000004
** keeps every digit), never SQLite's 15-digit text of a real.  pVal must
** be SQLITE_INTEGER or SQLITE_FLOAT.  Writes zOut (IDEM_JSON_NUMBUF bytes,
** zero-terminated) and returns its length, or -1 for a real that is not
** finite (Inf, -Inf), which has no JSON form.
*/
IDEM_PRIVATE int idemJsonNumberText(sqlite3_value *pVal, char *zOut){
  if( sqlite3_value_type(pVal)==SQLITE_INTEGER ){
    sqlite3_snprintf(IDEM_JSON_NUMBUF, zOut, "%lld", sqlite3_value_int64(pVal));
    return (int)strlen(zOut);
  }else{
    double v = sqlite3_value_double(pVal);
    sqlite3_uint64 bits;
    int n;
    memcpy(&bits, &v, sizeof(bits));
    if( ((bits>>52) & 0x7ff)==0x7ff ) return -1;
    n = idemNumberFormat(v, zOut);
    zOut[n] = 0;
    return n;
  }
}

/* idem_canonical(J): see the header comment. */
static void idemCanonicalFunc(
  sqlite3_context *ctx,
  int argc,
  sqlite3_value **argv
){
  IdemJson *pShared = (IdemJson*)sqlite3_user_data(ctx);
  IdemJson *p;
  const char *z;
  int n, rc;
  char zNum[IDEM_JSON_NUMBUF];
  (void)argc;

  switch( sqlite3_value_type(argv[0]) ){
    case SQLITE_NULL:
      sqlite3_result_error(ctx, "idem: idem_canonical(): argument is NULL; "
                                "expected JSON text", -1);
      return;
    case SQLITE_BLOB:
      sqlite3_result_error(ctx, "idem: idem_canonical(): argument is a blob; "
                                "expected JSON text", -1);
      return;
    case SQLITE_INTEGER:
    case SQLITE_FLOAT:           /* that JSON number, not SQLite's text */
      n = idemJsonNumberText(argv[0], zNum);
      if( n<0 ){
        sqlite3_result_error(ctx, "idem: idem_canonical(): argument is a real"
                             " that is not finite (Inf or -Inf)", -1);
        return;
      }
      sqlite3_result_text(ctx, zNum, n, SQLITE_TRANSIENT);
      return;
  }
  z = (const char*)sqlite3_value_text(argv[0]);
  n = sqlite3_value_bytes(argv[0]);
  if( z==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  p = idemJsonAcquire(&pShared);
  if( p==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  rc = idemJsonCanonical(p, z, n);
  if( rc==SQLITE_OK
   && p->nOut>sqlite3_limit(sqlite3_context_db_handle(ctx),
                            SQLITE_LIMIT_LENGTH, -1) ){
    sqlite3_snprintf(sizeof(p->zErr), p->zErr,
                     "canonical text longer than the length limit");
    rc = SQLITE_TOOBIG;
  }
  switch( rc ){
    case SQLITE_OK:
      sqlite3_result_text64(ctx, (const char*)p->zOut, p->nOut,
                            SQLITE_TRANSIENT, SQLITE_UTF8);
      break;
    default:
      idemResultError(ctx, rc, "idem: idem_canonical(): %s", idemJsonError(p));
      break;
  }
  idemJsonRelease(&pShared, p);
}

static void idemJsonDestroy(void *p){
  idemJsonFree((IdemJson*)p);
}

/* Register idem_canonical(J) on db, with its own reusable IdemJson. */
IDEM_PRIVATE int idemCanonicalRegister(sqlite3 *db){
  IdemJson *p = idemJsonNew();
  if( p==0 ) return SQLITE_NOMEM;
  /* On failure sqlite3_create_function_v2() calls the destructor itself. */
  return sqlite3_create_function_v2(db, "idem_canonical", 1,
      SQLITE_UTF8|SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS, p,
      idemCanonicalFunc, 0, 0, idemJsonDestroy);
}

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
** in strings, valid UTF-8.  A UTF-8 byte order mark at the start is an
** error, as in Python's json.loads() and JavaScript's JSON.parse() (RFC
** 8259 forbids sending one and lets a parser choose).  In addition a
** duplicate member name (compared after unescaping), a lone surrogate
** escape, a number that overflows a double, and nesting deeper than
** IDEM_JSON_MAX_DEPTH are errors.  Every
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
** one output buffer as it reads.  The innermost frame is a pointer (so the
** loop needs no depth and no "in an object" flag in registers); after a
** ',' the loop jumps straight to the next name or value; a string value is
** tested for first and every other first byte, whitespace included, is
** dispatched by one jump table; a single space (Python's ", " and ": ") is
** skipped inline and only longer whitespace costs a call.  An object's
** members are recorded on a member stack (output offsets of each member's
** name and end, and a sort key).  While the object is read each name is
** compared with the previous one; if they all ascend, the output is
** already canonical.  Otherwise, at
** the '}', the object's members are sorted by their sort keys (below): up
** to 8 by a sorting network, one per size, with no branch on the keys; up
** to 16 by insertion; larger objects, and any whose keys tie, by the
** general sort (idemJsonSortMembers(): a radix sort whose digits are
** 8-byte words, linear in the bytes of the names whatever they share;
** its comment says how).  If two names compare equal, the duplicate is
** reported; else the members that change place (those that keep it at
** either end stay) are written in sorted order to a scratch buffer, and
** copied back in one piece.  Nested objects are finished before their parent, so a
** parent only moves finished texts.  Moving them at every level would
** cost the depth times the size, so an object whose text is mostly (over
** 7/8) objects already moved, or that holds an object that waits, waits
** too: its sorted member spans are kept and it is written once when the
** value is complete, with the waiting objects inside it (idemJsonEmit()).
** Each byte is then moved at most twice, and the cost is linear in the
** input plus the sorts.
**
** Names are compared on their canonical text, which is unique for a given
** unescaped name.  Raw UTF-8 bytes compare in code point order, and the
** few canonical escapes are decoded on the fly.  UTF-16 order differs from
** code point order only in that U+E000..U+FFFF (lead bytes 0xEE, 0xEF) sort
** after the astral planes (lead bytes 0xF0..0xF4, surrogate pairs in
** UTF-16); the comparator fixes up exactly that case at the first byte that
** differs.  Most comparisons are settled by the sort keys alone: the first
** 8 bytes of each name as one integer, with the same fix-up.  Names whose
** keys tie are told apart by the next 8 bytes, and so on, a group of names
** that share a long prefix passing over it at once.
**
** Output never grows faster than input except in numbers ("1e20" prints as
** 21 digits), so the buffer is sized to the input once, and only a number
** checks for room.  Strings are scanned 16 bytes at a time on x86-64 (SSE2)
** and 8 elsewhere (a block with no quote, backslash, control or non-ASCII
** byte is copied whole); UTF-8 is validated as it is copied, a run of
** 2-byte, 3-byte or 4-byte characters a block at a time on x86-64; a run of
** escapes is decoded in one loop.  Where the whole input is known valid
** UTF-8 first (idemUtf8Valid(), AVX2 at run time), bytes above 0x7f are
** plain to the block scan, and mixed scripts are copied 16 bytes at a time
** with no stop at each change of script; an input that fails that check
** is read the first way, which finds and reports its first bad byte.  Buffers larger than IDEM_JSON_KEEP are
** released at the end of a call, unless its text is larger than that (and
** at most IDEM_JSON_HOLD: they are kept for the next), and idem_canonical() gives
** SQLite an output of IDEM_JSON_GIVE bytes or more instead of a copy.
*/
#include "idemInt.h"

/* Maximum nesting of arrays and objects.  "[[...]]" with 1000 brackets each
** side is accepted; 1001 is an error.  The parser never recurses, so the
** limit protects nothing but sanity and the size of IdemJson. */
#define IDEM_JSON_MAX_DEPTH 1000

/* Buffers above this size are freed at the end of a call whose output is
** small (at most this many bytes), not kept for the next call.  A large
** text's are kept for the next call: taken fresh from the system, the
** scratch of an object of 400 000 members (about 22 MB touched) cost a
** page fault every 4 KB at each call, more than its sort.  Those of a
** text of more than IDEM_JSON_HOLD bytes are freed at its end too. */
#define IDEM_JSON_KEEP (1024*1024)
#define IDEM_JSON_HOLD (16*1024*1024)

/* idem_canonical() gives SQLite its output buffer, instead of a copy, when
** the text is at least this long: a copy then costs far more than the
** allocation of a new buffer for the next call. */
#define IDEM_JSON_GIVE (64*1024)

/* A test that usually holds, for the layout of the code. */
#if defined(__GNUC__)
# define IDEM_JSON_LIKELY(x) __builtin_expect((x)!=0, 1)
#else
# define IDEM_JSON_LIKELY(x) (x)
#endif

/* The largest canonical text (idemJsonText() reports an int). */
#define IDEM_JSON_MAX_TEXT 0x7fffffff

/* A member of an object being read: a sort key; offsets into the output
** buffer of the name's opening quote, just past its closing quote, and just
** past the member's value (set at its ',', and for the last member only
** if the object is sorted); and the input offset of the name for
** messages. */
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
  unsigned char isArray;     /* 1 for an array (0 for aFrame[0]) */
  unsigned char needSort;    /* Object: names seen so far do not ascend */
  unsigned char nameEsc;     /* Object: its names' IdemJson.escOr, or'd */
};

/* An object out of order that waits (see DESIGN above): its members in
** sorted order are kept, and it is written once, at the end, with the
** objects inside it (idemJsonEmit()).  Kept in the order the objects
** closed; the ones inside a record are the records just before it. */
typedef struct IdemJsonSorted IdemJsonSorted;
struct IdemJsonSorted {
  uint32_t iStart;           /* Output offset of its first member's name */
  uint32_t iEnd;             /* Output offset of its '}' */
  uint32_t iFirst;           /* Its first record inside it in aSorted[] */
  uint32_t iSpan;            /* Its first member in aSpan[] */
  uint32_t nSpan;            /* Its number of members */
};

/* A member of such an object: output offsets of its name and its end. */
typedef struct IdemJsonSpan IdemJsonSpan;
struct IdemJsonSpan {
  uint32_t iName;
  uint32_t iEnd;
};

/* Writing one record (idemJsonEmit()): its member being written, and
** where in that member's text the writing is. */
typedef struct IdemJsonEmitFrame IdemJsonEmitFrame;
struct IdemJsonEmitFrame {
  uint32_t iRec;             /* The record, in aSorted[] */
  uint32_t iMem;             /* Its member being written (last first) */
  uint32_t iFrom;            /* That member's text starts here */
  uint32_t iTo;              /* and is written down to here so far */
  int64_t iNext;             /* Next record to look at inside it, or -1 */
};

struct IdemJson {
  unsigned char *zOut;       /* Canonical text of the last call */
  sqlite3_int64 nOut;        /* Its length */
  sqlite3_int64 nOutAlloc;   /* Bytes allocated at zOut */
  unsigned char *zTmp;       /* Scratch for reordering an object */
  sqlite3_int64 nTmpAlloc;
  IdemJsonMember *aMember;   /* Member records of the open objects */
  sqlite3_int64 nMemberAlloc;
  IdemJsonSorted *aSorted;   /* Objects to write at the end */
  sqlite3_int64 nSorted;
  sqlite3_int64 nSortedAlloc;
  IdemJsonSpan *aSpan;       /* Their members, sorted */
  sqlite3_int64 nSpan;
  sqlite3_int64 nSpanAlloc;
  IdemJsonEmitFrame *aEmit;  /* Stack of idemJsonEmit() */
  sqlite3_int64 nEmitAlloc;
  IdemJsonSpan *aMoved;      /* Objects already rewritten in sorted order */
  sqlite3_int64 nMoved;
  sqlite3_int64 nMovedAlloc;
  sqlite3_int64 iSwap;       /* If not 0: zTmp holds zOut[0..iSwap), sorted */
  int isBusy;                /* Lent by idemJsonAcquire() */
  int isUtf8;                /* This input is known valid UTF-8 */
  unsigned char escOr;       /* idemJsonString(): each kept escape's letter
                             ** or'd in, 0x80 for \u00xx (names only read
                             ** it: idemJsonSortMembers()) */
  IdemJsonFrame aFrame[IDEM_JSON_MAX_DEPTH+1];  /* [0]: outside any */
  char zErr[200];            /* Error message of the last call */
};

/* A hint to start loading the cache line at x (no effect on the result).
** The sorts of large objects read names and member records in the order
** of their ranks, not of the text: once the object outgrows the caches
** each such read waits for memory, so the loops that do so ask for the
** record IJ_AHEAD steps ahead and for its name IJ_AHEAD/2 ahead (the
** name's address is in the record).  Objects of fewer than
** IJ_PREFETCH_MIN members fit in the caches and skip it. */
#if defined(__GNUC__)
# define IJ_PREFETCH(x) __builtin_prefetch(x)
# define IJ_PREFETCH_W(x) __builtin_prefetch(x, 1)
#else
# define IJ_PREFETCH(x) ((void)0)
# define IJ_PREFETCH_W(x) ((void)0)
#endif
#define IJ_AHEAD 16
#define IJ_PREFETCH_MIN 2048

/* Objects of at least this many members are rewritten in sorted order
** by a scatter (idemJsonFinishObject()): the members read in the order
** of the text, each written to its place, not read in sorted order (a
** gather), where each member's record and then its text is a wait for
** memory that a prefetch a few members ahead does not hide.  Writes that
** miss do not hold up the loop as reads do. */
#define IJ_SCATTER_MIN 2048

/* How many members ahead the scatter fetches, for writing, the place it
** will write (idemJsonScatter()), and how many ranks ahead of where it
** writes each part the split of a large range does (two lines of ranks:
** idemJsonSortRanksMsd()). */
#define IJ_SCATTER_AHEAD 16
#define IJ_SPLIT_AHEAD 8

/* Functions on the path of every value, forced inline. */
#if defined(__GNUC__)
# define IDEM_JSON_INLINE __attribute__((always_inline)) inline
#else
# define IDEM_JSON_INLINE
#endif

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

/* The escapes that are their own canonical form, by their second byte:
** the byte each stands for (never 0); 0 for any other byte.  The scan
** tests it, idemJsonUnescape() reads the value from it. */
static const unsigned char idemJsonKeepEscape[256] = {
  ['"'] = '"', ['\\'] = '\\', ['b'] = '\b', ['f'] = '\f', ['n'] = '\n',
  ['r'] = '\r', ['t'] = '\t'
};

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
# ifdef IDEM_SSE2
#  define IDEM_JSON_SSE2 1
/* 16 bytes from idemJsonKeyMask+16-n keep the first n bytes (0<=n<=16) of
** a vector and clear the rest. */
static const unsigned char idemJsonKeyMask[32] = {
  0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,
  0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0
};

/* The special bytes of v, as the two vectors say: with flip 0 and lim
** 0x20, "is below 0x20 or above 0x7f" is the signed v < 0x20; for the
** string scan of an input known to be valid UTF-8 (idemUtf8Valid()) bytes
** above 0x7f are plain, and "is below 0x20" alone is the signed
** (v ^ 0x80) < (0x20 ^ 0x80).  idemJsonScanFlip() and idemJsonScanLim()
** give the two vectors for the input being read. */
static IDEM_JSON_INLINE unsigned int idemJsonSpecial16x(
  __m128i v,
  __m128i flip,               /* 0, or 0x80 in every byte */
  __m128i lim                 /* 0x20, or 0xa0 in every byte */
){
  __m128i q = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
  __m128i b = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
  __m128i c = _mm_cmplt_epi8(_mm_xor_si128(v, flip), lim);
  return (unsigned int)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(q, b), c));
}
#define idemJsonScanFlip(p) _mm_set1_epi8((p)->isUtf8 ? (char)0x80 : 0)
#define idemJsonScanLim(p)  _mm_set1_epi8((p)->isUtf8 ? (char)0xa0 : 0x20)

/* Every byte above 0x7f special (member names, whose sort key needs them). */
static IDEM_JSON_INLINE unsigned int idemJsonSpecial16(__m128i v){
  return idemJsonSpecial16x(v, _mm_setzero_si128(), _mm_set1_epi8(0x20));
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
static IDEM_JSON_INLINE const unsigned char *idemJsonDigits(
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
** Indentation after a newline is skipped 16 bytes at a time on x86-64
** (SSE2), a word at a time elsewhere where possible.
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
#if defined(IDEM_JSON_SSE2)
  /* 16 bytes a step, each of the four whitespace bytes found at once: a
  ** run that mixes them ("\r\n\t  \t") costs no branch per byte. */
  while( zEnd-s>=16 ){
    __m128i v = _mm_loadu_si128((const __m128i*)s);
    __m128i w = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                     _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\t')),
                     _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))));
    unsigned int m = (unsigned int)_mm_movemask_epi8(w) ^ 0xffff;
    if( m ) return s + __builtin_ctz(m);
    s += 16;
  }
  while( s<zEnd && *s<=' ' && ((IJ_WS_BITS>>*s) & 1) ) s++;
#else
  while( s<zEnd && *s<=' ' && ((IJ_WS_BITS>>*s) & 1) ){
    s++;
#if defined(IDEM_JSON_LE_WORDS)
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
#endif
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
  f = zDot+1;                                         /* 0.000ddd */
  if( *f=='0' ){
    /* more than 20 digits after the '.' (5 zeros and 15 more at most):
    ** not plain, and a run of zeros not read here */
    if( zEnd-zDot>21 ) return 0;
    while( *++f=='0' ){}
  }
  return f-zDot-1<=5 && zEnd-f<=15;
}

/* Value of the 4 hex digits at z, or -1.  (Inlined: it is on the path
** of every \u escape.) */
static IDEM_JSON_INLINE int idemJsonHex4(const unsigned char *z){
  unsigned int a = idemJsonHexVal[z[0]], b = idemJsonHexVal[z[1]];
  unsigned int c = idemJsonHexVal[z[2]], d = idemJsonHexVal[z[3]];
  if( (a|b|c|d) & 16 ) return -1;
  return (int)(a<<12 | b<<8 | c<<4 | d);
}

#ifdef IDEM_JSON_LE_WORDS
/* The canonical text of each ASCII character inside a string, in the low
** bytes of a little-endian word, and its length in the top byte: the
** character itself; \" and \\; \b \t \n \f \r; \u00xx (lowercase) for the
** other control characters.  (U+007F is written raw.)  Byte 6, past the
** text, is the flag of a kept escape for IdemJson.escOr: its letter, 0x80
** for \u00xx, 0 for a character written as it is. */
#define IJ_HX(x)  ((x)<10 ? '0'+(x) : 'a'-10+(x))
#define IJ_EU(c)  (0x3030755cULL | (uint64_t)IJ_HX((c)>>4)<<32 \
                   | (uint64_t)IJ_HX((c)&15)<<40 | 0x80ULL<<48 | 6ULL<<56)
#define IJ_EE(x)  (0x5cULL | (uint64_t)(x)<<8 | (uint64_t)(x)<<48 | 2ULL<<56)
#define IJ_EA(c)  ((uint64_t)(c) | 1ULL<<56)
#define IJ_EU4(c) IJ_EU(c), IJ_EU(c+1), IJ_EU(c+2), IJ_EU(c+3)
#define IJ_EA4(c) IJ_EA(c), IJ_EA(c+1), IJ_EA(c+2), IJ_EA(c+3)
static const uint64_t idemJsonAsciiOut[128] = {
  IJ_EU4(0), IJ_EU4(4),                                         /* 0x00 */
  IJ_EE('b'), IJ_EE('t'), IJ_EE('n'), IJ_EU(11),
  IJ_EE('f'), IJ_EE('r'), IJ_EU(14), IJ_EU(15),
  IJ_EU4(16), IJ_EU4(20), IJ_EU4(24), IJ_EU4(28),               /* 0x10 */
  IJ_EA(0x20), IJ_EA(0x21), IJ_EE('"'), IJ_EA(0x23),            /* 0x20 */
  IJ_EA4(0x24), IJ_EA4(0x28), IJ_EA4(0x2c),
  IJ_EA4(0x30), IJ_EA4(0x34), IJ_EA4(0x38), IJ_EA4(0x3c),       /* 0x30 */
  IJ_EA4(0x40), IJ_EA4(0x44), IJ_EA4(0x48), IJ_EA4(0x4c),       /* 0x40 */
  IJ_EA4(0x50), IJ_EA4(0x54), IJ_EA4(0x58),                     /* 0x50 */
  IJ_EE('\\'), IJ_EA(0x5d), IJ_EA(0x5e), IJ_EA(0x5f),
  IJ_EA4(0x60), IJ_EA4(0x64), IJ_EA4(0x68), IJ_EA4(0x6c),       /* 0x60 */
  IJ_EA4(0x70), IJ_EA4(0x74), IJ_EA4(0x78), IJ_EA4(0x7c),       /* 0x70 */
};

#endif

/* The length of the valid UTF-8 character at s[0..zEnd), whose first byte
** is not ASCII, or 0 if it is not one. */
static int idemJsonUtf8Len(const unsigned char *s, const unsigned char *zEnd){
  const IdemJsonUtf8 *u = &aIdemJsonUtf8[idemJsonClass[s[0]]];
  int i;
  if( u->n==0 || zEnd-s<u->n || s[1]<u->lo || s[1]>u->hi ) return 0;
  for(i=2; i<u->n; i++){
    if( (s[i] & 0xc0)!=0x80 ) return 0;
  }
  return u->n;
}

/* Record an error: zWhat, then where (s is the offending position in the
** input z[0..zEnd)).  Returns SQLITE_ERROR.  Instead of the generic
** complaint, a '/' that starts a comment is named as such, a UTF-8 byte
** order mark at the start as such, and a byte that starts no valid UTF-8
** character as invalid UTF-8. */
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
    }else if( s==z && zEnd-s>=3 && s[0]==0xef && s[1]==0xbb && s[2]==0xbf ){
      zWhat = "byte order mark (JSON text has none)";
    }else if( s[0]>=0x80 && idemJsonUtf8Len(s, zEnd)==0 ){
      zWhat = "invalid UTF-8";
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

/* Make room for at least nNeed member records: twice as many as there
** are, or, if more, one for every 16 bytes of the output buffer (the
** input's size: a large object's records then grow once, not doubled
** from 64, each doubling a copy of all so far: 6 MB for an object of
** 100 000 members). */
static int idemJsonGrowMembers(IdemJson *p, sqlite3_int64 nNeed){
  sqlite3_int64 nNew = p->nMemberAlloc ? p->nMemberAlloc*2 : 64;
  IdemJsonMember *aNew;
  if( nNew<p->nOutAlloc/16 ) nNew = p->nOutAlloc/16;
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
** length in *pn.  Canonical text keeps \" \\ \b \f \n \r \t and \u00xx
** for the other control characters, nothing else. */
static int idemJsonUnescape(const unsigned char *z, int *pn){
  if( z[1]=='u' ){
    *pn = 6;
    return idemJsonHex4(z+2);
  }
  assert( idemJsonKeepEscape[z[1]]!=0 );
  *pn = 2;
  return idemJsonKeepEscape[z[1]];
}

/* Non-zero if some byte of w is zero (exact as a yes or no). */
#define IJ_HAS_ZERO(w) (((w) - IJ_ONES) & ~(w) & IJ_HIGH)

/* Compare the names of two members by the UTF-16 code units of the
** unescaped names, given their canonical texts in zOut, from byte iSkip of
** each on (the bytes before are equal, and iSkip is not inside an escape).
** Equal words without a backslash are passed 8 bytes at a time: the
** position stays at a character's or an escape's start. */
static int idemJsonNameCmpText(
  const unsigned char *zOut,
  const IdemJsonMember *pA,
  const IdemJsonMember *pB,
  int iSkip
){
  const unsigned char *a = zOut + pA->iName + 1;
  const unsigned char *b = zOut + pB->iName + 1;
  sqlite3_int64 na = pA->iNameEnd - pA->iName - 2;
  sqlite3_int64 nb = pB->iNameEnd - pB->iName - 2;
  sqlite3_int64 n = na<nb ? na : nb;
  sqlite3_int64 i = iSkip;
  while( i<n ){
    int ca, cb, la = 1, lb = 1;
    if( n-i>=8 ){
      uint64_t wa, wb;
      memcpy(&wa, a+i, 8);
      memcpy(&wb, b+i, 8);
      if( wa==wb && !IJ_HAS_ZERO(wa ^ (IJ_ONES*'\\')) ){ i += 8; continue; }
    }
    ca = a[i];
    cb = b[i];
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
static IDEM_JSON_INLINE uint64_t idemJsonNameKey(
  const unsigned char *z,
  sqlite3_int64 n
){
  uint64_t k = 0;
  int nEsc;
#ifdef IDEM_JSON_LE_WORDS
  uint64_t m;
  memcpy(&k, z, 8);
  if( n<8 ) k &= ((uint64_t)1 << (8*n)) - 1;
  m = idemJsonZeroBytes(k ^ (IJ_ONES*'\\'));
  if( m ){
    /* An escape at byte e: the bytes before it, its value, then 0 (the
    ** name's text goes on past the backslash: its escape is whole) */
    int e = IDEM_JSON_CTZ8(m);
    k &= ((uint64_t)1 << (8*e)) - 1;
    k |= (uint64_t)idemJsonUnescape(z+e, &nEsc) << (8*e);
  }
  /* 0xee, 0xef become 0xfe, 0xff. */
  k += idemJsonZeroBytes((k & (IJ_ONES*0xfe)) ^ (IJ_ONES*0xee)) >> 3;
  return __builtin_bswap64(k);
#else
  sqlite3_int64 j = 0;
  int i;
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
#endif
}

/* Compare two names whose first iSkip bytes are equal and whose sort keys
** were taken from there. */
static int idemJsonNameCmp(
  const unsigned char *zOut,
  const IdemJsonMember *pA,
  const IdemJsonMember *pB,
  int iSkip
){
  if( pA->iKey!=pB->iKey ) return pA->iKey<pB->iKey ? -1 : 1;
  return idemJsonNameCmpText(zOut, pA, pB, iSkip);
}

/* A member in the sort of its object: its sort key and its index in the
** object's member records; in an object of IJ_SCATTER_MIN members or
** more, the length of its text too (for idemJsonFinishObject(), which
** then reads no member record in sorted order). */
typedef struct IdemJsonRank IdemJsonRank;
struct IdemJsonRank {
  uint64_t iKey;
  uint32_t iMem;
  uint32_t nLen;
};

/* Objects of up to IDEM_JSON_NET members are sorted by their keys with a
** sorting network (idemJsonSortKeys()), up to IDEM_JSON_SMALL by insertion
** (idemJsonInsertKeys()); larger ones, and those whose keys tie, in blocks
** of IDEM_JSON_NET sorted so, then merged (idemJsonSortMembers()). */
#define IDEM_JSON_NET    8
#define IDEM_JSON_SMALL 16

/* One comparator of a sorting network: keys kX and kY, with their member
** indexes oX and oY, put in order without a branch. */
#define IJ_CE(x,y) do{                                            \
  uint64_t kx_ = k##x, ky_ = k##y;                                \
  uint32_t ox_ = o##x, oy_ = o##y;                                \
  int bSwap_ = ky_<kx_;                                           \
  k##x = bSwap_ ? ky_ : kx_;  k##y = bSwap_ ? kx_ : ky_;          \
  o##x = bSwap_ ? oy_ : ox_;  o##y = bSwap_ ? ox_ : oy_;          \
}while(0)
#define IJ_IN(i)  k##i = a[i].iKey
#define IJ_OUT(i) aOut[i].iKey = k##i, aOut[i].iMem = o##i + iBase

/* Sort the n members a[0..n) (1 <= n <= IDEM_JSON_NET) by their sort keys
** alone: aOut[r] is set to the key and the index in a[] (plus iBase) of
** the member of rank r.  Size-optimal sorting networks (Knuth, TAOCP 3,
** 5.3.4), so no branch depends on the keys.  Returns 0 if two keys are
** equal (the names must then be compared, by idemJsonSortMembers()):
** equal keys end next to each other, and each neighbour is looked at. */
static IDEM_JSON_INLINE int idemJsonSortKeys(
  const IdemJsonMember *a,
  int n,
  uint32_t iBase,
  IdemJsonRank *aOut
){
  uint64_t k0, k1, k2, k3, k4, k5, k6, k7;
  uint32_t o0 = 0, o1 = 1, o2 = 2, o3 = 3, o4 = 4, o5 = 5, o6 = 6, o7 = 7;
  int bTie = 0;
  switch( n ){
    default:
      IJ_IN(0);
      IJ_OUT(0);
      break;
    case 2:
      IJ_IN(0); IJ_IN(1);
      IJ_CE(0,1);
      IJ_OUT(0); IJ_OUT(1);
      bTie = (k0==k1);
      break;
    case 3:
      IJ_IN(0); IJ_IN(1); IJ_IN(2);
      IJ_CE(0,2); IJ_CE(0,1); IJ_CE(1,2);
      IJ_OUT(0); IJ_OUT(1); IJ_OUT(2);
      bTie = (k0==k1) | (k1==k2);
      break;
    case 4:
      IJ_IN(0); IJ_IN(1); IJ_IN(2); IJ_IN(3);
      IJ_CE(0,1); IJ_CE(2,3); IJ_CE(0,2); IJ_CE(1,3); IJ_CE(1,2);
      IJ_OUT(0); IJ_OUT(1); IJ_OUT(2); IJ_OUT(3);
      bTie = (k0==k1) | (k1==k2) | (k2==k3);
      break;
    case 5:
      IJ_IN(0); IJ_IN(1); IJ_IN(2); IJ_IN(3); IJ_IN(4);
      IJ_CE(0,1); IJ_CE(3,4); IJ_CE(2,4); IJ_CE(2,3); IJ_CE(1,4);
      IJ_CE(0,3); IJ_CE(0,2); IJ_CE(1,3); IJ_CE(1,2);
      IJ_OUT(0); IJ_OUT(1); IJ_OUT(2); IJ_OUT(3); IJ_OUT(4);
      bTie = (k0==k1) | (k1==k2) | (k2==k3) | (k3==k4);
      break;
    case 6:
      IJ_IN(0); IJ_IN(1); IJ_IN(2); IJ_IN(3); IJ_IN(4); IJ_IN(5);
      IJ_CE(1,2); IJ_CE(4,5); IJ_CE(0,2); IJ_CE(3,5); IJ_CE(0,1);
      IJ_CE(3,4); IJ_CE(2,5); IJ_CE(0,3); IJ_CE(1,4); IJ_CE(2,4);
      IJ_CE(1,3); IJ_CE(2,3);
      IJ_OUT(0); IJ_OUT(1); IJ_OUT(2); IJ_OUT(3); IJ_OUT(4); IJ_OUT(5);
      bTie = (k0==k1) | (k1==k2) | (k2==k3) | (k3==k4) | (k4==k5);
      break;
    case 7:
      IJ_IN(0); IJ_IN(1); IJ_IN(2); IJ_IN(3); IJ_IN(4); IJ_IN(5); IJ_IN(6);
      IJ_CE(1,2); IJ_CE(3,4); IJ_CE(5,6); IJ_CE(0,2); IJ_CE(3,5);
      IJ_CE(4,6); IJ_CE(0,1); IJ_CE(4,5); IJ_CE(2,6); IJ_CE(0,4);
      IJ_CE(1,5); IJ_CE(0,3); IJ_CE(2,5); IJ_CE(1,3); IJ_CE(2,4);
      IJ_CE(2,3);
      IJ_OUT(0); IJ_OUT(1); IJ_OUT(2); IJ_OUT(3); IJ_OUT(4); IJ_OUT(5);
      IJ_OUT(6);
      bTie = (k0==k1) | (k1==k2) | (k2==k3) | (k3==k4) | (k4==k5) | (k5==k6);
      break;
    case 8:
      IJ_IN(0); IJ_IN(1); IJ_IN(2); IJ_IN(3); IJ_IN(4); IJ_IN(5); IJ_IN(6);
      IJ_IN(7);
      IJ_CE(0,2); IJ_CE(1,3); IJ_CE(4,6); IJ_CE(5,7); IJ_CE(0,4);
      IJ_CE(1,5); IJ_CE(2,6); IJ_CE(3,7); IJ_CE(0,1); IJ_CE(2,3);
      IJ_CE(4,5); IJ_CE(6,7); IJ_CE(2,4); IJ_CE(3,5); IJ_CE(1,4);
      IJ_CE(3,6); IJ_CE(1,2); IJ_CE(3,4); IJ_CE(5,6);
      IJ_OUT(0); IJ_OUT(1); IJ_OUT(2); IJ_OUT(3); IJ_OUT(4); IJ_OUT(5);
      IJ_OUT(6); IJ_OUT(7);
      bTie = (k0==k1) | (k1==k2) | (k2==k3) | (k3==k4) | (k4==k5) | (k5==k6)
           | (k6==k7);
      break;
  }
  return !bTie;
}

/* The same as idemJsonSortKeys() (iBase 0) for up to IDEM_JSON_SMALL
** members, by insertion: fewer instructions than a merge of two networks'
** blocks, at the price of a mispredicted branch or so per member.  Returns
** 0 if two keys are equal (a key equal to one already placed stops just
** after it). */
static int idemJsonInsertKeys(
  const IdemJsonMember *a,
  int n,
  IdemJsonRank *aOut
){
  int i, m, bTie = 0;
  aOut[0].iKey = a[0].iKey;
  aOut[0].iMem = 0;
  for(i=1; i<n; i++){
    uint64_t k = a[i].iKey;
    for(m=i; m>0 && aOut[m-1].iKey>k; m--) aOut[m] = aOut[m-1];
    aOut[m].iKey = k;
    aOut[m].iMem = (uint32_t)i;
    bTie |= m>0 && aOut[m-1].iKey==k;
  }
  return !bTie;
}

/* Make room for nText bytes, and 8 more, at zTmp (its content goes). */
static int idemJsonGrowTmp(IdemJson *p, sqlite3_int64 nText){
  if( p->nTmpAlloc<nText+8 ){
    sqlite3_free(p->zTmp);
    p->nTmpAlloc = 0;
    p->zTmp = sqlite3_malloc64(nText+8);
    if( p->zTmp==0 ){
      sqlite3_snprintf(sizeof(p->zErr), p->zErr, "out of memory");
      return SQLITE_NOMEM;
    }
    p->nTmpAlloc = nText+8;
  }
  return SQLITE_OK;
}

/*
** The general sort: objects of more than IDEM_JSON_SMALL members, and
** those whose 8-byte keys tie.  Its cost is linear in the bytes of the
** names plus the number of members, whatever the names share: a multikey
** radix sort whose digits are 8-byte words.  It was chosen over an
** LCP-aware merge sort (O(n log n + bytes)) because it never compares
** whole names, and its cost per member does not grow with the size of the
** object (a merge sort makes 16 passes over 400 000 members).
**
** The members are sorted first by the keys of idemJsonNameKey(), which
** order names that differ in them, escapes and all.  Each run of equal
** keys is then a group, sorted by its names' bytes: the key of bytes
** iOff..iOff+8 (idemJsonWordKey(): big-endian, zeros past the end of the
** name, lead bytes 0xee and 0xef after 0xf0..0xf4), from iOff 0.  A group
** is sorted by key up to IDEM_JSON_SMALL members by insertion, up to
** IDEM_JSON_RADIX by a merge of blocks of 8 sorted by a network, beyond by
** a radix sort of the keys 8 bits at a time (a byte that all keys share
** costs no pass); keys already in order, or in the reverse order, cost
** one pass.  Each run of equal keys is split by the length left: a name
** that ends within the word is a prefix of the others and goes first,
** shorter first (two that end alike are the same name: a duplicate); the
** names that go on form a group at iOff+8.  When every key of a group is
** equal and every name goes on, the group's common prefix is measured at
** once (idemJsonGroupPrefix(), 32 bytes a step) and the keys are taken
** after it; a group of IJ_LCP_MIN members or more whose sample of names
** shares more than the next 8 bytes does both in one pass
** (idemJsonPrefixKeys()).  When every name that goes on has the same key and only a
** few end within it (a prefix chain), a group of 32 or more is split
** around its longest name instead (idemJsonPivot()).  Each byte of a name is so read a bounded number of times,
** and each member is sorted once per word that still ties it with
** another: the work is linear in the bytes that tell the names apart.
**
** Objects of IJ_PREFETCH_MIN members or more whose names are not all
** 8 bytes or fewer first pass over the prefix that every name shares and
** read every name's keys at bytes 0 and 8 after it in the
** order of the text (idemJsonSortNames(): the groups would otherwise
** read the names in the order of their ranks, a wait for memory each),
** and if no name ends within 8 bytes, a group of equal keys at 0 goes on
** at byte 8 without reading them again;
** ranges of more than IDEM_JSON_MSD ranks are first split by their
** highest differing byte (idemJsonSortRanksMsd()); and objects whose keys
** at 0 and 8 differ in 64 bits or fewer are sorted by those bits packed
** into one key (idemJsonPack()), with no group at 0 or 8.
**
** The bytes read are the canonical texts, in which byte order is the
** order of RFC 8785 unless a name holds an escape ("\n" is 0x0a, not
** 0x5c); if a backslash is among the bytes read, the names that hold one
** are decoded into zTmp and the sort starts again on unescaped names.
** (A sort that read no backslash read every byte that decided it: a
** name's bytes before its group's offset were all read to put it there.)
*/

/* Groups of at least this many members are sorted by radix. */
#define IDEM_JSON_RADIX 256

/* Groups of at least this many members look for a long common prefix
** before they take their keys (idemJsonSortNames()). */
#define IJ_LCP_MIN 64

/* A name as the general sort reads it: its unescaped bytes. */
typedef struct IdemJsonSortText IdemJsonSortText;
struct IdemJsonSortText {
  const unsigned char *z;    /* z[n..n+8) must be readable */
  sqlite3_int64 n;
  uint64_t aK[2];            /* Large objects: keys of bytes 0..8, 8..16 */
};

/* A group of members to sort: ranks iLo..iHi of the object, names known
** equal in their first iOff bytes.  IJ_TAKEN in iOff: the keys at iOff
** are taken already (idemJsonTakeKeys()); an offset is below 2^31 (a
** canonical text is at most IDEM_JSON_MAX_TEXT bytes). */
typedef struct IdemJsonGroup IdemJsonGroup;
struct IdemJsonGroup {
  uint32_t iLo, iHi, iOff;
};
#define IJ_TAKEN 0x80000000u

/* The sort key of bytes z[0..8) of a name with nLeft bytes left from z:
** big-endian, zeros past the end of the name, bytes 0xee and 0xef made
** 0xfe and 0xff (idemJsonNameKey()).  Keys that differ order the names as
** RFC 8785 does; equal keys say the names agree up to here (one or both
** may end here). */
static IDEM_JSON_INLINE uint64_t idemJsonWordKey(
  const unsigned char *z,
  sqlite3_int64 nLeft
){
  uint64_t k, t;
#ifdef IDEM_JSON_LE_WORDS
  memcpy(&k, z, 8);
  k = __builtin_bswap64(k);
#else
  int i;
  k = 0;
  for(i=0; i<8; i++) k = (k<<8) | z[i];
#endif
  if( nLeft<8 ) k &= ~(~(uint64_t)0 >> (8*nLeft));
  /* ASCII (most names): nothing to fix */
  if( (k & IJ_HIGH)==0 ) return k;
  /* 0x80 in the bytes that are 0xee or 0xef (no carries: see
  ** idemJsonZeroBytes()), moved down to 0x10 and added. */
  t = (k & (IJ_ONES*0xfe)) ^ (IJ_ONES*0xee);
  t = ~(((t & ~IJ_HIGH) + ~IJ_HIGH) | t) & IJ_HIGH;
  return k + (t>>3);
}

/* The bits of a key where mask m has a 1, packed to the low end in their
** order (Hacker's Delight, 7-4: the same steps for every key of one mask,
** whose six masks are set once by idemJsonPackInit()).  Keys that agree
** outside m compare as their packed bits do. */
typedef struct IdemJsonPack IdemJsonPack;
struct IdemJsonPack {
  uint64_t m;                /* The bits kept */
  uint64_t mv[6];            /* Those moved by 1, 2, 4, ... 32 places */
};
static void idemJsonPackInit(IdemJsonPack *pk, uint64_t m){
  uint64_t mk = ~m << 1, mp, mv;
  int i;
  pk->m = m;
  for(i=0; i<6; i++){
    mp = mk ^ (mk << 1);
    mp ^= mp << 2;
    mp ^= mp << 4;
    mp ^= mp << 8;
    mp ^= mp << 16;
    mp ^= mp << 32;
    mv = mp & m;
    pk->mv[i] = mv;
    m = (m ^ mv) | (mv >> (1<<i));
    mk &= ~mp;
  }
}
static IDEM_JSON_INLINE uint64_t idemJsonPack(
  const IdemJsonPack *pk,
  uint64_t x
){
  uint64_t t;
  x &= pk->m;
  t = x & pk->mv[0];  x = (x ^ t) | (t >> 1);
  t = x & pk->mv[1];  x = (x ^ t) | (t >> 2);
  t = x & pk->mv[2];  x = (x ^ t) | (t >> 4);
  t = x & pk->mv[3];  x = (x ^ t) | (t >> 8);
  t = x & pk->mv[4];  x = (x ^ t) | (t >> 16);
  t = x & pk->mv[5];  x = (x ^ t) | (t >> 32);
  return x;
}

/* Set the ranks aR[0..n) of the members a[0..n), each with the bits of
** its keys at 0 and 8 (aT[].aK[]) where pk0 and pk1 keep them, packed:
** those at 0 shifted up by nShl, above those at 8 shifted down by nShr
** (the highest of them, when all do not fit: 0 <= nShl, nShr < 64).  With BMI2's PEXT where it is fast (not on AMD's families
** 15h and 17h, where it takes a step per bit), else idemJsonPack().  If
** aCnt, aCnt[b] counts the keys whose byte at bit sh is b (the split of
** idemJsonSortRanksMsd(), counted here, not in two more passes over the
** ranks). */
static void idemJsonPackRanks(
  const IdemJsonMember *a,
  const IdemJsonSortText *aT,
  int n,
  const IdemJsonPack *pk0,
  const IdemJsonPack *pk1,
  int nShl,
  int nShr,
  IdemJsonRank *aR,
  uint32_t *aCnt,
  int sh
){
  int i;
  if( pk0->m==0 ){
    for(i=0; i<n; i++){
      aR[i].iKey = idemJsonPack(pk1, aT[i].aK[1]);
      aR[i].iMem = (uint32_t)i;
      aR[i].nLen = a[i].iEnd - a[i].iName;
    }
  }else{
    for(i=0; i<n; i++){
      aR[i].iKey = (idemJsonPack(pk0, aT[i].aK[0]) << nShl)
                 | (idemJsonPack(pk1, aT[i].aK[1]) >> nShr);
      aR[i].iMem = (uint32_t)i;
      aR[i].nLen = a[i].iEnd - a[i].iName;
    }
  }
  if( aCnt ){
    for(i=0; i<n; i++) aCnt[(aR[i].iKey>>sh) & 0xff]++;
  }
}
#if defined(IDEM_AVX2) && !defined(IDEM_NO_PEXT)
# define IDEM_JSON_PEXT 1
# define idemJsonHasPext() (__builtin_cpu_supports("bmi2") \
    && !__builtin_cpu_is("amdfam15h") && !__builtin_cpu_is("amdfam17h"))
__attribute__((target("bmi2"), noinline))
static void idemJsonPackRanksPext(
  const IdemJsonMember *a,
  const IdemJsonSortText *aT,
  int n,
  uint64_t m0,
  uint64_t m1,
  int nShl,
  int nShr,
  IdemJsonRank *aR,
  uint32_t *aCnt,
  int sh
){
  int i;
  if( aCnt ){
    for(i=0; i<n; i++){
      uint64_t k0 = _pext_u64(aT[i].aK[0], m0);
      uint64_t k = (k0 << nShl) | (_pext_u64(aT[i].aK[1], m1) >> nShr);
      aR[i].iKey = k;
      aR[i].iMem = (uint32_t)i;
      aR[i].nLen = a[i].iEnd - a[i].iName;
      aCnt[(k>>sh) & 0xff]++;
    }
    return;
  }
  for(i=0; i<n; i++){
    uint64_t k0 = _pext_u64(aT[i].aK[0], m0);
    aR[i].iKey = (k0 << nShl) | (_pext_u64(aT[i].aK[1], m1) >> nShr);
    aR[i].iMem = (uint32_t)i;
    aR[i].nLen = a[i].iEnd - a[i].iName;
  }
}

/* The ranks r[0..k) keyed by the bits of their keys where m1 has a 1,
** packed and shifted up by nShl, above those of pK[0..k) where m2 has a
** 1, packed and shifted down by nShr (idemJsonSortNames(), a group whose
** keys at iOff and iOff+8 are both kept). */
__attribute__((target("bmi2"), noinline))
static void idemJsonPackPairPext(
  IdemJsonRank *r,
  const uint64_t *pK,
  int k,
  uint64_t m1,
  uint64_t m2,
  int nShl,
  int nShr
){
  int i;
  for(i=0; i<k; i++){
    r[i].iKey = (_pext_u64(r[i].iKey, m1) << nShl)
              | (_pext_u64(pK[i], m2) >> nShr);
  }
}
#endif

/* The number of bits set in x. */
static int idemJsonBits(uint64_t x){
#if defined(__GNUC__)
  return __builtin_popcountll(x);
#else
  int n = 0;
  for(; x; x &= x-1) n++;
  return n;
#endif
}

/* Whether the keys at iOff are kept (idemJsonTextKey()), and the number
** of keys at 16 an object of n members keeps room for (none below
** IJ_PREFETCH_MIN: its keys are not kept, and its scratch is as it was). */
#define IJ_NK2(n) ((n)>=IJ_PREFETCH_MIN ? (sqlite3_int64)(n) : 0)
#define IJ_KEPT(bKept, iOff) ((bKept) && (iOff)<24 && ((iOff) & 7)==0)

/* The key of bytes iOff..iOff+8 of the name of member iMem
** (idemJsonWordKey()).  In a large object (bKept) the keys at 0, 8 and
** 16 were taken in the order of the text (idemJsonSortNames()), and are
** read from aT[iMem] (0, 8) and aK2[iMem] (16), not from the name: the
** groups would otherwise read the names in the order of their ranks,
** each read a wait for memory once the names outgrow the caches. */
static IDEM_JSON_INLINE uint64_t idemJsonTextKey(
  const IdemJsonSortText *aT,
  const uint64_t *aK2,
  uint32_t iMem,
  sqlite3_int64 iOff,
  int bKept
){
  const IdemJsonSortText *t = &aT[iMem];
  if( IJ_KEPT(bKept, iOff) ) return iOff<16 ? t->aK[iOff>>3] : aK2[iMem];
  return idemJsonWordKey(t->z + iOff, t->n - iOff);
}

/* The groups that a group of a quarter of an object's members makes at
** its next 8 bytes (UTF-16 order at 100 000 names: some 280 groups at 16
** of the 50 000 names that share 12 bytes) take their keys in one pass in
** the order of the text (idemJsonTakeKeys()), not a group at a time in
** the order of their ranks, in an object of IDEM_JSON_TAKE_MIN members or
** more: its records (32 bytes a member) and names pass twice this
** machine's second-level cache (1 MB).  In a smaller one the reads in
** the order of the ranks mostly hit that cache, and the pass cost more
** than it saved (UTF-16 order at 10 000 and 25 000 names: +3% and +2% in
** time; at 50 000 even; at 100 000 -4%).  The tests build with a lower
** one too (canonical-13.27). */
#define IJ_TAKE_FRAC 4

/* Groups of at least this many members whose keys at iOff and iOff+8 are
** both kept are sorted by both at once (idemJsonSortNames()). */
#ifndef IJ_PAIR_MIN
# define IJ_PAIR_MIN 256
#endif
#ifndef IDEM_JSON_TAKE_MIN
# define IDEM_JSON_TAKE_MIN 65536
#endif

/* Set aKey[rank] to the key at iOff of each member at ranks iLo..iHi of an
** object of n members (groups about to be sorted), and aLeft[rank] if
** its name ends within 8 bytes of iOff: the names read in the order of
** the text (records and texts one after the other, where the groups
** would read each in the order of their ranks, a wait for memory each
** once the object outgrows the caches), each key written to its rank
** through aInv[] (the rank of each member; ~0 for those outside
** iLo..iHi, whose key and flag go to aKey[n] and aLeft[n]).  Only with
** the keys kept (bKept: every aT[] set).  Returns the keys' IJ_HAS_ZERO()
** of a backslash, those of the members in iLo..iHi. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static uint64_t idemJsonTakeKeys(
  const IdemJsonSortText *aT,
  int n,
  const IdemJsonRank *aR,
  int iLo,
  int iHi,
  sqlite3_int64 iOff,
  uint32_t *aInv,
  uint64_t *aKey,
  unsigned char *aLeft
){
  static const unsigned char aNone[8] = {0};
  uint64_t kEsc = 0;
  int i;
  memset(aInv, 0xff, n*sizeof(uint32_t));
  for(i=iLo; i<iHi; i++) aInv[aR[i].iMem] = (uint32_t)i;
  for(i=0; i<n; i++){
    const IdemJsonSortText *t = &aT[i];
    uint32_t r = aInv[i];
    int bIn = r<(uint32_t)n;
    sqlite3_int64 nLeft = t->n - iOff;
    int bRead = bIn && nLeft>0;
    uint64_t x;
    /* A name outside iLo..iHi reads 8 zeros instead (not its text: a
    ** line of memory it would cost), its key goes to aKey[n], unused;
    ** so does one in iLo..iHi that ends before iOff (it ended within
    ** the group's key, and is in none of its groups), its key 0 */
    x = idemJsonWordKey(bRead ? t->z + iOff : aNone, bRead ? nLeft : 0);
    r = bIn ? r : (uint32_t)n;
    aKey[r] = x;
    aLeft[r] = nLeft<=8;
    kEsc |= IJ_HAS_ZERO(x ^ (IJ_ONES*'\\')) & (uint64_t)-(int64_t)bIn;
  }
  return kEsc;
}

/* The length of the prefix that the names of the n members r[0..n) share,
** knowing that they share their first iOff bytes. */
static sqlite3_int64 idemJsonGroupPrefix(
  const IdemJsonSortText *aT,
  const IdemJsonRank *r,
  int n,
  sqlite3_int64 iOff
){
  const unsigned char *z0 = aT[r[0].iMem].z;
  sqlite3_int64 nPre = aT[r[0].iMem].n;
  int i;
  for(i=1; i<n; i++){
    const unsigned char *z = aT[r[i].iMem].z;
    sqlite3_int64 m = aT[r[i].iMem].n, j = iOff;
    if( m>nPre ) m = nPre;
    while( m-j>=32 ){                 /* 32 bytes a step, then 8 */
      uint64_t a0, a1, a2, a3, b0, b1, b2, b3;
      memcpy(&a0, z0+j, 8);     memcpy(&b0, z+j, 8);
      memcpy(&a1, z0+j+8, 8);   memcpy(&b1, z+j+8, 8);
      memcpy(&a2, z0+j+16, 8);  memcpy(&b2, z+j+16, 8);
      memcpy(&a3, z0+j+24, 8);  memcpy(&b3, z+j+24, 8);
      if( (a0^b0) | (a1^b1) | (a2^b2) | (a3^b3) ) break;
      j += 32;
    }
    while( m-j>=8 && memcmp(z0+j, z+j, 8)==0 ) j += 8;
    while( j<m && z0[j]==z[j] ) j++;
    nPre = j;
  }
  return nPre;
}

/* Sort r[0..8) (r[m..8) stand for keys above all others) by key with a
** sorting network, and write the first m to aOut. */
static void idemJsonSortBlock(
  const IdemJsonRank *r,
  int m,
  IdemJsonRank *aOut
){
  uint64_t k0, k1, k2, k3, k4, k5, k6, k7;
  uint32_t o0 = 0, o1 = 1, o2 = 2, o3 = 3, o4 = 4, o5 = 5, o6 = 6, o7 = 7;
  uint32_t ao[8];
  int i;
  /* No key is all ones: that would be eight bytes 0xff (or 0xef), which
  ** no UTF-8 text holds. */
  if( m==8 ){
    k0 = r[0].iKey; k1 = r[1].iKey; k2 = r[2].iKey; k3 = r[3].iKey;
    k4 = r[4].iKey; k5 = r[5].iKey; k6 = r[6].iKey; k7 = r[7].iKey;
  }else{
    k0 = r[0].iKey;
    k1 = m>1 ? r[1].iKey : ~(uint64_t)0;
    k2 = m>2 ? r[2].iKey : ~(uint64_t)0;
    k3 = m>3 ? r[3].iKey : ~(uint64_t)0;
    k4 = m>4 ? r[4].iKey : ~(uint64_t)0;
    k5 = m>5 ? r[5].iKey : ~(uint64_t)0;
    k6 = m>6 ? r[6].iKey : ~(uint64_t)0;
    k7 = ~(uint64_t)0;
  }
  IJ_CE(0,2); IJ_CE(1,3); IJ_CE(4,6); IJ_CE(5,7); IJ_CE(0,4);
  IJ_CE(1,5); IJ_CE(2,6); IJ_CE(3,7); IJ_CE(0,1); IJ_CE(2,3);
  IJ_CE(4,5); IJ_CE(6,7); IJ_CE(2,4); IJ_CE(3,5); IJ_CE(1,4);
  IJ_CE(3,6); IJ_CE(1,2); IJ_CE(3,4); IJ_CE(5,6);
  ao[0] = o0; ao[1] = o1; ao[2] = o2; ao[3] = o3;
  ao[4] = o4; ao[5] = o5; ao[6] = o6; ao[7] = o7;
  for(i=0; i<m; i++){
    assert( ao[i]<(uint32_t)m );
    aOut[i] = r[ao[i]];
  }
}

/* Sort r[0..n) by key (n > IDEM_JSON_SMALL), aTmp[0..n) scratch, or set
** r[0..n) to the members a[0..n) sorted by key: blocks of 8 by a network,
** merged bottom-up.  The side that comes next is taken
** by arithmetic, not by a branch that random orders would mispredict half
** of the time; two runs of the same length are merged from both ends at
** once (the smallest at the front, the largest at the back, w steps
** each), two chains of work that do not wait for each other. */
static void idemJsonMergeSort(
  IdemJsonRank *r,
  IdemJsonRank *aTmp,
  int n,
  const IdemJsonMember *a     /* If not NULL: the keys are a[0..n)'s */
){
  IdemJsonRank *aSrc = aTmp, *aDst = r;
  int i, j, w;
  for(i=0; i<n; i+=IDEM_JSON_NET){
    int m = n-i<IDEM_JSON_NET ? n-i : IDEM_JSON_NET;
    if( a ){
      idemJsonSortKeys(a+i, m, (uint32_t)i, aSrc+i);
    }else{
      idemJsonSortBlock(r+i, m, aSrc+i);
    }
  }
  for(w=IDEM_JSON_NET; w<n; w*=2){
    for(i=0; i<n; i+=2*w){
      const IdemJsonRank *pL = aSrc+i;
      const IdemJsonRank *pLEnd = aSrc + (i+w<n ? i+w : n);
      const IdemJsonRank *pR = pLEnd;
      const IdemJsonRank *pREnd = aSrc + (i+2*w<n ? i+2*w : n);
      IdemJsonRank *pD = aDst+i;
      sqlite3_int64 b;
      if( pREnd-pR==w ){
        const IdemJsonRank *pLTail = pLEnd-1, *pRTail = pREnd-1;
        IdemJsonRank *pDTail = aDst + i + 2*w - 1;
        for(j=0; j<w; j++){
          b = pR->iKey < pL->iKey;
          *pD++ = pL[(pR-pL) & -b];
          pR += b;
          pL += 1-b;
          b = pRTail->iKey < pLTail->iKey;
          *pDTail-- = pRTail[(pLTail-pRTail) & -b];
          pLTail -= b;
          pRTail -= 1-b;
        }
        continue;
      }
      while( pL<pLEnd && pR<pREnd ){
        sqlite3_int64 nStep = pLEnd-pL < pREnd-pR ? pLEnd-pL : pREnd-pR;
        while( nStep-- > 0 ){
          b = pR->iKey < pL->iKey;
          *pD++ = pL[(pR-pL) & -b];
          pR += b;
          pL += 1-b;
        }
      }
      while( pL<pLEnd ) *pD++ = *pL++;
      while( pR<pREnd ) *pD++ = *pR++;
    }
    { IdemJsonRank *aSwap = aSrc; aSrc = aDst; aDst = aSwap; }
  }
  if( aSrc!=r ) memcpy(r, aSrc, n*sizeof(IdemJsonRank));
}

/* Ranges of at least IJ_SPLIT_FEW_MIN ranks whose highest differing
** byte takes at most IJ_SPLIT_FEW values are split by it before the
** radix sort (idemJsonRadixSort()). */
#define IJ_SPLIT_FEW_MIN 4096
#define IJ_SPLIT_FEW     4
static void idemJsonSortRanksMsd(IdemJsonRank*, IdemJsonRank*, int, int,
                                 uint32_t*, int);

/* Sort r[0..n) by key, aTmp[0..n) scratch: a least significant digit
** radix sort, 8 bits a pass, each pass stable; a byte that every key has
** alike costs no pass.  x: the bits in which the keys may differ, if the
** caller knows them (else ~0): a half of the key that is all alike is
** not counted either.  The sorted ranks end in aTmp[] if bToT, else in
** r[]. */
static void idemJsonRadixSort(
  IdemJsonRank *r,
  IdemJsonRank *aTmp,
  int n,
  uint64_t x,
  int bToT
){
  uint32_t aCnt[8][256];
  IdemJsonRank *aSrc = r, *aDst = aTmp;
  int i, b;
  memset(aCnt, 0, sizeof(aCnt));
  if( (x>>32)==0 ){
    for(i=0; i<n; i++){
      uint64_t k = r[i].iKey;
      aCnt[0][k & 0xff]++;        aCnt[1][(k>>8) & 0xff]++;
      aCnt[2][(k>>16) & 0xff]++;  aCnt[3][(k>>24) & 0xff]++;
    }
  }else if( (uint32_t)x==0 ){
    for(i=0; i<n; i++){
      uint64_t k = r[i].iKey;
      aCnt[4][(k>>32) & 0xff]++;  aCnt[5][(k>>40) & 0xff]++;
      aCnt[6][(k>>48) & 0xff]++;  aCnt[7][k>>56]++;
    }
  }else{
    for(i=0; i<n; i++){
      uint64_t k = r[i].iKey;
      aCnt[0][k & 0xff]++;        aCnt[1][(k>>8) & 0xff]++;
      aCnt[2][(k>>16) & 0xff]++;  aCnt[3][(k>>24) & 0xff]++;
      aCnt[4][(k>>32) & 0xff]++;  aCnt[5][(k>>40) & 0xff]++;
      aCnt[6][(k>>48) & 0xff]++;  aCnt[7][k>>56]++;
    }
  }
  if( n>=IJ_SPLIT_FEW_MIN ){
    /* The highest byte in which the keys differ: if it takes few values
    ** (a few families of names, "descript", "user_pro", "Gr\xc3\xb6..."
    ** packed), the ranges split by it first share their bytes above the
    ** family's and pay no pass for them, where this sort would pay one
    ** for each (idemJsonSortRanksMsd(), its counts from here). */
    for(b=7; b>0; b--){
      if( ((x>>(8*b)) & 0xff)!=0
       && aCnt[b][(r[0].iKey>>(8*b)) & 0xff]!=(uint32_t)n ) break;
    }
    if( b>0 ){
      int nV = 0;
      for(i=0; i<256; i++) nV += aCnt[b][i]!=0;
      if( nV<=IJ_SPLIT_FEW ){
        idemJsonSortRanksMsd(r, aTmp, n, bToT, aCnt[b], 8*b);
        return;
      }
    }
  }
  for(b=0; b<8; b++){
    uint32_t *c = aCnt[b], s = 0;
    int sh = 8*b;
    if( ((x>>sh) & 0xff)==0 ) continue;
    if( c[(aSrc[0].iKey>>sh) & 0xff]==(uint32_t)n ) continue;
    for(i=0; i<256; i++){
      uint32_t x = c[i];
      c[i] = s;
      s += x;
    }
    for(i=0; i<n; i++){
      aDst[c[(aSrc[i].iKey>>sh) & 0xff]++] = aSrc[i];
    }
    { IdemJsonRank *aSwap = aSrc; aSrc = aDst; aDst = aSwap; }
  }
  if( aSrc!=(bToT ? aTmp : r) ){
    memcpy(bToT ? aTmp : r, aSrc, n*sizeof(IdemJsonRank));
  }
}

/* A range of ranks whose keys take few values (flattened dotted names:
** groups of thousands of names whose next 8 bytes are one of 2 to 4
** words; Windows paths: 100 000 names in 1 000 folders) costs the radix
** sort a pass for each byte in which its keys differ, 6 to 8 of them,
** where one pass would place every rank once the few values are known
** and sorted.  idemJsonFewKeys() counts the values in a hash table of
** IJ_FEW_SLOTS slots (open addressing, linear probes).  It gives up, and
** the radix sort does the work, when the values are more than
** IJ_FEW_MAX or half the ranks, when nearly every rank read so far
** brought a new one (names that mostly differ: it stops within a few
** hundred ranks), or at a probe of more than IJ_FEW_PROBE slots (keys
** made to collide: the cost of each stays bounded).  Else the values
** alone are sorted (in aTmp[], at most half its size, with as many again
** as scratch), each slot's count becomes the place of its first rank,
** and one stable pass writes each rank there: the order the radix sort
** gives.  (The first pass leaves each rank's slot in place of its key,
** which the last takes back from the table: the key is not hashed
** twice.)  IJ_FEW_MAX was 512: Windows paths at 12 500 names, 1 000
** folders in one range (the split takes more than IDEM_JSON_MSD), gave
** up, and the radix sort made 8 passes (1.27x json() in instructions,
** 1.19x with 1 024).  Past 512 values it goes on only in a range of
** 8 values a rank or more (SQL-quoted names at 50 000, parts of ~3 700
** ranks after the split, reach 512 values as fast as those folders, and
** 1 024 before they give up: +0.02x), and only if the 512th came within
** IJ_FEW_MAX ranks (late escapes at 12 500 names: ~1/8 of the ranks
** bring a new one, 1 024 after 8 000 ranks, many more in the end; 1 000
** folders drawn at random give 512 within some 700): else it gives up
** there, as before. */
#define IJ_FEW_BITS  11
#define IJ_FEW_MAX   1024
#define IJ_FEW_SLOTS (1<<IJ_FEW_BITS)  /* 2*IJ_FEW_MAX */
#define IJ_FEW_PROBE 16

/* Ranges of fewer ranks than this go to the radix sort without trying
** idemJsonFewKeys(): where names mostly differ (names of 1-3 bytes or of
** 4-byte characters, PHP's paths), the table's memset and the ~130
** ranks read before it gives up cost more in the many ranges of 256-511
** ranks than the table saves the few-valued ones of that size (dotted
** keys, Windows paths: measured at 512, 768 and 1 024) */
#define IJ_FEW_MIN   512

/* The slot of key k in idemJsonFewKeys()'s table: the high bits of a
** multiplicative hash (the key's high half folded in first: names that
** differ only in their first bytes differ only there). */
#define IJ_FEW_HASH(k) \
  ((uint32_t)((((k) ^ ((k)>>29)) * 0x9e3779b97f4a7c15ULL) >> (64-IJ_FEW_BITS)))

/* Sort r[0..n) by key if the keys take few values, into aTmp[] if bToT,
** else into r[] (aTmp[0..n) scratch), and return 1; or return 0 and
** leave r[] as it was.  Out of line: its tables are not on the stack of
** the sorts that call it. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int idemJsonFewKeys(
  IdemJsonRank *r,
  IdemJsonRank *aTmp,
  int n,
  int bToT
){
  uint64_t aKey[IJ_FEW_SLOTS];       /* The value in each slot */
  uint32_t aNum[IJ_FEW_SLOTS];       /* Its count (0: empty), then place */
  IdemJsonRank *aD = aTmp;           /* The values (slot in iMem) */
  int i, nD = 0, nMax = n/2<IJ_FEW_MAX ? n/2 : IJ_FEW_MAX;
  uint32_t s;
  memset(aNum, 0, sizeof(aNum));
  for(i=0; i<n; i++){
    uint64_t k = r[i].iKey;
    uint32_t h = IJ_FEW_HASH(k);
    int nProbe = 0;
    while( aNum[h] && aKey[h]!=k ){
      if( ++nProbe>IJ_FEW_PROBE ) goto give_up;
      h = (h+1) & (IJ_FEW_SLOTS-1);
    }
    if( aNum[h]==0 ){
      if( nD==nMax || nD>i-i/8+16 ) goto give_up;
      if( nD>=IJ_FEW_MAX/2
       && (nD>=n/8 || (nD==IJ_FEW_MAX/2 && i>IJ_FEW_MAX)) ) goto give_up;
      aKey[h] = k;
      aD[nD].iKey = k;
      aD[nD].iMem = h;
      nD++;
    }
    aNum[h]++;
    r[i].iKey = h;                   /* its slot, until the last pass */
  }
  if( nD<=IDEM_JSON_SMALL ){
    int m;
    for(i=1; i<nD; i++){
      IdemJsonRank x = aD[i];
      for(m=i; m>0 && aD[m-1].iKey>x.iKey; m--) aD[m] = aD[m-1];
      aD[m] = x;
    }
  }else{
    idemJsonMergeSort(aD, aD+nD, nD, 0);
  }
  for(i=0, s=0; i<nD; i++){
    uint32_t c = aNum[aD[i].iMem];
    aNum[aD[i].iMem] = s;
    s += c;
  }
  for(i=0; i<n; i++){
    IdemJsonRank x = r[i];
    uint32_t h = (uint32_t)x.iKey;
    x.iKey = aKey[h];
    aTmp[aNum[h]++] = x;
  }
  if( !bToT ) memcpy(r, aTmp, n*sizeof(IdemJsonRank));
  return 1;

give_up:
  while( i>0 ){                      /* the keys back in place of slots */
    i--;
    r[i].iKey = aKey[r[i].iKey];
  }
  return 0;
}

/* Ranges of more ranks than this (256 KiB) are first split by their
** highest byte that differs (idemJsonSortRanks()). */
#define IDEM_JSON_MSD 16384

static void idemJsonSortRanks(IdemJsonRank*, IdemJsonRank*, int, int);
static int idemJsonFewRanks(IdemJsonRank*, IdemJsonRank*, int);
static void idemJsonSortRanksBy(IdemJsonRank*, IdemJsonRank*, int, int,
                                uint32_t*, int);

/* Sort r[0..n) by key, aTmp[0..n) scratch, n above IDEM_JSON_MSD; the
** sorted ranks end in aTmp[] if bToT, else in r[]: one pass splits the
** ranks by the highest byte of the keys that differs, into aTmp[], and
** each part is sorted in its turn (idemJsonSortRanks(), the roles of r[]
** and aTmp[] swapped: no copy back).  Each pass of
** a radix sort over all of r[] would read and write more than the
** second-level cache holds (the time of a memory-bound pass, eight times
** over), where the parts are sorted within it.  Each level splits by a
** lower byte: at most 8 levels.  If aPre, the ranks' bytes at bit shPre
** are counted there already (idemJsonPackRanks()): no byte of a key above
** it differs, and the split is by it. */
static void idemJsonSortRanksMsd(
  IdemJsonRank *r,
  IdemJsonRank *aTmp,
  int n,
  int bToT,
  uint32_t *aPre,
  int shPre
){
  uint32_t aCnt[256];                /* (a copy of aPre: a local array's
                                     ** loops take fewer instructions) */
  uint64_t x = 0, k0 = r[0].iKey;
  int i, m, sh = shPre;
  if( aPre ){
    memcpy(aCnt, aPre, sizeof(aCnt));
  }else{
    for(i=1; i<n; i++) x |= r[i].iKey ^ k0;
    if( x==0 ){
      if( bToT ) memcpy(aTmp, r, n*sizeof(IdemJsonRank));
      return;
    }
    for(sh=56; (x>>sh)==0; sh-=8){}
    memset(aCnt, 0, sizeof(aCnt));
    for(i=0; i<n; i++) aCnt[(r[i].iKey>>sh) & 0xff]++;
  }
  for(i=0, m=0; i<256; i++){
    uint32_t c = aCnt[i];
    aCnt[i] = (uint32_t)m;
    m += (int)c;
  }
  for(i=0; i<n; i++){
    /* Each part's next lines fetched for writing: the parts are up to
    ** 256 places written at once, more than the hardware follows, and a
    ** range of this size is larger than the second-level cache */
    uint32_t d = aCnt[(r[i].iKey>>sh) & 0xff]++;
    /* (the address as an integer: d + IJ_SPLIT_AHEAD may be past the
    ** end of aTmp[], where a pointer may not point; a fetch there is
    ** harmless) */
    IJ_PREFETCH_W((void*)((uintptr_t)(aTmp + d)
                          + IJ_SPLIT_AHEAD*sizeof(IdemJsonRank)));
    aTmp[d] = r[i];
  }
  for(i=0, m=0; i<256; i++){
    int e = (int)aCnt[i];          /* now the end of part i */
    if( e-m>1 ){
      idemJsonSortRanks(aTmp+m, r+m, e-m, !bToT);
    }else if( e>m && !bToT ){
      r[m] = aTmp[m];
    }
    m = e;
  }
}

/* Sort r[0..n) by key, aTmp[0..n) scratch; the sorted ranks end in
** aTmp[] if bToT (a part of idemJsonSortRanksMsd()), else in r[].  Keys
** already in order, or in the reverse order (an object written
** backwards), cost one pass.  idemJsonSortRanksBy(): the same, given,
** for n above IDEM_JSON_MSD, the counts of the split's byte at bit sh
** (aPre, or 0 to count them: idemJsonSortRanksMsd()). */
static void idemJsonSortRanks(
  IdemJsonRank *r,
  IdemJsonRank *aTmp,
  int n,
  int bToT
){
  idemJsonSortRanksBy(r, aTmp, n, bToT, 0, 0);
}
static void idemJsonSortRanksBy(
  IdemJsonRank *r,
  IdemJsonRank *aTmp,
  int n,
  int bToT,
  uint32_t *aPre,
  int sh
){
  int i;
  for(i=1; i<n && r[i-1].iKey<=r[i].iKey; i++){}
  if( i==n ){
    if( bToT ) memcpy(aTmp, r, n*sizeof(IdemJsonRank));
    return;
  }
  if( i==1 ){
    for(i=1; i<n && r[i-1].iKey>r[i].iKey; i++){}
    if( i==n ){
      if( bToT ){
        for(i=0; i<n; i++) aTmp[i] = r[n-1-i];
        return;
      }
      for(i=0; i<n/2; i++){
        IdemJsonRank x = r[i];
        r[i] = r[n-1-i];
        r[n-1-i] = x;
      }
      return;
    }
  }
  if( n<=IDEM_JSON_SMALL ){
    int m;
    for(i=1; i<n; i++){
      IdemJsonRank x = r[i];
      for(m=i; m>0 && r[m-1].iKey>x.iKey; m--) r[m] = r[m-1];
      r[m] = x;
    }
  }else if( n<IDEM_JSON_RADIX ){
    if( !idemJsonFewRanks(r, aTmp, n) ) idemJsonMergeSort(r, aTmp, n, 0);
  }else if( n<=IDEM_JSON_MSD ){
    if( n<IJ_FEW_MIN || !idemJsonFewKeys(r, aTmp, n, bToT) ){
      idemJsonRadixSort(r, aTmp, n, ~(uint64_t)0, bToT);
    }
    return;
  }else{
    idemJsonSortRanksMsd(r, aTmp, n, bToT, aPre, sh);
    return;
  }
  if( bToT ) memcpy(aTmp, r, n*sizeof(IdemJsonRank));
}

/* The length of the prefix that a[0..n) and b[0..n) share; a[n..n+8) and
** b[n..n+8) must be readable (the names of the sort are). */
static sqlite3_int64 idemJsonCommon(
  const unsigned char *a,
  const unsigned char *b,
  sqlite3_int64 n
){
  sqlite3_int64 j = 0;
  while( n-j>=32 ){
    uint64_t a0, a1, a2, a3, b0, b1, b2, b3;
    memcpy(&a0, a+j, 8);     memcpy(&b0, b+j, 8);
    memcpy(&a1, a+j+8, 8);   memcpy(&b1, b+j+8, 8);
    memcpy(&a2, a+j+16, 8);  memcpy(&b2, b+j+16, 8);
    memcpy(&a3, a+j+24, 8);  memcpy(&b3, b+j+24, 8);
    if( (a0^b0) | (a1^b1) | (a2^b2) | (a3^b3) ) break;
    j += 32;
  }
#ifdef IDEM_JSON_LE_WORDS
  /* 8 bytes a step, the first that differ found in the word's XOR, and
  ** the last n-j<8 in one more word, with a stop bit at byte n-j: no
  ** loop over bytes, whose end names of random lengths (a prefix chain)
  ** mispredict at almost every name. */
  for(;;){
    uint64_t wa, wb, x;
    memcpy(&wa, a+j, 8);
    memcpy(&wb, b+j, 8);
    x = wa ^ wb;
    if( n-j<8 ) x |= (uint64_t)1 << (8*(n-j));
    if( x ) return j + IDEM_JSON_CTZ8(x);
    j += 8;
  }
#else
  while( n-j>=8 && memcmp(a+j, b+j, 8)==0 ) j += 8;
  while( j<n && a[j]==b[j] ) j++;
  return j;
#endif
}

/* A group r[0..k) of k >= IJ_LCP_MIN names equal in their first iOff
** bytes, about to take its keys at iOff: if a sample of 8 names across
** it shares more than the next 8 bytes (a long prefix common to all, the
** names that differ in their last bytes only), the prefix that each name
** shares with the first is measured and its key after the sample's taken
** in one pass over the names, not a pass for the keys at iOff, one for
** the prefix (idemJsonGroupPrefix()) and one for the keys after it.
** Returns the offset where the keys are to be taken: if pOut->bTaken,
** they are (pOut's other fields set as the caller's pass sets its own);
** if not, the keys are the caller's to take, at iOff or, if some name
** shares less than the sample, where the shortest prefix ends.  Returns
** -1 if bRaw and the prefix holds a backslash.  Kept out of line: the
** caller's loops keep their registers. */
typedef struct IdemJsonPrefix IdemJsonPrefix;
struct IdemJsonPrefix {
  uint64_t kDiff, kEsc;      /* As in idemJsonSortNames() */
  int bEnd;
  int bTaken;                /* The keys were taken */
};
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static sqlite3_int64 idemJsonPrefixKeys(
  const IdemJsonSortText *aT,
  IdemJsonRank *r,
  int k,
  sqlite3_int64 iOff,
  int bAhead,
  int bRaw,
  IdemJsonPrefix *pOut
){
  const IdemJsonSortText *t0 = &aT[r[0].iMem];
  sqlite3_int64 nPre = t0->n, nMin;
  uint64_t kDiff = 0, kEsc = 0;
  int i, bEnd = 0;
  pOut->bTaken = 0;
  for(i=1; i<8; i++){
    const IdemJsonSortText *t = &aT[r[(sqlite3_int64)i*k/8].iMem];
    sqlite3_int64 m = t->n<nPre ? t->n : nPre;
    nPre = iOff + idemJsonCommon(t0->z + iOff, t->z + iOff, m - iOff);
  }
  if( nPre-iOff<8 ) return iOff;
  nMin = nPre;
  for(i=0; i<k; i++){
    const IdemJsonSortText *t = &aT[r[i].iMem];
    sqlite3_int64 m = t->n<nPre ? t->n : nPre, L;
    uint64_t x = 0;
    if( bAhead && i<k-IJ_AHEAD ){
      IJ_PREFETCH(&aT[r[i+IJ_AHEAD].iMem]);
      IJ_PREFETCH(aT[r[i+IJ_AHEAD/2].iMem].z + iOff);
    }
    L = iOff + idemJsonCommon(t->z + iOff, t0->z + iOff, m - iOff);
    if( L<nMin ) nMin = L;
    if( t->n>=nPre ) x = idemJsonWordKey(t->z + nPre, t->n - nPre);
    r[i].iKey = x;
    kDiff |= x ^ r[0].iKey;
    kEsc |= IJ_HAS_ZERO(x ^ (IJ_ONES*'\\'));
    bEnd |= t->n - nPre <= 8;
  }
  if( bRaw && memchr(t0->z + iOff, '\\', (size_t)(nMin - iOff)) ) return -1;
  if( nMin==nPre ){
    pOut->bTaken = 1;
    pOut->kDiff = kDiff;
    pOut->kEsc = kEsc;
    pOut->bEnd = bEnd;
  }
  return nMin;
}

/* Set aOut[0..n) to the members a[0..n) (IDEM_JSON_SMALL < n <
** IDEM_JSON_RADIX) sorted by key, as idemJsonMergeSort() does, if their
** keys take at most IJ_FEW_SMALL values, and return 1: a counting sort (a
** few families of names that share their first 8 bytes, "description12",
** "user_profile-7", "Gr\u00f6\u00dfe_3": the merge sort passed over them
** 5 times to make 3 groups).  Else return 0 at the first key of one value
** more (names whose keys mostly differ pay a few compares). */
#define IJ_FEW_SMALL 4
static int idemJsonFewSmall(
  const IdemJsonMember *a,
  int n,
  IdemJsonRank *aOut
){
  uint64_t aV[IJ_FEW_SMALL];         /* The values, as they came */
  int aC[IJ_FEW_SMALL];              /* Their counts, then places */
  unsigned char aIdx[IDEM_JSON_RADIX];   /* Each member's value */
  int i, j, nV = 0;
  for(i=0; i<n; i++){
    uint64_t k = a[i].iKey;
    for(j=0; j<nV && aV[j]!=k; j++){}
    if( j==nV ){
      if( nV==IJ_FEW_SMALL ) return 0;
      aV[nV] = k;
      aC[nV++] = 0;
    }
    aC[j]++;
    aIdx[i] = (unsigned char)j;
  }
  {
    /* each value's place: the counts of the values below it */
    int aP[IJ_FEW_SMALL];
    for(j=0; j<nV; j++){
      int m, p = 0;
      for(m=0; m<nV; m++) p += aV[m]<aV[j] ? aC[m] : 0;
      aP[j] = p;
    }
    for(i=0; i<n; i++){
      int d = aP[aIdx[i]]++;
      aOut[d].iKey = a[i].iKey;
      aOut[d].iMem = (uint32_t)i;
    }
  }
  return 1;
}

/* Sort r[0..n) (IDEM_JSON_SMALL < n < IDEM_JSON_RADIX) by key, aTmp[0..n)
** scratch, if the keys take at most IJ_FEW_SMALL values, and return 1:
** idemJsonFewSmall()'s counting sort, stable, on ranks (a group whose
** next 8 bytes take a few values: SQL-quoted names' "users".", "orders".,
** "items"." after their '"', at 200 a document, were sorted by the merge
** sort at 0, 5 passes, before each family's sort at 8).  Else return 0
** at the first key of one value more, r[] as it was. */
static int idemJsonFewRanks(IdemJsonRank *r, IdemJsonRank *aTmp, int n){
  uint64_t aV[IJ_FEW_SMALL];         /* The values, as they came */
  int aC[IJ_FEW_SMALL];              /* Their counts */
  int aP[IJ_FEW_SMALL];              /* Their places */
  unsigned char aIdx[IDEM_JSON_RADIX];   /* Each rank's value */
  int i, j, m, nV = 0;
  for(i=0; i<n; i++){
    uint64_t k = r[i].iKey;
    for(j=0; j<nV && aV[j]!=k; j++){}
    if( j==nV ){
      if( j==IJ_FEW_SMALL ) return 0;    /* one value too many */
      aV[j] = k;
      aC[j] = 0;
      nV++;
    }
    aC[j]++;
    aIdx[i] = (unsigned char)j;
  }
  for(j=0; j<nV; j++){
    aP[j] = 0;
    for(m=0; m<nV; m++) if( aV[m]<aV[j] ) aP[j] += aC[m];
  }
  for(i=0; i<n; i++) aTmp[aP[aIdx[i]]++] = r[i];
  memcpy(r, aTmp, sizeof(IdemJsonRank)*n);
  return 1;
}

/* Keys of idemJsonPivot(): the pivot's, and the field of the offset. */
#define IJ_PIVOT   ((uint64_t)1<<62)
#define IJ_LCPMAX  (((uint64_t)1<<40) - 1)

/*
** A group r[0..k) (names equal in their first iOff bytes) in which every
** name that goes on past the next 8 bytes has the same 8 bytes there, so
** that a step of 8 bytes would only take out the few names that end
** within them ("a", "aa", "aaa", ...: such steps would cost the group's
** size for every 8 bytes of its longest name).  Instead every name is
** compared with one, the pivot P (the longest), once, over the bytes
** they share (idemJsonCommon(), 32 at a time): a name x that first
** differs from P at byte L (x[L] or P[L] may be the end) comes before P
** if x[L] < P[L], after it if not; those before are in the order of L,
** then x[L]; those after in the reverse order of L, then x[L].  Each run
** of names with the same L and x[L] is a group at L+1 (sorted by the
** caller), two that both end at L are equal.  So a name costs its
** shared bytes / 32 steps here plus its sort, and every group it goes
** into next starts further on by at least one byte past the bytes read.
** Returns SQLITE_MISUSE (bRaw: a backslash among the bytes read), else
** SQLITE_OK; *pbEqual is set if two names are equal.
*/
static int idemJsonPivot(
  const IdemJsonSortText *aT,
  IdemJsonRank *r,
  IdemJsonRank *aTmp,
  int k,
  sqlite3_int64 iOff,
  IdemJsonGroup *aG,
  int *pnG,
  uint32_t iBase,             /* r's offset in the object's ranks */
  int bRaw,
  int *pbEqual
){
  const IdemJsonSortText *pP;
  int i, j, iP = 0;
  sqlite3_int64 nMax = 0;
  for(i=0; i<k; i++){
    if( aT[r[i].iMem].n>nMax ){
      nMax = aT[r[i].iMem].n;
      iP = i;
    }
  }
  pP = &aT[r[iP].iMem];
  if( bRaw && memchr(pP->z + iOff, '\\', (size_t)(pP->n - iOff)) ){
    return SQLITE_MISUSE;
  }
  for(i=0; i<k; i++){
    const IdemJsonSortText *t = &aT[r[i].iMem];
    sqlite3_int64 m = t->n<pP->n ? t->n : pP->n, L;
    unsigned int cx, cp;
    if( i==iP ){
      r[i].iKey = IJ_PIVOT;
      continue;
    }
    L = iOff + idemJsonCommon(t->z + iOff, pP->z + iOff, m - iOff);
    cx = L<t->n ? t->z[L] : 0;
    cp = L<pP->n ? pP->z[L] : 0;
    if( bRaw && cx=='\\' ) return SQLITE_MISUSE;
    /* Lead bytes 0xee and 0xef go after 0xf0..0xf4; the end first */
    if( L<t->n ) cx += 1 + (((cx & 0xfe)==0xee) ? 0x10 : 0);
    if( L<pP->n ) cp += 1 + (((cp & 0xfe)==0xee) ? 0x10 : 0);
    if( cx<cp ){
      r[i].iKey = ((uint64_t)(L - iOff) << 9) | cx;
    }else if( cx>cp ){
      r[i].iKey = ((uint64_t)1<<63) | ((IJ_LCPMAX - (uint64_t)(L - iOff)) << 9) | cx;
    }else{
      r[i].iKey = IJ_PIVOT;           /* x is P: equal names */
      *pbEqual = 1;
    }
  }
  idemJsonSortRanks(r, aTmp, k, 0);
  for(i=0; i<k; i=j){
    uint64_t x = r[i].iKey;
    for(j=i+1; j<k && r[j].iKey==x; j++){}
    if( j-i>1 ){
      sqlite3_int64 L;
      if( x==IJ_PIVOT || (x & 0x1ff)==0 ){
        *pbEqual = 1;                 /* two names end at L alike */
        continue;
      }
      L = (sqlite3_int64)((x>>9) & IJ_LCPMAX);
      if( x>>63 ) L = (sqlite3_int64)IJ_LCPMAX - L;
      aG[*pnG].iLo = iBase + (uint32_t)i;
      aG[*pnG].iHi = iBase + (uint32_t)j;
      aG[*pnG].iOff = (uint32_t)(iOff + L + 1);
      (*pnG)++;
    }
  }
  return SQLITE_OK;
}

/* The sort of idemJsonSortMembers(): first by the keys a[].iKey, then the
** groups that they tie by the names aT[0..n) (with bRaw, those of the
** groups are set here from zOut; without, all are set already).  The members in sorted order are left in aR[0..n).
** Returns SQLITE_ERROR if two names are equal (next to each other in aR[]
** then), else SQLITE_OK.  With bRaw, the names are canonical texts that
** may hold escapes, and SQLITE_MISUSE is returned at the first backslash
** among the bytes read; with bRaw 2, they are canonical texts whose only
** escape is \\, which sort as they stand (idemJsonSortMembers()), and
** a backslash is a byte like any other. */
static int idemJsonSortNames(
  const unsigned char *zOut,
  const IdemJsonMember *a,
  IdemJsonSortText *aT,
  int n,
  IdemJsonRank *aR,
  IdemJsonGroup *aG,
  int bRaw
){
  int i, j, nG = 0, bEqual = 0, bChain, bEnd;
  int bAhead = n>=IJ_PREFETCH_MIN;    /* fetch names ahead (IJ_PREFETCH()) */
  int bKept = 0;                      /* aT[].aK[] are set */
  int bShort = 0;                     /* some name has 8 bytes or fewer */
  int bBail = bRaw==1;                /* a backslash read: SQLITE_MISUSE */
  uint64_t kDiff;
  /* Between aT[] and aG[] (idemJsonFinishObject()): the keys at 16 kept
  ** (IJ_NK2(n)), then idemJsonTakeKeys()'s n+1 keys, n ranks, n+1 flags
  ** (in (n+4)/4 words) */
  uint64_t *aK2 = (uint64_t*)(aT + n);
  uint64_t *aKey = aK2 + IJ_NK2(n);
  uint32_t *aInv = (uint32_t*)(aKey + n + 1);
  unsigned char *aLeft = (unsigned char*)(aInv + n);

  if( bAhead ){
    /* Names of 8 bytes or fewer ("k0012345") are told apart by the keys
    ** of idemJsonNameKey() alone: none of what follows pays for them. */
    for(i=0; i<n && a[i].iNameEnd - a[i].iName <= 10; i++){}
    if( i==n ) goto by_name_key;
  }
  if( bAhead ){
    /* A large object: every name and its keys at 0 and 8
    ** (idemJsonTextKey()) are read in the order of the text.  If the
    ** keys differ in at most 64 bits in all (numbered names: "field1",
    ** "field12345"; look-alike ones: "caf\u00e9N", "cafe\u0301N"), the
    ** members are sorted by both keys at once, packed, rather than a group
    ** at a time in the order of their ranks (each group's sort then costs
    ** more than the passes of one sort); if not, by the bits at 0 and the
    ** highest at 8 that fit, and the groups that those tie read the keys
    ** kept at 8 (idemJsonTextKey()).  A backslash among those 16 bytes of
    ** any name: the names are read again unescaped (SQLITE_MISUSE). */
    uint64_t kEsc, x0, x1;
    int nBit0, nBit1, nShl, nShr, bTop = 0;
    const unsigned char *z0 = bRaw ? zOut + a[0].iName + 1 : aT[0].z;
    sqlite3_int64 nPre = bRaw ? a[0].iNameEnd - a[0].iName - 2 : aT[0].n;
    sqlite3_int64 nCur;
    int bAgain = 0;                   /* the pass was started again */

    /* The prefix that every name shares (ISO-8601 timestamps'
    ** "2024-01-", paths' "/srv/data/") decides nothing: the names are
    ** sorted by what follows it (each name's text taken from there, the
    ** same order), and the keys at 0 and 8 are those of the bytes after
    ** it, which do.  Guessed from a sample of 8 names across the object
    ** (up to a backslash: an escape must be read whole), checked in the
    ** pass against the first name; if some name shares less, the pass is
    ** made again from where the shortest shared prefix ends. */
    for(i=1; i<8 && nPre>0; i++){
      int s = (int)((sqlite3_int64)i*n/8);
      const unsigned char *z = bRaw ? zOut + a[s].iName + 1 : aT[s].z;
      sqlite3_int64 m = bRaw ? a[s].iNameEnd - a[s].iName - 2 : aT[s].n;
      nPre = idemJsonCommon(z0, z, m<nPre ? m : nPre);
    }
    if( bBail && nPre>0 ){
      const unsigned char *zEsc = memchr(z0, '\\', (size_t)nPre);
      if( zEsc ) nPre = zEsc - z0;
    }
  take_keys:
    kEsc = x0 = x1 = 0;
    bShort = 0;
    nCur = nPre;
    for(i=0; i<n; i++){
      IdemJsonSortText *t = &aT[i];
      const unsigned char *z = t->z;
      sqlite3_int64 m = t->n;
      if( bRaw ){
        z = zOut + a[i].iName + 1;
        m = a[i].iNameEnd - a[i].iName - 2;
      }
      if( nCur>0 ){
        sqlite3_int64 L = idemJsonCommon(z, z0, m<nCur ? m : nCur);
        if( L<nCur ){
          if( !bAgain ){
            /* The first name that shares less: the pass again from
            ** here at once (a sample that misleads, "caf\u00e9N" beside
            ** "Caf\u00e9N", mostly does so within a few names); a later
            ** one goes on and the pass is made again at the end (at most
            ** three passes in all). */
            bAgain = 1;
            nPre = L;
            goto take_keys;
          }
          nCur = L;
        }
      }
      if( bRaw ){
        t->z = z + nCur;
        t->n = m - nCur;
      }
      z += nCur;
      m -= nCur;
      t->aK[0] = idemJsonWordKey(z, m);
      t->aK[1] = m>8 ? idemJsonWordKey(z + 8, m - 8) : 0;
      aK2[i] = m>16 ? idemJsonWordKey(z + 16, m - 16) : 0;
      kEsc |= IJ_HAS_ZERO(t->aK[0] ^ (IJ_ONES*'\\'))
            | IJ_HAS_ZERO(t->aK[1] ^ (IJ_ONES*'\\'));
      x0 |= t->aK[0] ^ aT[0].aK[0];
      bShort |= m<=8;
      x1 |= t->aK[1] ^ aT[0].aK[1];
    }
    if( nCur<nPre ){
      nPre = nCur;                  /* a name shares less than the sample */
      goto take_keys;
    }
    if( !bRaw && nPre>0 ){
      for(i=0; i<n; i++){
        aT[i].z += nPre;
        aT[i].n -= nPre;
      }
    }
    if( bBail && kEsc ) return SQLITE_MISUSE;
    bKept = 1;
    nBit0 = idemJsonBits(x0);
    nBit1 = idemJsonBits(x1);
    if( nBit0 + nBit1 <= 64 ){
      /* The bits in which some keys at 0 or 8 differ fit one word: both
      ** keys packed into it (the bits at 0 above those at 8; the bits in
      ** which no two keys differ left out) order the names by their first
      ** 16 bytes, and the ranks, 16 bytes each, are sorted by it alone: a
      ** radix pass for each byte of the packed bits (look-alike names:
      ** 46 bits, 6 passes, where the bytes of both keys that differ are 9),
      ** no wide records, no pass back to the keys at 0.  Equal packed
      ** keys are names alike in 16 bytes. */
      nShl = x0 ? nBit1 : 0;
      nShr = 0;
    }else{
      /* They do not: all the bits at 0 and the highest of those at 8
      ** that fit beside them (UTF-16 order: 51 and 13 of 56), so that
      ** names that tie at 0 are mostly told apart without a group, and
      ** each run of equal keys is a group that goes on at 8 (at 0 if a
      ** name ends within 8 bytes). */
      bTop = 1;
      nShl = 64 - nBit0;
      nShr = nBit1 - nShl;
      if( nShr==64 ){            /* no bit at 8 fits */
        x1 = 0;
        nShr = 0;
      }
    }
    if( (x0|x1)==0 ){
      /* All alike in 16 bytes: one run */
      for(i=0; i<n; i++){
        aR[i].iKey = 0;
        aR[i].iMem = (uint32_t)i;
        aR[i].nLen = a[i].iEnd - a[i].iName;
      }
    }else{
      /* The split of more than IDEM_JSON_MSD ranks
      ** (idemJsonSortRanksMsd()) is by the byte of the highest bit packed
      ** (bTop: bit 63; else bit nBit0+nBit1-1, above which no key has a
      ** bit), counted as the ranks are made: not in two more passes over
      ** the ranks (1.6 MB at 100 000 names, past the second-level cache:
      ** PHP's paths, 0.5 of 6.6 modelled misses a name) */
      uint32_t aCnt[256], *pCnt = 0;
      int sh = bTop ? 56 : ((nBit0 + nBit1 - 1)/8)*8;
      if( n>IDEM_JSON_MSD ){
        memset(aCnt, 0, sizeof(aCnt));
        pCnt = aCnt;
      }
#ifdef IDEM_JSON_PEXT
      if( idemJsonHasPext() ){
        idemJsonPackRanksPext(a, aT, n, x0, x1, nShl, nShr, aR, pCnt, sh);
      }else
#endif
      {
        IdemJsonPack pk0, pk1;
        idemJsonPackInit(&pk0, x0);
        idemJsonPackInit(&pk1, x1);
        idemJsonPackRanks(a, aT, n, &pk0, &pk1, nShl, nShr, aR, pCnt, sh);
      }
      idemJsonSortRanksBy(aR, aR+n, n, 0, pCnt, sh);
    }
    if( bTop ){
      for(i=0; i<n-1; i++){
        if( aR[i].iKey!=aR[i+1].iKey ) continue;
        for(j=i+2; j<n && aR[j].iKey==aR[i].iKey; j++){}
        aG[nG].iLo = (uint32_t)i;
        aG[nG].iHi = (uint32_t)j;
        aG[nG].iOff = bShort ? 0 : 8;
        nG++;
        i = j-1;
      }
      goto sort_groups;
    }

    /* Each run of names alike in their first 16 bytes: those that end
    ** within them first, by length (two of one length are equal); those
    ** that go on are a group at 16. */
    for(i=0; i<n; i=j){
      for(j=i+1; j<n && aR[j].iKey==aR[i].iKey; j++){}
      if( j-i>1 ){
        int aCnt[18], c, m, sCnt;
        IdemJsonRank *aTmp = aR + n;
        memset(aCnt, 0, sizeof(aCnt));
        for(m=i; m<j; m++){
          sqlite3_int64 nn = aT[aR[m].iMem].n;
          aCnt[nn>16 ? 17 : nn]++;
        }
        for(c=0, sCnt=i; c<18; c++){
          int x = aCnt[c];
          if( c<17 && x>1 ) bEqual = 1;
          aCnt[c] = sCnt;
          sCnt += x;
        }
        for(m=i; m<j; m++){
          sqlite3_int64 nn = aT[aR[m].iMem].n;
          aTmp[aCnt[nn>16 ? 17 : nn]++] = aR[m];
        }
        memcpy(aR+i, aTmp+i, (j-i)*sizeof(IdemJsonRank));
        m = aCnt[16];               /* where the names that go on start */
        if( j-m>1 ){
          aG[nG].iLo = (uint32_t)m;
          aG[nG].iHi = (uint32_t)j;
          aG[nG].iOff = 16;
          nG++;
        }
      }
    }
    goto sort_groups;
  }

  /* First by the keys of idemJsonNameKey(), which order the names where
  ** they differ, escapes and all.  Runs of equal keys are groups at 0. */
by_name_key:
  for(i=1; i<n && a[i-1].iKey<=a[i].iKey; i++){}
  if( i==n ){
    /* In order by key already (a long shared prefix ties them all). */
    for(i=0; i<n; i++){
      aR[i].iKey = a[i].iKey;
      aR[i].iMem = (uint32_t)i;
      aR[i].nLen = a[i].iEnd - a[i].iName;
    }
  }else if( n<=IDEM_JSON_SMALL ){
    idemJsonInsertKeys(a, n, aR);
  }else if( n<IDEM_JSON_RADIX ){
    if( !idemJsonFewSmall(a, n, aR) ) idemJsonMergeSort(aR, aR+n, n, a);
  }else{
    for(i=0; i<n; i++){
      aR[i].iKey = a[i].iKey;
      aR[i].iMem = (uint32_t)i;
      aR[i].nLen = a[i].iEnd - a[i].iName;
    }
    idemJsonSortRanks(aR, aR+n, n, 0);
  }
  for(i=0; i<n-1; i++){
    if( aR[i].iKey!=aR[i+1].iKey ) continue;
    for(j=i+2; j<n && aR[j].iKey==aR[i].iKey; j++){}
    aG[nG].iLo = (uint32_t)i;
    aG[nG].iHi = (uint32_t)j;
    aG[nG].iOff = 0;
    nG++;
    if( bRaw && !bKept ){
      /* The names of the group (unescaped ones are all set already) */
      for(; i<j; i++){
        IdemJsonSortText *t = &aT[aR[i].iMem];
        const IdemJsonMember *pM = &a[aR[i].iMem];
        t->z = zOut + pM->iName + 1;
        t->n = pM->iNameEnd - pM->iName - 2;
      }
    }
    i = j-1;
  }

  /* Then each group by the keys of its names' bytes (idemJsonWordKey()). */
sort_groups:
  while( nG>0 ){
    IdemJsonRank *r;
    sqlite3_int64 iOff;
    int k, nG0, bTakenG;
    nG--;
    r = aR + aG[nG].iLo;
    k = (int)(aG[nG].iHi - aG[nG].iLo);
    iOff = aG[nG].iOff & ~IJ_TAKEN;
    bTakenG = (aG[nG].iOff & IJ_TAKEN)!=0;
    if( bAhead && nG>=2 ){
      /* The groups next on the stack (most are small): the records of
      ** the first IJ_AHEAD/2 names two groups ahead, the names themselves
      ** one ahead. */
      const IdemJsonGroup *g1 = &aG[nG-1], *g2 = &aG[nG-2];
      uint32_t m1 = g1->iHi - g1->iLo, m2 = g2->iHi - g2->iLo, u;
      if( m1>IJ_AHEAD/2 ) m1 = IJ_AHEAD/2;
      if( m2>IJ_AHEAD/2 ) m2 = IJ_AHEAD/2;
      if( g2->iOff & IJ_TAKEN ) m2 = 0;
      if( g1->iOff & IJ_TAKEN ) m1 = 0;
      for(u=0; u<m2; u++) IJ_PREFETCH(&aT[aR[g2->iLo+u].iMem]);
      if( IJ_KEPT(bKept, g1->iOff) ){
        if( g1->iOff==16 ){
          for(u=0; u<m1; u++) IJ_PREFETCH(&aK2[aR[g1->iLo+u].iMem]);
        }
      }else{
        for(u=0; u<m1; u++) IJ_PREFETCH(aT[aR[g1->iLo+u].iMem].z + g1->iOff);
      }
    }

    if( k==2 ){
      /* Two names (the common tie): word by word until they differ or
      ** one ends; the same rules as below, without the sorts. */
      const IdemJsonSortText *t0 = &aT[r[0].iMem], *t1 = &aT[r[1].iMem];
      for(;;){
        uint64_t x0 = idemJsonTextKey(aT, aK2, r[0].iMem, iOff, bKept);
        uint64_t x1 = idemJsonTextKey(aT, aK2, r[1].iMem, iOff, bKept);
        sqlite3_int64 n0 = t0->n - iOff, n1 = t1->n - iOff;
        if( bBail && (IJ_HAS_ZERO(x0 ^ (IJ_ONES*'\\'))
                     | IJ_HAS_ZERO(x1 ^ (IJ_ONES*'\\'))) ){
          return SQLITE_MISUSE;
        }
        if( x0==x1 && n0>8 && n1>8 ){
          iOff += 8;
          continue;
        }
        if( x0==x1 && n0==n1 ) bEqual = 1;
        if( x0>x1 || (x0==x1 && n0>n1) ){
          IdemJsonRank x = r[0];
          r[0] = r[1];
          r[1] = x;
        }
        break;
      }
      continue;
    }

    /* The keys at iOff.  If they are all equal and no name ends within
    ** them, the group's common prefix is passed over first.  If all but
    ** those of names that end within them are equal, a large group goes
    ** to idemJsonPivot(). */
    bChain = 0;
    for(;;){
      uint64_t kEsc = 0;
      int bTaken = 0;
      bEnd = 0;
      kDiff = 0;
      if( bTakenG ){
        /* Taken in the order of the text (idemJsonTakeKeys()) */
        const uint64_t *pKey = aKey + (r - aR);
        const unsigned char *pLeft = aLeft + (r - aR);
        int bLeft = 0;
        for(i=0; i<k; i++){
          r[i].iKey = pKey[i];
          kDiff |= pKey[i] ^ pKey[0];
          bLeft |= pLeft[i];
        }
        bEnd = bLeft;
        bTaken = 1;
        bTakenG = 0;
      }else if( k>=IJ_LCP_MIN && (iOff>=16 || !bKept) ){
        IdemJsonPrefix pk;
        iOff = idemJsonPrefixKeys(aT, r, k, iOff, bAhead, bBail, &pk);
        if( iOff<0 ) return SQLITE_MISUSE;
        if( pk.bTaken ){
          bTaken = 1;
          kDiff = pk.kDiff;
          kEsc = pk.kEsc;
          bEnd = pk.bEnd;
        }
      }
      if( !bTaken && !IJ_KEPT(bKept, iOff) ){
        /* The keys read from the names (past those kept: most reads of a
        ** deep sort, flattened dotted keys' ~6 a name): the loop of the
        ** kept keys below without their tests, the keys' differing bits
        ** as the or of all xor their and (no reload of the first). */
        int kA = bAhead ? k-IJ_AHEAD : 0;
        uint64_t kOr = 0, kAnd = ~(uint64_t)0;
        for(i=0; i<k; i++){
          const IdemJsonSortText *t = &aT[r[i].iMem];
          sqlite3_int64 nLeft = t->n - iOff;
          uint64_t x;
          if( i<kA ){
            IJ_PREFETCH(&aT[r[i+IJ_AHEAD].iMem]);
            IJ_PREFETCH(aT[r[i+IJ_AHEAD/2].iMem].z + iOff);
          }
          x = idemJsonWordKey(t->z + iOff, nLeft);
          r[i].iKey = x;
          kOr |= x;
          kAnd &= x;
          kEsc |= IJ_HAS_ZERO(x ^ (IJ_ONES*'\\'));
          bEnd |= nLeft <= 8;
        }
        kDiff = kOr ^ kAnd;
        bTaken = 1;
      }
      if( !bTaken ) for(i=0; i<k; i++){
        const IdemJsonSortText *t = &aT[r[i].iMem];
        uint64_t x;
        if( bAhead && i<k-IJ_AHEAD ){
          IJ_PREFETCH(&aT[r[i+IJ_AHEAD].iMem]);
          if( !IJ_KEPT(bKept, iOff) ){
            IJ_PREFETCH(aT[r[i+IJ_AHEAD/2].iMem].z + iOff);
          }else if( iOff==16 ){
            IJ_PREFETCH(&aK2[r[i+IJ_AHEAD/2].iMem]);
          }
        }
        x = idemJsonTextKey(aT, aK2, r[i].iMem, iOff, bKept);
        r[i].iKey = x;
        kDiff |= x ^ r[0].iKey;
        kEsc |= IJ_HAS_ZERO(x ^ (IJ_ONES*'\\'));
        bEnd |= t->n - iOff <= 8;
      }
      if( bBail && kEsc ) return SQLITE_MISUSE;
      if( bEnd && k>=32 ){
        /* Do the names that go on past these 8 bytes all share them?
        ** (Most groups say no within their first few names.) */
        int iGo = -1;
        for(i=0; i<k; i++){
          if( aT[r[i].iMem].n - iOff > 8 ){
            if( iGo<0 ){
              iGo = i;
            }else if( r[i].iKey!=r[iGo].iKey ){
              break;
            }
          }
        }
        bChain = iGo>=0 && i==k;
        if( bChain ){
          /* In a chain, the names that go on past the next 8 bytes too
          ** share those ("a", "aa", ... "aaaaaaaaaaaaaaaaaa"); numbered
          ** names ("field1", "field12", "field123" ...: one ends within
          ** the key, the others go on alike) are no chain: the next 8
          ** bytes tell them apart, and the pivot would read them all. */
          int iFar = -1;
          uint64_t kFar = 0;
          for(i=0; i<k; i++){
            const IdemJsonSortText *t = &aT[r[i].iMem];
            if( t->n - iOff > 16 ){
              uint64_t x = idemJsonTextKey(aT, aK2, r[i].iMem, iOff+8, bKept);
              if( iFar<0 ){
                iFar = i;
                kFar = x;
              }else if( x!=kFar ){
                break;
              }
            }
          }
          bChain = iFar>=0 && i==k;
        }
        if( bChain ) break;
      }
      if( kDiff || bEnd ) break;
      if( bKept && iOff==0 ){
        /* The kept keys at 8 first (a prefix shorter than 16 bytes is
        ** then passed over without reading the names) */
        iOff = 8;
        continue;
      }
      j = (int)idemJsonGroupPrefix(aT, r, k, iOff+8);
      if( bBail && memchr(aT[r[0].iMem].z + iOff + 8, '\\', j - iOff - 8) ){
        return SQLITE_MISUSE;
      }
      iOff = j;
    }
    if( bChain ){
      int rc = idemJsonPivot(aT, r, aR + n + (r - aR), k, iOff, aG, &nG,
                             (uint32_t)(r - aR), bBail, &bEqual);
      if( rc ) return rc;
      continue;
    }
    if( IJ_KEPT(bKept, iOff+8) && k>=IJ_PAIR_MIN
     && kDiff!=0 && kDiff!=~(uint64_t)0 ){
      /* A large group whose keys at iOff and iOff+8 are both kept
      ** (UTF-16 order: the 50 000 names that share 12 bytes, a group at
      ** 8): sorted by both keys at once, packed (the bits of iOff's key
      ** that differ above the highest of those at iOff+8 that fit beside
      ** them), not by the key at iOff and then a group at iOff+8 for
      ** each run of equal keys (some 280 sorts of ~180 names).  Equal
      ** packed keys are names alike in their first iOff+8 bytes, a group
      ** at iOff+8, unless one of them ends within them (bEnd): a name
      ** that ends has the key 0 at iOff+8, before those that go on with
      ** the same key at iOff, and a run that holds one is a group at
      ** iOff again, which splits it by length. */
      uint64_t *pK = aKey + (r - aR), x2 = 0, kEsc2 = 0;
      int nBit1 = idemJsonBits(kDiff), nBit2, nShl, nShr;
      for(i=0; i<k; i++){
        uint64_t x;
        if( i<k-IJ_AHEAD ) IJ_PREFETCH(&aK2[r[i+IJ_AHEAD].iMem]);
        x = idemJsonTextKey(aT, aK2, r[i].iMem, iOff+8, 1);
        pK[i] = x;
        x2 |= x ^ pK[0];
        kEsc2 |= IJ_HAS_ZERO(x ^ (IJ_ONES*'\\'));
      }
      if( bBail && kEsc2 ) return SQLITE_MISUSE;
      nBit2 = idemJsonBits(x2);
      if( nBit1 + nBit2 <= 64 ){
        nShl = nBit2;
        nShr = 0;
      }else{
        nShl = 64 - nBit1;
        nShr = nBit2 - nShl;
      }
#ifdef IDEM_JSON_PEXT
      if( idemJsonHasPext() ){
        idemJsonPackPairPext(r, pK, k, kDiff, x2, nShl, nShr);
      }else
#endif
      {
        IdemJsonPack pk1, pk2;
        idemJsonPackInit(&pk1, kDiff);
        idemJsonPackInit(&pk2, x2);
        for(i=0; i<k; i++){
          r[i].iKey = (idemJsonPack(&pk1, r[i].iKey) << nShl)
                    | (idemJsonPack(&pk2, pK[i]) >> nShr);
        }
      }
      idemJsonSortRanks(r, aR + n + (r - aR), k, 0);
      for(i=0; i<k; i=j){
        for(j=i+1; j<k && r[j].iKey==r[i].iKey; j++){}
        if( j-i>1 ){
          int m, bGo = 1;
          if( bEnd ){
            for(m=i; m<j && aT[r[m].iMem].n - iOff > 8; m++){}
            bGo = m==j;
          }
          aG[nG].iLo = (uint32_t)(r - aR + i);
          aG[nG].iHi = (uint32_t)(r - aR + j);
          aG[nG].iOff = (uint32_t)(iOff + (bGo ? 8 : 0));
          nG++;
        }
      }
      continue;
    }
    idemJsonSortRanks(r, aR + n + (r - aR), k, 0);
    nG0 = nG;

    /* Each run of equal keys: the names that end within the key first,
    ** by the length left (a counting sort: 0 to 8 bytes, or more); two
    ** that end alike are equal.  Those that go on are a group at iOff+8.
    ** If no name of the group ends within the key (bEnd, learnt as the
    ** keys were read), every run is such a group as it stands, and the
    ** names' records are not read again, in the order of the ranks now
    ** (UTF-16 order, 100 000 names: the 50 000 that share 12 bytes, a
    ** wait for memory each). */
    for(i=0; i<k; i=j){
      for(j=i+1; j<k && r[j].iKey==r[i].iKey; j++){}
      if( j-i>1 && !bEnd ){
        aG[nG].iLo = (uint32_t)(r - aR + i);
        aG[nG].iHi = (uint32_t)(r - aR + j);
        aG[nG].iOff = (uint32_t)(8 + iOff);
        nG++;
      }else if( j-i>1 ){
        int aCnt[10], c, s, m, iGo = i;
        IdemJsonRank *aTmp = aR + n + (r - aR);
        memset(aCnt, 0, sizeof(aCnt));
        for(m=i; m<j; m++){
          sqlite3_int64 nLeft = aT[r[m].iMem].n - iOff;
          aCnt[nLeft>8 ? 9 : nLeft]++;
        }
        if( aCnt[9]<j-i ){
          for(c=0, s=i; c<10; c++){
            int x = aCnt[c];
            if( c<9 && x>1 ) bEqual = 1;
            aCnt[c] = s;
            s += x;
          }
          for(m=i; m<j; m++){
            sqlite3_int64 nLeft = aT[r[m].iMem].n - iOff;
            aTmp[aCnt[nLeft>8 ? 9 : nLeft]++] = r[m];
          }
          memcpy(r+i, aTmp+i, (j-i)*sizeof(IdemJsonRank));
          iGo = aCnt[8];        /* where the names that go on start */
        }
        if( j-iGo>1 ){
          aG[nG].iLo = (uint32_t)(r - aR + iGo);
          aG[nG].iHi = (uint32_t)(r - aR + j);
          aG[nG].iOff = (uint32_t)(iOff + 8);
          nG++;
        }
      }
    }
    if( bKept && n>=IDEM_JSON_TAKE_MIN && k>=n/IJ_TAKE_FRAC && nG>nG0
     && !IJ_KEPT(bKept, iOff+8) ){
      /* A large group's groups at iOff+8 (UTF-16 order: the 50 000
      ** names that share 12 bytes, some 280 groups at 16) take their keys
      ** in one pass in the order of the text if they hold half of it. */
      int nIn = 0;
      for(i=nG0; i<nG; i++) nIn += (int)(aG[i].iHi - aG[i].iLo);
      if( nIn>=k/2 ){
        int iLo = (int)(r - aR);
        if( idemJsonTakeKeys(aT, n, aR, iLo, iLo+k, iOff+8, aInv, aKey, aLeft)
         && bBail ){
          return SQLITE_MISUSE;
        }
        for(i=nG0; i<nG; i++) aG[i].iOff |= IJ_TAKEN;
      }
    }
  }
  return bEqual ? SQLITE_ERROR : SQLITE_OK;
}

/* Decode the canonical name z[0..n) into zTo (room for n bytes) and return
** its length, or -1 if it holds no escape (zTo's bytes are then scratch).
** Canonical text escapes only '"', '\\' and the control characters: one
** byte each.  Plain bytes are copied 8 at a time up to the next backslash
** (each word stored whole: the decoded name lags the text, so a word
** stored where it goes ends within the n bytes). */
static sqlite3_int64 idemJsonDecodeName(
  const unsigned char *z,
  sqlite3_int64 n,
  unsigned char *zTo
){
  unsigned char *d = zTo;
  sqlite3_int64 i = 0;
  int bEsc = 0;
  for(;;){
#ifdef IDEM_JSON_LE_WORDS
    while( n-i>=8 ){
      uint64_t w, m;
      memcpy(&w, z+i, 8);
      memcpy(d, &w, 8);
      m = idemJsonZeroBytes(w ^ (IJ_ONES*'\\'));
      if( m ){
        int k = IDEM_JSON_CTZ8(m);
        i += k;
        d += k;
        goto escape;
      }
      i += 8;
      d += 8;
    }
#endif
    while( i<n && z[i]!='\\' ) *d++ = z[i++];
    if( i>=n ) break;
#ifdef IDEM_JSON_LE_WORDS
  escape:
#endif
    bEsc = 1;
    if( z[i+1]=='u' ){              /* idemJsonUnescape(), its two cases */
      *d++ = (unsigned char)idemJsonHex4(z+i+2);
      i += 6;
    }else{
      *d++ = idemJsonKeepEscape[z[i+1]];
      i += 2;
    }
  }
  return bEsc ? d - zTo : -1;
}

/* Sort the n members a[0..n) of an object by name, when their 8-byte keys
** alone did not (more than IDEM_JSON_SMALL members, or two keys equal):
** the general sort described above, on the canonical texts of the names,
** and again on the unescaped names if it met an escape.  aR[0..2n) is
** scratch for ranks, aT for n names and aG for n/2+1 groups.  The members in
** sorted order are left in aR[0..n) (their index in a[]).  Returns
** SQLITE_NOMEM, SQLITE_ERROR if two names are equal (they are then next
** to each other in aR[]), or SQLITE_OK.  Kept out of line: the common
** case, idemJsonSortKeys() in idemJsonFinishObject(), should not pay for
** its registers. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int idemJsonSortMembers(
  IdemJson *p,
  const IdemJsonMember *a,
  int n,
  IdemJsonRank *aR,
  IdemJsonSortText *aT,
  IdemJsonGroup *aG,
  int nameEsc
){
  sqlite3_int64 nDec = 0;
  unsigned char *zDec;
  int i, rc;

  /* nameEsc (IdemJsonFrame) is the or of the letters of the kept escapes
  ** that idemJsonString() wrote into the object's names ('\\' is 0x5c;
  ** each of '"', 'b', 'f', 'n', 'r', 't', and 0x80 for \u00xx, has a bit
  ** that 0x5c has not; a \u escape sets the flag of what it writes:
  ** \u005c 0x5c, \u000a 'n', "caf\u00e9" nothing), 0 if it wrote none (a
  ** name with no escape sets nothing: the cost is one or on each escape);
  ** a name read by idemJsonKeptName() ors 0x5c for its \\ and 0x80 for
  ** any other escape, the same answers below.
  ** Exactly 0x5c: the only kept escape is \\, and the texts sort as they
  ** stand (below), with no failed raw attempt or check pass.  A bit
  ** outside 0x5c: some name holds another escape, and is decoded at once.
  ** 0 (or in doubt): the sequence below. */
  if( nameEsc==0x5c ){
    return idemJsonSortNames(p->zOut, a, aT, n, aR, aG, 2);
  }
  if( nameEsc==0 ){
    rc = idemJsonSortNames(p->zOut, a, aT, n, aR, aG, 1);
    if( rc!=SQLITE_MISUSE ) return rc;
  }

  /* Why nameEsc 0x5c sorts the texts as they stand.  If every escape is
  ** \\ (Windows paths as names, "C:\\Users\\..."), the canonical texts
  ** sort as they stand,
  ** in the order of the unescaped names: a canonical text is its name
  ** with each backslash (0x5c) made the two bytes 0x5c 0x5c, and nothing
  ** else changed.  Take two names A and B.  If A is a prefix of B, its
  ** text is a prefix of B's, and both go first.  If not, they are equal
  ** up to some byte, where A has x and B has y, x!=y: their texts are
  ** equal up to the texts of x and y (the same bytes made the same),
  ** which start with x and y themselves (a backslash's text with 0x5c),
  ** so the texts first differ there, at x against y, as the names do.
  ** The sort's UTF-16 order is byte order with lead bytes 0xee, 0xef
  ** moved after 0xf0..0xf4 (idemJsonWordKey()), a change of single
  ** bytes that leaves 0x5c as it is and makes no byte 0x5c: x against y
  ** is still the same comparison in both.  And two texts are equal only
  ** if their names are (the change can be undone), so the duplicates
  ** found are the same.  The sort keys of idemJsonNameKey() are those of
  ** the unescaped names (cut at the first escape), as before.  Any other
  ** escape (\n is 0x0a, written 0x5c 0x6e) does change the order: the
  ** names that hold a backslash are then decoded, as are the names of
  ** an object whose raw attempt met a backslash (which a right nameEsc
  ** never lets happen: slower then, never wrong). */

  /* Some name holds an escape: those that do are decoded into zTmp, in
  ** one pass over each name (idemJsonDecodeName()); zTmp has room for
  ** every name, and a name that holds no backslash keeps its text. */
  for(i=0; i<n; i++) nDec += a[i].iNameEnd - a[i].iName - 2;
  rc = idemJsonGrowTmp(p, nDec);
  if( rc ) return rc;
  zDec = p->zTmp;
  for(i=0; i<n; i++){
    const unsigned char *z = p->zOut + a[i].iName + 1;
    sqlite3_int64 nz = a[i].iNameEnd - a[i].iName - 2;
    sqlite3_int64 nd = idemJsonDecodeName(z, nz, zDec);
    if( nd<0 ){
      aT[i].z = z;
      aT[i].n = nz;
    }else{
      aT[i].z = zDec;
      aT[i].n = nd;
      zDec += nd;
    }
  }
  return idemJsonSortNames(p->zOut, a, aT, n, aR, aG, 0);
}

/* Make room for one more record and for nSpan more spans. */
static int idemJsonGrowSorted(IdemJson *p, sqlite3_int64 nSpan){
  if( p->nSorted>=p->nSortedAlloc ){
    sqlite3_int64 nNew = p->nSortedAlloc ? p->nSortedAlloc*2 : 16;
    IdemJsonSorted *aNew;
    aNew = sqlite3_realloc64(p->aSorted, nNew*sizeof(IdemJsonSorted));
    if( aNew==0 ) goto no_mem;
    p->aSorted = aNew;
    p->nSortedAlloc = nNew;
  }
  if( p->nSpan+nSpan>p->nSpanAlloc ){
    sqlite3_int64 nNew = p->nSpanAlloc ? p->nSpanAlloc*2 : 64;
    IdemJsonSpan *aNew;
    if( nNew<p->nSpan+nSpan ) nNew = p->nSpan+nSpan;
    aNew = sqlite3_realloc64(p->aSpan, nNew*sizeof(IdemJsonSpan));
    if( aNew==0 ) goto no_mem;
    p->aSpan = aNew;
    p->nSpanAlloc = nNew;
  }
  return SQLITE_OK;
no_mem:
  sqlite3_snprintf(sizeof(p->zErr), p->zErr, "out of memory");
  return SQLITE_NOMEM;
}

/* The first record in aSorted[iLo..iHi) that ends at or after iOff
** (records are in the order they end), or iHi. */
static IDEM_JSON_INLINE sqlite3_int64 idemJsonSortedFrom(
  const IdemJsonSorted *aRec,
  sqlite3_int64 iLo,
  sqlite3_int64 iHi,
  uint32_t iOff
){
  /* Often all or none of them (a chain of nested records). */
  if( iLo>=iHi || aRec[iLo].iEnd>=iOff ) return iLo;
  if( aRec[iHi-1].iEnd<iOff ) return iHi;
  while( iLo<iHi ){
    sqlite3_int64 iMid = (iLo+iHi)/2;
    if( aRec[iMid].iEnd<iOff ) iLo = iMid+1; else iHi = iMid;
  }
  return iLo;
}

/* Report the duplicate name among the members a[0..n), sorted in the order
** of aOrd[], that comes first in the input: the first member whose name an
** earlier member has, i.e. of each run of equal names in aOrd[] the second
** in the input, the earliest of those.  (A run of three or more is in no
** order of the input: the sorts do not keep one among equal names.)  If
** no two neighbours are equal after all (the sort was wrong: a bug), an
** internal error that says where the object starts, not a crash. */
static int idemJsonDuplicate(
  IdemJson *p,
  const IdemJsonMember *a,
  const IdemJsonRank *aOrd,
  int n,
  int iSkip
){
  const IdemJsonMember *pDup = 0;
  const char *zName, *zMore = "";
  int i, j, nName;
  for(i=0; i<n; i=j){
    const IdemJsonMember *p1 = &a[aOrd[i].iMem], *p2 = 0;
    for(j=i+1; j<n; j++){
      const IdemJsonMember *pB = &a[aOrd[j].iMem];
      if( idemJsonNameCmp(p->zOut, &a[aOrd[j-1].iMem], pB, iSkip)!=0 ) break;
      if( pB->iIn < p1->iIn ){
        p2 = p1;
        p1 = pB;
      }else if( p2==0 || pB->iIn < p2->iIn ){
        p2 = pB;
      }
    }
    if( p2 && (pDup==0 || p2->iIn < pDup->iIn) ) pDup = p2;
  }
  if( pDup==0 ){
    sqlite3_snprintf(sizeof(p->zErr), p->zErr,
                     "internal error: the sort of the object whose first"
                     " name is at byte %lld found a duplicate that is not"
                     " there", n>0 ? (sqlite3_int64)a[0].iIn + 1 : 0);
    return SQLITE_INTERNAL;
  }
  zName = (const char*)p->zOut + pDup->iName;
  nName = (int)(pDup->iNameEnd - pDup->iName);
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

/* memcpy() of n bytes between buffers that do not overlap, without a call
** for the short texts of most members and of the bytes between and around
** nested records.  Reads and writes nothing outside the n bytes. */
static IDEM_JSON_INLINE void idemJsonMove(
  unsigned char *zTo,
  const unsigned char *zFrom,
  uint32_t n
){
  if( n>=16 ){
    if( n>64 ){
      memcpy(zTo, zFrom, n);
    }else{
      /* 16 bytes at a time, the last 16 ending at the end (a memcpy()
      ** of a constant 16 bytes is one load and one store). */
      uint32_t i;
      for(i=0; i<n-16; i+=16) memcpy(zTo+i, zFrom+i, 16);
      memcpy(zTo+n-16, zFrom+n-16, 16);
    }
  }else if( n>=8 ){
    uint64_t a, b;
    memcpy(&a, zFrom, 8);
    memcpy(&b, zFrom+n-8, 8);
    memcpy(zTo, &a, 8);
    memcpy(zTo+n-8, &b, 8);
  }else if( n>=4 ){
    uint32_t a, b;
    memcpy(&a, zFrom, 4);
    memcpy(&b, zFrom+n-4, 4);
    memcpy(zTo, &a, 4);
    memcpy(zTo+n-4, &b, 4);
  }else{
    uint32_t i;
    for(i=0; i<n; i++) zTo[i] = zFrom[i];
  }
}

/* Write member pM of the text zOut, and a comma after it, at zTo
** (idemJsonScatter()). */
static IDEM_JSON_INLINE void idemJsonScatterOne(
  const unsigned char *zOut,
  const IdemJsonMember *pM,
  unsigned char *zTo
){
  uint32_t nMember = pM->iEnd - pM->iName;
  idemJsonMove(zTo, zOut + pM->iName, nMember);
  zTo[nMember] = ',';
}

/* Rewrite the members iLo..iHi of an object of n >= IJ_SCATTER_MIN
** members a[0..n) (its '}' at zOut[iEnd]) in the sorted order aOrd[]:
** each member's place in zTmp first, then the members in the order of
** the text, each written to its place (a scatter, not a gather: see
** IJ_SCATTER_MIN).  aPos[m] (the sort's scratch after aOrd[0..n)) is
** member m's offset, from the lengths that the ranks carry
** (IdemJsonRank).  The top object of the text ('{' at byte 0, its first
** name at 1) is written into zTmp at its own offsets, with the bytes
** before and after the members that move, and not copied back: the
** buffers trade places at the end (idemJsonEnd()), after its '}'. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int idemJsonScatter(
  IdemJson *p,
  const IdemJsonMember *a,
  const IdemJsonRank *aOrd,
  int n,
  int iLo,
  int iHi,
  sqlite3_int64 iEnd
){
  uint32_t *aPos = (uint32_t*)(aOrd + n);
  uint32_t iFrom = a[iLo].iName;
  uint32_t nMove = a[iHi].iEnd - iFrom;
  uint32_t iTo = 0;
  int bSwap = a[0].iName==1;
  unsigned char *zBase;
  int i, rc;
  rc = idemJsonGrowTmp(p, bSwap ? iEnd + 64 : nMove);
  if( rc ) return rc;
  zBase = p->zTmp + (bSwap ? iFrom : 0);
  for(i=iLo; i<=iHi; i++){
    assert( aOrd[i].nLen==a[aOrd[i].iMem].iEnd - a[aOrd[i].iMem].iName );
    aPos[aOrd[i].iMem] = iTo;
    iTo += aOrd[i].nLen+1;
  }
  /* The place of the member IJ_SCATTER_AHEAD on is fetched for writing:
  ** once the object outgrows the second-level cache, each member's write
  ** would otherwise wait for its line, and the stores queue behind it
  ** (paths as names, 100 000: 4-5% of a call's time).  The last members
  ** in a loop of their own, without. */
  for(i=iLo; i<iHi-IJ_SCATTER_AHEAD; i++){
    IJ_PREFETCH_W(zBase + aPos[i+IJ_SCATTER_AHEAD]);
    idemJsonScatterOne(p->zOut, &a[i], zBase + aPos[i]);
  }
  for(; i<=iHi; i++){
    idemJsonScatterOne(p->zOut, &a[i], zBase + aPos[i]);
  }
  if( bSwap ){
    assert( p->nSorted==0 );
    memcpy(p->zTmp, p->zOut, iFrom);
    memcpy(p->zTmp + iFrom + nMove, p->zOut + iFrom + nMove,
           (size_t)(iEnd - iFrom - nMove));
    p->iSwap = iEnd;
    return SQLITE_OK;
  }
  memcpy(p->zOut + iFrom, p->zTmp, nMove);
  return SQLITE_OK;
}

/* The object whose n members are a[0..n) has just been read and its names
** do not ascend; its text ends at zOut[iEnd].  Sort its members and report
** a duplicate name.  Then rewrite its text in sorted order now, unless
** that would move bytes once per level of nesting: if an object inside it
** waits (it must not move), or if more than 7/8 of its text was moved by
** the sorts of objects inside it, the object waits too: it is recorded,
** to be written once at the end with the objects inside it
** (idemJsonEmit()).  So each byte is moved by at most one sort that
** found 1/8 of its text unmoved, and once at the end.  A rewrite leaves
** the members that keep their place at either end where they are, writes
** the others in sorted order to zTmp, and copies that back in one piece. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int idemJsonFinishObject(
  IdemJson *p,
  IdemJsonMember *a,
  int n,
  sqlite3_int64 iEnd,
  int nameEsc
){
  sqlite3_int64 iFirst = a[0].iName;
  sqlite3_int64 nText = iEnd - iFirst;
  sqlite3_int64 nDone = 0;
  IdemJsonRank aSmall[IDEM_JSON_SMALL], *aOrd;
  unsigned char *zTo;
  int i, iLo, iHi, rc, bDefer;
  uint32_t iFrom, nMove;
  sqlite3_int64 iRec;

  aOrd = aSmall;
  if( n<=IDEM_JSON_NET ? !idemJsonSortKeys(a, n, 0, aSmall)
      : n>IDEM_JSON_SMALL || !idemJsonInsertKeys(a, n, aSmall) ){
    /* Scratch after a[0..n): 2n ranks, n names, n keys at 16 if n is
    ** IJ_PREFETCH_MIN or more (IJ_NK2()), idemJsonTakeKeys()'s n+1 keys,
    ** n ranks and n+1 flags (in (n+4)/4 words), and n/2+1 groups (91n+28
    ** bytes: fewer than 4n+2 records; 83n+28 without the keys at 16:
    ** fewer than 3n+n/2+2). */
    IdemJsonRank *aR;
    IdemJsonSortText *aT;
    IdemJsonGroup *aG;
    sqlite3_int64 nNeed = n*(sqlite3_int64)4 + n/2 + 2 + IJ_NK2(n)/2;
    if( nNeed > p->nMemberAlloc - (a - p->aMember) ){
      sqlite3_int64 iA = a - p->aMember;
      rc = idemJsonGrowMembers(p, iA + nNeed);
      if( rc ) return rc;
      a = p->aMember + iA;
    }
    aR = (IdemJsonRank*)(a+n);
    aT = (IdemJsonSortText*)(aR+2*n);
    aG = (IdemJsonGroup*)((uint32_t*)((uint64_t*)(aT+n) + IJ_NK2(n) + n + 1)
                          + n + (n+4)/4);
    rc = idemJsonSortMembers(p, a, n, aR, aT, aG, nameEsc);
    if( rc==SQLITE_ERROR ) return idemJsonDuplicate(p, a, aR, n, 0);
    if( rc ) return rc;
    aOrd = aR;
  }

  /* The objects moved inside this one are the last on aMoved[]. */
  while( p->nMoved>0 && p->aMoved[p->nMoved-1].iEnd>iFirst ){
    p->nMoved--;
    nDone += p->aMoved[p->nMoved].iEnd - p->aMoved[p->nMoved].iName;
  }
  bDefer = (p->nSorted>0 && p->aSorted[p->nSorted-1].iEnd>iFirst)
        || nDone>nText-nText/8;
  if( bDefer ){
    IdemJsonSorted *pRec;
    rc = idemJsonGrowSorted(p, n);
    if( rc ) return rc;
    pRec = &p->aSorted[p->nSorted];
    pRec->iStart = (uint32_t)iFirst;
    pRec->iEnd = (uint32_t)iEnd;
    /* The records inside it are the last ones, those that end after it
    ** starts: the records directly inside it, last first, each with the
    ** records inside that one (a walk, not a search over every record so
    ** far: each record is passed once, by the record it is directly
    ** inside, whatever the number of objects before this one). */
    for(iRec=p->nSorted; iRec>0 && p->aSorted[iRec-1].iEnd>=iFirst; ){
      iRec = p->aSorted[iRec-1].iFirst;
    }
    pRec->iFirst = (uint32_t)iRec;
    pRec->iSpan = (uint32_t)p->nSpan;
    pRec->nSpan = (uint32_t)n;
    p->nSorted++;
    for(i=0; i<n; i++){
      p->aSpan[p->nSpan].iName = a[aOrd[i].iMem].iName;
      p->aSpan[p->nSpan].iEnd = a[aOrd[i].iMem].iEnd;
      p->nSpan++;
    }
    return SQLITE_OK;
  }

  if( p->nMoved>=p->nMovedAlloc ){
    sqlite3_int64 nNew = p->nMovedAlloc ? p->nMovedAlloc*2 : 16;
    IdemJsonSpan *aNew = sqlite3_realloc64(p->aMoved, nNew*sizeof(IdemJsonSpan));
    if( aNew==0 ){
      sqlite3_snprintf(sizeof(p->zErr), p->zErr, "out of memory");
      return SQLITE_NOMEM;
    }
    p->aMoved = aNew;
    p->nMovedAlloc = nNew;
  }
  p->aMoved[p->nMoved].iName = (uint32_t)iFirst;
  p->aMoved[p->nMoved].iEnd = (uint32_t)iEnd;
  p->nMoved++;

  /* Names that do not ascend are out of order (a duplicate was reported
  ** above), so some member moves: iLo<=iHi. */
  for(iLo=0; iLo<n-1 && aOrd[iLo].iMem==(uint32_t)iLo; iLo++){}
  for(iHi=n-1; iHi>iLo && aOrd[iHi].iMem==(uint32_t)iHi; iHi--){}
  iFrom = a[iLo].iName;
  nMove = a[iHi].iEnd - iFrom;
  if( n>=IJ_SCATTER_MIN ){
    return idemJsonScatter(p, a, aOrd, n, iLo, iHi, iEnd);
  }
  rc = idemJsonGrowTmp(p, nMove);
  if( rc ) return rc;
  zTo = p->zTmp;
  for(i=iLo; i<=iHi; i++){
    const IdemJsonMember *pM = &a[aOrd[i].iMem];
    uint32_t nMember = pM->iEnd - pM->iName;
    idemJsonMove(zTo, p->zOut + pM->iName, nMember);
    zTo[nMember] = ',';
    zTo += nMember+1;
  }
  memcpy(p->zOut + iFrom, p->zTmp, nMove);
  return SQLITE_OK;
}

/* Start writing member iMem of the record in frame pF: the last record
** inside that member is the last of the record's inner ones that ends
** before the member does (it is inside if it also ends after the member
** starts). */
static void idemJsonEmitMember(
  IdemJson *p,
  IdemJsonEmitFrame *pF,
  uint32_t iMem
){
  const IdemJsonSorted *pR = &p->aSorted[pF->iRec];
  const IdemJsonSpan *pS = &p->aSpan[pR->iSpan + iMem];
  pF->iMem = iMem;
  pF->iFrom = pS->iName;
  pF->iTo = pS->iEnd;
  pF->iNext = idemJsonSortedFrom(p->aSorted, pR->iFirst, pF->iRec,
                                 pS->iEnd) - 1;
}

/* Write the recorded objects (IdemJsonSorted) in sorted order.  The text
** of each outermost record is copied to zTmp and written back into zOut
** backwards: its members last first, each member's text as it is but for
** the records inside it, written the same way in their turn (a stack, not
** recursion).  Each byte is moved once, whatever the nesting. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int idemJsonEmit(IdemJson *p){
  const IdemJsonSorted *aRec = p->aSorted;
  sqlite3_int64 r = p->nSorted - 1;
  if( p->nEmitAlloc==0 ){
    p->aEmit = sqlite3_malloc64(IDEM_JSON_MAX_DEPTH*sizeof(IdemJsonEmitFrame));
    if( p->aEmit==0 ){
      sqlite3_snprintf(sizeof(p->zErr), p->zErr, "out of memory");
      return SQLITE_NOMEM;
    }
    p->nEmitAlloc = IDEM_JSON_MAX_DEPTH;
  }
  while( r>=0 ){
    const IdemJsonSorted *pTop = &aRec[r];
    const unsigned char *zFrom;          /* text of offset x: zFrom[x-iBase] */
    uint32_t iBase = pTop->iStart;
    sqlite3_int64 nText = pTop->iEnd - iBase;
    unsigned char *o = p->zOut + pTop->iEnd;
    int nStack = 1;
    int rc = idemJsonGrowTmp(p, nText);
    if( rc ) return rc;
    memcpy(p->zTmp, p->zOut + iBase, nText);
    zFrom = p->zTmp;
    p->aEmit[0].iRec = (uint32_t)r;
    idemJsonEmitMember(p, &p->aEmit[0], pTop->nSpan-1);
    while( nStack>0 ){
      IdemJsonEmitFrame *pF = &p->aEmit[nStack-1];
      uint32_t n;
      if( pF->iNext>=aRec[pF->iRec].iFirst
       && aRec[pF->iNext].iEnd>=pF->iFrom ){
        /* A record inside this member: the text after it, then it. */
        const IdemJsonSorted *pIn = &aRec[pF->iNext];
        n = pF->iTo - pIn->iEnd;
        o -= n;
        idemJsonMove(o, zFrom + (pIn->iEnd - iBase), n);
        pF->iTo = pIn->iStart;
        pF->iNext = (sqlite3_int64)pIn->iFirst - 1;
        pF[1].iRec = (uint32_t)(pIn - aRec);
        idemJsonEmitMember(p, &pF[1], pIn->nSpan-1);
        nStack++;
        continue;
      }
      n = pF->iTo - pF->iFrom;
      o -= n;
      idemJsonMove(o, zFrom + (pF->iFrom - iBase), n);
      if( pF->iMem>0 ){
        *--o = ',';
        idemJsonEmitMember(p, pF, pF->iMem-1);
      }else{
        nStack--;
      }
    }
    assert( o==p->zOut + iBase );
    r = (sqlite3_int64)pTop->iFirst - 1;
  }
  return SQLITE_OK;
}

/* Copy the number zNum[0..s-zNum) of the input, printed as written, to o.
** Most are short, and the input has 16 bytes from zNum: those 16 are
** copied at once (the room at o is the input left plus 40: see the
** invariant in idemJsonCanonical()), not by a call of memcpy() for a few
** bytes. */
static IDEM_JSON_INLINE void idemJsonCopyNumber(
  unsigned char *o,
  const unsigned char *zNum,
  const unsigned char *s,
  const unsigned char *zEnd
){
  if( s-zNum<=16 && zEnd-zNum>=16 ){
    memcpy(o, zNum, 16);
  }else{
    memcpy(o, zNum, s-zNum);
  }
}

#ifdef IDEM_AVX2
/* A run of \u escapes at s (s[0..1] is "\u"), on a machine with AVX2 (the
** caller asks only where idemUtf8Valid() said yes, which it does only
** there), with at least IJ_URUN_MIN bytes before zEnd: 8 escapes at once,
** 6 bytes each, whatever they hold, so that where the next escape starts
** never waits for the value of this one, and no branch tells a surrogate
** pair from a character of 2 or 3 bytes (names that mix planes, as an
** ASCII-only encoder writes them, mispredict such a branch at about every
** other character).  The escapes taken are the leading ones that are
** each \u and 4 hex digits of a character from U+0080 to U+FFFF, or of a
** high surrogate followed by a low one; their UTF-8 is written at o.
** Returns the bytes of input taken plus 2^32 times the bytes written, 0
** if none (no pointers passed back through memory: the caller's s and o
** stay in registers).  The first escape not taken (one of an ASCII
** character, any other escape, a lone surrogate, bad hex digits, the end
** of the string or of what can be read 8 escapes at a time) is read by
** the caller's loop, which reports what is wrong where it always did. */
#define IJ_URUN_MIN 52

/* The constants of idemJsonURunAvx2(), 32 bytes each. */
#define IJ_B32(a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p) \
  { a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p, a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p }
#define IJ_S32(x) { x,x,x,x,x,x,x,x,x,x,x,x,x,x,x,x, \
                    x,x,x,x,x,x,x,x,x,x,x,x,x,x,x,x }
#define IJ_W32(x) IJ_B32((x)&0xff,(x)>>8&0xff,(x)>>16&0xff,(x)>>24&0xff, \
  (x)&0xff,(x)>>8&0xff,(x)>>16&0xff,(x)>>24&0xff, \
  (x)&0xff,(x)>>8&0xff,(x)>>16&0xff,(x)>>24&0xff, \
  (x)&0xff,(x)>>8&0xff,(x)>>16&0xff,(x)>>24&0xff)
enum { IJU_PAT, IJU_PATMASK, IJU_GATHER, IJU_C0, IJU_CA, IJU_C9, IJU_C5,
       IJU_X0F, IJU_X20, IJU_X80, IJU_W16, IJU_W256, IJU_SUR, IJU_D800,
       IJU_DC00, IJU_X80D, IJU_X800, IJU_X3F, IJU_XFC0, IJU_T2, IJU_T3,
       IJU_T4, IJU_CP, IJU_3, IJU_LANES, IJU_BEFORE, IJU_LO32, IJU_N };
static const unsigned char aIdemJsonU[IJU_N][32] __attribute__((aligned(32))) = {
  /* In each 16-byte half: escapes 2k (bytes 0..5) and 2k+1 (6..11). */
  IJ_B32('\\','u',0,0,0,0,'\\','u',0,0,0,0,0,0,0,0),
  IJ_B32(0xff,0xff,0,0,0,0,0xff,0xff,0,0,0,0,0,0,0,0),
  /* The 8 hex digits of the two escapes of a half, to its bytes 0..7. */
  IJ_B32(2,3,4,5,8,9,10,11,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80),
  IJ_S32('0'), IJ_S32('a'), IJ_S32(9), IJ_S32(5), IJ_S32(0x0f),
  IJ_S32(0x20), IJ_S32(0x80),
  IJ_B32(16,1,16,1,16,1,16,1,16,1,16,1,16,1,16,1),     /* n0*16 + n1 */
  IJ_W32(0x00010100),                                  /* w0*256 + w1 */
  IJ_W32(0xfffffc00u), IJ_W32(0xd800), IJ_W32(0xdc00), IJ_W32(0x80),
  IJ_W32(0x800), IJ_W32(0x3f), IJ_W32(0xfc0),
  IJ_W32(0x80c0), IJ_W32(0x8080e0), IJ_W32(0x808080f0u),
  IJ_W32((0x10000u - (0xd800u<<10) - 0xdc00u) & 0xffffffffu),
  IJ_W32(3),
  { 0,0,0,0, 1,0,0,0, 2,0,0,0, 3,0,0,0, 4,0,0,0, 5,0,0,0, 6,0,0,0, 7,0,0,0 },
  { 7,0,0,0, 0,0,0,0, 1,0,0,0, 2,0,0,0, 3,0,0,0, 4,0,0,0, 5,0,0,0, 6,0,0,0 },
  IJ_B32(0xff,0xff,0xff,0xff,0,0,0,0,0xff,0xff,0xff,0xff,0,0,0,0)
};
#define IJ_U(k) _mm256_load_si256((const __m256i*)(const void*)aK[k])

/* Two units of each 16-byte half of 24*2 bytes at s (escapes 0,1 | 2,3
** of the 4 there), in the half's first two 32-bit lanes; -1 where an
** escape is not \u and 4 hex digits. */
__attribute__((target("avx2"), always_inline))
static inline __m256i idemJsonUHalf(
  const unsigned char *s,
  const unsigned char (*aK)[32]         /* aIdemJsonU */
){
  __m256i x, dig, let, isDig, ok, g, u;
  x = _mm256_loadu2_m128i((const __m128i*)(s+12), (const __m128i*)s);
  dig = _mm256_sub_epi8(x, IJ_U(IJU_C0));
  let = _mm256_sub_epi8(_mm256_or_si256(x, IJ_U(IJU_X20)), IJ_U(IJU_CA));
  isDig = _mm256_cmpeq_epi8(_mm256_min_epu8(dig, IJ_U(IJU_C9)), dig);
  ok = _mm256_or_si256(isDig, _mm256_cmpeq_epi8(
                                _mm256_min_epu8(let, IJ_U(IJU_C5)), let));
  /* A digit's value (its low 4 bits, 9 more for a letter), with 0x80 in a
  ** digit that is no hex digit, or 2 bytes after a byte of "\u" that is
  ** not there. */
  g = _mm256_or_si256(
        _mm256_add_epi8(_mm256_and_si256(x, IJ_U(IJU_X0F)),
          _mm256_andnot_si256(isDig, _mm256_and_si256(ok, IJ_U(IJU_C9)))),
        _mm256_or_si256(_mm256_andnot_si256(ok, IJ_U(IJU_X80)),
          _mm256_slli_si256(_mm256_andnot_si256(_mm256_cmpeq_epi8(
            _mm256_and_si256(x, IJ_U(IJU_PATMASK)), IJ_U(IJU_PAT)),
            IJ_U(IJU_X80)), 2)));
  g = _mm256_shuffle_epi8(g, IJ_U(IJU_GATHER));
  u = _mm256_madd_epi16(_mm256_maddubs_epi16(g, IJ_U(IJU_W16)),
                        IJ_U(IJU_W256));
  ok = _mm256_cmpeq_epi32(_mm256_and_si256(g, IJ_U(IJU_X80)),
                          _mm256_setzero_si256());
  return _mm256_or_si256(u, _mm256_xor_si256(ok, _mm256_cmpeq_epi32(ok, ok)));
}

__attribute__((target("avx2"), noinline))
static uint64_t idemJsonURunAvx2(
  const unsigned char *s,
  const unsigned char *zEnd,
  unsigned char *o
){
  const unsigned char *zStart = s;
  unsigned char *oStart = o;
  __m256i prev = _mm256_setzero_si256();  /* the last unit before, lane 7 */
  unsigned int carryH = 0;   /* 1: that unit is a high surrogate */
  const unsigned char (*aK)[32] = aIdemJsonU;
  /* Read from memory: GCC would build each constant from a general
  ** register (2 or 3 instructions) in every block otherwise. */
  __asm__("" : "+r"(aK));
  for(;;){
    __m256i u, pu, cp, t2, t3, t4, is2, isH, isL, len, w, hi;
    unsigned int mBad, mH, mL, m;
    /* Units 0..7 in order: (0,1 | 2,3) and (4,5 | 6,7) to (0..3 | 4..7). */
    u = _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(idemJsonUHalf(s, aK),
                                   idemJsonUHalf(s+24, aK)), 0xd8);
    hi = _mm256_and_si256(u, IJ_U(IJU_SUR));
    isH = _mm256_cmpeq_epi32(hi, IJ_U(IJU_D800));
    isL = _mm256_cmpeq_epi32(hi, IJ_U(IJU_DC00));
    mBad = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
             _mm256_cmpgt_epi32(IJ_U(IJU_X80D), u)));
    mH = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(isH));
    mL = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(isL));
    /* A run stops at an ASCII unit (or a bad one: -1), at a high
    ** surrogate whose next is no low one (the eighth's next is the next
    ** block's first), at a low one not after a high one. */
    mBad |= (mH & ~(mL>>1) & 0x7f) | (mL & ~(mH<<1 | carryH))
            | (carryH & ~mL) | 0x100;
    m = (unsigned)__builtin_ctz(mBad);
    /* The UTF-8 of each unit: 2 or 3 bytes, nothing for a high surrogate,
    ** and 4 for a low one, of the pair with the unit before it. */
    t2 = _mm256_or_si256(_mm256_or_si256(_mm256_srli_epi32(u, 6),
           _mm256_slli_epi32(_mm256_and_si256(u, IJ_U(IJU_X3F)), 8)),
           IJ_U(IJU_T2));
    t3 = _mm256_or_si256(_mm256_or_si256(_mm256_srli_epi32(u, 12),
           _mm256_or_si256(
             _mm256_slli_epi32(_mm256_and_si256(u, IJ_U(IJU_XFC0)), 2),
             _mm256_slli_epi32(_mm256_and_si256(u, IJ_U(IJU_X3F)), 16))),
           IJ_U(IJU_T3));
    pu = _mm256_permutevar8x32_epi32(_mm256_blend_epi32(u, prev, 0x80),
                                     IJ_U(IJU_BEFORE));
    cp = _mm256_add_epi32(_mm256_add_epi32(_mm256_slli_epi32(pu, 10), u),
                          IJ_U(IJU_CP));
    t4 = _mm256_or_si256(_mm256_or_si256(
           _mm256_or_si256(_mm256_srli_epi32(cp, 18),
             _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(cp, 12),
                                                IJ_U(IJU_X3F)), 8)),
           _mm256_or_si256(
             _mm256_slli_epi32(_mm256_and_si256(cp, IJ_U(IJU_XFC0)), 10),
             _mm256_slli_epi32(_mm256_and_si256(cp, IJ_U(IJU_X3F)), 24))),
           IJ_U(IJU_T4));
    is2 = _mm256_cmpgt_epi32(IJ_U(IJU_X800), u);
    w = _mm256_blendv_epi8(_mm256_blendv_epi8(t3, t2, is2), t4, isL);
    /* 3, 2 where is2, 4 where isL, 0 where isH, 0 from the m-th unit on. */
    len = _mm256_andnot_si256(isH, _mm256_add_epi32(
            _mm256_sub_epi32(IJ_U(IJU_3), isL), is2));
    len = _mm256_and_si256(len, _mm256_cmpgt_epi32(
            _mm256_set1_epi32((int)m), IJ_U(IJU_LANES)));
    {
      /* Two units a 64-bit lane, the second's bytes after the first's
      ** (a high surrogate's none: its word cleared): 4 stores of 8 bytes,
      ** each where the one before ended. */
      uint64_t aW[4], aLen[4];
      __m256i len0 = _mm256_and_si256(len, IJ_U(IJU_LO32));
      int i;
      w = _mm256_andnot_si256(isH, w);
      w = _mm256_or_si256(_mm256_and_si256(w, IJ_U(IJU_LO32)),
            _mm256_sllv_epi64(_mm256_srli_epi64(w, 32),
                              _mm256_slli_epi64(len0, 3)));
      len = _mm256_add_epi64(len0, _mm256_srli_epi64(len, 32));
      _mm256_storeu_si256((__m256i*)(void*)aW, w);
      _mm256_storeu_si256((__m256i*)(void*)aLen, len);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 4
#endif
      for(i=0; i<4; i++){
        memcpy(o, &aW[i], 8);
        o += aLen[i];
      }
    }
    if( m<8 ){
      /* A high surrogate last taken, not followed by its low one, is given
      ** back (it wrote nothing), for the caller to report. */
      s += 6*m;
      if( m==0 && carryH ) s -= 6;
      break;
    }
    s += 48;        /* not 6*m: the next block need not wait for m */
    carryH = mH>>7;
    prev = u;
    if( zEnd-s<IJ_URUN_MIN ){
      if( carryH ) s -= 6;
      break;
    }
  }
  return (uint64_t)(o - oStart)<<32 | (uint64_t)(s - zStart);
}
#endif

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

#ifdef IDEM_JSON_SSE2
  /* Bytes above 0x7f are plain if the input is known valid UTF-8. */
  const __m128i flip = idemJsonScanFlip(p);
  const __m128i lim = idemJsonScanLim(p);
#endif

  *o++ = '"';
  for(;;){
    /* Plain bytes 16, then 8 at a time.  The block is stored whole (the
    ** output has room), then the pointers advance to its first special
    ** byte if any. */
#ifdef IDEM_JSON_SSE2
    while( zEnd-s>=16 ){
      __m128i v = _mm_loadu_si128((const __m128i*)s);
      unsigned int m = idemJsonSpecial16x(v, flip, lim);
      _mm_storeu_si128((__m128i*)o, v);
      while( m ){
        int k = __builtin_ctz(m);
        if( s[k]=='\\' ){
          if( k<14 && idemJsonKeepEscape[s[k+1]] && s[k+2]!='\\' ){
            /* A lone \n, \" ... (its own canonical form, the common
            ** special byte of text and code, and every quote of JSON held
            ** in a string), already stored with the block: the scan goes
            ** on to the block's next special byte, from the mask it has,
            ** not from a load at the byte after the escape (which would
            ** wait for this one's position).  One that ends past the
            ** block's last byte but one is read by the loop below; so is a
            ** run of escapes, which is faster there. */
            p->escOr |= s[k+1];
            m &= ~(3u<<k);
            continue;
          }
          if( zEnd-s>=32 && s[k+1]=='/' ){
            /* A \/ (PHP's json_encode() writes every solidus so: paths
            ** and URLs, as names and values), whose canonical form is the
            ** '/' alone: o goes back one byte, and the 16 bytes from the
            ** '/' on are stored again there (the input has them, 32 bytes
            ** being left; the output has the room by the invariant of
            ** idemJsonCanonical(), o lagging s), and the scan goes on from
            ** the mask it has, as for a lone \n: ~25 instructions an
            ** escape, not ~50 through a fresh load after it.  The '/' is
            ** no special byte: only the backslash's bit goes.  (A '/'
            ** past the block, after its last byte, is the next block's
            ** first byte, a plain one, stored there again.)  Asked after
            ** the lone \n, \" ...: before them, its two tests cost text
            ** and code 0.04x-0.06x (source code, JSON inside a string). */
            o--;
            _mm_storeu_si128((__m128i*)(o+k+1),
                             _mm_loadu_si128((const __m128i*)(s+k+1)));
            m &= m-1;
            continue;
          }
        }
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
      ** a lead byte, a second byte in its range, and continuation bytes.
      ** (In an input known valid, the block scan above copies such bytes
      ** as plain, and may stop in the middle of a character near the end
      ** of the input: go back to its lead byte, which is in this string.) */
      while( (*s & 0xc0)==0x80 && p->isUtf8 ){ s--; o--; }
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
      case IJ_BSLASH:
        if( zEnd-s>=3 && s[1]=='/' && s[2]!='\\' ){
          /* A lone \/ (PHP's json_encode() writes every solidus so, in
          ** names as in values: paths and URLs as names): a '/', and back
          ** to the scan (~30 instructions an escape, ~70 through the run's
          ** loop below). */
          *o++ = '/';
          s += 2;
          continue;
        }
#ifdef IDEM_AVX2
        if( __builtin_expect(zEnd-s>=IJ_URUN_MIN && s[2]!='0' && s[1]=='u'
                             && s[42]=='\\' && s[43]=='u' && s[6]=='\\'
                             && p->isUtf8, 0) ){
          /* A run that starts with 8 \u escapes or more, the first of
          ** U+1000 or above (3 bytes or a pair: CJK, names of mixed
          ** planes): 8 at a time (isUtf8 says AVX2 is there), then what
          ** is left of it one at a time.  Asked at a run's start only: a
          ** shorter run, or one of 2-byte characters, or of all kinds of
          ** escapes, goes faster through the loop below, which goes on at
          ** each branch it predicts where a block's result waits for all
          ** its steps. */
          uint64_t n = idemJsonURunAvx2(s, zEnd, o);
          /* (no escOr: a run writes no ASCII, so no kept escape) */
          s += (uint32_t)n;
          o += n>>32;
          if( s>=zEnd || *s!='\\' ) break;
        }
#endif
        do{
        /* A run of escapes (as "\u00fc\u00e9" of an ASCII-only encoder)
        ** is decoded without going back to the scan. */
        int c;
        if( zEnd-s<2 ){
          return idemJsonFail(p, "unterminated string", z, zStart, zEnd);
        }
        if( idemJsonKeepEscape[s[1]] ){
          /* \" \\ \b \f \n \r \t: its own canonical form. */
          p->escOr |= s[1];
          memcpy(o, s, 2);
          o += 2;
          s += 2;
          continue;
        }
        switch( s[1] ){
          case '/':  c = '/';   s += 2;  break;
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
#ifdef IDEM_JSON_LE_WORDS
        if( (uint32_t)c-0x80>=0x800-0x80 && c<0x10000 ){
          /* An ASCII character's canonical text from a table (no branch
          ** on its kind), or a character of 3 bytes in UTF-8: the text,
          ** and its length in the top byte, one of the two chosen by a
          ** conditional move, not a branch (text that mixes the two, as a
          ** string of all sorts of escapes, would mispredict it). */
          uint32_t u = (uint32_t)c;
          uint64_t a = idemJsonAsciiOut[u & 0x7f];
          uint64_t t = 0x03000000008080e0ULL | u>>12 | (u<<2 & 0x3f00)
                       | (u & 0x3f)<<16;
          __asm__("" : "+r"(a));      /* loaded first: a cmov, not a branch */
          t = u<0x80 ? a : t;
          memcpy(o, &t, 8);
          p->escOr |= (unsigned char)(t>>48);   /* a kept escape written */
          o += t>>56;
        }else
#endif
        if( c<0x80 ){
          if( c<0x20 ){
            p->escOr |= 0x80;               /* a kept escape written */
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
            if( c=='"' || c=='\\' ){
              p->escOr |= (unsigned char)c;
              *o++ = '\\';
            }
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

/* A member name whose opening quote is at s and that is a few plain ASCII
** bytes (most are), or on x86-64 a few bytes of an input known to be
** valid UTF-8 (idemUtf8Valid(): "café", "ユーザー"), with no escape: such
** a name, quotes included, fits in the 16 bytes (x86-64, SSE2) or the
** word after its opening quote, is its own canonical text, and its sort
** key is its first 8 bytes (lead bytes 0xee and 0xef made 0xfe and 0xff,
** as idemJsonNameKey() does).  Copy it to o (which has room for 18 bytes)
** and set *piKey; return its length with the quotes.  Return 0 for any
** other name (idemJsonString() reads it), and always in the portable
** build. */
static IDEM_JSON_INLINE size_t idemJsonShortName(
  const unsigned char *s,
  const unsigned char *zEnd,
  unsigned char *o,
  uint64_t *piKey
#ifdef IDEM_JSON_SSE2
  , __m128i flip,             /* idemJsonSpecial16x() for this input */
  __m128i lim
#endif
){
#ifdef IDEM_JSON_SSE2
  if( zEnd-s>=17 ){
    __m128i v = _mm_loadu_si128((const __m128i*)(s+1));
    unsigned int m = idemJsonSpecial16x(v, flip, lim);
    size_t n = (size_t)__builtin_ctz(m | 0x10000);
    if( n<16 && s[1+n]=='"' ){
      uint64_t w;
      __m128i k;
      o[0] = '"';
      _mm_storeu_si128((__m128i*)(o+1), v);
      /* The name's bytes, zeros after it: no branch on its length. */
      k = _mm_and_si128(v, _mm_loadu_si128(
                               (const __m128i*)(idemJsonKeyMask + 16 - n)));
      memcpy(&w, &k, 8);
      o[1+n] = '"';
      if( w & IJ_HIGH ){
        w += idemJsonZeroBytes((w & (IJ_ONES*0xfe)) ^ (IJ_ONES*0xee)) >> 3;
      }
      *piKey = __builtin_bswap64(w);
      return n+2;
    }
  }
#elif defined(IDEM_JSON_LE_WORDS)
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
      *piKey = __builtin_bswap64(w);
      return n+2;
    }
  }
#else
  (void)s; (void)zEnd; (void)o; (void)piKey;
#endif
  return 0;
}

#ifdef IDEM_JSON_SSE2
/* One block of idemJsonKeptName(): the 32 bytes at t, stored at q, the
** block's first byte a letter if *pCarry is 1.  Returns where in the
** block the name ends at its quote, 32 if it goes on (*pCarry is then
** set for the next block), or -1 for the general scan; ors into *pOther
** the places of its letters other than '\\'. */
static IDEM_JSON_INLINE int idemJsonKeptBlock(
  const unsigned char *t,
  unsigned char *q,
  uint64_t *pCarry,
  uint64_t *pOther,
  __m128i flip,               /* idemJsonSpecial16x() for this input */
  __m128i lim
){
  __m128i v0, v1, x0, x1;
  uint64_t sp, bs, qt, first, even, start, escd, below, m, lt;
  uint64_t carry = *pCarry;
  int e;
  v0 = _mm_loadu_si128((const __m128i*)t);
  v1 = _mm_loadu_si128((const __m128i*)(t+16));
  _mm_storeu_si128((__m128i*)q, v0);
  _mm_storeu_si128((__m128i*)(q+16), v1);
  /* '"', '\\', and the bytes the general scan must see (a control
  ** character; above 0x7f if the input is not known valid UTF-8: the
  ** signed test of idemJsonSpecial16x()) */
  x0 = _mm_cmpeq_epi8(v0, _mm_set1_epi8('"'));
  x1 = _mm_cmpeq_epi8(v1, _mm_set1_epi8('"'));
  qt = (uint64_t)_mm_movemask_epi8(x0)
     | (uint64_t)_mm_movemask_epi8(x1)<<16;
  x0 = _mm_cmpeq_epi8(v0, _mm_set1_epi8('\\'));
  x1 = _mm_cmpeq_epi8(v1, _mm_set1_epi8('\\'));
  bs = (uint64_t)_mm_movemask_epi8(x0)
     | (uint64_t)_mm_movemask_epi8(x1)<<16;
  x0 = _mm_cmplt_epi8(_mm_xor_si128(v0, flip), lim);
  x1 = _mm_cmplt_epi8(_mm_xor_si128(v1, flip), lim);
  sp = (uint64_t)_mm_movemask_epi8(x0)
     | (uint64_t)_mm_movemask_epi8(x1)<<16;
  sp |= qt | bs;
  /* The backslashes that start an escape (start) and the bytes escaped
  ** (escd; bit 32: the next block's first byte).  A backslash escaped
  ** by the last block's starts nothing.  The runs that start at an even
  ** place are those that adding their first bits clears (the add
  ** carries through a run); the others start at an odd one. */
  bs &= ~carry;
  start = bs;
  if( bs & (bs<<1) ){
    first = bs & ~(bs<<1);
    even = bs & ~(bs + (first & 0x55555555u));
    start = (even & 0x55555555u) | (bs & ~even & 0xaaaaaaaau);
  }
  escd = (start<<1) | carry;
  /* The name ends at its first special byte neither an escape nor in
  ** one: its closing quote, or a byte for the general scan. */
  m = sp & ~(start | escd);
  e = __builtin_ctzll(m | ((uint64_t)1<<32));
  below = ((uint64_t)1<<e) - 1;
  /* The letters other than '"' and '\\', each looked up. */
  lt = escd & below & ~bs;
  *pOther |= lt;
  lt &= ~qt;
  while( lt ){
    if( idemJsonKeepEscape[t[__builtin_ctzll(lt)]]==0 ) return -1;
    lt &= lt-1;
  }
  if( e<32 ){
    if( t[e]!='"' ) return -1;
    return e;
  }
  *pCarry = escd>>32;
  return 32;
}

/* The end of idemJsonKeptName(): the name at s, whose copy at o ends at
** its quote n bytes after s+1, its first escape at k and its letters
** other than '\\' in other.  Sets its key and its flags; returns its
** length. */
static IDEM_JSON_INLINE size_t idemJsonKeptEnd(
  const unsigned char *s,
  unsigned char *o,
  uint64_t *piKey,
  unsigned char *pEsc,
  int k,
  sqlite3_int64 n,
  uint64_t other
){
  uint64_t w;
  o[0] = '"';
  /* The key of idemJsonNameKey(), from the first escape, at k: the bytes
  ** before it, then its value (a kept escape's value is its letter's
  ** entry in the table), then 0; 8 plain bytes if it is at 8 or later
  ** (idemJsonNameKey() looked for it again).  The name's bytes 0..8 are
  ** readable (33 bytes were). */
  memcpy(&w, s+1, 8);
  if( k<8 ){
    w &= ((uint64_t)1 << (8*k)) - 1;
    w |= (uint64_t)idemJsonKeepEscape[s[2+k]] << (8*k);
  }
  if( w & IJ_HIGH ){
    w += idemJsonZeroBytes((w & (IJ_ONES*0xfe)) ^ (IJ_ONES*0xee)) >> 3;
  }
  *piKey = __builtin_bswap64(w);
  /* 0x5c: the name holds an escape (the one at k), so its flag is set
  ** whatever the escape; 0x80 if some letter is not '\\'. */
  *pEsc |= 0x5c | (other ? 0x80 : 0);
  return (size_t)n+2;
}

/* idemJsonKeptName() for a name that goes on past its first block: the
** blocks from the second on.  What the first block left is in kState:
** bits 0..7 k, bit 8 the carry into the second block, bit 9 set if the
** first block had a letter other than '\\'.  Out of line, and called
** last (a jump, its six arguments in registers): a name of one block
** (most, up to 31 bytes) pays for no loop's registers. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static size_t idemJsonKeptMore(
  const unsigned char *s,
  const unsigned char *zEnd,
  unsigned char *o,
  uint64_t *piKey,
  unsigned char *pEsc,
  int kState,
  __m128i flip,
  __m128i lim
){
  const unsigned char *t = s+33;
  uint64_t carry = (kState>>8) & 1;
  uint64_t other = (kState>>9) & 1;
  int e;
  for(;;){
    if( zEnd-t<33 ) return 0;       /* t[32], a letter, may be read */
    e = idemJsonKeptBlock(t, o + (t-s), &carry, &other, flip, lim);
    if( e<32 ) break;
    t += 32;
  }
  if( e<0 ) return 0;
  return idemJsonKeptEnd(s, o, piKey, pEsc, kState & 0xff, t + e - (s+1),
                         other);
}

/* A member name whose opening quote is at s and whose first escape is one
** that canonical text keeps, as are all its escapes (\" \\ \b \f \n \r
** \t: SQL-quoted names, Windows paths, "key\tN"): its text is its own
** canonical text.  Copy it to o 32 bytes at a time (the invariant of
** idemJsonCanonical() gives the room: each block is stored no further on
** than it was read), set its sort key as idemJsonNameKey() sets it and
** or into *pEsc the flags of IdemJsonFrame.nameEsc (0x5c: it holds a \\;
** 0x80: some other escape); return its length, quotes included.  Return
** 0 for any other name (idemJsonString() reads it, and reports what is
** wrong): a \u or \/ escape or a bad one, a control character, a byte
** above 0x7f in an input not known valid UTF-8, a name that ends within
** 33 bytes of the input's end.  The escapes are found from the masks of
** 32 bytes' backslashes at once, not one at a time from the bytes (the
** general scan's ~23 instructions an escape): in a run of backslashes an
** escape starts at each place of the parity of the run's first one.  The
** letters are looked up one by one only if neither '"' nor '\\'.  A name
** of one block (up to 31 bytes: most) is read here, with no loop: the
** blocks after the first are idemJsonKeptMore()'s, out of line (the
** loop's registers cost every name ~30 instructions when it was here). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static size_t idemJsonKeptName(
  const unsigned char *s,
  const unsigned char *zEnd,
  unsigned char *o,
  uint64_t *piKey,
  unsigned char *pEsc,
  __m128i flip,               /* idemJsonSpecial16x() for this input */
  __m128i lim
){
  uint64_t carry = 0;         /* 1: the block's first byte is a letter */
  uint64_t other = 0;         /* its letters other than '\\' */
  int e, k;
  if( zEnd-s<34 ) return 0;         /* s[33], a letter, may be read */
  e = idemJsonKeptBlock(s+1, o+1, &carry, &other, flip, lim);
  /* k: the first escape, the first backslash of the first 16 bytes
  ** (where idemJsonEscName() saw it; found again here, not passed: an
  ** argument cost the scan's loop a register, 3 instructions a name of
  ** every kind, for 4 here) */
  k = __builtin_ctz((unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(
          _mm_loadu_si128((const __m128i*)(s+1)), _mm_set1_epi8('\\'))));
  if( e==32 ){
    return idemJsonKeptMore(s, zEnd, o, piKey, pEsc,
                            k | (int)carry<<8 | (other ? 1 : 0)<<9, flip, lim);
  }
  if( e<0 ) return 0;
  return idemJsonKeptEnd(s, o, piKey, pEsc, k, e, other);
}
#endif

#ifdef IDEM_JSON_SSE2
/* Escapes that idemJsonEscName() decodes at most. */
#define IJ_ESCNAME_MAX 2

/* A member name whose opening quote is at s that is blocks of 16 plain
** bytes and up to IJ_ESCNAME_MAX \u escapes, each of a character from
** U+0020 to U+FFFF that is no surrogate, '"' or '\\' ("caf\u00e9", as an
** encoder that writes ASCII only writes "café"; "a\u002db", "\u0024ref",
** "\u003cdiv\u003e" as one that escapes '-', '$' or '<' writes them;
** "description12345\u00e9", "Gr\u00f6\u00dfe"), or none (a plain name of
** 16 bytes or more: "spec.template.spec.containers", UUIDs, paths): its
** canonical text (each character raw, in UTF-8) is written to o (the
** invariant of idemJsonCanonical() gives the room: each block is stored
** whole, no further on than it was read), and its sort key set as
** idemJsonShortName() sets it.  Returns the input's length, quotes
** included, and sets *pnOut to the output's; returns 0 for any other
** name (idemJsonString() reads it, and reports what is wrong), at once
** for one whose first 16 bytes hold three backslashes or more (a run of
** escapes, as names of \u escapes only, is faster there), before a
** third escape is decoded, and within 22 bytes of the input's end (a
** block and an escape).  A name whose first escape, in its first 16
** bytes, is one that canonical text keeps goes to idemJsonKeptName().  (Until names16 a name whose first 16 bytes
** held no escape went the long way at once: idemJsonString() then
** idemJsonNameKey(), some 140 instructions a name of 40 bytes where the
** blocks here take about 40.) */
static IDEM_JSON_INLINE size_t idemJsonEscName(
  const unsigned char *s,
  const unsigned char *zEnd,
  unsigned char *o,
  size_t *pnOut,
  uint64_t *piKey,
  unsigned char *pEsc,        /* idemJsonKeptName()'s flags */
  __m128i flip,               /* idemJsonSpecial16x() for this input */
  __m128i lim
){
  const unsigned char *t = s+1;
  unsigned char *q = o+1;
  __m128i v;
  size_t k, n, nOut;
  uint64_t w;
  int c;
  int nEsc = 0;
  /* each block read ends at most 16 + 6 bytes after the last one began:
  ** 22 bytes from each block's start are readable */
  if( zEnd-s<1+22 ) return 0;
  v = _mm_loadu_si128((const __m128i*)t);
  k = (size_t)__builtin_ctz(idemJsonSpecial16x(v, flip, lim) | 0x10000);
  if( k<16 ){
    if( t[k]!='\\' ) return 0;
    if( t[k+1]!='u' ){
      /* A kept escape first: idemJsonKeptName(), out of line (inlined, its
      ** registers cost every name of the scan ~0.01x).  A \/ (PHP's paths)
      ** or a bad one: the general scan. */
      if( idemJsonKeepEscape[t[k+1]]==0 ) return 0;
      n = idemJsonKeptName(s, zEnd, o, piKey, pEsc, flip, lim);
      *pnOut = n;
      return n;
    }
  }
  {
    /* three escapes or more in the first block: a run of them */
    unsigned int mb = (unsigned int)_mm_movemask_epi8(
                               _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
    mb &= mb-1;
    if( mb & (mb-1) ) return 0;
  }
  for(;;){
    _mm_storeu_si128((__m128i*)q, v);
    if( k<16 && t[k]=='"' ) break;
    if( k<16 ){
      if( ++nEsc>IJ_ESCNAME_MAX ) return 0;
      if( t[k]!='\\' || t[k+1]!='u' ) return 0;
      c = idemJsonHex4(t+k+2);        /* -1 if not 4 hex digits */
      /* (a control character, '"' and '\\' keep an escape; -1: no hex;
      ** each test on the branch of its range) */
      q += k;
      if( c<0x80 ){
        if( c<0x20 || c=='"' || c=='\\' ) return 0;
        q[0] = (unsigned char)c;
        q += 1;
      }else if( c<0x800 ){
        q[0] = (unsigned char)(0xc0 | (c>>6));
        q[1] = (unsigned char)(0x80 | (c & 0x3f));
        q += 2;
      }else{
        if( c>=0xd800 && c<=0xdfff ) return 0;
        q[0] = (unsigned char)(0xe0 | (c>>12));
        q[1] = (unsigned char)(0x80 | ((c>>6) & 0x3f));
        q[2] = (unsigned char)(0x80 | (c & 0x3f));
        q += 3;
      }
      t += k+6;
    }else{
      t += 16;
      q += 16;
    }
    if( zEnd-t<22 ) return 0;
    v = _mm_loadu_si128((const __m128i*)t);
    k = (size_t)__builtin_ctz(idemJsonSpecial16x(v, flip, lim) | 0x10000);
  }
  o[0] = '"';
  nOut = (size_t)(q + k - (o+1));
  o[1+nOut] = '"';
  memcpy(&w, o+1, 8);
  if( nOut<8 ) w &= ((uint64_t)1 << (8*nOut)) - 1;
  if( w & IJ_HIGH ){
    w += idemJsonZeroBytes((w & (IJ_ONES*0xfe)) ^ (IJ_ONES*0xee)) >> 3;
  }
  *piKey = __builtin_bswap64(w);
  *pnOut = nOut + 2;
  return (size_t)(t + k + 1 - s);
}
#endif

#ifdef IDEM_JSON_SSE2
/* The mask of the digits among the 64 bytes at s (bit i: s[i] is a
** digit), m being that of the first 32, as idemJsonNumber() made it; the
** caller has seen that the input has the 64 bytes. */
static IDEM_JSON_INLINE uint64_t idemJsonDigits64(const unsigned char *s,
                                                  uint32_t m){
  const __m128i c0 = _mm_set1_epi8('0'), c9 = _mm_set1_epi8(9);
  __m128i a = _mm_sub_epi8(_mm_loadu_si128((const __m128i*)(s+32)), c0);
  __m128i b = _mm_sub_epi8(_mm_loadu_si128((const __m128i*)(s+48)), c0);
  return (uint64_t)((uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(a, c9), a))
      | (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(b, c9), b))<<16)<<32
      | m;
}

/* idemJsonLongNumber() for a number whose digits end at s[iExp], an 'e'
** or 'E', within the 64 bytes whose digits x masks ("0.000...000518e-334",
** the zeros taking it past 32): the end of its exponent, as the
** byte-by-byte scan would find it, plus 256 times the offset of its '.'
** (iDot) and 65536 times iExp; 0 if the exponent has no digit or does not
** end within the 64 bytes.  Not inlined: the decimals with no exponent
** paid for its registers (40-digit decimals 6 instructions a number). */
__attribute__((noinline)) static int idemJsonLongNumberExp(
  const unsigned char *s,
  uint64_t x,
  uint32_t iExp,
  uint32_t iDot
){
  uint32_t i = iExp + 1 + (s[iExp+1]=='+' || s[iExp+1]=='-'), j;
  if( i>=64 || ((x>>i) & 1)==0 ) return 0;
  if( (x>>i)==~(uint64_t)0>>i ) return 0;
  j = i + (uint32_t)__builtin_ctzll(~(x>>i));
  if( j>=64 ) return 0;
  return (int)(j | iDot<<8 | iExp<<16);
}

/* An integer, or a decimal with no exponent, at s whose digits run to the
** 32nd byte (a decimal of 40 digits, say), m being the mask of the digits
** among the first 32 (bit i: s[i] is a digit), as idemJsonNumber() made
** it: its length n (below 64) from the mask of 64 bytes, if the input has
** them, plus 256 times the offset of its '.' if it has one, plus 65536
** times that of its 'e' or 'E' if an exponent follows its digits within
** the 64 bytes (a decimal 0.000ddde-3NN whose zeros take it past 32); or
** 0 if it is anything else (byte by byte then).  Inlined into idemJsonLongDecimal()
** only: idemJsonNumber() is part of the canonicalizer's main loop, whose
** registers it would take. */
static IDEM_JSON_INLINE int idemJsonLongNumber(
  const unsigned char *s,
  const unsigned char *zEnd,
  uint32_t m
){
  uint64_t x;
  uint32_t i, j, iDot = 0;
  if( zEnd-s<=64 ) return 0;
  x = idemJsonDigits64(s, m);
  i = *s=='-';
  if( ((x>>i) & 1)==0 ) return 0;           /* no digit */
  if( s[i]=='0' && s[i+1]!='.' ) return 0;  /* a leading zero */
  if( (x>>i)==~(uint64_t)0>>i ) return 0;    /* 64 digits (no ctz(0)) */
  j = i + (uint32_t)__builtin_ctzll(~(x>>i));
  if( s[j]=='.' ){
    iDot = j;
    i = j+1;
    if( i>=64 || ((x>>i) & 1)==0 ) return 0;
    if( (x>>i)==~(uint64_t)0>>i ) return 0;
    j = i + (uint32_t)__builtin_ctzll(~(x>>i));
  }
  if( j>=64 ) return 0;
  if( (s[j] | 0x20)=='e' ) return idemJsonLongNumberExp(s, x, j, iDot);
  return (int)(j | iDot<<8);
}

/* What idemJsonLongDecimal() did: in two registers, so that the caller's
** scan goes on from nScan while the number's text is still being made
** (its length, nOut, is not on the way to the next byte read). */
typedef struct IdemJsonLong IdemJsonLong;
struct IdemJsonLong {
  sqlite3_int64 nScan;      /* what idemJsonLongNumber() returned */
  sqlite3_int64 nOut;       /* bytes written at o, or -1 if none */
};

/* What idemJsonLongDecimal() does for a decimal whose mantissa of 30
** digits or more, the first not 0, ends at s[k] with an exponent, its '.'
** s[j] (Python's Decimal(x) of a double below 1e-6: "3.2383...E-17",
** ~90 digits): the exponent read here (a sign or none, 1 to 4 digits),
** then the decimal's product with it (idemNumberLongDecimalExp()), its
** text written at o, the number scanned once.  Anything else (more
** digits, the input ending within 6 bytes of the 'e', a value beyond the
** range) returns nScan 0 and no text: the caller's byte-by-byte scan
** then, as before. */
__attribute__((noinline)) static IdemJsonLong idemJsonLongDecimalExp(
  IdemJson *p,
  const unsigned char *s,
  const unsigned char *zEnd,
  uint32_t j,
  uint32_t k,
  unsigned char *o
){
  IdemJsonLong r;
  uint32_t iExp = k, d;
  int x10 = 0, eNeg, nExp = 0, n;
  r.nScan = 0;
  r.nOut = -1;
  if( zEnd-s<=(sqlite3_int64)k+6 ) return r;
  k++;
  eNeg = s[k]=='-';
  k += (eNeg || s[k]=='+');
  while( (d = (uint32_t)s[k] - '0')<10 && nExp<4 ){
    x10 = x10*10 + (int)d;
    k++;
    nExp++;
  }
  if( nExp==0 || d<10 ) return r;
  /* The canonical text (24 bytes at most) is shorter than the literal
  ** (more than 32 bytes): the invariant of idemJsonCanonical() holds
  ** after it, as for the decimals with no exponent. */
  assert( p->zOut + p->nOutAlloc - o >= (sqlite3_int64)k + 40 );
  (void)p;
  n = idemNumberLongDecimalExp((const char*)s, (int)iExp, (int)j,
                               eNeg ? -x10 : x10, (char*)o);
  if( n<0 ) return r;
  r.nScan = k;
  r.nOut = n;
  return r;
}

/* idemJsonLongDecimal() for a decimal whose digits after its '.' (s[j])
** run past the first 64 bytes (Python's Decimal(x) of a double: up to
** ~110 bytes), the first digit not 0: on from there 8 at a time, not
** from the start again (byte by byte, as before); then, if an exponent
** follows, idemJsonLongDecimalExp(), else the long decimal's product.  Up
** to 240 bytes (nScan's low byte) and with input after them; anything
** else (or a value beyond the range with an exponent) returns nScan 0, the
** caller's byte-by-byte scan.  Not inlined: its registers cost the
** decimals of the 64 bytes 15 instructions a number there. */
__attribute__((noinline)) static IdemJsonLong idemJsonLongDecimalOn(
  IdemJson *p,
  const unsigned char *s,
  const unsigned char *zEnd,
  uint32_t j,
  unsigned char *o
){
  IdemJsonLong r;
  const unsigned char *zE = idemJsonDigits(s+64, zEnd);
  uint32_t k = (uint32_t)(zE - s);
  int n;
  r.nScan = 0;
  r.nOut = -1;
  if( zE>=zEnd || zE-s>240 ) return r;
  if( (*zE | 0x20)=='e' ) return idemJsonLongDecimalExp(p, s, zEnd, j, k, o);
  r.nScan = k | j<<8;
  assert( p->zOut + p->nOutAlloc - o >= (sqlite3_int64)k + 40 );
  (void)p;
  n = idemNumberLongDecimal((const char*)s, (int)k, (int)j, (char*)o);
  r.nOut = n>=0 ? n : -1;
  return r;
}

/* idemJsonLongNumber(), then, for a decimal whose first digit is not 0
** (30 digits or more: never its own text), its canonical text written at
** o by the long decimal's product (idemNumberLongDecimal()), neither
** through the common path of idemNumberDecimal() nor through the tests of
** the tail of idemJsonNumber().  The text has at most 24 bytes, and the
** output room for them by the invariant of idemJsonCanonical(), which
** holds after it (30 bytes read or more).  Where the product does not
** decide, the long way from there (idemNumberLongDecimal()); where that
** overflows, nothing is written (nOut -1), and the caller goes on as for
** any other number.  Not inlined, for the registers of the main loop. */
__attribute__((noinline)) static IdemJsonLong idemJsonLongDecimal(
  IdemJson *p,
  const unsigned char *s,
  const unsigned char *zEnd,
  uint32_t m,
  unsigned char *o
){
  IdemJsonLong r;
  uint64_t x, y;
  uint32_t i = *s=='-', j, k;
  int n;
  r.nOut = -1;
  /* idemJsonLongNumber()'s scan for the shape taken here: a first digit
  ** not 0 (s[i] is a digit: the caller has seen it), a '.', digits, all
  ** within 64 bytes and no 'e'; anything else goes to it whole. */
  if( zEnd-s<=64 || s[i]=='0' ) goto other;
  x = idemJsonDigits64(s, m);
  y = ~x>>i;                        /* the bytes from s[i] not digits */
  if( y==0 ) goto other;
  j = i + (uint32_t)__builtin_ctzll(y);
  if( s[j]!='.' ) goto other;
  k = j+1;
  if( k>=64 ) goto other;
  y = ~x>>k;
  if( y & 1 ) goto other;
  if( y==0 ) return idemJsonLongDecimalOn(p, s, zEnd, j, o);
  k += (uint32_t)__builtin_ctzll(y);
  r.nScan = k | j<<8;
  if( (s[k] | 0x20)=='e' ) return idemJsonLongDecimalExp(p, s, zEnd, j, k, o);
  n = (int)k;
  /* The n+40 bytes the number code may write into: the output keeps the
  ** input left plus 40 (idemJsonCanonical()), and n is less than that
  ** input. */
  assert( p->zOut + p->nOutAlloc - o >= n + 40 );
  (void)p;
  n = idemNumberLongDecimal((const char*)s, n, (int)j, (char*)o);
  if( n>=0 ) r.nOut = n;
  return r;
other:
  r.nScan = idemJsonLongNumber(s, zEnd, m);
  return r;
}
#endif

/* Copy the number that starts at *ps to *po as canonical text, and advance
** both past it.  An integer of up to 15 digits and a plain decimal that is
** its own canonical text are copied as written; anything else is printed
** by the number code (idem_number.c): a decimal with no exponent in the
** room that the invariant of idemJsonCanonical() leaves, any other number
** after the output is grown (it may write more bytes than it reads:
** "1e20", 21 digits).  z is the start of the input (for messages). */
static IDEM_JSON_INLINE int idemJsonNumber(
  IdemJson *p,
  const unsigned char *z,
  const unsigned char **ps,
  const unsigned char *zEnd,
  unsigned char **po
){
  const unsigned char *zNum = *ps;
  const unsigned char *s = zNum;
  const unsigned char *zDigits;
  const unsigned char *zDot = 0;
  const unsigned char *zIntEnd, *zFracEnd;
  unsigned char *o = *po;
  int isInt = 1, hasExp = 0, rc;
  assert( p->zOut + p->nOutAlloc - o >= (zEnd - s) + 40 );  /* invariant */
#ifdef IDEM_JSON_SSE2
  /* A number that ends within the next 32 bytes, as nearly all do: its
  ** parts found from one mask of the digits among them (bit i: s[i] is a
  ** digit).  Anything unusual (a leading zero, a digit missing, a run of
  ** digits that reaches the 32nd byte) is left to the byte-by-byte scan
  ** below, which reports the error where it is. */
  if( zEnd-s>32 ){
    const __m128i c0 = _mm_set1_epi8('0'), c9 = _mm_set1_epi8(9);
    __m128i a = _mm_sub_epi8(_mm_loadu_si128((const __m128i*)s), c0);
    __m128i b = _mm_sub_epi8(_mm_loadu_si128((const __m128i*)(s+16)), c0);
    uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(a, c9), a))
        | (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(b, c9), b))<<16;
    uint32_t i = *s=='-';         /* i: where the part being read starts */
    uint32_t j;                   /* j: where it ends */
    if( ((m>>i) & 1)==0 ) goto slow;
    j = i + (uint32_t)__builtin_ctzll(~(uint64_t)(m>>i));  /* at most 32: never ctz(0) */
    if( s[i]=='0' ){
      if( j!=i+1 ) goto slow;                   /* leading zero */
    }else if( j>=32 ){
      goto long_number;
    }
    zDigits = s+i;
    zIntEnd = zFracEnd = s+j;
    if( s[j]=='.' ){
      i = j+1;
      if( i>=32 || ((m>>i) & 1)==0 ) goto slow;
      j = i + (uint32_t)__builtin_ctzll(~(uint64_t)(m>>i));
      if( j>=32 ) goto long_number;
      isInt = 0;
      zDot = s+i-1;
      zFracEnd = s+j;
    }
    if( (s[j] | 0x20)=='e' ){
      i = j+1 + (s[j+1]=='+' || s[j+1]=='-');
      if( i>=32 || ((m>>i) & 1)==0 ) goto slow;
      j = i + (uint32_t)__builtin_ctzll(~(uint64_t)(m>>i));
      if( j>=32 ) goto slow;
      isInt = 0;
      hasExp = 1;
    }
    s += j;
    goto scanned;
long_number:
    {
      IdemJsonLong r = idemJsonLongDecimal(p, s, zEnd, m, o);
      j = (uint32_t)r.nScan;
      if( r.nOut>=0 ){              /* a long decimal, written */
        o += r.nOut;
        s += j & 0xff;
        goto written;
      }
    }
    if( j ){
      zDigits = s + (*s=='-');
      if( j>>16 ) goto long_exp;
      zIntEnd = zFracEnd = s + (j & 0xff);
      if( j>>8 ){
        isInt = 0;
        zIntEnd = zDot = s + (j>>8);
      }
      s = zFracEnd;
      goto scanned;
    }
    if( 0 ){
long_exp:
      /* (with an exponent: its 'e' at j>>16; apart, so that the common
      ** case's code stays as it was) */
      zIntEnd = zFracEnd = s + (j>>16);
      if( (j>>8) & 0xff ){
        zIntEnd = zDot = s + ((j>>8) & 0xff);
      }
      isInt = 0;
      hasExp = 1;
      s += j & 0xff;
      goto scanned;
    }
  }
slow:
  s = zNum;
  isInt = 1;
  hasExp = 0;
  zDot = 0;
#endif
  if( *s=='-' ) s++;
  zDigits = s;
  if( !idemJsonIsDigit(s, zEnd) ) goto bad_number;
  if( *s=='0' ){
    s++;
    if( idemJsonIsDigit(s, zEnd) ){
      return idemJsonFail(p, "leading zero in number", z, zNum, zEnd);
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
#ifdef IDEM_JSON_SSE2
scanned:
#endif
  if( isInt && s-zDigits<=15 ){
    /* Below 2^53: ECMAScript prints it as written, but for -0. */
    if( s-zNum==2 && zNum[0]=='-' && zNum[1]=='0' ){
      *o++ = '0';
    }else{
      idemJsonCopyNumber(o, zNum, s, zEnd);
      o += s-zNum;
    }
  }else if( zDot && !hasExp ){
    if( s[-1]!='0'
     && IDEM_JSON_LIKELY(idemJsonPlainDecimal(zDigits, zDot, s)) ){
      /* A decimal such as 19.99 or 0.25 is printed as written. */
      idemJsonCopyNumber(o, zNum, s, zEnd);
      o += s-zNum;
    }else{
      /* A decimal with no exponent: its canonical text is never longer
      ** than it is written, so that the room its printing needs (n+40)
      ** is there by the invariant, and the invariant holds after it, with
      ** no test of the room (see idemJsonCanonical()). */
      int nNum = idemNumberDecimal((const char*)zNum, (int)(s - zNum),
                                   (int)(zDot - zNum), (char*)o);
      if( nNum<0 ){
        return idemJsonFail(p, "number overflows a double", z, zNum, zEnd);
      }
      assert( nNum<=s-zNum );
      o += nNum;
    }
  }else{
    /* Any other number may print longer ("1e20": 21 bytes): the room for
    ** the input left plus 72 first, so that the invariant holds after it
    ** (it prints at most 32 bytes more than it reads). */
    int nNum = (int)(s - zNum);
    sqlite3_int64 iOut = o - p->zOut;
    sqlite3_int64 nNeed = iOut + (zEnd - zNum) + 72;
    if( nNeed>p->nOutAlloc ){
      rc = idemJsonGrowOut(p, nNeed);
      if( rc ) return rc;
      o = p->zOut + iOut;
    }
    if( zDot ){
      nNum = idemNumberDecimalExp((const char*)zNum, nNum,
                                  (int)(zDot - zNum),
                                  (int)(zFracEnd - zNum), (char*)o);
    }else{
      nNum = idemNumberCanonical((const char*)zNum, nNum,
                                 (int)(zIntEnd - zNum),
                                 (int)(zFracEnd - zNum), (char*)o);
    }
    if( nNum<0 ){
      return idemJsonFail(p, "number overflows a double", z, zNum, zEnd);
    }
    o += nNum;
  }
#ifdef IDEM_JSON_SSE2
written:
#endif
  *ps = s;
  *po = o;
  return SQLITE_OK;
bad_number:
  return idemJsonFail(p, "invalid number", z, zNum, zEnd);
}

/* idemJsonString() on copies of *ps and *po, so that the s and o of
** idemJsonCanonical() are not address-taken: GCC then keeps them in
** registers instead of storing them at every step (230 instructions per
** bench document). */
static IDEM_JSON_INLINE int idemJsonStringCopy(
  IdemJson *p,
  const unsigned char *z,
  const unsigned char **ps,
  const unsigned char *zEnd,
  unsigned char **po
){
  const unsigned char *s = *ps;
  unsigned char *o = *po;
  int rc = idemJsonString(p, z, &s, zEnd, &o);
  *ps = s;
  *po = o;
  return rc;
}

/* Start a call: no output, no records, no error, and an output buffer
** with room for nIn bytes of input plus slack (see the invariant in
** idemJsonCanonical()).  A buffer that a big input left behind goes when a
** small one comes. */
static int idemJsonBegin(IdemJson *p, sqlite3_int64 nIn){
  sqlite3_int64 nNeed = nIn + 64;
  p->nOut = 0;
  p->nSorted = 0;
  p->nSpan = 0;
  p->nMoved = 0;
  p->iSwap = 0;
  p->zErr[0] = 0;
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
  return SQLITE_OK;
}

/* Free *pa if it holds more than IDEM_JSON_KEEP bytes. */
static void idemJsonTrim(void **pa, sqlite3_int64 *pnAlloc, size_t szElem){
  if( *pnAlloc*(sqlite3_int64)szElem>IDEM_JSON_KEEP ){
    sqlite3_free(*pa);
    *pa = 0;
    *pnAlloc = 0;
  }
}

/* End a call whose result rc is known and whose output is nOut bytes:
** write the objects that waited, terminate the text, and release the
** buffers that grew beyond IDEM_JSON_KEEP, unless the output is of more
** than IDEM_JSON_KEEP bytes and at most IDEM_JSON_HOLD (they are kept
** for the next call, whose end releases them if it is small). */
static int idemJsonEnd(IdemJson *p, int rc, sqlite3_int64 nOut){
  if( rc==SQLITE_OK && p->nSorted ) rc = idemJsonEmit(p);
  if( rc==SQLITE_OK && p->iSwap ){
    /* The top object was sorted into zTmp (idemJsonFinishObject()): its
    ** '}' after it, and the buffers trade places. */
    unsigned char *z = p->zTmp;
    sqlite3_int64 nAlloc = p->nTmpAlloc;
    assert( nOut>=p->iSwap && nOut<nAlloc );
    memcpy(z + p->iSwap, p->zOut + p->iSwap, (size_t)(nOut - p->iSwap));
    p->zTmp = p->zOut;
    p->nTmpAlloc = p->nOutAlloc;
    p->zOut = z;
    p->nOutAlloc = nAlloc;
  }
  p->iSwap = 0;
  if( rc==SQLITE_OK ){
    if( nOut>IDEM_JSON_MAX_TEXT ){
      sqlite3_snprintf(sizeof(p->zErr), p->zErr,
                       "canonical text longer than %d bytes", IDEM_JSON_MAX_TEXT);
      rc = SQLITE_TOOBIG;
    }else{
      p->nOut = nOut;
      p->zOut[nOut] = 0;
    }
  }
  if( nOut<=IDEM_JSON_KEEP || nOut>IDEM_JSON_HOLD ){
    idemJsonTrim((void**)&p->zTmp, &p->nTmpAlloc, 1);
    idemJsonTrim((void**)&p->aMember, &p->nMemberAlloc, sizeof(IdemJsonMember));
    idemJsonTrim((void**)&p->aSorted, &p->nSortedAlloc, sizeof(IdemJsonSorted));
    idemJsonTrim((void**)&p->aSpan, &p->nSpanAlloc, sizeof(IdemJsonSpan));
    idemJsonTrim((void**)&p->aMoved, &p->nMovedAlloc, sizeof(IdemJsonSpan));
  }
  return rc;
}

/* Canonicalize zIn[0..nIn), or up to its NUL if nIn<0.  See the header
** comment for the rules, the errors and the design. */
IDEM_PRIVATE int idemJsonCanonical(IdemJson *p, const char *zIn, int nIn){
  const unsigned char *z = (const unsigned char*)zIn;
  const unsigned char *zEnd;
  const unsigned char *s;
  unsigned char *o;
  sqlite3_int64 nMember = 0;   /* Records in use in p->aMember */
  IdemJsonFrame *pTop;         /* Innermost open container, or aFrame[0] */
  int rc;
  unsigned char c;             /* First byte of a value */
#ifdef IDEM_JSON_SSE2
  __m128i flip, lim;           /* idemJsonSpecial16x() for this input */
#endif

  zEnd = z + (nIn<0 ? strlen(zIn) : (size_t)nIn);

  rc = idemJsonBegin(p, zEnd - z);
  if( rc ) return rc;
  o = p->zOut;
  p->isUtf8 = idemUtf8Valid(z, zEnd - z);
#ifdef IDEM_JSON_SSE2
  flip = idemJsonScanFlip(p);
  lim = idemJsonScanLim(p);
#endif

  /* Invariant: the room left at o is at least the input left at s plus
  ** 40 (idemJsonBegin() gives 64).  Everything but a number writes no
  ** more bytes than it reads, and so does a decimal with no exponent: the
  ** shortest digits of its double are never more than its own significant
  ** digits (they read back as that double too), its integer part never
  ** longer (one digit more only where a fraction rounds up), its leading
  ** zeros after the '.' never more, and d.ddde+NN or d.ddde-NN (from 22
  ** integer digits, or 6 zeros after the '.') never longer either.  So
  ** such a decimal has the room its printing needs (its length plus 40:
  ** idem_number.c) with no test of it, the common case of the number
  ** code; any other number that may print longer makes room first
  ** (idemJsonNumber()). */
  s = idemJsonSkipWs(z, zEnd);
  if( s>=zEnd ){
    sqlite3_snprintf(sizeof(p->zErr), p->zErr, "empty input");
    rc = SQLITE_ERROR;
    goto done;
  }
  /* The frame of the innermost open container is a pointer, not a depth
  ** and a flag: fewer registers in the loop.  aFrame[0] stands for "no
  ** container", an array that the value is not in. */
  pTop = p->aFrame;
  pTop->isObject = 0;
  pTop->isArray = 0;
  for(;;){
    /* s is at the start of a value, or of a member if in an object. */
    if( pTop->isObject ){
      IdemJsonFrame *pF;
      IdemJsonMember *pM;
      size_t nName;
#ifdef IDEM_JSON_SSE2
      size_t nOut;            /* a name's output length (idemJsonEscName()) */
#endif
    member:
      pF = pTop;
      if( nMember>=p->nMemberAlloc ){
        rc = idemJsonGrowMembers(p, nMember+1);
        if( rc ) goto done;
      }
      pM = &p->aMember[nMember++];
      pM->iName = (uint32_t)(o - p->zOut);
      pM->iIn = (uint32_t)(s - z);
#ifdef IDEM_JSON_SSE2
      nName = idemJsonShortName(s, zEnd, o, &pM->iKey, flip, lim);
#else
      nName = idemJsonShortName(s, zEnd, o, &pM->iKey);
#endif
      if( IDEM_JSON_LIKELY(nName) ){
        o += nName;
        s += nName;
        pM->iNameEnd = (uint32_t)(o - p->zOut);
#ifdef IDEM_JSON_SSE2
      }else if( (nName = idemJsonEscName(s, zEnd, o, &nOut, &pM->iKey,
                                         &pF->nameEsc, flip, lim))!=0 ){
        o += nOut;
        s += nName;
        pM->iNameEnd = (uint32_t)(o - p->zOut);
#endif
      }else{
        p->escOr = 0;
        rc = idemJsonStringCopy(p, z, &s, zEnd, &o);
        if( rc ) goto done;
        pF->nameEsc |= p->escOr;
        pM->iNameEnd = (uint32_t)(o - p->zOut);
        pM->iKey = idemJsonNameKey(p->zOut + pM->iName + 1,
                                   pM->iNameEnd - pM->iName - 2);
      }
      if( !pF->needSort && nMember-1>pF->iMember
       && idemJsonNameCmp(p->zOut, pM-1, pM, 0)>=0 ){
        pF->needSort = 1;
      }
      if( s>=zEnd || *s!=':' ){      /* whitespace before ':' is rare */
        s = idemJsonSkipWs(s, zEnd);
        if( s>=zEnd || *s!=':' ){
          rc = idemJsonFail(p, "expected ':'", z, s, zEnd);
          goto done;
        }
      }
      *o++ = ':';
      /* One space (Python's ": ") is skipped here, other whitespace by the
      ** dispatch below. */
      s++;
      if( s<zEnd && *s==' ' ) s++;
    }

    /* The value: a string (the most common) tested first, the rest by the
    ** switch (one jump table from whitespace to the braces). */
  value:
    c = s<zEnd ? *s : 0;
    if( c=='"' ){
#ifdef IDEM_JSON_SSE2
      /* A string of at most 15 plain bytes (most values): copied here. */
      __m128i v;
      unsigned int m = 0;
      int n;
      if( zEnd-s>=17 ){
        v = _mm_loadu_si128((const __m128i*)(s+1));
        m = idemJsonSpecial16x(v, flip, lim);
      }
      if( m && s[1+(n = __builtin_ctz(m))]=='"' ){
        o[0] = '"';
        _mm_storeu_si128((__m128i*)(o+1), v);
        o[1+n] = '"';
        o += n+2;
        s += n+2;
      }else
#endif
      {
        rc = idemJsonStringCopy(p, z, &s, zEnd, &o);
        if( rc ) goto done;
      }
    }else switch( c ){
      case '-': case '0': case '1': case '2': case '3': case '4':
      case '5': case '6': case '7': case '8': case '9':
      number:
        rc = idemJsonNumber(p, z, &s, zEnd, &o);
        if( rc ) goto done;
        /* In an array, a ',' (and one space: Python's ", ") then another
        ** number: straight to it, not through the end of the value and the
        ** dispatch.  Anything else after the ',' goes the usual way, from
        ** the ',' (its messages say where it is).  The space is a branch,
        ** not a count added to s: the next number's loads would wait for
        ** the byte (integers 1.08x the time, 29 instructions fewer). */
        if( pTop->isArray && zEnd-s>3 && s[0]==',' ){
          if( (unsigned)(s[1]-'0')<10 || s[1]=='-' ){
            *o++ = ',';
            s += 1;
            goto number;
          }
          if( s[1]==' ' && ((unsigned)(s[2]-'0')<10 || s[2]=='-') ){
            *o++ = ',';
            s += 2;
            goto number;
          }
          goto comma;
        }
        break;
      case '{':
      case '[':
        if( pTop>=&p->aFrame[IDEM_JSON_MAX_DEPTH] ){
          char zWhat[40];
          sqlite3_snprintf(sizeof(zWhat), zWhat, "nesting deeper than %d",
                           IDEM_JSON_MAX_DEPTH);
          rc = idemJsonFail(p, zWhat, z, s, zEnd);
          goto done;
        }
        pTop++;
        pTop->needSort = 0;
        pTop->nameEsc = 0;
        pTop->iMember = (uint32_t)nMember;
        pTop->isArray = c=='[';
        *o++ = c;
        s = idemJsonSkipWs(s+1, zEnd);
        if( c=='{' ){
          pTop->isObject = 1;
          if( s<zEnd && *s=='"' ) goto member;
          if( s>=zEnd || *s!='}' ){
            rc = idemJsonFail(p, "expected a member name or '}'", z, s, zEnd);
            goto done;
          }
        }else{
          pTop->isObject = 0;
          if( s>=zEnd || *s!=']' ) goto value;
        }
        *o++ = *s++;                          /* "{}" or "[]" */
        pTop--;
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
      case ' ': case '\t': case '\n': case '\r':
        s = idemJsonSkipWsRun(s, zEnd);
        goto value;
      default:
      expected_value:
        rc = idemJsonFail(p, "expected a value", z, s, zEnd);
        goto done;
    }

    /* A value is complete.  Close containers, or find the next item. */
    for(;;){
      s = idemJsonSkipWs(s, zEnd);
      if( pTop->isObject ){
        IdemJsonFrame *pF = pTop;
        if( s<zEnd && *s==',' ){
          const unsigned char *zComma = s;
          p->aMember[nMember-1].iEnd = (uint32_t)(o - p->zOut);
          *o++ = ',';
          s++;
          if( s<zEnd && *s==' ' ) s++;     /* Python's ", " */
          if( s<zEnd && *s=='"' ) goto member;
          s = idemJsonSkipWs(s, zEnd);
          if( s<zEnd && *s=='"' ) goto member;
          if( s<zEnd && *s=='}' ){
            rc = idemJsonFail(p, "trailing comma", z, zComma, zEnd);
          }else{
            rc = idemJsonFail(p, "expected a member name", z, s, zEnd);
          }
          goto done;
        }
        if( s>=zEnd || *s!='}' ){
          rc = idemJsonFail(p, "expected ',' or '}'", z, s, zEnd);
          goto done;
        }
        if( pF->needSort ){
          /* The last member's end, needed only here, is set only here. */
          IdemJsonMember *a = p->aMember + pF->iMember;
          int nObj = (int)(nMember - pF->iMember);
          a[nObj-1].iEnd = (uint32_t)(o - p->zOut);
          rc = idemJsonFinishObject(p, a, nObj, o - p->zOut, pF->nameEsc);
          if( rc ) goto done;
        }
        nMember = pF->iMember;
      }else if( pTop==p->aFrame ){
        if( s<zEnd ){
          rc = idemJsonFail(p, "unexpected text after the value", z, s, zEnd);
          goto done;
        }
        rc = SQLITE_OK;
        goto done;
      }else{
        if( s<zEnd && *s==',' ){
          const unsigned char *zComma;
        comma:
          zComma = s;
          *o++ = ',';
          s = idemJsonSkipWs(s+1, zEnd);
          if( s<zEnd && *s==']' ){
            rc = idemJsonFail(p, "trailing comma", z, zComma, zEnd);
            goto done;
          }
          goto value;
        }
        if( s>=zEnd || *s!=']' ){
          rc = idemJsonFail(p, "expected ',' or ']'", z, s, zEnd);
          goto done;
        }
      }
      *o++ = *s++;          /* the '}' or ']' */
      pTop--;
    }
  }

done:
  return idemJsonEnd(p, rc, o - p->zOut);
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
    sqlite3_free(p->aSorted);
    sqlite3_free(p->aSpan);
    sqlite3_free(p->aEmit);
    sqlite3_free(p->aMoved);
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
** Append z[0..n) to s as a JSON string, escaped as canonical text escapes
** it (RFC 8785): '"' and '\' with a backslash, the control characters as
** \b \t \n \f \r or \u00xx in lowercase hex, every other byte as it is
** (z is not checked to be UTF-8).  The writer of every JSON string idem
** makes from SQL text (the reply of a duplicate, idem_outcome.c).
*/
IDEM_PRIVATE void idemJsonAppendString(sqlite3_str *s, const char *z,
                                       sqlite3_int64 n){
  sqlite3_int64 i, iStart = 0;
  sqlite3_str_appendchar(s, 1, '"');
  for(i=0; i<n; i++){
    unsigned char c = (unsigned char)z[i];
    if( c<0x20 || c=='"' || c=='\\' ){
      char zEsc[6] = { '\\', 0, '0', '0', 0, 0 };
      int nEsc = 2;
      sqlite3_str_append(s, z+iStart, (int)(i-iStart));
      switch( c ){
        case '"':  zEsc[1] = '"'; break;
        case '\\': zEsc[1] = '\\'; break;
        case '\b': zEsc[1] = 'b'; break;
        case '\t': zEsc[1] = 't'; break;
        case '\n': zEsc[1] = 'n'; break;
        case '\f': zEsc[1] = 'f'; break;
        case '\r': zEsc[1] = 'r'; break;
        default:
          zEsc[1] = 'u';
          zEsc[4] = idemJsonHex[c>>4];
          zEsc[5] = idemJsonHex[c&0xf];
          nEsc = 6;
          break;
      }
      sqlite3_str_append(s, zEsc, nEsc);
      iStart = i+1;
    }
  }
  sqlite3_str_append(s, z+iStart, (int)(n-iStart));
  sqlite3_str_appendchar(s, 1, '"');
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
      idemResultError(ctx, SQLITE_ERROR, "idem_canonical(): argument is NULL;"
                                         " expected JSON text");
      return;
    case SQLITE_BLOB:
      idemResultError(ctx, SQLITE_ERROR, "idem_canonical(): argument is a"
                                         " blob; expected JSON text");
      return;
    case SQLITE_INTEGER:
    case SQLITE_FLOAT:           /* that JSON number, not SQLite's text */
      n = idemJsonNumberText(argv[0], zNum);
      if( n<0 ){
        idemResultError(ctx, SQLITE_ERROR, "idem_canonical(): argument is a"
                        " real that is not finite (Inf or -Inf)");
        return;
      }
      sqlite3_result_text(ctx, zNum, n, SQLITE_TRANSIENT);
      return;
  }
  if( sqlite3_value_type(argv[0])==SQLITE_TEXT ){
    z = idemValueUtf8(argv[0], &n);
  }else{
    z = (const char*)sqlite3_value_text(argv[0]);    /* a number */
    n = sqlite3_value_bytes(argv[0]);
  }
  if( z==0 ){
    idemResultError(ctx, SQLITE_NOMEM, 0);
    return;
  }
  p = idemJsonAcquire(&pShared);
  if( p==0 ){
    idemResultError(ctx, SQLITE_NOMEM, 0);
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
      if( p->nOut>=IDEM_JSON_GIVE ){
        /* A large text: the buffer is given to SQLite rather than copied
        ** (the next call takes a new one, as it would have for the copy) */
        sqlite3_result_text64(ctx, (const char*)p->zOut, p->nOut,
                              sqlite3_free, SQLITE_UTF8);
        p->zOut = 0;
        p->nOutAlloc = 0;
        p->nOut = 0;
      }else{
        sqlite3_result_text64(ctx, (const char*)p->zOut, p->nOut,
                              SQLITE_TRANSIENT, SQLITE_UTF8);
      }
      break;
    default:
      idemResultError(ctx, rc, "idem_canonical(): %s", idemJsonError(p));
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

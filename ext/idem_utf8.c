/* SPDX-License-Identifier: MIT */
/*
** idem_utf8.c -- UTF-8 validation of a whole input, 32 bytes at a time.
**
** Part of the idem extension: its interface is declared in idemInt.h, and
** idem.c #includes this file, so everything in it is static.
**
** INTERFACE
**
**   static int idemUtf8Valid(const unsigned char *z, size_t n);
**
**     1 if z[0..n) is known to be valid UTF-8 (RFC 3629: no overlong
**     form, no surrogate, nothing above U+10FFFF, no character cut off at
**     the end); 0 if it is not, if it is shorter than 64 bytes, or if
**     this machine has no fast check.  A 1 also says that the machine
**     has AVX2: the canonicalizer decodes runs of \u escapes with AVX2
**     (idemJsonURunAvx2()) only where this said 1, so a check without
**     AVX2 that returned 1 would have to tell it apart.
**
** The canonicalizer (idem_canonical.c) asks once per input.  When the
** answer is 1 its string scan treats every byte above 0x7f as a plain byte
** and copies runs of mixed scripts a block at a time; when it is 0 the
** scan validates each character as it copies it, as it always did, and
** reports the first bad byte where it is.  So this check only ever makes
** the canonicalizer faster: it decides no error and no output.
**
** The fast check needs AVX2 (x86-64, chosen at run time with
** __builtin_cpu_supports(), so the build runs on any x86-64).  Without it,
** and in the portable build (-DIDEM_JSON_PORTABLE) or with
** -DIDEM_NO_AVX2, idemUtf8Valid() returns 0 and costs nothing.
**
** ALGORITHM
**
** The "lookup" method of Keiser and Lemire ("Validating UTF-8 in less than
** one instruction per byte", 2021), derived here from RFC 3629 table 3-7.
** Every error in UTF-8 shows in a pair of consecutive bytes (p, c), or in
** the byte three or two before a continuation byte, or at the end:
**
**   TOO_SHORT   a lead byte (C0..FF) followed by a non-continuation
**   TOO_LONG    an ASCII byte followed by a continuation (80..BF)
**   TWO_CONTS   a continuation followed by a continuation: an error
**               unless the byte 2 before is a lead of 3 or 4 bytes
**               (E0..FF) or the byte 3 before one of 4 (F0..FF)
**   OVERLONG_2  C0 or C1 followed by a continuation
**   OVERLONG_3  E0 followed by 80..9F
**   SURROGATE   ED followed by A0..BF
**   OVERLONG_4  F0 followed by 80..8F
**   TOO_LARGE   F4..FF followed by 90..BF
**   TOO_LARGE_1000  F5..FF followed by 80..8F (shares OVERLONG_4's bit:
**               both are "80..8F after F0 or F5..FF")
**
** Each class is a bit.  Three 16-entry tables give, for the high nibble of
** p, the low nibble of p and the high nibble of c, the classes that nibble
** is compatible with; the AND of the three lookups is the set of classes
** the pair (p, c) falls in.  Every bit of it is an error but TWO_CONTS,
** which must be set exactly where the byte 2 or 3 before requires a
** continuation: so that bit is XORed with "required".  A lead byte among
** the last three bytes of the input that wants more bytes than are left
** is an error too (the input ends in the middle of a character).  A block
** of 32 ASCII bytes only checks that the block before did not end in the
** middle of a character.  test/utf8.test checks every sequence of one to
** four bytes, and every bad byte in every position of a block, against the
** canonicalizer's own byte-by-byte validation.
*/
#include "idemInt.h"

#ifdef IDEM_AVX2

/* Shorter inputs are not checked: the check would cost more than it
** saves, and the last block is read as the 32 bytes before the last 32. */
#define IDEM_UTF8_MIN  64

#define IU_TOO_SHORT   0x01
#define IU_TOO_LONG    0x02
#define IU_OVERLONG_3  0x04
#define IU_TOO_LARGE   0x08
#define IU_SURROGATE   0x10
#define IU_OVERLONG_2  0x20
#define IU_OVERLONG_4  0x40     /* and TOO_LARGE_1000 */
#define IU_TWO_CONTS   0x80
#define IU_CARRY       (IU_TOO_SHORT|IU_TOO_LONG|IU_TWO_CONTS)

/* A 16-entry table, twice (one copy per 128-bit lane of vpshufb). */
#define IU_TABLE(a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p) _mm256_setr_epi8( \
  a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p, a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p)

__attribute__((target("avx2")))
static int idemUtf8ValidAvx2(const unsigned char *z, size_t n){
  /* The classes compatible with the high nibble of the first byte p. */
  const __m256i tHi1 = IU_TABLE(
    /* 0..7: ASCII */
    IU_TOO_LONG, IU_TOO_LONG, IU_TOO_LONG, IU_TOO_LONG,
    IU_TOO_LONG, IU_TOO_LONG, IU_TOO_LONG, IU_TOO_LONG,
    /* 8..B: continuation */
    (char)IU_TWO_CONTS, (char)IU_TWO_CONTS,
    (char)IU_TWO_CONTS, (char)IU_TWO_CONTS,
    /* C: leads of 2 (C0, C1 overlong) */
    IU_TOO_SHORT|IU_OVERLONG_2,
    /* D: leads of 2 */
    IU_TOO_SHORT,
    /* E: leads of 3 */
    IU_TOO_SHORT|IU_OVERLONG_3|IU_SURROGATE,
    /* F: leads of 4, and F5..FF */
    IU_TOO_SHORT|IU_TOO_LARGE|IU_OVERLONG_4);
  /* The classes compatible with the low nibble of p. */
  const __m256i tLo1 = IU_TABLE(
    (char)(IU_CARRY|IU_OVERLONG_2|IU_OVERLONG_3|IU_OVERLONG_4),  /* C0 E0 F0 */
    (char)(IU_CARRY|IU_OVERLONG_2),                              /* C1 */
    (char)IU_CARRY, (char)IU_CARRY,
    (char)(IU_CARRY|IU_TOO_LARGE),                               /* F4 */
    (char)(IU_CARRY|IU_TOO_LARGE|IU_OVERLONG_4),                 /* F5.. */
    (char)(IU_CARRY|IU_TOO_LARGE|IU_OVERLONG_4),
    (char)(IU_CARRY|IU_TOO_LARGE|IU_OVERLONG_4),
    (char)(IU_CARRY|IU_TOO_LARGE|IU_OVERLONG_4),
    (char)(IU_CARRY|IU_TOO_LARGE|IU_OVERLONG_4),
    (char)(IU_CARRY|IU_TOO_LARGE|IU_OVERLONG_4),
    (char)(IU_CARRY|IU_TOO_LARGE|IU_OVERLONG_4),
    (char)(IU_CARRY|IU_TOO_LARGE|IU_OVERLONG_4),
    (char)(IU_CARRY|IU_TOO_LARGE|IU_OVERLONG_4|IU_SURROGATE),    /* ED, FD */
    (char)(IU_CARRY|IU_TOO_LARGE|IU_OVERLONG_4),
    (char)(IU_CARRY|IU_TOO_LARGE|IU_OVERLONG_4));
  /* The classes compatible with the high nibble of the second byte c. */
  const __m256i tHi2 = IU_TABLE(
    IU_TOO_SHORT, IU_TOO_SHORT, IU_TOO_SHORT, IU_TOO_SHORT,
    IU_TOO_SHORT, IU_TOO_SHORT, IU_TOO_SHORT, IU_TOO_SHORT,
    (char)(IU_TOO_LONG|IU_TWO_CONTS|IU_OVERLONG_2|IU_OVERLONG_3
           |IU_OVERLONG_4),                                      /* 80..8F */
    (char)(IU_TOO_LONG|IU_TWO_CONTS|IU_OVERLONG_2|IU_OVERLONG_3
           |IU_TOO_LARGE),                                       /* 90..9F */
    (char)(IU_TOO_LONG|IU_TWO_CONTS|IU_OVERLONG_2|IU_SURROGATE
           |IU_TOO_LARGE),                                       /* A0..AF */
    (char)(IU_TOO_LONG|IU_TWO_CONTS|IU_OVERLONG_2|IU_SURROGATE
           |IU_TOO_LARGE),                                       /* B0..BF */
    IU_TOO_SHORT, IU_TOO_SHORT, IU_TOO_SHORT, IU_TOO_SHORT);
  /* ...and of these, a byte that is not zero where the last 3 bytes of a
  ** block start a character that the block does not finish. */
  const __m256i last = _mm256_setr_epi8(
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    (char)(0xf0-1), (char)(0xe0-1), (char)(0xc0-1));
  __m256i nib = _mm256_set1_epi8(0x0f);
  __m256i x80 = _mm256_set1_epi8((char)0x80);
  /* Saturating subtraction of these leaves a byte >= 0x80 exactly where
  ** it is a lead of 3 or more (E0..), resp. of 4 (F0..). */
  __m256i lead3 = _mm256_set1_epi8((char)(0xe0-0x80));
  __m256i lead4 = _mm256_set1_epi8((char)(0xf0-0x80));
  __m256i prev = _mm256_setzero_si256();     /* the block before */
  __m256i err = _mm256_setzero_si256();
  __m256i v = prev;
  size_t i = 0;
  assert( n>=IDEM_UTF8_MIN );
  /* Keep the constants in registers: GCC would rebuild each one from a
  ** general register (3 instructions) in every block otherwise. */
  __asm__("" : "+x"(nib), "+x"(x80), "+x"(lead3), "+x"(lead4));
  for(;;){
    __m256i s, p1, p2, p3, sc, must;
    if( i+32<=n ){
      v = _mm256_loadu_si256((const __m256i*)(const void*)(z+i));
    }else if( i<n ){
      /* The last bytes: the 32 that end the input, after the 32 before
      ** them (n >= 64).  Bytes looked at twice, with the bytes before
      ** them as context both times, give the same answer twice. */
      prev = _mm256_loadu_si256((const __m256i*)(const void*)(z+n-64));
      v = _mm256_loadu_si256((const __m256i*)(const void*)(z+n-32));
    }else{
      break;
    }
    if( __builtin_expect(_mm256_movemask_epi8(v)==0, 0) ){
      /* ASCII: the block before must not end in the middle of a
      ** character.  (After a block of another kind, the pairs below see
      ** that.) */
      err = _mm256_or_si256(err, _mm256_subs_epu8(prev, last));
    }else{
      /* p1, p2, p3: the byte 1, 2 and 3 before each byte of v. */
      s = _mm256_permute2x128_si256(prev, v, 0x21);
      p1 = _mm256_alignr_epi8(v, s, 15);
      p2 = _mm256_alignr_epi8(v, s, 14);
      p3 = _mm256_alignr_epi8(v, s, 13);
      sc = _mm256_and_si256(_mm256_and_si256(
             _mm256_shuffle_epi8(tHi1,
                 _mm256_and_si256(_mm256_srli_epi16(p1, 4), nib)),
             _mm256_shuffle_epi8(tLo1, _mm256_and_si256(p1, nib))),
             _mm256_shuffle_epi8(tHi2,
                 _mm256_and_si256(_mm256_srli_epi16(v, 4), nib)));
      must = _mm256_and_si256(_mm256_or_si256(_mm256_subs_epu8(p2, lead3),
                                              _mm256_subs_epu8(p3, lead4)),
                              x80);
      err = _mm256_or_si256(err, _mm256_xor_si256(must, sc));
    }
    prev = v;
    i += 32;
  }
  /* The input may end in the middle of a character. */
  err = _mm256_or_si256(err, _mm256_subs_epu8(v, last));
  return _mm256_testz_si256(err, err);
}

IDEM_PRIVATE int idemUtf8Valid(const unsigned char *z, size_t n){
  if( n<IDEM_UTF8_MIN || !idemHasAvx2() ) return 0;
  return idemUtf8ValidAvx2(z, n);
}

#else /* no AVX2 */

IDEM_PRIVATE int idemUtf8Valid(const unsigned char *z, size_t n){
  (void)z; (void)n;
  return 0;
}

#endif

/* SPDX-License-Identifier: MIT */
/*
** idem_number.c -- numbers for RFC 8785 canonical JSON.
**
** Part of the idem extension: its interface is declared in idemInt.h, and
** idem.c #includes this file, so everything in it is static.  It
** uses no libc beyond memcpy() and assert(), never allocates, and does not
** depend on the locale, the FPU rounding mode or the accuracy of the C
** library's strtod() and printf().
**
** INTERFACE
**
**   static int idemNumberCanonical(const char *z, int n,
**                                  int iInt, int iFrac, char *zOut);
**
**     z[0..n) is a number literal already validated against the RFC 8259
**     grammar  -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?  , as
**     scanned by the caller: its integer digits end at z[iInt], its
**     fraction digits (if any) at z[iFrac], and iFrac==iInt when there is
**     no fraction.  Writes its canonical text to zOut (room for n+40 bytes,
**     no NUL is written) and returns its length, or -1 if the value
**     overflows a double.
**
**   static int idemNumberDecimal(const char *z, int n, int iInt,
**                                char *zOut);
**   static int idemNumberDecimalExp(const char *z, int n,
**                                   int iInt, int iFrac, char *zOut);
**
**     The same, faster, for a literal known to be a decimal: z[iInt] is
**     its '.', and it has no exponent (the first), or one whose 'e' or
**     'E' is z[iFrac] (the second).
**
**   static int idemNumberFormat(double v, char *zOut);
**
**     ECMAScript Number::toString(v) of a finite double into zOut (room for
**     40 bytes, no NUL written); returns its length.  -0 prints "0".
**
** The canonical text of a literal is what ECMAScript String(Number(z))
** prints: the double nearest to the literal (round half to even; values
** below half the least subnormal become 0, which is not an error), then the
** shortest digit string that reads back as that double (the closest to it
** if there are several, the even one on a tie), laid out as in ECMA-262
** Number::toString: plain digits below 1e21, "0.000ddd" down to 1e-6,
** "d.ddde+NN" / "d.ddde-NN" outside that range.  One deliberate exception
** (doc/contract.md §3): an integer literal, one with neither fraction nor
** exponent, is returned exactly as written ("-0" becomes "0").  Up to 2^53
** that is what ECMAScript prints anyway; beyond 2^53 it keeps distinct
** large ids distinct.  An integer literal therefore never overflows.
**
** ALGORITHM
**
** 1. Scan.  Drop leading and trailing zeros, leaving the significant
**    digits d1d2d3... (in place, or gathered when they straddle the '.')
**    and x = 0.d1d2d3... * 10^(L+1), so that 10^L <= |x| < 10^(L+1).
**    L > 308 overflows; L < -324 means |x| < 1e-324, which rounds to 0.
**
** 2. Short literals.  With at most 15 significant digits and
**    -307 <= L <= 307 the digits are already the shortest form, and no
**    double is computed at all.  Proof: in [10^L, 10^(L+1)) distinct
**    decimals of at most 15 digits are at least 10^(L-14) apart, more than
**    4 ulps (an ulp there is below 2^-52 * 10^(L+1) = 0.23 * 10^(L-14)), so
**    no other decimal of 15 digits or fewer rounds to the same double; the
**    range keeps the double normal and finite.
**
** 3. Decimal to double, the rest.  Let w be the first 19 significant digits
**    (so w < 2^64) and x ~ w * 10^q.  Eisel and Lemire ("Number parsing at
**    a gigabyte per second", 2021): multiply w, normalized to 64 bits, by
**    the 128-bit truncation of 10^q from the table below.  The top 128 bits
**    U of that product are at most 2 units below the exact product, so U
**    decides the rounding unless its bits below the rounding bit sit within
**    2 units of the halfway point; that happens with probability ~2^-73
**    for random input, or on exact ties.  With more than 19 digits, x lies
**    in [w*10^q, (w+1)*10^q) and the result is accepted when both ends
**    round to the same double (idemNumEiselLemireSpan() decides that from
**    one product, at the code).  A subnormal result is rounded at the bit
**    where its last one is, by the same test.  A result that may overflow
**    and every undecided case go to step 4.
**
** 3b. Already the shortest.  Most long literals were written by a shortest
**    printer (JSON.stringify(), Python's repr()), so that their digits are
**    the answer of step 5: when that is certain, the literal is the output
**    (ddd.ddd, or 0.000ddd with at most 5 zeros, is ECMAScript's own
**    layout: JSON has no leading zeros, and the last digit is not 0), or
**    its digits are laid out anew (d.ddde-NN gets its exponent written
**    ECMAScript's way).  This takes literals of 16 or 17 significant
**    digits D (a shortest form has at most 17), x = D*10^q, the last
**    digit d not 0.  Let v = m*2^e be the double nearest x (step 3),
**    u = 2^e and delta = x - v, so that |delta| <= u/2.  Unless m = 2^52
**    (below a power of two the interval is narrower: not taken), every
**    decimal in [v-u/2, v+u/2] reads back as v (the ends only if m is
**    even), and none outside.  D is the answer if
**      (a) no multiple of 10^(q+1) is in the interval.  Then no decimal
**          with fewer digits is: one in [10^L, 10^(L+1)) would be such a
**          multiple, and an interval leaving that decade holds 10^L or
**          10^(L+1), multiples too.  The shortest have as many digits as D
**          and are x + j*10^q for integers j;
**      (b) |delta| < 10^q/2.  Then x is strictly the closest of those to
**          v: any other is at least 10^q - |delta| > |delta| away.
**    The multiples of 10^(q+1) next to x are x - d*10^q and
**    x + (10-d)*10^q, so with g = delta/u + 1/2 and t = 10^q/u, (a) and
**    (b) are
**      g < d*t,   (10-d)*t > 1 - g,   2g - 1 < t,   2g - 1 > -t.
**    All hold if t >= 1, as 0 < g < 1 (x is not on a halfway point: see
**    below).  Step 3's product has both.  The 64 bits of U just below
**    m's, plus 2^63 (modulo 2^64), are G with G <= g*2^64 < G + 2 (U is
**    less than 2 units short, the truncation to 64 bits less than 1
**    more).  The test takes only G other than 0 and 2^64-1, that is with
**    those 64 bits at least 2^63+1 or at most 2^63-2: then the exact bits
**    are above half or below it (no tie), the rounding is up if and only
**    if the top one is set, and step 3 agrees.  And 10^q is the table
**    entry's tHi:tLo plus less than one unit, times
**    2^(floor(log2(10^q))-127), so that t*2^64 = (tHi + a fraction) *
**    2^(lz-sh), in the terms of idemNumEiselLemire(); here lz <= sh+4.
**    In units of 2^-60, with gi = G>>4 and ti = tHi>>(sh+4-lz),
**    gi <= g*2^60 < gi+2 and ti <= t*2^60 < ti+1, so that each of
**      ti >= 2^60
**      gi+2 <= d*ti,  (10-d)*ti + gi > 2^60,
**      2*gi+4 <= 2^60 + ti,  2*gi + ti > 2^60
**    proves the inequality it stands for (the first, t >= 1, all four);
**    with ti < 2^60 none of them overflows 64 bits.  Nearly every
**    shortest literal passes: its margins are far larger than 2^-60
**    except on a tie.
**    A literal of 17 digits that fails (as "%.17g" prints most doubles)
**    may still show the answer: if 10t > 1, the interval (of width u)
**    holds at most one multiple of 10^(q+1), and if it holds one, A =
**    x - d*10^q or B = x + (10-d)*10^q, that one is the only decimal of
**    16 digits or fewer in it (a shorter one would be such a multiple),
**    so the answer.  A is strictly inside if g > d*t, surely outside if
**    g < d*t; B strictly inside if (10-d)*t + g < 1, surely outside if it
**    is > 1; and 10*ti > 2^60, gi >= d*(ti+1), gi+2 <= d*ti,
**    (10-d)*(ti+1) + gi+2 <= 2^60 and (10-d)*ti + gi > 2^60 prove them.
**    Everything else goes to step 5 with the double, but for:
**
** 3c. Many 17-digit literals with 10t < 1 (several 16-digit decimals in
**    the interval): the answer is then the 16-digit decimal closest to v,
**    A + j*10^(q+1) with A = x - d*10^q, unless a decimal of 15 digits or
**    fewer is in the interval, and then (100t > 1: at most one multiple
**    of 10^(q+2) is) that one, the literal's first 15 digits plus 0 or 1
**    at the 15th; all are decided from the same G and t (the proofs are
**    at the code).  The answer is laid out from the literal's own text
**    where it is in ECMAScript's layout (ddd.ddd, 0.000ddd, or d.ddde+NN
**    with the exponent written anew).
**
** 4. Exact fallback.  Starting from the nearly right candidate of step 3,
**    compare x with the halfway points to the neighbouring doubles in exact
**    big-integer arithmetic (Clinger's "AlgorithmR" idea): x = D*10^E and
**    a halfway point h = M*2^F are compared as D*5^E*2^E vs M*2^F, or as
**    D*2^E vs M*5^-E*2^F when E < 0.  Step to the neighbour until x lies
**    between the two halfway points, ties going to the even mantissa.
**    5^-E is made once a literal, each comparison multiplies it by M (one
**    limb) and applies the powers of two as it goes, from the top limb
**    down.  With more than 19 digits, where w*10^q and (w+1)*10^q round
**    to neighbouring doubles, x rounds to one of them, and one
**    comparison, with the halfway point between them, decides.
**
**    Digits beyond the 800th are not kept: if any of them is nonzero, a
**    single '1' is appended as the 801st digit instead.  This is exact for
**    rounding.  A halfway point h between doubles is a dyadic rational
**    with at most 768 significant decimal digits, so whenever x < 10^31*h
**    it is a multiple of 10^p, the weight of the 800th digit of x.  Let t
**    be the value of the first 800 digits, a multiple of 10^p, and
**    t' = t + 10^p/10 its value with the '1' appended.  When digits were
**    dropped, x and t' both lie strictly between t and t + 10^p, where no
**    multiple of 10^p lies, so they compare alike against h.  (When
**    x >= 10^31*h, both exceed h.)
**    This bounds the big integers: D < 10^801 and -1124 <= E <= 308, so
**    no operand exceeds about 2700 bits (D < 2^2661, M*5^-E < 2^2665,
**    D*5^E < 10^309; none is shifted in place; IDEMNUM_BIG_LIMBS below
**    has room for 3200).
**
** 5. Double to shortest digits: Schubfach (Raffaello Giulietti, "The
**    Schubfach way to render doubles", 2020).  For v = c*2^q, pick k with
**    10^k no larger than the rounding interval, so that the interval holds
**    at least one multiple of 10^k and at most one of 10^(k+1).  Compute
**    4*v/10^k and the interval ends, rounded to odd, from the same 128-bit
**    table (each entry plus one, an over-estimate); the paper proves that
**    these products decide every comparison needed exactly.  The answer is
**    the multiple of 10^(k+1) in the interval if there is one, else the
**    multiple of 10^k in the interval closest to v, the even one on a tie:
**    exactly the digits ECMA-262 asks for.  Interval ends are included
**    when c is even (round half to even reads them back as v).
**    Nearly every double takes Jeon's refinement of it instead
**    (idemNumShortestOne(), "Dragonbox", 2020): the same answer from one
**    product of the same table (the interval's right end, 10^(k+1) and
**    10^k tried by a division of its integer part, the rare ties decided
**    by the parity of a second product); Schubfach's three products
**    stay for the powers of two (an interval narrower below) and the
**    doubles below 2^-1015 (whose power of ten the table lacks).
**
** THE COMMON PATH.  idemNumberCanonical() does steps 1, 2 and 3b in one
** pass for the literals that most JSON holds: the last digit not 0 (or
** "ddd.0", Python's integral floats, taken as "ddd"), at most 16 digits
** before a '.', an exponent of at most 4 digits after its leading zeros
** (skipped 8 at a time) and -307 <= L <= 307.
** The first 16 digits are read at once (two loads one byte apart,
** merged under a mask, take the '.' out; then SSE2 on x86-64, 8 at a time
** elsewhere), the exponent's digits 4 at a time, and step 3 is written out
** for the test of step 3b.  Every literal that steps 3b and 3c do not
** take goes to step 5 from the double.  Three shapes leave the common path
** for ways of their own, from where it gives up (labels at its end, so
** that its own code is laid out as before): a decimal of 18 digits or
** more with no exponent (idemNumLong(): 19 digits read at once, one
** product of step 3 for the whole span of the digits left out,
** idemNumEiselLemireSpan(); 18 digits are all read, one exact product);
** "%.17g" of a double beyond 1e-307 or 1e307 (idemNumTiny(): 16 or 17
** digits read at once); any other literal with an exponent out of range
** (idemNumExpLiteral(): at most 19 digits, where the caller found
** them; the exponent's leading zeros 8 at a time).  Each
** goes on to step 3 with step 3b's test (idemNumEiselLemireAt(): the
** literal, when it is the answer, is copied where it is in ECMAScript's
** layout, as repr() writes the ends of the range), idemNumTiny3() also
** with the rest of 3b and with 3c where 10t < 1 < 100t (subnormals from
** 1e-309: the answer from the literal's text), then step 5, and what it
** does not take goes the long way
** (idemNumCanonicalSlow()), as does everything else.  The long way tries
** the first two at its entry too.  The parser calls one of three entry points,
** the same code compiled for one shape of literal each: a decimal with no
** exponent (idemNumberDecimal(): "%.17g" of most doubles, Python's and
** JSON.stringify()'s), a decimal with one (idemNumberDecimalExp()), and
** anything (idemNumberCanonical()); the first two hold fewer values and
** spill fewer registers.  idemNumberDecimalExp() has a fourth copy, for
** the shape "%.17g" prints large and small doubles in (one digit, a '.',
** 16 digits, the last not 0, then the exponent), with that shape's
** positions and lengths as constants.  Each entry point first sends a
** few shapes on before the common path's frame is set up (a test of the
** lengths, then a jump): an integer (idemNumberCanonical(): as written)
** and a subnormal as repr() writes it, "e-3NN" from 308 to 324 with at
** most 16 digits (idemNumSubShort(): the literal copied or step 5).  A
** subnormal as "%.17g" writes it (17 digits) takes the fourth copy to
** where its exponent is known out of range, and from there idemNumSub17()
** (then idemNumTiny3()'s step 3b and 3c): a test before the fourth copy
** cost "%.17g" doubles with exponents, the common shape, 12% of their
** time on AMD EPYC (1.53x -> 1.73x json(), the instructions the same).
** Both round at step 3 with the result's exponent known, 2^-1074.
**
** The table idemNumPow10[] holds, for -342 <= e <= 326, the 128 bits
** floor(10^e * 2^(127 - floor(log2(10^e)))), most significant word first.
** It was generated with exact integers (Python; each line then got a
** comment naming its power of ten):
**
**   for e in range(-342, 327):
**     if e >= 0: b = (10**e).bit_length(); t = 10**e << 128 >> b
**     else: d = 10**-e; t = (1 << 127 + d.bit_length()) // d
**     print("  {0x%016x,0x%016x}," % (t >> 64, t % 2**64))
**
** Step 3 needs 10^q for -342 <= q <= 308, step 5 needs 10^-k for
** -292 <= -k <= 324, and 10^(2-k) up to 10^326 (idemNumShortestOne() for
** the subnormals).  No entry has an all-ones low word, so adding 1 to it
** (step 5) never carries.
**
** The helpers below rely on ">>" of a negative int64_t being an arithmetic
** shift, as it is on every compiler SQLite supports.
*/
#include "idemInt.h"
#include <assert.h>

/* For the small helpers of the hot path (step 3b): a call would cost more
** than their bodies. */
#if defined(__GNUC__)
# define IDEMNUM_INLINE __attribute__((always_inline)) inline
#else
# define IDEMNUM_INLINE
#endif

/* A test that usually holds, for the layout of the code. */
#if defined(__GNUC__)
# define IDEMNUM_LIKELY(x) __builtin_expect((x)!=0, 1)
#else
# define IDEMNUM_LIKELY(x) (x)
#endif

/* For the ways out of the common path: see idemNumCanonical(). */
#if defined(__GNUC__)
# define IDEMNUM_NOINLINE __attribute__((noinline))
#else
# define IDEMNUM_NOINLINE
#endif

#define IDEMNUM_POW10_MIN (-342)
#define IDEMNUM_POW10_MAX 326
static const uint64_t idemNumPow10[IDEMNUM_POW10_MAX-IDEMNUM_POW10_MIN+1][2] = {
  {0xeef453d6923bd65a,0x113faa2906a13b3f}, /* 1e-342 */
  {0x9558b4661b6565f8,0x4ac7ca59a424c507}, /* 1e-341 */
  {0xbaaee17fa23ebf76,0x5d79bcf00d2df649}, /* 1e-340 */
  {0xe95a99df8ace6f53,0xf4d82c2c107973dc}, /* 1e-339 */
  {0x91d8a02bb6c10594,0x79071b9b8a4be869}, /* 1e-338 */
  {0xb64ec836a47146f9,0x9748e2826cdee284}, /* 1e-337 */
  {0xe3e27a444d8d98b7,0xfd1b1b2308169b25}, /* 1e-336 */
  {0x8e6d8c6ab0787f72,0xfe30f0f5e50e20f7}, /* 1e-335 */
  {0xb208ef855c969f4f,0xbdbd2d335e51a935}, /* 1e-334 */
  {0xde8b2b66b3bc4723,0xad2c788035e61382}, /* 1e-333 */
  {0x8b16fb203055ac76,0x4c3bcb5021afcc31}, /* 1e-332 */
  {0xaddcb9e83c6b1793,0xdf4abe242a1bbf3d}, /* 1e-331 */
  {0xd953e8624b85dd78,0xd71d6dad34a2af0d}, /* 1e-330 */
  {0x87d4713d6f33aa6b,0x8672648c40e5ad68}, /* 1e-329 */
  {0xa9c98d8ccb009506,0x680efdaf511f18c2}, /* 1e-328 */
  {0xd43bf0effdc0ba48,0x0212bd1b2566def2}, /* 1e-327 */
  {0x84a57695fe98746d,0x014bb630f7604b57}, /* 1e-326 */
  {0xa5ced43b7e3e9188,0x419ea3bd35385e2d}, /* 1e-325 */
  {0xcf42894a5dce35ea,0x52064cac828675b9}, /* 1e-324 */
  {0x818995ce7aa0e1b2,0x7343efebd1940993}, /* 1e-323 */
  {0xa1ebfb4219491a1f,0x1014ebe6c5f90bf8}, /* 1e-322 */
  {0xca66fa129f9b60a6,0xd41a26e077774ef6}, /* 1e-321 */
  {0xfd00b897478238d0,0x8920b098955522b4}, /* 1e-320 */
  {0x9e20735e8cb16382,0x55b46e5f5d5535b0}, /* 1e-319 */
  {0xc5a890362fddbc62,0xeb2189f734aa831d}, /* 1e-318 */
  {0xf712b443bbd52b7b,0xa5e9ec7501d523e4}, /* 1e-317 */
  {0x9a6bb0aa55653b2d,0x47b233c92125366e}, /* 1e-316 */
  {0xc1069cd4eabe89f8,0x999ec0bb696e840a}, /* 1e-315 */
  {0xf148440a256e2c76,0xc00670ea43ca250d}, /* 1e-314 */
  {0x96cd2a865764dbca,0x380406926a5e5728}, /* 1e-313 */
  {0xbc807527ed3e12bc,0xc605083704f5ecf2}, /* 1e-312 */
  {0xeba09271e88d976b,0xf7864a44c633682e}, /* 1e-311 */
  {0x93445b8731587ea3,0x7ab3ee6afbe0211d}, /* 1e-310 */
  {0xb8157268fdae9e4c,0x5960ea05bad82964}, /* 1e-309 */
  {0xe61acf033d1a45df,0x6fb92487298e33bd}, /* 1e-308 */
  {0x8fd0c16206306bab,0xa5d3b6d479f8e056}, /* 1e-307 */
  {0xb3c4f1ba87bc8696,0x8f48a4899877186c}, /* 1e-306 */
  {0xe0b62e2929aba83c,0x331acdabfe94de87}, /* 1e-305 */
  {0x8c71dcd9ba0b4925,0x9ff0c08b7f1d0b14}, /* 1e-304 */
  {0xaf8e5410288e1b6f,0x07ecf0ae5ee44dd9}, /* 1e-303 */
  {0xdb71e91432b1a24a,0xc9e82cd9f69d6150}, /* 1e-302 */
  {0x892731ac9faf056e,0xbe311c083a225cd2}, /* 1e-301 */
  {0xab70fe17c79ac6ca,0x6dbd630a48aaf406}, /* 1e-300 */
  {0xd64d3d9db981787d,0x092cbbccdad5b108}, /* 1e-299 */
  {0x85f0468293f0eb4e,0x25bbf56008c58ea5}, /* 1e-298 */
  {0xa76c582338ed2621,0xaf2af2b80af6f24e}, /* 1e-297 */
  {0xd1476e2c07286faa,0x1af5af660db4aee1}, /* 1e-296 */
  {0x82cca4db847945ca,0x50d98d9fc890ed4d}, /* 1e-295 */
  {0xa37fce126597973c,0xe50ff107bab528a0}, /* 1e-294 */
  {0xcc5fc196fefd7d0c,0x1e53ed49a96272c8}, /* 1e-293 */
  {0xff77b1fcbebcdc4f,0x25e8e89c13bb0f7a}, /* 1e-292 */
  {0x9faacf3df73609b1,0x77b191618c54e9ac}, /* 1e-291 */
  {0xc795830d75038c1d,0xd59df5b9ef6a2417}, /* 1e-290 */
  {0xf97ae3d0d2446f25,0x4b0573286b44ad1d}, /* 1e-289 */
  {0x9becce62836ac577,0x4ee367f9430aec32}, /* 1e-288 */
  {0xc2e801fb244576d5,0x229c41f793cda73f}, /* 1e-287 */
  {0xf3a20279ed56d48a,0x6b43527578c1110f}, /* 1e-286 */
  {0x9845418c345644d6,0x830a13896b78aaa9}, /* 1e-285 */
  {0xbe5691ef416bd60c,0x23cc986bc656d553}, /* 1e-284 */
  {0xedec366b11c6cb8f,0x2cbfbe86b7ec8aa8}, /* 1e-283 */
  {0x94b3a202eb1c3f39,0x7bf7d71432f3d6a9}, /* 1e-282 */
  {0xb9e08a83a5e34f07,0xdaf5ccd93fb0cc53}, /* 1e-281 */
  {0xe858ad248f5c22c9,0xd1b3400f8f9cff68}, /* 1e-280 */
  {0x91376c36d99995be,0x23100809b9c21fa1}, /* 1e-279 */
  {0xb58547448ffffb2d,0xabd40a0c2832a78a}, /* 1e-278 */
  {0xe2e69915b3fff9f9,0x16c90c8f323f516c}, /* 1e-277 */
  {0x8dd01fad907ffc3b,0xae3da7d97f6792e3}, /* 1e-276 */
  {0xb1442798f49ffb4a,0x99cd11cfdf41779c}, /* 1e-275 */
  {0xdd95317f31c7fa1d,0x40405643d711d583}, /* 1e-274 */
  {0x8a7d3eef7f1cfc52,0x482835ea666b2572}, /* 1e-273 */
  {0xad1c8eab5ee43b66,0xda3243650005eecf}, /* 1e-272 */
  {0xd863b256369d4a40,0x90bed43e40076a82}, /* 1e-271 */
  {0x873e4f75e2224e68,0x5a7744a6e804a291}, /* 1e-270 */
  {0xa90de3535aaae202,0x711515d0a205cb36}, /* 1e-269 */
  {0xd3515c2831559a83,0x0d5a5b44ca873e03}, /* 1e-268 */
  {0x8412d9991ed58091,0xe858790afe9486c2}, /* 1e-267 */
  {0xa5178fff668ae0b6,0x626e974dbe39a872}, /* 1e-266 */
  {0xce5d73ff402d98e3,0xfb0a3d212dc8128f}, /* 1e-265 */
  {0x80fa687f881c7f8e,0x7ce66634bc9d0b99}, /* 1e-264 */
  {0xa139029f6a239f72,0x1c1fffc1ebc44e80}, /* 1e-263 */
  {0xc987434744ac874e,0xa327ffb266b56220}, /* 1e-262 */
  {0xfbe9141915d7a922,0x4bf1ff9f0062baa8}, /* 1e-261 */
  {0x9d71ac8fada6c9b5,0x6f773fc3603db4a9}, /* 1e-260 */
  {0xc4ce17b399107c22,0xcb550fb4384d21d3}, /* 1e-259 */
  {0xf6019da07f549b2b,0x7e2a53a146606a48}, /* 1e-258 */
  {0x99c102844f94e0fb,0x2eda7444cbfc426d}, /* 1e-257 */
  {0xc0314325637a1939,0xfa911155fefb5308}, /* 1e-256 */
  {0xf03d93eebc589f88,0x793555ab7eba27ca}, /* 1e-255 */
  {0x96267c7535b763b5,0x4bc1558b2f3458de}, /* 1e-254 */
  {0xbbb01b9283253ca2,0x9eb1aaedfb016f16}, /* 1e-253 */
  {0xea9c227723ee8bcb,0x465e15a979c1cadc}, /* 1e-252 */
  {0x92a1958a7675175f,0x0bfacd89ec191ec9}, /* 1e-251 */
  {0xb749faed14125d36,0xcef980ec671f667b}, /* 1e-250 */
  {0xe51c79a85916f484,0x82b7e12780e7401a}, /* 1e-249 */
  {0x8f31cc0937ae58d2,0xd1b2ecb8b0908810}, /* 1e-248 */
  {0xb2fe3f0b8599ef07,0x861fa7e6dcb4aa15}, /* 1e-247 */
  {0xdfbdcece67006ac9,0x67a791e093e1d49a}, /* 1e-246 */
  {0x8bd6a141006042bd,0xe0c8bb2c5c6d24e0}, /* 1e-245 */
  {0xaecc49914078536d,0x58fae9f773886e18}, /* 1e-244 */
  {0xda7f5bf590966848,0xaf39a475506a899e}, /* 1e-243 */
  {0x888f99797a5e012d,0x6d8406c952429603}, /* 1e-242 */
  {0xaab37fd7d8f58178,0xc8e5087ba6d33b83}, /* 1e-241 */
  {0xd5605fcdcf32e1d6,0xfb1e4a9a90880a64}, /* 1e-240 */
  {0x855c3be0a17fcd26,0x5cf2eea09a55067f}, /* 1e-239 */
  {0xa6b34ad8c9dfc06f,0xf42faa48c0ea481e}, /* 1e-238 */
  {0xd0601d8efc57b08b,0xf13b94daf124da26}, /* 1e-237 */
  {0x823c12795db6ce57,0x76c53d08d6b70858}, /* 1e-236 */
  {0xa2cb1717b52481ed,0x54768c4b0c64ca6e}, /* 1e-235 */
  {0xcb7ddcdda26da268,0xa9942f5dcf7dfd09}, /* 1e-234 */
  {0xfe5d54150b090b02,0xd3f93b35435d7c4c}, /* 1e-233 */
  {0x9efa548d26e5a6e1,0xc47bc5014a1a6daf}, /* 1e-232 */
  {0xc6b8e9b0709f109a,0x359ab6419ca1091b}, /* 1e-231 */
  {0xf867241c8cc6d4c0,0xc30163d203c94b62}, /* 1e-230 */
  {0x9b407691d7fc44f8,0x79e0de63425dcf1d}, /* 1e-229 */
  {0xc21094364dfb5636,0x985915fc12f542e4}, /* 1e-228 */
  {0xf294b943e17a2bc4,0x3e6f5b7b17b2939d}, /* 1e-227 */
  {0x979cf3ca6cec5b5a,0xa705992ceecf9c42}, /* 1e-226 */
  {0xbd8430bd08277231,0x50c6ff782a838353}, /* 1e-225 */
  {0xece53cec4a314ebd,0xa4f8bf5635246428}, /* 1e-224 */
  {0x940f4613ae5ed136,0x871b7795e136be99}, /* 1e-223 */
  {0xb913179899f68584,0x28e2557b59846e3f}, /* 1e-222 */
  {0xe757dd7ec07426e5,0x331aeada2fe589cf}, /* 1e-221 */
  {0x9096ea6f3848984f,0x3ff0d2c85def7621}, /* 1e-220 */
  {0xb4bca50b065abe63,0x0fed077a756b53a9}, /* 1e-219 */
  {0xe1ebce4dc7f16dfb,0xd3e8495912c62894}, /* 1e-218 */
  {0x8d3360f09cf6e4bd,0x64712dd7abbbd95c}, /* 1e-217 */
  {0xb080392cc4349dec,0xbd8d794d96aacfb3}, /* 1e-216 */
  {0xdca04777f541c567,0xecf0d7a0fc5583a0}, /* 1e-215 */
  {0x89e42caaf9491b60,0xf41686c49db57244}, /* 1e-214 */
  {0xac5d37d5b79b6239,0x311c2875c522ced5}, /* 1e-213 */
  {0xd77485cb25823ac7,0x7d633293366b828b}, /* 1e-212 */
  {0x86a8d39ef77164bc,0xae5dff9c02033197}, /* 1e-211 */
  {0xa8530886b54dbdeb,0xd9f57f830283fdfc}, /* 1e-210 */
  {0xd267caa862a12d66,0xd072df63c324fd7b}, /* 1e-209 */
  {0x8380dea93da4bc60,0x4247cb9e59f71e6d}, /* 1e-208 */
  {0xa46116538d0deb78,0x52d9be85f074e608}, /* 1e-207 */
  {0xcd795be870516656,0x67902e276c921f8b}, /* 1e-206 */
  {0x806bd9714632dff6,0x00ba1cd8a3db53b6}, /* 1e-205 */
  {0xa086cfcd97bf97f3,0x80e8a40eccd228a4}, /* 1e-204 */
  {0xc8a883c0fdaf7df0,0x6122cd128006b2cd}, /* 1e-203 */
  {0xfad2a4b13d1b5d6c,0x796b805720085f81}, /* 1e-202 */
  {0x9cc3a6eec6311a63,0xcbe3303674053bb0}, /* 1e-201 */
  {0xc3f490aa77bd60fc,0xbedbfc4411068a9c}, /* 1e-200 */
  {0xf4f1b4d515acb93b,0xee92fb5515482d44}, /* 1e-199 */
  {0x991711052d8bf3c5,0x751bdd152d4d1c4a}, /* 1e-198 */
  {0xbf5cd54678eef0b6,0xd262d45a78a0635d}, /* 1e-197 */
  {0xef340a98172aace4,0x86fb897116c87c34}, /* 1e-196 */
  {0x9580869f0e7aac0e,0xd45d35e6ae3d4da0}, /* 1e-195 */
  {0xbae0a846d2195712,0x8974836059cca109}, /* 1e-194 */
  {0xe998d258869facd7,0x2bd1a438703fc94b}, /* 1e-193 */
  {0x91ff83775423cc06,0x7b6306a34627ddcf}, /* 1e-192 */
  {0xb67f6455292cbf08,0x1a3bc84c17b1d542}, /* 1e-191 */
  {0xe41f3d6a7377eeca,0x20caba5f1d9e4a93}, /* 1e-190 */
  {0x8e938662882af53e,0x547eb47b7282ee9c}, /* 1e-189 */
  {0xb23867fb2a35b28d,0xe99e619a4f23aa43}, /* 1e-188 */
  {0xdec681f9f4c31f31,0x6405fa00e2ec94d4}, /* 1e-187 */
  {0x8b3c113c38f9f37e,0xde83bc408dd3dd04}, /* 1e-186 */
  {0xae0b158b4738705e,0x9624ab50b148d445}, /* 1e-185 */
  {0xd98ddaee19068c76,0x3badd624dd9b0957}, /* 1e-184 */
  {0x87f8a8d4cfa417c9,0xe54ca5d70a80e5d6}, /* 1e-183 */
  {0xa9f6d30a038d1dbc,0x5e9fcf4ccd211f4c}, /* 1e-182 */
  {0xd47487cc8470652b,0x7647c3200069671f}, /* 1e-181 */
  {0x84c8d4dfd2c63f3b,0x29ecd9f40041e073}, /* 1e-180 */
  {0xa5fb0a17c777cf09,0xf468107100525890}, /* 1e-179 */
  {0xcf79cc9db955c2cc,0x7182148d4066eeb4}, /* 1e-178 */
  {0x81ac1fe293d599bf,0xc6f14cd848405530}, /* 1e-177 */
  {0xa21727db38cb002f,0xb8ada00e5a506a7c}, /* 1e-176 */
  {0xca9cf1d206fdc03b,0xa6d90811f0e4851c}, /* 1e-175 */
  {0xfd442e4688bd304a,0x908f4a166d1da663}, /* 1e-174 */
  {0x9e4a9cec15763e2e,0x9a598e4e043287fe}, /* 1e-173 */
  {0xc5dd44271ad3cdba,0x40eff1e1853f29fd}, /* 1e-172 */
  {0xf7549530e188c128,0xd12bee59e68ef47c}, /* 1e-171 */
  {0x9a94dd3e8cf578b9,0x82bb74f8301958ce}, /* 1e-170 */
  {0xc13a148e3032d6e7,0xe36a52363c1faf01}, /* 1e-169 */
  {0xf18899b1bc3f8ca1,0xdc44e6c3cb279ac1}, /* 1e-168 */
  {0x96f5600f15a7b7e5,0x29ab103a5ef8c0b9}, /* 1e-167 */
  {0xbcb2b812db11a5de,0x7415d448f6b6f0e7}, /* 1e-166 */
  {0xebdf661791d60f56,0x111b495b3464ad21}, /* 1e-165 */
  {0x936b9fcebb25c995,0xcab10dd900beec34}, /* 1e-164 */
  {0xb84687c269ef3bfb,0x3d5d514f40eea742}, /* 1e-163 */
  {0xe65829b3046b0afa,0x0cb4a5a3112a5112}, /* 1e-162 */
  {0x8ff71a0fe2c2e6dc,0x47f0e785eaba72ab}, /* 1e-161 */
  {0xb3f4e093db73a093,0x59ed216765690f56}, /* 1e-160 */
  {0xe0f218b8d25088b8,0x306869c13ec3532c}, /* 1e-159 */
  {0x8c974f7383725573,0x1e414218c73a13fb}, /* 1e-158 */
  {0xafbd2350644eeacf,0xe5d1929ef90898fa}, /* 1e-157 */
  {0xdbac6c247d62a583,0xdf45f746b74abf39}, /* 1e-156 */
  {0x894bc396ce5da772,0x6b8bba8c328eb783}, /* 1e-155 */
  {0xab9eb47c81f5114f,0x066ea92f3f326564}, /* 1e-154 */
  {0xd686619ba27255a2,0xc80a537b0efefebd}, /* 1e-153 */
  {0x8613fd0145877585,0xbd06742ce95f5f36}, /* 1e-152 */
  {0xa798fc4196e952e7,0x2c48113823b73704}, /* 1e-151 */
  {0xd17f3b51fca3a7a0,0xf75a15862ca504c5}, /* 1e-150 */
  {0x82ef85133de648c4,0x9a984d73dbe722fb}, /* 1e-149 */
  {0xa3ab66580d5fdaf5,0xc13e60d0d2e0ebba}, /* 1e-148 */
  {0xcc963fee10b7d1b3,0x318df905079926a8}, /* 1e-147 */
  {0xffbbcfe994e5c61f,0xfdf17746497f7052}, /* 1e-146 */
  {0x9fd561f1fd0f9bd3,0xfeb6ea8bedefa633}, /* 1e-145 */
  {0xc7caba6e7c5382c8,0xfe64a52ee96b8fc0}, /* 1e-144 */
  {0xf9bd690a1b68637b,0x3dfdce7aa3c673b0}, /* 1e-143 */
  {0x9c1661a651213e2d,0x06bea10ca65c084e}, /* 1e-142 */
  {0xc31bfa0fe5698db8,0x486e494fcff30a62}, /* 1e-141 */
  {0xf3e2f893dec3f126,0x5a89dba3c3efccfa}, /* 1e-140 */
  {0x986ddb5c6b3a76b7,0xf89629465a75e01c}, /* 1e-139 */
  {0xbe89523386091465,0xf6bbb397f1135823}, /* 1e-138 */
  {0xee2ba6c0678b597f,0x746aa07ded582e2c}, /* 1e-137 */
  {0x94db483840b717ef,0xa8c2a44eb4571cdc}, /* 1e-136 */
  {0xba121a4650e4ddeb,0x92f34d62616ce413}, /* 1e-135 */
  {0xe896a0d7e51e1566,0x77b020baf9c81d17}, /* 1e-134 */
  {0x915e2486ef32cd60,0x0ace1474dc1d122e}, /* 1e-133 */
  {0xb5b5ada8aaff80b8,0x0d819992132456ba}, /* 1e-132 */
  {0xe3231912d5bf60e6,0x10e1fff697ed6c69}, /* 1e-131 */
  {0x8df5efabc5979c8f,0xca8d3ffa1ef463c1}, /* 1e-130 */
  {0xb1736b96b6fd83b3,0xbd308ff8a6b17cb2}, /* 1e-129 */
  {0xddd0467c64bce4a0,0xac7cb3f6d05ddbde}, /* 1e-128 */
  {0x8aa22c0dbef60ee4,0x6bcdf07a423aa96b}, /* 1e-127 */
  {0xad4ab7112eb3929d,0x86c16c98d2c953c6}, /* 1e-126 */
  {0xd89d64d57a607744,0xe871c7bf077ba8b7}, /* 1e-125 */
  {0x87625f056c7c4a8b,0x11471cd764ad4972}, /* 1e-124 */
  {0xa93af6c6c79b5d2d,0xd598e40d3dd89bcf}, /* 1e-123 */
  {0xd389b47879823479,0x4aff1d108d4ec2c3}, /* 1e-122 */
  {0x843610cb4bf160cb,0xcedf722a585139ba}, /* 1e-121 */
  {0xa54394fe1eedb8fe,0xc2974eb4ee658828}, /* 1e-120 */
  {0xce947a3da6a9273e,0x733d226229feea32}, /* 1e-119 */
  {0x811ccc668829b887,0x0806357d5a3f525f}, /* 1e-118 */
  {0xa163ff802a3426a8,0xca07c2dcb0cf26f7}, /* 1e-117 */
  {0xc9bcff6034c13052,0xfc89b393dd02f0b5}, /* 1e-116 */
  {0xfc2c3f3841f17c67,0xbbac2078d443ace2}, /* 1e-115 */
  {0x9d9ba7832936edc0,0xd54b944b84aa4c0d}, /* 1e-114 */
  {0xc5029163f384a931,0x0a9e795e65d4df11}, /* 1e-113 */
  {0xf64335bcf065d37d,0x4d4617b5ff4a16d5}, /* 1e-112 */
  {0x99ea0196163fa42e,0x504bced1bf8e4e45}, /* 1e-111 */
  {0xc06481fb9bcf8d39,0xe45ec2862f71e1d6}, /* 1e-110 */
  {0xf07da27a82c37088,0x5d767327bb4e5a4c}, /* 1e-109 */
  {0x964e858c91ba2655,0x3a6a07f8d510f86f}, /* 1e-108 */
  {0xbbe226efb628afea,0x890489f70a55368b}, /* 1e-107 */
  {0xeadab0aba3b2dbe5,0x2b45ac74ccea842e}, /* 1e-106 */
  {0x92c8ae6b464fc96f,0x3b0b8bc90012929d}, /* 1e-105 */
  {0xb77ada0617e3bbcb,0x09ce6ebb40173744}, /* 1e-104 */
  {0xe55990879ddcaabd,0xcc420a6a101d0515}, /* 1e-103 */
  {0x8f57fa54c2a9eab6,0x9fa946824a12232d}, /* 1e-102 */
  {0xb32df8e9f3546564,0x47939822dc96abf9}, /* 1e-101 */
  {0xdff9772470297ebd,0x59787e2b93bc56f7}, /* 1e-100 */
  {0x8bfbea76c619ef36,0x57eb4edb3c55b65a}, /* 1e-99 */
  {0xaefae51477a06b03,0xede622920b6b23f1}, /* 1e-98 */
  {0xdab99e59958885c4,0xe95fab368e45eced}, /* 1e-97 */
  {0x88b402f7fd75539b,0x11dbcb0218ebb414}, /* 1e-96 */
  {0xaae103b5fcd2a881,0xd652bdc29f26a119}, /* 1e-95 */
  {0xd59944a37c0752a2,0x4be76d3346f0495f}, /* 1e-94 */
  {0x857fcae62d8493a5,0x6f70a4400c562ddb}, /* 1e-93 */
  {0xa6dfbd9fb8e5b88e,0xcb4ccd500f6bb952}, /* 1e-92 */
  {0xd097ad07a71f26b2,0x7e2000a41346a7a7}, /* 1e-91 */
  {0x825ecc24c873782f,0x8ed400668c0c28c8}, /* 1e-90 */
  {0xa2f67f2dfa90563b,0x728900802f0f32fa}, /* 1e-89 */
  {0xcbb41ef979346bca,0x4f2b40a03ad2ffb9}, /* 1e-88 */
  {0xfea126b7d78186bc,0xe2f610c84987bfa8}, /* 1e-87 */
  {0x9f24b832e6b0f436,0x0dd9ca7d2df4d7c9}, /* 1e-86 */
  {0xc6ede63fa05d3143,0x91503d1c79720dbb}, /* 1e-85 */
  {0xf8a95fcf88747d94,0x75a44c6397ce912a}, /* 1e-84 */
  {0x9b69dbe1b548ce7c,0xc986afbe3ee11aba}, /* 1e-83 */
  {0xc24452da229b021b,0xfbe85badce996168}, /* 1e-82 */
  {0xf2d56790ab41c2a2,0xfae27299423fb9c3}, /* 1e-81 */
  {0x97c560ba6b0919a5,0xdccd879fc967d41a}, /* 1e-80 */
  {0xbdb6b8e905cb600f,0x5400e987bbc1c920}, /* 1e-79 */
  {0xed246723473e3813,0x290123e9aab23b68}, /* 1e-78 */
  {0x9436c0760c86e30b,0xf9a0b6720aaf6521}, /* 1e-77 */
  {0xb94470938fa89bce,0xf808e40e8d5b3e69}, /* 1e-76 */
  {0xe7958cb87392c2c2,0xb60b1d1230b20e04}, /* 1e-75 */
  {0x90bd77f3483bb9b9,0xb1c6f22b5e6f48c2}, /* 1e-74 */
  {0xb4ecd5f01a4aa828,0x1e38aeb6360b1af3}, /* 1e-73 */
  {0xe2280b6c20dd5232,0x25c6da63c38de1b0}, /* 1e-72 */
  {0x8d590723948a535f,0x579c487e5a38ad0e}, /* 1e-71 */
  {0xb0af48ec79ace837,0x2d835a9df0c6d851}, /* 1e-70 */
  {0xdcdb1b2798182244,0xf8e431456cf88e65}, /* 1e-69 */
  {0x8a08f0f8bf0f156b,0x1b8e9ecb641b58ff}, /* 1e-68 */
  {0xac8b2d36eed2dac5,0xe272467e3d222f3f}, /* 1e-67 */
  {0xd7adf884aa879177,0x5b0ed81dcc6abb0f}, /* 1e-66 */
  {0x86ccbb52ea94baea,0x98e947129fc2b4e9}, /* 1e-65 */
  {0xa87fea27a539e9a5,0x3f2398d747b36224}, /* 1e-64 */
  {0xd29fe4b18e88640e,0x8eec7f0d19a03aad}, /* 1e-63 */
  {0x83a3eeeef9153e89,0x1953cf68300424ac}, /* 1e-62 */
  {0xa48ceaaab75a8e2b,0x5fa8c3423c052dd7}, /* 1e-61 */
  {0xcdb02555653131b6,0x3792f412cb06794d}, /* 1e-60 */
  {0x808e17555f3ebf11,0xe2bbd88bbee40bd0}, /* 1e-59 */
  {0xa0b19d2ab70e6ed6,0x5b6aceaeae9d0ec4}, /* 1e-58 */
  {0xc8de047564d20a8b,0xf245825a5a445275}, /* 1e-57 */
  {0xfb158592be068d2e,0xeed6e2f0f0d56712}, /* 1e-56 */
  {0x9ced737bb6c4183d,0x55464dd69685606b}, /* 1e-55 */
  {0xc428d05aa4751e4c,0xaa97e14c3c26b886}, /* 1e-54 */
  {0xf53304714d9265df,0xd53dd99f4b3066a8}, /* 1e-53 */
  {0x993fe2c6d07b7fab,0xe546a8038efe4029}, /* 1e-52 */
  {0xbf8fdb78849a5f96,0xde98520472bdd033}, /* 1e-51 */
  {0xef73d256a5c0f77c,0x963e66858f6d4440}, /* 1e-50 */
  {0x95a8637627989aad,0xdde7001379a44aa8}, /* 1e-49 */
  {0xbb127c53b17ec159,0x5560c018580d5d52}, /* 1e-48 */
  {0xe9d71b689dde71af,0xaab8f01e6e10b4a6}, /* 1e-47 */
  {0x9226712162ab070d,0xcab3961304ca70e8}, /* 1e-46 */
  {0xb6b00d69bb55c8d1,0x3d607b97c5fd0d22}, /* 1e-45 */
  {0xe45c10c42a2b3b05,0x8cb89a7db77c506a}, /* 1e-44 */
  {0x8eb98a7a9a5b04e3,0x77f3608e92adb242}, /* 1e-43 */
  {0xb267ed1940f1c61c,0x55f038b237591ed3}, /* 1e-42 */
  {0xdf01e85f912e37a3,0x6b6c46dec52f6688}, /* 1e-41 */
  {0x8b61313bbabce2c6,0x2323ac4b3b3da015}, /* 1e-40 */
  {0xae397d8aa96c1b77,0xabec975e0a0d081a}, /* 1e-39 */
  {0xd9c7dced53c72255,0x96e7bd358c904a21}, /* 1e-38 */
  {0x881cea14545c7575,0x7e50d64177da2e54}, /* 1e-37 */
  {0xaa242499697392d2,0xdde50bd1d5d0b9e9}, /* 1e-36 */
  {0xd4ad2dbfc3d07787,0x955e4ec64b44e864}, /* 1e-35 */
  {0x84ec3c97da624ab4,0xbd5af13bef0b113e}, /* 1e-34 */
  {0xa6274bbdd0fadd61,0xecb1ad8aeacdd58e}, /* 1e-33 */
  {0xcfb11ead453994ba,0x67de18eda5814af2}, /* 1e-32 */
  {0x81ceb32c4b43fcf4,0x80eacf948770ced7}, /* 1e-31 */
  {0xa2425ff75e14fc31,0xa1258379a94d028d}, /* 1e-30 */
  {0xcad2f7f5359a3b3e,0x096ee45813a04330}, /* 1e-29 */
  {0xfd87b5f28300ca0d,0x8bca9d6e188853fc}, /* 1e-28 */
  {0x9e74d1b791e07e48,0x775ea264cf55347d}, /* 1e-27 */
  {0xc612062576589dda,0x95364afe032a819d}, /* 1e-26 */
  {0xf79687aed3eec551,0x3a83ddbd83f52204}, /* 1e-25 */
  {0x9abe14cd44753b52,0xc4926a9672793542}, /* 1e-24 */
  {0xc16d9a0095928a27,0x75b7053c0f178293}, /* 1e-23 */
  {0xf1c90080baf72cb1,0x5324c68b12dd6338}, /* 1e-22 */
  {0x971da05074da7bee,0xd3f6fc16ebca5e03}, /* 1e-21 */
  {0xbce5086492111aea,0x88f4bb1ca6bcf584}, /* 1e-20 */
  {0xec1e4a7db69561a5,0x2b31e9e3d06c32e5}, /* 1e-19 */
  {0x9392ee8e921d5d07,0x3aff322e62439fcf}, /* 1e-18 */
  {0xb877aa3236a4b449,0x09befeb9fad487c2}, /* 1e-17 */
  {0xe69594bec44de15b,0x4c2ebe687989a9b3}, /* 1e-16 */
  {0x901d7cf73ab0acd9,0x0f9d37014bf60a10}, /* 1e-15 */
  {0xb424dc35095cd80f,0x538484c19ef38c94}, /* 1e-14 */
  {0xe12e13424bb40e13,0x2865a5f206b06fb9}, /* 1e-13 */
  {0x8cbccc096f5088cb,0xf93f87b7442e45d3}, /* 1e-12 */
  {0xafebff0bcb24aafe,0xf78f69a51539d748}, /* 1e-11 */
  {0xdbe6fecebdedd5be,0xb573440e5a884d1b}, /* 1e-10 */
  {0x89705f4136b4a597,0x31680a88f8953030}, /* 1e-9 */
  {0xabcc77118461cefc,0xfdc20d2b36ba7c3d}, /* 1e-8 */
  {0xd6bf94d5e57a42bc,0x3d32907604691b4c}, /* 1e-7 */
  {0x8637bd05af6c69b5,0xa63f9a49c2c1b10f}, /* 1e-6 */
  {0xa7c5ac471b478423,0x0fcf80dc33721d53}, /* 1e-5 */
  {0xd1b71758e219652b,0xd3c36113404ea4a8}, /* 1e-4 */
  {0x83126e978d4fdf3b,0x645a1cac083126e9}, /* 1e-3 */
  {0xa3d70a3d70a3d70a,0x3d70a3d70a3d70a3}, /* 1e-2 */
  {0xcccccccccccccccc,0xcccccccccccccccc}, /* 1e-1 */
  {0x8000000000000000,0x0000000000000000}, /* 1e0 */
  {0xa000000000000000,0x0000000000000000}, /* 1e1 */
  {0xc800000000000000,0x0000000000000000}, /* 1e2 */
  {0xfa00000000000000,0x0000000000000000}, /* 1e3 */
  {0x9c40000000000000,0x0000000000000000}, /* 1e4 */
  {0xc350000000000000,0x0000000000000000}, /* 1e5 */
  {0xf424000000000000,0x0000000000000000}, /* 1e6 */
  {0x9896800000000000,0x0000000000000000}, /* 1e7 */
  {0xbebc200000000000,0x0000000000000000}, /* 1e8 */
  {0xee6b280000000000,0x0000000000000000}, /* 1e9 */
  {0x9502f90000000000,0x0000000000000000}, /* 1e10 */
  {0xba43b74000000000,0x0000000000000000}, /* 1e11 */
  {0xe8d4a51000000000,0x0000000000000000}, /* 1e12 */
  {0x9184e72a00000000,0x0000000000000000}, /* 1e13 */
  {0xb5e620f480000000,0x0000000000000000}, /* 1e14 */
  {0xe35fa931a0000000,0x0000000000000000}, /* 1e15 */
  {0x8e1bc9bf04000000,0x0000000000000000}, /* 1e16 */
  {0xb1a2bc2ec5000000,0x0000000000000000}, /* 1e17 */
  {0xde0b6b3a76400000,0x0000000000000000}, /* 1e18 */
  {0x8ac7230489e80000,0x0000000000000000}, /* 1e19 */
  {0xad78ebc5ac620000,0x0000000000000000}, /* 1e20 */
  {0xd8d726b7177a8000,0x0000000000000000}, /* 1e21 */
  {0x878678326eac9000,0x0000000000000000}, /* 1e22 */
  {0xa968163f0a57b400,0x0000000000000000}, /* 1e23 */
  {0xd3c21bcecceda100,0x0000000000000000}, /* 1e24 */
  {0x84595161401484a0,0x0000000000000000}, /* 1e25 */
  {0xa56fa5b99019a5c8,0x0000000000000000}, /* 1e26 */
  {0xcecb8f27f4200f3a,0x0000000000000000}, /* 1e27 */
  {0x813f3978f8940984,0x4000000000000000}, /* 1e28 */
  {0xa18f07d736b90be5,0x5000000000000000}, /* 1e29 */
  {0xc9f2c9cd04674ede,0xa400000000000000}, /* 1e30 */
  {0xfc6f7c4045812296,0x4d00000000000000}, /* 1e31 */
  {0x9dc5ada82b70b59d,0xf020000000000000}, /* 1e32 */
  {0xc5371912364ce305,0x6c28000000000000}, /* 1e33 */
  {0xf684df56c3e01bc6,0xc732000000000000}, /* 1e34 */
  {0x9a130b963a6c115c,0x3c7f400000000000}, /* 1e35 */
  {0xc097ce7bc90715b3,0x4b9f100000000000}, /* 1e36 */
  {0xf0bdc21abb48db20,0x1e86d40000000000}, /* 1e37 */
  {0x96769950b50d88f4,0x1314448000000000}, /* 1e38 */
  {0xbc143fa4e250eb31,0x17d955a000000000}, /* 1e39 */
  {0xeb194f8e1ae525fd,0x5dcfab0800000000}, /* 1e40 */
  {0x92efd1b8d0cf37be,0x5aa1cae500000000}, /* 1e41 */
  {0xb7abc627050305ad,0xf14a3d9e40000000}, /* 1e42 */
  {0xe596b7b0c643c719,0x6d9ccd05d0000000}, /* 1e43 */
  {0x8f7e32ce7bea5c6f,0xe4820023a2000000}, /* 1e44 */
  {0xb35dbf821ae4f38b,0xdda2802c8a800000}, /* 1e45 */
  {0xe0352f62a19e306e,0xd50b2037ad200000}, /* 1e46 */
  {0x8c213d9da502de45,0x4526f422cc340000}, /* 1e47 */
  {0xaf298d050e4395d6,0x9670b12b7f410000}, /* 1e48 */
  {0xdaf3f04651d47b4c,0x3c0cdd765f114000}, /* 1e49 */
  {0x88d8762bf324cd0f,0xa5880a69fb6ac800}, /* 1e50 */
  {0xab0e93b6efee0053,0x8eea0d047a457a00}, /* 1e51 */
  {0xd5d238a4abe98068,0x72a4904598d6d880}, /* 1e52 */
  {0x85a36366eb71f041,0x47a6da2b7f864750}, /* 1e53 */
  {0xa70c3c40a64e6c51,0x999090b65f67d924}, /* 1e54 */
  {0xd0cf4b50cfe20765,0xfff4b4e3f741cf6d}, /* 1e55 */
  {0x82818f1281ed449f,0xbff8f10e7a8921a4}, /* 1e56 */
  {0xa321f2d7226895c7,0xaff72d52192b6a0d}, /* 1e57 */
  {0xcbea6f8ceb02bb39,0x9bf4f8a69f764490}, /* 1e58 */
  {0xfee50b7025c36a08,0x02f236d04753d5b4}, /* 1e59 */
  {0x9f4f2726179a2245,0x01d762422c946590}, /* 1e60 */
  {0xc722f0ef9d80aad6,0x424d3ad2b7b97ef5}, /* 1e61 */
  {0xf8ebad2b84e0d58b,0xd2e0898765a7deb2}, /* 1e62 */
  {0x9b934c3b330c8577,0x63cc55f49f88eb2f}, /* 1e63 */
  {0xc2781f49ffcfa6d5,0x3cbf6b71c76b25fb}, /* 1e64 */
  {0xf316271c7fc3908a,0x8bef464e3945ef7a}, /* 1e65 */
  {0x97edd871cfda3a56,0x97758bf0e3cbb5ac}, /* 1e66 */
  {0xbde94e8e43d0c8ec,0x3d52eeed1cbea317}, /* 1e67 */
  {0xed63a231d4c4fb27,0x4ca7aaa863ee4bdd}, /* 1e68 */
  {0x945e455f24fb1cf8,0x8fe8caa93e74ef6a}, /* 1e69 */
  {0xb975d6b6ee39e436,0xb3e2fd538e122b44}, /* 1e70 */
  {0xe7d34c64a9c85d44,0x60dbbca87196b616}, /* 1e71 */
  {0x90e40fbeea1d3a4a,0xbc8955e946fe31cd}, /* 1e72 */
  {0xb51d13aea4a488dd,0x6babab6398bdbe41}, /* 1e73 */
  {0xe264589a4dcdab14,0xc696963c7eed2dd1}, /* 1e74 */
  {0x8d7eb76070a08aec,0xfc1e1de5cf543ca2}, /* 1e75 */
  {0xb0de65388cc8ada8,0x3b25a55f43294bcb}, /* 1e76 */
  {0xdd15fe86affad912,0x49ef0eb713f39ebe}, /* 1e77 */
  {0x8a2dbf142dfcc7ab,0x6e3569326c784337}, /* 1e78 */
  {0xacb92ed9397bf996,0x49c2c37f07965404}, /* 1e79 */
  {0xd7e77a8f87daf7fb,0xdc33745ec97be906}, /* 1e80 */
  {0x86f0ac99b4e8dafd,0x69a028bb3ded71a3}, /* 1e81 */
  {0xa8acd7c0222311bc,0xc40832ea0d68ce0c}, /* 1e82 */
  {0xd2d80db02aabd62b,0xf50a3fa490c30190}, /* 1e83 */
  {0x83c7088e1aab65db,0x792667c6da79e0fa}, /* 1e84 */
  {0xa4b8cab1a1563f52,0x577001b891185938}, /* 1e85 */
  {0xcde6fd5e09abcf26,0xed4c0226b55e6f86}, /* 1e86 */
  {0x80b05e5ac60b6178,0x544f8158315b05b4}, /* 1e87 */
  {0xa0dc75f1778e39d6,0x696361ae3db1c721}, /* 1e88 */
  {0xc913936dd571c84c,0x03bc3a19cd1e38e9}, /* 1e89 */
  {0xfb5878494ace3a5f,0x04ab48a04065c723}, /* 1e90 */
  {0x9d174b2dcec0e47b,0x62eb0d64283f9c76}, /* 1e91 */
  {0xc45d1df942711d9a,0x3ba5d0bd324f8394}, /* 1e92 */
  {0xf5746577930d6500,0xca8f44ec7ee36479}, /* 1e93 */
  {0x9968bf6abbe85f20,0x7e998b13cf4e1ecb}, /* 1e94 */
  {0xbfc2ef456ae276e8,0x9e3fedd8c321a67e}, /* 1e95 */
  {0xefb3ab16c59b14a2,0xc5cfe94ef3ea101e}, /* 1e96 */
  {0x95d04aee3b80ece5,0xbba1f1d158724a12}, /* 1e97 */
  {0xbb445da9ca61281f,0x2a8a6e45ae8edc97}, /* 1e98 */
  {0xea1575143cf97226,0xf52d09d71a3293bd}, /* 1e99 */
  {0x924d692ca61be758,0x593c2626705f9c56}, /* 1e100 */
  {0xb6e0c377cfa2e12e,0x6f8b2fb00c77836c}, /* 1e101 */
  {0xe498f455c38b997a,0x0b6dfb9c0f956447}, /* 1e102 */
  {0x8edf98b59a373fec,0x4724bd4189bd5eac}, /* 1e103 */
  {0xb2977ee300c50fe7,0x58edec91ec2cb657}, /* 1e104 */
  {0xdf3d5e9bc0f653e1,0x2f2967b66737e3ed}, /* 1e105 */
  {0x8b865b215899f46c,0xbd79e0d20082ee74}, /* 1e106 */
  {0xae67f1e9aec07187,0xecd8590680a3aa11}, /* 1e107 */
  {0xda01ee641a708de9,0xe80e6f4820cc9495}, /* 1e108 */
  {0x884134fe908658b2,0x3109058d147fdcdd}, /* 1e109 */
  {0xaa51823e34a7eede,0xbd4b46f0599fd415}, /* 1e110 */
  {0xd4e5e2cdc1d1ea96,0x6c9e18ac7007c91a}, /* 1e111 */
  {0x850fadc09923329e,0x03e2cf6bc604ddb0}, /* 1e112 */
  {0xa6539930bf6bff45,0x84db8346b786151c}, /* 1e113 */
  {0xcfe87f7cef46ff16,0xe612641865679a63}, /* 1e114 */
  {0x81f14fae158c5f6e,0x4fcb7e8f3f60c07e}, /* 1e115 */
  {0xa26da3999aef7749,0xe3be5e330f38f09d}, /* 1e116 */
  {0xcb090c8001ab551c,0x5cadf5bfd3072cc5}, /* 1e117 */
  {0xfdcb4fa002162a63,0x73d9732fc7c8f7f6}, /* 1e118 */
  {0x9e9f11c4014dda7e,0x2867e7fddcdd9afa}, /* 1e119 */
  {0xc646d63501a1511d,0xb281e1fd541501b8}, /* 1e120 */
  {0xf7d88bc24209a565,0x1f225a7ca91a4226}, /* 1e121 */
  {0x9ae757596946075f,0x3375788de9b06958}, /* 1e122 */
  {0xc1a12d2fc3978937,0x0052d6b1641c83ae}, /* 1e123 */
  {0xf209787bb47d6b84,0xc0678c5dbd23a49a}, /* 1e124 */
  {0x9745eb4d50ce6332,0xf840b7ba963646e0}, /* 1e125 */
  {0xbd176620a501fbff,0xb650e5a93bc3d898}, /* 1e126 */
  {0xec5d3fa8ce427aff,0xa3e51f138ab4cebe}, /* 1e127 */
  {0x93ba47c980e98cdf,0xc66f336c36b10137}, /* 1e128 */
  {0xb8a8d9bbe123f017,0xb80b0047445d4184}, /* 1e129 */
  {0xe6d3102ad96cec1d,0xa60dc059157491e5}, /* 1e130 */
  {0x9043ea1ac7e41392,0x87c89837ad68db2f}, /* 1e131 */
  {0xb454e4a179dd1877,0x29babe4598c311fb}, /* 1e132 */
  {0xe16a1dc9d8545e94,0xf4296dd6fef3d67a}, /* 1e133 */
  {0x8ce2529e2734bb1d,0x1899e4a65f58660c}, /* 1e134 */
  {0xb01ae745b101e9e4,0x5ec05dcff72e7f8f}, /* 1e135 */
  {0xdc21a1171d42645d,0x76707543f4fa1f73}, /* 1e136 */
  {0x899504ae72497eba,0x6a06494a791c53a8}, /* 1e137 */
  {0xabfa45da0edbde69,0x0487db9d17636892}, /* 1e138 */
  {0xd6f8d7509292d603,0x45a9d2845d3c42b6}, /* 1e139 */
  {0x865b86925b9bc5c2,0x0b8a2392ba45a9b2}, /* 1e140 */
  {0xa7f26836f282b732,0x8e6cac7768d7141e}, /* 1e141 */
  {0xd1ef0244af2364ff,0x3207d795430cd926}, /* 1e142 */
  {0x8335616aed761f1f,0x7f44e6bd49e807b8}, /* 1e143 */
  {0xa402b9c5a8d3a6e7,0x5f16206c9c6209a6}, /* 1e144 */
  {0xcd036837130890a1,0x36dba887c37a8c0f}, /* 1e145 */
  {0x802221226be55a64,0xc2494954da2c9789}, /* 1e146 */
  {0xa02aa96b06deb0fd,0xf2db9baa10b7bd6c}, /* 1e147 */
  {0xc83553c5c8965d3d,0x6f92829494e5acc7}, /* 1e148 */
  {0xfa42a8b73abbf48c,0xcb772339ba1f17f9}, /* 1e149 */
  {0x9c69a97284b578d7,0xff2a760414536efb}, /* 1e150 */
  {0xc38413cf25e2d70d,0xfef5138519684aba}, /* 1e151 */
  {0xf46518c2ef5b8cd1,0x7eb258665fc25d69}, /* 1e152 */
  {0x98bf2f79d5993802,0xef2f773ffbd97a61}, /* 1e153 */
  {0xbeeefb584aff8603,0xaafb550ffacfd8fa}, /* 1e154 */
  {0xeeaaba2e5dbf6784,0x95ba2a53f983cf38}, /* 1e155 */
  {0x952ab45cfa97a0b2,0xdd945a747bf26183}, /* 1e156 */
  {0xba756174393d88df,0x94f971119aeef9e4}, /* 1e157 */
  {0xe912b9d1478ceb17,0x7a37cd5601aab85d}, /* 1e158 */
  {0x91abb422ccb812ee,0xac62e055c10ab33a}, /* 1e159 */
  {0xb616a12b7fe617aa,0x577b986b314d6009}, /* 1e160 */
  {0xe39c49765fdf9d94,0xed5a7e85fda0b80b}, /* 1e161 */
  {0x8e41ade9fbebc27d,0x14588f13be847307}, /* 1e162 */
  {0xb1d219647ae6b31c,0x596eb2d8ae258fc8}, /* 1e163 */
  {0xde469fbd99a05fe3,0x6fca5f8ed9aef3bb}, /* 1e164 */
  {0x8aec23d680043bee,0x25de7bb9480d5854}, /* 1e165 */
  {0xada72ccc20054ae9,0xaf561aa79a10ae6a}, /* 1e166 */
  {0xd910f7ff28069da4,0x1b2ba1518094da04}, /* 1e167 */
  {0x87aa9aff79042286,0x90fb44d2f05d0842}, /* 1e168 */
  {0xa99541bf57452b28,0x353a1607ac744a53}, /* 1e169 */
  {0xd3fa922f2d1675f2,0x42889b8997915ce8}, /* 1e170 */
  {0x847c9b5d7c2e09b7,0x69956135febada11}, /* 1e171 */
  {0xa59bc234db398c25,0x43fab9837e699095}, /* 1e172 */
  {0xcf02b2c21207ef2e,0x94f967e45e03f4bb}, /* 1e173 */
  {0x8161afb94b44f57d,0x1d1be0eebac278f5}, /* 1e174 */
  {0xa1ba1ba79e1632dc,0x6462d92a69731732}, /* 1e175 */
  {0xca28a291859bbf93,0x7d7b8f7503cfdcfe}, /* 1e176 */
  {0xfcb2cb35e702af78,0x5cda735244c3d43e}, /* 1e177 */
  {0x9defbf01b061adab,0x3a0888136afa64a7}, /* 1e178 */
  {0xc56baec21c7a1916,0x088aaa1845b8fdd0}, /* 1e179 */
  {0xf6c69a72a3989f5b,0x8aad549e57273d45}, /* 1e180 */
  {0x9a3c2087a63f6399,0x36ac54e2f678864b}, /* 1e181 */
  {0xc0cb28a98fcf3c7f,0x84576a1bb416a7dd}, /* 1e182 */
  {0xf0fdf2d3f3c30b9f,0x656d44a2a11c51d5}, /* 1e183 */
  {0x969eb7c47859e743,0x9f644ae5a4b1b325}, /* 1e184 */
  {0xbc4665b596706114,0x873d5d9f0dde1fee}, /* 1e185 */
  {0xeb57ff22fc0c7959,0xa90cb506d155a7ea}, /* 1e186 */
  {0x9316ff75dd87cbd8,0x09a7f12442d588f2}, /* 1e187 */
  {0xb7dcbf5354e9bece,0x0c11ed6d538aeb2f}, /* 1e188 */
  {0xe5d3ef282a242e81,0x8f1668c8a86da5fa}, /* 1e189 */
  {0x8fa475791a569d10,0xf96e017d694487bc}, /* 1e190 */
  {0xb38d92d760ec4455,0x37c981dcc395a9ac}, /* 1e191 */
  {0xe070f78d3927556a,0x85bbe253f47b1417}, /* 1e192 */
  {0x8c469ab843b89562,0x93956d7478ccec8e}, /* 1e193 */
  {0xaf58416654a6babb,0x387ac8d1970027b2}, /* 1e194 */
  {0xdb2e51bfe9d0696a,0x06997b05fcc0319e}, /* 1e195 */
  {0x88fcf317f22241e2,0x441fece3bdf81f03}, /* 1e196 */
  {0xab3c2fddeeaad25a,0xd527e81cad7626c3}, /* 1e197 */
  {0xd60b3bd56a5586f1,0x8a71e223d8d3b074}, /* 1e198 */
  {0x85c7056562757456,0xf6872d5667844e49}, /* 1e199 */
  {0xa738c6bebb12d16c,0xb428f8ac016561db}, /* 1e200 */
  {0xd106f86e69d785c7,0xe13336d701beba52}, /* 1e201 */
  {0x82a45b450226b39c,0xecc0024661173473}, /* 1e202 */
  {0xa34d721642b06084,0x27f002d7f95d0190}, /* 1e203 */
  {0xcc20ce9bd35c78a5,0x31ec038df7b441f4}, /* 1e204 */
  {0xff290242c83396ce,0x7e67047175a15271}, /* 1e205 */
  {0x9f79a169bd203e41,0x0f0062c6e984d386}, /* 1e206 */
  {0xc75809c42c684dd1,0x52c07b78a3e60868}, /* 1e207 */
  {0xf92e0c3537826145,0xa7709a56ccdf8a82}, /* 1e208 */
  {0x9bbcc7a142b17ccb,0x88a66076400bb691}, /* 1e209 */
  {0xc2abf989935ddbfe,0x6acff893d00ea435}, /* 1e210 */
  {0xf356f7ebf83552fe,0x0583f6b8c4124d43}, /* 1e211 */
  {0x98165af37b2153de,0xc3727a337a8b704a}, /* 1e212 */
  {0xbe1bf1b059e9a8d6,0x744f18c0592e4c5c}, /* 1e213 */
  {0xeda2ee1c7064130c,0x1162def06f79df73}, /* 1e214 */
  {0x9485d4d1c63e8be7,0x8addcb5645ac2ba8}, /* 1e215 */
  {0xb9a74a0637ce2ee1,0x6d953e2bd7173692}, /* 1e216 */
  {0xe8111c87c5c1ba99,0xc8fa8db6ccdd0437}, /* 1e217 */
  {0x910ab1d4db9914a0,0x1d9c9892400a22a2}, /* 1e218 */
  {0xb54d5e4a127f59c8,0x2503beb6d00cab4b}, /* 1e219 */
  {0xe2a0b5dc971f303a,0x2e44ae64840fd61d}, /* 1e220 */
  {0x8da471a9de737e24,0x5ceaecfed289e5d2}, /* 1e221 */
  {0xb10d8e1456105dad,0x7425a83e872c5f47}, /* 1e222 */
  {0xdd50f1996b947518,0xd12f124e28f77719}, /* 1e223 */
  {0x8a5296ffe33cc92f,0x82bd6b70d99aaa6f}, /* 1e224 */
  {0xace73cbfdc0bfb7b,0x636cc64d1001550b}, /* 1e225 */
  {0xd8210befd30efa5a,0x3c47f7e05401aa4e}, /* 1e226 */
  {0x8714a775e3e95c78,0x65acfaec34810a71}, /* 1e227 */
  {0xa8d9d1535ce3b396,0x7f1839a741a14d0d}, /* 1e228 */
  {0xd31045a8341ca07c,0x1ede48111209a050}, /* 1e229 */
  {0x83ea2b892091e44d,0x934aed0aab460432}, /* 1e230 */
  {0xa4e4b66b68b65d60,0xf81da84d5617853f}, /* 1e231 */
  {0xce1de40642e3f4b9,0x36251260ab9d668e}, /* 1e232 */
  {0x80d2ae83e9ce78f3,0xc1d72b7c6b426019}, /* 1e233 */
  {0xa1075a24e4421730,0xb24cf65b8612f81f}, /* 1e234 */
  {0xc94930ae1d529cfc,0xdee033f26797b627}, /* 1e235 */
  {0xfb9b7cd9a4a7443c,0x169840ef017da3b1}, /* 1e236 */
  {0x9d412e0806e88aa5,0x8e1f289560ee864e}, /* 1e237 */
  {0xc491798a08a2ad4e,0xf1a6f2bab92a27e2}, /* 1e238 */
  {0xf5b5d7ec8acb58a2,0xae10af696774b1db}, /* 1e239 */
  {0x9991a6f3d6bf1765,0xacca6da1e0a8ef29}, /* 1e240 */
  {0xbff610b0cc6edd3f,0x17fd090a58d32af3}, /* 1e241 */
  {0xeff394dcff8a948e,0xddfc4b4cef07f5b0}, /* 1e242 */
  {0x95f83d0a1fb69cd9,0x4abdaf101564f98e}, /* 1e243 */
  {0xbb764c4ca7a4440f,0x9d6d1ad41abe37f1}, /* 1e244 */
  {0xea53df5fd18d5513,0x84c86189216dc5ed}, /* 1e245 */
  {0x92746b9be2f8552c,0x32fd3cf5b4e49bb4}, /* 1e246 */
  {0xb7118682dbb66a77,0x3fbc8c33221dc2a1}, /* 1e247 */
  {0xe4d5e82392a40515,0x0fabaf3feaa5334a}, /* 1e248 */
  {0x8f05b1163ba6832d,0x29cb4d87f2a7400e}, /* 1e249 */
  {0xb2c71d5bca9023f8,0x743e20e9ef511012}, /* 1e250 */
  {0xdf78e4b2bd342cf6,0x914da9246b255416}, /* 1e251 */
  {0x8bab8eefb6409c1a,0x1ad089b6c2f7548e}, /* 1e252 */
  {0xae9672aba3d0c320,0xa184ac2473b529b1}, /* 1e253 */
  {0xda3c0f568cc4f3e8,0xc9e5d72d90a2741e}, /* 1e254 */
  {0x8865899617fb1871,0x7e2fa67c7a658892}, /* 1e255 */
  {0xaa7eebfb9df9de8d,0xddbb901b98feeab7}, /* 1e256 */
  {0xd51ea6fa85785631,0x552a74227f3ea565}, /* 1e257 */
  {0x8533285c936b35de,0xd53a88958f87275f}, /* 1e258 */
  {0xa67ff273b8460356,0x8a892abaf368f137}, /* 1e259 */
  {0xd01fef10a657842c,0x2d2b7569b0432d85}, /* 1e260 */
  {0x8213f56a67f6b29b,0x9c3b29620e29fc73}, /* 1e261 */
  {0xa298f2c501f45f42,0x8349f3ba91b47b8f}, /* 1e262 */
  {0xcb3f2f7642717713,0x241c70a936219a73}, /* 1e263 */
  {0xfe0efb53d30dd4d7,0xed238cd383aa0110}, /* 1e264 */
  {0x9ec95d1463e8a506,0xf4363804324a40aa}, /* 1e265 */
  {0xc67bb4597ce2ce48,0xb143c6053edcd0d5}, /* 1e266 */
  {0xf81aa16fdc1b81da,0xdd94b7868e94050a}, /* 1e267 */
  {0x9b10a4e5e9913128,0xca7cf2b4191c8326}, /* 1e268 */
  {0xc1d4ce1f63f57d72,0xfd1c2f611f63a3f0}, /* 1e269 */
  {0xf24a01a73cf2dccf,0xbc633b39673c8cec}, /* 1e270 */
  {0x976e41088617ca01,0xd5be0503e085d813}, /* 1e271 */
  {0xbd49d14aa79dbc82,0x4b2d8644d8a74e18}, /* 1e272 */
  {0xec9c459d51852ba2,0xddf8e7d60ed1219e}, /* 1e273 */
  {0x93e1ab8252f33b45,0xcabb90e5c942b503}, /* 1e274 */
  {0xb8da1662e7b00a17,0x3d6a751f3b936243}, /* 1e275 */
  {0xe7109bfba19c0c9d,0x0cc512670a783ad4}, /* 1e276 */
  {0x906a617d450187e2,0x27fb2b80668b24c5}, /* 1e277 */
  {0xb484f9dc9641e9da,0xb1f9f660802dedf6}, /* 1e278 */
  {0xe1a63853bbd26451,0x5e7873f8a0396973}, /* 1e279 */
  {0x8d07e33455637eb2,0xdb0b487b6423e1e8}, /* 1e280 */
  {0xb049dc016abc5e5f,0x91ce1a9a3d2cda62}, /* 1e281 */
  {0xdc5c5301c56b75f7,0x7641a140cc7810fb}, /* 1e282 */
  {0x89b9b3e11b6329ba,0xa9e904c87fcb0a9d}, /* 1e283 */
  {0xac2820d9623bf429,0x546345fa9fbdcd44}, /* 1e284 */
  {0xd732290fbacaf133,0xa97c177947ad4095}, /* 1e285 */
  {0x867f59a9d4bed6c0,0x49ed8eabcccc485d}, /* 1e286 */
  {0xa81f301449ee8c70,0x5c68f256bfff5a74}, /* 1e287 */
  {0xd226fc195c6a2f8c,0x73832eec6fff3111}, /* 1e288 */
  {0x83585d8fd9c25db7,0xc831fd53c5ff7eab}, /* 1e289 */
  {0xa42e74f3d032f525,0xba3e7ca8b77f5e55}, /* 1e290 */
  {0xcd3a1230c43fb26f,0x28ce1bd2e55f35eb}, /* 1e291 */
  {0x80444b5e7aa7cf85,0x7980d163cf5b81b3}, /* 1e292 */
  {0xa0555e361951c366,0xd7e105bcc332621f}, /* 1e293 */
  {0xc86ab5c39fa63440,0x8dd9472bf3fefaa7}, /* 1e294 */
  {0xfa856334878fc150,0xb14f98f6f0feb951}, /* 1e295 */
  {0x9c935e00d4b9d8d2,0x6ed1bf9a569f33d3}, /* 1e296 */
  {0xc3b8358109e84f07,0x0a862f80ec4700c8}, /* 1e297 */
  {0xf4a642e14c6262c8,0xcd27bb612758c0fa}, /* 1e298 */
  {0x98e7e9cccfbd7dbd,0x8038d51cb897789c}, /* 1e299 */
  {0xbf21e44003acdd2c,0xe0470a63e6bd56c3}, /* 1e300 */
  {0xeeea5d5004981478,0x1858ccfce06cac74}, /* 1e301 */
  {0x95527a5202df0ccb,0x0f37801e0c43ebc8}, /* 1e302 */
  {0xbaa718e68396cffd,0xd30560258f54e6ba}, /* 1e303 */
  {0xe950df20247c83fd,0x47c6b82ef32a2069}, /* 1e304 */
  {0x91d28b7416cdd27e,0x4cdc331d57fa5441}, /* 1e305 */
  {0xb6472e511c81471d,0xe0133fe4adf8e952}, /* 1e306 */
  {0xe3d8f9e563a198e5,0x58180fddd97723a6}, /* 1e307 */
  {0x8e679c2f5e44ff8f,0x570f09eaa7ea7648}, /* 1e308 */
  {0xb201833b35d63f73,0x2cd2cc6551e513da}, /* 1e309 */
  {0xde81e40a034bcf4f,0xf8077f7ea65e58d1}, /* 1e310 */
  {0x8b112e86420f6191,0xfb04afaf27faf782}, /* 1e311 */
  {0xadd57a27d29339f6,0x79c5db9af1f9b563}, /* 1e312 */
  {0xd94ad8b1c7380874,0x18375281ae7822bc}, /* 1e313 */
  {0x87cec76f1c830548,0x8f2293910d0b15b5}, /* 1e314 */
  {0xa9c2794ae3a3c69a,0xb2eb3875504ddb22}, /* 1e315 */
  {0xd433179d9c8cb841,0x5fa60692a46151eb}, /* 1e316 */
  {0x849feec281d7f328,0xdbc7c41ba6bcd333}, /* 1e317 */
  {0xa5c7ea73224deff3,0x12b9b522906c0800}, /* 1e318 */
  {0xcf39e50feae16bef,0xd768226b34870a00}, /* 1e319 */
  {0x81842f29f2cce375,0xe6a1158300d46640}, /* 1e320 */
  {0xa1e53af46f801c53,0x60495ae3c1097fd0}, /* 1e321 */
  {0xca5e89b18b602368,0x385bb19cb14bdfc4}, /* 1e322 */
  {0xfcf62c1dee382c42,0x46729e03dd9ed7b5}, /* 1e323 */
  {0x9e19db92b4e31ba9,0x6c07a2c26a8346d1}, /* 1e324 */
  {0xc5a05277621be293,0xc7098b7305241885}, /* 1e325 */
  {0xf70867153aa2db38,0xb8cbee4fc66d1ea7}, /* 1e326 */
};

/*
** For a literal of 17 significant digits w*10^q on the common path (step
** 3b), the least w (10^16 <= w < 10^17) at which the interval of its
** double is as wide as 10^(q+1) or wider (10t <= 1, t as step 3 computes
** it from the table above), for -323 <= q <= 291: there 10t <= 1 if and
** only if w >= idemNumWide17[q+323].  (10t = 10^(q+1)/u, and u grows with
** w: t is tHi >> (sh+4), sh+4 = 14 + b - clz(w), b the top bit of step
** 3's product, which never falls as w grows.)  The test is the same as
** 10t <= 1, but made from w and one load, before step 3's two products
** and shifts: the digits decide it at random (a third of "%.17g"'s
** literals each way), and a mispredicted branch costs less the sooner it
** is decided.  The common path still tests 10t after it (a branch always
** predicted), so that a wrong entry here would cost time, never the
** output.  Generated by binary search over w for each q, with exact
** integers that compute t as the code does (Python):
**
**   def narrow(w, q):                 # 10t > 1, as the common path finds
**     tHi, tLo = pow10[q]             # the entry of idemNumPow10[]
**     lz = 64 - w.bit_length(); wn = w << lz; M = 2**64 - 1
**     uHi, uLo = wn*tHi >> 64, wn*tHi & M
**     f = wn*tLo >> 64; uLo2 = (uLo + f) & M; uHi += uLo2 < f
**     t = tHi >> (14 + (uHi >> 63) - lz)
**     return 10*t > 2**60
**   # idemNumWide17[q+323]: the least w in [10^16, 10^17) not narrow
*/
static const uint64_t idemNumWide17[615] = {
  71202363472230445ULL, 56961890777784356ULL, 45569512622227485ULL,
  72911220195563975ULL, 58328976156451180ULL, 46663180925160944ULL,
  74661089480257511ULL, 59728871584206009ULL, 47783097267364807ULL,
  76452955627783691ULL, 61162364502226953ULL, 48929891601781562ULL,
  78287826562850500ULL, 62630261250280400ULL, 50104209000224320ULL,
  80166734400358912ULL, 64133387520287129ULL, 51306710016229704ULL,
  82090736025967525ULL, 65672588820774020ULL, 52538071056619216ULL,
  84060913690590746ULL, 67248730952472597ULL, 53798984761978078ULL,
  86078375619164924ULL, 68862700495331939ULL, 55090160396265552ULL,
  88144256634024882ULL, 70515405307219906ULL, 56412324245775925ULL,
  45129859396620740ULL, 72207775034593184ULL, 57766220027674547ULL,
  46212976022139638ULL, 73940761635423420ULL, 59152609308338736ULL,
  47322087446670989ULL, 75715339914673582ULL, 60572271931738866ULL,
  48457817545391093ULL, 77532508072625748ULL, 62026006458100598ULL,
  49620805166480479ULL, 79393288266368766ULL, 63514630613095013ULL,
  50811704490476010ULL, 81298727184761616ULL, 65038981747809293ULL,
  52031185398247435ULL, 83249896637195895ULL, 66599917309756716ULL,
  53279933847805373ULL, 85247894156488597ULL, 68198315325190877ULL,
  54558652260152702ULL, 87293843616244323ULL, 69835074892995458ULL,
  55868059914396367ULL, 89388895863034187ULL, 71511116690427349ULL,
  57208893352341880ULL, 45767114681873504ULL, 73227383490997606ULL,
  58581906792798085ULL, 46865525434238468ULL, 74984840694781548ULL,
  59987872555825239ULL, 47990298044660191ULL, 76784476871456305ULL,
  61427581497165044ULL, 49142065197732036ULL, 78627304316371257ULL,
  62901843453097005ULL, 50321474762477604ULL, 80514359619964167ULL,
  64411487695971334ULL, 51529190156777067ULL, 82446704250843307ULL,
  65957363400674646ULL, 52765890720539717ULL, 84425425152863546ULL,
  67540340122290837ULL, 54032272097832670ULL, 86451635356532271ULL,
  69161308285225817ULL, 55329046628180654ULL, 88526474605089046ULL,
  70821179684071237ULL, 56656943747256989ULL, 45325554997805592ULL,
  72520887996488946ULL, 58016710397191157ULL, 46413368317752926ULL,
  74261389308404681ULL, 59409111446723745ULL, 47527289157378996ULL,
  76043662651806393ULL, 60834930121445115ULL, 48667944097156092ULL,
  77868710555449747ULL, 62294968444359798ULL, 49835974755487838ULL,
  79737559608780541ULL, 63790047687024433ULL, 51032038149619546ULL,
  81651261039391274ULL, 65321008831513019ULL, 52256807065210415ULL,
  83610891304336664ULL, 66888713043469332ULL, 53510970434775465ULL,
  85617552695640744ULL, 68494042156512595ULL, 54795233725210076ULL,
  87672373960336122ULL, 70137899168268898ULL, 56110319334615118ULL,
  89776510935384189ULL, 71821208748307351ULL, 57456966998645881ULL,
  45965573598916705ULL, 73544917758266728ULL, 58835934206613382ULL,
  47068747365290706ULL, 75309995784465129ULL, 60247996627572103ULL,
  48198397302057683ULL, 77117435683292292ULL, 61693948546633834ULL,
  49355158837307067ULL, 78968254139691307ULL, 63174603311753046ULL,
  50539682649402437ULL, 80863492239043899ULL, 64690793791235119ULL,
  51752635032988095ULL, 82804216052780952ULL, 66243372842224762ULL,
  52994698273779810ULL, 84791517238047695ULL, 67833213790438156ULL,
  54266571032350525ULL, 86826513651760840ULL, 69461210921408672ULL,
  55568968737126938ULL, 88910349979403100ULL, 71128279983522480ULL,
  56902623986817984ULL, 45522099189454387ULL, 72835358703127019ULL,
  58268286962501616ULL, 46614629570001293ULL, 74583407312002068ULL,
  59666725849601654ULL, 47733380679681324ULL, 76373409087490118ULL,
  61098727269992094ULL, 48878981815993675ULL, 78206370905589880ULL,
  62565096724471904ULL, 50052077379577524ULL, 80083323807324037ULL,
  64066659045859230ULL, 51253327236687384ULL, 82005323578699814ULL,
  65604258862959852ULL, 52483407090367881ULL, 83973451344588610ULL,
  67178761075670888ULL, 53743008860536711ULL, 85988814176858737ULL,
  68791051341486989ULL, 55032841073189592ULL, 88052545717103346ULL,
  70442036573682677ULL, 56353629258946142ULL, 45082903407156913ULL,
  72132645451451061ULL, 57706116361160849ULL, 46164893088928679ULL,
  73863828942285887ULL, 59091063153828709ULL, 47272850523062968ULL,
  75636560836900748ULL, 60509248669520599ULL, 48407398935616479ULL,
  77451838296986366ULL, 61961470637589093ULL, 49569176510071274ULL,
  79310682416114039ULL, 63448545932891231ULL, 50758836746312985ULL,
  81214138794100776ULL, 64971311035280621ULL, 51977048828224497ULL,
  83163278125159194ULL, 66530622500127355ULL, 53224498000101884ULL,
  85159196800163015ULL, 68127357440130412ULL, 54501885952104330ULL,
  87203017523366927ULL, 69762414018693542ULL, 55809931214954834ULL,
  89295889943927733ULL, 71436711955142187ULL, 57149369564113750ULL,
  45719495651291000ULL, 73151193042065599ULL, 58520954433652480ULL,
  46816763546921984ULL, 74906821675075174ULL, 59925457340060139ULL,
  47940365872048111ULL, 76704585395276978ULL, 61363668316221582ULL,
  49090934652977266ULL, 78545495444763625ULL, 62836396355810900ULL,
  50269117084648720ULL, 80430587335437952ULL, 64344469868350362ULL,
  51475575894680290ULL, 82360921431488463ULL, 65888737145190771ULL,
  52710989716152617ULL, 84337583545844186ULL, 67470066836675349ULL,
  53976053469340279ULL, 86361685550944447ULL, 69089348440755558ULL,
  55271478752604446ULL, 88434366004167113ULL, 70747492803333691ULL,
  56597994242666953ULL, 45278395394133562ULL, 72445432630613699ULL,
  57956346104490960ULL, 46365076883592768ULL, 74184123013748428ULL,
  59347298410998743ULL, 47477838728798994ULL, 75964541966078390ULL,
  60771633572862712ULL, 48617306858290170ULL, 77787690973264272ULL,
  62230152778611418ULL, 49784122222889134ULL, 79654595556622614ULL,
  63723676445298092ULL, 50978941156238473ULL, 81566305849981557ULL,
  65253044679985246ULL, 52202435743988197ULL, 83523897190381114ULL,
  66819117752304892ULL, 53455294201843913ULL, 85528470722950261ULL,
  68422776578360209ULL, 54738221262688167ULL, 87581154020301067ULL,
  70064923216240854ULL, 56051938572992683ULL, 89683101716788293ULL,
  71746481373430635ULL, 57397185098744508ULL, 45917748078995606ULL,
  73468396926392970ULL, 58774717541114376ULL, 47019774032891501ULL,
  75231638452626401ULL, 60185310762101121ULL, 48148248609680897ULL,
  77037197775489435ULL, 61629758220391548ULL, 49303806576313238ULL,
  78886090522101181ULL, 63108872417680945ULL, 50487097934144756ULL,
  80779356694631609ULL, 64623485355705288ULL, 51698788284564230ULL,
  82718061255302768ULL, 66174449004242214ULL, 52939559203393772ULL,
  84703294725430034ULL, 67762635780344028ULL, 54210108624275222ULL,
  86736173798840355ULL, 69388939039072284ULL, 55511151231257828ULL,
  88817841970012524ULL, 71054273576010019ULL, 56843418860808015ULL,
  45474735088646412ULL, 72759576141834260ULL, 58207660913467408ULL,
  46566128730773926ULL, 74505805969238282ULL, 59604644775390626ULL,
  47683715820312501ULL, 76293945312500001ULL, 61035156250000001ULL,
  48828125000000001ULL, 78125000000000001ULL, 62500000000000001ULL,
  50000000000000001ULL, 80000000000000001ULL, 64000000000000001ULL,
  51200000000000001ULL, 81920000000000001ULL, 65536000000000001ULL,
  52428800000000001ULL, 83886080000000001ULL, 67108864000000001ULL,
  53687091200000001ULL, 85899345920000001ULL, 68719476736000001ULL,
  54975581388800001ULL, 87960930222080001ULL, 70368744177664001ULL,
  56294995342131201ULL, 45035996273704961ULL, 72057594037927936ULL,
  57646075230342349ULL, 46116860184273880ULL, 73786976294838207ULL,
  59029581035870566ULL, 47223664828696453ULL, 75557863725914324ULL,
  60446290980731459ULL, 48357032784585167ULL, 77371252455336268ULL,
  61897001964269014ULL, 49517601571415211ULL, 79228162514264338ULL,
  63382530011411471ULL, 50706024009129177ULL, 81129638414606682ULL,
  64903710731685346ULL, 51922968585348277ULL, 83076749736557243ULL,
  66461399789245794ULL, 53169119831396635ULL, 85070591730234616ULL,
  68056473384187693ULL, 54445178707350155ULL, 87112285931760247ULL,
  69689828745408198ULL, 55751862996326558ULL, 89202980794122493ULL,
  71362384635297995ULL, 57089907708238396ULL, 45671926166590717ULL,
  73075081866545146ULL, 58460065493236117ULL, 46768052394588894ULL,
  74828883831342230ULL, 59863107065073784ULL, 47890485652059027ULL,
  76624777043294443ULL, 61299821634635555ULL, 49039857307708444ULL,
  78463771692333510ULL, 62771017353866808ULL, 50216813883093447ULL,
  80346902212949514ULL, 64277521770359612ULL, 51422017416287689ULL,
  82275227866060303ULL, 65820182292848242ULL, 52656145834278594ULL,
  84249833334845750ULL, 67399866667876600ULL, 53919893334301280ULL,
  86271829334882048ULL, 69017463467905638ULL, 55213970774324511ULL,
  88342353238919217ULL, 70673882591135374ULL, 56539106072908299ULL,
  45231284858326639ULL, 72370055773322623ULL, 57896044618658098ULL,
  46316835694926479ULL, 74106937111882366ULL, 59285549689505893ULL,
  47428439751604714ULL, 75885503602567542ULL, 60708402882054034ULL,
  48566722305643227ULL, 77706755689029163ULL, 62165404551223331ULL,
  49732323640978665ULL, 79571717825565863ULL, 63657374260452691ULL,
  50925899408362153ULL, 81481439053379444ULL, 65185151242703555ULL,
  52148120994162844ULL, 83436993590660551ULL, 66749594872528441ULL,
  53399675898022753ULL, 85439481436836404ULL, 68351585149469123ULL,
  54681268119575299ULL, 87490028991320477ULL, 69992023193056382ULL,
  55993618554445106ULL, 89589789687112169ULL, 71671831749689735ULL,
  57337465399751788ULL, 45869972319801431ULL, 73391955711682289ULL,
  58713564569345831ULL, 46970851655476665ULL, 75153362648762664ULL,
  60122690119010131ULL, 48098152095208105ULL, 76957043352332968ULL,
  61565634681866374ULL, 49252507745493100ULL, 78804012392788959ULL,
  63043209914231167ULL, 50434567931384934ULL, 80695308690215894ULL,
  64556246952172715ULL, 51644997561738172ULL, 82631996098781075ULL,
  66105596879024860ULL, 52884477503219888ULL, 84615164005151821ULL,
  67692131204121457ULL, 54153704963297166ULL, 86645927941275465ULL,
  69316742353020372ULL, 55453393882416298ULL, 88725430211866076ULL,
  70980344169492861ULL, 56784275335594289ULL, 45427420268475431ULL,
  72683872429560690ULL, 58147097943648552ULL, 46517678354918841ULL,
  74428285367870146ULL, 59542628294296117ULL, 47634102635436894ULL,
  76214564216699030ULL, 60971651373359224ULL, 48777321098687379ULL,
  78043713757899806ULL, 62434971006319845ULL, 49947976805055876ULL,
  79916762888089402ULL, 63933410310471521ULL, 51146728248377217ULL,
  81834765197403547ULL, 65467812157922838ULL, 52374249726338270ULL,
  83798799562141232ULL, 67039039649712986ULL, 53631231719770389ULL,
  85809970751632622ULL, 68647976601306098ULL, 54918381281044878ULL,
  87869410049671805ULL, 70295528039737444ULL, 56236422431789955ULL,
  89978275890863928ULL, 71982620712691143ULL, 57586096570152914ULL,
  46068877256122331ULL, 73710203609795730ULL, 58968162887836584ULL,
  47174530310269267ULL, 75479248496430828ULL, 60383398797144662ULL,
  48306719037715730ULL, 77290750460345167ULL, 61832600368276134ULL,
  49466080294620907ULL, 79145728471393451ULL, 63316582777114761ULL,
  50653266221691809ULL, 81045225954706894ULL, 64836180763765515ULL,
  51868944611012412ULL, 82990311377619860ULL, 66392249102095888ULL,
  53113799281676710ULL, 84982078850682736ULL, 67985663080546189ULL,
  54388530464436951ULL, 87021648743099122ULL, 69617318994479298ULL,
  55693855195583438ULL, 89110168312933501ULL, 71288134650346801ULL,
  57030507720277441ULL, 45624406176221953ULL, 72999049881955124ULL,
  58399239905564099ULL, 46719391924451280ULL, 74751027079122047ULL,
  59800821663297638ULL, 47840657330638110ULL, 76545051729020976ULL,
  61236041383216781ULL, 48988833106573425ULL, 78382132970517479ULL,
  62705706376413984ULL, 50164565101131187ULL, 80263304161809899ULL,
  64210643329447919ULL, 51368514663558336ULL, 82189623461693337ULL,
  65751698769354669ULL, 52601359015483736ULL, 84162174424773977ULL,
  67329739539819181ULL, 53863791631855345ULL, 86182066610968552ULL,
  68945653288774842ULL, 55156522631019873ULL, 88250436209631797ULL,
  70600348967705438ULL, 56480279174164350ULL, 45184223339331480ULL,
  72294757342930368ULL, 57835805874344295ULL, 46268644699475436ULL,
  74029831519160697ULL, 59223865215328558ULL, 47379092172262846ULL,
  75806547475620554ULL, 60645237980496443ULL, 48516190384397155ULL,
  77625904615035447ULL, 62100723692028358ULL, 49680578953622686ULL,
  79488926325796298ULL, 63591141060637038ULL, 50872912848509631ULL,
  81396660557615409ULL, 65117328446092327ULL, 52093862756873862ULL,
  83350180410998179ULL, 66680144328798543ULL, 53344115463038835ULL,
  85350584740862135ULL, 68280467792689708ULL, 54624374234151767ULL,
  87398998774642826ULL, 69919199019714261ULL, 55935359215771409ULL,
  89496574745234254ULL, 71597259796187404ULL, 57277807836949923ULL,
  45822246269559938ULL, 73315594031295901ULL, 58652475225036721ULL,
  46921980180029377ULL, 75075168288047003ULL, 60060134630437602ULL,
  48048107704350082ULL, 76876972326960131ULL, 61501577861568105ULL,
  49201262289254484ULL, 78722019662807174ULL, 62977615730245739ULL,
  50382092584196592ULL, 80611348134714546ULL, 64489078507771637ULL,
  51591262806217310ULL, 82546020489947695ULL, 66036816391958156ULL,
  52829453113566525ULL, 84527124981706440ULL, 67621699985365152ULL,
  54097359988292122ULL, 86555775981267394ULL, 69244620785013916ULL,
  55395696628011133ULL, 88633114604817812ULL, 70906491683854250ULL,
  56725193347083400ULL, 45380154677666720ULL, 72608247484266752ULL,
  58086597987413401ULL, 46469278389930721ULL, 74350845423889154ULL,
  59480676339111323ULL, 47584541071289059ULL, 76135265714062493ULL,
  60908212571249995ULL, 48726570056999996ULL, 77962512091199993ULL,
  62370009672959995ULL, 49896007738367996ULL, 79833612381388793ULL,
  63866889905111034ULL, 51093511924088828ULL, 81749619078542124ULL,
  65399695262833699ULL, 52319756210266960ULL, 83711609936427135ULL,
  66969287949141708ULL, 53575430359313367ULL, 85720688574901386ULL,
  68576550859921109ULL, 54861240687936887ULL, 87777985100699019ULL,
  70222388080559216ULL, 56177910464447373ULL, 89884656743115796ULL,
};

/*
** Return the high 64 bits of the 128-bit product a*b and store the low 64
** bits in *pLo.  The portable version is used where the compiler has no
** 128-bit integer, or when IDEMNUM_NO_INT128 is defined (to test it).
*/
#if defined(__SIZEOF_INT128__) && !defined(IDEMNUM_NO_INT128)
__extension__ typedef unsigned __int128 IdemNumU128;
static uint64_t idemNumMul128(uint64_t a, uint64_t b, uint64_t *pLo){
  IdemNumU128 p = (IdemNumU128)a * b;
  *pLo = (uint64_t)p;
  return (uint64_t)(p>>64);
}
#else
static uint64_t idemNumMul128(uint64_t a, uint64_t b, uint64_t *pLo){
  uint64_t aLo = (uint32_t)a, aHi = a>>32;
  uint64_t bLo = (uint32_t)b, bHi = b>>32;
  uint64_t ll = aLo*bLo, lh = aLo*bHi, hl = aHi*bLo, hh = aHi*bHi;
  uint64_t mid = (ll>>32) + (uint32_t)lh + (uint32_t)hl;
  *pLo = (mid<<32) | (uint32_t)ll;
  return hh + (lh>>32) + (hl>>32) + (mid>>32);
}
#endif

/* Number of leading zero bits of x, which is not zero. */
static int idemNumClz64(uint64_t x){
#if defined(__GNUC__)
  return __builtin_clzll(x);
#else
  int n = 0;
  if( (x>>32)==0 ){ n += 32; x <<= 32; }
  if( (x>>48)==0 ){ n += 16; x <<= 16; }
  if( (x>>56)==0 ){ n += 8;  x <<= 8;  }
  if( (x>>60)==0 ){ n += 4;  x <<= 4;  }
  if( (x>>62)==0 ){ n += 2;  x <<= 2;  }
  if( (x>>63)==0 ){ n += 1; }
  return n;
#endif
}

/* Number of trailing zero bits of x, which is not zero. */
static int idemNumCtz64(uint64_t x){
#if defined(__GNUC__)
  return __builtin_ctzll(x);
#else
  int n = 0;
  while( (x & 1)==0 ){ n++; x >>= 1; }
  return n;
#endif
}

/*
** floor(log2(10^e)), floor(log10(2^q)) and floor(log10(3/4 * 2^q)), by
** fixed-point multiplication.  Checked exhaustively for |e| <= 400 and
** |q| <= 1100, beyond what is needed here.
*/
static int idemNumFloorLog2Pow10(int e){
  return (int)(((int64_t)e * 913124641741LL) >> 38);
}
static int idemNumFloorLog10Pow2(int q){
  return (int)(((int64_t)q * 661971961083LL) >> 41);
}
static int idemNumFloorLog10ThreeQuartersPow2(int q){
  return (int)(((int64_t)q * 661971961083LL - 274743187321LL) >> 41);
}

/* The IEEE 754 binary64 layout: v = m * 2^e, m < 2^53. */
#define IDEMNUM_HIDDEN   ((uint64_t)1<<52)       /* the implicit mantissa bit */
#define IDEMNUM_EMIN     (-1074)                 /* e of subnormals and 0 */
#define IDEMNUM_EMAX     971                     /* e of the largest doubles */

/*
** Schubfach.  For the positive double v = c*2^q (c and q as stored: c has
** the hidden bit for normals, q == -1074 for subnormals), return s and set
** *pK so that s*10^*pK is the shortest decimal that reads back as v, the
** closest to v among those, the even one on a tie.  s may end in zeros.
*/
static uint64_t idemNumRoundToOdd(uint64_t gHi, uint64_t gLo, uint64_t cp){
  /* floor(g*cp / 2^128), with the lowest bit set if the fraction is not
  ** zero.  g over-estimates 10^-k by at most one unit, which adds less
  ** than 2^-64 to the product; a product that is not an integer has a
  ** fraction far from 0 and 1 (the paper), so a fraction below 2^-63
  ** means an exact integer. */
  uint64_t xLo, yLo;
  uint64_t xHi = idemNumMul128(gLo, cp, &xLo);
  uint64_t yHi = idemNumMul128(gHi, cp, &yLo);
  uint64_t z = yLo + xHi;
  return (yHi + (z<xHi)) | (z>1);
}
/*
** Step 5 with one product instead of Schubfach's three, for the doubles
** whose rounding interval is symmetric (c is not 2^52), subnormals
** included (the table holds the power of ten needed, up to 10^326):
** Jeon's refinement of Schubfach (Junekey Jeon, "Dragonbox: A New
** Floating-Point Binary-to-Decimal Conversion Algorithm", 2020), which
** gives the same answer: with k = floor(log10(2^q)), the multiple of
** 10^(k+1) in the interval if there is one, else the multiple of 10^k
** closest to v, the even one on a tie.  All in units of 10^(k-2), with
** x = 2-k, T the 128 bits 10^x * 2^(127-floor(log2(10^x))) rounded up
** (the table entry plus one, but for 10^0 .. 10^55, which it holds
** exactly) and b = q + floor(log2(10^x)), from 6 to 9 (the paper proves
** each step below for every binary64 exponent):
**   zi = the integer part of the interval's right end (c+1/2)*2^q*10^x,
**     the top word of ((2c+1) << b) * T / 2^128 (the top 128 bits of
**     that 192-bit product), an integer if the word below it is 0;
**   deltai = tHi >> (63-b), the integer part of the interval's width
**     2^q*10^x, 100 <= deltai < 1000.
** 1. s = floor(zi/1000), r = zi - 1000s.  The multiple 1000s of 10^(k+1)
**    is in the interval if r < deltai (but if r = 0, zi is exact and the
**    right end is excluded, c odd: then step 2 from 1000(s-1)), not if
**    r > deltai, and if r = deltai if the left end's fraction is at most
**    zi's, which the parity of the left end's integer part
**    (2c-1)*2^(q-1)*10^x (the bit b of the low 128 bits of the product,
**    idemNumParity()) tells, or if the left end is an integer and
**    included (c even).
** 2. Else the multiple of 10^k (100 units) closest to v:
**    s*10 + floor(dist/100), dist = r - deltai/2 + 50, which is it but
**    when dist is a multiple of 100: then the parity of v's integer part
**    2c*2^(q-1)*10^x says whether v is below the candidate (one less),
**    and if v is on it, a tie, the even one.
** Returns s, and *pK as idemNumShortest() does (s may end in zeros).
*/
static IDEMNUM_INLINE int idemNumParity(
  uint64_t a, uint64_t tHi, uint64_t tLo, int b, int *pInt
){
  /* The low 128 bits of a*T: the bit b from the top is the parity of
  ** a*2^(q-1)*10^x, the bits below it its fraction (0: an integer). */
  uint64_t pl, ph = a*tHi + idemNumMul128(a, tLo, &pl);
  *pInt = ((ph << b) | (pl >> (64-b)))==0;
  return (int)(ph >> (64-b)) & 1;
}
static IDEMNUM_INLINE uint64_t idemNumShortestOne(uint64_t c, int q,
                                                  int *pK){
  int k = idemNumFloorLog10Pow2(q);
  int x = 2 - k;
  int b = q + idemNumFloorLog2Pow10(x);
  const uint64_t *t = idemNumPow10[x - IDEMNUM_POW10_MIN];
  uint64_t tHi = t[0];
  uint64_t tLo = t[1] + ((unsigned)x>55);   /* rounded up */
  uint64_t zi, lo, lo2, hi2, s;
  uint32_t deltai, r, dist;
  int isInt;
  assert( b>=6 && b<=9 && x<=IDEMNUM_POW10_MAX );
  deltai = (uint32_t)(tHi >> (63 - b));
  zi = idemNumMul128((2*c+1)<<b, tHi, &lo);
  hi2 = idemNumMul128((2*c+1)<<b, tLo, &lo2);
  lo += hi2;
  zi += lo<hi2;
  s = zi/1000;
  r = (uint32_t)(zi - 1000*s);
  if( r<deltai ){
    if( r==0 && lo==0 && (c & 1) ){
      s--;                                /* the right end, excluded */
      r = 1000;
      goto step2;
    }
  }else if( r>deltai ){
    goto step2;
  }else{
    int odd = idemNumParity(2*c-1, tHi, tLo, b, &isInt);
    if( !odd && !(isInt && (c & 1)==0) ) goto step2;
  }
  *pK = k + 1;
  return s;

step2:
  dist = r - deltai/2 + 50;
  s = s*10 + dist/100;
  if( dist%100==0 ){
    /* v's integer part is odd if v is at or above the candidate */
    int odd = idemNumParity(2*c, tHi, tLo, b, &isInt);
    if( odd!=(int)((dist ^ 50) & 1) ){
      s--;
    }else if( isInt && (s & 1) ){
      s--;                                /* a tie: the even one */
    }
  }
  *pK = k;
  return s;
}
static IDEMNUM_INLINE uint64_t idemNumShortest(uint64_t c, int q, int *pK){
  uint64_t out, cb, cbl, cbr, vb, vbl, vbr, s, t, gHi, gLo;
  int k, h, uin, win;

  /* Integers below 2^53: the only integer in the rounding interval (of
  ** width at most 1/2) is v itself, and every other decimal in it is
  ** longer. */
  if( q<0 && q>-53 ){
    uint64_t f = c >> -q;
    if( (f << -q)==c ){
      *pK = 0;
      return f;
    }
  }

  /* Nearly every double: one product (idemNumShortestOne()), the
  ** subnormals too (q = -1074: 10^x is 10^326, the table's last entry;
  ** they took Schubfach's three products, which cost subnormals "%.17g"
  ** below 1e-309 0.26x json()'s instructions); Schubfach below for
  ** c = 2^52 (an interval narrower below). */
  if( c!=IDEMNUM_HIDDEN ){
    return idemNumShortestOne(c, q, pK);
  }

  /* The rounding interval is [cbl, cbr]/4 * 2^q around cb/4 * 2^q, with
  ** its ends included when c is even (out==0).  It is narrower below
  ** than above when c is a power of two, except for the least exponent. */
  out = c & 1;
  cb = c << 2;
  cbr = cb + 2;
  if( c!=IDEMNUM_HIDDEN || q==IDEMNUM_EMIN ){
    cbl = cb - 2;
    k = idemNumFloorLog10Pow2(q);
  }else{
    cbl = cb - 1;
    k = idemNumFloorLog10ThreeQuartersPow2(q);
  }

  /* vb, vbl, vbr: 4*v/10^k and the interval ends scaled alike, rounded to
  ** odd.  With g = 10^-k * 2^(127 - floor(log2(10^-k))) the scaling needs
  ** a shift of h = q + floor(log2(10^-k)) + 1, which is 1 to 4. */
  h = q + idemNumFloorLog2Pow10(-k) + 1;
  gHi = idemNumPow10[-k - IDEMNUM_POW10_MIN][0];
  gLo = idemNumPow10[-k - IDEMNUM_POW10_MIN][1] + 1;
  vb  = idemNumRoundToOdd(gHi, gLo, cb << h);
  vbl = idemNumRoundToOdd(gHi, gLo, cbl << h);
  vbr = idemNumRoundToOdd(gHi, gLo, cbr << h);
  *pK = k;

  /* A multiple of 10^(k+1) in the interval is the unique shortest. */
  s = vb >> 2;
  if( s>=10 ){
    uint64_t sp10 = (s/10)*10;
    uint64_t tp10 = sp10 + 10;
    int upin = vbl + out <= (sp10<<2);
    int wpin = (tp10<<2) + out <= vbr;
    if( upin!=wpin ) return upin ? sp10 : tp10;
  }

  /* Otherwise s or s+1, whichever is in the interval, or the closer one. */
  t = s + 1;
  uin = vbl + out <= (s<<2);
  win = (t<<2) + out <= vbr;
  if( uin!=win ) return uin ? s : t;
  if( vb<((s+t)<<1) || (vb==((s+t)<<1) && (s&1)==0) ) return s;
  return t;
}

/* The 8 digits of v < 10^8, leading zeros included, into z[0..8), all
** at once: the halves of 4 digits in two 32-bit lanes of a word, split
** into pairs in 16-bit lanes, then into digits in bytes, the first digit
** in the lowest byte.  The quotients are exact: floor(x*10486 / 2^20) is
** floor(x/100) for x < 10^4, and floor(x*103 / 2^10) is floor(x/10) for
** x < 100; no lane's product reaches the next lane, and what a shift
** brings down from the lane above is masked off. */
static IDEMNUM_INLINE void idemNumPut8(char *z, uint32_t v){
  uint64_t x = (uint64_t)(v/10000) | (uint64_t)(v%10000)<<32;
  uint64_t y = ((x*10486)>>20) & 0x0000007f0000007fULL;
  x = y | (x - y*100)<<16;
  y = ((x*103)>>10) & 0x000f000f000f000fULL;
  x = (y | (x - y*10)<<8) + 0x3030303030303030ULL;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_LITTLE_ENDIAN__
  memcpy(z, &x, 8);
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_BIG_ENDIAN__ \
   && defined(__GNUC__)
  x = __builtin_bswap64(x);
  memcpy(z, &x, 8);
#else
  z[0] = (char)x;        z[1] = (char)(x>>8);
  z[2] = (char)(x>>16);  z[3] = (char)(x>>24);
  z[4] = (char)(x>>32);  z[5] = (char)(x>>40);
  z[6] = (char)(x>>48);  z[7] = (char)(x>>56);
#endif
}

/* idemNumMask[8+i]: the low i bytes of a word, for 0 <= i <= 8;
** idemNumMask[i] is 0 below 8 and idemNumMask[8+i] all ones above 16. */
static const uint64_t idemNumMask[25] = {
  0, 0, 0, 0, 0, 0, 0, 0,
  0, 0xff, 0xffff, 0xffffff, 0xffffffffULL, 0xffffffffffULL,
  0xffffffffffffULL, 0xffffffffffffffULL,
  ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL
};

/* The value of the 8 digits z[0..8).  (Four short chains rather than one
** long one: this is on the hot path.) */
static uint32_t idemNumGet8(const char *z){
  uint32_t a = (uint32_t)(z[0]-'0')*10 + (uint32_t)(z[1]-'0');
  uint32_t b = (uint32_t)(z[2]-'0')*10 + (uint32_t)(z[3]-'0');
  uint32_t c = (uint32_t)(z[4]-'0')*10 + (uint32_t)(z[5]-'0');
  uint32_t d = (uint32_t)(z[6]-'0')*10 + (uint32_t)(z[7]-'0');
  return (a*100 + b)*10000 + c*100 + d;
}

/* The value of the n <= 19 decimal digits z[0..n). */
static uint64_t idemNumDigitsValue(const char *z, int n){
  uint64_t w = 0;
  int i;
  for(i=0; i+8<=n; i+=8) w = w*100000000 + idemNumGet8(z+i);
  if( i+4<=n ){
    w = w*10000 + (uint64_t)((z[i]-'0')*1000 + (z[i+1]-'0')*100
                             + (z[i+2]-'0')*10 + (z[i+3]-'0'));
    i += 4;
  }
  for(; i<n; i++) w = w*10 + (uint64_t)(z[i]-'0');
  return w;
}

/* The 8 bytes at z as a little-endian word, z[0] in the lowest byte, on
** every machine (compilers make this one load, and a byte swap on a
** big-endian machine). */
static IDEMNUM_INLINE uint64_t idemNumLoad8(const char *z){
  const unsigned char *u = (const unsigned char*)z;
  return (uint64_t)u[0]       | (uint64_t)u[1]<<8  | (uint64_t)u[2]<<16
       | (uint64_t)u[3]<<24   | (uint64_t)u[4]<<32 | (uint64_t)u[5]<<40
       | (uint64_t)u[6]<<48   | (uint64_t)u[7]<<56;
}

/* The index of the first byte of z[i..n) that is not a '0': an exponent's
** leading zeros ("1.5e+0000000010"), skipped 8 at a time while 8 remain,
** then one at a time.  n if all are zeros. */
static IDEMNUM_INLINE int idemNumSkipZeros(const char *z, int i, int n){
  while( n-i>=8 ){
    uint64_t x = idemNumLoad8(z+i) ^ 0x3030303030303030ULL;
    if( x ) return i + (idemNumCtz64(x)>>3);
    i += 8;
  }
  while( i<n && z[i]=='0' ) i++;
  return i;
}

/* The index of the first byte of z[i..n) that is not a digit, n if all
** are, z[0..n) a validated literal: 8 bytes at a time while 8 remain (the
** long fraction of a literal that leaves the common path,
** "0.1000000000000000055511151231257827..."), then one at a time.  The
** bytes of a literal that are not digits, ". e E + -", have a high
** nibble other than 3, the digits' one. */
static IDEMNUM_INLINE int idemNumSkipDigits(const char *z, int i, int n){
  while( n-i>=8 ){
    uint64_t y = (idemNumLoad8(z+i) & 0xf0f0f0f0f0f0f0f0ULL)
               ^ 0x3030303030303030ULL;
    if( y ) return i + (idemNumCtz64(y)>>3);
    i += 8;
  }
  while( i<n && z[i]>='0' && z[i]<='9' ) i++;
  return i;
}

/* idemNumSkipZeros() for the zeros of a decimal 0.000ddd with an exponent
** ("0.000000000518e-334": 1 to 40 of them and more, at random), z[i] the
** first byte after "0.", whose first byte not '0' is before z[n]: with
** SSE2 and 16 bytes or more from z[i], one mask of the '0's among the 48
** bytes from z[i] (as many as the literal has), from three loads of 16,
** the last two moved back to end at z[n] where the literal is shorter, and
** their bits shifted as far; then the first bit clear.  The loop of 8
** bytes at a time left at a number of steps the digits decide, a branch
** mispredicted about once a literal there (callgrind's model: 1.4 times,
** the tail loop's included); here one branch, which a run of 48 zeros
** takes (on to idemNumSkipZeros()). */
static IDEMNUM_INLINE int idemNumSkipZeros48(const char *z, int i, int n){
#if defined(IDEM_SSE2) && defined(__x86_64__)
  if( n-i>=16 ){
    const __m128i c0 = _mm_set1_epi8('0');
    int i1 = i+16<n-16 ? i+16 : n-16;
    int i2 = i+32<n-16 ? i+32 : n-16;
    uint64_t m0 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(
                      _mm_loadu_si128((const __m128i*)(z+i)), c0));
    uint64_t m1 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(
                      _mm_loadu_si128((const __m128i*)(z+i1)), c0));
    uint64_t m2 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(
                      _mm_loadu_si128((const __m128i*)(z+i2)), c0));
    int k = idemNumCtz64(~(m0 | m1<<(i1-i) | m2<<(i2-i)));
    if( IDEMNUM_LIKELY(k<48) ) return i + k;
    return idemNumSkipZeros(z, i+48, n);
  }
#endif
  return idemNumSkipZeros(z, i, n);
}

/* The value of the 8 digits in c (as idemNumLoad8() reads them: the first
** digit in the lowest byte; a byte that is 0 counts as a digit 0), 8 at a
** time: the low nibbles of the bytes, joined into pairs of digits in 16-bit
** lanes, then pairs of pairs in 32-bit lanes, then the two halves.  No lane
** overflows into the next: 10*9+9, 100*99+99 and 10^4*9999+9999 fit. */
static IDEMNUM_INLINE uint32_t idemNumSwar8(uint64_t c){
  c = ((c & 0x0f0f0f0f0f0f0f0fULL) * (10*256 + 1)) >> 8;
  c = ((c & 0x00ff00ff00ff00ffULL) * (100*65536 + 1)) >> 16;
  return (uint32_t)(((c & 0x0000ffff0000ffffULL)
                     * (10000*4294967296ULL + 1)) >> 32);
}

/* idemNumLoad8() and idemNumSwar8() for 4 bytes and up to 4 digits, and
** the 4 bytes of a word into z[0..4), the lowest byte first. */
static IDEMNUM_INLINE uint32_t idemNumLoad4(const char *z){
  const unsigned char *u = (const unsigned char*)z;
  return (uint32_t)u[0] | (uint32_t)u[1]<<8 | (uint32_t)u[2]<<16
       | (uint32_t)u[3]<<24;
}
static IDEMNUM_INLINE uint32_t idemNumSwar4(uint32_t c){
  c = ((c & 0x0f0f0f0f) * (10*256 + 1)) >> 8;
  return ((c & 0x00ff00ff) * (100*65536 + 1)) >> 16;
}
static IDEMNUM_INLINE void idemNumStore4(char *z, uint32_t x){
  z[0] = (char)x;
  z[1] = (char)(x>>8);
  z[2] = (char)(x>>16);
  z[3] = (char)(x>>24);
}

/* The value of the 16 digits in c0 then c1 (each as idemNumSwar8() takes
** it): idemNumSwar8() of each, times 10^8 for the first.  With SSE2 both
** words go through the same three steps at once: pairs of digits in 16-bit
** lanes (pmullw), pairs of pairs in 32-bit lanes (pmaddwd), then 8 digits
** in 64-bit lanes (pmuludq), the same arithmetic as idemNumSwar8(). */
#if defined(IDEM_SSE2) && defined(__x86_64__)
/* idemNumSwar16() of the 16 digits in x, c0 in its low half */
static IDEMNUM_INLINE uint64_t idemNumSwar16x(__m128i x){
  x = _mm_and_si128(x, _mm_set1_epi8(0x0f));
  x = _mm_srli_epi16(_mm_mullo_epi16(x, _mm_set1_epi16(10*256 + 1)), 8);
  x = _mm_madd_epi16(x, _mm_set1_epi32(100 + 65536));
  x = _mm_add_epi64(_mm_mul_epu32(x, _mm_set1_epi64x(10000)),
                    _mm_srli_epi64(x, 32));
  return (uint64_t)_mm_cvtsi128_si64(x)*100000000
       + (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x));
}
#endif
static IDEMNUM_INLINE uint64_t idemNumSwar16(uint64_t c0, uint64_t c1){
#if defined(IDEM_SSE2) && defined(__x86_64__)
  return idemNumSwar16x(_mm_set_epi64x((long long)c1, (long long)c0));
#else
  return (uint64_t)idemNumSwar8(c0)*100000000 + idemNumSwar8(c1);
#endif
}

/* idemNumExpText[a], for 0 <= a <= 324: the decimal digits of a (no
** leading zero) in its low bytes, the first in the lowest, and their
** number in its top byte. */
#define IDEMNUM_E(a) ((a)>=100 \
  ? (0x30u+(a)/100) | (0x30u+(a)/10%10)<<8 | (0x30u+(a)%10)<<16 | 3u<<24 \
  : (a)>=10 ? (0x30u+(a)/10) | (0x30u+(a)%10)<<8 | 2u<<24 \
  : (0x30u+(a)) | 1u<<24)
#define IDEMNUM_E10(a) IDEMNUM_E(a), IDEMNUM_E(a+1), IDEMNUM_E(a+2), \
  IDEMNUM_E(a+3), IDEMNUM_E(a+4), IDEMNUM_E(a+5), IDEMNUM_E(a+6), \
  IDEMNUM_E(a+7), IDEMNUM_E(a+8), IDEMNUM_E(a+9)
#define IDEMNUM_E100(a) IDEMNUM_E10(a), IDEMNUM_E10(a+10), \
  IDEMNUM_E10(a+20), IDEMNUM_E10(a+30), IDEMNUM_E10(a+40), \
  IDEMNUM_E10(a+50), IDEMNUM_E10(a+60), IDEMNUM_E10(a+70), \
  IDEMNUM_E10(a+80), IDEMNUM_E10(a+90)
static const uint32_t idemNumExpText[325] = {
  IDEMNUM_E100(0), IDEMNUM_E100(100), IDEMNUM_E100(200),
  IDEMNUM_E10(300), IDEMNUM_E10(310), IDEMNUM_E(320), IDEMNUM_E(321),
  IDEMNUM_E(322), IDEMNUM_E(323), IDEMNUM_E(324)
};

/* "e+NN" or "e-NN" for the exponent L of a value written d.ddde+NN, as
** ECMAScript writes it (no leading zero), into z; its length (3 to 5).
** Writes 6 bytes. */
static IDEMNUM_INLINE int idemNumPutExp(char *z, int L){
  uint32_t x = idemNumExpText[L<0 ? -L : L];     /* 7 to 324 */
  z[0] = 'e';
  z[1] = (char)('+' + 2*(L<0));       /* '+' or '-' */
  idemNumStore4(z+2, x);
  return 2 + (int)(x>>24);
}

static const uint64_t idemNumPow10Int[20] = {
  1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
  10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
  100000000000ULL, 1000000000000ULL, 10000000000000ULL,
  100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
  100000000000000000ULL, 1000000000000000000ULL,
  10000000000000000000ULL
};

/*
** Lay out the decimal 0.D * 10^n, where D is zDig[0..nDig), nDig <= 17,
** with no trailing zeros, as ECMA-262 Number::toString does.  The text is
** at most 26 bytes, but the copies are of fixed sizes (no calls), so that
** zDig[0..32) must be readable and zOut must have room for 40 bytes.
*/
static IDEMNUM_INLINE int idemNumLayout(
  char *zOut,                       /* Write here */
  int neg,                          /* Nonzero for a '-' */
  const char *zDig, int nDig,       /* The digits D, no trailing zeros */
  int n                             /* The value is 0.D * 10^n */
){
  char *z = zOut;
  *z = '-';                         /* kept only if neg: no branch */
  z += neg!=0;
  assert( nDig>=1 && nDig<=17 );
  if( nDig<=n && n<=21 ){
    /* An integer below 1e21: all digits, then zeros. */
    memcpy(z, zDig, 17);
    memset(z+nDig, '0', 21);
    z += n;
  }else if( 0<n && n<=21 ){
    /* ddd.ddd (n < nDig, so n <= 16 and nDig-n <= 16) */
    memcpy(z, zDig, 16);
    z[n] = '.';
    memcpy(z+n+1, zDig+n, 16);
    z += nDig+1;
  }else if( -6<n && n<=0 ){
    /* 0.000ddd, for 1e-6 <= |v| < 1 */
    memcpy(z, "0.00000", 8);
    memcpy(z+2-n, zDig, 17);
    z += 2-n+nDig;
  }else{
    /* d.ddde+NN or d.ddde-NN (7 <= |n-1| <= 324) */
    *(z++) = zDig[0];
    if( nDig>1 ){
      *(z++) = '.';
      memcpy(z, zDig+1, 16);
      z += nDig-1;
    }
    z += idemNumPutExp(z, n-1);
  }
  return (int)(z - zOut);
}

/* The 17 digits of s < 10^17, leading zeros included, into z[0..17).
** With SSE2 the last 16 go through idemNumPut8()'s steps at once, in
** 16-bit lanes: four groups of 4 digits (32-bit lanes, below 10^4), each
** split into pairs (floor(x*5243 / 2^19) is floor(x/100) for x < 10^4),
** then into digits (floor(y*6554 / 2^16) is floor(y/10) for y < 100),
** the first of each pair in the lower byte. */
static IDEMNUM_INLINE void idemNumPut17(char *z, uint64_t s){
  uint32_t hi, lo;
  assert( s<100000000000000000ULL );
  z[0] = (char)('0' + s/10000000000000000ULL);
  s %= 10000000000000000ULL;
  hi = (uint32_t)(s/100000000);
  lo = (uint32_t)(s%100000000);
#if defined(IDEM_SSE2) && defined(__x86_64__)
  {
    /* hi and lo split at 10^4 in their 64-bit lanes at once
    ** (floor(x*3518437209 / 2^45) is floor(x/10^4) for x < 10^8), the
    ** quotient in the low 32 bits, the remainder in the high */
    __m128i x = _mm_set_epi64x((long long)lo, (long long)hi);
    __m128i q = _mm_srli_epi64(
        _mm_mul_epu32(x, _mm_set1_epi64x(3518437209LL)), 45);
    x = _mm_or_si128(q, _mm_slli_epi64(
        _mm_sub_epi64(x, _mm_mul_epu32(q, _mm_set1_epi64x(10000))), 32));
    q = _mm_srli_epi16(_mm_mulhi_epu16(x, _mm_set1_epi32(5243)), 3);
    __m128i y = _mm_sub_epi16(x, _mm_mullo_epi16(q, _mm_set1_epi16(100)));
    y = _mm_or_si128(q, _mm_slli_epi32(y, 16));
    q = _mm_mulhi_epu16(y, _mm_set1_epi16(6554));
    y = _mm_sub_epi16(y, _mm_mullo_epi16(q, _mm_set1_epi16(10)));
    y = _mm_or_si128(q, _mm_slli_epi16(y, 8));
    _mm_storeu_si128((__m128i*)(z+1), _mm_add_epi8(y, _mm_set1_epi8('0')));
  }
#else
  idemNumPut8(z+1, hi);
  idemNumPut8(z+9, lo);
#endif
}

/*
** Step 5 and the layout for the positive double c*2^q (c and q as stored:
** see idemNumShortest()), with a '-' in front if neg.
*/
static IDEMNUM_INLINE int idemNumFormatParts(
  int neg, uint64_t c, int q, char *zOut
){
  uint64_t s;
  int k, nDig, t;
  char aBuf[48];                       /* 17 digits, and readable slack */
  const char *zDig;

  s = idemNumShortest(c, q, &k);

  /* The 17 digits of s (0 < s < 10 * 2^53 < 10^17), leading zeros
  ** included; its nDig digits are the last ones (t = floor(log10(2^b)),
  ** b the bits of s, is its digit count or one less), then without the
  ** zeros at its end. */
  assert( s>0 );
  idemNumPut17(aBuf, s);
  t = ((64 - idemNumClz64(s))*1233) >> 12;
  nDig = t + (s>=idemNumPow10Int[t]);
  zDig = aBuf + 17 - nDig;
  k += nDig;
#if defined(IDEM_SSE2) && defined(__x86_64__)
  {
    /* The zeros at the end counted at once, with no loop whose length
    ** the digits decide: among aBuf[1..17), where the first of the nDig
    ** digits (not 0) is if nDig <= 16, and all 16 may be 0 if nDig is
    ** 17 (s = d*10^16) */
    uint32_t mz = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(
        _mm_loadu_si128((const __m128i*)(aBuf+1)), _mm_set1_epi8('0')));
    nDig -= idemNumClz64((uint64_t)(~mz & 0xffff)<<48 | (uint64_t)1<<47);
  }
#else
  while( zDig[nDig-1]=='0' ) nDig--;
#endif
  return idemNumLayout(zOut, neg, zDig, nDig, k);
}

/*
** ECMAScript Number::toString of the finite double v.
*/
IDEM_PRIVATE int idemNumberFormat(double v, char *zOut){
  uint64_t bits, c;
  int be, q;

  memcpy(&bits, &v, sizeof(bits));
  be = (int)(bits>>52) & 0x7ff;
  c = bits & (IDEMNUM_HIDDEN-1);
  assert( be!=0x7ff );                 /* v is finite */
  if( be==0 ){
    if( c==0 ){                        /* +0 and -0 */
      zOut[0] = '0';
      return 1;
    }
    q = IDEMNUM_EMIN;
  }else{
    c |= IDEMNUM_HIDDEN;
    q = be - 1075;
  }
  return idemNumFormatParts((int)(bits>>63), c, q, zOut);
}

/*
** Step 3: the double nearest to w*10^q, for 0 < w < 2^64 and
** IDEMNUM_POW10_MIN <= q <= 308, as m*2^e (m and e as in the IEEE layout
** comment above; a subnormal has e = IDEMNUM_EMIN and m < 2^52, and
** idemNumBits() makes the bits of either).  Return 1 if that is certainly
** the correctly rounded result, finite.  Return 0 if not; m*2^e is then still within
** a few units of the last place of it (clamped to the largest double),
** a starting point for idemNumBigCorrect().
*/
static IDEMNUM_INLINE uint64_t idemNumBits(uint64_t m, int e){
  /* e+1074 is the biased exponent less one, and m's bit 52 (set unless
  ** subnormal) adds that one back. */
  return ((uint64_t)(e+1074)<<52) + m;
}
/* The top 128 bits of w*T (uHi returned, uLo in *pLo), T the 128-bit
** table entry t[0]:t[1] of a power of ten: step 3's U for a w shifted
** left until its top bit is set. */
static IDEMNUM_INLINE uint64_t idemNumProduct(uint64_t w, const uint64_t *t,
                                              uint64_t *pLo){
  uint64_t lo, r, x;
  uint64_t hi = idemNumMul128(w, t[0], &lo);
  x = idemNumMul128(w, t[1], &r);
  lo += x;
  *pLo = lo;
  return hi + (lo<x);
}
static IDEMNUM_INLINE int idemNumEiselLemireAt(
  uint64_t w, int q, uint64_t *pM, int *pE, int d, int *pShort,
  uint64_t *pGT
){
  const uint64_t *t = idemNumPow10[q - IDEMNUM_POW10_MIN];
  int lz = idemNumClz64(w);
  uint64_t uHi, uLo, m, r, half;
  int sh, e, ok;

  /* U = uHi:uLo = the top 128 bits of (w << lz) * t, with w*10^q equal to
  ** (U + d) * 2^(floor(log2(10^q)) - 63 - lz) for some 0 <= d < 2. */
  w <<= lz;
  uHi = idemNumProduct(w, t, &uLo);

  /* U has 127 or 128 significant bits.  Keep the top 53 in m; below them
  ** are sh+64 bits, the first one being the rounding bit.  The rounding
  ** is undecided if those bits are half or just below half, as d might
  ** push them to half (a tie) or over it. */
  sh = 10 + (int)(uHi>>63);
  e = sh + 1 + idemNumFloorLog2Pow10(q) - lz;
  if( e<IDEMNUM_EMIN ){
    /* Subnormal: the value is m*2^EMIN with fewer than 53 bits in m, so
    ** the rounding bit is higher in U, EMIN-e bits up, and the same test
    ** decides it (U is still less than 2 units short of the exact
    ** product).  m may round up to 2^52, the least normal double, whose
    ** bits are m as well.  Beyond 63 bits (below about 2^-1075, the
    ** bound where everything rounds to 0 or to the least subnormal) it
    ** is left to the exact comparison. */
    sh += IDEMNUM_EMIN - e;
    e = IDEMNUM_EMIN;
    if( sh>63 ){
      *pM = 0;
      *pE = e;
      return 0;
    }
  }
  m = uHi >> sh;
  r = uHi & (((uint64_t)1<<sh) - 1);
  half = (uint64_t)1 << (sh-1);
  ok = !((r==half && uLo==0) || (r==half-1 && uLo==~(uint64_t)0));
  /* (Rounded up with no branch: above half or not falls at random, a
  ** branch mispredicted every other time there) */
  m += r + (uLo!=0)>half;           /* r>half, or r==half and uLo!=0 */
  if( m==(IDEMNUM_HIDDEN<<1) ){
    m = IDEMNUM_HIDDEN;
    e++;
  }
  if( e>IDEMNUM_EMAX ){
    /* Overflow, or close to it. */
    m = (IDEMNUM_HIDDEN<<1) - 1;
    e = IDEMNUM_EMAX;
    ok = 0;
  }
  *pM = m;
  *pE = e;
  if( d ){
    /* Step 3b's test, for a w whose last digit d is not 0, x = w*10^q,
    ** written as at the common path with the same G and t, where sh (and
    ** e) may have moved up for a subnormal: the bits below m are still
    ** f, the sh bits of uHi below m and then uLo's (G's error, less than
    ** 2 units of U, is less than 2 units of f), and u = 2^e as well, so
    ** that t*2^60 is tHi >> (sh+4-lz) here too (2^60 or more if that
    ** shift is 3 or less: tHi >= 2^63).  A subnormal's interval is
    ** [v-u/2, v+u/2] whatever m (only m = 2^52 above 2^-1022 has a
    ** narrower one below, and the test below leaves out m = 2^52 and
    ** m = 0); the largest double's too (v+u/2 rounds to infinity: m is
    ** odd).  ok is 0 on an overflow or an undecided rounding. */
    const uint64_t one = (uint64_t)1<<60;
    uint64_t f = uHi<<(64-sh) | uLo>>sh;
    uint64_t g = f + ((uint64_t)1<<63), ti;
    int s4 = sh + 4 - lz;
    int edge = g+1<=1;                /* G is 0 or 2^64-1 */
    ti = s4<=3 ? one : s4>=64 ? 0 : t[0]>>s4;
    g >>= 4;
    *pShort = ok && !edge && (m & (IDEMNUM_HIDDEN-1))!=0
      && (ti>=one || (g+2<=(uint64_t)d*ti
                      && (uint64_t)(10-d)*ti + g > one
                      && 2*g+4<=one+ti
                      && 2*g+ti>one));
    if( pGT ){
      /* gi and ti for the rest of step 3b (idemNumTiny3()), and whether
      ** they may be used */
      pGT[0] = g;
      pGT[1] = ti;
      pGT[2] = ok && !edge && (m & (IDEMNUM_HIDDEN-1))!=0;
    }
  }
  return ok;
}
#define idemNumEiselLemire(w, q, pM, pE) \
  idemNumEiselLemireAt(w, q, pM, pE, 0, 0, 0)

/*
** Step 4: fixed-size big integers, least significant limb first.  The
** limbs are 64 bits wide where the compiler has a 128-bit integer for
** their products, else 32 bits wide (the same code, with the types and
** constants below).  The digits are read IDEMNUM_CHUNK at once (16 or 8:
** 10^CHUNK fits a limb, and idemNumSwar16() or idemNumSwar8() reads
** them), and 5^k is multiplied in IDEMNUM_POW5_STEP factors of 5 at a
** time (5^27 < 2^64, 5^13 < 2^32).
*/
#if defined(__SIZEOF_INT128__) && !defined(IDEMNUM_NO_INT128)
typedef uint64_t IdemNumLimb;
typedef IdemNumU128 IdemNumLimb2;
# define IDEMNUM_LIMB_BITS 64
# define IDEMNUM_CHUNK 16
# define IDEMNUM_CHUNK_VALUE(z) \
  idemNumSwar16(idemNumLoad8(z), idemNumLoad8((z)+8))
# define IDEMNUM_CHUNK_TAIL(z, s) \
  idemNumSwar16(idemNumLoad8(z) & ~idemNumMask[8+(s)], \
                idemNumLoad8((z)+8) & ~idemNumMask[s])
# define IDEMNUM_POW5_STEP 27
#else
typedef uint32_t IdemNumLimb;
typedef uint64_t IdemNumLimb2;
# define IDEMNUM_LIMB_BITS 32
# define IDEMNUM_CHUNK 8
# define IDEMNUM_CHUNK_VALUE(z) idemNumSwar8(idemNumLoad8(z))
# define IDEMNUM_CHUNK_TAIL(z, s) idemNumSwar8(idemNumLoad8(z) & ~idemNumMask[8+(s)])
# define IDEMNUM_POW5_STEP 13
#endif
#define IDEMNUM_BIG_LIMBS (3200/IDEMNUM_LIMB_BITS)
typedef struct IdemNumBig IdemNumBig;
struct IdemNumBig {
  int n;                            /* Limbs in use; a[n-1]!=0 if n>0 */
  IdemNumLimb a[IDEMNUM_BIG_LIMBS];
};

/* p = p*mul + add */
static void idemNumBigMulAdd(IdemNumBig *p, IdemNumLimb mul, IdemNumLimb add){
  IdemNumLimb carry = add;
  int i;
  for(i=0; i<p->n; i++){
    IdemNumLimb2 t = (IdemNumLimb2)p->a[i]*mul + carry;
    p->a[i] = (IdemNumLimb)t;
    carry = (IdemNumLimb)(t>>IDEMNUM_LIMB_BITS);
  }
  if( carry ){
    assert( p->n<IDEMNUM_BIG_LIMBS );
    p->a[p->n++] = carry;
  }
}

/* p = p * 5^k */
static void idemNumBigMulPow5(IdemNumBig *p, int k){
  static const uint64_t aPow5[28] = {
    1ULL, 5ULL, 25ULL, 125ULL, 625ULL, 3125ULL, 15625ULL, 78125ULL,
    390625ULL, 1953125ULL, 9765625ULL, 48828125ULL, 244140625ULL,
    1220703125ULL, 6103515625ULL, 30517578125ULL, 152587890625ULL,
    762939453125ULL, 3814697265625ULL, 19073486328125ULL,
    95367431640625ULL, 476837158203125ULL, 2384185791015625ULL,
    11920928955078125ULL, 59604644775390625ULL, 298023223876953125ULL,
    1490116119384765625ULL, 7450580596923828125ULL
  };
  for(; k>=IDEMNUM_POW5_STEP; k-=IDEMNUM_POW5_STEP){
    idemNumBigMulAdd(p, (IdemNumLimb)aPow5[IDEMNUM_POW5_STEP], 0);
  }
  if( k>0 ) idemNumBigMulAdd(p, (IdemNumLimb)aPow5[k], 0);
}

/* r = p * M, 0 < M < 2^64 (one limb or two) */
static void idemNumBigMul64(IdemNumBig *r, const IdemNumBig *p, uint64_t M){
  IdemNumLimb aM[2];
  int nM, i, j;
  aM[0] = (IdemNumLimb)M;
  aM[1] = (IdemNumLimb)(M>>(IDEMNUM_LIMB_BITS-1)>>1);  /* 0 if 64 bits */
  nM = aM[1] ? 2 : 1;
  assert( p->n+nM<=IDEMNUM_BIG_LIMBS );
  for(j=0; j<nM; j++){
    IdemNumLimb carry = 0;
    for(i=0; i<p->n; i++){
      IdemNumLimb2 t = (IdemNumLimb2)p->a[i]*aM[j] + carry;
      if( j ) t += r->a[i+j];
      r->a[i+j] = (IdemNumLimb)t;
      carry = (IdemNumLimb)(t>>IDEMNUM_LIMB_BITS);
    }
    r->a[i+j] = carry;
  }
  r->n = p->n + nM;
  while( r->n>0 && r->a[r->n-1]==0 ) r->n--;
}

/* Bits of p, a nonzero big integer. */
static int idemNumBigBitLen(const IdemNumBig *p){
  assert( p->n>0 && p->a[p->n-1]!=0 );
  return p->n*IDEMNUM_LIMB_BITS
       - (idemNumClz64((uint64_t)p->a[p->n-1]) - (64-IDEMNUM_LIMB_BITS));
}

/* Limb i of p*2^(nWord*IDEMNUM_LIMB_BITS + nBit), 0 <= nBit < the limb
** width, without making the shifted number. */
static IdemNumLimb idemNumBigShlLimb(const IdemNumBig *p, int i,
                                     int nWord, int nBit){
  IdemNumLimb hi = 0, lo = 0;
  i -= nWord;
  if( i>=0 && i<p->n ) hi = p->a[i];
  if( nBit==0 ) return hi;
  if( i>=1 && i-1<p->n ) lo = p->a[i-1];
  return hi<<nBit | lo>>(IDEMNUM_LIMB_BITS-nBit);
}

/* Compare a*2^sa with b*2^sb, a and b nonzero (sa and sb of either sign:
** only sa-sb counts): negative, zero or positive.  From the top limb
** down, stopping at the first that differs (a tie goes to the end). */
static int idemNumBigCmpShl(const IdemNumBig *a, int sa,
                            const IdemNumBig *b, int sb){
  int la, lb, i, nWord, nBit, sign = 1;
  if( sa<sb ){
    const IdemNumBig *t = a;      /* b*2^(sb-sa) against a, sign flipped */
    a = b;
    b = t;
    sa = sb - sa;
    sign = -1;
  }else{
    sa -= sb;
  }
  /* Now a*2^sa against b */
  la = idemNumBigBitLen(a) + sa;
  lb = idemNumBigBitLen(b);
  if( la!=lb ) return la<lb ? -sign : sign;
  nWord = sa/IDEMNUM_LIMB_BITS;
  nBit = sa%IDEMNUM_LIMB_BITS;
  for(i=b->n-1; i>=0; i--){
    IdemNumLimb x = idemNumBigShlLimb(a, i, nWord, nBit);
    if( x!=b->a[i] ) return x<b->a[i] ? -sign : sign;
  }
  return 0;
}

/* Compare x = D*10^E with h = M*2^F, 0 < M < 2^64, where *pX is D*5^E if
** E >= 0, or D if E < 0 and then *pP is 5^-E.  Return negative, zero or
** positive. */
static int idemNumBigCmpHalf(const IdemNumBig *pX, const IdemNumBig *pP,
                             int E, uint64_t M, int F){
  IdemNumBig b;
  if( E<0 ){
    idemNumBigMul64(&b, pP, M);        /* D*2^E against M*5^-E*2^F */
  }else{
    b.a[0] = (IdemNumLimb)M;           /* D*5^E*2^E against M*2^F */
    b.n = 1;
    if( M>>(IDEMNUM_LIMB_BITS-1)>>1 ){
      b.a[1] = (IdemNumLimb)(M>>(IDEMNUM_LIMB_BITS-1)>>1);
      b.n = 2;
    }
  }
  return idemNumBigCmpShl(pX, E, &b, F);
}

/*
** Correct the candidate m*2^e to the double nearest x = D*10^E, D being
** zDig[0..nDig), by exact comparison with the halfway points.  If bNext,
** x is known to round to m*2^e or to the next double up (the caller
** rounded both ends of a span holding x), and one comparison, with the
** halfway point between them, decides (idemNumCorrectNext() takes that
** comparison by the digits where the halfway point has a fraction, and
** calls here, bNext set, for the rest).  Return 1 if x rounds to
** infinity, else store the bits of the double in *pBits.
*/
static int idemNumBigCorrect(
  const char *zDig, int nDig, int E,
  uint64_t m, int e, int bNext,
  uint64_t *pBits
){
  IdemNumBig x, p;
  int i, c;

  /* D: whole chunks from its first digit (not 0), then its last
  ** nDig%IDEMNUM_CHUNK digits, read as the chunk that ends at its last
  ** digit with the bytes before them masked out (IDEMNUM_CHUNK_TAIL: no
  ** load before the first digit nor past the last; one at a time, those
  ** digits cost ~40 instructions of a halfway decimal's ~1 300). */
  assert( nDig>0 && zDig[0]!='0' );
  x.n = 1;
  if( nDig<IDEMNUM_CHUNK ){
    x.a[0] = (IdemNumLimb)idemNumDigitsValue(zDig, nDig);
  }else{
    x.a[0] = (IdemNumLimb)IDEMNUM_CHUNK_VALUE(zDig);
    for(i=IDEMNUM_CHUNK; i<=nDig-IDEMNUM_CHUNK; i+=IDEMNUM_CHUNK){
      idemNumBigMulAdd(&x, (IdemNumLimb)idemNumPow10Int[IDEMNUM_CHUNK],
                       (IdemNumLimb)IDEMNUM_CHUNK_VALUE(zDig+i));
    }
    if( i<nDig ){
      idemNumBigMulAdd(&x, (IdemNumLimb)idemNumPow10Int[nDig-i],
                       (IdemNumLimb)IDEMNUM_CHUNK_TAIL(zDig+nDig-IDEMNUM_CHUNK,
                                                       IDEMNUM_CHUNK-(nDig-i)));
    }
  }
  if( E>0 ){
    idemNumBigMulPow5(&x, E);
  }else if( E<0 ){
    /* 5^-E, once for all the comparisons */
    p.a[0] = 1;
    p.n = 1;
    idemNumBigMulPow5(&p, -E);
  }

  /* Up while x is above the halfway point to the next double (or on it,
  ** when m is odd).  If bNext, once decides: x is then at most the next
  ** double, and at least m*2^e, so that the loop down is not needed
  ** either. */
  for(;;){
    c = idemNumBigCmpHalf(&x, &p, E, 2*m+1, e-1);
    if( c<0 || (c==0 && (m&1)==0) ) break;
    m++;
    if( m==(IDEMNUM_HIDDEN<<1) ){
      m = IDEMNUM_HIDDEN;
      if( ++e>IDEMNUM_EMAX ) return 1;
    }
    if( bNext ) break;
  }

  /* Down while x is below the halfway point to the previous double (or on
  ** it, when m is odd).  Below a power of two the gap is half as wide. */
  while( !bNext && m>0 ){
    int narrow = (m==IDEMNUM_HIDDEN && e>IDEMNUM_EMIN);
    if( narrow ){
      c = idemNumBigCmpHalf(&x, &p, E, 4*m-1, e-2);
    }else{
      c = idemNumBigCmpHalf(&x, &p, E, 2*m-1, e-1);
    }
    if( c>0 || (c==0 && (m&1)==0) ) break;
    if( narrow ){
      m = (IDEMNUM_HIDDEN<<1) - 1;
      e--;
    }else{
      m--;
    }
  }

  if( m<IDEMNUM_HIDDEN ){
    *pBits = m;                               /* subnormal or zero */
  }else{
    *pBits = ((uint64_t)(e+1075)<<52) | (m & (IDEMNUM_HIDDEN-1));
  }
  return 0;
}

#define IDEMNUM_MAX_DIGITS 800     /* significant digits kept, see step 4 */

/*
** Copy the nDig digits zInt[0..nInt) then zFrac[0..nFrac) to aDig, keeping
** IDEMNUM_MAX_DIGITS of them.  The last digit is not zero, so if any are
** dropped, one of those is not zero: a '1' is appended (see step 4).
** Returns the count of digits in aDig.  The slow path and
** idemNumStep4Span() gather their digits here.
*/
static IDEMNUM_INLINE int idemNumGatherDigits(
  char *aDig,
  const char *zInt, int nInt,
  const char *zFrac, int nFrac,
  int nDig
){
  int nA = nInt<IDEMNUM_MAX_DIGITS ? nInt : IDEMNUM_MAX_DIGITS;
  int nB = nFrac<IDEMNUM_MAX_DIGITS-nA ? nFrac : IDEMNUM_MAX_DIGITS-nA;
  memcpy(aDig, zInt, (size_t)nA);
  memcpy(aDig+nA, zFrac, (size_t)nB);
  if( nDig>IDEMNUM_MAX_DIGITS ){
    aDig[IDEMNUM_MAX_DIGITS] = '1';
    return IDEMNUM_MAX_DIGITS+1;
  }
  return nDig;
}

/*
** Step 4's one comparison (idemNumBigCorrect()'s bNext) by the digits:
** x = 0.D * 10^(L+1), D being zInt[0..nInt) then zFrac[0..nFrac) (the
** first not 0, the last not 0; gathered as idemNumGatherDigits() keeps
** them), is known to round to m*2^e or to the next double up, and the
** halfway point between them, h = M*2^-G with M = 2m+1 odd, decides.
** Where G > 0, h is below 2^53 and has exactly G digits after its '.'
** (M*5^G/10^G, the last a 5): its integer part, then its fraction's
** digits 16 at a time, found by multiplying the fraction, G bits, by
** 10^16 (64x64 products, the top limb's carry the next 16 digits), are
** compared with x's as they come, the first chunk that differs deciding;
** where all agree, the one whose digits go on is the greater (a tie if
** neither).  No big number for D nor for 5^G: those cost a decimal
** halfway between two doubles (~60 digits) ~540 of its ~1 300
** instructions.  x's digits are laid out from the 16th place before its
** '.' (zeros before them: its integer part is the first chunk) with 16
** zeros after them, so that every chunk read is of digits.  Where more
** than IDEMNUM_MAX_DIGITS are cut to those and a 1, the zeros among the
** ones kept count as digits, so that the 1 changes nothing here (h has
** at most 768 significant digits).  With G <= 0 (h an
** integer of 54 bits or more), idemNumBigCorrect().  Returns 1 if x
** rounds to infinity, else stores the bits of the double in *pBits.
*/
#define IDEMNUM_HALF_LIMBS 17           /* 1 088 bits: G <= 1 075 */
static IDEMNUM_NOINLINE int idemNumCorrectNext(
  const char *zInt, int nInt, const char *zFrac, int nFrac,
  int L, uint64_t m, int e, uint64_t *pBits
){
  char aBuf[15+324 + IDEMNUM_MAX_DIGITS+1 + 16];
  uint64_t a[IDEMNUM_HALF_LIMBS];     /* h's fraction, a[nL-1] the top */
  const uint64_t M = 2*m + 1;
  const int G = 1 - e;
  int nZ = L<15 ? 15-L : 0;           /* zeros before D */
  char *zD = aBuf + nZ;
  int nDig, nF, nL, tz, i, j, c;
  uint64_t carry;

  assert( L>=-324 && L<=308 );
  memset(aBuf, '0', (size_t)nZ);
  nDig = idemNumGatherDigits(zD, zInt, nInt, zFrac, nFrac, nInt+nFrac);
  memset(zD+nDig, '0', 16);
  if( G<=0 ){
    return idemNumBigCorrect(zD, nDig, L - nDig + 1, m, e, 1, pBits);
  }
  if( L>=16 ){
    c = 1;                            /* x >= 10^16 > 2^53 > h */
    goto decided;
  }
  nF = nDig - L - 1;                  /* x's digits after the '.' */

  /* h's fraction (M mod 2^G)/2^G as nL limbs (2 at least), its G bits
  ** at their top: M shifted left by tz = 64*nL-G.  Each pass
  ** times 10^16 = 5^16*2^16 leaves 16 more zero bits at its bottom (f is
  ** odd): a[0..tz/64) are 0, not multiplied.  Two limbs (G <= 128, a
  ** halfway point above 2^-75) are multiplied without the loop. */
  nL = G<=128 ? 2 : (G+63)/64;
  tz = 64*nL - G;
  memset(a, 0, sizeof(a[0])*(size_t)nL);
  j = tz%64;
  a[tz/64] = M<<j;          /* (G < 64: M's integer bits go out at the top) */
  if( j>0 && tz/64+1<nL ) a[tz/64+1] = M>>(64-j);
  carry = G<64 ? M>>G : 0;            /* h's integer part */
  for(i=0; ; i+=16, tz+=16){
    /* aBuf[i..i+16): x's integer part (i==0), else its fraction's digits
    ** i-16 to i-1; carry, h's */
    uint64_t pLo, pHi;
    if( idemNumSwar16(idemNumLoad8(aBuf+i), idemNumLoad8(aBuf+i+8))!=carry ){
      c = idemNumSwar16(idemNumLoad8(aBuf+i), idemNumLoad8(aBuf+i+8))<carry
          ? -1 : 1;
      break;
    }
    if( i>=G ){
      c = i<nF;                /* h's G digits end: x above it if x goes on */
      break;
    }
    if( i>=nF ){
      c = -1;                         /* x ends, h goes on */
      break;
    }
    if( nL==2 ){
      uint64_t qLo, qHi = idemNumMul128(a[1], 10000000000000000ULL, &qLo);
      pHi = idemNumMul128(a[0], 10000000000000000ULL, &pLo);
      a[0] = pLo;
      a[1] = qLo + pHi;
      carry = qHi + (a[1]<pHi);
    }else{
      carry = 0;
      for(j=tz/64; j<nL; j++){
        pHi = idemNumMul128(a[j], 10000000000000000ULL, &pLo);
        pLo += carry;
        a[j] = pLo;
        carry = pHi + (pLo<carry);
      }
    }
  }

decided:
  if( c>0 || (c==0 && (m&1)!=0) ){
    m++;
    if( m==(IDEMNUM_HIDDEN<<1) ){
      m = IDEMNUM_HIDDEN;
      if( ++e>IDEMNUM_EMAX ) return 1;
    }
  }
  if( m<IDEMNUM_HIDDEN ){
    *pBits = m;                               /* subnormal or zero */
  }else{
    *pBits = ((uint64_t)(e+1075)<<52) | (m & (IDEMNUM_HIDDEN-1));
  }
  return 0;
}

/*
** The double nearest to x = 0.D * 10^(L+1), D being zDig[0..nDig) without
** leading or trailing zeros, and -324 <= L <= 308.  Return 1 if x rounds
** to infinity, else store the bits of the (positive) double in *pBits.
*/
static int idemNumDecimalToDouble(
  const char *zDig, int nDig, int L,
  uint64_t *pBits
){
  int nW = nDig<19 ? nDig : 19;
  int q = L - nW + 1;
  uint64_t w, m;
  int e;

  if( nW==19 ){
    w = idemNumSwar16(idemNumLoad8(zDig), idemNumLoad8(zDig+8))*1000
      + idemNumDigitsValue(zDig+16, 3);
  }else{
    w = idemNumDigitsValue(zDig, nW);
  }

  if( idemNumEiselLemire(w, q, &m, &e) ){
    uint64_t m2;
    int e2;
    if( nDig<=19 ){
      *pBits = idemNumBits(m, e);
      return 0;
    }
    /* x is in [w*10^q, (w+1)*10^q): if both ends round to the same
    ** double, so does x; if to neighbours, x rounds to one of them. */
    if( idemNumEiselLemire(w+1, q, &m2, &e2) ){
      if( m2==m && e2==e ){
        *pBits = idemNumBits(m, e);
        return 0;
      }
      if( (m2==m+1 && e2==e)
       || (m==(IDEMNUM_HIDDEN<<1)-1 && m2==IDEMNUM_HIDDEN && e2==e+1) ){
        return idemNumCorrectNext(zDig, nDig, zDig+nDig, 0, L, m, e, pBits);
      }
    }
  }
  return idemNumBigCorrect(zDig, nDig, L - nDig + 1, m, e, 0, pBits);
}

/*
** Step 3 for every x in [w*10^q, (w+1)*10^q), w having 19 digits (so
** that w >= 2^59), and IDEMNUM_POW10_MIN <= q <= 308: as
** idemNumEiselLemire() for w, with one product.  With T the table entry
** and lz <= 4 the shift that normalizes w, x*2^(63+lz-floor(log2(10^q)))
** lies in [U, U + 2 + (tHi+1)*2^lz): U is less than 2 units short at w
** (see there), and (w+1)<<lz times T+1 adds (T+1)*2^lz/2^64 <=
** (tHi+1)*2^lz to (w<<lz)*(T+1), itself below U+2.  In units of the
** 64-bit fraction f below m (2^sh units of U) that is [f, f + dd) with
** dd = (tHi >> (sh-lz)) + 3, above m's own bits.  The double is decided
** for the whole span if f is above half (up: the span may carry into
** m+1, whose rounding is the same) or f + dd at most half (down); the
** rest, a span of about 2^-8 of an ulp for 19 digits, returns -1, and m
** and e as for a double, e perhaps beyond the doubles' (f is then at most
** half, m not rounded up): all of the span is in [m, m+1) ulps, so that
** step 4 need only compare x with the halfway point between m and m+1
** (idemNumCorrectNext()).  Returns 1 and the double (m may be 0:
** below half the least subnormal) if decided and finite, else 0.
*/
static IDEMNUM_INLINE int idemNumEiselLemireSpan(
  uint64_t w, int q, uint64_t *pM, int *pE
){
  const uint64_t *t = idemNumPow10[q - IDEMNUM_POW10_MIN];
  const uint64_t half = (uint64_t)1<<63;
  int lz = idemNumClz64(w);
  uint64_t uHi, uLo, f, m;
  int sh, e;
  assert( lz<=4 );
  w <<= lz;
  uHi = idemNumProduct(w, t, &uLo);
  sh = 10 + (int)(uHi>>63);
  e = sh + 1 + idemNumFloorLog2Pow10(q) - lz;
  if( e<IDEMNUM_EMIN ){
    /* Subnormal: rounded at a higher bit (idemNumEiselLemire()). */
    sh += IDEMNUM_EMIN - e;
    e = IDEMNUM_EMIN;
    if( sh>63 ){
      *pM = 0;             /* (unused; set so that every path sets them) */
      *pE = e;
      return 0;
    }
  }
  f = uHi<<(64-sh) | uLo>>sh;
  /* m rounded up or not with no branch (the digits decide which, at
  ** random: a branch there was mispredicted every other time); the rare
  ** tests that follow are then predicted.  If f > half, half-f wraps to
  ** 2^63 or more, above tHi >> 6 + 3: that test needs no f <= half. */
  m = (uHi>>sh) + (f>half);
  if( m==(IDEMNUM_HIDDEN<<1) ){
    m = IDEMNUM_HIDDEN;
    e++;
  }
  *pM = m;
  *pE = e;
  if( half-f<(t[0]>>(sh-lz)) + 3 ){
    return -1;                      /* the span may hold the halfway point */
  }
  if( e>IDEMNUM_EMAX ) return 0;
  return 1;
}

static int idemNumCanonicalSlow(const char *z, int n, char *zOut);
static int idemNumLayoutValue(char*, int, uint64_t, int, int);
static int idemNumFromDouble(char*, int, uint64_t, int);

/* Step 5 for the double m*2^e that a literal beyond 1e-307 or 1e307
** came to: "0" for m = 0 (below half the least subnormal), a subnormal's
** with its exponent a constant (inlined, the printing then folds it). */
static IDEMNUM_INLINE int idemNumFormatTiny(int neg, uint64_t m, int e,
                                            char *zOut){
  if( m==0 ){
    zOut[0] = '0';
    return 1;
  }
  if( e==IDEMNUM_EMIN ){
    return idemNumFormatParts(neg, m, IDEMNUM_EMIN, zOut);
  }
  return idemNumFormatParts(neg, m, e, zOut);
}

/*
** "%.17g" of a double below 10^-299, subnormals included: d.ddd...e-3NN
** with 16 digits after the '.', or 15 (the 17th was a 0, which "%.17g"
** drops), the sign not counted, as zM[0..nM) holds them.  Their value w
** (read as step 3b reads it) goes to step 3, which rounds a subnormal
** too, and the double to step 5: the long way's scan, its digits
** gathered and its exact comparisons are not needed.  Returns -2 if the
** literal is not of that shape or step 3 does not decide.
*/
static IDEMNUM_INLINE int idemNumTiny17(
  int neg, const char *zM, int nM, char *zOut
){
  uint64_t c0, c1, w, m;
  int x10, e, q, isShort = 0;
  if( (nM!=23 && nM!=22) || zM[1]!='.' || zM[nM-5]!='e'
   || (zM[nM-4]!='-' && zM[nM-4]!='+') || zM[nM-3]!='3' || zM[0]=='0' ){
    return -2;
  }
  c0 = (uint64_t)(unsigned char)zM[0] | idemNumLoad8(zM+2)<<8;
  c1 = idemNumLoad8(zM+9);
  w = idemNumSwar16(c0, c1);
  if( nM==23 ) w = w*10 + (uint64_t)(zM[17]-'0');
  x10 = (zM[nM-3]-'0')*100 + (zM[nM-2]-'0')*10 + (zM[nM-1]-'0');
  if( zM[nM-4]=='+' ){
    /* 1e300 and up: step 3 says if it overflows (then the long way) */
    if( x10>308 ) return -2;
    q = 7 - nM + x10;
  }else{
    if( x10>324 ) return -2;
    q = 7 - nM - x10;
  }
  /* step 3, and step 3b's test (the last digit, zM[nM-6], not 0).  Since
  ** the common path sends 16 digits e-3NN to idemNumSubShort() and 17 to
  ** idemNumSub17(), step 3 decides here only for 16 digits e+308 (others
  ** come here after it has failed on the same digits), where 10^q >= u:
  ** the test holds whatever the digit (no test can see it). */
  if( !idemNumEiselLemireAt(w, q, &m, &e, zM[nM-6]-'0', &isShort, 0) ){
    return -2;
  }
  if( isShort ){
    /* d.ddde+3NN or d.ddde-3NN, the last digit not 0: ECMAScript's own
    ** layout for the literal's digits */
    int nOut = nM + neg;            /* 22 to 24 bytes */
    memcpy(zOut, zM-neg, 16);
    memcpy(zOut+nOut-16, zM-neg+nOut-16, 16);
    return nOut;
  }
  if( zM[nM-4]=='+' ) return idemNumFormatParts(neg, m, e, zOut);
  return idemNumFormatTiny(neg, m, e, zOut);
}

/* The answer from the text of a "%.17g" literal below 1e-307 or above
** 1e307 (idemNumTiny3()): its first k bytes (16 or more: its digits up to
** one it keeps, the '.' and a '-' counted), the last of them replaced by
** the digit last unless that is 0, c (0 or 1) added at the last
** (a carry runs over 9s and the '.'; the caller has made sure that it
** stops before the first digit), less the zeros at the end (and the '.',
** if nothing is left after it), then the exponent L as ECMAScript writes
** it. */
static IDEMNUM_INLINE int idemNumTinyOut(
  char *zOut, const char *z, int k, int c, int last, int L
){
  int j, x;
  memcpy(zOut, z, 16);
  memcpy(zOut+k-16, z+k-16, 16);
  if( last ) zOut[k-1] = (char)last;
  x = (last ? last : (unsigned char)z[k-1]) - '0' + c;
  if( IDEMNUM_LIKELY((unsigned)(x-1)<9) ){
    /* no carry and no zero at the end (as idemNumCanonical()'s) */
    zOut[k-1] = (char)('0' + x);
    return k + idemNumPutExp(zOut+k, L);
  }
  for(j=k-1; c; j--){
    if( zOut[j]=='.' ) continue;
    if( zOut[j]!='9' ){
      zOut[j]++;
      break;
    }
    zOut[j] = '0';
  }
  while( zOut[k-1]=='0' ) k--;
  k -= zOut[k-1]=='.';
  return k + idemNumPutExp(zOut+k, L);
}

/*
** A literal with an exponent, at most 19 significant digits and an
** exponent of at most 4 digits after its leading zeros: its digits and
** exponent read in one pass (step 1), then step 2, or step 3 (all its
** digits are w: exact) and step 5.  Where the common path sends a literal
** with an exponent of more than 4 digits ("1.5e+0000000010") or a value
** beyond 1e-307 .. 1e307 ("5e-324", "1.7976931348623157e+308"), which the
** long way took whole.  Its integer digits end at z[iInt] and its
** fraction digits at z[iFrac] (iFrac==iInt without a fraction), or both
** are -1 (not known: found here).  Anything else goes the long way.
*/
static IDEMNUM_NOINLINE int idemNumExpLiteral(
  const char *z, int n, int iInt, int iFrac, char *zOut
){
  char aDig[48];                    /* the significant digits */
  int neg = z[0]=='-';
  const char *zD;                   /* the first significant digit */
  int nA, nB;                       /* its digits before and after the '.' */
  int nDig, L, x10 = 0, eNeg, e, i, isShort = 0;
  uint64_t w, m;

  if( iInt<0 ){
    for(iInt=neg; z[iInt]>='0' && z[iInt]<='9'; iInt++){}
    for(iFrac=iInt+(z[iInt]=='.'); z[iFrac]>='0' && z[iFrac]<='9'; iFrac++){}
  }
  assert( iFrac<n && (z[iFrac]=='e' || z[iFrac]=='E') );

  /* The exponent, its leading zeros dropped */
  i = iFrac + 1;
  eNeg = z[i]=='-';
  i += (z[i]=='-' || z[i]=='+');
  i = idemNumSkipZeros(z, i, n);
  if( n-i>4 ) goto slow;            /* beyond any double, or 0 */
  for(; i<n; i++) x10 = x10*10 + (z[i]-'0');

  /* The significant digits: zD[0..nA) before the '.', zD[nA+1..) after.
  ** The first is not 0: 0 and 0.000ddd never come here (the common path
  ** takes them to idemNumBeyond(), or to here only with an exponent of
  ** more than 4 digits, which went the long way above; its other callers
  ** have checked the first digit). */
  zD = z + neg;
  assert( zD[0]>='1' && zD[0]<='9' );
  L = iInt - neg - 1;
  nA = iInt - neg;
  nB = iFrac>iInt ? iFrac - iInt - 1 : 0;
  while( nB>0 && zD[nA+nB]=='0' ) nB--;
  if( nB==0 ) while( zD[nA-1]=='0' ) nA--;
  nDig = nA + nB;
  if( nDig>19 ) goto slow;

  /* 10^L <= |x| < 10^(L+1) */
  L += eNeg ? -x10 : x10;
  if( L>308 ) return -1;
  if( L<-324 ){
    zOut[0] = '0';
    return 1;
  }
  /* The digits zD[0..nA), then after the '.' (zD[nA], if nA is not 0)
  ** nB more: one loop, not calls (most literals here have few) */
  for(i=0; i<nDig; i++) aDig[i] = zD[i + (i>=nA)];
  if( nDig<=15 && L>=-307 && L<=307 ){
    return idemNumLayout(zOut, neg, aDig, nDig, L+1);          /* step 2 */
  }
  w = idemNumDigitsValue(aDig, nDig);
  if( !idemNumEiselLemireAt(w, L - nDig + 1, &m, &e,
                            nDig<=17 ? aDig[nDig-1]-'0' : 0, &isShort, 0) ){
    goto slow;
  }
  if( isShort ){
    if( (L>=21 || L<=-7) && iInt==neg+1
     && iFrac==(nB ? iInt+1+nB : iInt)
     && z[iFrac]=='e' && (z[iFrac+1]=='-' || z[iFrac+1]=='+') ){
      /* d.ddde+NN or d.ddde-NN, the last digit not 0: ECMAScript's own
      ** layout, as written.  The exponent has no leading zero: a literal
      ** with one and a sign comes here from idemNumTiny3() only, whose
      ** step 3 failed as this one's does (the same digits and exponent);
      ** from idemNumSubShort() and idemNumTiny() it is e-3NN or e+3NN */
      memcpy(zOut, z, (size_t)n);
      return n;
    }
    return idemNumLayoutValue(zOut, neg, w, nDig, L);
  }
  return idemNumFormatTiny(neg, m, e, zOut);

slow:
  return idemNumCanonicalSlow(z, n, zOut);
}

/* The 17 digits of "%.17g"'s d.dddddddddddddddd at zM, as one integer. */
static IDEMNUM_INLINE uint64_t idemNumDigits17(const char *zM){
  uint64_t c0 = (uint64_t)(unsigned char)zM[0] | idemNumLoad8(zM+2)<<8;
  uint64_t c1 = idemNumLoad8(zM+9);
  return idemNumSwar16(c0, c1)*10 + (uint64_t)(zM[17]-'0');
}

/*
** idemNumTiny3() from where step 3 and step 3b's test leave it: the
** literal's value w (17 digits), the double m*2^e, whether the literal is
** the answer (isShort) and step 3b's gi, ti and whether they may be used
** (aGT), asIs if its exponent is written as ECMAScript writes it.
*/
static IDEMNUM_INLINE int idemNumTiny3Out(
  const char *z, int n, int L, char *zOut,
  uint64_t w, uint64_t m, int e, int isShort, const uint64_t *aGT, int asIs,
  int cdFirst
){
  int neg = z[0]=='-';
  const char *zM = z + neg;
  int d = zM[17]-'0';
  if( isShort ){
    if( asIs ){
      /* ECMAScript's own layout (|L| > 307): as written (22 bytes or
      ** more) */
      memcpy(zOut, z, 16);
      memcpy(zOut+n-16, z+n-16, 16);
      return n;
    }
    return idemNumLayoutValue(zOut, neg, w, 17, L);
  }
  if( aGT[2] ){
    /* The rest of step 3b and step 3c as at the common path (the proofs
    ** are there), with g and t of this double: for 10t > 1, A or B the
    ** only decimal of 16 digits or fewer in the interval, or neither and
    ** the answer the 17-digit decimal closest to v; for 10t < 1 < 100t
    ** (subnormals from 1e-309), C or D the only one of 15 digits or fewer,
    ** or neither and the answer the 16-digit decimal closest to v.  The
    ** answer's digits are the literal's (d.ddd, ECMAScript's layout), cut,
    ** with one added or the last one changed, then the exponent. */
    const uint64_t one = (uint64_t)1<<60;
    uint64_t g = aGT[0], t = aGT[1];
    if( 10*t>one ){
      int inA = g>=(uint64_t)d*(t+1);
      int outA = g+2<=(uint64_t)d*t;
      int inB = (uint64_t)(10-d)*(t+1) + g + 2<=one;
      int outB = (uint64_t)(10-d)*t + g > one;
      if( (inA & outB) | (inB & outA) ){
        if( w/10 + (uint64_t)inB<10000000000000000ULL ){
          return idemNumTinyOut(zOut, z, neg+17, inB, 0, L);
        }
      }else if( outA & outB ){
        int64_t aHi = (int64_t)(one>>1) - (int64_t)g, aLo = aHi - 2;
        int64_t T = (int64_t)t;
        int64_t j0 = (2*aLo + (aLo>=0 ? T : -T)) / (2*T);
        if( j0>=-5 && j0<=5 && d+j0>=1 && d+j0<=9
         && (2*j0-1>=0 ? (2*j0-1)*(T+1) : (2*j0-1)*T) <= 2*aLo
         && (2*j0+1>0 ? 2*aHi < (2*j0+1)*T : 2*aHi <= (2*j0+1)*(T+1)) ){
          if( asIs ){
            memcpy(zOut, z, 16);
            memcpy(zOut+n-16, z+n-16, 16);
            zOut[neg+17] = (char)('0' + d + j0);
            return n;
          }
          return idemNumLayoutValue(zOut, neg, (uint64_t)((int64_t)w + j0), 17, L);
        }
      }
    }else if( 10*t+10<=one && 100*t>one ){
      /* (10t < 1 for certain: the closest multiple of 10^(q+1) is then
      ** in the interval.)  C = x - e*10^q and D = C + 10^(q+2), e the last two digits; A is
      ** a = d*t - g + 1/2 units of u below v, and the closest multiple
      ** of 10^(q+1) is A + j*10^(q+1), j the integer nearest to a/T,
      ** T = 10t, its 16th digit d16+j from 1 to 9 (no multiple of
      ** 10^(q+2) lies between x and it: both are in the interval). */
      int d16 = zM[16]-'0';
      uint64_t e2 = (uint64_t)d16*10 + (uint64_t)d;
      int outC = e2*t>=g+2;
      int outD = (100-e2)*t + g > one;
      if( cdFirst ){
        /* C or D likely (idemNumSub17()'s hint): its test first, so that
        ** it is predicted; in C and out C (in D and out D) exclude each
        ** other, so that where it fails the tests below decide as
        ** without it */
        int inC1 = g>=e2*(t+1);
        int inD1 = (100-e2)*(t+1) + g + 2<=one;
        if( ((inC1 & outD) | (inD1 & outC))
         && w/100 + (uint64_t)inD1<1000000000000000ULL ){
          return idemNumTinyOut(zOut, z, neg+16, inD1, 0, L);  /* C or D */
        }
      }
      if( outC && outD ){
        int64_t aLo = (int64_t)((uint64_t)d*t) - (int64_t)g - 2 + (int64_t)(one>>1);
        int64_t aHi = (int64_t)((uint64_t)d*t + (uint64_t)d) - (int64_t)g + (int64_t)(one>>1);
        int64_t T = (int64_t)(10*t);
        int64_t j0 = (2*aLo + (aLo>=0 ? T : -T)) / (2*T);
        int64_t a = 2*j0-1, b = 2*j0+1;
        /* (no branch on the signs of 2j-1 and 2j+1: masks, as at the
        ** common path's step 3c) */
        if( ((uint64_t)(d16+j0-1)<=8)
          & (a*T + 10*(a & ~(a>>63)) <= 2*aLo)
          & (2*aHi <= b*T + 10*(b & (b>>63))) ){
          return idemNumTinyOut(zOut, z, neg+17, 0, (int)('0' + d16 + j0), L);
        }
      }else{
        int inC = g>=e2*(t+1);
        int inD = (100-e2)*(t+1) + g + 2<=one;
        if( ((inC & outD) | (inD & outC))
         && w/100 + (uint64_t)inD<1000000000000000ULL ){
          return idemNumTinyOut(zOut, z, neg+16, inD, 0, L);
        }
      }
    }
  }
  return idemNumFormatTiny(neg, m, e, zOut);
}

/* idemNumTiny17() for a literal known to be "%.17g"'s d.dddddddddddddddde-NNN
** or e+NNN (idemNumberDecimalExp()'s fourth copy), 10^L <= |x| < 10^(L+1)
** with L beyond +-307, else idemNumExpLiteral(). */
static IDEMNUM_NOINLINE int idemNumTiny3(
  const char *z, int n, int L, char *zOut
){
  int neg = z[0]=='-';
  const char *zM = z + neg;
  uint64_t w = idemNumDigits17(zM), m;
  uint64_t aGT[3] = {0, 0, 0};
  int e, isShort = 0, d = zM[17]-'0';
  int asIs = zM[18]=='e' && (zM[19]=='-' || zM[19]=='+') && zM[20]!='0';
  if( L<-324 || L>308
   || !idemNumEiselLemireAt(w, L-16, &m, &e, d, &isShort, aGT) ){
    return idemNumExpLiteral(z, n, neg+1, neg+18, zOut);
  }
  return idemNumTiny3Out(z, n, L, zOut, w, m, e, isShort, aGT, asIs, 0);
}

/*
** "%.17g" of a subnormal double: d.dddddddddddddddde-3NN (the last digit
** not 0, 10^L <= |x| < 10^(L+1) with -324 <= L <= -308, x10 = -L).  Step
** 3 is the one of idemNumEiselLemireAt() with the exponent of the result
** known, EMIN: x = w*10^q, 10^q = T*2^(b-127) for the table entry T and
** b = floor(log2(10^q)), so that x/2^EMIN = w*T * 2^(b-127-EMIN).  The
** product w*T is taken unnormalized (w < 2^57, so that U = uHi:uLo, its
** top 128 bits of at most 185, has uHi < 2^57): U is less than 2 units
** below the exact w*T/2^64 (the low word dropped, less than 1; T short
** by less than 1, times w < 2^64, less than 1 more), and m is the top of
** U with sh = -1075-b bits of uHi below it (2 for q = -324, 55 for
** q = -340).  f, the 64 bits below m, is less than 2 units of f below
** the exact fraction, as at step 3b; G = f + 2^63 decides the rounding
** unless it is 0 or 2^64-1 (then idemNumTiny3()).  u = 2^EMIN, so that
** t*2^60 = 10^q*2^(60-EMIN) = (tHi + a fraction) * 2^(b-63+60-EMIN), and
** ti = tHi >> (-1071-b) (6 to 59): ti <= t*2^60 < ti+1 as at step 3b.
** A result from 2^52 to 2^53-1 is the double m*2^EMIN too (the least
** normal binade, 2.2250738585072014e-308 and up: its ulp is the
** subnormals', and its interval [v-u/2, v+u/2], the least normal's
** included, whose neighbour below is the largest subnormal); one of 2^53
** or more (the next binade, from 4.4501477170144028e-308) or 0 goes to
** idemNumTiny3() too.  Then step 3b's test and the rest as in
** idemNumTiny3(), whose step 5 takes m*2^EMIN with m >= 2^52 as it is.
*/
/* Step 3 for x = w*10^q with the result's exponent known, EMIN (see
** idemNumSub17()): w < 2^64 with 10^-340 <= 10^q <= 10^-324 (sh from 2
** to 55); sets *pM to the nearest m (m*2^EMIN) and *pG to step 3b's G,
** and returns 0 where that is undecided (G near the halfway point) or m
** is 0 or beyond the least normal binade (2^53 or more). */
static IDEMNUM_INLINE int idemNumSubProduct(
  uint64_t w, int q, uint64_t *pM, uint64_t *pG
){
  const uint64_t *t = idemNumPow10[q - IDEMNUM_POW10_MIN];
  int sh = -1075 - idemNumFloorLog2Pow10(q);
  uint64_t uLo, uHi = idemNumProduct(w, t, &uLo);
  uint64_t m = uHi >> sh;
  uint64_t f = uHi<<(64-sh) | uLo>>sh;
  uint64_t g = f + ((uint64_t)1<<63);
  assert( q>=-340 && q<=-324 && sh>=2 && sh<=55 );
  m += f>>63;
  *pM = m;
  *pG = g;
  return !(g+1<=1 || m-1>=(IDEMNUM_HIDDEN<<1)-1);
}

/* ti = t*2^60 rounded down, t = 10^q/2^EMIN, for 10^q <= 10^-324 (t < 1):
** 10^q*2^(60-EMIN) = (tHi + a fraction) * 2^(b-63+60-EMIN), b =
** floor(log2(10^q)), so that ti = tHi >> (-1071-b) (6 to 59). */
static IDEMNUM_INLINE uint64_t idemNumSubT(int q){
  return idemNumPow10[q - IDEMNUM_POW10_MIN][0]
         >> (-1071 - idemNumFloorLog2Pow10(q));
}

/* x if it is positive, else 0, with no branch (x >= -2^30). */
static IDEMNUM_INLINE int idemNumPos(int x){
  return x & ~(x>>31);
}

/* For x10 = 308 + p2, 2 <= p2 <= 15 (idemNumSubDeep() and
** idemNumSubOut()): step 3's shift sh = -1075 - floor(log2(10^q)),
** q = -x10-16 (8 to 52); the shift -1 - floor(log2(10^-p2)) of x's
** product with 10^-p2 (6 to 49); then where in "d.dddddddddddddddd" the
** 8 bytes read for the digits 13-p2 to 17-p2 start (2 or more: after the
** '.'), the right shift that brings the digit 17-p2 to their lowest byte,
** and the left shift that brings the first digit to the byte 16-p2 (40
** where that byte is above the five kept). */
static const unsigned char idemNumSubRow[16][5] = {
  {0,0,0,0,0}, {0,0,0,0,0},
  { 8, 6,11,24,40}, {12, 9,10,24,40}, {15,13, 9,24,40}, {18,16, 8,24,40},
  {22,19, 7,24,40}, {25,23, 6,24,40}, {28,26, 5,24,40}, {32,29, 4,24,40},
  {35,33, 3,24,40}, {38,36, 2,24,40}, {42,39, 2,32,32}, {45,43, 2,40,24},
  {48,46, 2,48,16}, {52,49, 2,56, 8}
};

/* The 8 bytes at z as a big-endian word, z[0] in the highest byte (one
** load and a byte swap). */
static IDEMNUM_INLINE uint64_t idemNumLoad8Be(const char *z){
  const unsigned char *u = (const unsigned char*)z;
  return (uint64_t)u[0]<<56     | (uint64_t)u[1]<<48 | (uint64_t)u[2]<<40
       | (uint64_t)u[3]<<32     | (uint64_t)u[4]<<24 | (uint64_t)u[5]<<16
       | (uint64_t)u[6]<<8      | (uint64_t)u[7];
}

/* Decimal digits one a byte (bytes 0 to 3 of x, each 0 to 9 or, after
** an addition or a subtraction in binary, 246 to 255 where it borrowed or
** did not carry): each of those 246 or more less 246, that is plus 10
** modulo 256, with no borrow from the byte above. */
static IDEMNUM_INLINE uint64_t idemNumSubBcd(uint64_t x){
  return x - ((x>>7) & 0x01010101)*246;
}

/* Where idemNumSubOut() does not decide: idemNumExpLiteral() for the
** literal at zM - neg, "d." and nDig-1 digits more, then "e-3NN". */
static IDEMNUM_NOINLINE int idemNumSubSlow(
  const char *zM, int neg, int nDig, char *zOut
){
  return idemNumExpLiteral(zM - neg, neg + nDig + 6, neg + 1, neg + nDig + 1,
                           zOut);
}

/*
** Step 5 and the layout for a subnormal c*2^EMIN that a literal below
** 1e-309 came to (step 3's G with it: idemNumSubDeep()): the literal's
** nDig digits (17, "%.17g"'s, or 16 when its 17th is 0) times
** 10^(17-nDig), w, its text zM ("d." and nDig-1 digits more, the last not
** 0, then "e-3NN"), 10^-x10 <= |x| < 10^(1-x10) with 310 <= x10 <= 323.
** The answer idemNumShortestOne() and idemNumFormatParts() give (the
** literal is never its own there), by a way made for time, not
** instructions: each of these literals waits for its step 3, step 5 and
** layout one after the other, each on the one before, so that its time is
** the length of that chain, and the branches that the digits decide
** (c5f5936's one product took 1.9x json()'s time for 1.15x its
** instructions).
**  - Step 5 from step 3's G and the literal's digits, not from c: the
**    answer is a multiple of 10^-323 or 10^-324 within u of x, its
**    digits the literal's but for the last few.  What depends on the
**    literal alone is found while step 3 runs; after it, one product
**    (G*u2) and compares.  No branch on which answer (one in two at
**    random): masks.
**  - The answer has the literal's exponent: x and the answer are both in
**    v's interval, and a power of ten between them would be the answer
**    (the only multiple of 10^-323 there, the interval being narrower),
**    so that it has nD = 324 - x10 digits (in units of 10^-323) or one
**    more (of 10^-324).  Only its last four digits are printed (g,
**    lit1 plus 0 or 1, or lit2 less 2 plus 0 to 5): the first nD-4 are the
**    literal's, copied, unless g is not below 10^4 (a carry changes them,
**    or the answer is 10^(1-x10)) or 0 (its zeros at the end reach them):
**    idemNumExpLiteral(), about 1 in 1 000.  With nD <= 4 g is all of it.
**  - lit1 and lit2 are read from the literal's text, one digit a byte,
**    and g is added to them in decimal there (branch sub18, round
**    four's thirteenth session): computed from x's integer part (a
**    division by 10^5, one by 10, one by 10^4) and g's digits from g
**    (three products more), they made about 25 cycles of a chain of
**    about 90 (counted from the instructions' latencies).
** So the answer is the literal's first 16 bytes, then g's 4 digits over
** them from the digit nD-4 (with nD <= 4 from the first digit, the '.'
** kept), then after its last digit not 0 the literal's "e-3NN" (over the
** '.' when that digit is the first): stores only, none read back, and
** no count of digits.  Writes 21 bytes and a '-'.
*/
static IDEMNUM_INLINE int idemNumSubOut(int neg, uint64_t G, int x10,
                                        uint64_t w, const char *zM, int nDig,
                                        char *zOut){
  const uint64_t one = (uint64_t)1<<60;
  const uint64_t u2 = 0x4f0cedc95a718dd4ULL;   /* 2^EMIN*10^324, 2^-60 units */
  const unsigned char *row = idemNumSubRow[x10 - 308];
  const uint64_t *t = idemNumPow10[650 - x10]; /* 10^-p2 */
  uint64_t hi, lo, wd, r2, b1, b2, xf, f2, gu, d, mask, k, g;
  uint32_t x, v;
  int in, hiIn, nD1 = 324 - x10, nD, big, nSig, pos, sh = row[1];
  char *z = zOut;
  assert( x10>=310 && x10<=323 );
  assert( t==idemNumPow10[308 - x10 - IDEMNUM_POW10_MIN] );
  assert( w<100000000000000000ULL && (nDig==16 || nDig==17) );
  assert( zM[nDig]!='0' && zM[nDig+1]=='e' );

  /* From the literal alone (off the chain): x in units of 10^-324 is
  ** w/10^p2, its integer part s2 and its fraction f2 (2^-60 units) from
  ** one product with 10^-p2 (as step 3's: the table entry, b its
  ** exponent, 2 units low at most); s1 = floor(s2/10), the integer part
  ** in units of 10^-323.  s2 is the literal's first 17-p2 digits, s1 its
  ** first 16-p2: the fraction, w's last p2 digits over 10^p2, is never 0
  ** (the literal's last digit is not, and p2 >= 2) nor within 10^-15
  ** (1 150 units) of 1, so that the product's few units low never move
  ** the integer part.  Their last four digits are read from the text,
  ** not computed from s2: wd holds the digits 13-p2 to 17-p2 (0 before
  ** the first digit; 17-p2 <= 15), one a byte, the last in the lowest, so
  ** that lit2 (s2's last four) is its low four bytes and lit1 (s1's) the
  ** four above.  xf = the last digit of s2 and f2, x less 10*s1. */
  hi = idemNumProduct(w, t, &lo);
  f2 = (hi<<(64-sh) | lo>>sh) >> 4;
  wd = ((idemNumLoad8Be(zM + row[2]) >> row[3])
        | (uint64_t)(unsigned char)zM[0] << row[4]) & 0x0f0f0f0f0fULL;
  xf = (wd & 0xff)*one + f2;
  /* lit1 and lit2 - 2 (a borrow past the four leaves the bytes above all
  ** ones), each byte plus 246, ready for the addition below */
  r2 = wd & 0xffffffffULL;
  b1 = (wd>>8) + 0xf6f6f6f6ULL;
  b2 = idemNumSubBcd(r2 - 2) + 0xf6f6f6f6ULL;

  /* Step 5 from step 3's G, not from c: x = (c - 1/2 + G/2^64)*2^EMIN,
  ** so that v's interval is [x - gu, x + u2 - gu] with gu = G/2^64*u2 in
  ** units of 10^-324 (u2 = 4.94...).  Step 1: 10*s1 in it if xf <= gu,
  ** 10*s1 + 10 if 10 - xf <= u2 - gu (the width is under 10: not both).
  ** Step 2: the multiple of 10^-324 closest to v = x + u2/2 - gu is
  ** s2 + floor(f2 + 1/2 + u2/2 - gu), d - 2 below.  The ends of the
  ** interval, (2c-1)*2^-1075 and (2c+1)*2^-1075, and v are never a multiple
  ** of 10^-324 nor halfway between two, nor ever near it: the three
  ** tests need no way out (proof below).  Where the digits before the
  ** last four change, idemNumFormatParts() (about 1 in 1 000).
  **
  ** Proof that no test is ever within 5 units (2^-60 of 10^-324) of its
  ** line.  Let a = 2^-1075*10^324 = u2/2 and ||y|| the distance from y
  ** to the nearest integer.  The exact values the three tests compare
  ** are L - 10*s1 (L = (2c-1)*a, the low end, in units of 10^-324),
  ** 10*s1 + 10 - U (U = (2c+1)*a) and the fraction of v + 1/2 (v = 2c*a),
  ** for some integer s1 and 1 <= c < 2^48 (below 1e-309).  The first two
  ** are at least 10*||n*a/10|| from 0, n = 2c -+ 1 <= 2^49 + 1; the third
  ** is ||2c*a - 1/2|| >= ||4c*a||/2 from 0 or 1 (n = 4c < 2^50).  The
  ** least ||n*b|| for 1 <= n <= N is ||q*b||, q the greatest denominator
  ** of a convergent of b's continued fraction not above N (best
  ** approximations; exact, in rationals): for b = a/10 and N = 2^49 + 1,
  ** q = 344 618 510 557 193 and 10*||q*b|| = 691.6 units; for b = a and
  ** N = 2^50 the same q, ||q*a||/2 = 345.8 units.  The computed values
  ** are within 5 units of the exact: the table's 10^-p2 and 10^q are
  ** rounded down (under 1 unit of their 128 bits), so that the product's
  ** top 128 bits are under 2 of their units low, which is under 2^-9 of
  ** f2's and 2^-1 of G's (sh >= 2); f2 is then under 1.01 units low, G
  ** under 1.5 of 2^-64 (the G that wrap, 0 and 2^64-1, leave earlier);
  ** u2 is 2^EMIN*10^324*2^60 rounded down (0.72 low at most), so that gu =
  ** floor(G*u2/2^64) is under 1.5*4.95/16 + 0.72 + 1 < 3 units low, u2>>1
  ** under 1; each test sums f2, gu and u2 or u2>>1 once each: under 5. */
  gu = idemNumMul128(G, u2, &lo);
  hiIn = 10*one + gu <= xf + u2;
  in = (xf <= gu) | hiIn;
  d = f2 + (5*(one>>1) + (u2>>1)) - gu;        /* (1/2 + 2 + u2/2)*2^60 */
  mask = (uint64_t)0 - (uint64_t)in;
  /* the answer's last four digits g: lit1 + hiIn, or lit2 - 2 + (d>>60)
  ** (d>>60 is 0 to 5), added in decimal a digit a byte: each byte was
  ** made 246 more, so that one that reaches 10 carries into the next,
  ** then those that did not carry are made 246 less.  A carry or a
  ** borrow past the four leaves the bytes above not 0, and g = 0 leaves
  ** all 0: g is from 1 to 9999 if and only if 1 <= g <= 0x09090909.
  ** (Only lit1 + hiIn ever fails it: with no multiple of 10^-323 in the
  ** interval the answer is 10*s1 + j, 1 <= j <= 9, whose last four
  ** digits are lit1's last three and j.) */
  k = (d>>60) ^ (((uint64_t)hiIn ^ (d>>60)) & mask);
  g = idemNumSubBcd((b2 ^ ((b1 ^ b2) & mask)) + k);
  if( g-1 >= 0x09090909 ){
    return idemNumSubSlow(zM, neg, nDig, zOut);
  }
  nD = nD1 + 1 - in;
  big = nD>4;

  /* g's 4 digits, the first in the lowest byte (as idemNumPut8()); the
  ** zeros at the end are the bytes 0 at the bottom of g (g is not 0), and
  ** the answer's digits (nD: it is 10^(nD-1) or more) all but those; then
  ** with nD < 4 g's 4-nD leading zeros dropped */
  nSig = nD - (idemNumCtz64(g)>>3);
  x = (uint32_t)g;
  v = x>>24 | (x>>8 & 0xff00) | (x<<8 & 0xff0000) | x<<24;
  v >>= 8*idemNumPos(4-nD);
  if( ((v & 0xff) | (uint32_t)big)==0 ){
    /* nD < 4 and the answer 10^nD units, 10^(1-x10) */
    return idemNumSubSlow(zM, neg, nDig, zOut);
  }
  v += 0x30303030u;

  /* (every choice by big a mask or a shift, not a jump: nD <= 4 is x10
  ** of 320 or more, and which answer, both at random) */
  *z = '-';                         /* kept only if neg: no branch */
  z += neg!=0;
  memcpy(z, zM, 16);
  x = (unsigned char)zM[0];
  z[0] = (char)(v ^ ((v ^ x) & (0u - (uint32_t)big)));
  idemNumStore4(z + 2 + idemNumPos(nD-5), v >> (8 - 8*big));
  pos = nSig + (nSig>1);
  z[pos] = 'e';
  idemNumStore4(z+pos+1, idemNumLoad4(zM + nDig + 2));
  return (int)(z - zOut) + pos + 5;
}

static IDEMNUM_INLINE int idemNumSub17At(
  const char *z, int n, int x10, char *zOut, int own
){
  const uint64_t one = (uint64_t)1<<60;
  int neg = z[0]=='-';
  const char *zM = z + neg;
  int d = zM[17]-'0';
  uint64_t w = idemNumDigits17(zM);
  uint64_t m, g, ti;
  uint64_t aGT[3];
  int isShort;
  assert( x10>=308 && x10<=324 );
  if( !idemNumSubProduct(w, -x10 - 16, &m, &g) ){
    /* near the halfway point, beyond the least normal binade, or 0 */
    return idemNumTiny3(z, n, -x10, zOut);
  }
  ti = idemNumSubT(-x10 - 16);
  g >>= 4;
  /* own (idemNumSub17()): 1 the literal likely its own answer, 2 B
  ** likely (outB the test that fails, first), else A likely or no hint */
  if( x10>=309 ){
    /* 10t < 1: a 16-digit decimal is always in the interval (A and B,
    ** 10 units of 10^q apart, are not both out: d*t + (10-d)*t < 1),
    ** so that the literal is never its own answer, and the test below
    ** never holds (its first two terms, summed, would make 10*ti > one) */
    isShort = 0;
  }else if( own==2 ){
    isShort = ti>=one || ((uint64_t)(10-d)*ti + g > one
                          && g+2<=(uint64_t)d*ti
                          && 2*g+4<=one+ti
                          && 2*g+ti>one);
  }else{
    isShort = ti>=one || (g+2<=(uint64_t)d*ti
                          && (uint64_t)(10-d)*ti + g > one
                          && 2*g+4<=one+ti
                          && 2*g+ti>one);
  }
  if( own==1 && IDEMNUM_LIKELY(isShort) ){
    /* the literal, as written (idemNumTiny3Out()'s own answer) */
    memcpy(zOut, z, 16);
    memcpy(zOut+n-16, z+n-16, 16);
    return n;
  }
  aGT[0] = g;
  aGT[1] = ti;
  aGT[2] = 1;
  return idemNumTiny3Out(z, n, -x10, zOut, w, m, IDEMNUM_EMIN, isShort,
                         aGT, 1, own==3);
}
/*
** e-310 and below: 100t < 1 (u is 494 units of the 17th digit or more),
** where idemNumTiny3Out() finds no answer in the literal's digits and
** leaves every literal to step 5: straight there from step 3's product
** (one in a hundred of the uniform subnormals; all of those drawn across
** their exponents), then idemNumSubOut().
*/
static IDEMNUM_INLINE int idemNumSubDeepAt(
  const char *z, int n, int x10, char *zOut, int nDig
){
  int neg = z[0]=='-';
  const char *zM = z + neg;
  const uint64_t *t = idemNumPow10[326 - x10];  /* 10^q, q = -x10-16 */
  int sh = idemNumSubRow[x10 - 308][0];
  uint64_t w, uLo, uHi, G;
  assert( n==neg + nDig + 6 && x10>=310 && x10<=323 );
  assert( t==idemNumPow10[-x10 - 16 - IDEMNUM_POW10_MIN]
          && sh==-1075 - idemNumFloorLog2Pow10(-x10 - 16) );
  /* w as idemNumDigits17() reads it (with 16 digits, times 10: the 'e'
  ** after them masked to 0), in scalar words, not SSE2's: the chain that
  ** each of these literals waits for starts here, and the moves to SSE2's
  ** registers and back are 6 cycles of it */
  w = (uint64_t)(zM[0]-'0')*10000000000000000ULL
    + (uint64_t)idemNumSwar8(idemNumLoad8(zM+2))*100000000
    + idemNumSwar8(idemNumLoad8(zM+10) & idemNumMask[nDig-1]);
  /* step 3 as idemNumSubProduct(), G only (its test of m left out: from
  ** 1e-323 up to 1e-309 m is 2 to 2^48; m itself is not needed: where
  ** idemNumSubOut() does not decide, idemNumExpLiteral()) */
  uHi = idemNumProduct(w, t, &uLo);
  G = (uHi<<(64-sh) | uLo>>sh) + ((uint64_t)1<<63);
  if( G+1>1 ){
    return idemNumSubOut(neg, G, x10, w, zM, nDig, zOut);
  }
  if( nDig==17 ) return idemNumTiny3(z, n, -x10, zOut);
  return idemNumExpLiteral(z, n, neg + 1, n - 5, zOut);
}
static IDEMNUM_NOINLINE int idemNumSubDeep(
  const char *z, int n, int x10, char *zOut
){
  return idemNumSubDeepAt(z, n, x10, zOut, 17);
}
/* The same for 16 digits (idemNumSubShort()): "%.17g" of a subnormal
** whose 17th digit is 0, one in ten. */
static IDEMNUM_NOINLINE int idemNumSubDeep16(
  const char *z, int n, int x10, char *zOut
){
  return idemNumSubDeepAt(z, n, x10, zOut, 16);
}
static IDEMNUM_NOINLINE int idemNumSub17(
  const char *z, int n, int x10, char *zOut
){
  /* e-308 (10t > 1: step 3b and its rest) in a copy of its own, where t
  ** is a constant: which way a subnormal takes is then decided here, from
  ** its exponent's text, not after step 3's product (a branch that the
  ** digits decide, mispredicted where e-308 and e-309 alternate at
  ** random, costs less the sooner it is decided) */
  if( x10==308 ){
    /* and at e-308 a copy for each likely answer, chosen by the last
    ** digit d, which all but decides it (u is 4.94 units of the 17th
    ** digit, so that a 16-digit decimal, a multiple of 10 units, lies in
    ** the interval of half-width 2.47 when d is near 0 or 10): d of 3
    ** to 7 the literal itself (all 22 015 of them among the shape's
    ** 80 000 literals), 1 or 2 a 16-digit answer below it (8 696 of
    ** 8 852), 8 or 9 one above it (8 739 of 8 877).  Each copy tests first what its answer
    ** makes true, so that the tests after step 3's product are
    ** predicted; the choice, a branch at random too, is made from the
    ** text.  (A hint only: each copy decides every literal exactly.)
    ** The number code alone, these literals: A or B 0.80x the time, the
    ** shape 0.96x-0.99x. */
    int d = z[17+(z[0]=='-')];
    if( (unsigned)(d-'3')<=4 ) return idemNumSub17At(z, n, 308, zOut, 1);
    if( d>='8' ) return idemNumSub17At(z, n, 308, zOut, 2);
    return idemNumSub17At(z, n, 308, zOut, 0);
  }
  if( x10==309 ){
    /* and at e-309 a copy for each likely way, chosen by the last two
    ** digits e2 (the same hint): u is 49.4 units of the 17th digit there
    ** and the literal within half a unit of the double, so that C (e2
    ** units below) is in the interval of half-width 24.7 for e2 up to 24
    ** and out from 26, and D (100-e2 above) in from 76 and out up to 74:
    ** e2 of 26 to 74 the closest 16 digits (outC and outD, tested first
    ** there, as in idemNumTiny3Out()), else C or D (tested first in the
    ** copy with own 3).  The number code alone: e-309 literals 0.89x the
    ** time, the shape 0.96x-0.98x. */
    const char *zM = z + (z[0]=='-');
    unsigned e2 = (unsigned)(zM[16]-'0')*10 + (unsigned)(zM[17]-'0');
    if( e2-26<=48 ) return idemNumSub17At(z, n, 309, zOut, 0);
    return idemNumSub17At(z, n, 309, zOut, 3);
  }
  if( x10<=323 ) return idemNumSubDeep(z, n, x10, zOut);
  return idemNumTiny3(z, n, -x10, zOut);
}

/*
** A literal with an exponent "e-3NN" of 308 to 324, as repr() and
** JSON.stringify() write subnormals: one digit (not 0), then a '.' and
** at most 15 more (the last not 0), or none ("5e-324").  Step 3 as in
** idemNumSub17() (the digits w, with zeros added up to 17: the same x),
** then step 3b's test with the literal's own last digit d and 10^q (t >= 1
** when 10^q >= 10^-323: the test holds), the literal copied when it
** passes (its layout is ECMAScript's), else step 5.  What step 3 leaves
** undecided goes to idemNumExpLiteral(), any other literal back to the
** way its caller would have taken (idemNumDecimalExpAny() with a '.',
** else idemNumCanonicalAny()).  Its integer digits end at z[iInt], its
** fraction digits at z[iFrac], the 'e'.
*/
static int idemNumDecimalExpAny(const char*, int, int, int, char*);
static int idemNumCanonicalAny(const char*, int, int, int, char*);
static IDEMNUM_NOINLINE int idemNumSubShort(
  const char *z, int n, int iInt, int iFrac, char *zOut
){
  const uint64_t one = (uint64_t)1<<60;
  int neg = z[0]=='-';
  int nDig = iFrac - iInt + (iFrac==iInt);  /* significant digits */
  int x10 = 300 + (z[iFrac+3]-'0')*10 + (z[iFrac+4]-'0');
  int d = z[iFrac-1]-'0', q, i;
  uint64_t w, m, g, G, ti;
  if( iInt!=neg+1 || z[neg]=='0' || d==0 || nDig>16 || z[iFrac]!='e'
   || x10<308 || x10>324 ){
    /* not that shape, or normal (1e-300 .. 1e-307): where it came from */
    if( iFrac>iInt ) return idemNumDecimalExpAny(z, n, iInt, iFrac, zOut);
    return idemNumCanonicalAny(z, n, iInt, iFrac, zOut);
  }
  if( nDig==16 && (unsigned)(x10-310)<=13 ){
    /* below 1e-309, as idemNumSubDeep() takes "%.17g"'s 17 digits */
    return idemNumSubDeep16(z, n, x10, zOut);
  }
  if( nDig>=11 ){
    /* The digits at once, as idemNumDigits17() reads them (the first,
    ** then the bytes after the '.'), the bytes of the second word beyond
    ** the last digit masked to 0: w is their value times 10^(17-nDig).
    ** The second load ends 17 bytes from the first digit, in the literal
    ** (nDig+6 bytes): the loop below, a step a digit, ends at a branch
    ** that the number of digits decides. */
    const char *zM = z + neg;
    uint64_t c0 = (uint64_t)(unsigned char)zM[0] | idemNumLoad8(zM+2)<<8;
    uint64_t c1 = idemNumLoad8(zM+9) & idemNumMask[nDig];
    w = idemNumSwar16(c0, c1)*10;
  }else{
    w = (uint64_t)(z[neg]-'0');
    for(i=iInt+1; i<iFrac; i++) w = w*10 + (uint64_t)(z[i]-'0');
    w *= idemNumPow10Int[17-nDig];
  }
  if( !idemNumSubProduct(w, -x10-16, &m, &G) ){
    return idemNumExpLiteral(z, n, iInt, iFrac, zOut);
  }
  q = -x10 - nDig + 1;
  ti = q>-324 ? one : idemNumSubT(q);
  g = G >> 4;
  if( ti>=one || (g+2<=(uint64_t)d*ti
                  && (uint64_t)(10-d)*ti + g > one
                  && 2*g+4<=one+ti
                  && 2*g+ti>one) ){
    /* The literal, as written (6 to 22 bytes) */
    if( n>=16 ){
      memcpy(zOut, z, 16);
      memcpy(zOut+n-16, z+n-16, 16);
    }else if( n>=8 ){
      memcpy(zOut, z, 8);
      memcpy(zOut+n-8, z+n-8, 8);
    }else{
      memcpy(zOut, z, 4);
      memcpy(zOut+n-4, z+n-4, 4);
    }
    return n;
  }
  return idemNumFormatParts(neg, m, IDEMNUM_EMIN, zOut);
}

/* idemNumTiny17(), else idemNumExpLiteral(): where the common path sends
** a decimal with an exponent, below 1e-307 or above 1e307. */
static IDEMNUM_NOINLINE int idemNumTiny(const char *z, int n, char *zOut){
  int neg = z[0]=='-';
  int r = idemNumTiny17(neg, z+neg, n-neg, zOut);
  if( r!=-2 ) return r;
  return idemNumExpLiteral(z, n, -1, -1, zOut);
}


/*
** idemNumLongTry() for 18 digits from zD[0] (17 significant ones or more:
** the common path's limit is 17), the '.' at zD[k] (k > 17: none among
** them): w is all of them, exactly, and step 3 is the plain one.  Not
** inlined there: it cost the 19-digit way 6 instructions a number.
*/
static IDEMNUM_NOINLINE int idemNumLong18(
  int neg, const char *zD, int k, int L, char *zOut
){
  int j = k<16 ? k : 16, e;
  uint64_t m0 = idemNumMask[8+j], m1 = idemNumMask[j], w, m;
  w = idemNumSwar16((idemNumLoad8(zD) & m0) | (idemNumLoad8(zD+1) & ~m0),
                    (idemNumLoad8(zD+8) & m1) | (idemNumLoad8(zD+9) & ~m1));
  w = w*100 + (uint64_t)(zD[16 + (k<=16)] - '0')*10
    + (uint64_t)(zD[17 + (k<=17)] - '0');
  if( !idemNumEiselLemire(w, L - 17, &m, &e) ) return -2;
  if( m==0 ){
    zOut[0] = '0';
    return 1;
  }
  return idemNumFormatParts(neg, m, e, zOut);
}

/*
** A literal in [1e-324, 1e-323) whose first 17 digits are W (more follow),
** where step 3 does not decide (below 2^-1074: idemNumLongAt()): the
** value is in [W, W+1) * 10^-340; 0 if that is below half the least
** subnormal, 2.4703282292062327208...e-324, the least subnormal if above
** it and below 2^-1074 itself (4.94065645841246544...e-324); else (W the
** halfway point's first 17 digits, or above 2^-1074) -2, the long way.
*/
static IDEMNUM_NOINLINE int idemNumBelowLeast(
  int neg, uint64_t W, char *zOut
){
  if( W<24703282292062327ULL ){
    zOut[0] = '0';
    return 1;
  }
  if( W>24703282292062327ULL && W<49406564584124654ULL ){
    return idemNumFormatTiny(neg, 1, IDEMNUM_EMIN, zOut);
  }
  return -2;
}

/*
** A decimal of 18 significant digits or more, 10^L <= |x| < 10^(L+1)
** with -307 <= L <= 307, as "%.18g" to "%.21g" print doubles (C's
** printf(), numpy's and Go's with a precision): its first significant
** digit zD[0], zD[kd] its '.' if kd >= 0 (else the '.' is before zD).
** The answer from its own digits, as idemNumIntExp() takes an integer
** with an exponent, where step 5 from the double took it (~205
** instructions):
**
** Step 3 for w, its first nW = 18 or 19 digits (a 20th: the span
** [w, w+1) * 10^q, as idemNumEiselLemireSpan() decides it; undecided,
** the long way), with G and t as step 3b has them: G*2^60 in [gi, gi+2)
** the place of w*10^q in the interval [v-u/2, v+u/2], t*2^60 in
** [ti, ti+1) for t = 10^q/u.  As w*10^q is within u/2 of v and
** 2^52*u <= v < 2^53*u, t is in (2^52/10^nW, 2^53/10^(nW-1)): with
** P = 10^(nW-16), P/10 * t < 0.91 and 10P * t > 4.5.  So the level a is
** nW-17 where P*t > 1 surely (P0 = P/10, nOut = 17), nW-16 where P*t is
** surely below 1 (P0 = P, nOut = 16): P0*t < 1 < 10*P0*t (Schubfach's k
** at the digit of P0; the answer has nOut digits or fewer).  The answer
** is the multiple of 10*P0 in the interval if there is one (at most one,
** 10*P0*t > 1), C = w - r1 (r1 = w mod 10*P0, at G - r1*t) or D = C +
** 10*P0 (at G + s*t, s = 10*P0 - r1), each tested surely in or surely
** out as idemNumIntExp() tests them; else (both surely out: no decimal
** of fewer than nOut digits is in it) the multiple of P0 closest to v.
** For a literal printed from its double (|x-v| <= 10^q/2) that is w
** rounded at P0: R = w - r0 + j*P0 (r0 = w mod P0), j = 1 if 2*r0 > P0
** (or 2*r0 == P0 and w*10^q < v: gi < 2^59), else 0.  R is the closest if
** it is within P0*t/2 of v, |G + (j*P0 - r0)*t - 1/2| < P0*t/2: with
** A2 = P0 - 2*(j*P0 - r0) >= 0 and B2 = P0 + 2*(j*P0 - r0) >= 0, that is
** G - A2*t/2 < 1/2 and G + B2*t/2 > 1/2, which 2*gi + 4 <= 2^60 + A2*ti
** and 2*gi + B2*ti > 2^60 prove (2*gi < 2^61, and A2*ti, B2*ti below
** 2*P0 * 2^60/P0: no overflow).  R is then inside the interval (P0*t < 1)
** and not a multiple of 10*P0 (C and D are out), so its digit at P0, the
** literal's there plus j, is 1 to 9 (tested all the same).
**
** The answer's digits are the literal's first nOut (R) or nOut-1 (C, D),
** the last plus j, 1 or 0: the literal's text to that digit (the sign,
** 0.000, the digits before the '.' and the '.') with the digit changed,
** where ECMAScript lays the answer out so (ddd.ddd and 0.000ddd with the
** '.' among or before the digits kept; d.ddde+NN, its exponent written
** anew; d.ddde-N from 1e-6 moved to 0.000ddd); else from its value.  A
** carry (D's digit 9) and what none of the tests proves (a tie, the ends
** of the interval, m a power of two, where the interval is narrower
** below; a literal not printed from its double, as 18 random digits)
** go to step 5 from the double.
*/
static IDEMNUM_INLINE int idemNumCutW(
  const char *z, const char *zD, int kd, int L, char *zOut,
  uint64_t w, uint64_t ve, uint64_t lo, int span,
  const int isExp, const int nW
){
  const uint64_t one = (uint64_t)1<<60;
  const uint64_t half = (uint64_t)1<<63;
  const uint64_t P = nW==18 ? 100 : 1000;
  unsigned ud = (unsigned)kd;       /* the '.' is zD[kd] if kd >= 0 */
  const uint64_t *t;
  uint64_t P0, r0, r1, s, uHi, uLo, f, m, g, ti;
  int q, lz, sh, hi, nOut, delta, k, c;

  /* Step 3 */
  q = L - nW + 1;
  t = idemNumPow10[q - IDEMNUM_POW10_MIN];
  lz = idemNumClz64(w);
  uHi = idemNumProduct(w<<lz, t, &uLo);
  sh = 10 + (int)(uHi>>63);
  f = uHi<<(64-sh) | uLo>>sh;
  m = (uHi>>sh) + (f>>63);
  g = f + half;
  /* undecided near the halfway point: G 0 or 2^64-1 (step 3b), or the
  ** span beyond w may hold it */
  if( span ? half-f<(t[0]>>(sh-lz)) + 3 : g+1<=1 ) goto long_way;
  sh -= lz;
  if( (m & (IDEMNUM_HIDDEN-1))==0 ) goto step_5;   /* m a power of 2 */
  g >>= 4;
  ti = t[0] >> (sh + 4);

  /* The level: a = nW-17 if P*t > 1 surely (hi), else nW-16 if it is
  ** surely at most 1 */
  hi = P*ti>one;
  if( hi ){
    P0 = P/10;
    r0 = lo;
    r1 = ve;
  }else{
    if( P*(ti+1)>one ) goto step_5;
    P0 = P;
    r0 = ve;
    r1 = ve + (uint64_t)(zD[15 + (ud<=15)] - '0')*P;
  }
  nOut = 16 + hi;
  s = P0*10 - r1;
  {
    int outC = g+2<=r1*ti;
    int outD = g + s*ti>one;
    if( outC & outD ){
      /* R, closest to v, or step 5 */
      uint64_t j = 2*r0 + (g<(one>>1))>P0;
      uint64_t A2 = j ? 2*r0 - P0 : P0 + 2*r0;
      uint64_t B2 = j ? 3*P0 - 2*r0 : P0 - 2*r0;
      if( (2*g+4<=one+A2*ti) & (2*g+B2*ti>one) ){
        delta = (int)j;
      }else{
        /* v further from w (digits not printed from the double: 40 random
        ** digits): the multiple of P0 closest to v by idemNumIntExp()'s
        ** j (one division), proven as there (P0*t is in (1/10, 1) here
        ** too), else step 5 */
        int64_t T0 = (int64_t)(P0*ti), T0h = T0 + (int64_t)P0;
        int64_t aLo = (int64_t)(one>>1) - (int64_t)g - 2 + (int64_t)(r0*ti);
        int64_t aHi = (int64_t)(one>>1) - (int64_t)g + (int64_t)(r0*(ti+1));
        int64_t jj = (2*(aLo>>2) + 15*(T0>>2))/(2*(T0>>2)) - 7;
        int64_t jT = jj*T0, jTh = jj*T0h;
        if( !((jj>=1 ? 2*jTh - T0h : 2*jT - T0)<=2*aLo)
         || !(2*aHi<=(jj>=0 ? 2*jT + T0 : 2*jTh + T0h)) ){
          goto step_5;
        }
        delta = (int)jj;
      }
    }else if( outC && g+2+s*(ti+1)<=one ){
      nOut--;                       /* D inside */
      delta = 1;
    }else if( outD && g>=r1*(ti+1) && g+2<=one+r1*ti ){
      nOut--;                       /* C inside */
      delta = 0;
    }else{
      goto step_5;
    }
  }
  /* k: the answer's last digit in the text, c that digit of the answer */
  k = nOut - 1;
  k += (int)(zD - z) + (ud<=(unsigned)k);
  c = z[k] + delta;
  if( IDEMNUM_LIKELY((unsigned)(c-'1')<9)
   && (isExp ? kd==1 && (L>=21 || L<=-7) : L>=-6 && kd<=nOut) ){
    /* The literal's text to there (the sign, 0.000 or the digits before
    ** the '.' and the '.'), then c; then the exponent, written anew */
    int k0 = k - 15 + (k<15);       /* 14 if 15 digits, no '.' in them */
    memcpy(zOut, z, 16);
    memcpy(zOut+k0, z+k0, 16);
    zOut[k] = (char)c;
    k++;
    if( isExp ) k += idemNumPutExp(zOut+k, L);
    return k;
  }
  if( isExp && kd==1 && L<0 && L>=-6 && IDEMNUM_LIKELY((unsigned)(c-'1')<9) ){
    /* d.ddde-N, 1e-6 <= |v| < 1: 0.000 then its digits */
    char *o = zOut + (z[0]=='-');
    zOut[0] = '-';
    memcpy(o, "0.000000", 8);
    o[1-L] = zD[0];
    memcpy(o+2-L, zD+2, 16);
    o += 2 - L + nOut - 1;
    o[-1] = (char)c;
    return (int)(o - zOut);
  }
  if( c>'9' ) goto step_5;          /* a carry */
  {
    /* Another layout, or zeros at the end: from the value, without
    ** those zeros */
    uint64_t D = w/idemNumPow10Int[nW-nOut] + (uint64_t)delta;
    while( D%10==0 ){
      D /= 10;
      nOut--;
    }
    return idemNumLayoutValue(zOut, z[0]=='-', D, nOut, L);
  }

step_5:
  return idemNumFromDouble(zOut, z[0]=='-', m,
                           sh + 1 + idemNumFloorLog2Pow10(L - nW + 1));
long_way:
  return -2;
}
static IDEMNUM_INLINE int idemNumCutAt(
  const char *z, int n, const char *zD, int kd, int L, char *zOut,
  const int isExp
){
  unsigned ud = (unsigned)kd;       /* the '.' is zD[kd] if kd >= 0 */
  int p = ud<16 ? kd : 16;
  int i19 = (int)(zD - z) + 18 + (ud<=18);
  const char *zB = zD + (p<16);
  uint64_t m0 = idemNumMask[p+8], m1 = idemNumMask[p];
  uint64_t w, d17, d18, d19;

  /* w: the first 16 digits (the '.' taken out as the common path takes
  ** it), then the 17th and 18th; a 19th, and a 20th, if the byte where
  ** it would be is in the literal and a digit (a 0 at the end, not
  ** significant, is as good: the same value).  With an exponent the
  ** literal goes on past n (at least its 'e' and a digit), but where
  ** zD[kd] is that 'e' (an integer of 18 digits, idemNumLongExp()), the
  ** byte after it is the exponent's: "977071454931587584e1", a tie, was
  ** read as 9770714549315875841 and rounded up (main to e697010). */
  w = idemNumSwar16((idemNumLoad8(zD) & m0) | (idemNumLoad8(zB) & ~m0),
                    (idemNumLoad8(zD+8) & m1) | (idemNumLoad8(zB+8) & ~m1));
  d17 = (uint64_t)(unsigned char)zD[16 + (ud<=16)] - '0';
  d18 = (uint64_t)(unsigned char)zD[17 + (ud<=17)] - '0';
  if( (isExp ? ud!=18 || zD[18]=='.' : i19<n)
   && (d19 = (uint64_t)(unsigned char)z[i19] - '0')<10 ){
    int i20 = i19 + 1 + (ud==19);
    int span = i20<n && (unsigned)(z[i20]-'0')<10;
    uint64_t lo = d18*10 + d19;
    return idemNumCutW(z, zD, kd, L, zOut, w*1000 + d17*100 + lo,
                       d17*100 + lo, lo, span, isExp, 19);
  }
  return idemNumCutW(z, zD, kd, L, zOut, w*100 + d17*10 + d18,
                     d17*10 + d18, d18, 0, isExp, 18);
}
static IDEMNUM_NOINLINE int idemNumCutDec(
  const char *z, int n, const char *zD, int kd, int L, char *zOut
){
  return idemNumCutAt(z, n, zD, kd, L, zOut, 0);
}
static IDEMNUM_NOINLINE int idemNumCutExp(
  const char *z, int n, const char *zD, int kd, int L, char *zOut
){
  return idemNumCutAt(z, n, zD, kd, L, zOut, 1);
}
/* The same, else the long way (for the entry points; copies of their
** own: a call of the two above cost "%.20g" 15 instructions a number) */
static int idemNumLong(const char*, int, int, char*);
static IDEMNUM_NOINLINE int idemNumCutDecOr(
  const char *z, int n, const char *zD, int kd, int L, char *zOut
){
  int r = idemNumCutAt(z, n, zD, kd, L, zOut, 0);
  if( r!=-2 ) return r;
  if( z+n-zD>22 ) return idemNumLong(z, n, (int)(zD-z)+kd, zOut);
  return idemNumCanonicalSlow(z, n, zOut);
}
static IDEMNUM_NOINLINE int idemNumCutExpOr(
  const char *z, int n, const char *zD, int kd, int L, char *zOut
){
  int r = idemNumCutAt(z, n, zD, kd, L, zOut, 1);
  return r!=-2 ? r : idemNumCanonicalSlow(z, n, zOut);
}

/*
** Step 4 where step 3 is undecided for the span of a long decimal's first
** 19 digits (idemNumLongAt(), which hands over what its scan found): x is
** in [m, m+1) ulps, and one comparison, with the halfway point between
** them, decides (idemNumCorrectNext()).  The digits are zD[0..k),
** then zD[k+1..nDig+1) after the '.' at zD[k] (k==nDig: none after it,
** or no '.' among them), the first not 0; 10^L <= x < 10^(L+1).  The
** zeros at their end are dropped (idemNumCorrectNext() keeps
** IDEMNUM_MAX_DIGITS of the rest as the slow path does).  Then step 5.  Returns -1 if x rounds to
** infinity (the callers' byte-by-byte way reports it).  Until half16
** the callers took the slow path from here, whose own scan of the literal
** and gathering of its digits cost ~300 instructions of a decimal halfway
** between two doubles (~1 500).
*/
static IDEMNUM_NOINLINE int idemNumStep4Span(
  int neg, const char *zD, int k, int nDig, int L,
  uint64_t m, int e, char *zOut
){
  const char *zFrac = zD + k + 1;
  int nInt = k, nFrac = nDig - k;
  uint64_t bits;
  double v;
  while( nFrac>0 && zFrac[nFrac-1]=='0' ) nFrac--;
  if( nFrac==0 ){
    while( zD[nInt-1]=='0' ) nInt--;      /* zD[0] is not 0 */
  }
  if( idemNumCorrectNext(zD, nInt, zFrac, nFrac, L, m, e, &bits) ){
    return -1;
  }
  memcpy(&v, &bits, sizeof(v));
  return idemNumberFormat(neg ? -v : v, zOut);
}

/*
** A decimal with no exponent whose '.' is z[iDot], and 19 digits or more
** from its first significant one: its first 19 significant digits w, read
** at once (two words of 8, the '.' taken out as step 3b takes it, and 3
** more), then step 3 for the whole span [w, w+1) * 10^q that holds the
** literal (idemNumEiselLemireSpan()), then step 5.  With 18 digits (zeros
** at the end counted: "12345678901234567.0"), w is all of them, exactly,
** and step 3 is the plain one.  Returns -2 if the literal is not of that
** shape; where step 3 does not decide, step 4 from there with what this
** scan found (idemNumStep4Span(): -1 if x rounds to infinity).
** idemNumLongAt() is the same for the digits z[0..n) of a decimal's
** mantissa times 10^x10 (idemNumLongExp(): an exponent after them).
*/
static IDEMNUM_INLINE int idemNumLongAt(
  const char *z, int n, int iDot, int x10, char *zOut
){
  int neg = z[0]=='-';
  const char *zD = z + neg;         /* the first significant digit */
  int k;                            /* zD[k] is the '.', or k > 19 */
  int nDig;                         /* digits from zD, the '.' not counted */
  int L, e, j;
  uint64_t m0, m1, w, m;
  int kDot;                         /* zD[kDot] is the '.', or kDot==nDig */
  if( zD[0]=='0' ){
    /* 0.000ddd */
    for(zD=z+iDot+1; zD<z+n && zD[0]=='0'; zD++){}
    nDig = (int)(z + n - zD);
    L = (int)(z + iDot - zD);
    k = 32;
    kDot = nDig;
  }else{
    k = kDot = iDot - neg;
    nDig = n - neg - 1;
    L = k - 1;
  }
  L += x10;
  if( L>308 || L<-324 ){
    if( L>308 ) return -2;
    /* below 1e-324, less than half the least subnormal: 0 */
    zOut[0] = '0';
    return 1;
  }
  if( nDig<18 ) return -2;
  if( nDig<=21 && L>=-307 && L<=307 ){
    /* "%.18g" to "%.21g" with zeros at the end or another layout: the
    ** answer from the literal's digits (idemNumCutAt()).  (Not longer
    ** ones: 40 random digits, far from their double, cost more there
    ** than step 5, 1.10x -> 1.15x json() sized) */
    int kd = k==32 ? (int)(z + iDot - zD) : k;   /* (< 0: before zD) */
    return x10 ? idemNumCutExp(z, n, zD, kd, L, zOut)
               : idemNumCutDec(z, n, zD, kd, L, zOut);
  }
  if( nDig==18 ) return idemNumLong18(neg, zD, k, L, zOut);
  j = k<16 ? k : 16;
  m0 = idemNumMask[8+j];
  m1 = idemNumMask[j];
  w = idemNumSwar16((idemNumLoad8(zD) & m0) | (idemNumLoad8(zD+1) & ~m0),
                    (idemNumLoad8(zD+8) & m1) | (idemNumLoad8(zD+9) & ~m1));
  w = w*1000 + (uint64_t)(zD[16 + (k<=16)] - '0')*100
    + (uint64_t)(zD[17 + (k<=17)] - '0')*10 + (uint64_t)(zD[18 + (k<=18)] - '0');
  j = idemNumEiselLemireSpan(w, L - 18, &m, &e);
  if( j<=0 ){
    if( L==-324 ) return idemNumBelowLeast(neg, w/100, zOut);
    if( j==0 || e>IDEMNUM_EMAX ) return -2;
    return idemNumStep4Span(neg, zD, kDot, nDig, L, m, e, zOut);
  }
  if( m==0 ){
    zOut[0] = '0';
    return 1;
  }
  return idemNumFormatParts(neg, m, e, zOut);
}
static int idemNumLongTry(const char *z, int n, int iDot, char *zOut){
  return idemNumLongAt(z, n, iDot, 0, zOut);
}

/* idemNumLongTry(), else the long way: where the common path sends a
** decimal with no exponent and more than 17 significant digits. */
static IDEMNUM_NOINLINE int idemNumLong(
  const char *z, int n, int iDot, char *zOut
){
  int r = idemNumLongTry(z, n, iDot, zOut);
  if( r!=-2 ) return r;
  return idemNumCanonicalSlow(z, n, zOut);
}

/* The same for a decimal with an exponent, its '.' z[iDot] and its 'e' or
** 'E' z[iExp], where the common path sends it with more than 17
** significant digits (Python's Decimal(x) of a double, "3.2383...E-17",
** ~90 digits): idemNumLongAt() for the mantissa z[0..iExp) times 10^x10,
** the exponent's leading zeros skipped 8 at a time; one of more than 4
** digits (beyond any double, or 0), the long way.
** iDot==iExp for an integer with an exponent ("12345678901234567890e5"):
** idemNumLongAt() then sees a '.' at z[iExp] (nM, one byte more: its
** digits are the digits before it, and it reads none after them). */
static IDEMNUM_NOINLINE int idemNumLongExp(
  const char *z, int n, int iDot, int iExp, char *zOut
){
  int i = iExp + 1, eNeg = z[i]=='-', x10 = 0;
  int nM = iExp + (iDot==iExp);     /* the mantissa, a '.' counted */
  i += (eNeg || z[i]=='+');
  i = idemNumSkipZeros(z, i, n);
  if( n-i<=4 ){
    int r;
    for(; i<n; i++) x10 = x10*10 + (z[i]-'0');
    r = idemNumLongAt(z, nM, iDot, eNeg ? -x10 : x10, zOut);
    if( r!=-2 ) return r;
  }
  return idemNumCanonicalSlow(z, n, zOut);
}

/*
** An integer of 18 digits or more with an exponent, its digits ending at
** z[iInt], the 'e' or 'E' ("123456789012345678901e-30"; where
** idemNumberCanonical() sends it), answered from its own digits where the
** value is normal (1e-307 .. 1e307): step 3 for w, its first 19 digits
** (18 and a 0: the same value; a span [w, w+1) * 10^q if more follow, as
** idemNumEiselLemireSpan() takes it), then, instead of step 5's product,
** the answer from w and the fraction of step 3's product, as steps 3b and
** 3c take a 17-digit literal.  In units of u, the double's ulp, with
** t = 10^q/u (t*2^60 in [ti, ti+1)) and G the place of w*10^q in the
** interval [v-u/2, v+u/2] (G*2^60 in [gi, gi+2) for gi = (f + 2^63) >> 4,
** f the bits of step 3's product below v's, as 3b has them): a = 2 or 3,
** so that U0 = 10^a * t < 1 < U1 = 10^(a+1) * t (Schubfach's k,
** 10^k <= u < 10^(k+1), at the digit of U0).  Then (Schubfach's answer,
** from w's digits): the multiple of U1 in the interval if there is one
** (one at most: U1 > 1), which is the multiple C = w - r1 (r1 = w mod
** 10^(a+1), C at G - r1*t) or C + U1; if both are surely outside, the
** multiple of U0 closest to v, w - r0 + j*10^a for the integer j nearest
** to (1/2 - G + r0*t)/U0 (r0 = w mod 10^a), proven as step 3c proves its
** j.  Each test takes the worst end of gi's and ti's bounds; what none
** proves (an end of the interval, a tie, m a power of two, where the
** interval is narrower below) goes to step 5 from the double, and
** anything else (more than 4 digits of exponent after its zeros, a value
** beyond 1e-307 .. 1e307, step 3 undecided) to idemNumLongExp(), the long
** decimal's product, which took them all.
*/
static IDEMNUM_NOINLINE int idemNumIntExp(
  const char *z, int n, int iInt, int iFrac, char *zOut
){
  const uint64_t one = (uint64_t)1<<60;
  const uint64_t half = (uint64_t)1<<63;
  int neg = z[0]=='-';
  const char *zD = z + neg;         /* the first digit, not 0 */
  int nDig = iInt - neg;            /* the integer's digits */
  int i = iInt + 1, eNeg = z[i]=='-', x10 = 0;
  int L, q, lz, sh, a3, nOut, E, c;
  const uint64_t *t;
  uint64_t w, uHi, uLo, f, m, g, ti, P0, r0, r1, s, D, wd, v2, v3, v4;
  /* (iFrac is iInt: the other ways' arguments, so that
  ** idemNumberCanonical() jumps here with its registers as they are) */
  if( nDig<18 ) return idemNumCanonicalAny(z, n, iInt, iFrac, zOut);
  i += (eNeg || z[i]=='+');
  if( n-i>4 ){
    i = idemNumSkipZeros(z, i, n);
    if( n-i>4 ) goto long_way;
  }
  /* its k <= 4 digits, the last k of the literal's last 4 bytes (the
  ** literal has 20 or more), at once */
  {
    /* (the mask of its digits' low nibbles from a table: no shifts) */
    static const uint32_t aNib[5] = {
      0, 0x0f000000, 0x0f0f0000, 0x0f0f0f00, 0x0f0f0f0f
    };
    uint32_t c4 = idemNumLoad4(z+n-4) & aNib[n-i];
    c4 = (c4 * (10*256 + 1)) >> 8;
    x10 = (int)(((c4 & 0x00ff00ff) * (100*65536 + 1)) >> 16);
  }
  L = nDig - 1 + (eNeg ? -x10 : x10);
  if( L<-307 || L>307 ) goto long_way;

  /* Step 3 for w; v3 and v2 its last 3 and 2 digits (w mod 1000 and
  ** mod 100, read from the text: no division for r0 and r1 below) */
  {
    /* its 16th to 19th digits at once (a 19th 0 where it has 18: the
    ** 'e' masked), in pairs: idemNumSwar4()'s first step */
    uint32_t c4 = idemNumLoad4(zD+15) & (nDig>18 ? 0x0f0f0f0fu : 0x000f0f0fu);
    c4 = (c4 * (10*256 + 1)) >> 8;
    v2 = (c4>>16) & 0xff;
    v4 = (c4 & 0xff)*100 + v2;
  }
  v3 = (uint64_t)(zD[16]-'0')*100 + v2;
  w = idemNumSwar16(idemNumLoad8(zD), idemNumLoad8(zD+8))*1000 + v3;
  q = L - 18;
  t = idemNumPow10[q - IDEMNUM_POW10_MIN];
  lz = idemNumClz64(w);
  uHi = idemNumProduct(w<<lz, t, &uLo);
  sh = 10 + (int)(uHi>>63);
  f = uHi<<(64-sh) | uLo>>sh;
  m = (uHi>>sh) + (f>>63);
  /* undecided if x may be at or near the halfway point: f up to 2 units
  ** short, and the span's width wd beyond w if more digits follow (f
  ** above half rounds up whatever follows: idemNumEiselLemireSpan()) */
  wd = nDig>19 ? t[0]>>(sh-lz) : 0;
  if( half-f<wd+3 ) goto long_way;
  if( (m & (IDEMNUM_HIDDEN-1))==0 ) goto step_5;   /* 2^52 or 2^53 */

  /* The level a: U0 < 1 < U1.  t = (v/u)/w is in (2^52/10^19,
  ** 2^53/10^18): 100t < 0.91 and 10^4 t > 4.5, so that a is 3 if 1000t is
  ** surely below 1, else 2 if 1000t is surely above it */
  g = (f + half) >> 4;
  ti = t[0] >> (sh + 4 - lz);
  a3 = 1000*(ti+1)<=one;
  if( !a3 && 1000*ti<=one ) goto step_5;
  /* r0 = w mod 10^a, r1 = w mod 10^(a+1): w's last digits (its 16th,
  ** z[15], for r1 at a = 3) */
  P0 = 100;
  r0 = v2;
  r1 = v3;
  if( a3 ){
    P0 = 1000;
    r0 = v3;
    r1 = v4;
  }
  s = P0*10 - r1;
  {
    /* C at G - r1*t, C + U1 at G + s*t: surely in, surely out (the
    ** products below 10*2^60: r1 < 10^(a+1), ti <= 2^60/10^a) */
    int outC = g+2<=r1*ti;
    int inC = g>=r1*(ti+1) && g+2<=one+r1*ti;
    int outD = g+s*ti>one;
    int inD = g+2+s*(ti+1)<=one;
    nOut = 17 - a3;                 /* 10^a: a multiple of U0 */
    if( inC & outD ){
      c = zD[nOut-2];
    }else if( inD & outC ){
      c = zD[nOut-2] + 1;
    }else if( outC & outD ){
      /* The multiple of U0 closest to v: a*2^60 in (aLo, aHi), U0*2^60
      ** in [T0, T0h), |a| < 1/2 + U0 and U0 > 1/10: |j| <= 6 and
      ** |j*U0| < 2.  j is the integer nearest to aLo/T0 (a guess, from a
      ** quarter of each, which keeps 15*T0 in range: aLo/T0 + 7.5 > 0),
      ** proven by (2j-1)*U0 <= 2a < (2j+1)*U0 at the worst ends, 2j-1
      ** and 2j+1 times T0h where they are positive, T0 where negative
      ** (no tie: those fail).  aLo is in (-2^59 - 2, 2^59 + T0), T0 in
      ** (2^60/10, 2^60): |j*T0h| < 2.5*2^60, no product overflows. */
      int64_t T0 = (int64_t)(P0*ti), T0h = T0 + (int64_t)P0;
      int64_t aLo = (int64_t)(one>>1) - (int64_t)g - 2 + (int64_t)(r0*ti);
      int64_t aHi = (int64_t)(one>>1) - (int64_t)g + (int64_t)(r0*(ti+1));
      int64_t j = (2*(aLo>>2) + 15*(T0>>2))/(2*(T0>>2)) - 7;
      int64_t jT = j*T0, jTh = j*T0h;
      assert( j>=-6 && j<=6 && jTh<(int64_t)(3*one) && jTh>-(int64_t)(3*one) );
      if( !((j>=1 ? 2*jTh - T0h : 2*jT - T0)<=2*aLo) ) goto step_5;
      if( !(2*aHi<=(j>=0 ? 2*jT + T0 : 2*jTh + T0h)) ) goto step_5;
      c = zD[nOut-1] + (int)j;
      if( IDEMNUM_LIKELY((unsigned)(c-'1')<9) ) goto out;
      D = w/P0 + (uint64_t)j;
      if( D%10==0 || D<idemNumPow10Int[nOut-1] || D>=idemNumPow10Int[nOut] ){
        goto step_5;
      }
      return idemNumLayoutValue(zOut, neg, D, nOut, L);
    }else{
      goto step_5;
    }
  }
  /* A multiple of U1: the literal's first nOut digits, the last plus 0
  ** or 1 (then as below); else its digits less the zeros at its end */
  nOut--;
  if( IDEMNUM_LIKELY((unsigned)(c-'1')<9) ) goto out;
  D = w/(P0*10) + (uint64_t)(c!=zD[nOut-1]);
  E = q + 19 - nOut;
  if( D==idemNumPow10Int[nOut] ){
    D = 1;
    E += nOut;
    nOut = 1;
  }
  while( D%10==0 ){
    D /= 10;
    nOut--;
    E++;
  }
  return idemNumLayoutValue(zOut, neg, D, nOut, E + nOut - 1);

out:
  if( L>=21 || L<=-7 ){
    /* The literal's first nOut digits but the last, then c (1 to 9: no
    ** carry, no zero at the end), as d.ddde+NN (its first digit where
    ** the literal's is), from the literal's text (18 digits or more) */
    char *o = zOut + neg;
    zOut[0] = '-';
    o[0] = zD[0];
    o[1] = '.';
    memcpy(o+2, zD+1, 16);
    o[nOut] = (char)c;
    return neg + nOut + 1 + idemNumPutExp(o+nOut+1, L);
  }else{
    /* The same in another layout, from a copy (its first 17 bytes) */
    char aBuf[48];
    memcpy(aBuf, zD, 16);
    aBuf[16] = zD[16];
    aBuf[nOut-1] = (char)c;
    return idemNumLayout(zOut, neg, aBuf, nOut, L + 1);
  }
step_5:
  return idemNumFromDouble(zOut, neg, m,
                           sh + 1 + idemNumFloorLog2Pow10(q) - lz);
long_way:
  return idemNumLongExp(z, n, iInt, iInt, zOut);
}

#ifdef IDEM_SSE2
/* idemNumberDecimal() of a decimal whose first digit is not 0 and that
** has 19 digits or more (the canonicalizer's scan of a long number knows
** it, with SSE2): idemNumLongTry() without the common path's way to it,
** and -2 where it does not take the literal (then the caller calls
** idemNumberDecimal()).  Where step 3 does not decide (2^-8 of an ulp, a
** decimal halfway between two doubles), step 4 from there
** (idemNumStep4Span(); -1 if it overflows: the caller's
** idemNumberDecimal() then says so). */
IDEMNUM_NOINLINE IDEM_PRIVATE int idemNumberLongDecimal(
  const char *z, int n,
  int iDot,
  char *zOut
){
  return idemNumLongTry(z, n, iDot, zOut);
}
/* The same for a decimal with an exponent whose mantissa z[0..iExp) is
** such a decimal, x10 the exponent's value (read by the canonicalizer's
** scan of a long number): idemNumLongExp() without the common path's way
** to it nor the exponent's second reading; -2 where the value is beyond
** the range (then idemNumberDecimalExp()).  Where step 3 does not decide,
** step 4 from there, as idemNumberLongDecimal() takes it. */
IDEMNUM_NOINLINE IDEM_PRIVATE int idemNumberLongDecimalExp(
  const char *z, int iExp,
  int iDot, int x10,
  char *zOut
){
  return idemNumLongAt(z, iExp, iDot, x10, zOut);
}
#endif

/*
** idemNumberCanonical() of every literal that step 3b does not take: the
** scan of step 1, then steps 2 to 5, the ways of a literal of 17 or 19
** digits or more first (where step 3 does not decide for one of 19 or
** more, step 4 is taken there: idemNumStep4Span()).
*/
static IDEMNUM_NOINLINE int idemNumCanonicalSlow(
  const char *z, int n, char *zOut
){
  char aDig[IDEMNUM_MAX_DIGITS+1];  /* Significant digits, +1 for a '1' */
  const char *zDig;                 /* The significant digits */
  const char *zInt, *zFrac;         /* Digits before and after the '.' */
  int nInt, nFrac = 0;              /* Their counts */
  int nIntAll;                      /* Digits before the '.', all of them */
  int nDig;                         /* Significant digits */
  int nLead = 0;                    /* Zeros before the first nonzero digit */
  int isShort;                      /* Already its own shortest form */
  int neg = n>0 && z[0]=='-';
  int i, iInt, iFrac;
  int64_t e10 = 0, L;
  uint64_t bits;
  double v;

  i = idemNumTiny17(neg, z+neg, n-neg, zOut);
  if( i!=-2 ) return i;

  /* Where the integer digits and the fraction digits end (a validated
  ** literal: no checks needed). */
  i = iInt = idemNumSkipDigits(z, neg, n);
  if( i<n && z[i]=='.' ) i = idemNumSkipDigits(z, i+1, n);
  iFrac = i;
  if( n-neg>=20 && iInt<n && z[iInt]=='.' && iFrac==n ){
    /* 19 digits or more with no exponent: idemNumLongTry() */
    int r = idemNumLongTry(z, n, iInt, zOut);
    if( r!=-2 ) return r;
  }
  zInt = z + neg;
  i = iInt;
  nInt = nIntAll = i - neg;
  if( i==n ){
    /* An integer literal: as written, but "-0" is "0". */
    if( nInt==0 || zInt[0]=='0' ){
      zOut[0] = '0';
      return 1;
    }
    memcpy(zOut, z, (size_t)n);
    return n;
  }
  zFrac = z + i;
  if( z[i]=='.' ){
    zFrac++;
    i = iFrac;
    nFrac = (int)(z + i - zFrac);
  }
  if( i<n ){
    /* The exponent, saturated far beyond any meaningful value (the
    ** digit counts added to it below are smaller than 2^31). */
    int eNeg = 0;
    i++;
    if( i<n && (z[i]=='-' || z[i]=='+') ){
      eNeg = z[i]=='-';
      i++;
    }
    for(; i<n; i++){
      if( e10<1000000000000LL ) e10 = e10*10 + (z[i]-'0');
    }
    if( eNeg ) e10 = -e10;
  }

  /* The significant digits are zInt[nLead..nInt) zFrac[0..nFrac), or just
  ** zFrac[nLead-nInt..nFrac) if the integer part is zero, less trailing
  ** zeros. */
  while( nLead<nInt && zInt[nLead]=='0' ) nLead++;
  if( nLead==nInt ){
    while( nLead-nInt<nFrac && zFrac[nLead-nInt]=='0' ) nLead++;
    zFrac += nLead - nInt;
    nFrac -= nLead - nInt;
    nInt = 0;
  }else{
    zInt += nLead;
    nInt -= nLead;
  }
  while( nFrac>0 && zFrac[nFrac-1]=='0' ) nFrac--;
  if( nFrac==0 ){
    while( nInt>0 && zInt[nInt-1]=='0' ) nInt--;
  }
  nDig = nInt + nFrac;
  if( nDig==0 ){
    zOut[0] = '0';
    return 1;
  }

  /* 10^L <= |x| < 10^(L+1) */
  L = (int64_t)nIntAll - 1 - nLead + e10;
  if( L>308 ) return -1;
  if( L<-324 ){
    zOut[0] = '0';
    return 1;
  }

  /* Up to 19 significant digits, the common case of a long literal: their
  ** value w is read where they are, and w*10^q goes straight to step 3. */
  isShort = nDig<=15 && L>=-307 && L<=307;    /* step 2 */
  if( nDig<=19 && !isShort ){
    uint64_t w = idemNumDigitsValue(zInt, nInt)*idemNumPow10Int[nFrac]
               + idemNumDigitsValue(zFrac, nFrac);
    uint64_t m;
    int e;
    if( idemNumEiselLemire(w, (int)L - nDig + 1, &m, &e) ){
      bits = idemNumBits(m, e);
      goto format;
    }
  }

  /* Gather the digits in one place if they straddle the '.' or are more
  ** than IDEMNUM_MAX_DIGITS (idemNumGatherDigits()). */
  if( nFrac==0 ){
    zDig = zInt;
  }else if( nInt==0 ){
    zDig = zFrac;
  }else{
    zDig = aDig;
  }
  if( nDig>IDEMNUM_MAX_DIGITS || zDig==aDig ){
    nDig = idemNumGatherDigits(aDig, zInt, nInt, zFrac, nFrac, nDig);
    zDig = aDig;
  }

  if( isShort ){
    if( zDig!=aDig ){
      /* idemNumLayout() reads 32 bytes from where the digits start. */
      memcpy(aDig, zDig, (size_t)nDig);
      zDig = aDig;
    }
    return idemNumLayout(zOut, neg, zDig, nDig, (int)L+1);
  }
  if( idemNumDecimalToDouble(zDig, nDig, (int)L, &bits) ){
    return -1;
  }
format:
  bits |= (uint64_t)neg << 63;
  memcpy(&v, &bits, sizeof(v));
  return idemNumberFormat(v, zOut);
}

/*
** The ways out of idemNumberCanonical() other than its common one, each
** a function of its own that it calls last (so that the common path has
** no call to save registers for).
*/

/* An integer literal z[0..n): as written, but "-0" is "0". */
static IDEMNUM_NOINLINE int idemNumAsWritten(
  const char *z, int n, char *zOut
){
  if( z[z[0]=='-']=='0' ){
    zOut[0] = '0';
    return 1;
  }
  memcpy(zOut, z, (size_t)n);
  return n;
}

/* Step 2: the nD <= 15 digits zD[0..nD) (zD[p] being a '.' that is not
** one of them, if p < nD) are the answer, 0.D * 10^(L+1). */
static IDEMNUM_NOINLINE int idemNumShortLiteral(
  char *zOut, int neg, const char *zD, int nD, int p, int L
){
  char aRaw[40], aBuf[48];
  int len = nD + (p<nD);            /* bytes from zD, 1 to 16 */
  /* Copies of fixed sizes, no loop (as two copy loops, GCC made them
  ** calls to memcpy() through the PLT): the bytes as they are, by two
  ** overlapping ones, then the digits after the '.' moved down over it
  ** (with no '.', what is moved is beyond the digits). */
  if( len>=8 ){
    memcpy(aRaw, zD, 8);
    memcpy(aRaw+len-8, zD+len-8, 8);
  }else if( len>=4 ){
    memcpy(aRaw, zD, 4);
    memcpy(aRaw+len-4, zD+len-4, 4);
  }else{
    aRaw[0] = zD[0];
    aRaw[len>>1] = zD[len>>1];
    aRaw[len-1] = zD[len-1];
  }
  assert( len<=16 && p<=16 );
  memcpy(aBuf, aRaw, 16);
  memcpy(aBuf+p, aRaw+p+1, 16);
  return idemNumLayout(zOut, neg, aBuf, nD, L+1);
}

/* The nD <= 17 digits of w are the answer, 0.w * 10^(L+1). */
static IDEMNUM_NOINLINE int idemNumLayoutValue(
  char *zOut, int neg, uint64_t w, int nD, int L
){
  char aBuf[48];
  idemNumPut17(aBuf, w);
  return idemNumLayout(zOut, neg, aBuf+17-nD, nD, L+1);
}

/* Step 5 for the double m*2^e, 2^52 <= m <= 2^53 (then 2^52*2^(e+1)). */
static IDEMNUM_NOINLINE int idemNumFromDouble(
  char *zOut, int neg, uint64_t m, int e
){
  if( m==(IDEMNUM_HIDDEN<<1) ){
    m = IDEMNUM_HIDDEN;
    e++;
  }
  return idemNumFormatParts(neg, m, e, zOut);
}

/*
** A literal of at most 17 significant digits beyond 1e-307 .. 1e307 that
** the common path has read (not "%.17g"'s d.ddde-3NN: idemNumTiny3()):
** its nD digits from zD (a '.' among them skipped), 10^L <= |x| <
** 10^(L+1), the mantissa ending at z[iExp] (n with no exponent), its
** significant digits at z[iEnd] (zeros at the end not counted).  0 below
** 1e-324, an overflow above 1e309, else step 3 (all its digits are w:
** exact) and step 5, or the literal if it already is the answer, as
** idemNumExpLiteral() makes them from its own scan of the literal
** ("0.000000000518e-334", "0.00012e-305", 312 zeros then "1").  Where
** step 3 does not decide, the long way.
*/
static IDEMNUM_NOINLINE int idemNumBeyond(
  const char *z, int n, const char *zD, int nD, int L,
  int iInt, int iExp, int iEnd, char *zOut
){
  int neg = z[0]=='-', e, i, isShort = 0;
  const char *c;
  uint64_t w = 0, m;
  if( L<-324 ){
    zOut[0] = '0';
    return 1;
  }
  if( L>308 ) return -1;
  if( zD>z+iInt && (zD-z)+nD>=16 ){
    /* The digits in a row (0.000ddd), and 16 bytes of the literal that
    ** end with them: all at once, the bytes before them masked to 0;
    ** a 17th digit first */
    const char *zE = zD + nD;       /* the end of the digits */
    int K = 16 - nD + (nD==17);     /* bytes before them in the 16 */
    w = idemNumSwar16(idemNumLoad8(zE-16) & ~idemNumMask[8+K],
                      idemNumLoad8(zE-8) & ~idemNumMask[K]);
    if( nD==17 ) w += (uint64_t)(zD[0]-'0')*10000000000000000ULL;
  }else{
    for(i=0, c=zD; i<nD; c++){
      if( c[0]=='.' ) continue;
      w = w*10 + (uint64_t)(c[0]-'0');
      i++;
    }
  }
  if( L==-324 ){
    /* Below 2^-1074 (4.9406564584124654e-324 and less: its 17 digits
    ** W, exactly) step 3 does not decide (the exact way did): 0 up to
    ** half of it, 2.4703282292062327208...e-324, which no W equals; the
    ** least subnormal above */
    uint64_t W = w*idemNumPow10Int[17-nD];
    if( W<=49406564584124654ULL ){
      return idemNumFormatTiny(neg, W>24703282292062327ULL, IDEMNUM_EMIN,
                               zOut);
    }
  }
  if( !idemNumEiselLemireAt(w, L - nD + 1, &m, &e, z[iEnd-1]-'0',
                            &isShort, 0) ){
    return idemNumCanonicalSlow(z, n, zOut);
  }
  if( isShort ){
    if( (L>=21 || L<=-7) && iInt==neg+1 && zD==z+neg
     && iEnd==iExp && iExp<n && z[iExp]=='e'
     && (z[iExp+1]=='-' || z[iExp+1]=='+') && z[iExp+2]!='0' ){
      /* d.ddde+NN or d.ddde-NN, the last digit not 0, the exponent with
      ** no leading zero: ECMAScript's own layout, as written */
      memcpy(zOut, z, (size_t)n);
      return n;
    }
    return idemNumLayoutValue(zOut, neg, w, nD, L);
  }
  return idemNumFormatTiny(neg, m, e, zOut);
}

/*
** The RFC 8785 text of the validated number literal z[0..n), whose
** integer digits end at z[iInt] and whose fraction digits, if any, end at
** z[iFrac] (iFrac==iInt without a fraction): the caller has just scanned
** the literal, and passes what it found instead of its being scanned again.
** If isDec is 1, the literal is known to be a decimal with no exponent:
** z[iInt] is the '.', and iFrac is n; if 2, a decimal with an exponent:
** z[iInt] is the '.', z[iFrac] the 'e' or 'E'; if 3, such a decimal with
** one digit before the '.' (not 0) and 16 after it (the last not 0).
**
** Here: integer literals, the short literals of step 2 and the long ones
** of step 3b, in one pass (THE COMMON PATH in the header comment).
** Everything else goes to idemNumCanonicalSlow().  Not inlined into the
** canonicalizer: there it costs its main loop more than the call costs
** (callgrind, the bench's documents); inlined into its three entry
** points, idemNumberCanonical(), idemNumberDecimal() and
** idemNumberDecimalExp(), the last two without the tests and the
** variables that their literals do not need (fewer registers to spill).
*/
static IDEMNUM_INLINE int idemNumCanonical(
  const char *z, int n,
  int iInt, int iFrac,
  char *zOut,
  const int isDec
){
  const uint64_t one = (uint64_t)1<<60;
  /* ("%.17g"'s shape: its first digit at z[iInt-1], known) */
  int neg = isDec==3 ? iInt-1 : z[0]=='-';
  const char *zM = z + neg;         /* The first digit */
  const char *zD;                   /* The first significant digit */
  int iExp;                         /* End of the mantissa: 'e' or n */
  int noExp;                        /* iExp==n (known but for isDec 0) */
  int iEnd;                         /* End of the significant digits */
  int p;                            /* zD[p] is the '.'; 16 if none */
  int nD;                           /* Significant digits */
  int L;                            /* 10^L <= |x| < 10^(L+1) */
  int x10 = 0;                      /* The exponent */
  int q, lz, sh, j;
  uint64_t d;                       /* the last digit */
  int64_t jj;                       /* 17 digits: j of the answer, 9 if none */
  int nDrop;                        /* and how many digits it drops */
  uint64_t w, w16, c0, c1, tHi, tLo, uHi, uLo, f, g, t, m;

  if( isDec==1 ){
    assert( z[iInt]=='.' && iFrac==n );
    iExp = iEnd = n;
  }else if( isDec==3 ){
    assert( iInt==neg+1 && iFrac==iInt+17 && iFrac<n );
    assert( zM[0]!='0' && z[iFrac-1]!='0' );
    iExp = iEnd = iFrac;
  }else if( isDec==2 ){
    assert( z[iInt]=='.' && iFrac<n );
    iExp = iEnd = iFrac;
  }else{
    if( iInt==n ) return idemNumAsWritten(z, n, zOut);
    iExp = iEnd = z[iInt]=='.' ? iFrac : iInt;
  }
  noExp = isDec==1 ? 1 : isDec ? 0 : iExp==n;
  if( isDec!=3 && z[iEnd-1]=='0' ){
    /* Trailing zeros after the '.' ("2.50", "1.0", Python's integral
    ** floats "ddd.0") are dropped, and the '.' if nothing is left after
    ** it.  Zeros before the '.' (and a zero) go the long way. */
    if( iEnd>iInt ){
      while( z[iEnd-1]=='0' ) iEnd--;
      if( iEnd==iInt+1 ) iEnd = iInt;
    }
    if( z[iEnd-1]=='0' ) goto slow;
  }

  /* Step 1, less the exponent: x = 0.D * 10^(L+1-x10) */
  if( isDec==3 ){
    zD = zM;
    nD = 17;
    p = 1;
    L = 0;
  }else if( zM[0]!='0' ){
    zD = zM;
    nD = iEnd - neg;
    p = 16;
    if( iEnd>iInt ){                /* a '.' among the digits */
      p = iInt - neg;
      nD--;
      /* (With no exponent, p > 16 means nD > 17: decimals of 18 digits
      ** or more leave here, not here or below as their digits fall, a
      ** branch mispredicted every other time in 40-digit decimals.) */
      if( isDec==1 ? nD>17 : p>16 ) goto long_decimal;
    }
    L = iInt - neg - 1;
  }else{
    if( isDec==2 ){
      /* 0.000ddd with an exponent: its zeros 8 at a time ("0.000000000518
      ** e-334", up to 40 and more of them); not for the other shapes,
      ** whose zeros are few (a plain 0.05 paid for the loop) */
      zD = z + idemNumSkipZeros48(z, (int)(zM+2-z), n);
    }else{
      for(zD=zM+2; zD[0]=='0'; zD++){}
    }
    nD = (int)(z + iEnd - zD);
    p = 16;
    L = 1 - (int)(zD - zM);
  }

  /* The exponent: a sign, then up to 4 digits.  With 16 digits or more
  ** the literal has 16 bytes or more, and the exponent's k digits are the
  ** last k of its last 4 bytes. */
  if( isDec>=2 || (!isDec && iExp<n) ){
    int eNeg = z[iExp+1]=='-';
    int k;
    j = iExp + 1 + (eNeg || z[iExp+1]=='+');
    k = n - j;
    if( k>4 ){
      j = idemNumSkipZeros(z, j, n);  /* leading zeros ("1.5e+0000000010") */
      k = n - j;
      if( k>4 ) goto exp_literal;   /* beyond any double, or 0 */
    }
    if( nD>=16 || isDec==2 ){
      /* (a decimal with an exponent has 5 bytes or more: "1.5e5"; the
      ** mask of its k digits' low nibbles from a table, no shifts) */
      static const uint32_t aNib4[5] = {
        0, 0x0f000000u, 0x0f0f0000u, 0x0f0f0f00u, 0x0f0f0f0fu
      };
      uint32_t c4 = idemNumLoad4(z+n-4) & aNib4[k];
      c4 = (c4 * (10*256 + 1)) >> 8;
      x10 = (int)(((c4 & 0x00ff00ff) * (100*65536 + 1)) >> 16);
    }else{
      for(; j<n; j++) x10 = x10*10 + (z[j]-'0');
    }
    /* -x10 if eNeg, with no branch: the sign of "%.17g"'s exponents
    ** falls at random, and a branch on it was mispredicted every other
    ** time */
    L += (x10 ^ -eNeg) + eNeg;
  }
  if( L<-307 || L>307 ) goto out_of_range;

  /* Step 2 */
  if( nD<=15 ) return idemNumShortLiteral(zOut, neg, zD, nD, p, L);
  if( nD>17 ) goto long_decimal;    /* (never the shortest) */

  /* Step 3b.  w: the first 16 digits in two words of 8, the '.' taken out
  ** (the bytes after it moved down by one), then the 17th.  The loads
  ** stay in the literal: zD[0..nD) holds 16 digits or more, and one more
  ** byte if zD[p] is the '.'. */
  if( isDec==3 ){
    /* p is 1: the first digit, then the 15 after the '.'.  (Not the
    ** masks below with p constant: GCC 12 -O2 merges the two loads of c0
    ** into one wrong load.)  With SSE2, the 16 bytes after the first
    ** digit ('.' and 15 digits) in one load, the first digit added where
    ** the '.' is (it is 2 to 11 more: no carry out of the byte) */
#if defined(IDEM_SSE2) && defined(__x86_64__)
    c1 = 0;
    w16 = idemNumSwar16x(_mm_add_epi8(
            _mm_loadu_si128((const __m128i*)(zD+1)),
            _mm_cvtsi32_si128((unsigned char)zD[0] - '.')));
#else
    c0 = (uint64_t)(unsigned char)zD[0] | idemNumLoad8(zD+2)<<8;
    c1 = idemNumLoad8(zD+9);
    w16 = idemNumSwar16(c0, c1);
#endif
  }else{
    const char *zB = zD + (p<16);
    uint64_t m0 = idemNumMask[p+8], m1 = idemNumMask[p];
    c0 = (idemNumLoad8(zD) & m0) | (idemNumLoad8(zB) & ~m0);
    c1 = (idemNumLoad8(zD+8) & m1) | (idemNumLoad8(zB+8) & ~m1);
    w16 = idemNumSwar16(c0, c1);
  }
  d = (uint64_t)(unsigned char)z[iEnd-1] - '0';
  w = w16;
  /* (17 digits laid out on the way, not out of it and back: that cost
  ** every 17-digit literal a jump, a store of w and a load of d) */
  if( IDEMNUM_LIKELY(nD==17) ) w = w*10 + (uint64_t)d;

  /* Step 3, for x = w*10^q: U = uHi:uLo, m and the fraction f below it. */
  q = L - nD + 1;
  tHi = idemNumPow10[q - IDEMNUM_POW10_MIN][0];
  tLo = idemNumPow10[q - IDEMNUM_POW10_MIN][1];
  lz = idemNumClz64(w);
  uHi = idemNumMul128(w<<lz, tHi, &uLo);
  f = idemNumMul128(w<<lz, tLo, &t);
  uLo += f;
  uHi += (uLo<f);
  sh = 10 + (int)(uHi>>63);
  f = uHi<<(64-sh) | uLo>>sh;
  g = f + ((uint64_t)1<<63);
  if( g+1<=1 ) goto slow;           /* near the halfway point */
  m = (uHi>>sh) + (f>>63);          /* 2^52 <= m <= 2^53 */
  sh -= lz;                         /* (lz is not needed again) */
  assert( sh+4>=0 );
  t = tHi >> (sh + 4);
  g >>= 4;
  /* Where the interval is wider than 10^(q+1) (10t <= 1) the literal
  ** cannot be the answer (its test's d*t >= g+2 and (10-d)*t + g > 1 add
  ** up to 10t > 1): 17 digits ("%.17g") go straight to step 3c, 16 to
  ** step 5.  The && of that test, two or three branches that the digits
  ** decide, was mispredicted there before the width's own test. */
  if( IDEMNUM_LIKELY(nD==17) ){
    /* 10t <= 1 decided from w (idemNumWide17[]), then as computed (never
    ** otherwise, a branch always predicted) */
    assert( (w>=idemNumWide17[q+323])==(10*t<=one) );
    if( w>=idemNumWide17[q+323] || 10*t<=one ) goto not_the_answer;
  }else if( 10*t<=one ){
    goto not_the_answer;
  }
  if( IDEMNUM_LIKELY(nD==17) && (m & (IDEMNUM_HIDDEN-1))!=0 ){
    /* 17 digits where the interval is narrower than 10^(q+1) (10t > 1):
    ** the answer is the literal (step 3b's test, its four comparisons
    ** joined by & into one branch) or one of its two 16-digit neighbours
    ** A = x - d*10^q and B = A + 10^(q+1) (step 3b's rest, with no branch
    ** on which: j = inB), written from the literal's text at once where
    ** that is its layout and its last digit kept plus j makes 1 to 9.
    ** What is unusual (a carry, a 0 at the end, another layout) goes on
    ** below from what was found here; no answer known, to step 5.  (The
    ** literal's own case stays a branch: with its end chosen by a mask,
    ** the answer's length waited for step 3's product, and literals that
    ** are their own answer took 1.5 times as long.) */
    uint64_t dt = (uint64_t)d*t, et = (uint64_t)(10-d)*t;
    int outA = g+2<=dt, outB = et + g > one;
    int inA, inB, known, x;
    if( (t>=one) | (outA & outB & (2*g+4<=one+t) & (2*g+t>one)) ){
      goto the_literal;
    }
    inA = g>=dt + (uint64_t)d;
    inB = et + (uint64_t)(10-d) + g + 2<=one;
    known = (inA & outB) | (inB & outA);
    x = z[iEnd-2] - '0' + inB;        /* the answer's last digit */
    if( IDEMNUM_LIKELY(noExp ? L>=-6 && iEnd>iInt+1
                             : p==1 && (L>=21 || L<=-7))
     && IDEMNUM_LIKELY(known & ((unsigned)(x-1)<9)) ){
      /* The literal's text but its last digit, the one before it plus j;
      ** then the exponent as ECMAScript writes it. */
      int k = iEnd - 1;               /* the answer's text ends at k */
      memcpy(zOut, z, 16);
      memcpy(zOut+iEnd-17, z+iEnd-17, 16);
      zOut[k-1] = (char)('0' + x);
      if( !noExp ) k += idemNumPutExp(zOut+k, L);
      return k;
    }
    if( !known ){
      /* Neither A nor B in the interval (both surely outside) and the
      ** literal not the answer: no decimal of 16 digits or fewer reads
      ** back as v (one would be a multiple of 10^(q+1), and the interval,
      ** narrower than 10^(q+1) and holding x, could hold only A or B), so
      ** the answer is the 17-digit x + j*10^q closest to v (17 random
      ** digits: one literal in five), for the integer j nearest to
      ** a = (v-x)/10^q = (1/2 - g)/t, |a| < 5.  With N = 2^59 - gi,
      ** N - 2 < (1/2 - g)*2^60 <= N, and T*2^60 in [ti, ti+1), j is
      ** proven by (2j-1)*T < 2a*T < (2j+1)*T at the worst ends: 2N-4 >=
      ** (2j-1)*ti, plus 2j-1 where it is positive, and 2N < (2j+1)*ti,
      ** plus 2j+1 where it is negative (no tie: those fail).  Then x +
      ** j*10^q is within 10^q/2 of v, inside the interval as t < 1 (the
      ** literal's test failed), and between A and B, so that its last
      ** digit d + j is 1 to 9 (tested all the same).  Where it is not
      ** proven, step 5. */
      if( outA & outB ){
        int64_t T = (int64_t)t;
        int64_t N2 = (int64_t)(one>>1) - (int64_t)g;
        /* round(a): (2N + 11T)/(2T) - 5, 2N + 11T in (0, 12*2^60) */
        int64_t j0 = (int64_t)((one - 2*g + 11*t)/(2*t)) - 5;
        int64_t a = 2*j0 - 1, b = 2*j0 + 1;
        x = d + (int)j0;
        N2 *= 2;
        if( IDEMNUM_LIKELY(noExp ? L>=-6 && iEnd>iInt+1
                                 : p==1 && (L>=21 || L<=-7))
         && ((N2 - 4 >= a*T + (a & ~(a>>63)))
             & (N2 < b*T + (b & (b>>63)))
             & ((unsigned)(x-1)<9)) ){
          int k = iEnd;
          memcpy(zOut, z, 16);
          memcpy(zOut+iEnd-17, z+iEnd-17, 16);
          zOut[k-1] = (char)('0' + x);
          if( !noExp ) k += idemNumPutExp(zOut+k, L);
          return k;
        }
      }
      goto step_5;
    }
    jj = inB;
    nDrop = 1;
    goto the_neighbour;
  }
  if( (m & (IDEMNUM_HIDDEN-1))!=0
   && (t>=one || (g+2<=(uint64_t)d*t
               && (uint64_t)(10-d)*t + g > one
               && 2*g+4<=one+t
               && 2*g+t>one))
  ){
the_literal:
    /* The digits of the literal are the answer. */
    if( noExp ? L>=-6
                : (p==1 && (L>=21 || L<=-7)
                   /* the exponent as ECMAScript writes it: no zeros dropped
                   ** before it, "e", a sign and no leading zero */
                   && iEnd==iExp && z[iExp]=='e'
                   && (z[iExp+1]=='+' || z[iExp+1]=='-') && z[iExp+2]!='0') ){
      /* ddd.ddd, ddd, 0.000ddd or d.ddde-NN (16 to 25 bytes): as
      ** written, less any zeros dropped. */
      int nOut = noExp ? iEnd : n;
      memcpy(zOut, z, 16);
      memcpy(zOut+nOut-16, z+nOut-16, 16);
      return nOut;
    }
    if( p==1 && !noExp ){
      /* d.ddde-NN, as JSON.stringify() and Python write long numbers: the
      ** digits are z[iInt-1] and the nD-1 (15 or 16) after the '.', and
      ** 16 bytes from there stay in the literal (the exponent follows). */
      char *o = zOut + neg;
      if( L>=21 || L<=-7 ){
        /* As written up to the 'e' (17 to 19 bytes), then the exponent as
        ** ECMAScript writes it (Python writes "e-07"). */
        memcpy(zOut, z, 16);
        memcpy(zOut+iEnd-16, z+iEnd-16, 16);
        return iEnd + idemNumPutExp(zOut+iEnd, L);
      }
      zOut[0] = '-';
      if( L<0 ){
        /* 0.000ddd */
        memcpy(o, "0.000000", 8);
        o[1-L] = z[iInt-1];
        memcpy(o+2-L, z+iInt+1, 16);
        return neg + 1 - L + nD;
      }
      if( L>=nD-1 ){
        /* All the digits, then zeros: an integer below 10^21 */
        o[0] = z[iInt-1];
        memcpy(o+1, z+iInt+1, 16);
        memcpy(o+nD, "00000000", 8);
        return neg + 1 + L;
      }
    }
    return idemNumLayoutValue(zOut, neg, w, nD, L);
  }

not_the_answer:
  /* 17 digits that are not the answer (as "%.17g" prints most doubles):
  ** the answer may be the first 16 digits of the literal plus j at the
  ** 16th, the multiple of 10^(q+1) that is A + j*10^(q+1), A = x - d*10^q
  ** (step 3b, at the end, for j = 0 or 1; step 3c for -1 <= j <= 2). */
  if( nD==17 && (m & (IDEMNUM_HIDDEN-1))!=0 ){
    uint64_t w2, wTop;
    jj = 9;                           /* 9: not known */
    nDrop = 1;                        /* digits of the literal dropped */
    /* (10t <= 1 here: 10t > 1 was decided above, with no branch) */
    assert( 10*t<=one );
    if( 10*t+10<=one ){
      /* Step 3c: T = 10t < 1, so that several multiples of 10^(q+1) may
      ** be in the interval [v-u/2, v+u/2], but u < 10^(q+2) (t > 0.045
      ** for 17 digits).  If no multiple of 10^(q+2) is in it (none
      ** shorter is), the answer is the multiple of 10^(q+1) closest to v
      ** (Schubfach, step 5, with k = q+1).  The multiples of 10^(q+2)
      ** next to x are C = x - e*10^q and C + 10^(q+2), e the last two
      ** digits; in units of u from v at g - 1/2 - e*t and that + 100t:
      ** both outside if e*t > g and (100-e)*t + g > 1, which
      ** e*ti >= gi+2 and (100-e)*ti + gi > 2^60 prove.  A is at
      ** a = d*t - g + 1/2 below v, a*2^60 in (aLo, aHi); the closest
      ** multiple is A + j*10^(q+1) for the integer j with
      ** (j-1/2)*T < a < (j+1/2)*T, proven with T*2^60 in [10ti, 10ti+10)
      ** (an end from the bound that holds for the sign of 2j-1 or 2j+1),
      ** and then it is strictly inside the interval, T/2 < 1/2 from v.
      ** As 100t > 4.5 > 1, the interval holds at most one multiple of
      ** 10^(q+2): if C or C + 10^(q+2) is strictly inside (e*(ti+1) <= gi,
      ** (100-e)*(ti+1) + gi+2 <= 2^60, as for A and B above) and the
      ** other surely outside, it is the only decimal of 15 digits or
      ** fewer there (a shorter one would be such a multiple): the
      ** answer, the literal's first 15 digits plus 0 or 1 at the 15th. */
      /* w%100: the 16th digit from the text for "%.17g"'s shape */
      uint64_t e = (isDec==3 ? (uint64_t)(z[iEnd-2]-'0')
                             : (c1>>56) & 0xf)*10 + (uint64_t)d;
      int outC = e*t>=g+2;
      int outD = (100-e)*t + g > one;
      if( outC && outD ){
        int64_t aLo = (int64_t)((uint64_t)d*t) - (int64_t)g - 2 + (int64_t)(one>>1);
        int64_t aHi = (int64_t)((uint64_t)d*t + d) - (int64_t)g + (int64_t)(one>>1);
        int64_t T = (int64_t)(10*t);
        int64_t j0 = 2*aLo + 3*T;     /* 2a + 3T > 0: -1/2 < a, T > 0.45 */
        if( j0>0 ){
          j0 = j0/(2*T) - 1;          /* round(aLo/T), a first guess */
          /* (With no branch on the signs of 2j-1 and 2j+1, which the
          ** digits decide: the bound for each sign by a mask, T+10 where
          ** 2j-1 >= 0 or 2j+1 < 0) */
          int64_t a = 2*j0-1, b = 2*j0+1;
          if( ((uint64_t)(j0+1)<=3)
            & (a*T + ((10*a) & ~(j0-1)>>63) <= 2*aLo)
            & (2*aHi <= b*T + ((j0>>63) & -10)) ){
            jj = j0;
          }
        }
      }else{
        int inC = g>=e*(t+1);
        int inD = (100-e)*(t+1) + g + 2<=one;
        if( (inC & outD) | (inD & outC) ){
          jj = inD;
          nDrop = 2;
        }
      }
    }
the_neighbour:
    /* w2: the answer's digits, 16 (or 15 if nDrop is 2) of them but for
    ** zeros at the end.  (It never gains a digit: near a power of ten
    ** u > 10^q * 11, so that 10t < 1 there and no multiple of 10^(q+1)
    ** other than the power is in the interval; the test is kept.) */
    if( nDrop==1 ){
      w2 = w16 + (uint64_t)jj;
      wTop = 10000000000000000ULL;
    }else{
      w2 = w16/10 + (uint64_t)jj;
      wTop = 1000000000000000ULL;
    }
    if( jj!=9 && w2*10>=wTop && w2<wTop ){
      int n2 = 17 - nDrop;
      int k = iEnd - nDrop;           /* the answer's text ends at k */
      if( noExp ? k>iInt && L>=-6 : p==1 && (L>=21 || L<=-7) ){
        /* The literal is laid out as ECMAScript lays out the answer
        ** (ddd.ddd or 0.000ddd, the dropped digits after the '.'; or
        ** d.ddde+NN, d.ddde-NN, its exponent then written anew): its
        ** text but the digits dropped, j added at the last one kept, then
        ** without the zeros at its end.  A carry runs over 9s and the
        ** '.', never beyond the first digit (w2 < wTop).  There is never
        ** a borrow, nor a carry from j = 2: the multiple of 10^(q+2)
        ** passed on the way from x to the answer would be in the
        ** interval, which step 3c rules out (and 3b's j is 0 or 1). */
        int c = (int)jj;
        int x = z[k-1] - '0' + c;     /* the last byte kept, plus j */
        memcpy(zOut, z, 16);
        memcpy(zOut+iEnd-17, z+iEnd-17, 16);
        if( IDEMNUM_LIKELY((unsigned)(x-1)<9) ){
          /* A digit, and j added to it makes 1 to 9: no carry and no
          ** zero at the end (nine times in ten), one byte to write, with
          ** no branch on j (0 or 1 at random) */
          zOut[k-1] = (char)('0' + x);
          if( !noExp ) k += idemNumPutExp(zOut+k, L);
          return k;
        }
        for(j=k-1; c; j--){
          if( zOut[j]=='.' ) continue;
          c += zOut[j] - '0';
          assert( c>=0 && c<=10 );
          if( c<10 ){
            zOut[j] = (char)('0' + c);
            break;
          }
          zOut[j] = '0';
          c = 1;
        }
        while( zOut[k-1]=='0' ) k--;
        k -= zOut[k-1]=='.';
        if( !noExp ) k += idemNumPutExp(zOut+k, L);
        return k;
      }
      while( w2%10==0 ){
        w2 /= 10;
        n2--;
      }
      return idemNumLayoutValue(zOut, neg, w2, n2, L);
    }
  }

step_5:
  /* Not known: step 5, from the double m*2^e of step 3 (decided above,
  ** and normal: the range of L). */
  return idemNumFromDouble(zOut, neg, m,
                           sh + 1 + idemNumFloorLog2Pow10(L - nD + 1));

long_decimal:
  /* 18 significant digits or more (never the shortest): the long
  ** decimal's product, its mantissa an integer too
  ** ("12345678901234567890e5": its '.' is the 'e', for idemNumLongExp()) */
  if( isDec==1 || (isDec==0 && noExp) ) return idemNumLong(z, n, iInt, zOut);
  return idemNumLongExp(z, n, iInt, iExp, zOut);
out_of_range:
  /* "%.17g" of a double below 1e-307 or above 1e307: idemNumTiny() */
  if( isDec==3 ){
    /* (e-3NN of a subnormal, e-308 to e-324, does not come here:
    ** idemNumberDecimalExp() sends it to idemNumSub17() first) */
    assert( !(L>=-324 && L<=-308 && n-iFrac==5 && z[iFrac]=='e') );
    return idemNumTiny3(z, n, L, zOut);
  }
  if( nD>17 ){
    /* 18 digits or more beyond 1e-307 or 1e307 ("2.4703282292062327208
    ** ...e-324"): the long decimal's product, which takes a subnormal
    ** and 1e308 too; beyond those 0, or an overflow */
    if( L<-324 ){
      zOut[0] = '0';
      return 1;
    }
    if( L>308 ) return -1;
    goto long_decimal;
  }
  if( isDec!=1 && nD==16 && p==1 && iEnd==iExp && n-iExp==5 ){
    /* "%.17g"'s 16 digits (a 17th 0 dropped): idemNumTiny() */
    return idemNumTiny(z, n, zOut);
  }
  /* 0.000ddd beyond 1e-307 with an exponent or not, and any other: from
  ** what was read here; with an exponent and below 1e-324 0 at once, as
  ** idemNumBeyond() has it (one in two of "0.000000000518e-334"'s shape;
  ** not in the other copies of this code, whose other literals paid for
  ** it: 17 random digits 3 instructions a number) */
  if( isDec==2 && L<-324 ){
    zOut[0] = '0';
    return 1;
  }
  return idemNumBeyond(z, n, zD, nD, L, iInt, iExp, iEnd, zOut);
exp_literal:
  if( isDec!=1 && !noExp ) return idemNumExpLiteral(z, n, iInt, iFrac, zOut);
slow:
  return idemNumCanonicalSlow(z, n, zOut);
}
/* Whether z[0..2) is "-3" (one 16-bit compare): an exponent e-3NN. */
static IDEMNUM_INLINE int idemNumIsMinus3(const char *z){
  const unsigned char *u = (const unsigned char*)z;
  return (u[0] | u[1]<<8)==('-' | '3'<<8);
}
static IDEMNUM_NOINLINE int idemNumCanonicalAny(
  const char *z, int n,
  int iInt, int iFrac,
  char *zOut
){
  return idemNumCanonical(z, n, iInt, iFrac, zOut, 0);
}
IDEMNUM_NOINLINE IDEM_PRIVATE int idemNumberCanonical(
  const char *z, int n,
  int iInt, int iFrac,
  char *zOut
){
  if( iInt==n ) return idemNumAsWritten(z, n, zOut);
  if( iInt>=18 && iInt==iFrac ){
    /* An integer of 18 digits or more with an exponent
    ** ("12345678901234567890e5"): the answer from its digits
    ** (idemNumIntExp()), with none of the common path's steps before.
    ** Tested before "5e-324"'s shape, which no such integer has (its
    ** e-3NN goes on from idemNumIntExp() to idemNumLongExp(), where
    ** idemNumSubShort() sent it by the common path) */
    return idemNumIntExp(z, n, iInt, iFrac, zOut);
  }
  if( n-iFrac==5 && idemNumIsMinus3(z+iFrac+1) ){
    /* "5e-324": a subnormal's shortest form, likely */
    return idemNumSubShort(z, n, iInt, iFrac, zOut);
  }
  return idemNumCanonicalAny(z, n, iInt, iFrac, zOut);
}

/* idemNumberDecimal()'s common path: a function of its own, so that
** idemNumberDecimal() keeps no frame for the literals it sends on */
static IDEMNUM_NOINLINE int idemNumDecimalAny(
  const char *z, int n,
  int iInt,
  char *zOut
){
  return idemNumCanonical(z, n, iInt, n, zOut, 1);
}

/* A decimal with no exponent of 19 bytes or more: 18 digits or more, the
** first and the last not 0 ("%.18g" to "%.21g" of a double from 1e-4 to
** 1e17), to idemNumCutDec(), with none of the common path's steps before;
** anything else to the common path.  A function of its own, so that
** idemNumberDecimal() keeps no frame for the shorter decimals. */
static IDEMNUM_NOINLINE int idemNumDecimal18(
  const char *z, int n,
  int iInt,
  char *zOut
){
  /* The first byte tested first: 19 bytes that start with '0' or '-'
  ** (0.ddd or -d.ddd: 17 digits at most, a third of "%.17g"'s literals)
  ** go on to the common path after two tests */
  if( z[0]>'0' ){
    /* (a digit, not 0: '-' is below '0') */
    if( z[n-1]!='0' && iInt<=308 ){
      return idemNumCutDecOr(z, n, z, iInt, iInt-1, zOut);
    }
  }else if( n>=20 && z[n-1]!='0' ){
    int neg = z[0]=='-';
    if( z[neg]!='0' ){
      if( iInt<=309 ){
        return idemNumCutDecOr(z, n, z+1, iInt-1, iInt-2, zOut);
      }
    }else if( n-neg>=20 ){
      /* 0.000ddd: its zeros skipped (a few, from "%.18g") */
      const char *zD = z + neg + 2;
      while( zD[0]=='0' ) zD++;
      if( z+n-zD>=18 && zD-z-iInt<=307 ){
        int kd = (int)(z + iInt - zD);
        return idemNumCutDecOr(z, n, zD, kd, kd, zOut);
      }
    }
  }
  return idemNumDecimalAny(z, n, iInt, zOut);
}

IDEMNUM_NOINLINE IDEM_PRIVATE int idemNumberDecimal(
  const char *z, int n,
  int iInt,
  char *zOut
){
  /* 19 bytes or more: 18 digits or more, likely (idemNumDecimal18()) */
  if( n>=19 ) return idemNumDecimal18(z, n, iInt, zOut);
  return idemNumDecimalAny(z, n, iInt, zOut);
}
/* idemNumberDecimalExp() for any decimal with an exponent but "%.17g"'s. */
static IDEMNUM_NOINLINE int idemNumDecimalExpAny(
  const char *z, int n,
  int iInt, int iFrac,
  char *zOut
){
  return idemNumCanonical(z, n, iInt, iFrac, zOut, 2);
}

/* The common path's copy for "%.17g"'s d.dddddddddddddddde+NN (isDec 3):
** a function of its own, so that idemNumberDecimalExp() keeps no frame
** (six registers saved and restored) for the subnormals it sends on to
** idemNumSub17() */
static IDEMNUM_NOINLINE int idemNumDecimalExp17(
  const char *z, int n,
  int iInt, int iFrac,
  char *zOut
){
  return idemNumCanonical(z, n, iInt, iFrac, zOut, 3);
}

/* A decimal with an exponent and 17 digits or more after its '.':
** d.ddde+NN of 18 digits or more ("%.18g" to "%.21g" of a double below
** 1e-4 or from 1e18) to idemNumCutExp(), its exponent (a sign or none,
** then 1 to 3 digits) read here as the common path reads it, with none
** of the common path's steps before; anything else to the common path.
** A function of its own, as idemNumDecimal18(). */
static IDEMNUM_NOINLINE int idemNumDecimalExp18(
  const char *z, int n,
  int iInt, int iFrac,
  char *zOut
){
  if( iInt-1==(z[0]=='-') && z[iInt-1]!='0'
   && z[iFrac-1]!='0' && n-iFrac<=5 ){
    int eNeg = z[iFrac+1]=='-';
    int k = n - iFrac - 1 - (eNeg || z[iFrac+1]=='+');
    static const uint32_t aNib4[5] = {
      0, 0x0f000000u, 0x0f0f0000u, 0x0f0f0f00u, 0x0f0f0f0fu
    };
    uint32_t c4 = aNib4[k] & idemNumLoad4(z+n-4);
    int x10;
    c4 = (c4 * (10*256 + 1)) >> 8;
    x10 = (int)(((c4 & 0x00ff00ff) * (100*65536 + 1)) >> 16);
    if( x10<=307 ){
      return idemNumCutExpOr(z, n, z+iInt-1, 1, (x10 ^ -eNeg) + eNeg, zOut);
    }
  }
  return idemNumDecimalExpAny(z, n, iInt, iFrac, zOut);
}

IDEMNUM_NOINLINE IDEM_PRIVATE int idemNumberDecimalExp(
  const char *z, int n,
  int iInt, int iFrac,
  char *zOut
){
  /* d.dddddddddddddddde+NN, as "%.17g" prints large and small doubles
  ** (the last digit not 0): the same code with its shape as constants */
  if( iFrac-iInt==17 && iInt-1==(z[0]=='-') && z[iInt-1]!='0'
   && z[iFrac-1]!='0' ){
    /* e-3NN: a subnormal (e-308 to e-324) straight to idemNumSub17(),
    ** as the common path would send it from its range test, with no
    ** steps of the common path before it.  One compare, one branch (a
    ** test of n-iFrac first, three-digit exponents being two in three of
    ** the "%.17g" doubles with exponents, at random, cost them 2%): "e-3"
    ** at z[n-5] (within the literal: 17 digits before its exponent) is
    ** the exponent "e-3NN", the literal's only 'e' being z[iFrac] */
    if( (idemNumLoad4(z+n-5) & 0xffffff)==('e' | '-'<<8 | '3'<<16) ){
      unsigned x10 = 300 + (unsigned)(z[n-2]-'0')*10 + (unsigned)(z[n-1]-'0');
      assert( iFrac==n-5 && idemNumIsMinus3(z+iFrac+1) );
      if( x10-310<=13 ) return idemNumSubDeep(z, n, (int)x10, zOut);
      if( x10-308<=16 ) return idemNumSub17(z, n, (int)x10, zOut);
    }
    return idemNumDecimalExp17(z, n, iInt, iFrac, zOut);
  }
  if( z[iInt-1]!='0' && n-iFrac==5 && idemNumIsMinus3(z+iFrac+1) ){
    /* "4.9406564584124654e-324"'s shorter neighbours (not 0.000ddde-3NN,
    ** which idemNumSubShort() would pass on: a 0 before the '.'; tested
    ** first, as 0.000ddd's exponents e-2NN and e-3NN fall at random) */
    return idemNumSubShort(z, n, iInt, iFrac, zOut);
  }
  if( iFrac-iInt>=18 ) return idemNumDecimalExp18(z, n, iInt, iFrac, zOut);
  return idemNumDecimalExpAny(z, n, iInt, iFrac, zOut);
}

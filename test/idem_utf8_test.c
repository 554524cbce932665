/* SPDX-License-Identifier: MIT */
/*
** idem_utf8_test.c -- the whole-input UTF-8 check (ext/idem_utf8.c)
** against a plain decoder written from RFC 3629, byte sequence by byte
** sequence.
**
**     build/idem_utf8_test [--quick]
**
** Every sequence of 1 and 2 bytes, every sequence of 3 bytes that starts
** with a byte that is not ASCII, and every sequence of 4 bytes whose first
** byte is E0..FF, whose second is any byte and whose last two are taken
** from the bytes at the edges of the ranges, each put at the start, across
** the 32-byte block boundary and at the very end of an input of ASCII; then
** random inputs of valid characters with random bytes mixed in.  Where the
** machine has AVX2 the check must agree with the decoder exactly on inputs
** of 64 bytes or more (an input refused for nothing would only be slower,
** but is a bug); on shorter ones, and elsewhere, it must say "not known".  --quick leaves out the
** 3-byte and 4-byte families at the block boundary.  Prints
** "N passed, N failed" and exits non-zero on a failure.
*/
#define SQLITE_CORE 1
#include "../ext/idem.c"
#include <stdio.h>
#include <stdlib.h>

static long nPass, nFail;
static int hasFast;

/* RFC 3629, section 4, as a decoder: 1 if z[0..n) is valid UTF-8. */
static int refValid(const unsigned char *z, size_t n){
  size_t i = 0;
  while( i<n ){
    unsigned c = z[i], cp, min;
    int len, k;
    if( c<0x80 ){ i++; continue; }
    if( c>=0xc0 && c<=0xdf ){ len = 2; min = 0x80; }
    else if( c>=0xe0 && c<=0xef ){ len = 3; min = 0x800; }
    else if( c>=0xf0 && c<=0xf7 ){ len = 4; min = 0x10000; }
    else return 0;
    if( i+len>n ) return 0;
    cp = c & (0x7fu>>len);
    for(k=1; k<len; k++){
      if( (z[i+k] & 0xc0)!=0x80 ) return 0;
      cp = (cp<<6) | (z[i+k] & 0x3f);
    }
    if( cp<min || cp>0x10ffff || (cp>=0xd800 && cp<=0xdfff) ) return 0;
    i += len;
  }
  return 1;
}

static void check(const unsigned char *z, size_t n, const char *zWhat){
  int want = refValid(z, n);
  int got = idemUtf8Valid(z, n);
  int ok;
  if( n<64 || !hasFast ){
    ok = got==0;            /* not checked: "not known valid" */
  }else{
    ok = got==want;
  }
  if( ok ){
    nPass++;
  }else{
    size_t i;
    if( nFail++<20 ){
      printf("FAIL %s: n=%d want %d got %d:", zWhat, (int)n, want, got);
      for(i=0; i<n; i++) if( z[i]!='a' ) printf(" [%d]=%02x", (int)i, z[i]);
      printf("\n");
    }
  }
}

/* The sequence a[0..k) in an input of ASCII: at offset off of a 96-byte
** input (across its 32-byte blocks); at the end of an input of 64+off+k
** bytes (whose last block overlaps the one before, at every remainder of
** 32); and, for off 0, at the end of a 96-byte input. */
static void place(const unsigned char *a, int k, int off, const char *zWhat){
  unsigned char z[200];
  memset(z, 'a', sizeof(z));
  memcpy(z+off, a, k);
  check(z, 96, zWhat);
  memset(z, 'a', sizeof(z));
  memcpy(z+64+off, a, k);
  check(z, 64+off+k, zWhat);
  if( off==0 ){
    memset(z, 'a', sizeof(z));
    memcpy(z+96-k, a, k);
    check(z, 96, zWhat);
  }
}

int main(int argc, char **argv){
  static const int aOff[] = { 0, 1, 15, 29, 30, 31, 32, 33, 60, 61, 62, 63 };
  static const int aOffBig[] = { 0, 30, 31 };
  static const unsigned char aEdge[] = {
    0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2,
    0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff };
  int quick = argc>1 && strcmp(argv[1], "--quick")==0;
  unsigned char a[4];
  int i, j, k, l, o;
  unsigned int seed = 12345;

  {
    unsigned char z[64];
    memset(z, 'a', sizeof(z));
    hasFast = idemUtf8Valid(z, sizeof(z));
  }
  printf("fast check (AVX2): %s\n", hasFast ? "yes" : "no");

  /* Every 1-byte and 2-byte sequence at every interesting offset, and
  ** every length of input from 0 to 70. */
  for(i=0; i<256; i++){
    a[0] = (unsigned char)i;
    for(o=0; o<(int)(sizeof(aOff)/sizeof(aOff[0])); o++){
      place(a, 1, aOff[o], "1 byte");
      for(j=0; j<256; j++){
        a[1] = (unsigned char)j;
        place(a, 2, aOff[o], "2 bytes");
      }
    }
  }
  {
    unsigned char z[200];
    memset(z, 'a', sizeof(z));
    for(i=0; i<=200; i++) check(z, i, "ASCII");
  }

  /* 3 bytes, not starting with ASCII. */
  for(i=0x80; i<256; i++){
    for(j=0; j<256; j++){
      for(k=0; k<256; k++){
        a[0] = (unsigned char)i; a[1] = (unsigned char)j; a[2] = (unsigned char)k;
        for(o=0; o<(quick ? 1 : 3); o++) place(a, 3, aOffBig[o], "3 bytes");
      }
    }
  }

  /* 4 bytes: E0..FF, any, and two edge bytes. */
  for(i=0xe0; i<256; i++){
    for(j=0; j<256; j++){
      for(k=0; k<(int)sizeof(aEdge); k++){
        for(l=0; l<(int)sizeof(aEdge); l++){
          a[0] = (unsigned char)i; a[1] = (unsigned char)j;
          a[2] = aEdge[k]; a[3] = aEdge[l];
          for(o=0; o<(quick ? 1 : 3); o++) place(a, 4, aOffBig[o], "4 bytes");
        }
      }
    }
  }

  /* Random inputs: valid characters of every length, some bytes changed. */
  for(i=0; i<200000; i++){
    static const char *azChar[] = { "a", "\"", "\xc3\xa9", "\xe4\xb8\xad",
      "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbf", "\xf0\x9f\x98\x80",
      "\xf4\x8f\xbf\xbf", "\xe0\xa0\x80", "\xc2\x80", "\xf0\x90\x80\x80" };
    unsigned char z[300];
    size_t n = 0, want;
    seed = seed*1103515245 + 12345;
    want = (seed>>8) % 250;
    while( n<want ){
      const char *c;
      seed = seed*1103515245 + 12345;
      c = azChar[(seed>>8) % (sizeof(azChar)/sizeof(azChar[0]))];
      memcpy(z+n, c, strlen(c));
      n += strlen(c);
    }
    seed = seed*1103515245 + 12345;
    for(j=(seed>>8)%3; j>0 && n>0; j--){
      seed = seed*1103515245 + 12345;
      z[(seed>>8) % n] = (unsigned char)(seed>>20);
    }
    check(z, n, "random");
  }

  printf("%ld passed, %ld failed\n", nPass, nFail);
  return nFail!=0;
}

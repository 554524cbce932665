/* SPDX-License-Identifier: MIT */
/*
** guard.c -- the canonicalizer reads nothing past the end of its input.
**
**     build/guard [-n ROUNDS] [-s SEED]
**
** Each input is copied to the end of a page that a PROT_NONE page follows,
** so that a load of one byte past its end faults (SIGSEGV), where ASan
** sees nothing if the input is a sqlite3_value's text with slack after it,
** and the vector paths read whole blocks.  The inputs are aimed at the
** paths that read ahead: runs of \u escapes (the 8-at-a-time block of
** AVX2 machines wants 52 bytes and looks at s[1], s[2], s[6], s[42],
** s[43] first), cut at every byte (inside an escape, right after a
** backslash, after a high surrogate), so that the run ends at every
** offset of a 32/64-byte block and of the buffer; numbers (subnormals of
** 11 to 16 digits, read 8 bytes at a time) cut at every byte; lone
** escapes and UTF-8 at the end; and \/ (PHP's paths, mended inside a
** 16-byte block by a store of the 16 bytes after each backslash) at every
** place of a block and every distance from the end.  Each input is run twice: with its length
** (nIn) and NUL-terminated (nIn<0) with the NUL the last byte of the page.
** Every input of 64 bytes or more that is valid UTF-8 takes the AVX2 paths
** on a machine that has AVX2.
**
** It also checks that the result at the page's end is the same as the
** result of the same bytes in an ordinary buffer with 64 bytes of slack
** after them (text, or the error message), and that the canonical text
** of an accepted input canonicalizes to itself.
**
** Prints "N inputs, N failed" and exits non-zero on a failure; a read past
** the end kills it with SIGSEGV (the .test file says which input: the
** last "input" line printed with -v).
*/
#define SQLITE_CORE 1
#include "../../ext/idem.c"
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static unsigned char *zPage;   /* two pages: [0, nPage) readable */
static size_t nPage;
static IdemJson *pJ, *pJ2;
static int nInput, nFailed, bVerbose;
static uint64_t rnd = 0x2545F4914F6CDD1Dull;

static unsigned int rand32(void){
  rnd ^= rnd << 13; rnd ^= rnd >> 7; rnd ^= rnd << 17;
  return (unsigned int)(rnd >> 11);
}

/* The result of z[0..n) as one string: "ok:" and the text, or "err:" and
** the message.  Returns a malloc'ed string. */
static char *result(IdemJson *p, const unsigned char *z, int n){
  int rc = idemJsonCanonical(p, (const char*)z, n), nOut;
  const char *zOut;
  char *zRes;
  if( rc==SQLITE_OK ){
    zOut = idemJsonText(p, &nOut);
    zRes = malloc((size_t)nOut + 4);
    memcpy(zRes, "ok:", 3);
    memcpy(zRes+3, zOut, (size_t)nOut);
    zRes[nOut+3] = 0;
  }else{
    const char *zErr = idemJsonError(p);
    zRes = malloc(strlen(zErr) + 5 + 16);
    sprintf(zRes, "err%d:%s", rc, zErr);
  }
  return zRes;
}

/* Run z[0..n) at the end of the readable page, with n and NUL-terminated. */
static void run(const unsigned char *z, size_t n){
  unsigned char *zAt = zPage + nPage - n;
  unsigned char *zCopy = malloc(n + 64);
  char *zA, *zB, *zC;
  nInput++;
  if( bVerbose ){
    printf("input %d (%zu bytes): %.*s\n", nInput, n, (int)n, (const char*)z);
    fflush(stdout);
  }
  if( n>=nPage ) abort();
  memcpy(zAt, z, n);
  memcpy(zCopy, z, n);
  memset(zCopy+n, '\\', 64);        /* slack that would look like more */
  zA = result(pJ, zAt, (int)n);
  zB = result(pJ, zCopy, (int)n);
  if( strcmp(zA, zB)!=0 ){
    nFailed++;
    printf("FAILED: input %d differs at the page's end\n  %s\n  %s\n",
           nInput, zA, zB);
  }
  if( memchr(z, 0, n)==0 ){
    /* NUL-terminated, the NUL the page's last byte */
    zAt = zPage + nPage - n - 1;
    memcpy(zAt, z, n);
    zAt[n] = 0;
    zC = result(pJ, zAt, -1);
    if( strcmp(zA, zC)!=0 ){
      nFailed++;
      printf("FAILED: input %d differs NUL-terminated\n  %s\n  %s\n",
             nInput, zA, zC);
    }
    free(zC);
  }
  if( zA[0]=='o' ){
    /* the canonical text, at the page's end too, is its own */
    size_t m = strlen(zA+3);
    memcpy(zPage + nPage - m, zA+3, m);
    zC = result(pJ2, zPage + nPage - m, (int)m);
    if( strncmp(zC, "ok:", 3)!=0 || strcmp(zC+3, zA+3)!=0 ){
      nFailed++;
      printf("FAILED: input %d: canonical text not its own\n  %s\n  %s\n",
             nInput, zA, zC);
    }
    free(zC);
  }
  free(zA);
  free(zB);
  free(zCopy);
}

/* Each prefix of z[0..n) from nMin bytes on. */
/* Append '"', nPiece of the nAz pieces azPiece[] chosen at random, '"' to
** z[0..n); return the new length (sections 4 and 5). */
static size_t appendPieces(char *z, size_t n, const char *const *azPiece,
                           int nAz, int nPiece){
  int j;
  z[n++] = '"';
  for(j=0; j<nPiece; j++){
    const char *zP = azPiece[rand32()%(unsigned)nAz];
    size_t nP = strlen(zP);
    memcpy(z+n, zP, nP);
    n += nP;
  }
  z[n++] = '"';
  return n;
}

static void runPrefixes(const unsigned char *z, size_t n, size_t nMin){
  size_t i;
  for(i=nMin; i<=n; i++) run(z, i);
}

/* One \u escape of kind k at z (6 or 12 bytes written); returns bytes. */
static int escape(char *z, int k){
  static const char *azHex[] = { "0123456789abcdef", "0123456789ABCDEF" };
  const char *h = azHex[rand32() & 1];
  unsigned int u, lo;
  switch( k ){
    case 0:  u = 0x1000 + rand32()%0xc800; break;          /* 3 bytes */
    case 1:  u = 0x80 + rand32()%0x780; break;              /* 2 bytes */
    case 2:  u = rand32()%0x80; break;                      /* ASCII */
    case 3:  u = 0x80 + rand32()%0x80; break;               /* U+0080..FF */
    case 4:  u = 0xd800 + rand32()%0x400;                   /* a pair */
             lo = 0xdc00 + rand32()%0x400;
             sprintf(z, "\\u%c%c%c%c\\u%c%c%c%c",
                     h[u>>12], h[u>>8&15], h[u>>4&15], h[u&15],
                     h[lo>>12], h[lo>>8&15], h[lo>>4&15], h[lo&15]);
             return 12;
    case 5:  u = 0xd800 + rand32()%0x400; break;            /* lone high */
    case 6:  u = 0xdc00 + rand32()%0x400; break;            /* lone low */
    case 7:  u = 0xe000 + rand32()%0x2000; break;           /* E000..FFFF */
    default: u = 0x800 + rand32()%0x800; break;             /* 0800..0FFF */
  }
  sprintf(z, "\\u%c%c%c%c", h[u>>12], h[u>>8&15], h[u>>4&15], h[u&15]);
  return 6;
}

/* A document "[" pad "\"" run "\"]" where the run is nEsc escapes, mostly
** of CJK and pairs, with one of kind kOdd at place iOdd (or none), and
** bad hex at place iBad digit jBad (or none). */
static size_t escapeDoc(char *z, int nPad, int nEsc, int iOdd, int kOdd,
                        int iBad, int jBad, int bUnterminated){
  size_t n = 0;
  int i;
  z[n++] = '[';
  for(i=0; i<nPad; i++) z[n++] = ' ';
  z[n++] = '"';
  for(i=0; i<nEsc; i++){
    int k = (i==iOdd) ? kOdd : ((rand32()%3)==0 ? 4 : ((rand32()%5) ? 0 : 7));
    char *zE = z + n;
    n += (size_t)escape(zE, k);
    if( i==iBad ){
      static const char azBad[] = "gG/:@`xz \"\\";
      zE[2+jBad] = azBad[rand32()%(sizeof(azBad)-1)];
    }
  }
  if( !bUnterminated ){
    z[n++] = '"';
    z[n++] = ']';
  }
  return n;
}

int main(int argc, char **argv){
  char *z = malloc(1<<17);
  int nRound = 3, i, nEsc, iOdd, k, pad;
  size_t nGuard;
  for(i=1; i<argc; i++){
    if( strcmp(argv[i], "-n")==0 && i+1<argc ) nRound = atoi(argv[++i]);
    else if( strcmp(argv[i], "-s")==0 && i+1<argc ) rnd += strtoull(argv[++i], 0, 0);
    else if( strcmp(argv[i], "-v")==0 ) bVerbose = 1;
    else{ fprintf(stderr, "usage: %s [-n ROUNDS] [-s SEED] [-v]\n", argv[0]); return 2; }
  }
  nGuard = (size_t)sysconf(_SC_PAGESIZE);
  nPage = nGuard * (65536/nGuard + 1);
  zPage = mmap(0, nPage + nGuard, PROT_READ|PROT_WRITE,
               MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
  if( zPage==MAP_FAILED ) return 2;
  if( mprotect(zPage + nPage, nGuard, PROT_NONE) ) return 2;
  pJ = idemJsonNew();
  pJ2 = idemJsonNew();
  if( pJ==0 || pJ2==0 ) return 2;

  /* 1. Runs of 1..40 escapes, one odd escape at each place, every prefix
  ** from the opening quote's block on: the input ends inside the run at
  ** every byte.  The pad puts the run at each offset of a 64-byte block. */
  for(i=0; i<nRound; i++){
    for(nEsc=1; nEsc<=40; nEsc+=(nEsc<12 ? 1 : 3)){
      for(iOdd=-1; iOdd<nEsc; iOdd+=(nEsc<10 ? 1 : 4)){
        k = (int)(rand32()%9);
        pad = (int)(rand32()%64);
        size_t n = escapeDoc(z, pad, nEsc, iOdd, k, -1, 0, 0);
        runPrefixes((unsigned char*)z, n, n>80 ? n-80 : 1);
      }
      /* bad hex at every place of the run's first 12 escapes */
      for(iOdd=0; iOdd<nEsc && iOdd<12; iOdd++){
        int j = (int)(rand32()%4);
        pad = (int)(rand32()%64);
        size_t n = escapeDoc(z, pad, nEsc, -1, 0, iOdd, j, 0);
        run((unsigned char*)z, n);
        run((unsigned char*)z, n-2);                /* and unterminated */
      }
    }
  }

  /* 2. A run of 8..20 escapes that the input cuts right after a backslash,
  ** after "\u", inside the hex digits, at each offset before its end. */
  for(nEsc=8; nEsc<=20; nEsc++){
    for(pad=0; pad<64; pad+=7){
      size_t n = escapeDoc(z, pad + 10, nEsc, -1, 0, -1, 0, 1);
      runPrefixes((unsigned char*)z, n, n>60 ? n-60 : 1);
      z[n] = '\\';
      run((unsigned char*)z, n+1);
      z[n+1] = 'u';
      run((unsigned char*)z, n+2);
    }
  }

  /* 3. Numbers at the end, cut at every byte: subnormals of 1-17 digits
  ** (the 11-16 read 8 bytes at once; 10 and fewer must not be: their
  ** literal is shorter than 17 bytes), exponent signs, -0. */
  {
    static const char *azNum[] = {
      "1.2345678901e-310", "-1.2345678901e-310", "4.9406564584124654e-324",
      "2.2250738585072009e-308", "1.234567890123456e-315",
      "-9.99999999999999e-321", "1.23456789012e-320", "5e-324",
      "1.7976931348623157e+308", "1E-308", "-0", "-0.0", "-0e-0",
      "1.0000000001e-310", "9.9999999999999999e-309", "123456789012345678",
      "1.5e+300", "2.5E-300", "-1.2345678901234e-309", "0.000001",
      "4.94065645841246544e-324", "1.23456789012345e-3", "1.2e-3071",
      "1.234567891e-310", "-1.23456789e-315", "9.9999999e-320", "1.2e-308"
    };
    char zDoc[128];
    size_t j;
    for(j=0; j<sizeof(azNum)/sizeof(azNum[0]); j++){
      int nLit = (int)strlen(azNum[j]);
      for(pad=0; pad<72; pad+=1){
        size_t n;
        memset(zDoc, ' ', (size_t)pad);
        memcpy(zDoc+pad, azNum[j], (size_t)nLit);
        n = (size_t)(pad + nLit);
        runPrefixes((unsigned char*)zDoc, n, (size_t)pad + 1);
        zDoc[n] = ']';
        memmove(zDoc+1, zDoc, n+1);
        zDoc[0] = '[';
        run((unsigned char*)zDoc, n+2);
      }
    }
  }

  /* 4. Strings of every kind of text cut at every byte of their last 80:
  ** UTF-8 of 2, 3 and 4 bytes (copied 16 bytes at a time in an input
  ** known valid), short escapes, control characters. */
  {
    static const char *azPiece[] = {
      "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "a", "\\n", "\\\"",
      "\\/", "\\u00e9", "\\u0001", "\\ud83d\\ude00", "\\u4e2d", " "
    };
    for(i=0; i<200*nRound; i++){
      size_t n = 0;
      int nPiece = 10 + (int)(rand32()%50), j;
      pad = (int)(rand32()%64);
      z[n++] = '[';
      for(j=0; j<pad; j++) z[n++] = ' ';
      n = appendPieces(z, n, azPiece,
                       (int)(sizeof(azPiece)/sizeof(azPiece[0])), nPiece);
      z[n++] = ']';
      runPrefixes((unsigned char*)z, n, n>80 ? n-80 : 1);
    }
  }

  /* 5. Paths as PHP's json_encode() writes them ("\/src\/a.php": each
  ** \/ mended inside the 16-byte block, by a store of the 16 bytes after
  ** its backslash), in values and names, with other escapes among them,
  ** cut at every byte of their last 64: a \/ at every place of a block
  ** and at every distance from the end. */
  {
    static const char *azPiece[] = {
      "\\/", "\\/", "\\/", "a", "src", "Controller", "\\n", "\\\\",
      "\\u00e9", "\xc3\xa9", "/"
    };
    for(i=0; i<300*nRound; i++){
      size_t n = 0;
      int nPiece = 4 + (int)(rand32()%30), j, bName = (int)(rand32()%2);
      pad = (int)(rand32()%32);
      z[n++] = bName ? '{' : '[';
      for(j=0; j<pad; j++) z[n++] = ' ';
      n = appendPieces(z, n, azPiece,
                       (int)(sizeof(azPiece)/sizeof(azPiece[0])), nPiece);
      if( bName ){
        memcpy(z+n, ":1}", 3);
        n += 3;
      }else{
        z[n++] = ']';
      }
      runPrefixes((unsigned char*)z, n, n>64 ? n-64 : 1);
    }
  }

  /* 6. Objects of 2 047 to 2 049 members (sorted by a scatter from 2 048
  ** on), names of \u escapes, cut in their last 16 bytes. */
  for(k=2047; k<=2049; k++){
    size_t n = 0;
    z[n++] = '{';
    for(i=0; i<k; i++){
      n += (size_t)sprintf(z+n, "%s\"", i ? "," : "");
      n += (size_t)escape(z+n, rand32()%2 ? 0 : 4);
      n += (size_t)sprintf(z+n, "%d\":%d", i, i%7);
    }
    z[n++] = '}';
    runPrefixes((unsigned char*)z, n, n-16);
  }

  printf("%d inputs, %d failed\n", nInput, nFailed);
  idemJsonFree(pJ);
  idemJsonFree(pJ2);
  free(z);
  return nFailed!=0;
}

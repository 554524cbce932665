/* SPDX-License-Identifier: MIT */
/*
** Unit test for ext/idem_number.c.
**
**   gcc -O2 -Wall -Wextra -o idem_number_test test/idem_number_test.c
**   ./idem_number_test [FILE]              check every line of FILE
**   ./idem_number_test --random N          check N random doubles against
**                                          a brute-force search, and their
**                                          literals as JSON writers print
**                                          them
**     ... --random N --write-ref FILE      and write the search's digits
**                                          of each to FILE
**     ... --random N --ref FILE            take them from FILE (written by
**                                          another machine's run)
**   ./idem_number_test --bench [FILE]      time it
**
** FILE (default build/numbers.txt, written by test/data/gen_numbers.js)
** has one "<literal>\t<expected>" per line, the expected text being what
** Node prints, or ERROR for an overflow.  Every literal goes through
** idemNumberCanonical(); where the literal is not an integer beyond 2^53,
** its value (parsed by strtod()) also goes through idemNumberFormat().
** Each output buffer is allocated at exactly its documented size, so that
** -fsanitize=address catches any overrun.
*/
#define _POSIX_C_SOURCE 200809L      /* clock_gettime() */
#include "../ext/idem_number.c"
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct Case Case;
struct Case {
  const char *zIn;  int nIn;        /* the literal */
  const char *zExp; int nExp;       /* the expected text, or "ERROR" */
  int nSig;                         /* significant digits, for --bench */
  int isInt;                        /* no fraction and no exponent */
};

/* The canonical text of the literal z[0..n), scanned here as the JSON
** parser scans it (where its integer and fraction digits end), and
** converted as the parser converts it: a decimal by idemNumberDecimal()
** or idemNumberDecimalExp(), which must then agree with
** idemNumberCanonical() (-2 if not: never the expected length), and the
** first must not print more bytes than it reads (-2 too), the rest by
** idemNumberCanonical(). */
static int canonical(const char *z, int n, char *zOut){
  int iInt = n>0 && z[0]=='-', iFrac;
  while( iInt<n && z[iInt]>='0' && z[iInt]<='9' ) iInt++;
  iFrac = iInt;
  if( iFrac<n && z[iFrac]=='.' ){
    for(iFrac++; iFrac<n && z[iFrac]>='0' && z[iFrac]<='9'; iFrac++){}
  }
  if( iInt<n && z[iInt]=='.' ){
    char *zAlt = malloc(n+40);       /* exactly: asan sees any overrun */
    int nAlt = idemNumberCanonical(z, n, iInt, iFrac, zAlt);
    int nOut = iFrac==n ? idemNumberDecimal(z, n, iInt, zOut)
                        : idemNumberDecimalExp(z, n, iInt, iFrac, zOut);
    if( nOut!=nAlt || (nOut>0 && memcmp(zOut, zAlt, nOut)!=0) ) nOut = -2;
    /* A decimal with no exponent never prints longer than it is written:
    ** the canonicalizer gives it no more room (idem_canonical.c) */
    if( iFrac==n && nOut>n ) nOut = -2;
    free(zAlt);
    return nOut;
  }
  return idemNumberCanonical(z, n, iInt, iFrac, zOut);
}

static char *readFile(const char *zFile){
  FILE *f = fopen(zFile, "rb");
  long n;
  char *z;
  if( f==0 ){ perror(zFile); exit(2); }
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  z = malloc(n+1);
  if( z==0 || fread(z, 1, n, f)!=(size_t)n ){ perror(zFile); exit(2); }
  z[n] = 0;
  fclose(f);
  return z;
}

/* Split the file into cases, in place. */
static Case *loadCases(char *z, int *pN){
  int nAlloc = 1024, n = 0;
  Case *a = malloc(nAlloc*sizeof(Case));
  while( *z ){
    char *zEol = strchr(z, '\n');
    char *zTab = strchr(z, '\t');
    const char *p;
    int nLead = 1;
    if( zEol==0 ) zEol = z + strlen(z);
    if( zTab==0 || zTab>zEol ){
      fprintf(stderr, "bad line: %.*s\n", (int)(zEol-z), z);
      exit(2);
    }
    if( n==nAlloc ) a = realloc(a, (nAlloc *= 2)*sizeof(Case));
    a[n].zIn = z;
    a[n].nIn = (int)(zTab - z);
    a[n].zExp = zTab+1;
    a[n].nExp = (int)(zEol - zTab - 1);
    a[n].nSig = 0;
    a[n].isInt = 1;
    for(p=z; p<zTab; p++){
      if( *p=='.' ) continue;
      if( *p=='e' || *p=='E' ){ a[n].isInt = 0; break; }
      if( *p>='1' && *p<='9' ) nLead = 0;
      if( *p>='0' && *p<='9' && !nLead ) a[n].nSig++;
    }
    if( memchr(z, '.', zTab-z) ) a[n].isInt = 0;
    *zTab = 0;
    n++;
    if( *zEol==0 ) break;
    *zEol = 0;
    z = zEol+1;
  }
  *pN = n;
  return a;
}

static int check(const char *zFile){
  char *zData = readFile(zFile);
  int nCase, i, nPass = 0, nFail = 0;
  Case *a = loadCases(zData, &nCase);

  /* The claim in idem_number.c that idemNumPow10[i][1]+1 never carries. */
  for(i=0; i<IDEMNUM_POW10_MAX-IDEMNUM_POW10_MIN+1; i++){
    if( idemNumPow10[i][1]==~(uint64_t)0 ){
      printf("idemNumPow10[%d] has an all-ones low word\n", i);
      nFail++;
    }
  }
  /* The claim in idem_number.c that, for 17 digits w*10^q, 10t <= 1 (t as
  ** the common path computes it) if and only if w >= idemNumWide17[q+323]:
  ** 10t never rises as w grows, so it is enough that it holds at the
  ** entry and fails just below it.  Each w also goes through the number
  ** code as d.ddde+NN (an assert there compares the two tests). */
  for(i=0; i<615; i++){
    int q = i - 323, k;
    for(k=-1; k<=0; k++){
      uint64_t w = idemNumWide17[i] + (uint64_t)k, uLo, f, t2;
      const uint64_t *tq = idemNumPow10[q - IDEMNUM_POW10_MIN];
      int lz = idemNumClz64(w), sh;
      uint64_t uHi = idemNumMul128(w<<lz, tq[0], &uLo);
      char zLit[40], zOut[80];
      f = idemNumMul128(w<<lz, tq[1], &t2);
      uLo += f;
      uHi += (uLo<f);
      sh = 10 + (int)(uHi>>63) - lz;
      if( w<10000000000000000ULL || w>=100000000000000000ULL
       || (10*(idemNumPow10[q - IDEMNUM_POW10_MIN][0] >> (sh+4))
             <= ((uint64_t)1<<60))!=(k==0) ){
        printf("idemNumWide17[%d] is not where 10t falls to 1\n", i);
        nFail++;
      }
      snprintf(zLit, sizeof(zLit), "%llu", (unsigned long long)w);
      memmove(zLit+2, zLit+1, 17);
      zLit[1] = '.';
      snprintf(zLit+18, sizeof(zLit)-18, "e%d", q+16);
      if( w%10!=0 && canonical(zLit, (int)strlen(zLit), zOut)<0 ){
        printf("FAIL canonical  %s\n", zLit);
        nFail++;
      }
    }
  }
  for(i=0; i<nCase; i++){
    Case *p = &a[i];
    int isError = p->nExp==5 && memcmp(p->zExp, "ERROR", 5)==0;
    char *zOut = malloc(p->nIn+40);
    int n = canonical(p->zIn, p->nIn, zOut);
    int ok = isError ? n==-1
                     : n==p->nExp && memcmp(zOut, p->zExp, n)==0;
    if( !ok ){
      printf("FAIL canonical  %s\n  got      %.*s\n  expected %.*s\n",
             p->zIn, n<0 ? 5 : n, n<0 ? "ERROR" : zOut, p->nExp, p->zExp);
    }
    free(zOut);
    if( ok && !isError ){
      double v = strtod(p->zIn, 0);
      if( !p->isInt || (v<9007199254740992.0 && v>-9007199254740992.0) ){
        zOut = malloc(40);
        n = idemNumberFormat(v, zOut);
        if( n!=p->nExp || memcmp(zOut, p->zExp, n)!=0 ){
          printf("FAIL format     %s (%.17g)\n  got      %.*s\n"
                 "  expected %.*s\n", p->zIn, v, n, zOut, p->nExp, p->zExp);
          ok = 0;
        }
        free(zOut);
      }
    }
    if( ok ) nPass++; else nFail++;
  }
  printf("%d passed, %d failed\n", nPass, nFail);
  free(a);
  free(zData);
  return nFail!=0;
}

/*
** The shortest digits that read back as v > 0, the closest to v among
** them, by brute force with the C library (exact in glibc): for 1 to 17
** digits, try the decimals just below and just above v.  Both are needed:
** below a power of two the rounding interval is narrower on one side.
** Writes the digits, without trailing zeros, to zDig; returns their count.
*/
static int refShortest(double v, char *zDig){
  char zExact[800], zTry[40];
  const char *zD;
  int x, p, i;
  snprintf(zExact, sizeof(zExact), "%.780e", v);   /* d.ddd...e+X, exact */
  x = atoi(strchr(zExact, 'e')+1);
  zExact[1] = zExact[0];
  zD = zExact+1;                                      /* 781 digits */
  for(p=1; p<=17; p++){
    char zLo[20], zHi[20];
    int okLo, okHi, cmpHalf = 0, carry = 1, xHi = x+1;
    memcpy(zLo, zD, p);
    memcpy(zHi, zD, p);
    for(i=p-1; i>=0 && carry; i--){
      if( zHi[i]=='9' ){ zHi[i] = '0'; }else{ zHi[i]++; carry = 0; }
    }
    if( carry ){ memmove(zHi+1, zHi, p-1); zHi[0] = '1'; xHi++; }
    snprintf(zTry, sizeof(zTry), "0.%.*se%d", p, zLo, x+1);
    okLo = strtod(zTry, 0)==v;
    snprintf(zTry, sizeof(zTry), "0.%.*se%d", p, zHi, xHi);
    okHi = strtod(zTry, 0)==v;
    for(i=p; zD[i]>='0' && zD[i]<='9'; i++){
      if( i==p ){
        if( zD[i]!='5' ){ cmpHalf = zD[i]<'5' ? -1 : 1; break; }
      }else if( zD[i]!='0' ){
        cmpHalf = 1;
        break;
      }
    }
    if( okLo && okHi ){
      if( cmpHalf>0 || (cmpHalf==0 && (zLo[p-1]-'0')%2==1) ) okLo = 0;
    }
    if( okLo || okHi ){
      memcpy(zDig, okLo ? zLo : zHi, p);
      while( p>1 && zDig[p-1]=='0' ) p--;
      return p;
    }
  }
  return 0;
}

/*
** Literals of the value v in the forms that JSON writers produce, each
** through idemNumberCanonical(), which must print what idemNumberFormat()
** prints for the double that strtod() reads (correctly rounded in glibc):
** the shortest form as ECMAScript and as Python write it (exponent
** "e-07", "e+25"), "%.17g", "%.16e" and "%.15e" with every last digit
** (mostly not the shortest, some not the closest), and 0.000ddd.  Returns
** the number of failures.
*/
static int checkLiterals(double v){
  char zLit[64], zOut[128], zRef[40];
  char azLit[80][64];
  int nLit = 0, i, j, nFail = 0;
  int n = idemNumberFormat(v, zLit);
  zLit[n] = 0;
  snprintf(azLit[nLit++], 64, "%s", zLit);
  snprintf(azLit[nLit++], 64, "%.17g", v);
  snprintf(azLit[nLit++], 64, "%.16g", v);
  {
    /* The shortest digits as C's "%.*e" writes them, which is Python's
    ** repr() below 1e-4 and from 1e16 up ("1.5e-05", "1e+16") */
    int nDig = 0, nZero = 0, lead = 1;
    for(j=0; j<n && zLit[j]!='e'; j++){
      if( zLit[j]<'0' || zLit[j]>'9' ) continue;
      if( lead && zLit[j]=='0' ) continue;
      lead = 0;
      if( zLit[j]=='0' ){ nZero++; }else{ nDig += nZero + 1; nZero = 0; }
    }
    if( nDig>0 ){
      int x;
      snprintf(azLit[nLit], 64, "%.*e", nDig-1, v);
      x = atoi(strchr(azLit[nLit++], 'e')+1);
      /* and as 0.000ddd, down to 1e-8 (ECMAScript's plain form ends at
      ** 1e-6) */
      if( x<0 && x>=-8 ) snprintf(azLit[nLit++], 64, "%.*f", nDig-1-x, v);
    }
  }
  for(j=0; j<10; j++){
    char *zE;
    snprintf(azLit[nLit], 64, "%.16e", v);
    zE = strchr(azLit[nLit], 'e');
    zE[-1] = (char)('0' + j);
    nLit++;
    snprintf(azLit[nLit], 64, "%.15e", v);
    zE = strchr(azLit[nLit], 'e');
    zE[-1] = (char)('0' + j);
    nLit++;
  }
  {
    double a = v<0 ? -v : v;
    if( a<1.0 && a>=1e-6 ) snprintf(azLit[nLit++], 64, "%.*f", 24, v);
    /* trailing zeros: "d.ddd00e-N", "ddd.ddd000" */
    {
      char zT[64];
      char *zE;
      snprintf(zT, sizeof(zT), "%.16e", v);
      zE = strchr(zT, 'e');
      snprintf(azLit[nLit++], 64, "%.*s00%s", (int)(zE-zT), zT, zE);
      snprintf(zT, sizeof(zT), "%.17g", v);
      if( strchr(zT, '.') && !strchr(zT, 'e') ){
        snprintf(azLit[nLit++], 64, "%.40s000", zT);
        /* and plain "%.17g" with every last digit (the answer may then be
        ** the 16th digit moved down or up by one or two) */
        int k, nT = (int)strlen(zT);
        for(k=-1; k<=1; k++){
          /* ... its 16th digit moved by k first (carries, borrows) */
          char zK[64];
          int c = k, m = nT-2;
          memcpy(zK, zT, nT+1);
          for(; c && m>=0; m--){
            if( zK[m]=='.' || zK[m]=='-' ) continue;
            c += zK[m] - '0';
            zK[m] = (char)('0' + (c+10)%10);
            c = c<0 ? -1 : c>9;
          }
          if( c ) continue;
          for(j=0; j<10; j++){
            snprintf(azLit[nLit], 64, "%s", zK);
            azLit[nLit][nT-1] = (char)('0' + j);
            nLit++;
          }
        }
      }
    }
    /* 20 to 57 digits with no exponent, the first not 0 ("%.25f" of a
    ** value of 1 or more, and 38 significant digits): the value's exact
    ** digits, and one more digit than that changed, which do not read
    ** back as an end of a 19-digit interval */
    if( a>=1.0 && a<1e30 ){
      snprintf(azLit[nLit++], 64, "%.25f", v);
      snprintf(azLit[nLit++], 64, "%.38g", v);
      snprintf(azLit[nLit], 64, "%.37g", v);
      if( strchr(azLit[nLit], '.') && !strchr(azLit[nLit], 'e') ){
        strcat(azLit[nLit], (n&1) ? "9" : "1");
        nLit++;
      }
    }
    /* Python's repr() of an integral value below 1e16: "ddd.0" */
    if( a<1e17 && a==(double)(int64_t)a ){
      snprintf(azLit[nLit++], 64, "%.1f", v);
    }
  }
  for(i=0; i<nLit; i++){
    const char *z = azLit[i];
    int nZ = (int)strlen(z), nOut, nRef;
    double r;
    char *zIn;
    if( strchr(z, '.')==0 && strchr(z, 'e')==0 ) continue;  /* integers */
    zIn = malloc(nZ);                /* exactly: asan sees any overread */
    memcpy(zIn, z, nZ);
    nOut = canonical(zIn, nZ, zOut);
    r = strtod(z, 0);
    if( r>DBL_MAX || r<-DBL_MAX ){
      /* A literal of a value near the largest double, its last digit
      ** changed, may round to infinity: idem reports the overflow (-1),
      ** and there is no double to print. */
      nRef = -1;
    }else{
      nRef = idemNumberFormat(r, zRef);
    }
    if( nOut!=nRef || (nRef>0 && memcmp(zOut, zRef, nRef)!=0) ){
      if( nFail<5 ){
        printf("FAIL literal %s\n  got      %.*s\n  expected %.*s\n",
               z, nOut<0 ? 0 : nOut, zOut, nRef<0 ? 5 : nRef,
               nRef<0 ? "ERROR" : zRef);
      }
      nFail++;
    }
    free(zIn);
  }
  return nFail;
}

/*
** Literals exactly halfway between two doubles, and one unit in their last
** digit above and below, with 16 or 17 digits: above 2^53 the halfway
** points are integers, written here as "d.ddde+N" (an integer literal is
** printed as written).  The double is the even one on a tie (strtod()
** knows).  And 17 digits just below a power of ten.  Returns the number
** of failures.
*/
static int checkTies(void){
  int b, k, j, nFail = 0;
  for(b=53; b<=56; b++){
    uint64_t u = (uint64_t)1 << (b-52);            /* the gap there */
    for(k=1; k<2000; k++){
      uint64_t h = ((uint64_t)1<<b) + u*(uint64_t)(k*7919%4096) + u/2;
      for(j=-1; j<=1; j++){
        char zDig[32], zLit[40], zOut[128], zRef[40];
        int nDig = snprintf(zDig, sizeof(zDig), "%llu",
                            (unsigned long long)(h + (uint64_t)j));
        int nLit, nOut, nRef;
        char *zIn;
        while( nDig>1 && zDig[nDig-1]=='0' ) nDig--;
        nLit = snprintf(zLit, sizeof(zLit), "%c.%.*se+%d", zDig[0],
                        nDig-1, zDig+1, (int)strlen(zDig)-1);
        zIn = malloc(nLit);
        memcpy(zIn, zLit, nLit);
        nOut = canonical(zIn, nLit, zOut);
        nRef = idemNumberFormat(strtod(zLit, 0), zRef);
        if( nOut!=nRef || memcmp(zOut, zRef, nRef)!=0 ){
          if( nFail<5 ){
            printf("FAIL tie %s\n  got      %.*s\n  expected %.*s\n",
                   zLit, nOut<0 ? 0 : nOut, zOut, nRef, zRef);
          }
          nFail++;
        }
        free(zIn);
      }
    }
  }
  /* 17 digits just below a power of ten ("9.9999999999999999e+22", and
  ** 9...98, 9...97), whose answer may be that power: one digit. */
  for(k=-300; k<=300; k++){
    for(j=7; j<=9; j++){
      char zLit[40], zOut[128], zRef[40];
      int nLit = snprintf(zLit, sizeof(zLit), "9.999999999999999%de%d", j, k);
      int nOut, nRef;
      char *zIn = malloc(nLit);
      memcpy(zIn, zLit, nLit);
      nOut = canonical(zIn, nLit, zOut);
      nRef = idemNumberFormat(strtod(zLit, 0), zRef);
      if( nOut!=nRef || memcmp(zOut, zRef, nRef)!=0 ){
        if( nFail<5 ){
          printf("FAIL nines %s\n  got      %.*s\n  expected %.*s\n",
                 zLit, nOut<0 ? 0 : nOut, zOut, nRef, zRef);
        }
        nFail++;
      }
      free(zIn);
    }
  }
  return nFail;
}

/*
** The brute-force digits of v (bits its pattern): refShortest(), or, with
** --ref FILE, the digits FILE gives for the same pattern at this place
** (make test-cross: written by the native run, read under qemu, where
** refShortest() is ~half of the run's instructions, all in glibc).
** refShortest() depends on v alone, through glibc's printing and reading
** of doubles, which are exact on every architecture (multiple-precision
** integers, no floating point), so FILE holds what it would return; where
** the pattern differs (the file ends, or another machine's arithmetic
** made another double) it is computed here.  --write-ref FILE writes them.
*/
static FILE *pRefIn, *pRefOut;
static int refDigits(uint64_t bits, double v, char *zDig){
  int n;
  if( pRefIn ){
    char zLine[64];
    unsigned long long b;
    char zD[32];
    if( fgets(zLine, sizeof(zLine), pRefIn)
     && sscanf(zLine, "%llx %20s", &b, zD)==2 && b==bits ){
      n = (int)strlen(zD);
      if( n>=1 && n<=17 ){ memcpy(zDig, zD, n); return n; }
    }
  }
  n = refShortest(v, zDig);
  if( pRefOut ) fprintf(pRefOut, "%016llx %.*s\n", (unsigned long long)bits, n, zDig);
  return n;
}

/*
** N random bit patterns (a quarter of them with a uniformly chosen
** exponent) through idemNumberFormat(), against refShortest(), and the
** literals of each through idemNumberCanonical() (checkLiterals()); and
** checkTies().
*/
static int checkRandom(long nTest){
  uint64_t x = 0x2545f4914f6cdd1dULL;
  long i, nPass = 0, nFail = 0;
  for(i=0; i<nTest; i++){
    char zOut[40], zDig[20], zMine[40];
    double v;
    uint64_t bits;
    int n, j, nDig, nMine = 0;
    x ^= x<<13; x ^= x>>7; x ^= x<<17;
    bits = x;
    if( (i&3)==0 ){
      bits = (bits & ~((uint64_t)0x7ff<<52)) | ((uint64_t)(i%2047)<<52);
    }
    if( (i&7)==5 ){
      /* 2^-23 to 2^70, where "%.17g" writes plain digits as ECMAScript
      ** would (ddd.ddd, 0.000ddd): a non-shortest literal whose answer
      ** is its own text with the 16th digit moved (step 3b, 3c) */
      bits = (bits & ~((uint64_t)0x7ff<<52)) | ((uint64_t)(1000 + (i/8)%94)<<52);
    }
    if( (i&15)==7 ){
      /* subnormal, or among the least normal doubles (step 3 rounds a
      ** subnormal at a higher bit: the literals of these test it) */
      bits = (bits & ~((uint64_t)0x7ff<<52)) | ((uint64_t)((i/16)%3)<<52);
      if( (i&63)==7 ) bits &= ((uint64_t)1<<(i/64%52 + 1)) - 1;
    }
    if( (i&31)==3 ){
      /* an integral value near 1e16 */
      memcpy(&v, &bits, 8);
      v = (double)(int64_t)(1e15 + (double)(x % 100000000000000000ULL));
      memcpy(&bits, &v, 8);
    }
    if( (i&31)==1 ){
      /* a power of two, or next to one (the interval is narrower below) */
      bits = (bits & ~(((uint64_t)1<<52)-1)) + (i&64 ? 0 : (i&32 ? 1 : -1));
    }
    if( ((bits>>52)&0x7ff)==0x7ff ) continue;
    memcpy(&v, &bits, 8);
    n = idemNumberFormat(v, zOut);
    zOut[n] = 0;
    if( v==0 ){
      nDig = nMine = 1;
      zDig[0] = zMine[0] = '0';
    }else{
      nDig = refDigits(bits, v<0 ? -v : v, zDig);
      for(j=0; zOut[j] && zOut[j]!='e'; j++){
        if( zOut[j]>='1' && zOut[j]<='9' ) break;
      }
      for(; zOut[j] && zOut[j]!='e'; j++){
        if( zOut[j]>='0' && zOut[j]<='9' ) zMine[nMine++] = zOut[j];
      }
      while( nMine>1 && zMine[nMine-1]=='0' ) nMine--;
    }
    if( strtod(zOut, 0)!=v || nMine!=nDig || memcmp(zMine, zDig, nDig)!=0
     || checkLiterals(v) ){
      if( nFail<20 ){
        printf("FAIL random %016llx: %s, expected digits %.*s\n",
               (unsigned long long)bits, zOut, nDig, zDig);
      }
      nFail++;
    }else{
      nPass++;
    }
  }
  /* The largest doubles, whose literals with a last digit changed may
  ** overflow (a random double is rarely one of them) */
  {
    uint64_t b = 0x7fefffffffffffffULL;
    int j;
    for(j=0; j<64; j++, b--){
      double v;
      memcpy(&v, &b, 8);
      if( checkLiterals(v) || checkLiterals(-v) ){
        if( nFail<20 ) printf("FAIL largest %016llx\n", (unsigned long long)b);
        nFail++;
      }else{
        nPass++;
      }
    }
  }
  i = checkTies();
  nFail += i;
  nPass += 4*1999*3 + 601*3 - i;
  printf("%ld passed, %ld failed\n", nPass, nFail);
  return nFail!=0;
}

static double now(void){
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec*1e9 + t.tv_nsec;
}

/* Shortest round trip the slow way: "%.*g" with 1..17 digits + strtod(). */
static int slowShortest(const char *zIn, char *zOut){
  double v = strtod(zIn, 0);
  int p, n = 0;
  for(p=1; p<=17; p++){
    n = snprintf(zOut, 40, "%.*g", p, v);
    if( strtod(zOut, 0)==v ) break;
  }
  return n;
}

static int bench(const char *zFile){
  static const struct { const char *zName; int lo, hi, isInt; } aGroup[] = {
    { "all lines",                     0, 1<<30, -1 },
    { "integer literals",              0, 1<<30,  1 },
    { "1-15 significant digits",       1, 15,     0 },
    { "16-17 significant digits",     16, 17,     0 },
    { "18-25 significant digits",     18, 25,     0 },
    { "26+ significant digits",       26, 1<<30,  0 },
  };
  char *zData = readFile(zFile);
  int nCase, g, i, r, nV;
  Case *a = loadCases(zData, &nCase);
  char *zOut = malloc(4096);
  char *zPack;                      /* the group's literals, packed */
  const char **azIn = malloc(nCase*sizeof(char*));
  int *anIn = malloc(nCase*sizeof(int));
  double *aV = malloc(nCase*sizeof(double));
  volatile long sink = 0;
  size_t nPack = 0;

  for(i=0; i<nCase; i++) nPack += a[i].nIn + 1;
  zPack = malloc(nPack);
  printf("ns per number, %s:\n", zFile);
  printf("%-26s %7s %11s %14s %12s\n", "group", "lines",
         "canonical", "%.17g+strtod", "%.*g loop");
  for(g=0; g<(int)(sizeof(aGroup)/sizeof(aGroup[0])); g++){
    double t0, tMine, tOnce, tLoop;
    int n = 0, nRep;
    char *z = zPack;
    for(i=0; i<nCase; i++){
      if( aGroup[g].isInt>=0 && a[i].isInt!=aGroup[g].isInt ) continue;
      if( a[i].nSig<aGroup[g].lo || a[i].nSig>aGroup[g].hi ) continue;
      memcpy(z, a[i].zIn, a[i].nIn);
      azIn[n] = z;
      anIn[n] = a[i].nIn;
      z += a[i].nIn;
      *(z++) = 0;
      n++;
    }
    if( n==0 ) continue;
    nRep = 3000000/n + 1;
    t0 = now();
    for(r=0; r<nRep; r++){
      for(i=0; i<n; i++) sink += canonical(azIn[i], anIn[i], zOut);
    }
    tMine = (now()-t0)/(n*(double)nRep);
    nRep = nRep/20 + 1;
    t0 = now();
    for(r=0; r<nRep; r++){
      for(i=0; i<n; i++){
        sink += snprintf(zOut, 40, "%.17g", strtod(azIn[i], 0));
      }
    }
    tOnce = (now()-t0)/(n*(double)nRep);
    t0 = now();
    for(r=0; r<nRep; r++){
      for(i=0; i<n; i++) sink += slowShortest(azIn[i], zOut);
    }
    tLoop = (now()-t0)/(n*(double)nRep);
    printf("%-26s %7d %8.1f ns %11.1f ns %9.1f ns\n",
           aGroup[g].zName, n, tMine, tOnce, tLoop);
  }
  for(i=nV=0; i<nCase; i++){
    double v = strtod(a[i].zIn, 0);
    if( v-v==0.0 ) aV[nV++] = v;       /* finite */
  }
  {
    double t0 = now(), t;
    int nRep = 3000000/nV + 1;
    for(r=0; r<nRep; r++){
      for(i=0; i<nV; i++) sink += idemNumberFormat(aV[i], zOut);
    }
    t = (now()-t0)/(nV*(double)nRep);
    printf("idemNumberFormat alone, %d finite values: %.1f ns\n", nV, t);
  }
  (void)sink;
  free(aV);
  free(anIn);
  free(azIn);
  free(zPack);
  free(zOut);
  free(a);
  free(zData);
  return 0;
}

int main(int argc, char **argv){
  const char *zFile = "build/numbers.txt";
  if( argc>=2 && strcmp(argv[1], "--bench")==0 ){
    return bench(argc>=3 ? argv[2] : zFile);
  }
  if( argc>=3 && strcmp(argv[1], "--random")==0 ){
    if( argc>=5 && strcmp(argv[3], "--ref")==0
     && (pRefIn = fopen(argv[4], "r"))==0 ){
      fprintf(stderr, "cannot read %s\n", argv[4]);
      return 1;
    }
    if( argc>=5 && strcmp(argv[3], "--write-ref")==0
     && (pRefOut = fopen(argv[4], "w"))==0 ){
      fprintf(stderr, "cannot write %s\n", argv[4]);
      return 1;
    }
    return checkRandom(atol(argv[2]));
  }
  return check(argc>=2 ? argv[1] : zFile);
}

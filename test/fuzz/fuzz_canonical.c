/* SPDX-License-Identifier: MIT */
/*
** fuzz_canonical.c -- libFuzzer target: raw bytes -> idemJsonCanonical().
**
**   make fuzz            (a short run of every target; see the Makefile)
**
** The extension is compiled into this file (one translation unit, built
** with -DSQLITE_CORE), so its static C interface is called directly.  Each
** input is checked against properties, not only for crashes:
**
**   1. An independent strict parser (ref*, below: RFC 8259 plus idem's own
**      rules -- duplicate names after unescaping, lone surrogate escapes,
**      non-integer numbers that overflow a double, nesting deeper than
**      IDEM_JSON_MAX_DEPTH) accepts the input exactly when idem does.
**   2. An accepted input and its canonical text mean the same: the
**      reference parser reduces both to one normal form (members sorted by
**      UTF-16 code units, strings as UTF-16 code units, numbers as the
**      double strtod() reads, except integer literals a double cannot hold
**      exactly, which stay digits).
**   3. The canonical text is in canonical form, checked independently: no
**      whitespace, only the RFC 8785 escapes, members strictly ascending.
**   4. canonical(canonical(x)) == canonical(x).
**   5. x and canonical(x) give the same key (idemKeyHash over fixed who,
**      conv, tool).
**
** Any failed property calls abort(), which libFuzzer reports as a crash
** and saves the input.
*/
#ifndef IDEM_FUZZ_BOTH   /* test/fuzz/fuzz_both.c has included it */
#include "../../ext/idem.c"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <math.h>

/* ------------------------------------------------- a growable buffer */
typedef struct RefStr RefStr;
struct RefStr { char *z; size_t n, nAlloc; };

static void refAppend(RefStr *s, const void *z, size_t n){
  if( s->n + n + 1 > s->nAlloc ){
    size_t nNew = (s->nAlloc + n)*2 + 64;
    s->z = realloc(s->z, nNew);
    if( s->z==0 ) abort();
    s->nAlloc = nNew;
  }
  memcpy(s->z + s->n, z, n);
  s->n += n;
  s->z[s->n] = 0;
}
static void refAppendZ(RefStr *s, const char *z){ refAppend(s, z, strlen(z)); }

/* ------------------------------------------------ the reference parser */
#define REF_OK       0
#define REF_BAD      1     /* anything that must be rejected */

typedef struct Ref Ref;
struct Ref {
  const unsigned char *z, *zEnd, *s;
  int nDepth;
  int bCanon;      /* Also require canonical form (property 3) */
};

static void refWs(Ref *p){
  if( p->bCanon ) return;          /* canonical text has no whitespace */
  while( p->s<p->zEnd && (*p->s==' ' || *p->s=='\t' || *p->s=='\n'
                          || *p->s=='\r') ) p->s++;
}

static int refHex4(const unsigned char *z, int bLowerOnly){
  int v = 0, i;
  for(i=0; i<4; i++){
    int c = z[i];
    if( c>='0' && c<='9' ) v = v*16 + c-'0';
    else if( c>='a' && c<='f' ) v = v*16 + c-'a'+10;
    else if( !bLowerOnly && c>='A' && c<='F' ) v = v*16 + c-'A'+10;
    else return -1;
  }
  return v;
}

/* A string at p->s (the opening quote).  Its UTF-16 code units go to pU
** (two bytes each, big-endian, so that memcmp orders as code units). */
static int refString(Ref *p, RefStr *pU){
  const unsigned char *s = p->s + 1;
  const unsigned char *zEnd = p->zEnd;
  for(;;){
    unsigned int c, u;
    unsigned char a[4];
    if( s>=zEnd ) return REF_BAD;
    c = *s;
    if( c=='"' ){ s++; break; }
    if( c<0x20 ) return REF_BAD;
    if( c=='\\' ){
      if( s+1>=zEnd ) return REF_BAD;
      switch( s[1] ){
        case '"': u = '"'; s += 2; break;
        case '\\': u = '\\'; s += 2; break;
        case '/': if( p->bCanon ) return REF_BAD; u = '/'; s += 2; break;
        case 'b': u = 8; s += 2; break;
        case 'f': u = 12; s += 2; break;
        case 'n': u = 10; s += 2; break;
        case 'r': u = 13; s += 2; break;
        case 't': u = 9; s += 2; break;
        case 'u': {
          int v;
          if( zEnd-s<6 || (v = refHex4(s+2, p->bCanon))<0 ) return REF_BAD;
          if( p->bCanon ){
            /* only controls without a short form are \u00xx */
            if( v>=0x20 || v==8 || v==9 || v==10 || v==12 || v==13 ) return REF_BAD;
          }
          s += 6;
          if( v>=0xD800 && v<=0xDBFF ){
            int w;
            if( zEnd-s<6 || s[0]!='\\' || s[1]!='u'
             || (w = refHex4(s+2, 0))<0 || w<0xDC00 || w>0xDFFF ){
              return REF_BAD;                   /* lone high surrogate */
            }
            a[0] = (unsigned char)(v>>8); a[1] = (unsigned char)v;
            refAppend(pU, a, 2);
            v = w;
            s += 6;
          }else if( v>=0xDC00 && v<=0xDFFF ){
            return REF_BAD;                     /* lone low surrogate */
          }
          u = (unsigned int)v;
          break;
        }
        default: return REF_BAD;
      }
      a[0] = (unsigned char)(u>>8); a[1] = (unsigned char)u;
      refAppend(pU, a, 2);
      continue;
    }
    if( p->bCanon && c>=0x20 && c<0x80 ){
      /* fine: raw printable ASCII */
    }
    if( c<0x80 ){
      u = c; s++;
    }else{
      /* Strict UTF-8: no overlongs, no surrogates, nothing above U+10FFFF. */
      int n, i;
      unsigned int min;
      if( c>=0xC2 && c<=0xDF ){ n = 2; u = c & 0x1F; min = 0x80; }
      else if( c>=0xE0 && c<=0xEF ){ n = 3; u = c & 0x0F; min = 0x800; }
      else if( c>=0xF0 && c<=0xF4 ){ n = 4; u = c & 0x07; min = 0x10000; }
      else return REF_BAD;
      if( zEnd-s<n ) return REF_BAD;
      for(i=1; i<n; i++){
        if( (s[i]&0xC0)!=0x80 ) return REF_BAD;
        u = (u<<6) | (s[i]&0x3F);
      }
      if( u<min || u>0x10FFFF || (u>=0xD800 && u<=0xDFFF) ) return REF_BAD;
      s += n;
    }
    if( u>=0x10000 ){
      unsigned int hi = 0xD800 + ((u-0x10000)>>10);
      unsigned int lo = 0xDC00 + ((u-0x10000)&0x3FF);
      a[0] = (unsigned char)(hi>>8); a[1] = (unsigned char)hi;
      a[2] = (unsigned char)(lo>>8); a[3] = (unsigned char)lo;
      refAppend(pU, a, 4);
    }else{
      a[0] = (unsigned char)(u>>8); a[1] = (unsigned char)u;
      refAppend(pU, a, 2);
    }
  }
  p->s = s;
  return REF_OK;
}

/* Is integer literal zTok what ECMAScript prints for d (below 1e21: the
** shortest digits that read back as d, padded with zeros)? */
static int refIsEcmaInteger(const char *zTok, double d){
  char zE[64], zI[64];
  int p, e, i, n = 0;
  if( !(fabs(d)<1e21) ) return 0;
  for(p=1; p<=17; p++){
    snprintf(zE, sizeof(zE), "%.*e", p-1, d);
    if( strtod(zE, 0)==d ) break;
  }
  /* zE is [-]D[.DDD]e[+-]XX */
  e = atoi(strchr(zE, 'e')+1);
  if( e<p-1 && e>=0 ) return 0;      /* would have a fraction */
  if( e<0 ) return 0;
  for(i=0; zE[i]!='e'; i++){
    if( zE[i]!='.' ) zI[n++] = zE[i];
  }
  while( n - (zE[0]=='-') < e+1 ) zI[n++] = '0';
  zI[n] = 0;
  return strcmp(zI, zTok)==0;
}

/* Normal form of a number token z[0..n). */
static int refNumber(Ref *p, RefStr *pOut){
  const unsigned char *s = p->s, *z = p->s;
  int isInt = 1;
  char *zTok, zBuf[400];
  double d;
  if( s<p->zEnd && *s=='-' ) s++;
  if( s>=p->zEnd || *s<'0' || *s>'9' ) return REF_BAD;
  if( *s=='0' ){
    s++;
  }else{
    while( s<p->zEnd && *s>='0' && *s<='9' ) s++;
  }
  if( s<p->zEnd && *s=='.' ){
    isInt = 0; s++;
    if( s>=p->zEnd || *s<'0' || *s>'9' ) return REF_BAD;
    while( s<p->zEnd && *s>='0' && *s<='9' ) s++;
  }
  if( s<p->zEnd && (*s=='e' || *s=='E') ){
    isInt = 0; s++;
    if( s<p->zEnd && (*s=='+' || *s=='-') ) s++;
    if( s>=p->zEnd || *s<'0' || *s>'9' ) return REF_BAD;
    while( s<p->zEnd && *s>='0' && *s<='9' ) s++;
  }
  /* A digit right after "0" is a leading zero: the caller sees it as
  ** unexpected text after the value. */
  zTok = malloc((size_t)(s-z)+1);
  if( zTok==0 ) abort();
  memcpy(zTok, z, (size_t)(s-z));
  zTok[s-z] = 0;
  errno = 0;
  d = strtod(zTok, 0);
  if( isInt ){
    /* Digits, unless they are the double's exact value, or what
    ** ECMAScript prints for it (shortest digits padded with zeros, as
    ** 1234567890123456789e0 prints 1234567890123456800). */
    snprintf(zBuf, sizeof(zBuf), "%.0f", d);
    if( isinf(d) || (strcmp(zBuf, zTok)!=0 && !refIsEcmaInteger(zTok, d)) ){
      refAppendZ(pOut, "I");
      refAppendZ(pOut, zTok);
      refAppendZ(pOut, ";");
      free(zTok);
      p->s = s;
      return REF_OK;
    }
  }else if( isinf(d) ){
    free(zTok);
    return REF_BAD;                     /* overflows a double */
  }
  free(zTok);
  if( d==0.0 ) d = 0.0;                 /* -0 is 0 */
  snprintf(zBuf, sizeof(zBuf), "N%.17g;", d);
  refAppendZ(pOut, zBuf);
  p->s = s;
  return REF_OK;
}

typedef struct RefMember RefMember;
struct RefMember { RefStr name; RefStr value; };

static int refMemberCmp(const void *a, const void *b){
  const RefMember *x = a, *y = b;
  size_t n = x->name.n<y->name.n ? x->name.n : y->name.n;
  int c = n ? memcmp(x->name.z, y->name.z, n) : 0;
  if( c ) return c;
  return x->name.n<y->name.n ? -1 : x->name.n>y->name.n;
}

static void refHexDump(RefStr *pOut, const RefStr *pU){
  static const char aHex[] = "0123456789abcdef";
  size_t i;
  for(i=0; i<pU->n; i++){
    char a[2];
    a[0] = aHex[(unsigned char)pU->z[i]>>4];
    a[1] = aHex[pU->z[i]&15];
    refAppend(pOut, a, 2);
  }
}

static int refValue(Ref *p, RefStr *pOut);

static int refObject(Ref *p, RefStr *pOut){
  RefMember *a = 0;
  int n = 0, nAlloc = 0, i, rc = REF_OK;
  p->s++;
  refWs(p);
  if( p->s<p->zEnd && *p->s=='}' ){
    p->s++;
    refAppendZ(pOut, "{}");
    return REF_OK;
  }
  for(;;){
    RefMember *m;
    if( n==nAlloc ){
      nAlloc = nAlloc*2 + 8;
      a = realloc(a, nAlloc*sizeof(RefMember));
      if( a==0 ) abort();
    }
    m = &a[n++];
    memset(m, 0, sizeof(*m));
    if( p->s>=p->zEnd || *p->s!='"' ){ rc = REF_BAD; break; }
    rc = refString(p, &m->name);
    if( rc ) break;
    if( p->bCanon && n>1 && refMemberCmp(&a[n-2], m)>=0 ){
      rc = REF_BAD;                     /* not strictly ascending */
      break;
    }
    refWs(p);
    if( p->s>=p->zEnd || *p->s!=':' ){ rc = REF_BAD; break; }
    p->s++;
    refWs(p);
    rc = refValue(p, &m->value);
    if( rc ) break;
    refWs(p);
    if( p->s<p->zEnd && *p->s==',' ){ p->s++; refWs(p); continue; }
    if( p->s<p->zEnd && *p->s=='}' ){ p->s++; break; }
    rc = REF_BAD;
    break;
  }
  if( rc==REF_OK ){
    qsort(a, n, sizeof(RefMember), refMemberCmp);
    for(i=1; i<n; i++){
      if( refMemberCmp(&a[i-1], &a[i])==0 ){ rc = REF_BAD; break; }  /* dup */
    }
  }
  if( rc==REF_OK ){
    refAppendZ(pOut, "{");
    for(i=0; i<n; i++){
      refAppendZ(pOut, "S");
      refHexDump(pOut, &a[i].name);
      refAppendZ(pOut, ":");
      refAppend(pOut, a[i].value.z, a[i].value.n);
    }
    refAppendZ(pOut, "}");
  }
  for(i=0; i<n; i++){ free(a[i].name.z); free(a[i].value.z); }
  free(a);
  return rc;
}

static int refValue(Ref *p, RefStr *pOut){
  int rc;
  if( p->s>=p->zEnd ) return REF_BAD;
  switch( *p->s ){
    case '{':
    case '[':
      if( ++p->nDepth > IDEM_JSON_MAX_DEPTH ) return REF_BAD;
      if( *p->s=='{' ){
        rc = refObject(p, pOut);
      }else{
        p->s++;
        refWs(p);
        refAppendZ(pOut, "[");
        rc = REF_OK;
        if( p->s<p->zEnd && *p->s==']' ){
          p->s++;
        }else{
          for(;;){
            rc = refValue(p, pOut);
            if( rc ) break;
            refAppendZ(pOut, ",");
            refWs(p);
            if( p->s<p->zEnd && *p->s==',' ){ p->s++; refWs(p); continue; }
            if( p->s<p->zEnd && *p->s==']' ){ p->s++; break; }
            rc = REF_BAD;
            break;
          }
        }
        refAppendZ(pOut, "]");
      }
      p->nDepth--;
      return rc;
    case '"': {
      RefStr u = {0, 0, 0};
      rc = refString(p, &u);
      if( rc==REF_OK ){
        refAppendZ(pOut, "S");
        refHexDump(pOut, &u);
        refAppendZ(pOut, ";");
      }
      free(u.z);
      return rc;
    }
    case 't':
      if( p->zEnd-p->s<4 || memcmp(p->s, "true", 4) ) return REF_BAD;
      p->s += 4; refAppendZ(pOut, "T"); return REF_OK;
    case 'f':
      if( p->zEnd-p->s<5 || memcmp(p->s, "false", 5) ) return REF_BAD;
      p->s += 5; refAppendZ(pOut, "F"); return REF_OK;
    case 'n':
      if( p->zEnd-p->s<4 || memcmp(p->s, "null", 4) ) return REF_BAD;
      p->s += 4; refAppendZ(pOut, "Z"); return REF_OK;
    default:
      return refNumber(p, pOut);
  }
}

/* Parse z[0..n) as one JSON text; its normal form goes to *pOut. */
static int refParse(const unsigned char *z, size_t n, int bCanon, RefStr *pOut){
  Ref r;
  int rc;
  r.z = r.s = z;
  r.zEnd = z + n;
  r.nDepth = 0;
  r.bCanon = bCanon;
  refWs(&r);
  rc = refValue(&r, pOut);
  if( rc==REF_OK ){
    refWs(&r);
    if( r.s!=r.zEnd ) rc = REF_BAD;
  }
  return rc;
}

/* ------------------------------------------------------------ the target */
/* pJson1 is made for each input, so that its buffers start at the size of
** that input and every path that grows them runs; pJson2 is kept from
** input to input, as the SQL functions keep theirs. */
static IdemJson *pJson1, *pJson2;

static void fail(const char *zWhat, const uint8_t *a, size_t n,
                 const char *zCanon, int nCanon){
  fprintf(stderr, "fuzz_canonical: %s\n  input (%zu bytes): ", zWhat, n);
  fwrite(a, 1, n<400 ? n : 400, stderr);
  fprintf(stderr, "\n  idem: %s\n", pJson1 ? idemJsonError(pJson1) : "");
  if( zCanon ){
    fprintf(stderr, "  canonical: ");
    fwrite(zCanon, 1, nCanon<400 ? nCanon : 400, stderr);
    fprintf(stderr, "\n");
  }
  abort();
}

static void keyOf(const char *zArgs, int nArgs, unsigned char aKey[16]){
  IdemPart a[4];
  a[0].p = "fuzz-who";  a[0].n = 8;
  a[1].p = "fuzz-conv"; a[1].n = 9;
  a[2].p = "fuzz-tool"; a[2].n = 9;
  a[3].p = zArgs;       a[3].n = nArgs;
  idemKeyHash(a, aKey);
}

int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData){
  RefStr refIn = {0, 0, 0}, refOut = {0, 0, 0};
  int rcRef, rc, nCanon, nCanon2;
  const char *zCanon2;
  char *zCanon;
  unsigned char aKey1[16], aKey2[16];

  if( nData>0x10000000 ) return 0;
  if( pJson2==0 && (pJson2 = idemJsonNew())==0 ) abort();
  if( (pJson1 = idemJsonNew())==0 ) abort();

  rcRef = refParse(aData, nData, 0, &refIn);
  rc = idemJsonCanonical(pJson1, (const char*)aData, (int)nData);
  if( rc!=SQLITE_OK && rc!=SQLITE_ERROR ) fail("unexpected result code", aData, nData, 0, 0);
  if( rc==SQLITE_ERROR ){
    const char *zErr = idemJsonError(pJson1);
    if( zErr[0]==0 ) fail("error without a message", aData, nData, 0, 0);
    if( rcRef==REF_OK ) fail("rejected, but the reference accepts it", aData, nData, 0, 0);
    goto done;
  }
  if( rcRef!=REF_OK ) fail("accepted, but the reference rejects it", aData, nData, 0, 0);

  zCanon2 = idemJsonText(pJson1, &nCanon);
  zCanon = malloc((size_t)nCanon + 1);
  if( zCanon==0 ) abort();
  memcpy(zCanon, zCanon2, (size_t)nCanon + 1);
  if( zCanon[nCanon]!=0 ) fail("canonical text not terminated", aData, nData, zCanon, nCanon);

  /* 2 and 3: same meaning, canonical form. */
  if( refParse((const unsigned char*)zCanon, nCanon, 1, &refOut)!=REF_OK ){
    fail("output is not canonical strict JSON", aData, nData, zCanon, nCanon);
  }
  if( refIn.n!=refOut.n || memcmp(refIn.z, refOut.z, refIn.n)!=0 ){
    fprintf(stderr, "ref(in):  %s\nref(out): %s\n", refIn.z, refOut.z);
    fail("output means something else than the input", aData, nData, zCanon, nCanon);
  }

  /* 4: idempotent. */
  rc = idemJsonCanonical(pJson2, zCanon, nCanon);
  if( rc!=SQLITE_OK ) fail("canonical text rejected", aData, nData, zCanon, nCanon);
  zCanon2 = idemJsonText(pJson2, &nCanon2);
  if( nCanon2!=nCanon || memcmp(zCanon, zCanon2, (size_t)nCanon)!=0 ){
    fail("canonical(canonical(x)) != canonical(x)", aData, nData, zCanon, nCanon);
  }

  /* 5: one key. */
  keyOf(zCanon, nCanon, aKey1);
  keyOf(zCanon2, nCanon2, aKey2);
  if( memcmp(aKey1, aKey2, 16)!=0 ) fail("keys differ", aData, nData, zCanon, nCanon);
  free(zCanon);

done:
  idemJsonFree(pJson1);
  pJson1 = 0;
  free(refIn.z);
  free(refOut.z);
  return 0;
}

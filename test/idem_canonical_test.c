/* SPDX-License-Identifier: MIT */
/*
** idem_canonical_test.c -- what the canonicalizer's inner steps do when
** another step is wrong (ext/idem_canonical.c): no input can reach these,
** so they are called here directly.
**
**     build/idem_canonical_test
**
** idemJsonDuplicate() is called when the sort of an object says that two
** names are equal.  Given an order in which two neighbours are equal it
** names the later one; given one in which none are (the sort was wrong),
** it returns an internal error that says where, and does not crash.
** Prints "N passed, N failed" and exits non-zero on a failure.
*/
#define SQLITE_CORE 1
#include "../ext/idem.c"
#include <stdio.h>
#include <stdlib.h>

static int nPass, nFail;

static void check(int bOk, const char *zWhat, const char *zGot){
  if( bOk ){
    nPass++;
  }else{
    nFail++;
    printf("FAILED: %s (got: %s)\n", zWhat, zGot);
  }
}

/* The members of the canonical text z (names as "x" then ':' and a value
** of one byte, separated by ','), input offsets as if z were the input
** after a '{' at byte 0. */
static int members(IdemJson *p, const char *z, IdemJsonMember *a){
  int n = 0, i = 0, len = (int)strlen(z);
  p->nOut = len;
  memcpy(p->zOut, z, len);
  memset(p->zOut+len, 0, 16);
  while( i<len ){
    int j = i+1;
    while( z[j]!='"' ) j++;
    a[n].iName = (uint32_t)i;
    a[n].iNameEnd = (uint32_t)(j+1);
    a[n].iEnd = (uint32_t)(j+3);
    a[n].iIn = (uint32_t)(i+1);
    a[n].iKey = idemJsonNameKey(p->zOut+i+1, j-i-1);
    n++;
    i = j+4;
  }
  return n;
}

int main(void){
  IdemJson *p = idemJsonNew();
  IdemJsonMember a[8];
  IdemJsonRank r[8];
  int n, rc;
  if( p==0 || idemJsonGrowOut(p, 256) ) return 2;

  /* Two equal names next to each other in the order: the later one. */
  n = members(p, "\"b\":1,\"a\":2,\"b\":3", a);
  r[0].iMem = 1; r[1].iMem = 0; r[2].iMem = 2;
  rc = idemJsonDuplicate(p, a, r, n, 0);
  check(rc==SQLITE_ERROR && strcmp(p->zErr,
        "duplicate member name \"b\" at byte 14")==0,
        "a duplicate is named", p->zErr);

  /* A wrong sort: no two neighbours are equal.  An internal error. */
  n = members(p, "\"b\":1,\"a\":2,\"c\":3", a);
  r[0].iMem = 1; r[1].iMem = 0; r[2].iMem = 2;
  rc = idemJsonDuplicate(p, a, r, n, 0);
  check(rc==SQLITE_INTERNAL && strcmp(p->zErr,
        "internal error: the sort of the object whose first name is at"
        " byte 2 found a duplicate that is not there")==0,
        "no duplicate: an internal error", p->zErr);

  /* Equal keys, names that differ past them: still none. */
  n = members(p, "\"abcdefgh1\":1,\"abcdefgh2\":2", a);
  r[0].iMem = 0; r[1].iMem = 1;
  rc = idemJsonDuplicate(p, a, r, n, 0);
  check(rc==SQLITE_INTERNAL, "equal keys, no duplicate", p->zErr);

  /* The buffers of a large text are kept for the next call (taken fresh,
  ** a large object's scratch cost a page fault every 4 KB), and go at the
  ** end of a call whose text is small, or passed IDEM_JSON_HOLD. */
  {
    int nBig = IDEM_JSON_HOLD + 4*IDEM_JSON_KEEP, i, o;
    char *zBig = malloc(nBig + 1);
    if( zBig==0 ) return 2;
    /* an object of 4-byte names out of order, duplicates among them */
    o = sprintf(zBig, "{");
    for(i=0; i<200000; i++){
      o += sprintf(zBig+o, "%s\"%c%02d\":1", i ? "," : "",
                   'a' + (199999-i)/10000 % 26, (199999-i) % 100);
    }
    zBig[o++] = '}';
    rc = idemJsonCanonical(p, zBig, o);
    check(rc==SQLITE_ERROR && p->nMemberAlloc*(sqlite3_int64)
          sizeof(IdemJsonMember)>IDEM_JSON_KEEP,
          "a large text's members are kept (a duplicate)", p->zErr);
    rc = idemJsonCanonical(p, "{\"b\":1,\"a\":2}", -1);
    check(rc==SQLITE_OK && p->nMemberAlloc*(sqlite3_int64)
          sizeof(IdemJsonMember)<=IDEM_JSON_KEEP,
          "a small one frees them", p->zErr);
    o = sprintf(zBig, "{");        /* distinct names now, out of order */
    for(i=0; i<200000; i++){
      o += sprintf(zBig+o, "%s\"n%06d\":1", i ? "," : "", 199999-i);
    }
    zBig[o] = '}';
    rc = idemJsonCanonical(p, zBig, o+1);
    check(rc==SQLITE_OK && p->nMemberAlloc*(sqlite3_int64)
          sizeof(IdemJsonMember)>IDEM_JSON_KEEP
          && p->nTmpAlloc>IDEM_JSON_KEEP, "and those of a sort too", p->zErr);
    /* the same, then a string that takes the text past IDEM_JSON_HOLD */
    o += sprintf(zBig+o, ",\"zz\":\"");
    memset(zBig+o, 'x', nBig-o-2);
    memcpy(zBig+nBig-2, "\"}", 2);
    rc = idemJsonCanonical(p, zBig, nBig);
    check(rc==SQLITE_OK && p->nOut>IDEM_JSON_HOLD && p->nMemberAlloc==0
          && p->nTmpAlloc==0,
          "a text past IDEM_JSON_HOLD frees them at its end", p->zErr);
    /* A large input's member records grow at once to one every 16 bytes
    ** of it, not doubled from 64 (each doubling a copy of them all), and
    ** past that if there are more. */
    memset(zBig, 'x', 2*IDEM_JSON_KEEP);
    memcpy(zBig, "{\"a\":\"", 6);
    memcpy(zBig+2*IDEM_JSON_KEEP-2, "\"}", 2);
    rc = idemJsonCanonical(p, zBig, 2*IDEM_JSON_KEEP);
    check(rc==SQLITE_OK && p->nMemberAlloc==p->nOutAlloc/16
          && p->nOutAlloc>=2*IDEM_JSON_KEEP,
          "room for a member every 16 bytes", p->zErr);
    zBig[0] = '{';
    for(i=0; i<p->nOutAlloc/16+1000; i++) memcpy(zBig+1+8*i, "\"ab\":10,", 8);
    memcpy(zBig+1+8*(i-1), "\"xy\":10}", 8);
    o = 1+8*i;
    rc = idemJsonCanonical(p, zBig, o);
    check(rc==SQLITE_ERROR && strncmp(p->zErr, "duplicate member name", 21)==0
          && p->nMemberAlloc>o/16,
          "and more as they come", p->zErr);
    free(zBig);
  }

  /* The room of the output (the invariant of idemJsonCanonical(), which
  ** IDEM_DEBUG asserts at every number): numbers that print longer than
  ** they read ("1e20", 21 bytes) make room first, a decimal with no
  ** exponent takes what is left.  Runs of them from every slack that
  ** idemJsonBegin() leaves at the start (its buffer is the input plus 64
  ** from 4 032 bytes of input), then decimals that take the number code. */
  {
    int k, i, o, bOk = 1;
    char *zDoc = malloc(20000);
    if( zDoc==0 ) return 2;
    for(k=4032; k<4032+40; k++){
      o = sprintf(zDoc, "[");
      while( o<k-30 ) o += sprintf(zDoc+o, "1e20,");
      for(i=0; o<k-1; i++) o += sprintf(zDoc+o, "%s", i%2 ? "," : "1");
      if( zDoc[o-1]==',' ) zDoc[o-1] = '2';
      o += sprintf(zDoc+o, ",0.12345678901234567,1.5e3]");
      rc = idemJsonCanonical(p, zDoc, o);
      bOk = bOk && rc==SQLITE_OK && p->nOut>26
            && memcmp(p->zOut+p->nOut-26, ",0.12345678901234566,1500]", 26)==0
            && memcmp(p->zOut, "[100000000000000000000,", 23)==0;
    }
    check(bOk, "numbers that print longer, then a decimal", p->zErr);
    free(zDoc);
  }

  idemJsonFree(p);
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail!=0;
}

/* SPDX-License-Identifier: MIT */
/*
** anchor_idem.c -- idem's canonicalizer called straight from C, for
** test/bench/anchor.cpp (the simdjson anchor).  The extension is one
** translation unit whose functions are static: this file includes it and
** gives the canonicalizer one external name.
*/
#define SQLITE_CORE 1
#include "../../ext/idem.c"

static IdemJson *pAnchor;

/* The canonical text's length of z[0..n), or -1 on an error. */
int anchorCanonical(const char *z, int n){
  int nOut = -1;
  if( pAnchor==0 ) pAnchor = idemJsonNew();
  if( pAnchor && idemJsonCanonical(pAnchor, z, n)==SQLITE_OK ){
    idemJsonText(pAnchor, &nOut);
  }
  return nOut;
}

/* SPDX-License-Identifier: MIT */
/*
** fuzz_both.c -- both libFuzzer targets, fuzz_canonical.c and fuzz_key.c,
** in one program: make fuzz builds it once and links it under each
** target's name (build/fuzz/fuzz_canonical, build/fuzz/fuzz_key), and the
** name it is started by picks the target.
**
** Each target compiles all of idem into itself (one translation unit, so
** that its static C interface is called directly), and under libFuzzer,
** ASan and UBSan at -O2 that compile was most of make fuzz: some 30 s of
** CPU for each target, the same idem.c with the same flags twice.  Here
** idem.c is compiled once, with the same flags, and each target's code
** is its file's own, unchanged (its entry point and its fail() renamed
** here, so that the two live side by side).  A run of either name is the
** run of that target alone: the same code under test, instrumented the
** same way, the same checks, corpus and options; the other target's code
** is only never called.  Either file still builds alone.
*/
#include "../../ext/idem.c"

#define IDEM_FUZZ_BOTH 1

#define LLVMFuzzerTestOneInput fuzzCanonicalOne
#define fail fuzzCanonicalFail
#include "fuzz_canonical.c"
#undef LLVMFuzzerTestOneInput
#undef fail

#define LLVMFuzzerTestOneInput fuzzKeyOne
#define fail fuzzKeyFail
#include "fuzz_key.c"
#undef LLVMFuzzerTestOneInput
#undef fail

static int (*xFuzzOne)(const uint8_t*, size_t);

/* libFuzzer calls this once, before any input: the target is the name
** the program was started by. */
int LLVMFuzzerInitialize(int *pArgc, char ***pArgv){
  const char *zName = (*pArgv)[0];
  const char *zSlash = strrchr(zName, '/');
  (void)pArgc;
  if( zSlash ) zName = zSlash+1;
  if( strcmp(zName, "fuzz_canonical")==0 ){
    xFuzzOne = fuzzCanonicalOne;
  }else if( strcmp(zName, "fuzz_key")==0 ){
    xFuzzOne = fuzzKeyOne;
  }else{
    fprintf(stderr, "%s: start this program as fuzz_canonical or fuzz_key\n",
            zName);
    exit(2);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData){
  return xFuzzOne(aData, nData);
}

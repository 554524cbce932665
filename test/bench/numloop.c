/* SPDX-License-Identifier: MIT */
/*
** numloop.c -- the number code alone, two builds of it in one process.
**
** Built by test/bench/numloop.sh, which compiles ext/idem_number.c twice
** (this tree's and another's, NUMLOOP_SIDE 'a' and 'b', each file on its
** own so that their static functions do not meet) and this file once
** more with NUMLOOP_MAIN.  The main program reads number literals, one a
** line, calls the entry point the canonicalizer would pick for each
** (idemNumberDecimal() for a decimal with no exponent,
** idemNumberDecimalExp() for one with, idemNumberCanonical() else), checks
** that both builds print the same bytes, then times a pass over all of
** them with each build in turn (A B, then B A, ...), in the thread's CPU
** time, and prints the medians and the median of the ratios B/A.  With
** N = 1 it makes one pass with build B only (for cachegrind).
**
**   numloop FILE [RUNS]
*/
#if defined(NUMLOOP_SIDE)
#define IDEM_PRIVATE static
#include "idem_number.c"
#define NUMLOOP_CAT(a, b) a##_##b
#define NUMLOOP_NAME(s, f) NUMLOOP_CAT(s, f)
int NUMLOOP_NAME(NUMLOOP_SIDE, dec)(const char *z, int n, int i, char *o){
  return idemNumberDecimal(z, n, i, o);
}
int NUMLOOP_NAME(NUMLOOP_SIDE, decexp)(const char *z, int n, int i, int f,
                                       char *o){
  return idemNumberDecimalExp(z, n, i, f, o);
}
int NUMLOOP_NAME(NUMLOOP_SIDE, any)(const char *z, int n, int i, int f,
                                    char *o){
  return idemNumberCanonical(z, n, i, f, o);
}
#else
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int a_dec(const char*, int, int, char*);
int a_decexp(const char*, int, int, int, char*);
int a_any(const char*, int, int, int, char*);
int b_dec(const char*, int, int, char*);
int b_decexp(const char*, int, int, int, char*);
int b_any(const char*, int, int, int, char*);

typedef struct Lit { const char *z; int n, iInt, iFrac, kind; } Lit;
static Lit *aLit;
static int nLit;
static unsigned long sink;

static double cpuNow(void){
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec*1e9 + t.tv_nsec;
}

/* One literal through build b (0: A, 1: B). */
static int one(int b, const Lit *p, char *zOut){
  if( p->kind==1 ){
    return (b ? b_dec : a_dec)(p->z, p->n, p->iInt, zOut);
  }
  if( p->kind==2 ){
    return (b ? b_decexp : a_decexp)(p->z, p->n, p->iInt, p->iFrac, zOut);
  }
  return (b ? b_any : a_any)(p->z, p->n, p->iInt, p->iFrac, zOut);
}

/* ns a literal, a pass over all of them with build b. */
static double pass(int b){
  char zOut[128];
  double t0 = cpuNow();
  int i;
  for(i=0; i<nLit; i++) sink += (unsigned long)one(b, &aLit[i], zOut) + zOut[0];
  return (cpuNow() - t0)/nLit;
}

static int cmpDouble(const void *x, const void *y){
  double a = *(const double*)x, b = *(const double*)y;
  return a<b ? -1 : a>b;
}

int main(int argc, char **argv){
  int nRun = argc>2 ? atoi(argv[2]) : 41, i;
  char *zAll, *z;
  long nAll;
  double *aR, *aA, *aB;
  FILE *in = argc>1 ? fopen(argv[1], "rb") : 0;
  if( in==0 || nRun<1 ){
    fprintf(stderr, "usage: numloop FILE [RUNS]\n");
    return 2;
  }
  fseek(in, 0, SEEK_END);
  nAll = ftell(in);
  rewind(in);
  zAll = malloc((size_t)nAll + 1);
  aLit = malloc(sizeof(Lit)*((size_t)nAll/2 + 1));
  if( zAll==0 || aLit==0 || fread(zAll, 1, (size_t)nAll, in)!=(size_t)nAll ){
    return 2;
  }
  zAll[nAll] = 0;
  fclose(in);
  for(z=zAll; *z; ){
    char *e = strchr(z, '\n');
    Lit *p = &aLit[nLit];
    int j;
    if( e==0 ) e = z + strlen(z);
    if( e>z ){
      p->z = z;
      p->n = (int)(e - z);
      for(j=(z[0]=='-'); j<p->n && z[j]>='0' && z[j]<='9'; j++){}
      p->iInt = j;
      if( j<p->n && z[j]=='.' ){
        for(j++; j<p->n && z[j]>='0' && z[j]<='9'; j++){}
        p->kind = j==p->n ? 1 : 2;
      }else{
        p->kind = 0;
      }
      p->iFrac = j;
      nLit++;
    }
    z = *e ? e+1 : e;
  }
  if( nLit==0 ) return 2;
  if( nRun==1 ){
    printf("%s: %d literals, one pass with build B: %.2f ns\n",
           argv[1], nLit, pass(1));
    return 0;
  }
  for(i=0; i<nLit; i++){
    char o1[128], o2[128];
    int n1 = one(0, &aLit[i], o1), n2 = one(1, &aLit[i], o2);
    if( n1!=n2 || (n1>0 && memcmp(o1, o2, (size_t)n1)) ){
      printf("%s: the builds differ at %.*s\n", argv[1], aLit[i].n, aLit[i].z);
      return 1;
    }
  }
  aR = malloc(sizeof(double)*(size_t)nRun*3);
  if( aR==0 ) return 2;
  aA = aR + nRun;
  aB = aA + nRun;
  for(i=0; i<nRun; i++){
    if( i&1 ){
      aB[i] = pass(1);
      aA[i] = pass(0);
    }else{
      aA[i] = pass(0);
      aB[i] = pass(1);
    }
    aR[i] = aB[i]/aA[i];
  }
  qsort(aR, (size_t)nRun, sizeof(double), cmpDouble);
  qsort(aA, (size_t)nRun, sizeof(double), cmpDouble);
  qsort(aB, (size_t)nRun, sizeof(double), cmpDouble);
  printf("%s: %d literals, A %.2f ns, B %.2f ns a literal (medians), "
         "B/A %.3f (quartiles %.3f-%.3f)\n", argv[1], nLit, aA[nRun/2],
         aB[nRun/2], aR[nRun/2], aR[nRun/4], aR[3*nRun/4]);
  return 0;
}
#endif

/* SPDX-License-Identifier: MIT */
/*
** docgen.c -- realistic tool-call arguments for the benchmark, from a
** fixed seed (#included by bench.c).
**
** A document is the "arguments" JSON text of one tool call, as a model
** emits it: an object of 0.2 to 2 KB, members in no particular order,
** nested objects and arrays (line items, an address, filters, points),
** text in several scripts (accents, CJK, Hangul, emoji, some of it
** escaped as \uXXXX), some escapes (\n, \", \\, \/), and numbers of every
** kind a canonicalizer must print: small and large integers (beyond 2^53
** too), negative ones, prices, 17-digit doubles, exponents, "1.0" and
** "100.50".  Each document is written in one of three layouts: compact,
** Python's json.dumps() default (", " and ": "), or indented.
**
** The generator is a plain splitmix64 stream, so every run, and the
** Python side that reads the documents from the file bench writes, sees
** the same bytes.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stdarg.h>

typedef struct Doc Doc;
struct Doc {
  char *zWho;               /* "user-00042" or a name in another script */
  char *zConv;              /* "conv-1f3a..." */
  char *zTool;              /* "create_order", ... */
  char *zArgs;              /* the JSON text */
  int nArgs;
};

/* ---------------------------------------------------------------- random */
static uint64_t gSeed = 0x1dea5eedULL;
static uint64_t rnd64(void){
  uint64_t z = (gSeed += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z>>30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z>>27)) * 0x94d049bb133111ebULL;
  return z ^ (z>>31);
}
static int rnd(int n){ return (int)(rnd64() % (uint64_t)n); }
static double rndUnit(void){ return (double)(rnd64()>>11) * (1.0/9007199254740992.0); }

/* ---------------------------------------------------------------- buffer */
typedef struct Buf Buf;
struct Buf { char *z; int n, nAlloc; };
static void bufAdd(Buf *b, const char *z, int n){
  if( n<0 ) n = (int)strlen(z);
  if( b->n+n+1>b->nAlloc ){
    b->nAlloc = (b->nAlloc+n)*2 + 256;
    b->z = realloc(b->z, b->nAlloc);
    if( b->z==0 ){ fprintf(stderr, "out of memory\n"); exit(1); }
  }
  memcpy(b->z+b->n, z, n);
  b->n += n;
  b->z[b->n] = 0;
}
static void bufPrintf(Buf *b, const char *zFmt, ...){
  char z[128];
  va_list ap;
  va_start(ap, zFmt);
  vsnprintf(z, sizeof(z), zFmt, ap);
  va_end(ap);
  bufAdd(b, z, -1);
}

/* ---------------------------------------------------------------- words */
static const char *const azEn[] = {
  "the", "order", "customer", "please", "deliver", "before", "Friday",
  "meeting", "room", "budget", "invoice", "refund", "shipping", "address",
  "weekly", "report", "summary", "draft", "urgent", "follow", "up", "on",
  "ticket", "flight", "hotel", "booking", "confirm", "cancel", "quantity",
  "blue", "large", "gift", "wrap", "note", "call", "back", "tomorrow",
  "quarterly", "revenue", "forecast", "update", "status", "and", "with",
};
static const char *const azIntl[] = {
  "café", "größe", "niño", "façade", "Ærøskøbing", "crème brûlée", "Zürich",
  "São Paulo", "Kraków", "Dvořák", "Ελληνικά", "Москва", "naïve",
  "東京", "会議室", "予約", "北京", "上海", "注文", "请尽快发货", "ありがとう",
  "서울", "데이터", "회의", "🚀", "😀", "👍🏽", "🇯🇵", "🎉", "☕", "€", "…",
};
/* Escaped spellings, as some encoders (json.dumps' default) write them. */
static const char *const azEsc[] = {
  "caf\\u00e9", "\\u6771\\u4eac", "\\ud83d\\ude80", "line one\\nline two",
  "say \\\"hi\\\"", "C:\\\\Users\\\\ana", "a\\/b", "tab\\there",
  "\\u00fcber", "\\uc11c\\uc6b8",
};
static const char *const azKeys[] = {
  "query", "limit", "offset", "user_id", "items", "address", "filters",
  "sort", "locale", "amount", "currency", "metadata", "tags", "text",
  "coordinates", "options", "timestamp", "dry_run", "priority", "subject",
  "body", "recipients", "title", "description", "quantity", "price", "sku",
  "notes", "deadline", "attachments", "language", "timezone", "radius",
  "threshold", "points", "ids", "page", "include_archived", "reason",
  "callback_url", "temperature", "weight", "dimensions", "rating", "étiquette",
  "名前", "数量", "emoji_🎉", "Zeta", "_private", "aaa", "a1", "A",
};
#define NKEY ((int)(sizeof(azKeys)/sizeof(azKeys[0])))
static const char *const azTools[] = {
  "create_order", "search_flights", "send_email", "update_ticket",
  "book_meeting_room", "transfer_funds", "translate_text", "query_metrics",
  "post_message", "schedule_delivery",
};
#define N_ARRAY(a) ((int)(sizeof(a)/sizeof(a[0])))

/* --------------------------------------------------------------- layout */
typedef struct Gen Gen;
struct Gen {
  Buf b;
  int eLayout;              /* 0 compact, 1 ", " and ": ", 2 indented */
  int nTarget;              /* size to reach, in bytes */
};
static void genNl(Gen *g, int depth){
  if( g->eLayout==2 ){
    int i;
    bufAdd(&g->b, "\n", 1);
    for(i=0; i<depth; i++) bufAdd(&g->b, "  ", 2);
  }
}
static void genComma(Gen *g, int depth){
  bufAdd(&g->b, ",", 1);
  if( g->eLayout==1 ) bufAdd(&g->b, " ", 1);
  genNl(g, depth);
}
static void genColon(Gen *g){
  bufAdd(&g->b, g->eLayout ? ": " : ":", g->eLayout ? 2 : 1);
}

static void genString(Gen *g, int nWord){
  int i;
  bufAdd(&g->b, "\"", 1);
  for(i=0; i<nWord; i++){
    int k = rnd(100);
    if( i ) bufAdd(&g->b, " ", 1);
    if( k<62 )      bufAdd(&g->b, azEn[rnd(N_ARRAY(azEn))], -1);
    else if( k<92 ) bufAdd(&g->b, azIntl[rnd(N_ARRAY(azIntl))], -1);
    else            bufAdd(&g->b, azEsc[rnd(N_ARRAY(azEsc))], -1);
  }
  bufAdd(&g->b, "\"", 1);
}

static void genNumber(Gen *g){
  int k = rnd(100);
  if( k<25 ){                                   /* small integer */
    bufPrintf(&g->b, "%d", rnd(1000));
  }else if( k<35 ){                             /* id or Unix time (ms) */
    bufPrintf(&g->b, "%lld", 1700000000000LL + (long long)(rnd64()%100000000000ULL));
  }else if( k<40 ){                             /* negative */
    bufPrintf(&g->b, "-%d", 1+rnd(100000));
  }else if( k<58 ){                             /* price */
    bufPrintf(&g->b, "%d.%02d", rnd(5000), rnd(100));
  }else if( k<76 ){                             /* 17 significant digits */
    bufPrintf(&g->b, "%.17g", (rndUnit()-0.25) * (rnd(2) ? 1.0 : 1000.0));
  }else if( k<84 ){                             /* exponents */
    /* No subnormals: no tool call carries one, and each costs the exact
    ** (big-integer) path of idem_number.c, ~50 times a common number. */
    static const char *const az[] = { "1e21", "6.02214076e23", "1.5E-7",
      "2e+10", "6.674e-11", "1.7976931348623157e308", "3E2", "1e-6",
      "12345678901234567890e-10", "0.000001", "2.5e-3", "1E400" };
    /* "1E400" would overflow a double: an error for idem_canonical (and
    ** not what a model emits), so it is never picked. */
    bufAdd(&g->b, az[rnd(N_ARRAY(az)-1)], -1);
  }else if( k<92 ){                             /* non-canonical spellings */
    static const char *const az[] = { "1.0", "100.50", "-0", "0.10",
      "2.500", "1E2", "1.0e0", "-0.0" };
    bufAdd(&g->b, az[rnd(N_ARRAY(az))], -1);
  }else if( k<96 ){                             /* beyond 2^53 */
    bufPrintf(&g->b, "%llu", 9007199254740993ULL + (rnd64()%1000000000000ULL)*2);
  }else{                                        /* short decimal double */
    bufPrintf(&g->b, "%g", rndUnit()*100.0);
  }
}

static void genValue(Gen *g, int depth);

/* An object of n members, names picked without repetition, in a random
** order (sorted now and then, as some encoders do). */
static void genObject(Gen *g, int depth, int n){
  int aIdx[NKEY];
  int i;
  if( n>NKEY ) n = NKEY;
  for(i=0; i<NKEY; i++) aIdx[i] = i;
  for(i=0; i<n; i++){
    int j = i + rnd(NKEY-i);
    int t = aIdx[i]; aIdx[i] = aIdx[j]; aIdx[j] = t;
  }
  bufAdd(&g->b, "{", 1);
  genNl(g, depth+1);
  for(i=0; i<n; i++){
    if( i ) genComma(g, depth+1);
    bufAdd(&g->b, "\"", 1);
    bufAdd(&g->b, azKeys[aIdx[i]], -1);
    bufAdd(&g->b, "\"", 1);
    genColon(g);
    genValue(g, depth+1);
  }
  genNl(g, depth);
  bufAdd(&g->b, "}", 1);
}

static void genArray(Gen *g, int depth, int n){
  int i;
  int eKind = rnd(3);           /* one kind of element per array, mostly */
  bufAdd(&g->b, "[", 1);
  genNl(g, depth+1);
  for(i=0; i<n; i++){
    if( i ) genComma(g, depth+1);
    if( eKind==0 && depth<4 )   genObject(g, depth+1, 2+rnd(4));
    else if( eKind==1 )         genNumber(g);
    else if( rnd(4)==0 )        genValue(g, depth+1);
    else                        genString(g, 1+rnd(3));
  }
  genNl(g, depth);
  bufAdd(&g->b, "]", 1);
}

static void genValue(Gen *g, int depth){
  int k = rnd(100);
  if( depth>=4 ) k = k % 60;                  /* no deeper containers */
  if( k<30 )      genString(g, 1+rnd(rnd(4)==0 ? 24 : 4));
  else if( k<52 ) genNumber(g);
  else if( k<56 ) bufAdd(&g->b, rnd(2) ? "true" : "false", -1);
  else if( k<60 ) bufAdd(&g->b, "null", 4);
  else if( k<80 ) genObject(g, depth, 1+rnd(5));
  else            genArray(g, depth, 1+rnd(5));
}

/* One document: members are added to the top-level object until it
** reaches its target size; one outside 200..2048 bytes is drawn again. */
static void genDoc(Doc *pDoc, int iDoc){
  Gen g;
  char z[64];
  for(;;){
    int nMember = 0;
    int aUsed[NKEY];
    memset(&g, 0, sizeof(g));
    memset(aUsed, 0, sizeof(aUsed));
    g.eLayout = rnd(10)<5 ? 0 : (rnd(4)==0 ? 2 : 1);
    g.nTarget = 200 + rnd(1800);
    bufAdd(&g.b, "{", 1);
    genNl(&g, 1);
    while( g.b.n < g.nTarget-40 && nMember<NKEY ){
      int k = rnd(NKEY);
      if( aUsed[k] ) continue;
      aUsed[k] = 1;
      if( nMember++ ) genComma(&g, 1);
      bufAdd(&g.b, "\"", 1);
      bufAdd(&g.b, azKeys[k], -1);
      bufAdd(&g.b, "\"", 1);
      genColon(&g);
      genValue(&g, 1);
    }
    genNl(&g, 0);
    bufAdd(&g.b, "}", 1);
    if( g.b.n>=200 && g.b.n<=2048 ) break;
    free(g.b.z);
  }
  pDoc->zArgs = g.b.z;
  pDoc->nArgs = g.b.n;
  if( rnd(10)==0 ){
    static const char *const az[] = { "José", "Zoë", "李明", "さくら", "민수" };
    snprintf(z, sizeof(z), "%s-%04d", az[rnd(5)], rnd(10000));
  }else{
    snprintf(z, sizeof(z), "user-%05d", rnd(50000));
  }
  pDoc->zWho = strdup(z);
  snprintf(z, sizeof(z), "conv-%016llx-%d", (unsigned long long)rnd64(), iDoc);
  pDoc->zConv = strdup(z);
  pDoc->zTool = strdup(azTools[rnd(N_ARRAY(azTools))]);
}

static Doc *genDocs(int nDoc){
  Doc *a = calloc(nDoc, sizeof(Doc));
  int i;
  gSeed = 0x1dea5eedULL;
  for(i=0; i<nDoc; i++) genDoc(&a[i], i);
  return a;
}

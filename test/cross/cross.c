/* SPDX-License-Identifier: MIT */
/*
** cross.c -- the same keys and the same behaviour on every architecture
** (make test-cross; README "Portability").
**
**   cross -d DATADIR [-w OUT] [-r REF] [-n NDOC] [-l LABEL] [-x DB]
**
** A self-contained program: SQLite's amalgamation and idem (ext/idem.c,
** built with -DSQLITE_CORE) are linked in statically, so the one binary
** runs under qemu-user for another architecture.  It checks, through SQL:
**
**   keys      every golden key of DATADIR/keys.txt (idem_key and
**             idem_canonical of its args, each part bound as test/key.test
**             binds it; made by test/data/gen_keys.py from a Python frame
**             hashed by xxhsum)
**   jcs       the RFC 8785 vectors DATADIR/jcs/input/NAME.json against
**             DATADIR/jcs/output/NAME.json, byte for byte (skipped, saying
**             so, if the directory is missing)
**   numbers   every literal of DATADIR/numbers.txt (made from Node's
**             String(Number(x)))
**   docs      NDOC (10000) documents from a seeded generator (valid
**             ones of every shape, and mutated ones that must fail or
**             change the same way everywhere), each with idem_canonical()
**             and idem_key() over text, integer, real and blob parts.
**             -w writes the results to a file (the x86-64 native run
**             writes the reference); -r compares with a reference exactly:
**             the canonical text or error message, and the key.  A result
**             file holds, for each document, a line "I FNV64-OF-INPUT LEN"
**             (FNV64 in hex) and LEN bytes, "K <key>\n<canonical text>" or
**             "E <error message>", and a newline
**   smoke     claim, replay, duplicate, failure and re-claim through the
**             idem virtual table, in a file database reopened in between
**   exchange  with -x DB: without -r, 200 done calls are written to DB;
**             with -r, DB (written on the reference machine) is opened
**             and each call is found by its key, replayed and refused as a
**             duplicate, in a transaction that is rolled back
**
** It prints what it runs on (architecture, byte order, char signedness,
** long width, scan path, SQLite version), a line per area, and ends with
** "N passed, N failed"; the exit status is 1 if anything failed.
*/
/* 64-bit inode numbers and offsets on 32-bit targets too (readdir() of
** the host's file system under qemu fails with EOVERFLOW otherwise). */
#define _FILE_OFFSET_BITS 64
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stdarg.h>
#include <limits.h>
#include <dirent.h>
#include <unistd.h>
#include <time.h>
#include "sqlite3.h"
#include "../../include/idem.h"

/* ------------------------------------------------------------ reporting */
static int nPass = 0, nFail = 0;
static int nShown = 0;                 /* failures printed in this area */

static void fail(const char *zArea, const char *zFmt, ...){
  nFail++;
  if( nShown++<5 ){
    va_list ap;
    printf("  FAIL %s: ", zArea);
    va_start(ap, zFmt);
    vprintf(zFmt, ap);
    va_end(ap);
    printf("\n");
  }
}
static void pass(void){ nPass++; }

static const char *archName(void){
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__s390x__)
  return "s390x";
#elif defined(__i386__)
  return "i386";
#elif defined(__arm__)
  return "arm";
#elif defined(__powerpc64__)
  return "ppc64";
#elif defined(__riscv)
  return "riscv";
#else
  return "unknown";
#endif
}

/* The string scan idem_canonical.c selects, from the same predefined
** macros it tests. */
static const char *scanPath(void){
#if defined(IDEM_JSON_PORTABLE)
  return "bytewise (-DIDEM_JSON_PORTABLE)";
#elif defined(__GNUC__) && defined(__BYTE_ORDER__) \
   && __BYTE_ORDER__==__ORDER_LITTLE_ENDIAN__ && defined(__SSE2__)
  return "SSE2 + 8-byte words";
#elif defined(__GNUC__) && defined(__BYTE_ORDER__) \
   && __BYTE_ORDER__==__ORDER_LITTLE_ENDIAN__
  return "8-byte words";
#else
  return "bytewise (not little-endian GNU C)";
#endif
}

/* ------------------------------------------------------------ utilities */
static char *readFile(const char *zPath, long *pn){
  FILE *f = fopen(zPath, "rb");
  char *z;
  long n;
  if( f==0 ) return 0;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  z = malloc(n+1);
  if( z==0 || (long)fread(z, 1, n, f)!=n ){ fclose(f); free(z); return 0; }
  z[n] = 0;
  fclose(f);
  *pn = n;
  return z;
}

static int hexVal(int c){
  if( c>='0' && c<='9' ) return c-'0';
  if( c>='a' && c<='f' ) return c-'a'+10;
  if( c>='A' && c<='F' ) return c-'A'+10;
  return -1;
}

/* Decode n hex digits of z into a malloc'd buffer; *pn gets the length. */
static unsigned char *unhex(const char *z, int n, int *pn){
  unsigned char *a = malloc(n/2+1);
  int i;
  for(i=0; i+1<n; i+=2){
    a[i/2] = (unsigned char)(hexVal(z[i])<<4 | hexVal(z[i+1]));
  }
  a[n/2] = 0;
  *pn = n/2;
  return a;
}

/* 64-bit FNV-1a, to say in one number that two runs saw the same bytes. */
static uint64_t fnv(uint64_t h, const void *p, size_t n){
  const unsigned char *a = p;
  size_t i;
  for(i=0; i<n; i++){ h ^= a[i]; h *= 0x100000001b3ULL; }
  return h;
}
#define FNV_INIT 0xcbf29ce484222325ULL

/* Split line z at tabs into at most nMax fields (in place). */
static int splitTabs(char *z, char **az, int nMax){
  int n = 0;
  az[n++] = z;
  while( *z && n<nMax ){
    if( *z=='\t' ){ *z = 0; az[n++] = z+1; }
    z++;
  }
  return n;
}

/* ------------------------------------------------------------ keys.txt */
/* Bind one TYPE:HEX part of keys.txt as test/key.test does: text and blob
** as their bytes, an integer or a real as a client binds a number (an
** int64 or a double, from its text).  A field without a type is JSON text
** (the args).  The bytes are copied (SQLITE_TRANSIENT). */
static void bindPartHex(sqlite3_stmt *p, int iCol, const char *z){
  const char *zHex = strchr(z, ':');
  char type = zHex ? z[0] : 't';
  unsigned char *a;
  int n;
  zHex = zHex ? zHex+1 : z;
  a = unhex(zHex, (int)strlen(zHex), &n);
  switch( type ){
    case 'b': sqlite3_bind_blob(p, iCol, a, n, SQLITE_TRANSIENT); break;
    case 'i': sqlite3_bind_int64(p, iCol, strtoll((char*)a, 0, 10)); break;
    case 'r': sqlite3_bind_double(p, iCol, strtod((char*)a, 0)); break;
    default:  sqlite3_bind_text(p, iCol, (char*)a, n, SQLITE_TRANSIENT); break;
  }
  free(a);
}

/* Each line: who conv tool args canonical(args) key, TYPE:HEX or HEX. */
static void testKeys(sqlite3 *db, const char *zDir){
  char *zPath = sqlite3_mprintf("%s/keys.txt", zDir);
  FILE *f = fopen(zPath, "rb");
  static char zLine[65536];
  sqlite3_stmt *p = 0;
  int n = 0, nFail0 = nFail;
  nShown = 0;
  if( f==0 ){
    fail("keys", "cannot open %s", zPath);
    sqlite3_free(zPath);
    return;
  }
  if( sqlite3_prepare_v2(db, "SELECT idem_key(?1, ?2, ?3, ?4),"
                             " lower(hex(idem_canonical(?4)))", -1, &p, 0) ){
    fail("keys", "prepare: %s", sqlite3_errmsg(db));
    goto done;
  }
  while( fgets(zLine, sizeof(zLine), f) ){
    char *az[6];
    const char *zKey = 0, *zCanon = 0;
    int i;
    size_t len = strlen(zLine);
    while( len>0 && (zLine[len-1]=='\n' || zLine[len-1]=='\r') ){
      zLine[--len] = 0;
    }
    if( len==0 ) continue;
    if( splitTabs(zLine, az, 6)!=6 ){
      fail("keys", "line %d: not six fields", n+1);
      continue;
    }
    n++;
    sqlite3_reset(p);
    for(i=0; i<4; i++) bindPartHex(p, i+1, az[i]);
    if( sqlite3_step(p)==SQLITE_ROW ){
      zKey = (const char*)sqlite3_column_text(p, 0);
      zCanon = (const char*)sqlite3_column_text(p, 1);
    }else{
      zKey = sqlite3_errmsg(db);
    }
    if( zCanon && strcmp(zKey, az[5])==0 ){
      pass();
    }else{
      fail("keys", "line %d: key %s, want %s", n, zKey, az[5]);
    }
    if( zCanon && strcmp(zCanon, az[4])==0 ){
      pass();
    }else{
      fail("keys", "line %d: canonical %s, want %s", n,
           zCanon ? zCanon : zKey, az[4]);
    }
  }
  if( n<20 ) fail("keys", "only %d vectors in %s", n, zPath);
  printf("keys:    %d golden keys and canonical forms, %d failed\n",
         n, nFail-nFail0);
 done:
  sqlite3_finalize(p);
  fclose(f);
  sqlite3_free(zPath);
}

/* ------------------------------------------------------------ jcs */
/* idem_canonical(text) through a prepared statement: 1 and the result in
** *pz and *pn (valid until the next call), or 0 and the error in *pz. */
static sqlite3_stmt *pCanon = 0;
static int canonical(
  sqlite3 *db,
  const char *z, int n,       /* the JSON text */
  const char **pz, int *pn    /* OUT: the result or the error */
){
  int rc;
  sqlite3_reset(pCanon);
  sqlite3_bind_text(pCanon, 1, z, n, SQLITE_STATIC);
  rc = sqlite3_step(pCanon);
  if( rc==SQLITE_ROW ){
    *pz = (const char*)sqlite3_column_text(pCanon, 0);
    *pn = sqlite3_column_bytes(pCanon, 0);
    return 1;
  }
  *pz = sqlite3_errmsg(db);
  *pn = (int)strlen(*pz);
  return 0;
}

static int cmpStr(const void *a, const void *b){
  return strcmp(*(char*const*)a, *(char*const*)b);
}

static void testJcs(sqlite3 *db, const char *zDir){
  char *zIn = sqlite3_mprintf("%s/jcs/input", zDir);
  DIR *d = opendir(zIn);
  struct dirent *e;
  char *azName[256];
  int nName = 0, i, nFail0 = nFail;
  nShown = 0;
  if( d==0 ){
    printf("jcs:     SKIPPED: no directory %s (the RFC 8785 vectors)\n", zIn);
    sqlite3_free(zIn);
    return;
  }
  while( (e = readdir(d))!=0 && nName<256 ){
    size_t n = strlen(e->d_name);
    if( n>5 && strcmp(e->d_name+n-5, ".json")==0 ){
      azName[nName++] = sqlite3_mprintf("%s", e->d_name);
    }
  }
  closedir(d);
  qsort(azName, nName, sizeof(azName[0]), cmpStr);
  for(i=0; i<nName; i++){
    char *zA = sqlite3_mprintf("%s/jcs/input/%s", zDir, azName[i]);
    char *zB = sqlite3_mprintf("%s/jcs/output/%s", zDir, azName[i]);
    long nA = 0, nB = 0;
    char *a = readFile(zA, &nA), *b = readFile(zB, &nB);
    const char *z;
    int n;
    if( a==0 || b==0 ){
      fail("jcs", "%s: cannot read input or output", azName[i]);
    }else if( !canonical(db, a, (int)nA, &z, &n) ){
      fail("jcs", "%s: error %s", azName[i], z);
    }else if( n!=nB || memcmp(z, b, n)!=0 ){
      fail("jcs", "%s: got %.*s", azName[i], n, z);
    }else{
      pass();
    }
    free(a); free(b);
    sqlite3_free(zA); sqlite3_free(zB); sqlite3_free(azName[i]);
  }
  if( nName<6 ) fail("jcs", "only %d vectors in %s", nName, zIn);
  printf("jcs:     %d RFC 8785 vectors, %d failed\n", nName, nFail-nFail0);
  sqlite3_free(zIn);
}

/* ------------------------------------------------------------ numbers */
static void testNumbers(sqlite3 *db, const char *zDir){
  char *zPath = sqlite3_mprintf("%s/numbers.txt", zDir);
  FILE *f = fopen(zPath, "rb");
  static char zLine[4096];
  int n = 0, nFail0 = nFail;
  nShown = 0;
  if( f==0 ){
    fail("numbers", "cannot open %s", zPath);
    sqlite3_free(zPath);
    return;
  }
  while( fgets(zLine, sizeof(zLine), f) ){
    char *az[2];
    const char *z;
    int nz;
    size_t len = strlen(zLine);
    while( len>0 && (zLine[len-1]=='\n' || zLine[len-1]=='\r') ){
      zLine[--len] = 0;
    }
    if( len==0 ) continue;
    if( splitTabs(zLine, az, 2)!=2 ){
      fail("numbers", "line %d: not two fields", n+1);
      continue;
    }
    n++;
    if( !canonical(db, az[0], -1, &z, &nz) ){
      if( strcmp(az[1], "ERROR")==0 && strstr(z, "number overflows a double") ){
        pass();
      }else{
        fail("numbers", "%s: error %s, want %s", az[0], z, az[1]);
      }
    }else if( strcmp(z, az[1])==0 ){
      pass();
    }else{
      fail("numbers", "%s: got %s, want %s", az[0], z, az[1]);
    }
  }
  fclose(f);
  if( n<100000 ) fail("numbers", "only %d vectors in %s", n, zPath);
  printf("numbers: %d literals, %d failed\n", n, nFail-nFail0);
  sqlite3_free(zPath);
}

/* ------------------------------------------------------------ generator */
/* splitmix64: the same stream on every architecture (only 64-bit unsigned
** arithmetic; no floating point, no printf of doubles, no char arithmetic
** whose sign could differ). */
static uint64_t gState;
static uint64_t rnd64(void){
  uint64_t z = (gState += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z>>30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z>>27)) * 0x94d049bb133111ebULL;
  return z ^ (z>>31);
}
static unsigned rnd(unsigned n){ return (unsigned)(rnd64() % n); }

typedef struct Buf Buf;
struct Buf { unsigned char *z; size_t n, nAlloc; };
static void bufAdd(Buf *b, const void *z, size_t n){
  if( b->n+n+1>b->nAlloc ){
    b->nAlloc = (b->nAlloc+n)*2 + 256;
    b->z = realloc(b->z, b->nAlloc);
    if( b->z==0 ){ fprintf(stderr, "out of memory\n"); exit(2); }
  }
  memcpy(b->z+b->n, z, n);
  b->n += n;
  b->z[b->n] = 0;
}
static void bufStr(Buf *b, const char *z){ bufAdd(b, z, strlen(z)); }
static void bufByte(Buf *b, unsigned c){
  unsigned char x = (unsigned char)c;
  bufAdd(b, &x, 1);
}

/* The UTF-8 of code point c. */
static void bufUtf8(Buf *b, unsigned c){
  if( c<0x80 ){
    bufByte(b, c);
  }else if( c<0x800 ){
    bufByte(b, 0xc0 | (c>>6));
    bufByte(b, 0x80 | (c & 0x3f));
  }else if( c<0x10000 ){
    bufByte(b, 0xe0 | (c>>12));
    bufByte(b, 0x80 | ((c>>6) & 0x3f));
    bufByte(b, 0x80 | (c & 0x3f));
  }else{
    bufByte(b, 0xf0 | (c>>18));
    bufByte(b, 0x80 | ((c>>12) & 0x3f));
    bufByte(b, 0x80 | ((c>>6) & 0x3f));
    bufByte(b, 0x80 | (c & 0x3f));
  }
}
static void bufU4(Buf *b, unsigned c){
  static const char aHex[] = "0123456789abcdef";
  char z[6];
  z[0] = '\\'; z[1] = 'u';
  z[2] = aHex[(c>>12)&15]; z[3] = aHex[(c>>8)&15];
  z[4] = aHex[(c>>4)&15];  z[5] = aHex[c&15];
  bufAdd(b, z, 6);
}

/* A code point from one of the ranges that matter to the scan and the
** UTF-16 sort: ASCII, 2-byte, 3-byte (CJK, and U+E000..U+FFFF which sorts
** after the astral planes), 4-byte (emoji, the top plane). */
static unsigned rndCodePoint(void){
  switch( rnd(8) ){
    case 0: return 0x20 + rnd(0x5f);
    case 1: return 0x80 + rnd(0x780);
    case 2: return 0x800 + rnd(0xd000-0x800);
    case 3: return 0xe000 + rnd(0x2000);
    case 4: return 0xf900 + rnd(0x700);
    case 5: return 0x1f300 + rnd(0x300);
    case 6: return 0x10000 + rnd(0x100000);
    default: return 0x4e00 + rnd(0x100);
  }
}

/* The inside of a string: runs of plain ASCII of lengths around the 8 and
** 16-byte blocks, runs of one multi-byte length (the SIMD UTF-8 path),
** and escapes of every kind. */
static void genStringBody(Buf *b, int nMax){
  int nPiece = (int)rnd(nMax+1), i, j;
  for(i=0; i<nPiece; i++){
    switch( rnd(7) ){
      case 0: case 1: {
        int n = (int)rnd(rnd(2) ? 20 : 40);
        for(j=0; j<n; j++) bufByte(b, 'a' + rnd(26) - (rnd(4)==0 ? 32 : 0));
        break;
      }
      case 2: {
        unsigned base = rndCodePoint();
        int n = 1 + (int)rnd(12);
        for(j=0; j<n; j++){
          unsigned c = base + rnd(16);
          if( c>=0xd800 && c<0xe000 ) c = 0x4e00;
          if( c<0x20 || c=='"' || c=='\\' ) c = 'x';
          bufUtf8(b, c);
        }
        break;
      }
      case 3: {
        static const char *az[] = {
          "\\n", "\\t", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r"
        };
        bufStr(b, az[rnd(8)]);
        break;
      }
      case 4: {
        unsigned c;
        switch( rnd(5) ){
          case 0: c = rnd(0x20); break;
          case 1: c = 0x7f + rnd(0x80); break;
          case 2: c = 0xe000 + rnd(0x2000); break;
          case 3: c = 0x20 + rnd(0x60); break;
          default: c = rndCodePoint(); break;
        }
        if( c>=0x10000 ){
          c -= 0x10000;
          bufU4(b, 0xd800 + (c>>10));
          bufU4(b, 0xdc00 + (c & 0x3ff));
        }else if( c>=0xd800 && c<0xe000 ){
          bufU4(b, 0xe000);
        }else{
          bufU4(b, c);
        }
        break;
      }
      case 5:
        bufUtf8(b, rndCodePoint());
        break;
      default:
        bufByte(b, ' ');
        break;
    }
  }
}

static void genDigits(Buf *b, int n, int bLead){
  int i;
  for(i=0; i<n; i++) bufByte(b, '0' + (i==0 && bLead ? 1+rnd(9) : rnd(10)));
}

/* Number text of every kind, from digits only (no printf of a double). */
static void genNumber(Buf *b){
  if( rnd(2) ) bufByte(b, '-');
  switch( rnd(9) ){
    case 0: bufByte(b, '0'); break;
    case 1: genDigits(b, 1+rnd(6), 1); break;                 /* small int */
    case 2: genDigits(b, 14+rnd(12), 1); break;               /* near 2^53 */
    case 3:                                                   /* > 2^53 */
      bufStr(b, rnd(2) ? "9007199254740993" : "18446744073709551616");
      break;
    case 4:                                                   /* price */
      genDigits(b, 1+rnd(5), 1); bufByte(b, '.'); genDigits(b, 1+rnd(3), 0);
      break;
    case 5:                                                   /* 17 digits */
      bufStr(b, "0."); genDigits(b, 17, 0);
      break;
    case 6:                                                   /* exponent */
      genDigits(b, 1, 1); bufByte(b, '.'); genDigits(b, 1+rnd(17), 0);
      bufByte(b, rnd(2) ? 'e' : 'E');
      if( rnd(3)==0 ) bufByte(b, rnd(2) ? '+' : '-');
      genDigits(b, rnd(8) ? 1+rnd(2) : 3, 0);   /* 1e999 overflows */
      break;
    case 7:                                                   /* tiny */
      bufStr(b, "0.000"); genDigits(b, rnd(4), 0); genDigits(b, 1+rnd(16), 1);
      break;
    default:                                                  /* x.0, 1e21 */
      genDigits(b, 1+rnd(22), 1); bufStr(b, rnd(2) ? ".0" : ".50");
      break;
  }
}

/* Names: a few short ones; ones that share their first 7, 8 or 9 bytes
** (the 8-byte sort key ties); non-ASCII ones around U+E000 and astral
** (the UTF-16 order fix-up); escaped ones. */
static void genName(Buf *b){
  static const char *azPre[] = { "a", "id", "name", "abcdefg", "abcdefgh",
                                 "abcdefghi", "item_no", "x" };
  bufByte(b, '"');
  switch( rnd(6) ){
    case 0: case 1:
      bufStr(b, azPre[rnd(8)]);
      if( rnd(2) ) bufByte(b, 'a' + rnd(4));
      break;
    case 2:
      bufStr(b, azPre[3 + rnd(3)]);
      bufUtf8(b, rnd(2) ? 0xe000 + rnd(0x1000) : 0x1f600 + rnd(16));
      break;
    case 3:
      bufStr(b, azPre[rnd(8)]);
      bufU4(b, rnd(2) ? 0xe9 : 0xfb01);
      break;
    case 4:
      bufUtf8(b, rndCodePoint());
      if( rnd(2) ) bufUtf8(b, rndCodePoint());
      break;
    default:
      genStringBody(b, 3);
      break;
  }
  bufByte(b, '"');
}

/* Whitespace of the document's layout: 0 compact, 1 ", " and ": ",
** 2 indented with newlines (runs of spaces longer than a word), 3 odd. */
static void genWs(Buf *b, int layout, int depth, int bNl){
  int i;
  if( layout==1 && !bNl ){ bufByte(b, ' '); return; }
  if( layout==2 && bNl ){
    bufByte(b, '\n');
    for(i=0; i<depth*4; i++) bufByte(b, ' ');
    return;
  }
  if( layout==3 ){
    static const char *az[] = {
      "", " ", "\t", "\r\n", "  \n\t ", "          "
    };
    bufStr(b, az[rnd(6)]);
  }
}

static void genValue(Buf *b, int layout, int depth, int nWide);
static void genContainer(Buf *b, int layout, int depth, int nWide, int isObj){
  int n = (int)rnd(depth>4 ? 2 : (unsigned)nWide+1), i;
  size_t aName[64][2];       /* offset and length of each name so far */
  bufByte(b, isObj ? '{' : '[');
  for(i=0; i<n; i++){
    if( i ){ bufByte(b, ','); genWs(b, layout, depth+1, layout!=1); }
    else genWs(b, layout, depth+1, 1);
    if( isObj ){
      /* A name not spelled like an earlier one (a name spelled otherwise
      ** with the same value, as "\u00e9" and the UTF-8 e-acute, is a
      ** duplicate that must fail, and is left in). */
      int j, nTry = 0;
      size_t iStart = b->n;
      do{
        b->n = iStart;
        genName(b);
        for(j=0; j<i && j<64; j++){
          if( aName[j][1]==b->n-iStart
           && memcmp(b->z+aName[j][0], b->z+iStart, b->n-iStart)==0 ) break;
        }
      }while( j<i && j<64 && ++nTry<20 );
      if( i<64 ){ aName[i][0] = iStart; aName[i][1] = b->n-iStart; }
      genWs(b, layout, depth+1, 0);
      bufByte(b, ':');
      genWs(b, layout, depth+1, 0);
    }
    genValue(b, layout, depth+1, nWide>8 ? 8 : nWide);
  }
  if( n ) genWs(b, layout, depth, 1);
  bufByte(b, isObj ? '}' : ']');
}
static void genValue(Buf *b, int layout, int depth, int nWide){
  switch( rnd(depth>6 ? 4 : 7) ){
    case 0: genNumber(b); break;
    case 1: bufByte(b, '"'); genStringBody(b, 8); bufByte(b, '"'); break;
    case 2: bufStr(b, rnd(3)==0 ? "null" : rnd(2) ? "true" : "false"); break;
    case 3: bufByte(b, '"'); genStringBody(b, 2); bufByte(b, '"'); break;
    case 4: case 5: genContainer(b, layout, depth, nWide, 1); break;
    default: genContainer(b, layout, depth, nWide, 0); break;
  }
}

/* Document i: mostly an object; every 37th a wide one (a frame over the
** 2048 bytes idemKeyHash() hashes in one shot); every 4th a mutated copy
** of its valid self (one byte replaced, or cut short). */
static void genDoc(Buf *b, int i){
  int layout = (int)rnd(4);
  b->n = 0;
  if( i%37==0 ){
    genContainer(b, layout, 0, 60, rnd(2));
  }else if( rnd(8)==0 ){
    genValue(b, layout, 0, 4);
  }else{
    genContainer(b, layout, 0, 8, 1);
  }
  if( i%4==3 && b->n>0 ){
    static const unsigned char aBad[] = {
      '"', '\\', '}', ']', ',', ':', '0', ' ', 'e', '-', 0x01, 0x7f,
      0x80, 0xbf, 0xc0, 0xc2, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff
    };
    size_t k = (size_t)(rnd64() % b->n);
    if( rnd(5)==0 ){
      b->n = k;
      b->z[k] = 0;
    }else{
      b->z[k] = aBad[rnd(sizeof(aBad))];
    }
  }
}

/* The who/conv/tool parts of document i: text in several scripts, an
** integer, a real, a blob, or an empty text. */
static void bindPart(sqlite3_stmt *p, int iCol, Buf *b){
  static const char *azText[] = {
    "alice", "user-00042", "\xe7\x8e\x8b\xe5\xb0\x8f", "z\xc3\xbcrich",
    "\xf0\x9f\x98\x80", "conv-7", "send_email", "", "a:b"
  };
  static const double aReal[] = { 1.5, -0.25, 0.1, 1e300, 123.456, 2.5e-8,
    -1e-300, 4503599627370497.0 };
  switch( rnd(6) ){
    case 0: case 1: case 2:
      sqlite3_bind_text(p, iCol, azText[rnd(9)], -1, SQLITE_STATIC);
      break;
    case 3: {
      sqlite3_int64 v = (sqlite3_int64)(rnd64() >> rnd(64));
      if( rnd(2) ) v = -v;
      sqlite3_bind_int64(p, iCol, v);
      break;
    }
    case 4:
      sqlite3_bind_double(p, iCol, aReal[rnd(8)]);
      break;
    default: {
      int n = (int)rnd(20), j;
      b->n = 0;
      for(j=0; j<n; j++) bufByte(b, rnd(256));
      sqlite3_bind_blob(p, iCol, b->z, n, SQLITE_TRANSIENT);
      break;
    }
  }
}

/*
** The documents.  Each result record is: a line "i FNV-of-input LEN\n",
** then LEN bytes: "K <key>\n<canonical>" or "E <error message>".  With
** zWrite the records go to that file; with zRead each is compared with the
** next record of that file.
*/
static void testDocs(
  sqlite3 *db,
  int nDoc,
  const char *zWrite,         /* write the results here, or 0 */
  const char *zRead           /* compare with this reference, or 0 */
){
  sqlite3_stmt *p = 0;
  FILE *fw = 0, *fr = 0;
  Buf doc = {0,0,0}, rec = {0,0,0}, tmp = {0,0,0}, ref = {0,0,0};
  uint64_t hAll = FNV_INIT;
  int i, nErr = 0, nWide = 0, nFail0 = nFail;
  nShown = 0;
  if( sqlite3_prepare_v2(db,
        "SELECT idem_key(?1, ?2, ?3, ?4), idem_canonical(?4)", -1, &p, 0) ){
    fail("docs", "prepare: %s", sqlite3_errmsg(db));
    return;
  }
  if( zWrite && (fw = fopen(zWrite, "wb"))==0 ){
    fail("docs", "cannot write %s", zWrite);
    goto done;
  }
  if( zRead && (fr = fopen(zRead, "rb"))==0 ){
    fail("docs", "cannot read the reference %s (run the native build first)",
         zRead);
    goto done;
  }
  gState = 0x1dea5eed0c0ffeeULL;
  for(i=0; i<nDoc; i++){
    uint64_t hIn;
    char zHead[128];
    int rc;
    genDoc(&doc, i);
    hIn = fnv(FNV_INIT, doc.z, doc.n);
    if( doc.n>2048 ) nWide++;
    sqlite3_reset(p);
    bindPart(p, 1, &tmp);
    bindPart(p, 2, &tmp);
    bindPart(p, 3, &tmp);
    sqlite3_bind_text(p, 4, (const char*)doc.z, (int)doc.n, SQLITE_STATIC);
    rc = sqlite3_step(p);
    rec.n = 0;
    if( rc==SQLITE_ROW ){
      bufStr(&rec, "K ");
      bufStr(&rec, (const char*)sqlite3_column_text(p, 0));
      bufByte(&rec, '\n');
      bufAdd(&rec, sqlite3_column_text(p, 1), sqlite3_column_bytes(p, 1));
    }else{
      nErr++;
      bufStr(&rec, "E ");
      bufStr(&rec, sqlite3_errmsg(db));
    }
    hAll = fnv(hAll, rec.z, rec.n);
    snprintf(zHead, sizeof(zHead), "%d %016llx %lu\n",
             i, (unsigned long long)hIn, (unsigned long)rec.n);
    if( fw ){
      fputs(zHead, fw);
      fwrite(rec.z, 1, rec.n, fw);
      fputc('\n', fw);
      if( !fr ) pass();
    }
    if( fr ){
      char zRef[128];
      int iRef = -1;
      unsigned long long hRef = 0;
      unsigned long nRef = 0;
      if( fgets(zRef, sizeof(zRef), fr)==0
       || sscanf(zRef, "%d %llx %lu", &iRef, &hRef, &nRef)!=3 || iRef!=i ){
        fail("docs", "document %d: the reference ends or is malformed", i);
        break;
      }
      if( hRef!=hIn ){
        fail("docs", "document %d: the generator made other bytes here "
             "than on the reference machine", i);
        break;
      }
      ref.n = 0;
      if( nRef ){
        if( ref.nAlloc<nRef+1 ){
          ref.nAlloc = nRef+1;
          ref.z = realloc(ref.z, ref.nAlloc);
          if( ref.z==0 ){ fprintf(stderr, "out of memory\n"); exit(2); }
        }
        if( fread(ref.z, 1, nRef, fr)!=nRef ){
          fail("docs", "document %d: the reference is cut short", i);
          break;
        }
        ref.n = nRef;
      }
      fgetc(fr);
      if( ref.n==rec.n && memcmp(ref.z, rec.z, rec.n)==0 ){
        pass();
      }else{
        fail("docs", "document %d (%.60s...): got [%.*s], reference [%.*s]",
             i, doc.z, (int)(rec.n>200 ? 200 : rec.n), rec.z,
             (int)(ref.n>200 ? 200 : ref.n), ref.z);
      }
    }
  }
  if( nDoc<1000 ) fail("docs", "only %d documents", nDoc);
  printf("docs:    %d generated documents (%d rejected, %d over 2 KB), "
         "digest %016llx, %s, %d failed\n",
         nDoc, nErr, nWide, (unsigned long long)hAll,
         fr ? "compared with the reference" : fw ? "reference written"
            : "NOT COMPARED (no -r)", nFail-nFail0);
  if( !fw && !fr ) fail("docs", "neither -w nor -r given");
 done:
  if( fw ) fclose(fw);
  if( fr ) fclose(fr);
  sqlite3_finalize(p);
  free(doc.z); free(rec.z); free(tmp.z); free(ref.z);
}

/* ------------------------------------------------------------ smoke */
/* All rows of zSql as "a|b" lines joined by "\n", or "error: <message>". */
static char *execText(sqlite3 *db, const char *zSql){
  sqlite3_stmt *p = 0;
  sqlite3_str *s = sqlite3_str_new(db);
  char *z;
  int rc, i, nRow = 0;
  rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
  if( rc==SQLITE_OK ) rc = SQLITE_ROW;
  while( rc==SQLITE_ROW && (rc = sqlite3_step(p))==SQLITE_ROW ){
    if( nRow++ ) sqlite3_str_appendchar(s, 1, '\n');
    for(i=0; i<sqlite3_column_count(p); i++){
      const char *z = (const char*)sqlite3_column_text(p, i);
      if( i ) sqlite3_str_appendchar(s, 1, '|');
      sqlite3_str_appendall(s, z ? z : "");
    }
  }
  if( rc!=SQLITE_DONE ){
    sqlite3_str_reset(s);
    sqlite3_str_appendf(s, "error: %s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(p);
  z = sqlite3_str_finish(s);
  return z ? z : sqlite3_mprintf("");
}

static void testSmoke(const char *zDb){
  /* A step: the SQL, and its exact output, or "~TEXT" for an error whose
  ** message contains TEXT; a NULL SQL closes and reopens the database. */
  static const char *azStep[] = {
    "CREATE VIRTUAL TABLE calls USING idem", "",
    "CREATE TABLE orders(id INTEGER PRIMARY KEY, sku TEXT, qty INTEGER)", "",
    /* claim, act and record in one transaction */
    "BEGIN IMMEDIATE", "",
    "INSERT OR IGNORE INTO calls(who, conv, tool, args)"
    " VALUES('alice', 'conv-7', 'checkout', '{\"sku\":\"A0001\",\"qty\":2}')", "",
    "SELECT changes()", "1",
    "INSERT INTO orders(sku, qty) VALUES('A0001', 2)", "",
    "UPDATE calls SET status = 'done', id = last_insert_rowid(),"
    " result = '{\"order\":1}'"
    " WHERE key = idem_key('alice', 'conv-7', 'checkout', '{\"sku\":\"A0001\",\"qty\":2}')"
    " AND member = 0", "",
    "COMMIT", "",
    0, 0,
    /* the retry, spelled differently, replays */
    "INSERT OR IGNORE INTO calls(who, conv, tool, args)"
    " VALUES('alice', 'conv-7', 'checkout', '{ \"qty\": 2.0, \"sku\": \"A0001\" }')", "",
    "SELECT changes()", "0",
    "SELECT reply FROM calls WHERE key = idem_key('alice', 'conv-7', 'checkout',"
    " '{\"qty\":2,\"sku\":\"A0001\"}')",
    "{\"id\":1,\"idempotent\":true,\"result\":{\"order\":1},\"status\":\"done\"}",
    "SELECT count(*) FROM orders", "1",
    "INSERT INTO calls(who, conv, tool, args)"
    " VALUES('alice', 'conv-7', 'checkout', '{\"qty\":2,\"sku\":\"A0001\"}')",
    "~idem: calls: call already claimed (status: done)",
    "SELECT key, args FROM calls WHERE tool = 'checkout'",
    "53a4ad833a7b5ecd0625efc02e8e7f89|{\"qty\":2,\"sku\":\"A0001\"}",
    /* a local failure releases the claim; the retry owns it (a local claim
    ** never commits pending: each is decided in its transaction) */
    "BEGIN IMMEDIATE", "",
    "INSERT INTO calls(who, conv, tool, args)"
    " VALUES('bob', 'conv-1', 'restock', '{\"sku\":\"A0001\"}')", "",
    "UPDATE calls SET status = 'failed', note = 'supplier offline'"
    " WHERE key = idem_key('bob','conv-1','restock','{\"sku\":\"A0001\"}')"
    " AND member = 0", "",
    "COMMIT", "",
    0, 0,
    "BEGIN IMMEDIATE", "",
    "INSERT OR IGNORE INTO calls(who, conv, tool, args)"
    " VALUES('bob', 'conv-1', 'restock', '{\"sku\":\"A0001\"}')", "",
    "SELECT changes()", "1",
    "SELECT status FROM calls WHERE tool = 'restock'", "pending",
    "UPDATE calls SET status = 'done', id = 7"
    " WHERE key = idem_key('bob','conv-1','restock','{\"sku\":\"A0001\"}')"
    " AND member = 0", "",
    "COMMIT", "",
    /* a local claim left pending cannot commit: the COMMIT fails */
    "INSERT INTO calls(who, conv, tool, args)"
    " VALUES('dave', 'conv-2', 'restock', '{}')",
    "~is still pending at COMMIT",
    /* bad input: a clear error under OR IGNORE too, nothing written */
    "INSERT OR IGNORE INTO calls(who, conv, tool, args)"
    " VALUES('bob', 'conv-1', 'restock', '{\"sku\":')",
    "~idem: calls: args must be JSON text: expected a value at end of input",
    "SELECT count(*) FROM calls", "2",
    /* an external call: unknown after a failure, kept, never retried */
    "INSERT INTO calls(who, conv, tool, args, kind)"
    " VALUES('carol', 'conv-3', 'charge_card', '{\"cents\":4200}', 'external')", "",
    "UPDATE calls SET status = 'failed', note = 'timeout'"
    " WHERE key = idem_key('carol','conv-3','charge_card','{\"cents\":4200}')"
    " AND member = 0", "",
    0, 0,
    "SELECT status FROM calls WHERE tool = 'charge_card'", "unknown",
    "INSERT OR IGNORE INTO calls(who, conv, tool, args, kind)"
    " VALUES('carol', 'conv-3', 'charge_card', '{\"cents\":4200}', 'external')", "",
    "SELECT changes()", "0",
    "PRAGMA integrity_check", "ok",
  };
  sqlite3 *db = 0;
  int i, nFail0 = nFail, nStep = 0;
  nShown = 0;
  unlink(zDb);
  if( sqlite3_open(zDb, &db) ){
    fail("smoke", "cannot open %s", zDb);
    goto done;
  }
  for(i=0; i<(int)(sizeof(azStep)/sizeof(azStep[0])); i+=2){
    char *zGot;
    if( azStep[i]==0 ){
      sqlite3_close(db);
      db = 0;
      if( sqlite3_open(zDb, &db) ){
        fail("smoke", "cannot reopen %s", zDb);
        break;
      }
      continue;
    }
    nStep++;
    zGot = execText(db, azStep[i]);
    if( azStep[i+1][0]=='~' ? (strncmp(zGot, "error: ", 7)==0
                               && strstr(zGot, azStep[i+1]+1)!=0)
                            : strcmp(zGot, azStep[i+1])==0 ){
      pass();
    }else{
      fail("smoke", "%s\n    got:  %s\n    want: %s",
           azStep[i], zGot, azStep[i+1]);
    }
    sqlite3_free(zGot);
  }
  printf("smoke:   %d claim/replay/failure steps on a file database, "
         "%d failed\n", nStep, nFail-nFail0);
 done:
  sqlite3_close(db);
  unlink(zDb);
}

/* ------------------------------------------------------------ exchange */
/*
** A database file that travels between machines: the reference run makes
** 200 claims in zFile (done, with a result); every other run opens that
** same file and, in a transaction it rolls back, finds each call again by
** its key, replays it, and sees the same call, spelled otherwise, as a
** duplicate.  A key stored in a machine's own byte order would be missed.
*/
#define EXCHANGE_N 200
static void exchangeArgs(char *z, int n, int i, int bOther){
  if( bOther ){
    snprintf(z, n, "{ \"qty\" : %d.0, \"sku\": \"A%04d\","
             " \"note\":\"\\u00e9\" }", i%7, i);
  }else{
    snprintf(z, n, "{\"sku\":\"A%04d\",\"note\":\"\xc3\xa9\",\"qty\":%d}",
             i, i%7);
  }
}
static void testExchange(const char *zFile, int bCreate){
  sqlite3 *db = 0;
  int i, nFail0 = nFail, nCall = 0;
  char zArgs[128], zSql[512], zWant[256];
  char *zGot;
  nShown = 0;
  if( bCreate ) unlink(zFile);
  if( sqlite3_open_v2(zFile, &db, SQLITE_OPEN_READWRITE
                                  | (bCreate ? SQLITE_OPEN_CREATE : 0), 0) ){
    fail("exchange", "cannot open %s%s", zFile,
         bCreate ? "" : " (written by the reference run)");
    goto done;
  }
  zGot = execText(db, bCreate ? "CREATE VIRTUAL TABLE calls USING idem"
                              : "BEGIN");
  if( zGot[0] ) fail("exchange", "%s", zGot);
  sqlite3_free(zGot);
  if( bCreate ){
    zGot = execText(db, "BEGIN");
    sqlite3_free(zGot);
  }
  for(i=0; i<EXCHANGE_N; i++){
    exchangeArgs(zArgs, sizeof(zArgs), i, !bCreate);
    if( bCreate ){
      sqlite3_snprintf(sizeof(zSql), zSql,
          "INSERT INTO calls(who, conv, tool, args)"
          " VALUES('u%d', 'c', 't', %Q);"
          "UPDATE calls SET status = 'done', id = %d, result = '{\"n\":%d}'"
          " WHERE key = idem_key('u%d', 'c', 't', %Q) AND member = 0",
          i, zArgs, i, i, i, zArgs);
      if( sqlite3_exec(db, zSql, 0, 0, 0) ){
        fail("exchange", "claim %d: %s", i, sqlite3_errmsg(db));
      }
      continue;
    }
    nCall++;
    sqlite3_snprintf(sizeof(zSql), zSql,
        "INSERT OR IGNORE INTO calls(who, conv, tool, args)"
        " VALUES('u%d', 'c', 't', %Q)", i, zArgs);
    zGot = execText(db, zSql);
    sqlite3_free(zGot);
    sqlite3_snprintf(sizeof(zSql), zSql,
        "SELECT changes(), reply FROM calls"
        " WHERE key = idem_key('u%d', 'c', 't', %Q)", i, zArgs);
    sqlite3_snprintf(sizeof(zWant), zWant,
        "0|{\"id\":%d,\"idempotent\":true,\"result\":{\"n\":%d},"
        "\"status\":\"done\"}", i, i);
    zGot = execText(db, zSql);
    if( strcmp(zGot, zWant)==0 ){
      pass();
    }else{
      fail("exchange", "call %d: got %s, want %s", i, zGot, zWant);
    }
    sqlite3_free(zGot);
  }
  zGot = execText(db, bCreate ? "COMMIT" : "ROLLBACK");
  if( zGot[0] ) fail("exchange", "%s", zGot);
  sqlite3_free(zGot);
  if( bCreate ){
    pass();
    printf("exchange: %d done calls written to %s\n", EXCHANGE_N, zFile);
  }else{
    printf("exchange: %d calls replayed from the reference run's database, "
           "%d failed\n", nCall, nFail-nFail0);
  }
 done:
  sqlite3_close(db);
}

/* ------------------------------------------------------------ main */
/* With IDEM_CROSS_TIMES set, the CPU time of each area (emulated time,
** under qemu). */
static void lap(const char *zArea){
  static clock_t t0 = 0;
  clock_t t = clock();
  if( getenv("IDEM_CROSS_TIMES") ){
    printf("  (%s: %.2f s)\n", zArea, (double)(t-t0)/CLOCKS_PER_SEC);
  }
  t0 = t;
  fflush(stdout);
}

int main(int argc, char **argv){
  const char *zDir = "test/data", *zWrite = 0, *zRead = 0, *zLabel = 0;
  const char *zExchange = 0;
  int nDoc = 10000, i, rc;
  sqlite3 *db = 0;
  char zDb[256];
  for(i=1; i<argc; i++){
    if( strcmp(argv[i], "-d")==0 && i+1<argc ) zDir = argv[++i];
    else if( strcmp(argv[i], "-w")==0 && i+1<argc ) zWrite = argv[++i];
    else if( strcmp(argv[i], "-r")==0 && i+1<argc ) zRead = argv[++i];
    else if( strcmp(argv[i], "-n")==0 && i+1<argc ) nDoc = atoi(argv[++i]);
    else if( strcmp(argv[i], "-l")==0 && i+1<argc ) zLabel = argv[++i];
    else if( strcmp(argv[i], "-x")==0 && i+1<argc ) zExchange = argv[++i];
    else{
      fprintf(stderr, "usage: %s [-d DATADIR] [-w OUT] [-r REF] [-n NDOC] "
              "[-l LABEL] [-x DB]\n", argv[0]);
      return 2;
    }
  }
  printf("== %s: %s, %s-endian, char %s, long %d bits, pointer %d bits;"
         " scan: %s; SQLite %s\n",
         zLabel ? zLabel : archName(), archName(),
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_BIG_ENDIAN__
         "big",
#else
         "little",
#endif
         CHAR_MIN<0 ? "signed" : "unsigned", (int)(sizeof(long)*CHAR_BIT),
         (int)(sizeof(void*)*CHAR_BIT), scanPath(), sqlite3_libversion());
  fflush(stdout);
  rc = sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
  if( rc==SQLITE_OK ) rc = sqlite3_open(":memory:", &db);
  if( rc==SQLITE_OK ){
    rc = sqlite3_prepare_v2(db, "SELECT idem_canonical(?1)", -1, &pCanon, 0);
  }
  if( rc!=SQLITE_OK ){
    printf("cannot start: %s\n0 passed, 1 failed\n",
           db ? sqlite3_errmsg(db) : "");
    return 1;
  }
  testKeys(db, zDir);
  lap("keys");
  testJcs(db, zDir);
  lap("jcs");
  testNumbers(db, zDir);
  lap("numbers");
  testDocs(db, nDoc, zWrite, zRead);
  lap("docs");
  snprintf(zDb, sizeof(zDb), "/tmp/idem-cross-%s-%ld.db",
           zLabel ? zLabel : archName(), (long)getpid());
  testSmoke(zDb);
  lap("smoke");
  if( zExchange ) testExchange(zExchange, zRead==0);
  sqlite3_finalize(pCanon);
  sqlite3_close(db);
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}

// SPDX-License-Identifier: MIT
//
// anchor.cpp -- simdjson, the anchor of the fastest JSON parsing, against
// idem's canonicalizer, both called straight from C/C++ on the bench's
// documents (no SQL): what a parse at simdjson's speed would leave for
// sorting, writing and hashing.  Optional: `make build/anchor` builds it
// only where simdjson is installed (Debian's libsimdjson-dev), and
// test/bench/callgrind.sh counts its instructions then.  Never a
// dependency of idem.
//
//     build/anchor DOCS.db simdjson|idem
//
// DOCS.db is written by `bench --write-docs` (table docs, column args).
// Each document is parsed (simdjson: a DOM parse; idem: canonical text)
// once; the time is reported, and the functions measureSimdjson() and
// measureIdem() are what callgrind.sh reads.
#include <simdjson.h>
#include <sqlite3.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern "C" int anchorCanonical(const char *z, int n);

static std::vector<std::string> docs;
static std::vector<simdjson::padded_string> padded;   // simdjson's input

static size_t __attribute__((noinline)) measureSimdjson(){
  simdjson::dom::parser parser;
  size_t n = 0;
  auto t0 = std::chrono::steady_clock::now();
  for(const auto &p : padded){
    simdjson::dom::element e;
    if( parser.parse(p).get(e) ){
      fprintf(stderr, "anchor: simdjson refused a document\n");
      exit(1);
    }
    n++;
  }
  auto t = std::chrono::duration<double>(std::chrono::steady_clock::now()-t0);
  printf("simdjson: %zu docs in %.1f ms\n", n, t.count()*1e3);
  return n;
}

static size_t __attribute__((noinline)) measureIdem(){
  size_t n = 0;
  auto t0 = std::chrono::steady_clock::now();
  for(const auto &d : docs){
    if( anchorCanonical(d.data(), (int)d.size())<0 ){
      fprintf(stderr, "anchor: idem refused a document\n");
      exit(1);
    }
    n++;
  }
  auto t = std::chrono::duration<double>(std::chrono::steady_clock::now()-t0);
  printf("idem: %zu docs in %.1f ms\n", n, t.count()*1e3);
  return n;
}

int main(int argc, char **argv){
  sqlite3 *db;
  sqlite3_stmt *st;
  if( argc<3 ){
    fprintf(stderr, "usage: %s DOCS.db simdjson|idem [N]\n", argv[0]);
    return 2;
  }
  int nMax = argc>3 ? atoi(argv[3]) : 2000;
  if( sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, 0)
   || sqlite3_prepare_v2(db, "SELECT args FROM docs ORDER BY i", -1, &st, 0) ){
    fprintf(stderr, "anchor: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  while( (int)docs.size()<nMax && sqlite3_step(st)==SQLITE_ROW ){
    docs.emplace_back((const char*)sqlite3_column_text(st, 0),
                      (size_t)sqlite3_column_bytes(st, 0));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  if( strcmp(argv[2], "simdjson")==0 ){
    padded.reserve(docs.size());
    for(const auto &d : docs) padded.emplace_back(d);
    measureSimdjson();
  }
  else measureIdem();
  return 0;
}

/* SPDX-License-Identifier: MIT */
/*
** preload.c -- idem inside every SQLite connection of a dqlite node.
**
** Built with ext/idem.c (compiled with -DSQLITE_CORE) into one shared
** library that is preloaded into Debian's dqlite-demo:
**
**   GO_DQLITE_MULTITHREAD=1 LD_PRELOAD=build/cluster/idem_preload.so \
**     dqlite-demo --api 127.0.0.1:8001 --db 127.0.0.1:9001 --dir DIR
**
** A node opens its databases itself, and load_extension() is refused from
** SQL, so the extension is registered with sqlite3_auto_extension() before
** the node starts.  sqlite3_auto_extension() initializes SQLite, after
** which sqlite3_config() fails; go-dqlite calls sqlite3_config() when it
** starts and panics on that failure unless GO_DQLITE_MULTITHREAD=1.  So
** this constructor makes the configuration call that go-dqlite would have
** made (single-thread: a node runs its connections on one thread), then
** registers idem.
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

int sqlite3_idem_init(sqlite3*, char**, const sqlite3_api_routines*);

__attribute__((constructor))
static void idemPreload(void){
  int rc = sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
  if( rc==SQLITE_OK ){
    rc = sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
  }
  if( rc!=SQLITE_OK ){
    fprintf(stderr, "idem_preload: cannot register idem: %s\n",
            sqlite3_errstr(rc));
    exit(1);
  }
}

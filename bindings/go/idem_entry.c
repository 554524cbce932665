/* SPDX-License-Identifier: MIT */
/*
** idem_entry.c -- the one entry point that idem.Register() hands to
** sqlite3_auto_extension(), in every connection the process opens
** afterwards.
**
** Which SQLite?  This package links no SQLite of its own.  idem is
** compiled as a loadable extension is (sqlite3ext.h, no SQLITE_CORE): it
** calls SQLite only through the routines that the connection hands its
** entry point, so it works inside whichever copy opened the connection.
** The one symbol it names, sqlite3_auto_extension, is a weak reference
** that the final link binds to the SQLite in the binary: the copy
** compiled into github.com/mattn/go-sqlite3 (its bundled amalgamation, as
** `go get` brings it), or libsqlite3.so when github.com/canonical/
** go-dqlite (through libdqlite) or go-sqlite3 built with -tags libsqlite3
** links it.  With no SQLite in the binary the reference stays null and
** Register says so.
**
** A connection whose main database lives in a dqlite VFS (dqlite names it
** "dqlite-<node id>" in 1.x) is a node's: it gets the replicated build
** (idem_replicated.c); every other connection gets the local build
** (idem_local.c), with the durability check of doc/contract.md §12.  The
** VFS is asked through SQLITE_FCNTL_VFS_POINTER, which SQLite itself
** answers, whatever the VFS implements.
*/
#include <sqlite3.h>
#include <sqlite3ext.h>   /* after sqlite3.h: the routines' struct; its */
#undef sqlite3_auto_extension   /* macro would hide the real function */
#undef sqlite3_file_control
#include <string.h>

int idemGoInitLocal(sqlite3*, char**, const sqlite3_api_routines*);
int idemGoInitReplicated(sqlite3*, char**, const sqlite3_api_routines*);

/* The SQLite of the binary, bound by the final link (see above). */
#pragma weak sqlite3_auto_extension
#pragma weak sqlite3_config

/* Present when the binary holds libdqlite (go-dqlite) and go-sqlite3
** (one of its cgo exports): then one SQLite serves both, and go-dqlite's
** init has set it to single-thread mode, unsafe for go-sqlite3's
** connections on other threads. */
extern int dqlite_node_create(void);
extern void callbackTrampoline(void);
#pragma weak dqlite_node_create
#pragma weak callbackTrampoline

/* 1 if db's main database is in one of dqlite's VFSes. */
static int idemGoIsReplicated(sqlite3 *db, const sqlite3_api_routines *pApi){
  sqlite3_vfs *pVfs = 0;
  if( pApi->file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &pVfs)
      !=SQLITE_OK || pVfs==0 || pVfs->zName==0 ){
    return 0;
  }
  return strncmp(pVfs->zName, "dqlite", 6)==0;
}

static int idemGoInit(
  sqlite3 *db,
  char **pzErrMsg,
  const sqlite3_api_routines *pApi
){
  if( idemGoIsReplicated(db, pApi) ){
    return idemGoInitReplicated(db, pzErrMsg, pApi);
  }
  return idemGoInitLocal(db, pzErrMsg, pApi);
}

/* -1 when the binary holds no SQLite; else sqlite3_auto_extension()'s
** result.  SQLite ignores a second registration of the same function,
** so calling this twice is harmless. */
int idemGoRegister(void){
  if( sqlite3_auto_extension==0 ) return -1;
  if( dqlite_node_create!=0 && callbackTrampoline!=0 && sqlite3_config!=0 ){
    /* As GO_DQLITE_MULTITHREAD=1 would: multi-thread mode, while SQLite
    ** is not initialized yet (Register runs first in main); once it is,
    ** SQLite refuses the change (SQLITE_MISUSE), which changes nothing. */
    sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
  }
  return sqlite3_auto_extension((void(*)(void))idemGoInit);
}

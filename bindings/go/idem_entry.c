/* SPDX-License-Identifier: MIT */
/*
** idem_entry.c -- the one entry point that idem.Register() hands to
** sqlite3_auto_extension(): it runs in every connection the process opens
** afterwards, through any Go binding that uses the same libsqlite3
** (go-dqlite's node, through libdqlite; mattn/go-sqlite3, which Debian
** builds against libsqlite3).
**
** A connection whose main database lives in a dqlite VFS (dqlite names it
** "dqlite-<node id>" in 1.x) is a node's: it gets the replicated build
** (idem_replicated.c); every other connection gets the local build
** (idem_local.c), with the durability check of §12.  The VFS is asked
** through SQLITE_FCNTL_VFS_POINTER, which SQLite itself answers, whatever
** the VFS implements.
*/
#include <sqlite3.h>
#include <string.h>

int idemGoInitLocal(sqlite3*, char**, const sqlite3_api_routines*);
int idemGoInitReplicated(sqlite3*, char**, const sqlite3_api_routines*);

/* 1 if db's main database is in one of dqlite's VFSes. */
int idemGoIsReplicated(sqlite3 *db){
  sqlite3_vfs *pVfs = 0;
  if( sqlite3_file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &pVfs)
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
  if( idemGoIsReplicated(db) ) return idemGoInitReplicated(db, pzErrMsg, pApi);
  return idemGoInitLocal(db, pzErrMsg, pApi);
}

/* sqlite3_auto_extension() ignores a second registration of the same
** function, so calling this twice is harmless. */
int idemGoRegister(void){
  return sqlite3_auto_extension((void(*)(void))idemGoInit);
}

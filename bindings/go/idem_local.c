/* SPDX-License-Identifier: MIT */
/*
** idem_local.c -- idem as built for a database file of this machine
** (mattn/go-sqlite3, or any connection not in dqlite's VFS): the full
** durability check of doc/contract.md §12.  idem_entry.c decides, for each
** new connection, whether it gets this build or idem_replicated.c's.
** idem_amalgamation.h is ext/idem.c with its parts inlined (amalgamate.sh,
** go generate; committed).  Built as a loadable extension (no SQLITE_CORE):
** every SQLite call goes through the routines of the connection's own copy.
*/
#define sqlite3_api idemGoApiLocal
#define sqlite3_idem_init idemGoInitLocal
#include "idem_amalgamation.h"

/* SPDX-License-Identifier: MIT */
/*
** idem_local.c -- idem as built for a database file of this machine
** (mattn/go-sqlite3, database/sql over Debian's libsqlite3, ...): the full
** durability check of doc/contract.md §12.  idem_entry.c decides, for each
** new connection, whether it gets this build or idem_replicated.c's.
** idem_amalgamation.h is made from ext/ by amalgamate.sh (go generate).
*/
#define SQLITE_CORE 1
#define sqlite3_idem_init idemGoInitLocal
#include "idem_amalgamation.h"

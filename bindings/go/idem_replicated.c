/* SPDX-License-Identifier: MIT */
/*
** idem_replicated.c -- idem as built for a dqlite node's connections:
** -DIDEM_REPLICATED.  There a COMMIT returns once its Raft entry is on disk
** on a quorum of nodes, and dqlite's in-memory VFS runs with
** synchronous=OFF, so the durability of an external claim
** (doc/contract.md §12) is the Raft log's, not the settings that the local
** build's check reads; and idem_versioned() is refused in autocommit, where
** dqlite would keep its write on one node (§7a).  The same sources as
** idem_local.c, under other names for the entry point and the routines
** pointer; every other symbol of idem is static, so the two builds do not
** meet.
*/
#define IDEM_REPLICATED 1
#define sqlite3_api idemGoApiReplicated
#define sqlite3_idem_init idemGoInitReplicated
#include "idem_amalgamation.h"

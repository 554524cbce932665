/* SPDX-License-Identifier: MIT */
/*
** idemInt.h -- the private header of idem: what the parts share.
**
** The extension is built as one translation unit: ext/idem.c #includes
** every part, so IDEM_PRIVATE is "static" and sqlite3_idem_init() is the
** only symbol the library exports.  Each part also compiles on its own,
** and the parts link as separate objects (test/parts.test does both),
** which keeps this header the one place where parts meet: a part uses
** another only through the types and prototypes below, under the heading
** of the file that defines them.  The headings go lowest first; a part
** calls only parts above its own heading:
**
**   idem_number.c     RFC 8785 / ECMAScript number text
**   idem_utf8.c       UTF-8 validation of a whole input
**   idem_time.c       the clock and the stored time text
**   idem_sql.c        conversions of SQL values, the one-row query, the
**                     SQL functions' error, what a compiled program opens
**   idem_canonical.c  canonical JSON (RFC 8785) and idem_canonical()
**   idem_key.c        the key of a call, idem_key(), idem_header()
**   idem_durable.c    the durability check of an external claim
**   idem_store.c      a claim table's storage: shadow tables, statements,
**                     the transaction's local claims, the table's error
**   idem_rows.c       what its rows promise: format 4's order of created
**                     (a range of created as a range of rids),
**                     integrity_check
**   idem_options.c    a claim table's options, parsed in one place
**   idem_claim.c      the claim (doc/contract.md §4): INSERT, and what the
**                     rules share: status, release, the inner writes
**   idem_outcome.c    the outcome (§5-7): UPDATE's transition function
**                     and writes, DELETE, the reply of a duplicate
**   idem_commit.c     the commit guard (§4): no local claim commits
**                     pending, nor apart from its action
**   idem_vtab.c       the idem module: slots, query plans, cursor
**   idem_versioned.c  the version guard for ordinary tables
*/
#ifndef IDEMINT_H
#define IDEMINT_H

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

/* The oldest SQLite idem supports: 3.40.0, the first that keeps a
** SQLITE_VTAB_DIRECTONLY table out of a trigger's INSERT, UPDATE and DELETE
** (idem_vtab.c, TRUST); idem_versioned.c reads pragma_table_list (3.37.0).
** A build against older headers stops here; an older library at run time
** is refused by sqlite3_idem_init(). */
#define IDEM_SQLITE_MIN       3040000
#define IDEM_SQLITE_MIN_TEXT  "3.40.0"
#if SQLITE_VERSION_NUMBER<IDEM_SQLITE_MIN
# error "idem needs SQLite 3.40.0 or later: the sqlite3.h and sqlite3ext.h found are older"
#endif
/* assert() checks the extension's own invariants in a debug build only
** (-DIDEM_DEBUG), as SQLite's run only with SQLITE_DEBUG: several sit on
** the canonicalizer's hot paths.  make test-asan, the fuzzers and the C
** unit tests build with it. */
#if !defined(IDEM_DEBUG) && !defined(NDEBUG)
# define NDEBUG 1
#endif
#include <assert.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>
#include <stdarg.h>

/*
** The vector paths a build may take (doc/choices.md, "Build options"):
** IDEM_SSE2 where GNU C targets SSE2 (every x86-64); IDEM_AVX2 where AVX2
** code may be compiled too (x86-64), to run only where idemHasAvx2() says
** the CPU has it.  -DIDEM_JSON_PORTABLE turns both off, -DIDEM_NO_AVX2 the
** second.
*/
#if defined(__GNUC__) && defined(__SSE2__) && !defined(IDEM_JSON_PORTABLE)
# define IDEM_SSE2 1
# include <emmintrin.h>
# if defined(__x86_64__) && !defined(IDEM_NO_AVX2)
#  define IDEM_AVX2 1
#  include <immintrin.h>
#  define idemHasAvx2() __builtin_cpu_supports("avx2")
# endif
#endif

#include "../include/idem.h"    /* IDEM_VERSION, IDEM_KEY_HEX_LEN */

/*
** Everything a part offers to the others is IDEM_PRIVATE.  ext/idem.c, the
** single build, defines it as "static" before it includes the parts; a
** part compiled alone sees it empty (extern), so that the prototypes of
** the parts it does not include are not warned about.
*/
#ifndef IDEM_PRIVATE
# define IDEM_PRIVATE
#endif

/*
** Data a part shares is declared below with IDEM_PRIVATE_DATA and defined
** once, in its own part, with IDEM_PRIVATE and an initializer.  In the
** single build both are "static" (the declaration is then a tentative
** definition of the same object); a part compiled alone sees "extern", so
** that the parts compiled as separate objects link (test/parts.test).
*/
#ifndef IDEM_PRIVATE_DATA
# define IDEM_PRIVATE_DATA extern
#endif

#ifndef SQLITE_PREPARE_NO_VTAB
# define SQLITE_PREPARE_NO_VTAB 0       /* headers older than 3.27: no such check */
#endif

/* The key: 16 bytes, shown as 32 lowercase hex digits (include/idem.h). */
#define IDEM_KEY_BYTES  16
#define IDEM_KEY_HEX    IDEM_KEY_HEX_LEN

/* The hex digits every encoder writes: lowercase, as RFC 8785 and the
** key's text form want. */
#define IDEM_HEX_DIGITS "0123456789abcdef"

/**************************************************************************
** Interface to code in idem_number.c:
*/

/* The RFC 8785 text of the validated number literal z[0..n) into zOut
** (room for n+40 bytes, no NUL); its length, or -1 on overflow. */
IDEM_PRIVATE int idemNumberCanonical(const char *z, int n, int iInt, int iFrac,
                                     char *zOut);
/* The same for a literal known to be a decimal: with no exponent, z[iInt]
** its '.'; with an exponent, z[iInt] its '.' and z[iFrac] its 'e' or 'E'.
** (Three entry points, each with only the tests its literals need.) */
IDEM_PRIVATE int idemNumberDecimal(const char *z, int n, int iInt, char *zOut);
IDEM_PRIVATE int idemNumberDecimalExp(const char *z, int n, int iInt, int iFrac,
                                      char *zOut);
#ifdef IDEM_SSE2
/* idemNumberDecimal() for a decimal of 19 digits or more, the first not 0
** (no exponent; z[iDot] its '.'), or -2 where it does not decide (then
** idemNumberDecimal()). */
IDEM_PRIVATE int idemNumberLongDecimal(const char *z, int n, int iDot,
                                       char *zOut);
/* The same for a decimal with an exponent, its mantissa z[0..iExp) of 19
** digits or more, the first not 0, z[iDot] its '.', times 10^x10 (the
** exponent's value, |x10| < 10000). */
IDEM_PRIVATE int idemNumberLongDecimalExp(const char *z, int iExp, int iDot,
                                          int x10, char *zOut);
#endif

/* ECMAScript Number::toString(v) of a finite double into zOut (40 bytes,
** no NUL); its length. */
IDEM_PRIVATE int idemNumberFormat(double v, char *zOut);

/**************************************************************************
** Interface to code in idem_utf8.c:
*/

/* 1 if z[0..n) is known to be valid UTF-8; 0 if it is not, or if this
** machine has no fast check (then the caller validates as it reads). */
IDEM_PRIVATE int idemUtf8Valid(const unsigned char *z, size_t n);

/**************************************************************************
** Interface to code in idem_time.c:
*/

#define IDEM_TIME_LEN 24    /* 'YYYY-MM-DD HH:MM:SS.SSS' and its NUL */

IDEM_PRIVATE void idemFormatTime(sqlite3_int64 ms, char zOut[IDEM_TIME_LEN]);
/* The same, the text of its second kept in *pC from one call to the next
** (a table formats the time of each claim and record; most fall in the
** second of the one before).  iSec -1: nothing kept yet. */
typedef struct IdemTimeText IdemTimeText;
struct IdemTimeText {
  sqlite3_int64 iSec;         /* The second of z, or -1 */
  char z[IDEM_TIME_LEN];      /* Its text (the milliseconds aside) */
};
IDEM_PRIVATE void idemFormatTimeKept(IdemTimeText *pC, sqlite3_int64 ms,
                                     char zOut[IDEM_TIME_LEN]);
IDEM_PRIVATE void idemNow(sqlite3_vfs *pVfs, char zOut[IDEM_TIME_LEN]);
/* The current time, from the VFS's clock, as Unix time in milliseconds. */
IDEM_PRIVATE sqlite3_int64 idemNowMs(sqlite3_vfs *pVfs);
/* Time text as idemFormatTime() writes it, as Unix time in milliseconds,
** or -1 if z is not such a text. */
IDEM_PRIVATE sqlite3_int64 idemParseTime(const char *z);

/**************************************************************************
** Interface to code in idem_sql.c (what every part that speaks to SQLite
** shares):
*/

/* The UTF-8 bytes of a TEXT value and their number, without the copy that
** sqlite3_value_text() makes to add a terminator.  NULL: out of memory. */
IDEM_PRIVATE const char *idemValueUtf8(sqlite3_value *pVal, int *pn);

/* The JSON text of an SQL integer or real, into IDEM_JSON_NUMBUF bytes:
** its length, or -1 for a real that is not finite. */
#define IDEM_JSON_NUMBUF 48
IDEM_PRIVATE int idemJsonNumberText(sqlite3_value *pVal, char *zOut);

/* The integer that pVal equals as SQL compares it with an INTEGER column
** (numeric affinity: 0.0, -0.0 and '0' equal 0; 0.5, 'a', x'00' and NULL
** equal none): 1 and *piOut, 0 if it equals no integer, -1 out of memory. */
IDEM_PRIVATE int idemValueInt64(sqlite3_value *pVal, sqlite3_int64 *piOut);

/* Prepare the query zFmt (printf-style) on db and step it once:
** SQLITE_ROW with *ppStmt on the row (the caller finalizes it),
** SQLITE_DONE for no row, or the error (sqlite3_errmsg(db)).  The one
** way idem runs a query of one row that it does not keep prepared. */
IDEM_PRIVATE int idemQueryRow(sqlite3 *db, sqlite3_stmt **ppStmt,
                              const char *zFmt, ...);

/* Whether db's text is UTF-8: 1, -1 (UTF-16le or be), or 0 if it could
** not be read (out of memory: ask again).  Fixed for the connection: every
** schema has main's encoding. */
IDEM_PRIVATE int idemDbUtf8(sqlite3 *db);

/* Step an INSERT, UPDATE or DELETE to its end: SQLITE_DONE or the error;
** the one row PRAGMA count_changes=1 adds is stepped past. */
IDEM_PRIVATE int idemStepWrite(sqlite3_stmt *pStmt);

/* One token of SQL text, as far as comparing two definitions needs: white
** space and comments are not tokens; a name (a keyword, or an identifier,
** quoted in any of SQLite's four ways or not) is compared with names as
** SQLite compares them (its text unquoted, ASCII case folded); anything
** else (a string, a number, a blob, an operator) by its bytes.  A string
** is one token whatever it holds: "/" "*" inside quotes is not a comment.
*/
#define IDEM_TK_END   0
#define IDEM_TK_NAME  1
#define IDEM_TK_OTHER 2
typedef struct IdemToken IdemToken;
struct IdemToken {
  int eType;                  /* IDEM_TK_* */
  const char *z;              /* Its text in the SQL */
  int n;                      /* Its length, quotes included */
};

/* The token at *pz into *pTok, *pz past it; the unquoted text of a name
** token into zOut (nOut bytes); SQL text zFound against zWant token by
** token: NULL if they say the same, else the first difference, described
** (sqlite3_malloc'd; *pbNoMem set if it could not be made). */
IDEM_PRIVATE void idemTokenNext(const char **pz, IdemToken *pTok);
IDEM_PRIVATE void idemTokenName(const IdemToken *pTok, char *zOut, int nOut);
IDEM_PRIVATE char *idemSqlDiff(const char *zFound, const char *zWant,
                               int *pbNoMem);

/* What a compiled program does, from its EXPLAIN listing (the trigger
** programs it runs are listed with it).  IdemRoots: b-trees by root page,
** in schema iDb as opcodes number it (the store loads those of its shadow
** tables from sqlite_schema's text).  idemRootsHas(): is (iDb, iRoot) one
** of them.  idemExplainTouches(): compile zSql (EXPLAIN, freed here) and
** set *pbTouch if its program opens or clears one of them: SQLITE_OK,
** SQLITE_ERROR if SQLite would not compile it here, or another failure
** (no verdict).  idemInsertProgram(): step pEx, the claim's INSERT under
** EXPLAIN, and set *pzWhy (sqlite3_malloc'd) if it runs anything but
** writes of table zName's <zName>_claim, whose b-trees pR holds:
** SQLITE_OK, or the failure that left no verdict. */
typedef struct IdemRoots IdemRoots;
struct IdemRoots {
  int iDb;                    /* The table's schema, as opcodes number it */
  int n;                      /* Root pages in a[] */
  int nIdx;                   /* Of them, indexes' */
  int a[16];                  /* Of each shadow table and of its indexes */
};
IDEM_PRIVATE int idemRootsHas(const IdemRoots *pR, int iDb, int iRoot);
IDEM_PRIVATE int idemExplainTouches(sqlite3 *db, const IdemRoots *pR,
                                    char *zSql, int *pbTouch);
IDEM_PRIVATE int idemInsertProgram(sqlite3_stmt *pEx, const IdemRoots *pR,
                                   const char *zName, char **pzWhy);

/* The error of an SQL function: "idem: " and the printf-style text, rc as
** the error code (SQLITE_NOMEM: out of memory, no text).  The one way an
** SQL function of idem reports an error. */
IDEM_PRIVATE void idemResultError(sqlite3_context *ctx, int rc,
                                  const char *zFmt, ...);

/**************************************************************************
** Interface to code in idem_canonical.c:
*/

/* A canonicalizer: keeps its buffers from one call to the next. */
typedef struct IdemJson IdemJson;

IDEM_PRIVATE IdemJson *idemJsonNew(void);
IDEM_PRIVATE void idemJsonFree(IdemJson *p);
IDEM_PRIVATE int idemJsonCanonical(IdemJson *p, const char *zIn, int nIn);
IDEM_PRIVATE const char *idemJsonText(IdemJson *p, int *pnText);
IDEM_PRIVATE const char *idemJsonError(IdemJson *p);
/* Append z[0..n) to s as a JSON string, escaped as canonical text is. */
IDEM_PRIVATE void idemJsonAppendString(sqlite3_str *s, const char *z,
                                       sqlite3_int64 n);

/*
** A canonicalizer shared by the calls of one owner (a SQL function, a
** table), held in *ppShared and made on first use.  Acquire lends it, or a
** private one while it is lent already (a nested call); NULL when out of
** memory.  Release gives it back (a private one is freed).
*/
IDEM_PRIVATE IdemJson *idemJsonAcquire(IdemJson **ppShared);
IDEM_PRIVATE void idemJsonRelease(IdemJson **ppShared, IdemJson *p);

IDEM_PRIVATE int idemCanonicalRegister(sqlite3 *db);

/**************************************************************************
** Interface to code in idem_key.c:
*/

/* A (pointer, length) view of one part of a call: who, conv, tool, args. */
typedef struct IdemPart IdemPart;
struct IdemPart {
  const void *p;            /* The part's bytes */
  sqlite3_int64 n;          /* Their number */
  char aNum[IDEM_JSON_NUMBUF];  /* The text of a number part (p points here) */
};

IDEM_PRIVATE void idemKeyHash(const IdemPart aPart[4],
                              unsigned char aKey[IDEM_KEY_BYTES]);
IDEM_PRIVATE void idemKeyHex(const unsigned char aKey[IDEM_KEY_BYTES],
                             char zHex[IDEM_KEY_HEX+1]);
IDEM_PRIVATE int idemKeyFromHex(const char *z, sqlite3_int64 n,
                                unsigned char aKey[IDEM_KEY_BYTES]);
IDEM_PRIVATE int idemKeyFromValue(sqlite3_value *pVal,
                                  unsigned char aKey[IDEM_KEY_BYTES]);
/* One part from a non-NULL SQL value (doc/contract.md §2): SQLITE_OK,
** SQLITE_NOMEM, or SQLITE_MISMATCH for a real that is not finite
** (IDEM_KEY_NONFINITE says why, after the part's name). */
IDEM_PRIVATE int idemKeyPartFrom(sqlite3_value *pVal, IdemPart *pPart);
#define IDEM_KEY_NONFINITE "is a real that is not finite (Inf or -Inf);" \
  " a key part must be a finite number, text or blob"
IDEM_PRIVATE int idemKeyRegister(sqlite3 *db);

/**************************************************************************
** Interface to code in idem_durable.c (doc/contract.md §12: a claim must
** survive what its act survives):
*/
typedef struct IdemDurable IdemDurable;
struct IdemDurable {
  int bRead;                  /* The settings below are read in this txn */
  int bFixed;                 /* ... after it wrote: they cannot change */
  int eStore;                 /* IDEM_STORE_*: where the pages live */
  int iSync;                  /* synchronous: 0 OFF .. 3 EXTRA */
  char zMode[16];             /* journal_mode, upper case */
  int bDirSync;               /* Sync the directory at xCommit */
  int bExtWrote;              /* This txn wrote an external call (strict) */
  char *zMarker;              /* The marker made at xSync, for xCommit
                              ** (zMarkerName then, else NULL) */
  char *zMarkerName;          /* "<db>-idemXXX": made once, XXX each time */
  int nMarkerName;            /* Its length */
  unsigned int iMarker;       /* The next XXX (from a random start) */
  sqlite3_file *pMarkerFile;  /* szOsFile bytes for the marker's open */
  char *zLost;                /* A directory sync that failed at xCommit */
  char *zDir;                 /* The directory of the table's file, when
                              ** its name is a unix path (else NULL) */
  int bDirKnown;              /* zDir was looked for */
  int rcLost;                 /* ... and its error code */
  int eDirSync;               /* 0 not known yet, 1 this SQLite syncs
                              ** directories, 2 never (DISABLE_DIRSYNC) */
  sqlite3_vfs *pVfs;          /* The schema's VFS (with eDirSync), or NULL */
  int eLock;                  /* 0 not looked at, 1 VFS and URI seen to
                              ** lock, 2 and our own write lock seen, 3
                              ** (1 in WAL with shared memory: not seen) */
  char zPrefix[80];           /* "PRAGMA " or "PRAGMA aux." for messages */
  int bMain;                  /* The schema is main (with eDirSync): its
                              ** file controls name none, which SQLite
                              ** takes for main without a search by name */
  char *zSqlSync;             /* PRAGMA [<schema>.]synchronous */
  char *zSqlJournal;          /* PRAGMA "<schema>".journal_mode */
  int bWalKept;               /* zMode is "WAL", read when the schema's
                              ** data version was iWalVersion */
  unsigned int iWalVersion;   /* SQLITE_FCNTL_DATA_VERSION then, or after
                              ** the table's own COMMIT since */
  int bVersion;               /* iWalVersion holds (for the kept below) */
  int eWatch;                 /* 0 not tried, 1 the schema's file (and
                              ** main's, for another schema) watched for
                              ** PRAGMAs that set a setting, 2 cannot */
  int bSyncKept;              /* iSync read at iWalVersion, when the watch
                              ** had seen nSyncSet "PRAGMA synchronous=" */
  int bModeKept;              /* zMode (a rollback mode) read at
                              ** iWalVersion, no "journal_mode=" seen */
  unsigned int nSyncSet;
  struct IdemWatch *pWatch;   /* With eWatch 1: the schema's watch, and */
  struct IdemWatch *pWatchMain; /* main's (another schema's table), read
                              ** directly while no watch was freed since
                              ** iWatchGen (else through the file) */
  unsigned int iWatchGen;
  unsigned int nAloneAt;      /* With pWatch: 1 + the B-trees its watch had
                              ** seen opened on the file when the cache was
                              ** last seen unshared, or 0 (idemDurableSharedNow()) */
};
#define IDEM_STORE_FILE   0   /* a database file */
#define IDEM_STORE_NOFILE 1   /* ":memory:", temp, "" */
#define IDEM_STORE_MEMDB  2   /* the memdb VFS (sqlite3_deserialize()) */
/* SQLITE_OK, or SQLITE_ERROR with *pzErr (sqlite3_malloc'd) naming the
** setting under which a claim (bExternal: an external one) in schema zDb
** would not survive what its act survives. */
IDEM_PRIVATE int idemDurableCheck(IdemDurable *pD, sqlite3 *db,
                                  const char *zDb, int bExternal,
                                  int bRelaxed, char **pzErr);
IDEM_PRIVATE void idemDurableBegin(IdemDurable *pD);  /* xBegin: read again */
IDEM_PRIVATE void idemDurableWrote(IdemDurable *pD);  /* a claim wrote: keep */
/* An UPDATE of an external call: its COMMIT too is made durable. */
IDEM_PRIVATE void idemDurableRecord(IdemDurable *pD, sqlite3 *db,
                                    const char *zDb);
/* xCommit: make an external call's COMMIT in DELETE mode durable. */
IDEM_PRIVATE void idemDurableCommit(IdemDurable *pD);
/* xDisconnect: the watch of the schema's file let go, then finalize. */
IDEM_PRIVATE void idemDurableClear(IdemDurable *pD, sqlite3 *db,
                                   const char *zDb);
/* xRollback: the marker made at xSync goes. */
IDEM_PRIVATE void idemDurableRollback(IdemDurable *pD);
/* xSync: a connection that shares its cache now is refused, and a
** directory sync that the COMMIT needs must be possible. */
IDEM_PRIVATE int idemDurableSyncCheck(IdemDurable *pD, sqlite3 *db,
                                      const char *zDb, char **pzErr);
/* IDEM_STORE_* of schema zDb. */
IDEM_PRIVATE int idemDurableStore(sqlite3 *db, const char *zDb);

/**************************************************************************
** Interface to code in idem_store.c (where a claim table keeps its calls:
** the shadow tables, the statements, the transaction's local claims, the
** table's error):
*/

/* Column numbers of the virtual table. */
#define IDEM_COL_KEY        0
#define IDEM_COL_MEMBER     1
#define IDEM_COL_WHO        2
#define IDEM_COL_CONV       3
#define IDEM_COL_TOOL       4
#define IDEM_COL_ARGS       5
#define IDEM_COL_KIND       6
#define IDEM_COL_STATUS     7
#define IDEM_COL_ID         8
#define IDEM_COL_RESULT     9
#define IDEM_COL_NOTE      10
#define IDEM_COL_CREATED   11
#define IDEM_COL_UPDATED   12
#define IDEM_COL_REPLY     13
#define IDEM_COL_RECONCILE 14
#define IDEM_COL_KEYARGS   15   /* hidden: the arguments the key is made of */
#define IDEM_COL_OWNER     16   /* hidden: who holds the call */
#define IDEM_COL_EXPIRES   17   /* hidden, computed: when a decided call goes */
#define IDEM_COL_STALE     18   /* hidden, computed: a pending call gone quiet */
#define IDEM_COL_HONOURS   19   /* hidden: the target honours the key */
#define IDEM_COL_SENDS     20   /* hidden: times taken for sending */
#define IDEM_COL_RESEND_AT 21   /* hidden, computed: when a resend is allowed */
#define IDEM_NCOL          22
/* Column iCol's bit in a set of columns (colUsed, an UPDATE's given) */
#define IDEM_COLBIT(iCol)  ((sqlite3_uint64)1<<(iCol))

/*
** Prepared statements, each prepared on first use by idemStmt() and kept
** (SQLITE_PREPARE_PERSISTENT) until the table is disconnected, dropped or
** renamed; the claim's INSERT by idemStoreInsert() (the legacy interface,
** right after a damage check), and again after each SQLITE_SCHEMA.  The
** queries (IDEM_STMT_Q_SCAN .. IDEM_STMT_Q_KEYMAIN_U) are lent to one
** cursor at a time (idemStmtLend()); a second cursor gets a private copy.
*/
#define IDEM_STMT_INSERT        0   /* claim or member row */
#define IDEM_STMT_MAIN          1   /* identity and status of a call by key */
#define IDEM_STMT_BYRID         2   /* one row by rid */
#define IDEM_STMT_RECORD        3   /* set status, id, result, note, updated */
#define IDEM_STMT_RELEASE       4   /* delete a call's group */
#define IDEM_STMT_Q_SCAN        5   /* query: every row */
#define IDEM_STMT_Q_KEY         6   /* query: one call's group */
#define IDEM_STMT_Q_KEYMEMBER   7   /* query: one row by key and member */
#define IDEM_STMT_Q_MAIN        8   /* query: a member row's call */
#define IDEM_STMT_Q_CREATED     9   /* query: created range, 9 forms (9..17):
                                    ** + 3*lower + upper, see IDEM_PLAN_* */
#define IDEM_STMT_Q_KEY_L      18   /* IDEM_STMT_Q_KEY without the identity */
#define IDEM_STMT_Q_KEYMEMBER_L 19  /* IDEM_STMT_Q_KEYMEMBER without it */
#define IDEM_STMT_Q_KEY_N      20   /* IDEM_STMT_Q_KEY: member, status, id,
                                    ** result (and expires) alone */
#define IDEM_STMT_Q_KEYMEMBER_N 21  /* IDEM_STMT_Q_KEYMEMBER: the same */
#define IDEM_STMT_Q_KEY_U      22   /* IDEM_STMT_Q_KEY without who, conv,
                                    ** tool, args, keyargs (an UPDATE's) */
#define IDEM_STMT_Q_KEYMEMBER_U 23  /* IDEM_STMT_Q_KEYMEMBER: the same */
#define IDEM_STMT_Q_KEYMAIN_N  24   /* IDEM_STMT_Q_KEYMEMBER_N of member 0,
                                    ** written in its text (a replay) */
#define IDEM_STMT_Q_KEYMAIN_U  25   /* IDEM_STMT_Q_KEYMEMBER_U: the same (a
                                    ** record) */
#define IDEM_STMT_CALLOF       26   /* a row's key and its call's status */
#define IDEM_STMT_COOKIE       27   /* the schema's schema_version */
#define IDEM_STMT_EXPIRED      28   /* the oldest expired calls (retain) */
#define IDEM_STMT_EXPIRY_ADD   29   /* a decided call's expiry (retain) */
#define IDEM_STMT_EXPIRY_DEL   30   /* ... and its removal */
#define IDEM_STMT_EXPIRY_NEXT  31   /* the earliest expiry (retain) */
#define IDEM_STMT_RESEND       32   /* take a call for sending again */
#define IDEM_STMT_RECORD_KEEP  33   /* IDEM_STMT_RECORD leaving unchanged what
                                    ** the UPDATE keeps, 7 forms (33..39):
                                    ** + mask-1, mask 1 id, 2 result, 4 note */
#define IDEM_STMT_RECORD_DONE  40   /* the same forms of a record of done, the
                                    ** status in their text (40..47): + mask */
#define IDEM_STMT_PROBE        48   /* format 4: the first row from a rid on,
                                    ** and whether its created passes a lower
                                    ** bound (> and >=) */
#define IDEM_STMT_LASTROW      49   /* format 4: the same of the last row */
#define IDEM_NSTMT             50
#define IDEM_STMT_LENDABLE(i) \
  ((i)>=IDEM_STMT_Q_SCAN && (i)<=IDEM_STMT_Q_KEYMAIN_U)
/* An UPDATE's query (IDEM_QCOLS_UPDATE's columns: the key, who, conv,
** tool, args, keyargs and updated left out, the key the cursor bound). */
#define IDEM_STMT_UPDATE_Q(i) \
  ((i)==IDEM_STMT_Q_KEY_U || (i)==IDEM_STMT_Q_KEYMEMBER_U \
   || (i)==IDEM_STMT_Q_KEYMAIN_U)

/* At most this many expired calls (each with its members) are deleted by
** one claim (doc/contract.md §10), oldest expiry first. */
#define IDEM_SWEEP_LIMIT        2
#define IDEM_SWEEP_LIMIT_TEXT  "2"

/* Columns of the query statements (IDEM_STMT_Q_*) and of IDEM_STMT_BYRID:
** rid, key, member, then virtual columns 2..12 in order, then keyargs,
** owner, expires, honours_key and sends. */
#define IDEM_Q_RID      0
#define IDEM_Q_KEY      1
#define IDEM_Q_MEMBER   2
#define IDEM_QCOL(iCol) ((iCol)+1)     /* virtual column iCol, 1..12 */
#define IDEM_Q_KEYARGS 14
#define IDEM_Q_OWNER   15
#define IDEM_Q_EXPIRES 16
#define IDEM_Q_HONOURS 17
#define IDEM_Q_SENDS   18
#define IDEM_Q_UPTO    19   /* format 4's created range: 1 while the row is
                            ** within the upper bound (idem_store.c) */

/* Columns of the narrow queries (IDEM_STMT_Q_KEY_N, _KEYMEMBER_N,
** _KEYMAIN_N): a replay's, which reads status, id and result alone; the
** member only in IDEM_STMT_Q_KEY_N's (the others bound it or name it);
** no rid (a replay asks none: xRowid looks it up by key and member). */
#define IDEM_N_STATUS   0
#define IDEM_N_ID       1
#define IDEM_N_RESULT   2
#define IDEM_N_EXPIRES  3
#define IDEM_N_MEMBER   4

/* Columns of IDEM_STMT_MAIN and IDEM_STMT_Q_MAIN: the call as its members
** show it. */
#define IDEM_M_WHO      0
#define IDEM_M_CONV     1
#define IDEM_M_TOOL     2
#define IDEM_M_ARGS     3
#define IDEM_M_KIND     4
#define IDEM_M_STATUS   5
#define IDEM_M_NOTE     6
#define IDEM_M_UPDATED  7
#define IDEM_M_KEY      8
#define IDEM_M_KEYARGS  9
#define IDEM_M_OWNER   10
#define IDEM_M_EXPIRES 11
#define IDEM_M_HONOURS 12
#define IDEM_M_SENDS   13

/* Columns of IDEM_STMT_CALLOF. */
#define IDEM_C_KEY      0
#define IDEM_C_STATUS   1

/* The table's options (CREATE VIRTUAL TABLE ... USING idem(name=value)),
** parsed in one place: idemOptionParse() in idem_options.c; the store reads
** retain to leave expires out of its queries. */
typedef struct IdemOptions IdemOptions;
struct IdemOptions {
  int bKeepLocalFailure;      /* local_failure=keep */
  int bRelaxedDurability;     /* durability=relaxed (doc/contract.md §12) */
  int bArgsMismatchReplay;    /* args_mismatch=replay (default: error) */
  sqlite3_int64 iRetainMs;    /* retain=<duration>; 0: decided calls stay */
  sqlite3_int64 iStaleAfterMs;/* stale_after=<duration>; 0: never stale */
  int bHonoursKey;            /* honours_key=yes: external calls' default */
  int nMaxSends;              /* max_sends=N (0: the default) */
  sqlite3_int64 iResendAfterMs;/* resend_after=<duration> (0: the default) */
  unsigned int mGiven;        /* Options given so far, a bit each: none
                              ** may be given twice */
};

/* doc/contract.md §14: a call that honours the key is taken for sending at
** most IDEM_MAX_SENDS times unless max_sends says otherwise (at most
** IDEM_MAX_SENDS_LIMIT); the n-th resend waits resend_after
** (IDEM_RESEND_AFTER_MS unless given) times 2^(n-1), at most
** IDEM_RESEND_CAP times resend_after, from the call's last update. */
#define IDEM_MAX_SENDS        5
#ifndef IDEM_MAX_SENDS_LIMIT
# define IDEM_MAX_SENDS_LIMIT 100
#endif
#define IDEM_RESEND_AFTER_MS  1000

/* How often a package touches a pending external call while its request
** is out (its lease, doc/contract.md §11): a third of stale_after, so that
** two beats may be late and the call still not stale, and not more often
** than IDEM_HEARTBEAT_MIN_MS (each beat is a write transaction).  None
** without stale_after: such a call never goes stale. */
#define IDEM_HEARTBEAT_MIN_MS 100
#define IDEM_RESEND_CAP       64

/* The limits the packages keep and read from C, idem_limits()
** (idem_options.c; doc/contract.md §5): the longest note a package writes
** (the tool's error, cut), and how many refused resends in a row, with
** nothing moved, end a package's wait for a resend (it replays the call as
** it stands).  Like IDEM_MAX_SENDS_LIMIT, a build may set them with -D:
** the packages' tests build such a variant to see that they follow C. */
#ifndef IDEM_NOTE_MAX
# define IDEM_NOTE_MAX        2000
#endif
#ifndef IDEM_RESEND_REFUSALS
# define IDEM_RESEND_REFUSALS 3
#endif

/* The words of the refusal of a duplicate with other args under
** args_mismatch=error (idem_claim.c writes them; idem_refusal() in
** idem_options.c recognises them, so that no package matches text). */
#define IDEM_ARGS_MISMATCH_TEXT "was already used with other arguments"

/* SQLITE_RESULT_SUBTYPE (3.45): a function that sets a subtype (JSON,
** 'J') says so; a SQLite built with SQLITE_STRICT_SUBTYPE (APSW's, for
** one) refuses it otherwise.  Older SQLite ignores the flag, which its
** headers lack. */
#ifndef SQLITE_RESULT_SUBTYPE
# define SQLITE_RESULT_SUBTYPE 0x001000000
#endif

/* A local claim made in the open transaction, and the savepoint level it
** was made at (0: outside every savepoint; N+1: inside savepoint N). */
typedef struct IdemTxnClaim IdemTxnClaim;
struct IdemTxnClaim {
  unsigned char aKey[IDEM_KEY_BYTES];
  int iLevel;
};

/*
** The format of a table's shadow tables, recorded in <name>_config
** (k = 'format').  Format 1 (idem 1.0.0) had no <name>_config and no
** keyargs, owner or expires columns, format 2 (idem 1.x) no honours_key
** or sends; each is upgraded in place to format 3 by the first write of a
** build that knows format 3, and stays format 3.  Format 4 (a new table,
** IDEM_FORMAT) is format 3 without the index UNIQUE(created, rid): created
** never goes back in rid order, so a range of created is a range of rids
** (idem_rows.c, ORDER).  A format above IDEM_FORMAT is refused with an
** error naming both (doc/choices.md).
*/
#define IDEM_FORMAT 4
#define IDEM_FORMAT_UPGRADE 3   /* what formats 1 and 2 are upgraded to */

/*
** The statements of a connection that are running and write (idem's own
** are never left running between their steps), each with its run count:
** together they tell one execution of a statement from another.
*/
#define IDEM_SET_STMTS 4
typedef struct IdemStmtSet IdemStmtSet;
struct IdemStmtSet {
  int n;                                /* Statements in ap[] */
  sqlite3_stmt *ap[IDEM_SET_STMTS];     /* The busy writing statements */
  int aRun[IDEM_SET_STMTS];             /* SQLITE_STMTSTATUS_RUN of each */
};

/*
** One statement of several rows, while it runs: SQLite opens a statement
** savepoint for it (xSavepoint, then xRelease or xRollbackTo at its end),
** or runs it as a transaction of its own (autocommit: xBegin ... xCommit).
** What its claims under OR IGNORE found: one that both claims and finds
** claims held would leave its caller unable to tell its own from
** changes() (doc/contract.md §4).
*/
#define IDEM_NWINDOW 8
typedef struct IdemWindow IdemWindow;
struct IdemWindow {
  int iLevel;                 /* Its savepoint; -1: the whole transaction */
  IdemStmtSet set;            /* The statements running when it opened */
  unsigned char bOwn;         /* It claimed a call */
  unsigned char bDup;         /* It found a call already claimed */
};

typedef struct IdemVtab IdemVtab;
/*
** The claim's INSERT's bindings, kept from one claim to the next
** (idem_claim.c, "THE CLAIM'S BINDINGS, KEPT"): the table's own copies of
** the values, to which its parameters stay bound.  ?3 who, ?4 conv, ?5
** tool, ?6 args, ?13 keyargs and ?14 owner are aVal[0..5].
*/
#define IDEM_INS_NVAL     6
#define IDEM_INS_KEEP_MAX 4096      /* a longer value is bound where it lies */
typedef struct IdemInsKept IdemInsKept;
struct IdemInsKept {
  int bBound;                 /* IDEM_STMT_INSERT is bound as below (cleared
                              ** where it is prepared or its bindings are) */
  signed char eUtf8;          /* The database's encoding: 1 UTF-8, -1 not,
                              ** 0 not read yet */
  unsigned char aKey[IDEM_KEY_BYTES];  /* ?1 */
  char zNow[IDEM_TIME_LEN];   /* ?12 (created and updated), */
  int nNow;                   /* ... its length */
  const char *zKind;          /* ?7: "local" or "external", a constant */
  int iHon;                   /* ?15 */
  int bSends;                 /* ?16: 1, or NULL (0) */
  struct IdemInsVal {
    char *z;                  /* The copy (sqlite3_malloc'd) */
    int nAlloc;               /* Its room */
    int n;                    /* The bytes bound */
    int eType;                /* SQLITE_TEXT, _BLOB or _NULL bound; 0:
                              ** bind again */
  } aVal[IDEM_INS_NVAL];
};

struct IdemVtab {
  sqlite3_vtab base;          /* Base class.  Must be first */
  sqlite3 *db;                /* The database connection */
  char *zDb;                  /* Schema: "main", "temp", or attached */
  char *zName;                /* Name of the virtual table */
  IdemOptions opt;            /* The table's options */
  sqlite3_vfs *pVfs;          /* For the clock */
  sqlite3_stmt *aStmt[IDEM_NSTMT];  /* Prepared on first use */
  unsigned char aLent[IDEM_NSTMT];  /* True while a cursor uses aStmt[i] */
  IdemJson *pJson;            /* Canonicalizer for args and reply */
  IdemJson *pJsonKey;         /* Canonicalizer for keyargs */
  int iFormat;                /* Format of the shadow tables (IDEM_FORMAT) */
  unsigned char aStale[IDEM_NSTMT]; /* Finalize aStmt[i] when given back */
  IdemTimeText now;           /* The last second formatted (idem_time.c) */
  char zNextSweep[IDEM_TIME_LEN];   /* retain: no call expires before this
                                    ** ("": look at the next claim) */
  char *zDamaged;             /* Why claims are refused, or NULL */
  IdemDurable durable;        /* The durability verdict (idem_durable.c) */
  sqlite3_int64 aCookie[2];   /* zDb's schema cookie and the times its
                              ** statement was prepared again, at that
                              ** check (idemSchemaCookies()) */
  int bClaimSeen;             /* ... which found <name>_claim, idem's */
  char *zUnusable;            /* Made with an option this build does not
                              ** know: all but DROP TABLE is refused */
  IdemTxnClaim *aTxn;         /* Local claims of the open transaction */
  int nTxn;                   /* Their number */
  int nTxnAlloc;              /* Room in aTxn[] */
  int iTxnLevel;              /* The current savepoint level */
  IdemWindow aWin[IDEM_NWINDOW];  /* Statements of several rows running */
  int nWin;                   /* Their number */
  struct IdemOpenList *pOpen; /* The connection's open tables, for
                              ** idem_options() (idem_vtab.c) */
  IdemVtab *pNextOpen;        /* The next one in that list */
  unsigned int nWrite;        /* xUpdate calls and rollbacks: a count
                              ** that tells whether rows may have changed */
  sqlite3_stmt *pPark;        /* An UPDATE's closed cursor's query, still
                              ** on its row (idemStmtPark()), or NULL */
  int iPark;                  /* Its IDEM_STMT_* number */
  int bParkLent;              /* It is lent (else a private copy) */
  unsigned int nParkWrite;    /* nWrite when its cursor reached the row */
  int bParkKey;               /* Its query has no key column: the row's is */
  unsigned char aParkKey[IDEM_KEY_BYTES];  /* ... this one, which it bound */
  sqlite3_int64 iParkRid;     /* Its row's rid */
  void *pSpareCursor;         /* A closed cursor kept for the next xOpen */
  void *pCopies;              /* A replay's column copies (idem_vtab.c) */
  /* The key ?1 of lent query i is bound to, once for the statement's life
  ** (idem_vtab.c, idemBindKey()); aQKeyBound[i] cleared when aStmt[i] is
  ** prepared. */
  unsigned char aQKeyBound[IDEM_STMT_Q_KEYMAIN_U+1];
  unsigned char aQKey[IDEM_STMT_Q_KEYMAIN_U+1][IDEM_KEY_BYTES];
  IdemInsKept ins;            /* The claim's INSERT's bindings (idem_claim.c) */
};

/* The names of the columns, by IDEM_COL_* number. */
IDEM_PRIVATE_DATA const char *const azIdemCol[IDEM_NCOL];

/* The table's error message: "idem: <table>: " and the printf-style text
** (the one place the prefix is written: callers give the text alone);
** the table's error for a failed statement, "idem: <table>:
** <sqlite3_errmsg>", which returns rc; and the table's error handed over
** to *pzErr, where SQLite takes it from there (xCreate, xConnect,
** xIntegrity). */
IDEM_PRIVATE void idemVtabError(IdemVtab *p, const char *zFmt, ...);
IDEM_PRIVATE int idemVtabDbError(IdemVtab *p, int rc);
IDEM_PRIVATE void idemVtabErrorTo(IdemVtab *p, char **pzErr);
/* The one exception: the durability check's message, made whole by
** idem_durable.c, taken as the table's error as it is. */

/* Statement i of the table in *ppStmt, prepared if need be, for the
** caller to bind, step and reset before it returns.  SQLITE_OK, or an
** error code with the message in the table. */
IDEM_PRIVATE int idemStmt(IdemVtab *p, int i, sqlite3_stmt **ppStmt);

/* Lend query i to a cursor (*pbLent), or give it a private copy while
** another cursor has it; give it back with idemStmtGiveBack(). */
IDEM_PRIVATE int idemStmtLend(IdemVtab *p, int i, sqlite3_stmt **ppStmt,
                              int *pbLent);
IDEM_PRIVATE void idemStmtGiveBack(IdemVtab *p, int i, sqlite3_stmt *pStmt,
                                   int bLent);

/* Keep the query of an UPDATE's cursor, closed on its row, for the
** xUpdate that follows (idemStmtParked(): the row if it is iRid and
** nothing was written since nWrite); give it back (idemStmtUnpark(), at
** the end of every xUpdate, at the next lend, at the transaction's end).
** aKey: the key the query bound, where it leaves the key column out
** (IdemVtab.aParkKey), else NULL; piRid: its row's rid where the cursor
** read it already, else NULL. */
IDEM_PRIVATE void idemStmtPark(IdemVtab *p, int i, sqlite3_stmt *pStmt,
                               int bLent, unsigned int nWrite,
                               const unsigned char *aKey,
                               const sqlite3_int64 *piRid);
IDEM_PRIVATE sqlite3_stmt *idemStmtParked(IdemVtab *p, sqlite3_int64 iRid,
                                          unsigned int nWrite);
IDEM_PRIVATE void idemStmtUnpark(IdemVtab *p);

/* The shadow tables: create them (xCreate), or check them and read their
** format (xConnect); upgrade a format-1 table before its first write;
** drop and rename them with the table: SQLITE_OK, or the error with the
** table's message.  The suffixes of their names (xShadowName); release
** what the store holds of p (disconnect). */
IDEM_PRIVATE int idemStoreCreate(IdemVtab *p);
IDEM_PRIVATE int idemStoreConnect(IdemVtab *p);
IDEM_PRIVATE int idemStoreUpgrade(IdemVtab *p);
IDEM_PRIVATE int idemStoreDrop(IdemVtab *p);
IDEM_PRIVATE int idemStoreRename(IdemVtab *p, const char *zNew);
IDEM_PRIVATE int idemStoreShadowName(const char *zName);
IDEM_PRIVATE void idemStoreClose(IdemVtab *p);

/* Check the shadow table again if the schema changed since the last
** check (p->zDamaged then says why claims are refused).  Claimable: the
** same, and SQLITE_CORRUPT_VTAB with the damage as the table's error. */
IDEM_PRIVATE int idemStoreRecheck(IdemVtab *p);
IDEM_PRIVATE int idemStoreClaimable(IdemVtab *p);

/* The claim's INSERT (IDEM_STMT_INSERT), prepared if need be right after
** a damage check (claims refused: SQLITE_CORRUPT_VTAB); run it, bound by
** the caller, with idemStoreInsertStep(): SQLITE_DONE or the error's code;
** SQLITE_SCHEMA: the schema changed, nothing was written, and the next
** idemStoreInsert() checks and prepares again (bind and step again).  Its
** bindings are kept after the step if bKeep (IdemVtab.ins says them),
** else cleared (and p->ins.bBound with them). */
IDEM_PRIVATE int idemStoreInsert(IdemVtab *p, sqlite3_stmt **ppIns);
IDEM_PRIVATE int idemStoreInsertStep(IdemVtab *p, sqlite3_stmt *pIns,
                                     int bKeep);

/* The local claims of the open transaction (doc/contract.md §4: none may
** commit pending).  Reserve room for one more before the claim's write,
** so that recording it after cannot fail: SQLITE_OK or SQLITE_NOMEM.
** The rest follow the module's transaction slots. */
IDEM_PRIVATE int idemTxnReserve(IdemVtab *p);
IDEM_PRIVATE void idemTxnAdd(IdemVtab *p, const unsigned char aKey[IDEM_KEY_BYTES]);
IDEM_PRIVATE void idemTxnClear(IdemVtab *p);
/* xBegin: a transaction starts (idemTxnClear(), and in autocommit the
** statement that starts it is its window). */
IDEM_PRIVATE void idemTxnBegin(IdemVtab *p);
/* The window of the statement running now, if it is one of several rows,
** else NULL. */
IDEM_PRIVATE IdemWindow *idemTxnWindow(IdemVtab *p);
IDEM_PRIVATE void idemTxnSavepoint(IdemVtab *p, int iSavepoint);
IDEM_PRIVATE void idemTxnRelease(IdemVtab *p, int iSavepoint);
IDEM_PRIVATE void idemTxnRollbackTo(IdemVtab *p, int iSavepoint);

/**************************************************************************
** Interface to code in idem_rows.c (what the rows promise: format 4's
** order, integrity_check):
*/

#define IDEM_RID_MIN (-(sqlite3_int64)0x7fffffffffffffff - 1)
#define IDEM_RID_MAX ((sqlite3_int64)0x7fffffffffffffff)
/* Format 4: the first rid from which every row's created is above pLo
** (at or above if bGe), into *piFrom: SQLITE_OK; SQLITE_DONE if no row's
** is; or the error with the table's message.  O(log n) seeks. */
IDEM_PRIVATE int idemRowsFrom(IdemVtab *p, sqlite3_value *pLo, int bGe,
                              sqlite3_int64 *piFrom);
/* Format 4: a claim's INSERT that NOT NULL refused (its created, at the
** largest rid or after a damaged last row): the table's message, and
** SQLITE_FULL or SQLITE_CORRUPT_VTAB. */
IDEM_PRIVATE int idemRowsRefused(IdemVtab *p);
#if SQLITE_VERSION_NUMBER>=3044000
/* PRAGMA integrity_check: a finding in *pzErr, with SQLITE_OK. */
IDEM_PRIVATE int idemRowsIntegrity(IdemVtab *p, const char *zSchema,
                                   char **pzErr);
#endif

/**************************************************************************
** Interface to code in idem_options.c (a claim table's options):
*/

/* The module arguments azArg[0..nArg) parsed into *pOpt, as CREATE
** VIRTUAL TABLE and idem_parse_options() parse them. */
IDEM_PRIVATE int idemOptionParseAll(IdemOptions *pOpt, int nArg,
                                    const char *const *azArg, int bTwiceOk,
                                    char **pzErr);
/* idem_parse_options(), idem_limits() and idem_refusal(). */
IDEM_PRIVATE int idemOptionRegister(sqlite3 *db);
/* The options as JSON, appended to s: what idem_options() returns. */
IDEM_PRIVATE void idemOptionJson(sqlite3_str *s, const IdemOptions *pOpt);
IDEM_PRIVATE int idemOptionMaxSends(const IdemOptions *pOpt);
IDEM_PRIVATE sqlite3_int64 idemOptionResendAfter(const IdemOptions *pOpt);

/**************************************************************************
** Interface to code in idem_claim.c (the claim, and what the rules after
** it share):
*/

/* A call's status, stored or asked for. */
typedef enum IdemStatus {
  IDEM_STATUS_PENDING,        /* claimed, outcome not recorded yet */
  IDEM_STATUS_DONE,           /* recorded: final */
  IDEM_STATUS_FAILED,         /* a local call that failed, kept: final */
  IDEM_STATUS_UNKNOWN,        /* an external call that failed: reconcile it */
  IDEM_STATUS_OTHER,          /* any other text (a bad UPDATE, a damaged row) */
  IDEM_STATUS_NULL,           /* UPDATE ... SET status = NULL */
  IDEM_STATUS_ABSENT          /* an UPDATE that leaves status alone */
} IdemStatus;

/* The text of the four stored statuses, by IdemStatus. */
IDEM_PRIVATE_DATA const char *const azIdemStatus[IDEM_STATUS_OTHER];

/* The status named by text z (NULL: a stored NULL, shown as "");
** IDEM_STATUS_OTHER for any other text. */
IDEM_PRIVATE IdemStatus idemStatusParse(const char *z);
/* A decided call (done, or failed and kept) is final. */
IDEM_PRIVATE int idemIsDecided(IdemStatus e);
/* The text of a value that must be one word (a status, a kind, a
** verdict), or 0: not text, or text with an embedded NUL (*pbNoMem set
** on OOM). */
IDEM_PRIVATE const char *idemWordValue(sqlite3_value *pVal, int *pbNoMem);
/* The text of column iCol of pStmt's row, or "". */
IDEM_PRIVATE const char *idemText(sqlite3_stmt *pStmt, int iCol);

/* The inner writes on the shadow tables: a bind that failed (bindings
** cleared, the table's message set; returns rc); did the write change
** the rows it must (else SQLITE_CORRUPT_VTAB with the message); the error
** of one that failed (never an ignorable SQLITE_CONSTRAINT); run and
** reset a bound statement (SQLITE_DONE or the error). */
IDEM_PRIVATE int idemBindError(IdemVtab *p, sqlite3_stmt *pStmt, int rc);
IDEM_PRIVATE int idemCheckChanges(IdemVtab *p, const char *zWhat,
                                  int bAtLeast, int nWant);
IDEM_PRIVATE int idemInnerError(IdemVtab *p, int rc);
IDEM_PRIVATE int idemStepReset(sqlite3_stmt *pStmt);

/* Release a call: delete its whole group, so that it may be claimed
** again. */
IDEM_PRIVATE int idemRelease(IdemVtab *p,
                             const unsigned char aKey[IDEM_KEY_BYTES]);

/* xUpdate's INSERT: a claim or a member row. */
IDEM_PRIVATE int idemClaimInsert(IdemVtab *p, sqlite3_value **aCol,
                                 sqlite3_int64 *pRowid);

/**************************************************************************
** Interface to code in idem_outcome.c (a call's outcome):
*/

/* xUpdate's UPDATE and DELETE of the row with rid iRid.  pRow: NULL, or
** a query positioned on that row as it is now (the UPDATE's cursor), in
** the columns of IDEM_STMT_BYRID, which the UPDATE reads and leaves;
** aRowKey: NULL, or the row's key where pRow leaves its key column out;
** bMain: pRow's query has member = 0 in its text (its row is a main row,
** whose member column need not be read); mGiven: the columns of aCol
** that the UPDATE gives (IDEM_COLBIT() of each column for which
** sqlite3_value_nochange() is false), asked once. */
IDEM_PRIVATE int idemOutcomeUpdate(IdemVtab *p, sqlite3_int64 iRid,
                                   sqlite3_stmt *pRow,
                                   const unsigned char *aRowKey, int bMain,
                                   sqlite3_uint64 mGiven,
                                   sqlite3_value **aCol);
IDEM_PRIVATE int idemOutcomeDelete(IdemVtab *p, sqlite3_int64 iRid);

/* The reply a duplicate arrival hands back (the hidden column reply).
** An external call's carries "sends" (nSends; -1 for a local call). */
IDEM_PRIVATE int idemReply(IdemVtab *p, sqlite3_value *pId,
                           sqlite3_value *pResult, const char *zStatus,
                           const char *zNote, sqlite3_int64 nSends,
                           char **pzOut);

/* doc/contract.md §14: when a call may be taken for sending again, as Unix
** time in milliseconds, or -1 if it never may (the hidden column
** resend_at): from its status, kind, honours_key, sends and updated. */
IDEM_PRIVATE sqlite3_int64 idemResendAt(const IdemOptions *pOpt,
    const char *zStatus, const char *zKind, int bHonours,
    sqlite3_int64 nSends, const char *zUpdated);

/**************************************************************************
** Interface to code in idem_commit.c (the commit guard):
*/

/* xSync: refuse to commit a local claim of this transaction that is
** still pending, or a recorded one whose transaction's files would not
** commit as one (doc/contract.md §4). */
IDEM_PRIVATE int idemCommitSync(IdemVtab *p);

/**************************************************************************
** Interface to code in idem_vtab.c (the idem module: slots, plans, cursor):
*/
IDEM_PRIVATE int idemVtabRegister(sqlite3 *db);

/**************************************************************************
** Interface to code in idem_versioned.c:
*/
IDEM_PRIVATE int idemVersionedRegister(sqlite3 *db);

#endif /* IDEMINT_H */

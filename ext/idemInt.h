/*
** idemInt.h -- the private header of idem: what the parts share.
**
** The extension is built as one translation unit: ext/idem.c #includes
** every part, so IDEM_PRIVATE is "static" and sqlite3_idem_init() is the
** only symbol the library exports.  Each part also compiles on its own
** (cc -fsyntax-only -Iinclude -Iext ext/idem_X.c; test/parts.test does it),
** which keeps this header the one place where parts meet: a part uses
** another only through the types and prototypes below, under the heading
** of the file that defines them.
**
**   idem_number.c     RFC 8785 / ECMAScript number text
**   idem_canonical.c  canonical JSON (RFC 8785) and idem_canonical()
**   idem_key.c        the key of a call, idem_key(), idem_header(), and
**                     the error helper of the SQL functions
**   idem_time.c       the clock and the stored time text
**   idem_vtab.c       the claim table's plumbing: the idem module's
**                     slots, statement cache and cursor
**   idem_claim.c      the claim's rules (doc/contract.md §4-5): options,
**                     status and kind, the transition function, writes,
**                     and the reply
**   idem_versioned.c  the version guard for ordinary tables
*/
#ifndef IDEMINT_H
#define IDEMINT_H

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#include <string.h>
#include <stdint.h>
#include <stdarg.h>

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

/* The key: 16 bytes, shown as 32 lowercase hex digits (include/idem.h). */
#define IDEM_KEY_BYTES  16
#define IDEM_KEY_HEX    IDEM_KEY_HEX_LEN

/**************************************************************************
** Interface to code in idem_number.c:
*/

/* The RFC 8785 text of the validated number literal z[0..n) into zOut
** (room for n+40 bytes, no NUL); its length, or -1 on overflow. */
IDEM_PRIVATE int idemNumberCanonical(const char *z, int n, int iInt, int iFrac,
                                     char *zOut);

/* ECMAScript Number::toString(v) of a finite double into zOut (40 bytes,
** no NUL); its length. */
IDEM_PRIVATE int idemNumberFormat(double v, char *zOut);

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

IDEM_PRIVATE int idemCanonicalRegister(sqlite3 *db);

/**************************************************************************
** Interface to code in idem_key.c:
*/

/* A (pointer, length) view of one part of a call: who, conv, tool, args. */
typedef struct IdemPart IdemPart;
struct IdemPart {
  const void *p;            /* The part's bytes */
  sqlite3_int64 n;          /* Their number */
};

IDEM_PRIVATE void idemKeyHash(const IdemPart aPart[4],
                              unsigned char aKey[IDEM_KEY_BYTES]);
IDEM_PRIVATE void idemKeyHex(const unsigned char aKey[IDEM_KEY_BYTES],
                             char zHex[IDEM_KEY_HEX+1]);
IDEM_PRIVATE int idemKeyFromHex(const char *z, sqlite3_int64 n,
                                unsigned char aKey[IDEM_KEY_BYTES]);
IDEM_PRIVATE int idemKeyPart(sqlite3_value *pVal, IdemPart *pPart);
IDEM_PRIVATE int idemKeyRegister(sqlite3 *db);

/**************************************************************************
** Interface to code in idem_vtab.c:
*/
IDEM_PRIVATE int idemVtabRegister(sqlite3 *db);

/**************************************************************************
** Interface to code in idem_versioned.c:
*/
IDEM_PRIVATE int idemVersionedRegister(sqlite3 *db);

#endif /* IDEMINT_H */

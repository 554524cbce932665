/* SPDX-License-Identifier: MIT */
/*
** idem.h -- the public header of idem, for applications that link the
** extension statically (build/libidem.a, built with -DSQLITE_CORE).
**
**   #include <sqlite3.h>
**   #include "idem.h"
**
**   sqlite3_auto_extension((void(*)(void))sqlite3_idem_init);
**   ... every connection opened afterwards has idem_key(), idem_canonical(),
**   idem_header(), idem_version(), idem_versioned() and the idem module.
**
** or, for one connection only:
**
**   sqlite3_idem_init(db, &zErr, 0);
**
** Applications that load build/idem.so at run time need no header: the
** loader finds sqlite3_idem_init by name.
*/
#ifndef IDEM_H
#define IDEM_H

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version this header describes; idem_version() returns the same. */
#define IDEM_VERSION "2.0.0"

/* The key's text form: 32 lowercase hex digits. */
#define IDEM_KEY_HEX_LEN 32

/*
** Register idem's functions and module on db.  pApi is ignored in the
** static build (pass 0).  Returns SQLITE_OK or an error code.
*/
int sqlite3_idem_init(sqlite3 *db, char **pzErrMsg,
                      const struct sqlite3_api_routines *pApi);

#ifdef __cplusplus
}
#endif
#endif /* IDEM_H */

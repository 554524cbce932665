/* SPDX-License-Identifier: MIT */
/*
** idem_time.c -- the clock, and the time text the claim table stores.
**
**   idemNow(pVfs, zOut)        the current time, UTC, from the VFS's clock
**   idemNowMs(pVfs)            the same, as Unix time in milliseconds
**   idemFormatTime(ms, zOut)   Unix time in milliseconds as text
**
** Both write 'YYYY-MM-DD HH:MM:SS.SSS', the form of SQLite's
** strftime('%Y-%m-%d %H:%M:%f'), into IDEM_TIME_LEN bytes: the created and
** updated columns of a claim, and a created bound given as a number.
*/
#include "idemInt.h"

/* The n decimal digits of v (0 <= v < 10^n), leading zeros included. */
static void idemPutDigits(char *z, int v, int n){
  while( n-- > 0 ){
    z[n] = (char)('0' + v%10);
    v /= 10;
  }
}

/*
** Format a Unix time in milliseconds (clamped to 0000-01-01 ..
** 9999-12-31 23:59:59.999).  The civil date comes from the day count in
** 400-year eras of 146097 days whose years start on March 1st, so that
** leap days fall at a year's end.
*/
IDEM_PRIVATE void idemFormatTime(sqlite3_int64 ms, char zOut[IDEM_TIME_LEN]){
  sqlite3_int64 z, era, doe, yoe, doy, mp, y, m, d, sod;
  if( ms<0 ) ms = 0;
  if( ms>253402300799999 ) ms = 253402300799999;  /* 9999-12-31 23:59:59.999 */
  z = ms / 86400000 + 719468;          /* days since 0000-03-01 */
  sod = ms % 86400000;                 /* ms since midnight */
  era = z / 146097;
  doe = z - era*146097;                                   /* [0, 146096] */
  yoe = (doe - doe/1460 + doe/36524 - doe/146096) / 365;  /* [0, 399] */
  y = yoe + era*400;
  doy = doe - (365*yoe + yoe/4 - yoe/100);                /* [0, 365] */
  mp = (5*doy + 2)/153;                                   /* [0, 11] */
  d = doy - (153*mp + 2)/5 + 1;
  m = mp<10 ? mp+3 : mp-9;
  if( m<=2 ) y++;
  /* Digit by digit: a claim formats the time on every INSERT, and this is
  ** a tenth of the cost of sqlite3_snprintf(). */
  idemPutDigits(zOut, (int)y, 4);
  zOut[4] = '-';
  idemPutDigits(zOut+5, (int)m, 2);
  zOut[7] = '-';
  idemPutDigits(zOut+8, (int)d, 2);
  zOut[10] = ' ';
  idemPutDigits(zOut+11, (int)(sod/3600000), 2);
  zOut[13] = ':';
  idemPutDigits(zOut+14, (int)(sod/60000%60), 2);
  zOut[16] = ':';
  idemPutDigits(zOut+17, (int)(sod/1000%60), 2);
  zOut[19] = '.';
  idemPutDigits(zOut+20, (int)(sod%1000), 3);
  zOut[23] = 0;
}

/*
** The current time, from the VFS's clock (the clock SQLite's 'now' reads),
** as Unix time in milliseconds.
*/
IDEM_PRIVATE sqlite3_int64 idemNowMs(sqlite3_vfs *pVfs){
  sqlite3_int64 iJdMs = 0;
  if( pVfs->iVersion>=2 && pVfs->xCurrentTimeInt64 ){
    pVfs->xCurrentTimeInt64(pVfs, &iJdMs);
  }else{
    double r = 0.0;
    pVfs->xCurrentTime(pVfs, &r);
    iJdMs = (sqlite3_int64)(r*86400000.0);
  }
  return iJdMs - (sqlite3_int64)210866760000000;
}

/* The same, as the stored time text. */
IDEM_PRIVATE void idemNow(sqlite3_vfs *pVfs, char zOut[IDEM_TIME_LEN]){
  idemFormatTime(idemNowMs(pVfs), zOut);
}

/* SPDX-License-Identifier: MIT */
/*
** idem_time.c -- the clock, and the time text the claim table stores.
**
**   idemNow(pVfs, zOut)        the current time, UTC, from the VFS's clock
**   idemNowMs(pVfs)            the same, as Unix time in milliseconds
**   idemFormatTime(ms, zOut)   Unix time in milliseconds as text
**   idemFormatTimeKept(pC, ms, zOut)   the same, its second's text kept
**   idemParseTime(z)           that text back as Unix time in milliseconds
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

/* idemFormatTime(), the date and time of the second kept in *pC: only the
** milliseconds are written when ms falls in the second formatted last. */
IDEM_PRIVATE void idemFormatTimeKept(IdemTimeText *pC, sqlite3_int64 ms,
                                     char zOut[IDEM_TIME_LEN]){
  if( ms<0 || ms>253402300799999 ){
    idemFormatTime(ms, zOut);           /* (clamped there) */
    return;
  }
  if( ms/1000!=pC->iSec ){
    idemFormatTime(ms, pC->z);
    pC->iSec = ms/1000;
  }
  memcpy(zOut, pC->z, 20);              /* 'YYYY-MM-DD HH:MM:SS.' */
  idemPutDigits(zOut+20, (int)(ms%1000), 3);
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

/* The value of the n decimal digits at z, or -1 if one is not a digit. */
static int idemGetDigits(const char *z, int n){
  int v = 0;
  while( n-- > 0 ){
    if( *z<'0' || *z>'9' ) return -1;
    v = v*10 + (*z++ - '0');
  }
  return v;
}

/*
** The text idemFormatTime() writes, 'YYYY-MM-DD HH:MM:SS.SSS', as Unix time
** in milliseconds (the inverse of its civil date: days from the era of
** 400 years), or -1 if z is not that form (a damaged row, NULL).
*/
IDEM_PRIVATE sqlite3_int64 idemParseTime(const char *z){
  int y, m, d, hh, mi, ss, ms;
  sqlite3_int64 era, yoe, doy, doe, days;
  if( z==0 || strlen(z)!=IDEM_TIME_LEN-1 || z[4]!='-' || z[7]!='-'
   || z[10]!=' ' || z[13]!=':' || z[16]!=':' || z[19]!='.' ){
    return -1;
  }
  y = idemGetDigits(z, 4);     m = idemGetDigits(z+5, 2);
  d = idemGetDigits(z+8, 2);   hh = idemGetDigits(z+11, 2);
  mi = idemGetDigits(z+14, 2); ss = idemGetDigits(z+17, 2);
  ms = idemGetDigits(z+20, 3);
  if( y<0 || m<1 || m>12 || d<1 || d>31 || hh<0 || hh>23 || mi<0 || mi>59
   || ss<0 || ss>59 || ms<0 ){
    return -1;
  }
  if( m<=2 ) y--;
  era = y/400;
  yoe = y - era*400;                                      /* [0, 399] */
  doy = (153*(m>2 ? m-3 : m+9) + 2)/5 + d - 1;            /* [0, 365] */
  doe = yoe*365 + yoe/4 - yoe/100 + doy;                  /* [0, 146096] */
  days = era*146097 + doe - 719468;
  if( days<0 ) return -1;
  return days*86400000 + hh*3600000 + mi*60000 + ss*1000 + ms;
}

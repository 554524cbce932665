/* SPDX-License-Identifier: MIT */
/*
** tclsh.c -- tclsh built with the sanitizers, for make test-asan.
**
**   cc -fsanitize=address,undefined -I/usr/include/tcl8.6 \
**      -o build/asan/tclsh test/oom/tclsh.c -ltcl8.6
**
** The Tcl suite loads the extension, built with -fsanitize=address,undefined,
** into tclsh, and the sanitizer runtime must be the first library of such
** a process.  This tclsh links it in itself, so the test processes need no
** LD_PRELOAD to run, and leak detection is on in them (detect_leaks=1,
** from ASAN_OPTIONS as the process starts).
**
** Some tests start other programs (the sqlite3 shell, the C compiler,
** python, node) which load the same extension: those run with LD_PRELOAD
** of the runtime, set by make test-asan.  Their own leaks are not ours, so
** once this process has read its options, it sets ASAN_OPTIONS to
** detect_leaks=0 for the programs it starts.  tcl/run.tcl starts each test
** file through IDEM_WRAP ("env ASAN_OPTIONS=detect_leaks=1") to turn it back
** on for the test processes themselves.
*/
#include <tcl.h>
#include <stdlib.h>

static int appInit(Tcl_Interp *interp){
  return Tcl_Init(interp);
}

int main(int argc, char **argv){
  setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
  Tcl_Main(argc, argv, appInit);
  return 0;
}

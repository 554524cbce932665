#!/bin/sh
# SPDX-License-Identifier: MIT
# mk/cached.sh OUT CMD...: run CMD, which makes the file OUT, or copy OUT
# from the machine's cache, where an earlier run of the same CMD left it.
# For SQLite's amalgamations only (make test-new, test-old, test-cross:
# the same third-party source in every clone, 10 to 30 s of CPU each):
# never for idem's own sources, which every clone builds.  The key is CMD
# itself, the first line of its compiler's --version, and the bytes of
# every file CMD names but OUT (the amalgamation); the cache is $IDEM_CACHE, else
# $XDG_CACHE_HOME/idem, else ~/.cache/idem (test/bindings.tcl's), under
# build-cache/; IDEM_CACHE=none builds every time.
set -u
out=$1; shift
if [ "${IDEM_CACHE:-}" = none ]; then exec "$@"; fi
if [ -n "${IDEM_CACHE:-}" ]; then cache=$IDEM_CACHE
elif [ -n "${XDG_CACHE_HOME:-}" ]; then cache=$XDG_CACHE_HOME/idem
elif [ -n "${HOME:-}" ] && [ -w "$HOME" ]; then cache=$HOME/.cache/idem
else exec "$@"; fi
key=$({
  printf '%s\n' "$@"
  "$1" --version 2>&1 | head -n 1
  for a in "$@"; do [ "$a" != "$out" ] && [ -f "$a" ] && sha256sum < "$a"; done
} | sha256sum | cut -c1-32)
dir=$cache/build-cache/$key
if [ -f "$dir/out" ]; then
  echo "$out: from the cache ($dir)"
  cp "$dir/out" "$out.tmp$$" && mv -f "$out.tmp$$" "$out" && exit 0
fi
"$@" || exit $?
# Kept aside, then renamed: another clone may be reading the same key.
if mkdir -p "$dir" 2>/dev/null && cp "$out" "$dir/out.tmp$$" 2>/dev/null; then
  mv -f "$dir/out.tmp$$" "$dir/out"
fi
exit 0

#!/bin/sh
# SPDX-License-Identifier: MIT
# test/spdx.sh -- every source file of idem starts with its licence line.
#
#   sh test/spdx.sh [DIR]          list the source files of DIR (default: the
#                                  repository) that lack the line; exit 1 if
#                                  there is one
#   sh test/spdx.sh --fix [DIR]    insert the line where it is missing
#
# The line is "SPDX-License-Identifier: MIT" in the file's comment syntax,
# on the first line, or on the second after a "#!" line.  Source files are
# C, headers, Tcl (.tcl, .test), Python, Go, JavaScript, shell, SQL, every
# Makefile and every file that starts with "#!".  In a git checkout the
# tracked files are checked (run it again after a merge: --fix is
# idempotent); elsewhere, every file under DIR but build/ and node_modules/.
# Third-party data (test/data/jcs, Apache-2.0) is not ours to relabel: its
# licence is named beside it.
LINE='SPDX-License-Identifier: MIT'
fix=0
if [ "$1" = "--fix" ]; then fix=1; shift; fi
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2

list() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files
  else
    find . -type f ! -path './build/*' ! -path '*/node_modules/*' \
      ! -path './.git/*' | sed 's|^\./||' | LC_ALL=C sort
  fi
}

# The comment that carries the line, for file $1; empty if not a source file.
comment() {
  case "$1" in
    test/data/jcs/*) return ;;
    *.c|*.h) echo "/* $LINE */" ;;
    *.go|*.js) echo "// $LINE" ;;
    *.sql) echo "-- $LINE" ;;
    *.tcl|*.test|*.py|*.sh|Makefile|*/Makefile|*.mk) echo "# $LINE" ;;
    *) if [ "$(head -c 2 "$1" 2>/dev/null)" = "#!" ]; then echo "# $LINE"; fi ;;
  esac
}

missing=0
for f in $(list); do
  [ -f "$f" ] || continue
  c=$(comment "$f")
  [ -n "$c" ] || continue
  if [ "$(head -c 2 "$f")" = "#!" ]; then at=2; else at=1; fi
  if sed -n "${at}p" "$f" | grep -qF "$LINE"; then continue; fi
  if [ $fix = 1 ]; then
    tmp="$f.spdx.$$"
    if [ $at = 2 ]; then
      { head -n 1 "$f"; echo "$c"; tail -n +2 "$f"; } > "$tmp"
    else
      { echo "$c"; cat "$f"; } > "$tmp"
    fi
    cat "$tmp" > "$f" && rm -f "$tmp"       # keeps the file's mode
    echo "added: $f"
  else
    echo "no SPDX line: $f"
    missing=$((missing + 1))
  fi
done
if [ $missing -gt 0 ]; then
  echo "$missing source file(s) without \"$LINE\" at the top: run sh test/spdx.sh --fix"
  exit 1
fi
exit 0

#!/usr/bin/env bash
# Every public header compiles alone (git's hdr-check): a C file that includes it, twice
# (its guard), and nothing else, compiled with the project's warnings. A header that leans
# on something its includer happened to include first fails here.
# usage: header-check.sh SOURCE_DIR CC [CFLAGS...]  (CFLAGS: the dependencies' -I flags)
set -euo pipefail
src=$1
cc=$2
shift 2

flags=(-std=c11 -D_GNU_SOURCE -fsyntax-only -Wall -Wextra -Werror -Wshadow -Wformat=2
	-Wno-format-nonliteral -Wmissing-prototypes -Wstrict-prototypes -I "$src/include" "$@")
bad=0
n=0
for h in "$src"/include/rm/*.h; do
	name=rm/$(basename "$h")
	n=$((n + 1))
	if ! out=$(printf '#include "%s"\n#include "%s"\n' "$name" "$name" |
		"$cc" "${flags[@]}" -x c - 2>&1); then
		echo "$name does not compile alone:" >&2
		echo "$out" >&2
		bad=1
	fi
done
[ "$n" -gt 0 ] || { echo "no headers under $src/include/rm" >&2; exit 1; }
[ "$bad" -eq 0 ] || exit 1
echo "header check: $n headers compile alone"

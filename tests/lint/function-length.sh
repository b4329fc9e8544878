#!/usr/bin/env bash
# No function in src/ is longer than MAX lines, counted from the line of its opening '{' to
# the line of its closing '}' (their distance: a body of 79 lines between them is 80).
# clang-format puts both braces of a definition alone at the start of a line, which is how
# a function is found. Prints FILE:LINE NAME (N lines) for each one over.
# usage: function-length.sh SOURCE_DIR [MAX] [FILE...]  (no FILE: every .c under src/)
set -euo pipefail
src=$1
max=${2:-80}
shift $(($# > 1 ? 2 : 1))

# Functions over the limit that another change splits, by name, each with a comment saying
# which change; the merge that brings the split removes the name. Empty now.
allow=()

cd "$src"
if [ $# -eq 0 ]; then
	mapfile -t files < <(find src -name '*.c' | LC_ALL=C sort)
else
	files=("$@")
fi

long=$(awk -v max="$max" '
	FNR == 1 { sig = ""; sigline = 0; open = 0 }
	# the first line of a definition: a declaration starting at column 0
	!open && /^[A-Za-z_]/ && !/^(typedef|struct [A-Za-z_0-9]* *\{|enum|union)/ {
		sig = $0; sigline = FNR
	}
	!open && /^\{$/ && sig != "" {
		open = FNR
		name = sig
		sub(/\(.*/, "", name)
		sub(/.*[^A-Za-z_0-9]/, "", name)
		next
	}
	open && /^\}$/ {
		n = FNR - open
		if (n > max)
			printf "%s:%d %s (%d lines)\n", FILENAME, sigline, name, n
		open = 0; sig = ""
	}
' "${files[@]}")

bad=0
while IFS= read -r line; do
	[ -n "$line" ] || continue
	name=${line#* }
	name=${name%% *}
	for a in ${allow[@]+"${allow[@]}"}; do
		if [ "$name" = "$a" ]; then
			echo "allowed for now: $line"
			continue 2
		fi
	done
	echo "$line" >&2
	bad=1
done <<<"$long"
if [ "$bad" -ne 0 ]; then
	echo "functions over $max lines: split them into their steps" >&2
	exit 1
fi
echo "function length: no function in ${#files[@]} files over $max lines"

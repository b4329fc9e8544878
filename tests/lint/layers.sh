#!/usr/bin/env bash
# The layer order of docs/architecture.md, checked: its module table lists the modules from the
# top (the command layer) down (util), each with its folder and public headers. A file of a
# module (src/<folder>/*, and its headers in include/rm/) may include the headers of its own
# module and of the modules below it, never one above; a folder under src/ or a header in
# include/rm/ that the table does not name is an error too, so the table cannot go stale.
#   layers.sh ROOT    (exit 1 and one line per upward include)
set -euo pipefail
root=${1:?usage: layers.sh ROOT}
doc=$root/docs/architecture.md

# "rank folder header header ..." per row of the module table, top first.
table=$(awk -F'|' '
	/^\| module \| folder \| public header/ { on = 1; next }
	on && /^\|---/ { next }
	on && !/^\|/ { exit }
	on {
		folder = $3; gsub(/[ `]/, "", folder); sub(/^src\//, "", folder)
		line = NR - 0; out = rank++ " " folder
		h = $4
		while (match(h, /`[a-z_]+\.h`/)) {
			out = out " " substr(h, RSTART + 1, RLENGTH - 2); h = substr(h, RSTART + RLENGTH)
		}
		print out
	}' "$doc")
[ -n "$table" ] || { echo "layers: no module table in $doc"; exit 1; }

declare -A rank_of_folder rank_of_header
while read -r rank folder headers; do
	rank_of_folder[$folder]=$rank
	for h in $headers; do rank_of_header[$h]=$rank; done
done <<<"$table"
# generated from CMake's project(): util's
rank_of_header[version.h]=${rank_of_folder[util]:?util is not in the module table}

bad=0
for d in "$root"/src/*/; do
	f=$(basename "$d")
	[ -n "${rank_of_folder[$f]:-}" ] || { echo "layers: src/$f is not in docs/architecture.md's module table"; bad=1; }
done
for h in "$root"/include/rm/*.h; do
	h=$(basename "$h")
	[ -n "${rank_of_header[$h]:-}" ] || { echo "layers: include/rm/$h is not in docs/architecture.md's module table"; bad=1; }
done

check() { # FILE RANK: every rm/ include and every ../<folder>/ include is at RANK or below
	local file=$1 own=$2 inc r
	while IFS= read -r inc; do
		case $inc in
		rm/*) r=${rank_of_header[${inc#rm/}]:-} ;;
		../*/*) inc=${inc#../}; r=${rank_of_folder[${inc%%/*}]:-} ;;
		*) continue ;;
		esac
		[ -n "$r" ] || continue # named nowhere: reported above
		if [ "$r" -lt "$own" ]; then
			echo "layers: ${file#"$root"/} includes \"$inc\", a module above its own"
			bad=1
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
}
for d in "$root"/src/*/; do
	f=$(basename "$d")
	[ -n "${rank_of_folder[$f]:-}" ] || continue
	for file in "$d"*.c "$d"*.h; do
		[ -e "$file" ] && check "$file" "${rank_of_folder[$f]}"
	done
done
for h in "$root"/include/rm/*.h; do
	r=${rank_of_header[$(basename "$h")]:-}
	[ -n "$r" ] && check "$h" "$r"
done
[ $bad = 0 ] && echo "layers: $(wc -l <<<"$table") modules, no upward include"
exit $bad

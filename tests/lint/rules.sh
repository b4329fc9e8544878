#!/usr/bin/env bash
# The rules docs/architecture.md states for the whole tree, checked (each prints what breaks
# it):
#   - the Engine API (rm_engine_*() calls) is used from src/engine and src/launcher only;
#   - every external symbol of librm starts with rm_;
#   - no function name is defined in two files (static ones included);
#   - src/runner reads no SLURM_* variable and names no launcher's context key;
#   - only main() exits (no exit() outside src/cmd/main.c; a child's _exit is fine);
#   - no caller classifies an error by searching its message;
#   - every function a public header declares is defined in librm.
#   rules.sh ROOT LIBRM   (LIBRM: the built librm.a)
set -euo pipefail
root=${1:?usage: rules.sh ROOT LIBRM} lib=${2:?usage: rules.sh ROOT LIBRM}
bad=0
say() {
	echo "rules: $*"
	bad=1
}
# C source without its string literals and comments (a message may say anything).
code() {
	sed -e 's/"\([^"\\]\|\\.\)*"/""/g' -e 's|//.*||' "$@"
}

while IFS= read -r f; do
	case $f in "$root"/src/engine/* | "$root"/src/launcher/*) continue ;; esac
	if code "$f" | grep -qE '\brm_engine_[a-z_]+\('; then
		say "${f#"$root"/} calls the Engine API (only src/engine and src/launcher may)"
	fi
	if code "$f" | grep -qE '(^|[^_[:alnum:]])exit\(' && [ "$f" != "$root/src/cmd/main.c" ]; then
		say "${f#"$root"/} calls exit() (only main() exits: return an error)"
	fi
	if grep -qE 'strstr\([^)]*(err->msg|err\.msg|\.msg\b)' "$f"; then
		say "${f#"$root"/} searches an error's message (test its kind or sys_errno)"
	fi
done < <(find "$root/src" -name '*.c' -o -name '*.h' | sort)

for f in "$root"/src/runner/*.c "$root"/src/runner/*.h; do
	if code "$f" | grep -q 'SLURM_' || grep -qE '"(slurm|distributed)"' "$f"; then
		say "${f#"$root"/} knows a launcher's variables or context keys (they belong to the launcher)"
	fi
done

# (a sanitizer's own symbols, __odr_asan.* and the like, are the compiler's)
others=$(nm -g --defined-only "$lib" | awk 'NF == 3 && $2 ~ /^[TDBRC]$/ && $3 !~ /^(rm_|__)/ { print $3 }')
[ -z "$others" ] || say "symbols of librm without the rm_ prefix: $(echo "$others" | tr '\n' ' ')"
# Definitions in the sources: a line at column 0 that names a function and ends no
# declaration, then "{" at column 0 (the parameters may take several lines).
twice=$(for f in "$root"/src/*/*.c; do
	awk -v f="${f#"$root"/}" '
		/^[a-z].*[ *][a-z_][a-z_0-9]*\(/ && !/;[[:space:]]*$/ {
			s = $0; sub(/\(.*/, "", s); sub(/.*[ *]/, "", s); cand = s }
		$0 == "{" && cand != "" { print cand, f; cand = "" }
		/^}/ { cand = "" }' "$f"
done | sort -u | awk '{ n[$1]++; o[$1] = o[$1] " " $2 } END { for (k in n) if (n[k] > 1) print k ":" o[k] }')
[ -z "$twice" ] || say "function names defined in two files: $twice"
# Declarations without a definition: each prototype of include/rm/*.h (a line at column 0
# that names an rm_ function; static inline ones are their own definitions) is in librm.
undefined=$(comm -23 \
	<(grep -hE '^[A-Za-z_][A-Za-z0-9_ *]*[ *]rm_[a-z0-9_]+\(' "$root"/include/rm/*.h |
		grep -vE '^(static|typedef|#)' | sed -E 's/.*[ *](rm_[a-z0-9_]+)\(.*/\1/' | sort -u) \
	<(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort -u))
[ -z "$undefined" ] || say "declared in include/rm and defined nowhere: $(echo "$undefined" | tr '\n' ' ')"

[ $bad = 0 ] && echo "rules: the Engine API, rm_ symbols, one definition a name, the runner, exits, errors, declarations: all hold"
exit $bad

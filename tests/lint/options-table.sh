#!/usr/bin/env bash
# The README's option table is what `run_models run --help=markdown` prints from the one
# option table in src/cmd/options.c; --help lists the same options. usage: SOURCE RUN_MODELS
set -euo pipefail
src=$1
rm=$2
want=$(sed -n '/^<!-- options:run /,/^<!-- \/options:run -->/p' "$src/README.md" | sed '1d;$d')
have=$("$rm" run --help=markdown)
if [ "$want" != "$have" ]; then
	echo "README.md's option table differs from 'run_models run --help=markdown':" >&2
	diff <(echo "$want") <(echo "$have") >&2 || true
	echo "regenerate it: run_models run --help=markdown" >&2
	exit 1
fi
# every long option of the table is in --help, and nothing else is
table_opts=$(echo "$have" | grep -o -- '--[a-z][a-z_-]*' | sort -u)
help_opts=$("$rm" run --help | grep -o -- '--[a-z][a-z_-]*' | grep -vx -- '--help' | sort -u)
[ "$table_opts" = "$help_opts" ] || {
	echo "--help and the table list different options:" >&2
	diff <(echo "$table_opts") <(echo "$help_opts") >&2 || true
	exit 1
}
n=$(echo "$have" | grep -c '^| `')
[ "$n" -ge 20 ] || { echo "only $n options in the table" >&2; exit 1; }
echo "options table: $n options, README and --help agree"

#!/usr/bin/env bash
# Results and CI output cases, each against its real consumer.
#   cases.sh CASE RUN_MODELS SOURCE_DIR DB_BODY PG_STATE
# PG_STATE is the file where pg_start leaves the private server's folder and URL for the
# other cases (pg_stop removes both). Screenshots and reports worth keeping go to
# $RM_TEST_OUTPUT (default: results-output beside PG_STATE) and their paths are printed.
set -euo pipefail
case_name=$1
RM=$2
SRC=$3
DB_BODY=$4
PG_STATE=$5
OUT=${RM_TEST_OUTPUT:-$(dirname "$PG_STATE")/results-output}
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap '[ -n "${RM_KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT
cd "$WORK"
unset GITHUB_STEP_SUMMARY

fail() {
	echo "FAIL [$case_name]: $*" >&2
	exit 1
}
need() {
	command -v "$1" >/dev/null || fail "$1 is not installed (tools/setup.sh installs $2)"
}
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
CASE_T0=$(now)
pg_url() {
	[ -f "$PG_STATE" ] || fail "no PostgreSQL server: the pg_start case did not run"
	sed -n 2p "$PG_STATE"
}
# Runs a command, expecting exit code $1.
expect() {
	local want=$1 rc=0
	shift
	"$@" >cmd.out 2>cmd.err || rc=$?
	[ "$rc" = "$want" ] || fail "exit $rc, want $want: $* ($(tail -n 5 cmd.err))"
}
# The value of column NAME in row N (1 = first data row) of a CSV without embedded newlines.
csv_col() { # FILE N NAME
	awk -v n="$2" -v name="$3" -F, 'NR==1{for(i=1;i<=NF;i++) if($i==name) c=i; next}
		NR==n+1{print $c}' "$1"
}
# The run id of night N of tests/results/gen-planted.sh (in perf.csv).
run_of() { awk -F, -v n="$(printf -- '-%04d' "$1")" 'NR > 1 && substr($31, length($31) - 4) == n {print $31; exit}' perf.csv; }
CHROMIUM_FLAGS=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
	--disable-background-networking --disable-component-update --disable-sync
	--enable-logging=stderr --v=0)
chromium_bin() {
	for c in chromium chromium-browser google-chrome; do
		command -v "$c" >/dev/null && {
			echo "$c"
			return
		}
	done
	fail "chromium is not installed (tools/setup.sh installs it)"
}

case "$case_name" in
pg_start)
	need bc bc
	dir=$(mktemp -d /tmp/rm-pg-XXXXXX)
	url=$(bash "$SRC/tests/results/pg.sh" start "$dir")
	printf '%s\n%s\n' "$dir" "$url" >"$PG_STATE"
	psql -qAt "$url" -c 'select 1' | grep -qx 1 || fail "server does not answer at $url"
	echo "PostgreSQL at $url"
	;;

pg_stop)
	[ -f "$PG_STATE" ] || exit 0
	bash "$SRC/tests/results/pg.sh" stop "$(sed -n 1p "$PG_STATE")"
	rm -f "$PG_STATE"
	;;

db_sqlite)
	"$DB_BODY" "sqlite:$WORK/results.db"
	# The file is a plain SQLite database the sqlite3 shell (and Grafana's plugin) reads.
	need sqlite3 sqlite3
	[ "$(sqlite3 results.db 'select max(version) from rm_schema')" = 4 ] || fail "schema version"
	# A database of before configurations (schema 2, written by the previous release) is
	# migrated when it is opened: its rows kept in their order, the results' key made
	# (run_id, model, docker_file, metric, config_key, repeat), so a run that holds a model
	# in two configurations keeps both.
	sqlite3 old.db <"$SRC/tests/results/schema-v2.sqlite.sql"
	before=$(sqlite3 old.db 'select group_concat(model || performance, " ") from (select * from results order by id)')
	bash "$SRC/tests/results/gen-configs.sh" 2 0 0 >configs.csv
	expect 0 "$RM" export --db sqlite:old.db configs.csv
	[ "$(sqlite3 old.db 'select group_concat(version) from rm_schema')" = "1,2,3,4" ] || fail "migrations: $(sqlite3 old.db 'select * from rm_schema')"
	[ "$(sqlite3 old.db "select group_concat(model || performance, ' ') from (select * from results where config_key = '' order by id)")" = "$before" ] ||
		fail "the old rows changed"
	[ "$(sqlite3 old.db "select count(*) from results where model = 'grid'")" = 8 ] || fail "configurations of one run and model: $(sqlite3 old.db "select run_id, config_key from results where model = 'grid'")"
	[ "$(sqlite3 old.db "select value from config_params where config_key = 'grid16bf16' and name = 'precision'")" = bf16 ] ||
		fail "config_params: $(sqlite3 old.db 'select * from config_params')"
	sqlite3 old.db 'select config_key from accepted' >/dev/null || fail "accepted.config_key"
	;;

db_migrate_v2)
	# A database of schema version 2 (made by run_models before the attempt column; dumped
	# into tests/results/schema-v2-attempts.*.sql) is migrated when opened: its rows kept as attempt
	# 1, the key now has the attempt (two failed attempts of one run and model are two rows),
	# the provenance table is there. Both make the results table again to change its key.
	need sqlite3 sqlite3
	need psql postgresql-client
	run=20261126T233602Z-567-72b8
	cp "$SRC/tests/results/perf-attempts.csv" perf.csv
	sqlite3 v2.db <"$SRC/tests/results/schema-v2-attempts.sqlite.sql"
	db=v2_$$
	url=$(pg_url)
	psql -qAt "$url" -c "create database $db" >/dev/null
	pg2=${url/\/\/\/rm?/\/\/\/$db?}
	psql -q "$pg2" -f "$SRC/tests/results/schema-v2-attempts.postgres.sql" >/dev/null 2>psql.err || fail "$(cat psql.err)"
	for u in "sqlite:$WORK/v2.db" "$pg2"; do
		if [[ $u == sqlite:* ]]; then q() { sqlite3 "$WORK/v2.db" "$1"; }; else q() { psql -qAt "$u" -c "$1"; }; fi
		[ "$(q 'select max(version) from rm_schema')" = 2 ] || fail "$u: not version 2 before"
		expect 0 "$RM" export --db "$u" perf.csv
		[ "$(q 'select max(version) from rm_schema')" = 4 ] || fail "$u: not migrated"
		[ "$(q "select count(*) || ' ' || min(attempt) || ' ' || max(attempt) from results where run_id = '$run'")" = "3 1 1" ] ||
			fail "$u: the version-2 rows: $(q "select model, attempt from results where run_id = '$run'")"
		[ "$(q "select attempt || status from results where model = 'it_retry' order by attempt")" = "$(printf '1FAILURE\n2FAILURE\n3SUCCESS')" ] ||
			fail "$u: attempts: $(q "select model, metric, attempt, status from results where model = 'it_retry'")"
		q 'select count(*) from provenance' >/dev/null || fail "$u: no provenance table"
		# a new result after the migration gets an id of its own
		[ "$(q 'select count(distinct id) = count(*) from results')" = "$([[ $u == sqlite:* ]] && echo 1 || echo t)" ] ||
			fail "$u: ids"
	done
	psql -qAt "$url" -c "drop database $db" >/dev/null
	;;

db_postgresql)
	"$DB_BODY" "$(pg_url)"
	;;

export_both)
	# The binary against both backends: idempotent, transactional, read back by each
	# database's own client, used as a baseline and as a report source.
	need psql postgresql-client
	need sqlite3 sqlite3
	bash "$SRC/tests/results/gen-perf.sh" 20 5 2 >perf.csv
	rows=$(($(wc -l <perf.csv) - 1))
	tag="e$$"
	sed -i "s/,20240/,${tag}-20240/g" perf.csv # run ids unique to this test
	for url in "sqlite:$WORK/r.db" "$(pg_url)"; do
		if [[ $url == sqlite:* ]]; then q() { sqlite3 "$WORK/r.db" "$1"; }; else q() { psql -qAt "$url" -c "$1"; }; fi
		t0=$(now)
		expect 0 "$RM" export --db "$url" perf.csv
		grep -q "$rows results ($rows new)" cmd.err || fail "first export: $(cat cmd.err)"
		echo "export ${url%%:*}: $rows rows in $(since "$t0") s"
		n=$(q "select count(*) from results where run_id like '${tag}-%'")
		[ "$n" = "$rows" ] || fail "$url holds $n rows, want $rows"
		expect 0 "$RM" export --db "$url" perf.csv
		grep -q "$rows results (0 new)" cmd.err || fail "re-export added rows: $(cat cmd.err)"
		[ "$(q "select count(*) from results where run_id like '${tag}-%'")" = "$rows" ] ||
			fail "re-export changed the row count"
		# A file with a row the schema refuses: nothing of it lands.
		{
			head -n 1 perf.csv
			sed -n 2p perf.csv | sed "s/,${tag}-2024[^,]*,/,${tag}-bad,/"
			sed -n 3p perf.csv | sed "s/,${tag}-2024[^,]*,/,${tag}-bad,/; s/,SUCCESS,/,BOGUS,/"
		} >bad.csv
		expect 5 "$RM" export --db "$url" bad.csv
		grep -q "rolled back" cmd.err || fail "no rollback message: $(cat cmd.err)"
		[ "$(q "select count(*) from runs where run_id = '${tag}-bad'")" = 0 ] ||
			fail "half an export stayed in $url"
		# Direction column from the metric table.
		[ "$(q "select count(distinct direction) from results where run_id like '${tag}-%' and status = 'SUCCESS'")" = 2 ] ||
			fail "direction column"
		# The database as a report source and as a baseline.
		expect 0 "$RM" report html "$url" -o db.html
		[ "$(grep -o '<svg class="trend" data-model="model_0[0-9][0-9]"' db.html | sort -u | wc -l)" -ge 20 ] ||
			fail "report from $url lacks models"
		tail -n 40 perf.csv | sed "s/,${tag}-20240105[^,]*,/,${tag}-next,/; s/,2024-01-05T/,2024-01-06T/" >next.body
		{
			head -n 1 perf.csv
			cat next.body
		} >next.csv
		# model_003 is planted 12 % slower on the 5th night of gen-perf's data only when
		# it is the last; make it slower here by hand.
		awk -F, -v OFS=, 'NR>1 && $1=="model_003" {$18=$18*0.5} {print}' next.csv >next2.csv
		expect 6 "$RM" report ci next2.csv --baseline "$url" --fail-on-regression 5 --no-step-summary
		grep -q "1 regression" cmd.err || fail "baseline from $url: $(cat cmd.err)"
	done
	# Every query of the shipped Grafana dashboard runs on the schema, with Grafana's
	# macros and variables filled in as Grafana would.
	need jq jq
	cat >macros.sed <<'SED'
s/\$__timeFilter\(([a-z_.]+)\)/\1 BETWEEN '1970-01-01' AND '2100-01-01'/g
s/\$model/'model_003'/g
s/\$machine/'mi300x-01'/g
SED
	jq -r '.panels[].targets[].rawSql, .templating.list[].query' \
		"$SRC/dashboards/grafana-run_models.json" | sed -E -f macros.sed >dashboard.sql
	[ "$(wc -l <dashboard.sql)" -ge 6 ] || fail "dashboard queries not found"
	while read -r sql; do
		n=$(psql -qAt -v ON_ERROR_STOP=1 "$(pg_url)" -c "$sql" | wc -l) || fail "dashboard query fails: $sql"
		[ "$n" -gt 0 ] || [[ $sql == *FAILURE* ]] || [[ $sql == *environment* ]] ||
			[[ $sql == *"FROM metrics"* ]] || fail "dashboard query returns nothing: $sql"
	done <dashboard.sql
	;;

junit_schema)
	need xmllint libxml2-utils
	hdr=$(bash "$SRC/tests/results/gen-perf.sh" 1 1 | head -n 1)
	{
		echo "$hdr"
		bash "$SRC/tests/results/gen-perf.sh" 4 2 2 | tail -n +2
		# A failure with markup, quotes, control characters and broken UTF-8 in its reason
		# and log; a skipped model.
		printf 'weird,8,1,8,,,,,docker/w.Dockerfile,,,,,mi300x-01,local,docker,gfx942,,,,FAILURE,1,2,,,,,,,2024-01-02T01:00:00Z,20240102T010000Z-1002-0002,1,"<b>boom</b> & ""quote"" \x01\x1b[31mred\xff",,1,weird.live.log\n'
		printf 'skip,8,1,8,,,,,docker/s.Dockerfile,,,,,mi300x-01,local,docker,gfx942,,,,SKIPPED,0,0,,,,,,,2024-01-02T01:00:00Z,20240102T010000Z-1002-0002,1,skip_gpu_arch gfx942,,,\n'
	} >perf.csv
	{
		for i in $(seq 1 80); do echo "log line $i"; done
		printf '\x1b[1mTraceback\x1b[0m \x00 \x07 \xc3\x28 ]]> </failure>\n'
	} >weird.live.log
	expect 1 "$RM" report ci perf.csv --junit junit.xml --title nightly --no-step-summary
	# Kept for a look (and for loading into a CI's test-report view).
	cp junit.xml "$OUT/junit.xml"
	echo "junit: $OUT/junit.xml"
	schemas=("$SRC/tests/results/junit.xsd")
	[ -n "${RM_JUNIT_XSD:-}" ] && IFS=: read -r -a extra <<<"$RM_JUNIT_XSD" && schemas+=("${extra[@]}")
	for xsd in "${schemas[@]}"; do
		xmllint --noout --schema "$xsd" junit.xml || fail "junit.xml does not validate against $xsd"
	done
	grep -q '<testcase name="weird" classname="nightly"' junit.xml || fail "testcase"
	grep -q 'log line 80' junit.xml && ! grep -q 'log line 30$' junit.xml || fail "last 50 lines"
	grep -q '<skipped message="skip_gpu_arch gfx942"/>' junit.xml || fail "skipped"
	grep -q 'tests="10" failures="1" errors="0" skipped="1"' junit.xml || fail "counts: $(grep '<testsuite ' junit.xml)"
	# The schema does reject what CI servers reject (the check can fail).
	sed 's/<testcase name="weird" classname="nightly" time="[0-9.]*"/<testcase name="weird" classname="nightly"/' junit.xml >bad.xml
	! xmllint --noout --schema "$SRC/tests/results/junit.xsd" bad.xml 2>/dev/null || fail "schema accepted a testcase without time"
	sed 's|<properties>|<properties><property name="" value="x"/>|' junit.xml >bad.xml
	! xmllint --noout --schema "$SRC/tests/results/junit.xsd" bad.xml 2>/dev/null || fail "schema accepted an empty property name"
	# With the gate on, a regression is a failed testcase of its own.
	awk -F, -v OFS=, 'NR>1 && $1=="model_001" && $31 ~ /1002/ {$18=$18*0.5} {print}' perf.csv >slow.csv
	expect 1 "$RM" report ci slow.csv --junit gate.xml --fail-on-regression 5 --title nightly --no-step-summary
	xmllint --noout --schema "$SRC/tests/results/junit.xsd" gate.xml || fail "gate.xml does not validate"
	grep -q '<failure type="regression"' gate.xml || fail "no regression testcase"
	;;

html_chromium)
	need bc bc
	chrome=$(chromium_bin)
	bash "$SRC/tests/results/gen-perf.sh" 40 30 >perf.csv
	printf 'model_xss,8,1,8,,,,,docker/x.Dockerfile,,,,,mi300x-01,local,docker,gfx942,,,,FAILURE,1,2,,,,,,,2024-01-30T01:00:00Z,20240130T010000Z-1030-001e,1,"<script>alert(1)</script><img src=https://example.invalid/x.png>",,1,x.live.log\n' >>perf.csv
	models=41
	expect 0 "$RM" report html perf.csv -o report.html --title "nightly <test>"
	need xmllint libxml2-utils
	[ "$(xmllint --html --xpath 'count(//*[@src or @href] | //script | //link)' report.html 2>/dev/null)" = 0 ] ||
		fail "the report has elements that load something"
	t0=$(now)
	"$chrome" "${CHROMIUM_FLAGS[@]}" --user-data-dir="$WORK/profile" --dump-dom \
		"file://$WORK/report.html" >dom.html 2>console.txt || fail "chromium failed: $(tail -n 5 console.txt)"
	dom_s=$(since "$t0")
	if grep 'CONSOLE' console.txt; then fail "console messages while loading the report"; fi
	n=$(grep -o '<svg class="trend" data-model="[^"]*"' dom.html | sort -u | wc -l)
	[ "$n" = "$models" ] || fail "$n models have a trend plot in the page, want $models"
	grep -q '<tr class="regression" data-model="model_003">' dom.html || fail "planted regression not flagged"
	grep -q 'data-failed="model_xss"' dom.html || fail "failure table"
	! grep -q '<script>alert' dom.html || fail "a reason was not escaped"
	t0=$(now)
	"$chrome" "${CHROMIUM_FLAGS[@]}" --user-data-dir="$WORK/profile2" --window-size=1280,900 \
		--screenshot="$OUT/report.png" "file://$WORK/report.html" >/dev/null 2>&1 ||
		fail "chromium screenshot failed"
	[ -s "$OUT/report.png" ] || fail "no screenshot"
	cp report.html "$OUT/report.html"
	echo "report: $OUT/report.html ($(wc -c <report.html) bytes), screenshot: $OUT/report.png"
	echo "chromium: load and dump $dom_s s, screenshot $(since "$t0") s"
	# The check can fail: a page that reaches for the network is caught.
	sed 's|</body>|<img src="https://example.invalid/x.png"></body>|' report.html >leaky.html
	"$chrome" "${CHROMIUM_FLAGS[@]}" --user-data-dir="$WORK/profile3" --dump-dom \
		"file://$WORK/leaky.html" >/dev/null 2>leaky.txt || true
	grep -q 'CONSOLE' leaky.txt || fail "a blocked network load left no console message: the check is blind"
	;;

perf_csv_faults)
	# Issue 29 (15 and the low ones): a hand-edited or damaged history keeps the verdict right
	# and says what it found, naming the line or run. Eleven nights, the last one with a
	# planted -20 % (model_001) and -12 % (model_003): exit 6 whatever the damage.
	bash "$SRC/tests/results/gen-perf.sh" 3 11 >gen.csv
	python3 - <<'PY'
import csv, io
rows = list(csv.reader(open("gen.csv", newline="")))
hdr, data = rows[0], rows[1:]
ri, pi, mi, rs = (hdr.index(c) for c in ("run_id", "performance", "model", "reason"))
runs = sorted(set(r[ri] for r in data))
for r in data:
    if r[ri] == runs[-1] and r[mi] == "model_001":
        r[pi] = str(float(r[pi]) * 0.8)
def dump(rows):
    b = io.StringIO(); csv.writer(b, lineterminator="\n").writerows(rows); return b.getvalue()
base = dump([hdr] + data)
open("planted.csv", "w").write(base)
lines = base.split("\n")
for i, l in enumerate(lines):
    if runs[2] in l:  # a stray quote in run 3's first row
        p = l.split(","); p[rs] = '"oops'; lines[i] = ",".join(p); break
open("stray.csv", "w").write("\n".join(lines))
b = base.split("\n"); m = len(b) // 2
open("header.csv", "w").write("\n".join(b[:m] + [b[0]] + b[m:]))
open("reused.csv", "w").write(base.replace(runs[-1], runs[1]))
open("cr.csv", "w").write(base.replace("\n", "\r"))
open("bom.csv", "w").write("\ufeff" + base)
for v in ("1e20", "1e300"):
    d2 = [list(r) for r in data]
    for r in d2:
        if r[ri] == runs[-1] and r[mi] == "model_002":  # a time: lower is better
            r[pi] = v
    open(f"big{v}.csv", "w").write(dump([hdr] + d2))
PY
	judged() { # FILE: exit 6, both planted regressions found
		expect 6 "$RM" report ci "$1" --no-step-summary --fail-on-regression 5 --summary-markdown s.md
		grep -q '| model_001 | samples_per_second | SUCCESS | .* regression' s.md ||
			fail "$1: model_001's -20 % missed: $(grep model_001 s.md)"
	}
	judged planted.csv
	judged stray.csv
	grep -q "'stray.csv' line 8: a '\"' opens a field that is not closed on its line" cmd.err || fail "stray: $(cat cmd.err)"
	judged header.csv
	grep -q "'header.csv' line [0-9]* repeats the header" cmd.err || fail "header: $(cat cmd.err)"
	judged reused.csv
	grep -q "run id '.*' is used again (model 'model_001' repeat 1 is in it twice)" cmd.err || fail "reused: $(cat cmd.err)"
	judged cr.csv
	judged bom.csv
	grep -q "'bom.csv' starts with a UTF-8 byte order mark" cmd.err || fail "bom: $(cat cmd.err)"
	for v in 1e20 1e300; do
		judged "big$v.csv"
		row=$(grep '| model_002 |' s.md)
		echo "$row" | grep -q 'regression' || fail "$v: not a regression: $row"
		ref=$(echo "$row" | awk -F'|' '{print $6}' | tr -d ' ')
		[ "$(echo "$ref > 90 && $ref < 120" | bc)" = 1 ] || fail "$v: the reference moved with the judged value: $row"
		echo "$row" | grep -qE '\+[0-9.]+e\+[0-9]+%' || fail "$v: the change is not short: $row"
	done
	# an unterminated quote in perf.accepted.csv swallowed the acceptance after it
	cp planted.csv acc.csv
	expect 0 "$RM" accept acc.csv --model model_003 --reason "first one"
	expect 0 "$RM" accept acc.csv --model model_001 --reason "second"
	sed -i '2s/,first one,$/,first one,"/' acc.accepted.csv # the last field's quote is not closed
	expect 0 "$RM" report ci acc.csv --no-step-summary --fail-on-regression 5 --summary-markdown s.md
	grep -q "'acc.accepted.csv' line 2: a '\"' opens a field that is not closed" cmd.err ||
		fail "accepted: not said: $(cat cmd.err)"
	grep -q '| model_001 | .* regression' s.md && fail "model_001's acceptance was swallowed"
	;;

html_layout)
	# Issue 29: the report fits a 1200-pixel window and a phone (412 px) without a horizontal
	# scroll, every cell still says its column on the phone, and red means something is
	# wrong: a count of zero is not red, a count above zero is. Measured in Chromium on a
	# copy of the report that runs a measuring script (the report itself runs none: its CSP
	# forbids scripts), with long real model names and the GPU power column.
	chrome=$(chromium_bin)
	bash "$SRC/tests/results/gen-perf.sh" 8 20 |
		sed 's/model_001/pyt_torchtitan_llama3_1_70b_pretrain_fp8/g; s/model_003/pyt_megatron_lm_llama3_1_8b_training_bf16/g' >perf.csv
	m=pyt_torchtitan_llama3_1_70b_pretrain_fp8
	{
		echo "timestamp,run_id,model,metric,value,unit,step,aggregate"
		i=0
		for r in $(cut -d, -f31 perf.csv | tail -n +2 | sort -u); do
			i=$((i + 1))
			echo "2024-01-01T01:00:00Z,$r,$m,gpu_power_avg_w,$((600 + i * 3)),W,,summary"
		done
	} >"perf_$m.csv"
	expect 0 "$RM" report html perf.csv -o report.html --title nightly
	# a latest run with a failure: that count is red
	last=$(tail -n 1 perf.csv | cut -d, -f31)
	awk -F, -v OFS=, -v r="$last" 'NR > 1 && $31 == r && $1 == "model_002" {$18 = ""; $19 = ""; $21 = "FAILURE"} {print}' perf.csv >failed.csv
	expect 0 "$RM" report html failed.csv -o failed.html --title nightly
	# (no ampersand in it: awk's sub() would read one as the matched text)
	measure='<script>
var d = document.documentElement, b = document.body, out = [];
out.push("overflow=" + (d.scrollWidth - d.clientWidth));
document.querySelectorAll(".card").forEach(function (c) {
	var n = c.querySelector("b").textContent, red = getComputedStyle(c).color === "rgb(207, 34, 46)";
	out.push("card " + n + " " + (red ? "red" : "plain"));
});
var unlabeled = 0, shown = 0;
document.querySelectorAll("table.cols tr:not(.head) td").forEach(function (td) {
	if (td.offsetParent === null) return;
	shown++;
	var head = getComputedStyle(td.closest("table").querySelector("tr.head")).display !== "none";
	var label = getComputedStyle(td, "::before").content;
	if (!head) if (!label || label === "none" || label === "normal") unlabeled++;
});
out.push("cells=" + shown + " unlabeled=" + unlabeled);
b.setAttribute("data-measured", out.join(";"));
</script></body>'
	for f in report failed; do
		sed 's|<meta http-equiv="Content-Security-Policy"[^>]*>||' "$f.html" |
			awk -v m="$measure" '{sub(/<\/body>/, m)} {print}' >"m_$f.html"
		for w in 1200 412; do
			"$chrome" "${CHROMIUM_FLAGS[@]}" --user-data-dir="$WORK/p_$f$w" --window-size="$w,900" \
				--dump-dom "file://$WORK/m_$f.html" >"dom_$f$w.html" 2>/dev/null ||
				fail "chromium failed on $f at $w px"
			got=$(grep -o 'data-measured="[^"]*"' "dom_$f$w.html") || fail "$f at $w px: nothing measured"
			echo "$f at $w px: $got"
			echo "$got" | grep -q 'overflow=0;' || fail "$f at $w px needs a horizontal scroll: $got"
			echo "$got" | grep -q 'unlabeled=0"' || fail "$f at $w px: cells without their column: $got"
			echo "$got" | grep -qE 'card 0 red' && fail "$f at $w px: a count of zero is red: $got"
			"$chrome" "${CHROMIUM_FLAGS[@]}" --user-data-dir="$WORK/s_$f$w" --window-size="$w,900" \
				--screenshot="$OUT/layout_$f$w.png" "file://$WORK/$f.html" >/dev/null 2>&1 ||
				fail "chromium screenshot failed"
		done
	done
	grep -o 'data-measured="[^"]*"' dom_failed1200.html | grep -q 'card 1 red' ||
		fail "one failure in the latest run is not red"
	echo "screenshots: $OUT/layout_report1200.png $OUT/layout_report412.png $OUT/layout_failed412.png"
	;;

html_power)
	# The report's power column: each model's gpu_power_avg_w per run (perf_<model>.csv
	# beside perf.csv, the mean of a run's repeats), plotted beside its trend; a history
	# without power has no such column.
	bash "$SRC/tests/results/gen-perf.sh" 2 3 >perf.csv
	expect 0 "$RM" report html perf.csv -o plain.html
	grep -q 'GPU power' plain.html && fail "a power column without power figures"
	runs=$(cut -d, -f31 perf.csv | tail -n +2 | sort -u)
	r1=$(echo "$runs" | sed -n 1p) r3=$(echo "$runs" | sed -n 3p)
	{
		echo "timestamp,run_id,model,metric,value,unit,step,aggregate"
		echo "2024-01-01T01:00:00Z,$r1,model_001,gpu_power_avg_w,600,W,,summary"
		echo "2024-01-01T01:00:00Z,$r1,model_001,gpu_energy_j,36600,J,,summary"
		echo "2024-01-03T01:00:00Z,$r3,model_001,gpu_power_avg_w,700,W,,summary"
		echo "2024-01-03T01:00:00Z,$r3,model_001,gpu_power_avg_w,720,W,,summary"
		echo "2024-01-03T01:00:00Z,other-run,model_001,gpu_power_avg_w,9999,W,,summary"
	} >perf_model_001.csv
	expect 0 "$RM" report html perf.csv -o power.html
	grep -q '<th>trend</th><th>GPU power (W)</th><th>latest</th>' power.html || fail "no power column"
	svg=$(grep -o '<svg class="trend power" data-model="model_001"[^>]*><title>[^<]*</title><polyline[^>]*>' power.html) ||
		fail "no power plot for model_001"
	echo "$svg" | grep -q 'gpu_power_avg_w: 2 runs, min 600 W, max 710 W' || fail "power plot: $svg"
	[ "$(echo "$svg" | grep -o '[0-9.]\+,[0-9.]\+ ' | wc -l)" = 2 ] || fail "two runs, two points: $svg"
	grep -q '</svg>710 W</td>' power.html || fail "the latest run's power"
	grep -q 'data-model="model_002"' power.html || fail "model_002 missing"
	grep -q '<svg class="trend power" data-model="model_002"' power.html && fail "model_002 has no power figures"
	# the same through the end of a nightly run (report ci --html)
	expect 0 "$RM" report ci perf.csv --html ci.html --no-step-summary
	grep -q 'gpu_power_avg_w: 2 runs, min 600 W, max 710 W' ci.html || fail "report ci --html has no power plot"
	;;

report_ci)
	bash "$SRC/tests/results/gen-perf.sh" 10 5 3 >perf.csv
	rows=$(($(wc -l <perf.csv) - 1))
	mkdir -p logs
	echo "model_003 log" >model_003.live.log
	echo '{"run_id":"x"}' >run.json
	export GITHUB_STEP_SUMMARY=$WORK/step_summary.md
	echo "earlier step" >"$GITHUB_STEP_SUMMARY"
	# model_003 is 12 % slower on the last night, well outside its 1 % noise: exit 6.
	expect 6 "$RM" report ci perf.csv --junit junit.xml --summary-markdown summary.md \
		--html report.html --archive run.tar.gz --export "sqlite:$WORK/r.db" \
		--fail-on-regression 5 --title nightly --manifest run.json
	grep -q '1 regression(s)' cmd.err || fail "$(cat cmd.err)"
	grep -q '^| model_003 | samples_per_second | SUCCESS | .* | -12.[0-9]*% | .* regression |$' summary.md ||
		fail "summary row: $(grep model_003 summary.md)"
	head -n 1 "$GITHUB_STEP_SUMMARY" | grep -qx "earlier step" || fail "step summary overwritten"
	grep -q '^## nightly: ' "$GITHUB_STEP_SUMMARY" || fail "step summary not appended"
	tar tzf run.tar.gz >list.txt
	for f in perf.csv junit.xml summary.md report.html run.json model_003.live.log; do
		grep -q "/$f\$" list.txt || fail "archive lacks $f: $(cat list.txt)"
	done
	[ "$(sqlite3 r.db 'select count(*) from results')" = $((rows / 5)) ] || fail "exported rows"
	# Inside the noise: the same 12 % with a 30 % spread of repeats is not a regression.
	awk -F, -v OFS=, 'NR>1 && $1=="model_003" {$18=$18*(1+($32-2)*0.3)} {print}' perf.csv >noisy.csv
	expect 0 "$RM" report ci noisy.csv --fail-on-regression 5 --summary-markdown noisy.md --no-step-summary
	grep -q 'model_003 .* noise' noisy.md || fail "noise not said: $(grep model_003 noisy.md)"
	# Gate off: the same data exits 0; a threshold of 20 % too.
	expect 0 "$RM" report ci perf.csv --no-step-summary
	expect 0 "$RM" report ci perf.csv --fail-on-regression 20 --no-step-summary
	# A failed model outranks a regression: exit 1.
	awk -F, -v OFS=, 'NR>1 && $1=="model_005" && $31 ~ /1005/ {$21="FAILURE"; $18=""} {print}' perf.csv >failed.csv
	expect 1 "$RM" report ci failed.csv --fail-on-regression 5 --no-step-summary
	# An earlier perf.csv as the baseline.
	head -n $((1 + rows / 5 * 4)) perf.csv >base.csv
	expect 6 "$RM" report ci perf.csv --baseline base.csv --fail-on-regression 5 --no-step-summary
	expect 3 "$RM" report ci perf.csv --baseline "$SRC/models.json" --no-step-summary
	;;

history_gate)
	# The issue's planted histories through the binary (tests/results/gen-planted.sh): a
	# step some nights ago that persists, a slow drift, a fresh step, a lower-is-better
	# metric that rose and a two-run history with a large drop fail the gate, each naming
	# the run its change started at; a stable series noisier than the threshold, a past
	# one-night outlier and an improvement do not.
	need xmllint libxml2-utils
	bash "$SRC/tests/results/gen-planted.sh" 30 >perf.csv
	expect 6 "$RM" report ci perf.csv --fail-on-regression 5 --junit junit.xml \
		--summary-markdown summary.md --html report.html --no-step-summary
	grep -q ', 1 improvement(s), 1 unstable, 5 regression(s)$' cmd.err || fail "$(cat cmd.err)"
	xmllint --noout --schema "$SRC/tests/results/junit.xsd" junit.xml || fail "junit.xml invalid"
	for want in step_persist:25 drift:21 fresh_step:30 lower_rose:26 two_runs:30; do
		m=${want%%:*} rid=$(run_of "${want#*:}")
		# a drift's start is where its levels first part from the reference: +-2 nights
		[ "$m" = drift ] && rid="2024012[0-3]T010000Z-002[0-3]"
		grep -A1 "<testcase name=\"$m [a-z_]* vs baseline\"" junit.xml |
			grep -q "<failure type=\"regression\" message=\"[-+][0-9.]*% ([a-z]* is better: worse: regression) since run $rid (2024-01-[0-9T:]*Z, models at c0ffee" ||
			fail "$m: the JUnit testcase does not name run $rid: $(grep -A1 "<testcase name=\"$m " junit.xml)"
		grep -q "^- .* regression: \`$m\` [a-z_]* on \`mi300x-01\`: [-+][0-9.]*% since run $rid " summary.md ||
			fail "$m: the summary does not say it started at run $rid: $(cat summary.md)"
	done
	grep -q "<property name=\"step_persist.samples_per_second.change_point\" value=\"run $(run_of 25) (2024-01-25T01:00:00Z, models at c0ffee000000)\"/>" junit.xml ||
		fail "no change point property"
	for m in noisy outlier improved steady; do
		! grep -A1 "<testcase name=\"$m samples_per_second vs baseline\"" junit.xml | grep -q '<failure' ||
			fail "$m failed the gate"
	done
	grep -q "^- .* improvement: \`improved\` samples_per_second on \`mi300x-01\`: +[0-9.]*% since run $(run_of 25) " summary.md ||
		fail "improvement not listed: $(cat summary.md)"
	grep -q "^- .* unstable: \`noisy\` samples_per_second: run-to-run noise" summary.md || fail "unstable not listed"
	grep -q '^| outlier | samples_per_second | SUCCESS | .* | same |$' summary.md || fail "outlier: $(grep outlier summary.md)"
	# The report marks the change points on the trend lines: the step's start in red.
	grep '<tr class="regression" data-model="step_persist">' report.html |
		grep -q "<line class=\"cp since\" [^>]*><title>change point: run $(run_of 25) " ||
		fail "the report does not mark step_persist's change point"
	# A narrower window that no longer holds the level before the drift still sees it.
	expect 6 "$RM" report ci perf.csv --fail-on-regression 5 --history-window 8 --no-step-summary
	expect 2 "$RM" report ci perf.csv --history-window 1 --no-step-summary
	grep -q "history-window takes a whole number from 2 to 200, not '1'" cmd.err || fail "$(cat cmd.err)"
	# issue 29: 0 was taken for "not given" although the message says 2 to 200
	expect 2 "$RM" report ci perf.csv --history-window 0 --no-step-summary
	grep -q "history-window takes a whole number from 2 to 200, not '0'" cmd.err || fail "$(cat cmd.err)"
	;;

accept)
	# Accepting a change: recorded in perf.csv's companion file (perf.csv itself untouched),
	# after which the gate stops flagging it but still catches the next change.
	bash "$SRC/tests/results/gen-planted.sh" 30 >perf.csv
	cp perf.csv orig.csv
	expect 2 "$RM" accept perf.csv
	grep -q "accept needs --model NAME" cmd.err || fail "$(cat cmd.err)"
	expect 3 "$RM" accept perf.csv --model steady
	grep -q "nothing to accept: the gate finds no regression of 'steady' in 'perf.csv'" cmd.err || fail "$(cat cmd.err)"
	expect 3 "$RM" accept perf.csv --model step_persist --since nosuchrun
	grep -q "run 'nosuchrun' is not in 'perf.csv'" cmd.err || fail "$(cat cmd.err)"
	[ ! -e perf.accepted.csv ] || fail "a refused accept wrote a record"
	# Without --since: from where the gate finds the regression started.
	expect 0 "$RM" accept perf.csv --model step_persist --reason "new kernel, slower by design"
	grep -q "accepted: step_persist samples_per_second on mi300x-01 from run $(run_of 25) (2024-01-25T01:00:00Z): recorded in perf.accepted.csv" cmd.err ||
		fail "$(cat cmd.err)"
	[ "$(head -n 1 perf.accepted.csv)" = "model,metric,docker_file,gpu_architecture,n_gpus,machine_name,since_run,since,accepted_at,reason,config_key" ] ||
		fail "companion header: $(head -n 1 perf.accepted.csv)"
	# rows written before configurations: their (empty) key, any configuration's
	grep -q "^step_persist,samples_per_second,docker/step_persist.Dockerfile,gfx942,8,mi300x-01,$(run_of 25),2024-01-25T01:00:00Z,[0-9T:-]*Z,\"new kernel, slower by design\",\$" perf.accepted.csv ||
		fail "record: $(cat perf.accepted.csv)"
	# With --since: every metric of the model from that run on (here the run judged: nothing
	# before it is compared any more).
	expect 0 "$RM" accept perf.csv --model fresh_step --since "$(run_of 30)"
	cmp -s perf.csv orig.csv || fail "accept changed perf.csv"
	expect 6 "$RM" report ci perf.csv --fail-on-regression 5 --summary-markdown summary.md \
		--archive run.tar.gz --no-step-summary
	grep -q ' 3 regression(s)$' cmd.err || fail "$(cat cmd.err)"
	grep -q '^| step_persist | samples_per_second | SUCCESS | .* | same |$' summary.md || fail "$(grep step_persist summary.md)"
	grep -q '/perf.accepted.csv$' <(tar tzf run.tar.gz) || fail "the archive lacks the accepted changes"
	# The next step after an accepted one fails again, from its own run.
	next=20240131T010000Z-0031
	{
		cat perf.csv
		awk -F, -v OFS=, -v r="$next" '$31 ~ /-0030$/ {$31 = r; $30 = "2024-01-31T01:00:00Z";
			if ($1 == "step_persist") $18 = 800; print}' perf.csv
	} >night31.csv
	cp perf.accepted.csv night31.accepted.csv
	expect 6 "$RM" report ci night31.csv --fail-on-regression 5 --summary-markdown summary.md --no-step-summary
	grep -q "regression: \`step_persist\` samples_per_second on \`mi300x-01\`: -11.[0-9]*% since run $next " summary.md ||
		fail "the step after the accepted one: $(cat summary.md)"
	;;

references)
	# Pinned references: a value outside its tolerance on the bad side fails whatever the
	# history says; beyond it on the good side it is reported; from a file, a suite or
	# run.json.
	bash "$SRC/tests/results/gen-planted.sh" 30 >perf.csv
	cat >refs.yaml <<'Y'
# expected values with tolerances in percent (ReFrame's references)
references:
  steady: {samples_per_second: {value: 1100, lower: 5}}
  improved: {samples_per_second: {value: 1000, lower: 5, upper: 10}}
  noisy: {samples_per_second: {value: 1000, lower: 25, upper: 25}}
Y
	expect 6 "$RM" report ci perf.csv --references refs.yaml --fail-on-regression 5 \
		--summary-markdown summary.md --junit junit.xml --no-step-summary
	grep -q ' 6 regression(s)$' cmd.err || fail "$(cat cmd.err)"
	grep -A1 '<testcase name="steady samples_per_second vs baseline"' junit.xml |
		grep -q 'message="[0-9.]* is below its reference 1100 (allowed 1045 .. no bound): regression; history: [-+][0-9.]*% (higher is better: within the threshold)' ||
		fail "steady: $(grep -A1 '"steady ' junit.xml)"
	grep -q "regression: \`steady\` .*; [0-9.]* is outside its reference 1100$" summary.md || fail "$(cat summary.md)"
	grep -q "improvement: \`improved\` .*; [0-9.]* is better than its reference 1000$" summary.md || fail "$(cat summary.md)"
	! grep -A1 '<testcase name="noisy samples_per_second vs baseline"' junit.xml | grep -q '<failure' || fail "noisy failed"
	# From run.json, as `run --suite` records them.
	echo "{\"run_id\": \"$(run_of 30)\", \"options\": {\"references\": {\"steady\": {\"samples_per_second\": {\"value\": 1100, \"lower\": 5}}}}}" >run.json
	expect 6 "$RM" report ci perf.csv --fail-on-regression 5 --no-step-summary
	grep -q ' 6 regression(s)$' cmd.err || fail "run.json's references: $(cat cmd.err)"
	# A suite's references are checked when it is loaded, and shown.
	printf 'defaults:\n  regression: {references: refs.yaml, window: 20}\nentries:\n  - tags: [a]\n' >s.yaml
	expect 0 "$RM" suite s.yaml
	jq -e '.references.steady.samples_per_second.value == 1100 and .window == 20' cmd.out >/dev/null ||
		fail "suite: $(cat cmd.out)"
	printf 'steady: {samples_per_second: {lower: 5}}\n' >bad.yaml
	expect 3 "$RM" report ci perf.csv --references bad.yaml --no-step-summary
	grep -q "'bad.yaml': steady.samples_per_second must be a mapping with a number 'value'" cmd.err || fail "$(cat cmd.err)"
	printf 'defaults:\n  regression: {references: bad.yaml}\nentries:\n  - tags: [a]\n' >s2.yaml
	expect 3 "$RM" suite s2.yaml
	grep -q "s2.yaml' line 2 .*defaults.regression.references: 'bad.yaml': steady.samples_per_second" cmd.err || fail "$(cat cmd.err)"
	;;

history_memory)
	# report html and report ci stream perf.csv: their peak memory follows the number of
	# series, not of rows. Four times the nights (80,000 rows against 20,000, 50 series)
	# may add little: the history each series keeps is bounded.
	bash "$SRC/tests/results/gen-perf.sh" 50 400 >small.csv
	bash "$SRC/tests/results/gen-perf.sh" 50 1600 >big.csv
	# Under ASan freed memory waits in a quarantine (256 MB) before reuse: measure without.
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
	rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1; }
	for kind in html ci; do
		if [ $kind = html ]; then
			a=$(rss "$RM" report html small.csv -o small.html) b=$(rss "$RM" report html big.csv -o big.html)
		else
			a=$(rss "$RM" report ci small.csv --no-step-summary) b=$(rss "$RM" report ci big.csv --no-step-summary)
		fi
		echo "report $kind: peak RSS $a KiB for 20,000 rows, $b KiB for 80,000"
		[ $((b - a)) -lt 6144 ] || fail "report $kind: peak RSS grew from $a to $b KiB with the rows"
	done
	;;

suite_command)
	mkdir -p suites
	cat >suites/common.yaml <<'Y'
defaults:
  repeat: 3
  additional_context: {gpu_vendor: AMD}
  regression: {fail_on_regression: 5, baseline: ../baseline.csv}
Y
	cat >suites/nightly.yaml <<'Y'
suite: nightly
include: common.yaml
entries:
  - tags: [smoke]
  - models: [pyt_a]
    repeat: 1
    regression: {fail_on_regression: off}
Y
	expect 0 "$RM" suite suites/nightly.yaml
	jq -e '.suite == "nightly" and (.entries | length) == 2 and .entries[0].repeat == 3 and .entries[1].fail_on_regression == "off" and .entries[0].fail_on_regression == 5 and (.baseline | endswith("suites/../baseline.csv"))' cmd.out >/dev/null ||
		fail "resolved suite: $(cat cmd.out)"
	printf 'entries:\n  - tags: [a]\n    repeats: 2\n' >suites/bad.yaml
	expect 3 "$RM" suite suites/bad.yaml
	grep -q "bad.yaml' line 3 column 5: entries\[0\].repeats: unknown field" cmd.err || fail "$(cat cmd.err)"
	;;

config_gate)
	# One series per configuration: a step planted in one configuration of a 2x2 sweep is
	# reported for that configuration only, from the run it started at; thirty nights that
	# alternate --tunableop on (20 % faster) and off raise no false alarm on any night, and a
	# 10 % drop of the on configuration alone is caught. The same rows without configuration
	# columns (a perf.csv of before) are one series each model, as they always were.
	run_at() { awk -F, -v n="$(printf -- '-%04d' "$2")" 'NR > 1 && substr($9, length($9) - 4) == n {print $9; exit}' "$1"; }
	bash "$SRC/tests/results/gen-configs.sh" 30 25 0 >perf.csv
	expect 6 "$RM" report ci perf.csv --fail-on-regression 5 --summary-markdown summary.md \
		--junit junit.xml --no-step-summary
	grep -q ' 1 regression(s)$' cmd.err || fail "$(cat cmd.err)"
	grep -q "^| grid\[batch_size=16,precision=bf16\] | samples_per_second | SUCCESS | .* regression |\$" summary.md ||
		fail "the step's configuration: $(cat summary.md)"
	grep -q "regression: \`grid\[batch_size=16,precision=bf16\]\` samples_per_second on \`mi300x-01\`: -[0-9.]*% since run $(run_at perf.csv 25) " summary.md ||
		fail "where it started: $(cat summary.md)"
	for c in 'batch_size=8,precision=fp16' 'batch_size=8,precision=bf16' 'batch_size=16,precision=fp16'; do
		grep -q "^| grid\[$c\] | samples_per_second | SUCCESS | .* same |\$" summary.md ||
			fail "grid[$c] is not green: $(grep "grid\[$c\]" summary.md)"
	done
	grep -q '<testcase name="grid\[batch_size=16,precision=bf16\] samples_per_second vs baseline"' junit.xml ||
		fail "JUnit does not name the configuration"
	# Accepting the step of that configuration only.
	expect 0 "$RM" accept perf.csv --model grid --config 'batch_size=16,precision=bf16' --reason "planted"
	grep -q "in configuration grid16bf16 from run $(run_at perf.csv 25)" cmd.err || fail "$(cat cmd.err)"
	expect 0 "$RM" report ci perf.csv --fail-on-regression 5 --no-step-summary
	rm perf.accepted.csv
	# Alternating TunableOp, judged night by night: never a regression.
	bash "$SRC/tests/results/gen-configs.sh" 30 0 0 >alt.csv
	for n in $(seq 2 30); do
		expect 0 "$RM" report ci alt.csv --run-id "$(run_at alt.csv "$n")" --fail-on-regression 5 --no-step-summary
	done
	# Before configurations the two settings were one series: the 20 % between them made
	# false alarms (the fault the configurations remove).
	bash "$SRC/tests/results/gen-configs.sh" 30 0 0 1 >legacy.csv
	alarms=0
	for n in $(seq 2 30); do
		"$RM" report ci legacy.csv --run-id "$(run_at legacy.csv "$n")" --fail-on-regression 5 \
			--no-step-summary >/dev/null 2>&1 || alarms=$((alarms + 1))
	done
	[ "$alarms" -gt 0 ] || fail "the mixed legacy series never alarmed: the test shows nothing"
	echo "alternating TunableOp: 0 false alarms in 29 nights; mixed into one series (legacy): $alarms"
	# A 10 % drop of the on configuration on its last three nights (27, 29, 31).
	bash "$SRC/tests/results/gen-configs.sh" 31 0 1 >drop.csv
	expect 6 "$RM" report ci drop.csv --fail-on-regression 5 --summary-markdown drop.md --no-step-summary
	grep -q "regression: \`alternate\[tunableop=on\]\` samples_per_second on \`mi300x-01\`: -[0-9.]*% since run $(run_at drop.csv 27) " drop.md ||
		fail "the on configuration's drop: $(cat drop.md)"
	expect 0 "$RM" report ci drop.csv --run-id "$(run_at drop.csv 30)" --fail-on-regression 5 --no-step-summary
	# The sweep table of the grid's last run.
	expect 0 "$RM" report sweep perf.csv --rows batch_size --columns precision --format csv
	[ "$(sed -n 1p cmd.out)" = "model,metric,config,batch_size,fp16,bf16" ] || fail "sweep table: $(cat cmd.out)"
	awk -F, '$1 == "grid" && $4 == 16 && $6 < 2200 && $6 > 2100 {ok = 1} END {exit !ok}' cmd.out ||
		fail "sweep table values: $(cat cmd.out)"
	;;

mad_cells)
	# MAD's serving scripts sweep inside one run: a row per cell, the cell in the metric
	# ("tok/s (isl=1024 osl=1024 con=8)") or, in their narrow layout, in columns (inp, out,
	# max_concurrency) with the metric "tok/s" alone. Each cell is a configuration: a drop
	# in one cell is that cell's, and the narrow cells no longer share one series.
	awk 'function gauss() { return sqrt(-2 * log(1 - rand())) * cos(6.283185307179586 * rand()) }
	BEGIN {
		srand(5)
		print "model,performance,metric,status,run_id,timestamp,machine_name,inp,out,max_concurrency,benchmark"
		for (n = 1; n <= 20; n++) {
			run = sprintf("r-%04d", n); ts = sprintf("2024-02-%02dT01:00:00Z", n)
			for (c = 8; c <= 64; c *= 2) {
				v = 100 * c * (1 + 0.01 * gauss())
				if (c == 32 && n >= 17) v *= 0.85
				printf "Kimi-K3,%.2f,tok/s (isl=1024 osl=1024 con=%d),SUCCESS,%s,%s,n1,,,,\n", v, c, run, ts
				printf "Kimi-K3-narrow,%.2f,tok/s,SUCCESS,%s,%s,n1,1024,1024,%d,throughput_sweep\n", v, run, ts, c
			}
		}
	}' >perf.csv
	expect 6 "$RM" report ci perf.csv --fail-on-regression 5 --summary-markdown summary.md --no-step-summary
	grep -q ' 2 regression(s)$' cmd.err || fail "$(cat cmd.err)"
	grep -q 'regression: `Kimi-K3\[isl=1024,osl=1024,con=32\]` tok/s (isl=1024 osl=1024 con=32) on `n1`: -1[45].[0-9]*% since run r-0017 ' summary.md ||
		fail "the cell in the metric: $(cat summary.md)"
	grep -q 'regression: `Kimi-K3-narrow\[inp=1024,out=1024,max_concurrency=32,benchmark=throughput_sweep\]` tok/s on `n1`: -1[45].[0-9]*% since run r-0017 ' summary.md ||
		fail "the narrow cell: $(cat summary.md)"
	[ "$(grep -c '^| Kimi-K3.* same |$' summary.md)" = 6 ] || fail "the other cells: $(cat summary.md)"
	expect 0 "$RM" report sweep perf.csv --model Kimi-K3-narrow --rows max_concurrency --metric tok/s
	grep -q '^32  *2[67][0-9][0-9]' cmd.out || fail "narrow sweep table: $(cat cmd.out)"
	expect 0 "$RM" report sweep perf.csv --model Kimi-K3 --rows con --metric tok/s --format markdown
	grep -q '^| 64 | 6[0-9]*' cmd.out || fail "cell sweep table: $(cat cmd.out)"
	;;

sweep_errors)
	# Bad sweeps fail when the suite is loaded, naming the file, line, entry and field.
	bad() { # WANT YAML-LINES...
		local want=$1
		shift
		printf 'entries:\n  - name: grid\n    models: [m]\n    sweep:\n' >bad.yaml
		printf '      %s\n' "$@" >>bad.yaml
		expect 3 "$RM" suite bad.yaml
		grep -q "$want" cmd.err || fail "$(cat cmd.err), want $want"
	}
	bad "bad.yaml' line 5 column 7: entries\[0\].sweep.ctx.x: binds to nothing" 'ctx.x: [1, 2]'
	bad "entries\[0\].sweep.batch_size: is an empty list" 'batch_size: []'
	bad "entries\[0\].sweep.zip: 'b' has 1 values and 'a' 2" 'a: [1, 2]' 'b: [3]' 'zip: [[a, b]]'
	bad "entries\[0\].sweep: every one of its 2 points is excluded" 'a: [1, 2]' 'exclude: [{a: 1}, {a: 2}]'
	bad "entries\[0\].sweep.zip: 'c' is no dimension" 'a: [1, 2]' 'zip: [[a, c]]'
	bad "entries\[0\].sweep.tunableop: 'maybe' is not on or off" 'tunableop: [on, maybe]'
	bad "entries\[0\].sweep.exclude: '3' is not one of a's values" 'a: [1, 2]' 'exclude: [{a: 3}]'
	# 100,000 points: refused without --yes, before anything is built.
	{
		printf 'entries:\n  - name: big\n    models: [m]\n    sweep:\n'
		for d in a b c d e; do printf '      %s: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n' "$d"; done
	} >big.yaml
	expect 3 "$RM" suite big.yaml
	grep -q "big.yaml' line 2: entry 'big': its sweep has 100000 points (100000 or more): give --yes" cmd.err ||
		fail "$(cat cmd.err)"
	expect 3 "$RM" run --suite big.yaml --dry-run
	grep -q "give --yes" cmd.err || fail "run: $(cat cmd.err)"
	expect 0 "$RM" suite big.yaml --yes
	[ "$(jq '.entries[0].points | length' cmd.out)" = 100000 ] || fail "points with --yes"
	;;

sweep_run)
	# A 2x2 sweep of a stand-in model whose throughput depends on its arguments, through
	# `run --suite` on the real engine: 4 configurations x 2 repeats, every row with its
	# parameters; the sweep table is the 2x2; run.json and the database hold the parameters
	# by name; the report draws the curves. A second entry's model writes MAD's narrow
	# multiple_results (a cell per row in columns): each cell its own configuration.
	need sqlite3 sqlite3
	need jq jq
	DOCKER_HOST=$("$SRC/tools/ensure-docker.sh")
	export DOCKER_HOST
	t="w$$"
	mkdir -p docker/smoke scripts/grid
	cp "$SRC/docker/smoke.Dockerfile" "$SRC/docker/.dockerignore" docker/
	cp "$SRC/docker/smoke/busybox" docker/smoke/busybox
	cat >scripts/grid/run.sh <<'S'
bs=8 prec=fp16
while [ $# -gt 0 ]; do
	case $1 in --batch_size) bs=$2; shift 2 ;; --precision) prec=$2; shift 2 ;; *) shift ;; esac
done
v=$((bs * 100 / 8))
[ "$prec" = bf16 ] && v=$((v * 3 / 2))
echo "performance: $v samples_per_second"
S
	cat >scripts/grid/serve.sh <<'S'
printf 'model,benchmark,inp,out,max_concurrency,performance,metric\n' >perf_serve.csv
for c in 8 16; do printf 'Kimi,throughput_sweep,1024,1024,%s,%s,tok/s\n' "$c" "$((c * 10))" >>perf_serve.csv; done
S
	m='"dockerfile":"docker/smoke","n_gpus":"-1","owner":"ci","args":""'
	printf '[{"name":"%s_grid","scripts":"scripts/grid/run.sh","tags":["sw"],%s},{"name":"%s_serve","scripts":"scripts/grid/serve.sh","tags":["sw"],"multiple_results":"perf_serve.csv",%s}]' \
		"$t" "$m" "$t" "$m" >models.json
	cat >grid.yaml <<Y
entries:
  - name: grid
    models: [${t}_grid]
    repeat: 2
    sweep:
      batch_size: [8, 16]
      precision: [fp16, bf16]
  - models: [${t}_serve]
Y
	expect 0 "$RM" run --suite grid.yaml -o out/perf.csv --log-dir out/logs -q --html out/report.html \
		--export "sqlite:$WORK/r.db" --no-step-summary
	[ "$(awk -F, -v m="${t}_grid" '$1 == m' out/perf.csv | wc -l)" = 8 ] || fail "rows: $(cat out/perf.csv)"
	for c in 'batch_size=8,precision=fp16:100' 'batch_size=8,precision=bf16:150' \
		'batch_size=16,precision=fp16:200' 'batch_size=16,precision=bf16:300'; do
		p=${c%:*} v=${c#*:}
		json=$(printf '{"%s"}' "$(echo "$p" | sed 's/=/":"/g; s/,/","/g')")
		n=$(python3 - "$json" "$v" out/perf.csv "${t}_grid" <<'P'
import csv, json, sys
want, v, path, model = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
rows = [r for r in csv.DictReader(open(path)) if r["model"] == model and json.loads(r["config"] or "{}") == want]
assert all(r["performance"] == v and len(r["config_key"]) == 12 for r in rows), rows
assert len({r["config_key"] for r in rows}) == 1
print(len(rows))
P
		) || fail "the rows of $p"
		[ "$n" = 2 ] || fail "$p: $n rows"
	done
	[ "$(awk -F, 'NR > 1 {print $NF}' out/perf.csv | sort -u | wc -l)" = 6 ] || fail "4 + 2 configuration keys"
	expect 0 "$RM" report sweep out/perf.csv --model "${t}_grid" --rows batch_size --columns precision
	grep -q '^8  *100  *150$' cmd.out && grep -q '^16  *200  *300$' cmd.out || fail "the 2x2: $(cat cmd.out)"
	cat cmd.out
	expect 0 "$RM" report sweep out/perf.csv --model "${t}_serve_Kimi" --rows max_concurrency
	grep -q '^16  *160$' cmd.out || fail "the narrow cells: $(cat cmd.out)"
	jq -e '.entries[0].points | length == 4 and .[3].params == {"batch_size": "16", "precision": "bf16"} and .[3].name == "grid[batch_size=16,precision=bf16]"' out/run.json >/dev/null ||
		fail "run.json: $(jq .entries out/run.json)"
	[ "$(sqlite3 r.db "select count(*) from results where model = '${t}_grid'")" = 8 ] || fail "SQLite rows"
	[ "$(sqlite3 r.db "select count(distinct config_key) from config_params where name = 'batch_size'")" = 4 ] ||
		fail "config_params: $(sqlite3 r.db 'select * from config_params')"
	grep -q "<figure class=\"sweep\" data-model=\"${t}_grid\"><figcaption>${t}_grid: samples_per_second by batch_size" out/report.html ||
		fail "the report has no curves"
	logs=(out/logs/"${t}_grid.batch_size=16.precision=bf16".*.r2.live.log)
	[ -f "${logs[0]}" ] || fail "logs: $(ls out/logs)"
	;;

docker_regression)
	# A real run on the engine, twice at 100 samples/s, then a planted slower build of the
	# same model: the gate trips, JUnit validates, both databases hold the runs.
	need xmllint libxml2-utils
	DOCKER_HOST=$("$SRC/tools/ensure-docker.sh")
	export DOCKER_HOST
	mkdir -p docker/smoke scripts/gate
	cp "$SRC/docker/smoke.Dockerfile" "$SRC/docker/.dockerignore" docker/
	cp "$SRC/docker/smoke/busybox" docker/smoke/busybox
	cat >scripts/gate/run.sh <<'S'
echo "step 1"
echo "performance: $(cat figure) samples_per_second"
S
	# The figure comes from a file beside the script: the model's args, like its other
	# settings, are part of its configuration, and a change of them is a new series.
	printf '[{"name":"it_res_gate","dockerfile":"docker/smoke","scripts":"scripts/gate/run.sh","n_gpus":"-1","owner":"ci","tags":["it"],"args":""}]' >models.json
	model() { echo "$1" >scripts/gate/figure; }
	model 100
	for i in 1 2; do expect 0 "$RM" --tags it_res_gate -o perf.csv -q; done
	model 80
	expect 0 "$RM" --tags it_res_gate -o perf.csv -q
	[ "$(csv_col perf.csv 3 relative_change)" = "-20.00" ] || fail "runner's relative_change: $(csv_col perf.csv 3 relative_change)"
	expect 6 "$RM" report ci perf.csv --junit junit.xml --summary-markdown summary.md \
		--html report.html --archive run.tar.gz --export "sqlite:$WORK/r.db" \
		--fail-on-regression 5 --title docker --no-step-summary
	xmllint --noout --schema "$SRC/tests/results/junit.xsd" junit.xml || fail "junit.xml invalid"
	grep -q '<failure type="regression" message="-20.00%' junit.xml || fail "no regression in junit"
	grep -q 'it_res_gate\.[^/]*\.live\.log$' <(tar tzf run.tar.gz) || fail "archive lacks the log"
	[ "$(sqlite3 r.db "select count(*) from results where model = 'it_res_gate'")" = 1 ] ||
		fail "SQLite lacks the run"
	# The database history as the baseline for the next run, still at 80: the step of the
	# third run persists, so the gate still fails, naming that run, until it is accepted.
	# The three runs are exported with one start second and run ids in reverse order, so
	# only the export order (perf.csv's) can tell which came last: runs within one second
	# used to be ordered by their ids, and the gate then judged against the wrong run.
	tag="g$$"
	awk -F, -v OFS=, -v t="$tag" 'NR == 1 {print; next}
		{if (!($31 in id)) id[$31] = sprintf("%s-%d", t, 9 - n++); $31 = id[$31];
		 $30 = "2024-06-01T00:00:00Z"; print}' perf.csv >tie.csv
	expect 0 "$RM" export --db "$(pg_url)" tie.csv
	[ "$(psql -qAt "$(pg_url)" -c "select count(*) from results where model = 'it_res_gate' and performance = 80")" -ge 1 ] ||
		fail "PostgreSQL lacks the slow run"
	third=$(awk -F, 'NR == 4 {print $31}' tie.csv)
	[ "$third" = "$tag-7" ] || fail "tie.csv: $(cat tie.csv)"
	expect 0 "$RM" --tags it_res_gate -o perf.csv -q
	# shellcheck disable=SC2016
	expect 6 "$RM" report ci perf.csv --baseline "$(pg_url)" --fail-on-regression 5 \
		--no-step-summary --summary-markdown again.md
	grep -q "regression: .it_res_gate. samples_per_second .*: -20.00% since run $third " again.md ||
		fail "the persisting step is not reported from the third run: $(cat again.md)"
	expect 0 "$RM" accept "$(pg_url)" --model it_res_gate --reason "slower on purpose"
	grep -q "accepted: it_res_gate samples_per_second on .* from run $third" cmd.err || fail "$(cat cmd.err)"
	expect 0 "$RM" report ci perf.csv --baseline "$(pg_url)" --fail-on-regression 5 --no-step-summary
	[ "$(psql -qAt "$(pg_url)" -c "select since_run || ' ' || reason from accepted where model = 'it_res_gate'")" = "$third slower on purpose" ] ||
		fail "the database does not hold the acceptance"
	;;

suite_run)
	# The issue's "done when": a suite file through `run --suite` on the real engine, one run
	# id for its entries, run.json, JUnit validated by xmllint, the report in headless
	# Chromium, the results read back from SQLite and PostgreSQL, and the gate tripped by a
	# planted slower result; then the database as the next night's baseline.
	need xmllint libxml2-utils
	need sqlite3 sqlite3
	need psql postgresql-client
	need jq jq
	chrome=$(chromium_bin)
	DOCKER_HOST=$("$SRC/tools/ensure-docker.sh")
	export DOCKER_HOST
	pg=$(pg_url)
	t="s$$" # model names of this test only: the PostgreSQL server is shared by the cases
	mkdir -p docker/smoke scripts/s suites
	cp "$SRC/docker/smoke.Dockerfile" "$SRC/docker/.dockerignore" docker/
	cp "$SRC/docker/smoke/busybox" docker/smoke/busybox
	cat >scripts/s/run.sh <<'S'
echo "step 1"
[ -n "${SUITE_CTX:-}" ] && echo "context $SUITE_CTX"
echo "performance: $(cat "$MAD_MODEL_NAME.figure") samples_per_second"
S
	models() { # A1 A2 B: the figures the three models print, from files beside the script
		# (their args, as every setting of theirs, are part of their configuration)
		local m='"dockerfile":"docker/smoke","scripts":"scripts/s/run.sh","n_gpus":"-1","owner":"ci"'
		echo "$1" >"scripts/s/${t}_a1.figure"
		echo "$2" >"scripts/s/${t}_a2.figure"
		echo "$3" >"scripts/s/${t}_b.figure"
		printf '[{"name":"%s_a1",%s,"tags":["%s_a"],"args":""},' "$t" "$m" "$t"
		printf '{"name":"%s_a2",%s,"tags":["%s_a"],"args":"","metric_direction":{"samples_per_second":"higher"}},' "$t" "$m" "$t"
		printf '{"name":"%s_b",%s,"tags":["%s_b"],"args":""}]' "$t" "$m" "$t"
	}
	cat >suites/common.yaml <<'Y'
defaults:
  timeout: 120
  regression: {fail_on_regression: 5}
Y
	cat >suites/nightly.yaml <<Y
suite: nightly
include: common.yaml
entries:
  - tags: [${t}_a]
    repeat: 2
  - models: [${t}_b]
    additional_context: {docker_env_vars: {SUITE_CTX: entry-b}}
    regression: {fail_on_regression: off}
Y
	ci() {
		"$RM" run --suite suites/nightly.yaml -o out/perf.csv --log-dir out/logs -q \
			--junit out/junit.xml --summary-markdown out/summary.md --html out/report.html \
			--archive out/run.tar.gz --export "sqlite:$WORK/r.db" --export "$pg" \
			--no-step-summary "$@"
	}
	run_ids() { awk -F, 'NR>1{print $31}' out/perf.csv | uniq; }
	rows_of() { # RUN_ID MODEL: relative_change of each row
		awk -F, -v r="$1" -v m="$2" '$31==r && $1==m {print $20}' out/perf.csv
	}

	t0=$(now)
	models 100 200 50 >models.json
	expect 0 ci --additional-context '{"docker_env_vars": {"CLI_TOKEN": "hunter2-cli-only"}}'
	echo "stage night 1 (3 models, 5 runs, every output): $(since "$t0") s"
	! grep -q "unknown field" cmd.err || fail "the registry warns about metric_direction: $(cat cmd.err)"
	[ "$(run_ids | wc -l)" = 1 ] || fail "a suite run has one run id: $(run_ids)"
	rid1=$(run_ids)
	[ "$(($(wc -l <out/perf.csv) - 1))" = 5 ] || fail "rows: $(cat out/perf.csv)"
	jq -e --arg r "$rid1" --arg t "$t" '.run_id == $r and .suite == "nightly" and
		(.entries | length) == 2 and .entries[0].selected == [$t + "_a1", $t + "_a2"] and
		.entries[1].selected == [$t + "_b"] and .entries[1].fail_on_regression == "off" and
		.entries[0].fail_on_regression == 5 and (.doctor | length) > 0 and
		(.git_commit | type) == "string" and (.options.export | length) == 2' out/run.json >/dev/null ||
		fail "run.json: $(cat out/run.json)"
	! grep -q 'hunter2' out/run.json || fail "run.json holds the command line's context text"
	grep -q 'context entry-b' out/logs/"${t}_b.$rid1.live.log" || fail "the entry's context did not reach the container"
	xmllint --noout --schema "$SRC/tests/results/junit.xsd" out/junit.xml || fail "junit.xml invalid"
	# 5 rows, and a testcase per gated metric (skipped: nothing to compare with yet)
	grep -q 'tests="8" failures="0" errors="0" skipped="3"' out/junit.xml || fail "counts: $(grep '<testsuite ' out/junit.xml)"
	tar tzf out/run.tar.gz >list.txt
	for f in "run.$rid1.json" junit.xml summary.md report.html perf.csv "${t}_a1.$rid1.r2.live.log" "${t}_a1.$rid1.build.log"; do
		grep -q "/$f\$" list.txt || fail "archive lacks $f: $(cat list.txt)"
	done
	[ "$(sqlite3 r.db "select count(*) from results where run_id = '$rid1'")" = 5 ] || fail "SQLite rows"
	[ "$(psql -qAt "$pg" -c "select suite || ' ' || count(*) from results join runs using (run_id) where run_id = '$rid1' group by suite")" = "nightly 5" ] ||
		fail "PostgreSQL rows"

	# Night 2: a1 planted 20 % slower (both repeats: no noise to hide in), b 50 % slower but
	# its entry's gate is off. Exit 6; JUnit says which; report ci on the files agrees.
	t0=$(now)
	models 80 200 25 >models.json
	expect 6 ci
	echo "stage night 2 (planted regression): $(since "$t0") s"
	rid2=$(run_ids | tail -n 1)
	[ "$rid2" != "$rid1" ] || fail "the second night has the first night's run id"
	[ "$(rows_of "$rid2" "${t}_a1" | head -n 1)" = "-20.00" ] || fail "relative_change: $(rows_of "$rid2" "${t}_a1")"
	xmllint --noout --schema "$SRC/tests/results/junit.xsd" out/junit.xml || fail "junit.xml invalid"
	[ "$(grep -c '<failure type="regression"' out/junit.xml)" = 1 ] || fail "regressions in JUnit: $(grep -c '<failure type="regression"' out/junit.xml)"
	grep -A1 "<testcase name=\"${t}_a1 samples_per_second vs baseline\"" out/junit.xml |
		grep -q '<failure type="regression" message="-20.00%' || fail "the regression testcase is not a1's"
	grep -q "^| ${t}_a1 | samples_per_second | SUCCESS | .* regression |\$" out/summary.md || fail "summary: $(cat out/summary.md)"
	grep -q "^| ${t}_b | .* regression (not gated: its suite entry is off) |\$" out/summary.md || fail "summary: $(cat out/summary.md)"
	expect 6 "$RM" report ci out/perf.csv --junit again.xml --no-step-summary
	grep -q '1 regression(s)$' cmd.err || fail "report ci on the files: $(cat cmd.err)"
	t0=$(now)
	"$chrome" "${CHROMIUM_FLAGS[@]}" --user-data-dir="$WORK/profile" --dump-dom \
		"file://$WORK/out/report.html" >dom.html 2>console.txt || fail "chromium failed: $(tail -n 5 console.txt)"
	echo "stage chromium: $(since "$t0") s"
	if grep 'CONSOLE' console.txt; then fail "console messages while loading the report"; fi
	[ "$(grep -o "<svg class=\"trend\" data-model=\"${t}_[ab][12]*\"" dom.html | sort -u | wc -l)" = 3 ] || fail "trend plots"
	grep -q "<tr class=\"regression\" data-model=\"${t}_a1\">" dom.html || fail "the report does not flag a1"
	for db in "sqlite3 r.db" "psql -qAt $pg -c"; do
		[ "$($db "select count(distinct run_id) from results where model = '${t}_a1' and performance = 80")" = 1 ] ||
			fail "$db lacks the slow night"
	done

	# Night 3: back to 100, compared with PostgreSQL's history (night 2, before this run).
	t0=$(now)
	models 100 200 50 >models.json
	expect 0 ci --baseline "$pg"
	echo "stage night 3 (database baseline): $(since "$t0") s"
	rid3=$(run_ids | tail -n 1)
	[ "$(rows_of "$rid3" "${t}_a1" | sort -u)" = "+25.00" ] || fail "relative_change against the database: $(rows_of "$rid3" "${t}_a1")"
	[ "$(psql -qAt "$pg" -c "select count(distinct run_id) from results where model like '${t}_%'")" = 3 ] ||
		fail "PostgreSQL runs"

	# Mistakes in a suite fail before anything runs, naming the entry.
	rows=$(wc -l <out/perf.csv)
	printf 'entries:\n  - models: [%s_nosuch]\n' "$t" >suites/bad.yaml
	expect 3 "$RM" run --suite suites/bad.yaml -o out/perf.csv --junit out/j.xml
	grep -q "bad.yaml' line 2: entry '${t}_nosuch': models: '${t}_nosuch' is not a model name" cmd.err || fail "$(cat cmd.err)"
	printf 'entries:\n  - tags: [%s_a]\n  - models: [%s_a1]\n' "$t" "$t" >suites/twice.yaml
	expect 3 "$RM" run --suite suites/twice.yaml -o out/perf.csv
	grep -q "model '${t}_a1' is selected by entry 1 (${t}_a) and entry 2" cmd.err || fail "$(cat cmd.err)"
	expect 2 "$RM" run --suite suites/nightly.yaml --tags "${t}_a"
	[ "$(wc -l <out/perf.csv)" = "$rows" ] || fail "a refused suite wrote rows"
	;;

*)
	fail "unknown case"
	;;
esac
echo "ok [$case_name] in $(since "$CASE_T0") s"

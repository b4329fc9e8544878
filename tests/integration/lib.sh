# shellcheck shell=bash
# shellcheck disable=SC2154 # case_name, SRC and SOCK are set by the sourcing script
# Helpers shared by the integration cases (cases.sh, faults.sh); sourced after case_name,
# RM, SRC, SOCK and the working folder are set.

fail() {
	echo "FAIL [$case_name]: $*" >&2
	exit 1
}
api() { # METHOD PATH
	curl -fsS --unix-socket "$SOCK" -X "$1" "http://localhost$2"
}
# Containers labelled with this model name (running or not).
containers_of() {
	api GET "/containers/json?all=1&filters=$(printf '{"label":["run_models.model=%s"]}' "$1" | jq -sRr @uri)" | jq length
}
# The value of column NAME in row N (1 = first data row) of a CSV without embedded newlines.
csv_col() { # FILE N NAME
	awk -v n="$2" -v name="$3" -F, 'NR==1{for(i=1;i<=NF;i++) if($i==name) c=i; next}
		NR==n+1{print $c}' "$1"
}
# Makes a MAD folder with the smoke image; models.json from stdin; scripts written by caller.
mkmad() {
	mkdir -p docker/smoke scripts
	cp "$SRC/docker/smoke.Dockerfile" "$SRC/docker/.dockerignore" docker/
	cp "$SRC/docker/smoke/busybox" docker/smoke/busybox
	cat >models.json
}
script() { # DIR, body from stdin
	mkdir -p "scripts/$1"
	cat >"scripts/$1/run.sh"
}
entry() { # NAME DIR ARGS [EXTRA_JSON]
	printf '{"name":"%s","dockerfile":"docker/smoke","scripts":"scripts/%s/run.sh","n_gpus":"-1","owner":"ci","tags":["it"],"args":"%s"%s}' \
		"$1" "$2" "$3" "${4:+,$4}"
}


# shellcheck shell=bash
# Shared by the tools/ scripts (sourced, not run).

# Prints the Debian packages given that are not installed yet, space-separated.
missing_packages() {
	local missing="" p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
	done
	echo "$missing"
}

# Installs the Debian packages given that are not installed yet (root or sudo).
ensure_packages() {
	local missing sudo=""
	missing=$(missing_packages "$@")
	[ -n "$missing" ] || return 0
	[ "$(id -u)" = 0 ] || sudo=sudo
	echo "run_models: installing$missing" >&2
	$sudo apt-get update -qq >&2
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >&2
}

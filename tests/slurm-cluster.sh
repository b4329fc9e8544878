#!/usr/bin/env bash
# A real two-node SLURM cluster on one machine (Debian 12: slurm-wlm 22.05, munge; root).
# Nodes n1 and n2 (two slurmd on one host), one slurmctld, slurmdbd on a private MariaDB
# so that `sacct` works as on a real cluster; munge auth; no GPUs, no cgroups; every daemon on
# 127.0.0.1 only. Everything lives under $SLURM_TEST_DIR.
#
#   slurm-cluster.sh start    # idempotent; prints "export SLURM_CONF=..." last
#   slurm-cluster.sh stop     # cancels every job, stops what start started (by PID)
#   slurm-cluster.sh status   # exit 0 when both nodes answer
# or source it and call slurm_start / slurm_stop (slurm_start exports SLURM_CONF).
#
# SLURM_TEST_DIR       default /tmp/run_models-slurm (created mode 755: munged needs a+x above
#                      its socket, so not a mktemp -d folder as is)
# SLURM_TEST_PORT      default 17000: slurmctld; slurmd n1 +1, n2 +2; MariaDB +3; slurmdbd +4;
#                      srun's ports +10..+99
# SLURM_TEST_PARTITION default debug (the only partition: n1 and n2, default, no time limit)
# SLURM_TEST_CPUS      default 4: CPUs each node claims (so 4 one-CPU jobs run at once per node)
# SLURM_TEST_DBD       default 1; 0: no slurmdbd/MariaDB (sacct then says "accounting storage
#                      is disabled"; `sacct -c` reads the jobcomp file; scontrol still works)

_slurm_dir() { echo "${SLURM_TEST_DIR:-/tmp/run_models-slurm}"; }
_slurm_alive() { # PIDFILE: its process runs (a zombie not yet reaped by init does not count)
	local pid st
	pid=$(cat "$1" 2>/dev/null) && [ -n "$pid" ] && st=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null) &&
		[ "${st%% *}" != Z ]
}
_slurm_port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
_slurm_wait_port() { # PORT PIDFILE: up to 20 s
	for _ in $(seq 1 200); do
		_slurm_port_open "$1" && return 0
		[ -n "${2:-}" ] && [ -f "$2" ] && ! _slurm_alive "$2" && return 1
		sleep 0.1
	done
	return 1
}
_slurm_daemons="slurmd.n1 slurmd.n2 slurmctld slurmdbd mariadbd munged" # stop order

slurm_status() {
	local d f; d=$(_slurm_dir)
	[ -f "$d/slurm.conf" ] || return 1
	for f in munged slurmctld slurmd.n1 slurmd.n2; do _slurm_alive "$d/$f.pid" || return 1; done
	if grep -q '^AccountingStorageType=accounting_storage/slurmdbd' "$d/slurm.conf"; then
		_slurm_alive "$d/slurmdbd.pid" && _slurm_alive "$d/mariadbd.pid" || return 1
	fi
	# both nodes registered and usable (idle, mixed, allocated or completing; not down/drained)
	[ "$(SLURM_CONF=$d/slurm.conf sinfo -h -N -o '%N %t' 2>/dev/null |
		grep -cE '^n[12] (idle|mix|alloc|comp)$')" = 2 ]
}

slurm_start() {
	local d p part cpus dbd host pkgs
	d=$(_slurm_dir); p=${SLURM_TEST_PORT:-17000}; part=${SLURM_TEST_PARTITION:-debug}
	cpus=${SLURM_TEST_CPUS:-4}; dbd=${SLURM_TEST_DBD:-1}
	export SLURM_CONF=$d/slurm.conf
	slurm_status && return 0
	slurm_stop >/dev/null 2>&1 # half started, or a different set-up: start over
	pkgs=
	command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null ||
		pkgs="$pkgs slurm-wlm"
	command -v munged >/dev/null || pkgs="$pkgs munge"
	if [ "$dbd" = 1 ]; then
		command -v slurmdbd >/dev/null || pkgs="$pkgs slurmdbd"
		command -v mariadbd >/dev/null && command -v mariadb-install-db >/dev/null || pkgs="$pkgs mariadb-server"
	fi
	if [ -n "$pkgs" ]; then
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >/dev/null 2>&1 ||
			{ echo "slurm_start: apt-get install$pkgs failed (apt-get update first?)" >&2; return 1; }
	fi
	host=$(hostname -s)
	mkdir -p "$d" && chmod 755 "$d" || return 1
	rm -rf "$d/state" "$d/spool" "$d/log" "$d/munge" "$d/db"
	mkdir -p "$d/state" "$d/spool/n1" "$d/spool/n2" "$d/log" "$d/munge" && chmod 755 "$d/munge" || return 1
	cat >"$d/slurm.conf" <<EOF
# A two-node cluster on one host (slurm-cluster.sh); every daemon on 127.0.0.1.
ClusterName=rmtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$p
SlurmdPort=$((p + 1))
SrunPortRange=$((p + 10))-$((p + 99))
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$d/log/jobcomp.txt
MailProg=/bin/true
KillWait=5
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((p + 1)) CPUs=$cpus RealMemory=1000 State=UNKNOWN
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((p + 2)) CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=$part Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
EOF
	if [ "$dbd" = 1 ]; then
		cat >>"$d/slurm.conf" <<EOF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$((p + 4))
# the munge socket slurmctld and the commands use to reach slurmdbd
AccountingStoragePass=$d/munge/munge.sock
EOF
		# slurmdbd reads slurmdbd.conf beside $SLURM_CONF; it must be mode 600
		cat >"$d/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.sock
DbdHost=$host
DbdAddr=127.0.0.1
DbdPort=$((p + 4))
CommunicationParameters=NoInAddrAny
SlurmUser=root
PidFile=$d/slurmdbd.pid
LogFile=$d/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$((p + 3))
StorageUser=root
StorageLoc=slurm_acct_db
EOF
		chmod 600 "$d/slurmdbd.conf"
	else
		echo "AccountingStorageType=accounting_storage/none" >>"$d/slurm.conf"
		rm -f "$d/slurmdbd.conf"
	fi
	# munge: a fresh key, its own socket (no system munged needed or touched)
	mungekey -c -k "$d/munge/munge.key" >/dev/null 2>&1 ||
		{ echo "slurm_start: mungekey failed" >&2; return 1; }
	munged --socket="$d/munge/munge.sock" --key-file="$d/munge/munge.key" \
		--pid-file="$d/munged.pid" --log-file="$d/log/munged.log" --seed-file="$d/munge/munged.seed" ||
		{ echo "slurm_start: munged failed: $(tail -n 1 "$d/log/munged.log")" >&2; return 1; }
	if [ "$dbd" = 1 ]; then
		local myopts="--no-defaults --user=root --datadir=$d/db --innodb-log-file-size=8M
			--innodb-buffer-pool-size=64M --innodb-data-file-path=ibdata1:8M:autoextend"
		# shellcheck disable=SC2086
		mariadb-install-db $myopts --auth-root-authentication-method=normal --skip-test-db \
			>"$d/log/mariadb-install.log" 2>&1 ||
			{ echo "slurm_start: mariadb-install-db failed: $(tail -n 2 "$d/log/mariadb-install.log")" >&2; return 1; }
		# shellcheck disable=SC2086
		setsid mariadbd $myopts --pid-file="$d/mariadbd.pid" --socket="$d/mariadb.sock" \
			--bind-address=127.0.0.1 --port=$((p + 3)) --skip-name-resolve --innodb-lock-wait-timeout=900 \
			--log-error="$d/log/mariadbd.log" </dev/null >/dev/null 2>&1 &
		_slurm_wait_port $((p + 3)) || { echo "slurm_start: MariaDB did not start: $(tail -n 2 "$d/log/mariadbd.log")" >&2; return 1; }
		SLURM_CONF=$d/slurm.conf slurmdbd || { echo "slurm_start: slurmdbd failed" >&2; return 1; }
		_slurm_wait_port $((p + 4)) "$d/slurmdbd.pid" ||
			{ echo "slurm_start: slurmdbd did not start: $(tail -n 2 "$d/log/slurmdbd.log")" >&2; return 1; }
	fi
	slurmctld -f "$d/slurm.conf" || { echo "slurm_start: slurmctld failed: $(tail -n 2 "$d/log/slurmctld.log")" >&2; return 1; }
	slurmd -f "$d/slurm.conf" -N n1 || { echo "slurm_start: slurmd n1 failed" >&2; return 1; }
	slurmd -f "$d/slurm.conf" -N n2 || { echo "slurm_start: slurmd n2 failed" >&2; return 1; }
	for _ in $(seq 1 200); do # 20 s
		slurm_status && return 0
		sleep 0.1
	done
	echo "slurm_start: nodes not up after 20 s: $(sinfo -h -N -o '%N %t' 2>&1 | tr '\n' ' ')" >&2
	tail -n 5 "$d/log/slurmctld.log" >&2
	return 1
}

slurm_stop() {
	local d f pid left
	d=$(_slurm_dir)
	[ -d "$d" ] || return 0
	if _slurm_alive "$d/slurmctld.pid"; then
		SLURM_CONF=$d/slurm.conf scancel --user="$(id -un)" >/dev/null 2>&1
		for _ in $(seq 1 60); do # KillWait is 5 s
			[ -z "$(SLURM_CONF=$d/slurm.conf squeue -h -o %i 2>/dev/null)" ] && break
			sleep 0.25
		done
	fi
	for f in $_slurm_daemons; do
		_slurm_alive "$d/$f.pid" && kill "$(cat "$d/$f.pid")" 2>/dev/null
	done
	# step daemons outlive slurmd by design; ours are the slurmstepd whose cwd is under $d
	for pid in /proc/[0-9]*; do
		pid=${pid#/proc/}
		case "$(readlink "/proc/$pid/cwd" 2>/dev/null)" in "$d"/*)
			[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = /usr/sbin/slurmstepd ] && kill -9 "$pid" 2>/dev/null ;;
		esac
	done
	for _ in $(seq 1 100); do # 10 s
		left=0
		for f in $_slurm_daemons; do _slurm_alive "$d/$f.pid" && left=1; done
		[ $left = 0 ] && break
		sleep 0.1
	done
	for f in $_slurm_daemons; do
		_slurm_alive "$d/$f.pid" && kill -9 "$(cat "$d/$f.pid")" 2>/dev/null
		rm -f "$d/$f.pid"
	done
	rm -rf "$d/db" # the accounting database (tens of MB); logs and configs stay for a look
	return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case "${1:-}" in
	start) slurm_start && echo "export SLURM_CONF=$SLURM_CONF" ;;
	stop) slurm_stop ;;
	status) slurm_status ;;
	*) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
	esac
fi

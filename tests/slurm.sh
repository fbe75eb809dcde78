#!/bin/sh
# tests/slurm.sh: a real Slurm for the tests - Debian's slurm-wlm 22.05
# (slurmctld + slurmd) on loopback: one node with this machine's CPUs (at
# least 2), every file under STATEDIR, ports picked free, run as root.
#
#   tests/slurm.sh start STATEDIR   start both daemons; wait until sinfo
#                                   shows the node idle; write STATEDIR/env
#   tests/slurm.sh stop STATEDIR    SIGKILL the daemons (by PID), then every
#                                   job step's slurmstepd and processes;
#                                   STATEDIR stays (logs)
#
# STATEDIR/env: `export SLURM_CONF=STATEDIR/slurm.conf` (every Slurm command
# reads it) and SPOTRUN_TEST_SLURM_NODE, the node's name. Logs: STATEDIR/log/
# (slurmctld.log, slurmd.log, and each daemon's stdout and stderr).
#
# The cluster is set up as doc/slurm.md asks of an administrator:
# RequeueExit=75 (spotrun's "preempted, checkpoint committed" requeues the
# job), and preemption by partition priority with PreemptMode=REQUEUE, a
# GraceTime on the preemptible partition and preempt_send_user_signal, so a
# preempted job's --signal=B:TERM reaches its batch shell alone. Partitions:
# `batch` (the default, preemptible, GraceTime=30) and `urgent` (a higher
# PriorityTier: its jobs preempt those of `batch`). For fast tests:
# AuthInfo=cred_expire=5 (the least Slurm takes; a requeued job waits that
# long, 120 s by default, before it may start again) and the schedulers
# every second.
#
# What works here (Debian 12's slurm-wlm 22.05.8, in a container without
# systemd, as root), found by trying:
# - Authentication: auth/none with cred/none (both plugins ship in
#   slurm-wlm-basic-plugins; Slurm 23.11 dropped them): no munged, no key.
#   Any request may then claim any user: loopback and tests only. (munge,
#   which the packages pull in and Debian's default, is not started.)
# - Process tracking: proctrack/linuxproc (a job step's processes are the
#   descendants of its slurmstepd, found in /proc); no systemd, nothing
#   outside STATEDIR. proctrack/cgroup works too on this machine's cgroup v1
#   freezer, but makes /sys/fs/cgroup/*/slurm_NODE, which two clusters with
#   the same node name would share. TaskPlugin=task/none.
# - slurmctld refuses to run unless SlurmctldHost names this host ("This
#   host (vm/vm) not a valid controller"); `localhost` counts, so the file
#   names no host. The node has a fixed name (slurmd -N) and 127.0.0.1.
# - Loopback only: under strace, both daemons and sbatch, squeue, scontrol,
#   scancel and srun connected to 127.0.0.1 and nothing else (no DNS).
# - slurmd logs "mpi/pmix: can not load PMIx library" at start (libpmix is
#   not installed): harmless with MpiDefault=none.
# - Start: 1.2-1.7 s until sinfo says idle (measured, 2 loaded CPUs);
#   stop: 0.05 s. A job starts within 0.5 s of sbatch.
# - Who gets a signal (checked with a job that logs what it gets):
#   `scancel --batch --signal=SIG JOB` (and --signal=B:SIG) kill(2)s the
#   batch shell's pid alone; `--full` signals the batch shell's process
#   group, so not a process group a child made (spotrun's job); neither:
#   every process of the job's steps, but not the batch step. Ending a job
#   (scancel, scontrol requeue, the time limit, preemption without
#   preempt_send_user_signal) sends SIGCONT and SIGTERM to every process of
#   every step, SIGKILL KillWait (10) seconds later. slurmstepd writes
#   "*** JOB N ON NODE CANCELLED AT ... ***" into the job's output on any
#   SIGTERM it delivers, including --signal's.
# - --signal=B:TERM@N before the time limit comes with slurmctld's periodic
#   time-limit check, up to 30 s after it is due.
# - linuxproc loses a process whose parent died (it is reparented away from
#   slurmstepd): when a batch shell dies, its children run on outside Slurm.
#   proctrack/cgroup kills them.
# - stop: slurmstepd (one per running job step) outlives a killed slurmd,
#   retrying its job-complete message for ever; stop kills each slurmstepd
#   holding this STATEDIR's slurmd.log open, with its descendants.
set -eu

. "$(dirname "$0")/daemon-util.sh"

node=spotrun1

die()
{
	echo "slurm.sh: $*" >&2
	exit 1
}

# ours PID: is PID a daemon of this STATEDIR?
ours()
{
	tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -qF -- "-f $st/slurm.conf"
}

# write_conf CTLD_PORT SLURMD_PORT: STATEDIR/slurm.conf.
write_conf()
{
	_cpus=$(nproc)
	[ "$_cpus" -ge 2 ] || _cpus=2
	cat >"$st/slurm.conf" <<EOF
# Written by tests/slurm.sh for a test cluster on loopback.
ClusterName=spotrun-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$st/state
SlurmdSpoolDir=$st/spool
SlurmctldPidFile=$st/run/slurmctld.pid
SlurmdPidFile=$st/run/slurmd.pid
SlurmctldLogFile=$st/log/slurmctld.log
SlurmdLogFile=$st/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# spotrun's exit 75: preempted with its checkpoint committed; run it again.
RequeueExit=75
# Preemption: jobs of a higher PriorityTier partition requeue those of a
# lower one; the preempted job gets its --signal at once (to its batch shell
# with B:) and GraceTime seconds before it is killed.
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
SlurmctldParameters=preempt_send_user_signal
KillWait=10
MailProg=/bin/true
# A requeued job may start again cred_expire seconds after it ended (120 by
# default), and then only when the scheduler runs next (sched_interval, 60 s
# by default, and on events).
AuthInfo=cred_expire=5
SchedulerParameters=sched_interval=1,bf_interval=1
# This machine's CPUs, at least 2 (config_overrides: slurmd takes the
# count from here), so that two small test jobs can run at once anywhere.
SlurmdParameters=config_overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=$_cpus State=UNKNOWN
PartitionName=batch Nodes=$node Default=YES PriorityTier=1 GraceTime=30 MaxTime=INFINITE State=UP
PartitionName=urgent Nodes=$node PriorityTier=2 PreemptMode=OFF MaxTime=INFINITE State=UP
EOF
}

# wait_idle: wait until sinfo shows the node idle (up to 30 s).
wait_idle()
{
	for _ in $(seq 1 300); do
		_state=$(SLURM_CONF=$st/slurm.conf sinfo -h -n "$node" -o %T 2>/dev/null) || true
		[ "$_state" = idle ] && return 0
		alive slurmctld || die "slurmctld exited: see $st/log/slurmctld.out, $st/log/slurmctld.log"
		alive slurmd || die "slurmd exited: see $st/log/slurmd.out, $st/log/slurmd.log"
		sleep 0.1
	done
	die "the node is not idle after 30 s (sinfo says '$_state'): see $st/log/"
}

cmd_start()
{
	[ ! -f "$st/slurmctld.pid" ] || die "$st is in use: run 'tests/slurm.sh stop $st' first"
	command -v slurmctld >/dev/null && command -v slurmd >/dev/null ||
	    die "slurmctld or slurmd is not installed: run build-aux/install-deps"
	mkdir -p "$st/state" "$st/spool" "$st/log" "$st/run"
	# A start that fails half-way, or is interrupted, leaves nothing running.
	trap cmd_stop EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	_ports=$(free_ports 2) || die "no free ports"
	write_conf $_ports
	SLURM_CONF=$st/slurm.conf
	export SLURM_CONF
	bg slurmctld slurmctld -D -i -f "$st/slurm.conf"
	bg slurmd slurmd -D -N "$node" -f "$st/slurm.conf"
	wait_idle
	cat >"$st/env.tmp" <<EOF
export SLURM_CONF=$st/slurm.conf
export SPOTRUN_TEST_SLURM_NODE=$node
EOF
	mv "$st/env.tmp" "$st/env"
	trap - EXIT INT TERM
}

# stepds: the slurmstepd processes of this cluster (one per job step):
# they hold this STATEDIR's slurmd.log open.
stepds()
{
	for _p in $(pgrep -x slurmstepd 2>/dev/null || true); do
		ls -l "/proc/$_p/fd" 2>/dev/null | grep -qF -- "$st/log/slurmd.log" &&
		    echo "$_p"
	done
	return 0
}

# tree PID: PID and its descendants.
tree()
{
	echo "$1"
	for _c in $(ps -e -o pid=,ppid= | awk -v p="$1" '$2 == p { print $1 }'); do
		tree "$_c"
	done
}

cmd_stop()
{
	# The daemons first, so that nothing new starts; then every job step
	# with its processes (a slurmstepd outlives slurmd, and would retry its
	# job-complete message for ever).
	kill_wait slurmctld
	kill_wait slurmd
	_pids=
	for _p in $(stepds); do
		_pids="$_pids $(tree "$_p")"
	done
	[ -z "$_pids" ] || kill -KILL $_pids 2>/dev/null || true
}

[ $# -eq 2 ] || die "usage: tests/slurm.sh start|stop STATEDIR"
st=$2
case $1 in
start) mkdir -p "$st" ;;
stop) [ -d "$st" ] || exit 0 ;;
esac
[ -d "$st" ] || die "no such directory: $st"
# Absolute, as in the daemons' command lines (see ours).
st=$(cd "$st" && pwd)
case $1 in
start) cmd_start ;;
stop) cmd_stop ;;
*) die "unknown command '$1': use start or stop" ;;
esac

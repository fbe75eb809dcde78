# lib.sh: helpers shared by the end-to-end tests (tests/t6*.sh, t7*.sh),
# sourced, POSIX sh: TAP output, editing job files, waiting for a line of
# output, running spotrun in the background, and cleaning up whatever a test
# started (its processes by id, the job's process groups, mounts, temp dirs)
# however it ends.
#
# The harness exports SPOTRUN (the built binary) and top_srcdir; run by hand:
#   SPOTRUN=$PWD/spotrun top_srcdir=/path/to/src sh /path/to/src/tests/t60-quickstart.sh

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${SPOTRUN:=$PWD/spotrun}"
. "$top_srcdir/tests/jobs/no-cloud.sh"	# auto probes loopback only
PY=/usr/bin/python3		# Debian's Python: the one that sees python3-torch
JOBS=$top_srcdir/tests/jobs

t_n=0			# tests run
t_failed=0
t_pids=			# background processes to kill at exit
t_pidfiles=		# files holding a job's process group id
t_mounts=		# mount points to unmount at exit
t_tmp=

t_cleanup() {
	for p in $t_pids; do
		kill -KILL "$p" 2>/dev/null
	done
	for f in $t_pidfiles; do
		[ -s "$f" ] && kill -KILL -- "-$(cat "$f")" 2>/dev/null
	done
	for m in $t_mounts; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	[ -n "$t_tmp" ] && rm -rf "$t_tmp"
}

# Make the temp dir ($t_tmp) and arrange the cleanup.
t_setup() {
	t_tmp=$(mktemp -d "${TMPDIR:-/tmp}/spotrun-e2e.XXXXXX") || t_bail "mktemp failed"
	# the GPU locks of this test's runs (runner/gpulock.h), apart from
	# those of tests running beside it with the same fake GPUs
	SPOTRUN_GPU_LOCK_DIR=$t_tmp/gpus
	export SPOTRUN_GPU_LOCK_DIR
	trap t_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	[ -x "$SPOTRUN" ] || t_bail "no spotrun binary at $SPOTRUN (run 'make spotrun' first)"
	[ -x "$PY" ] || t_skip_all "$PY not found"
}

t_bail() {
	echo "Bail out! $*"
	exit 1
}

t_skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

# t_result OK DESC: print one TAP line; OK is 0 for a pass (an exit status).
t_result() {
	t_n=$((t_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $t_n - $2"
	else
		t_failed=$((t_failed + 1))
		echo "not ok $t_n - $2"
	fi
	return "$1"
}

t_skip() {
	t_n=$((t_n + 1))
	echo "ok $t_n # SKIP $*"
}

t_diag() {
	printf '%s\n' "$@" | sed 's/^/# /'
}

# Show a file in the TAP output (after a failure).
t_show() {
	echo "# --- $1:"
	tail -n "${2:-40}" "$1" 2>/dev/null | sed 's/^/#   /'
}

t_is() {
	if [ "$1" = "$2" ]; then
		t_result 0 "$3"
	else
		t_result 1 "$3"
		t_diag "got:  '$1'" "want: '$2'"
		return 1
	fi
}

# t_has FILE STRING DESC: the file has a line containing STRING.
t_has() {
	if grep -qF -- "$2" "$1" 2>/dev/null; then
		t_result 0 "$3"
	else
		t_result 1 "$3"
		t_diag "no line with '$2' in $1"
		t_show "$1"
		return 1
	fi
}

# t_like FILE REGEX DESC: a line of the file matches the extended REGEX.
t_like() {
	if grep -qE -- "$2" "$1" 2>/dev/null; then
		t_result 0 "$3"
	else
		t_result 1 "$3"
		t_diag "no line matching /$2/ in $1"
		t_show "$1"
		return 1
	fi
}

# t_unlike FILE REGEX DESC: no line matches.
t_unlike() {
	if grep -qE -- "$2" "$1" 2>/dev/null; then
		t_result 1 "$3"
		t_diag "unexpected line matching /$2/ in $1:"
		grep -E -- "$2" "$1" | sed 's/^/#   /'
		return 1
	else
		t_result 0 "$3"
	fi
}

# Print the plan at the end; the exit status is 0 so TAP lines decide.
t_done() {
	echo "1..$t_n"
	exit 0
}

# ini_set FILE SECTION KEY VALUE: set KEY in [SECTION] of an INI file,
# replacing the key's line or adding it at the end of the section (and the
# section at the end of the file when it has none).
ini_set() {
	awk -v sec="$2" -v key="$3" -v val="$4" '
	function flush() { if (insec && !done) { print key " = " val; done = 1 } }
	/^[ \t]*\[[^]]*\][ \t]*$/ {
		flush()
		s = $0; gsub(/^[ \t]*\[|\][ \t]*$/, "", s)
		insec = (s == sec)
		print; next
	}
	insec && !done && $0 ~ "^[ \t]*" key "[ \t]*=" { print key " = " val; done = 1; next }
	{ print }
	END {
		flush()
		if (!done) { print ""; print "[" sec "]"; print key " = " val }
	}' "$1" > "$1.tmp" && mv "$1.tmp" "$1"
}

# ini_get FILE SECTION KEY: the value of KEY in [SECTION], or nothing.
ini_get() {
	awk -v sec="$2" -v key="$3" '
	/^[ \t]*\[[^]]*\][ \t]*$/ { s = $0; gsub(/^[ \t]*\[|\][ \t]*$/, "", s); insec = (s == sec); next }
	insec && $0 ~ "^[ \t]*" key "[ \t]*=" { sub(/^[^=]*=[ \t]*/, ""); print; exit }' "$1"
}

# t_jobfile NAME COMMAND [LINE...]: write $t_tmp/NAME.ini, a job of that
# name and command run in $t_tmp, its store $t_tmp/store and its local dir
# $t_tmp/local-NAME, the LINEs following in its [checkpoint] section (or in
# the sections they open).
t_jobfile() {
	_n=$1 _c=$2
	shift 2
	{
		printf '[job]\nname = %s\ncommand = %s\nworkdir = %s\n' "$_n" "$_c" "$t_tmp"
		printf '[checkpoint]\nstore = file://%s/store\nlocal_dir = %s/local-%s\n' "$t_tmp" "$t_tmp" "$_n"
		for _l in "$@"; do printf '%s\n' "$_l"; done
	} > "$t_tmp/$_n.ini"
}

# t_pidjob FILE NAME STORE COMMAND PROVIDER GRACE [KEY=VALUE in [checkpoint]...]:
# a job file, NAME running the shell COMMAND in $t_tmp with its store STORE
# (a URL) and its local dir $t_tmp/local-NAME, the provider PROVIDER (with
# grace = GRACE unless that is ""); the job's shell writes its pid (= its
# process group) to FILE.pid, so that leftovers are killed at exit.
t_pidjob() {
	_f=$1 _name=$2 _store=$3 _cmd=$4 _prov=$5 _grace=$6
	shift 6
	{
		printf '[job]\nname = %s\nshell = yes\ncommand = echo $$ > %s.pid; exec %s\n' \
		    "$_name" "$_f" "$_cmd"
		printf 'workdir = %s\n[checkpoint]\nstore = %s\nlocal_dir = %s/local-%s\n' \
		    "$t_tmp" "$_store" "$t_tmp" "$_name"
		printf '[provider]\nname = %s\n' "$_prov"
		[ -z "$_grace" ] || printf 'grace = %s\n' "$_grace"
	} > "$_f"
	for kv in "$@"; do
		ini_set "$_f" checkpoint "${kv%%=*}" "${kv#*=}"
	done
	t_pidfiles="$t_pidfiles $_f.pid"
}

# t_save_mib SECONDS: how many MiB of state tests/jobs/slowsave.py must
# write for its checkpoint (zstd level 19, 2 MiB chunks) to take about
# SECONDS to commit here and now, measured on a save of 4 MiB: the speed of
# such a save is the machine's and its load's (0.9 to 4.5 s for 16 MiB on
# the same 2 cores). At least 8, at most 256.
t_save_mib() {
	_d=$t_tmp/calibrate
	rm -rf "$_d"
	mkdir -p "$_d"
	printf '[job]\nname = calibrate\ncommand = %s %s/slowsave.py 4 0\nworkdir = %s\n[checkpoint]\nstore = file://%s/store\nlocal_dir = %s/local\ninterval = 1s\nlevel = 19\nchunk_size = 2MiB\n[provider]\nname = local\n' \
		"$PY" "$JOBS" "$_d" "$_d" "$_d" > "$_d/job.ini"
	# the job runs until its ^C, sent once its save is committed
	"$SPOTRUN" run "$_d/job.ini" > "$_d/out" 2> "$_d/err" &
	_p=$!
	wait_for "$_d/err" '  ckpt     0 step .*, committed in ' 120 "$_p"
	kill -INT "$_p" 2>/dev/null
	wait "$_p"
	sed -n 's/.*  ckpt     0 step .*, committed in .* (\([0-9.]*\) \([KMG]*i*B\)\/s)$/\1 \2/p' "$_d/err" |
	    awk -v s="$1" '{ r = $1; if ($2 == "KiB") r /= 1024; else if ($2 == "GiB") r *= 1024; else if ($2 == "B") r /= 1048576 }
		END { m = int(r * s + 1); if (m < 8) m = 8; if (m > 256) m = 256; print m }'
}

# t_bg NAME CMD...: start CMD in the background, stdout to $t_tmp/NAME.out,
# stderr to $t_tmp/NAME.err; its pid in $t_last (and killed at exit).
t_bg() {
	_name=$1
	shift
	"$@" > "$t_tmp/$_name.out" 2> "$t_tmp/$_name.err" &
	t_last=$!
	t_pids="$t_pids $t_last"
}

# t_wait PID: wait for a background process; its exit status in $t_rc.
# (stderr: dash reports "Killed" for a job that died by a signal.)
t_wait() {
	wait "$1" 2>/dev/null
	t_rc=$?
}

# wait_for FILE REGEX SECONDS [PID]: wait until a line of FILE matches REGEX;
# fails after SECONDS, or as soon as PID (if given) has exited without it.
wait_for() {
	_i=0
	while [ "$_i" -lt "$(($3 * 10))" ]; do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		if [ -n "$4" ] && ! kill -0 "$4" 2>/dev/null; then
			grep -qE -- "$2" "$1" 2>/dev/null && return 0
			return 1
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# Kill the process group whose id is in the file (a job left behind).
kill_group() {
	[ -s "$1" ] && kill -KILL -- "-$(cat "$1")" 2>/dev/null
	return 0
}

# restored_steps FILE: the steps attempts 2 and 3 restored, as the timeline
# in FILE says, on one line ("120 250 ").
restored_steps() {
	sed -nE 's/^[0-9:]+  attempt  [23] restored checkpoint [0-9]+ at step ([0-9]+) .*/\1/p' "$1" | tr '\n' ' '
}

# The `result: ...` line a job printed (the last one).
result_of() {
	grep -E '^result: [0-9a-f]{64}$' "$1" | tail -n 1
}

# Put the source tree's spotrun Python module (python/spotrun) first on
# PYTHONPATH, for the example jobs and the module's own test. The tests then
# use this checkout's module, not one `make install` put on the system.
t_python_module() {
	PYTHONPATH=$top_srcdir/python${PYTHONPATH:+:$PYTHONPATH}
	export PYTHONPATH
}

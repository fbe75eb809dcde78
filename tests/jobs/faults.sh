# faults.sh: what the tests that put tests/faultproxy between spotrun and
# a store share (t83-s3-faults.sh, t89-s3-accept.sh); sourced after lib.sh,
# with the proxy's control file at $t_tmp/control and its log at
# $t_tmp/proxy.log.
#
#   fault LINE             the proxy's fault for the next connections
#   plog REGEX             how many lines of the proxy's log match
#   wait_plog REGEX N SECS until N lines of the proxy's log match
#   alive PID              running, not a zombie
#   wait_count FILE REGEX N SECS PID   until N lines of FILE match
#   wait_max PID SECS      wait for PID, SIGKILLing it past SECS

# fault LINE: the proxy's fault for the next connections (a new file each
# time, so that the proxy rereads it).
fault() {
	echo "$1" > "$t_tmp/control.new"
	mv "$t_tmp/control.new" "$t_tmp/control"
}

# plog REGEX: lines of the proxy's log matching REGEX (grep -E).
plog() {
	grep -cE -- "$1" "$t_tmp/proxy.log"
}

# wait_plog REGEX N SECONDS: until N lines of the proxy's log match (a
# connection's line is written when it ends).
wait_plog() {
	_i=0
	while [ "$(plog "$1")" -lt "$2" ] && [ "$_i" -lt "$(($3 * 10))" ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	[ "$(plog "$1")" -ge "$2" ]
}

# alive PID: running, not a zombie waiting to be reaped.
alive() {
	_s=$(sed -n 's/.*) \(.\) .*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$_s" ] && [ "$_s" != Z ]
}

# wait_count FILE REGEX N SECONDS PID: until N lines of FILE match, PID dies,
# or SECONDS pass.
wait_count() {
	_i=0
	while [ "$(grep -cE -- "$2" "$1" 2>/dev/null)" -lt "$3" ] && [ "$_i" -lt "$(($4 * 10))" ]; do
		alive "$5" || break
		sleep 0.1
		_i=$((_i + 1))
	done
	[ "$(grep -cE -- "$2" "$1" 2>/dev/null)" -ge "$3" ]
}

# wait_max PID SECONDS: wait for PID, SIGKILLing it (and saying so) when it
# runs longer; its status in $t_rc.
wait_max() {
	_i=0
	while alive "$1" && [ "$_i" -lt "$(($2 * 10))" ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	if alive "$1"; then
		t_diag "pid $1 still ran after $2 s: SIGKILL"
		kill -KILL "$1" 2>/dev/null
	fi
	t_wait "$1"
}


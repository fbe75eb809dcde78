# fleet.sh: what the shell tests of the fleet's commands (t92, t93) share,
# sourced after lib.sh: running a command with its outputs kept, checking
# its exit code and both outputs exactly, and the helper that plays the
# agent (tests/fleet-helper, in $H).
H=$top_builddir/tests/fleet-helper
[ -x "$H" ] || t_bail "no $H (make tests/fleet-helper)"

# run NAME CMD...: stdout to $t_tmp/NAME.out, stderr to $t_tmp/NAME.err,
# the exit status in $rc
run() {
	_n=$1
	shift
	"$@" > "$t_tmp/$_n.out" 2> "$t_tmp/$_n.err"
	rc=$?
}

# expect NAME CODE STDOUT STDERR DESC: the last run's exit code and both
# outputs, exactly
expect() {
	_o=$(cat "$t_tmp/$1.out") _e=$(cat "$t_tmp/$1.err")
	if [ "$rc" = "$2" ] && [ "$_o" = "$3" ] && [ "$_e" = "$4" ]; then
		t_result 0 "$5"
	else
		t_result 1 "$5"
		t_diag "exit $rc, want $2"
		[ "$_o" = "$3" ] || t_diag "stdout:" "$_o" "want:" "$3"
		[ "$_e" = "$4" ] || t_diag "stderr:" "$_e" "want:" "$4"
	fi
}

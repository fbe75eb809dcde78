# ctrain.sh: helpers of the tests of examples/ctrain (t68-ctrain.sh, the CPU
# path; t69-ctrain-cuda.sh, the device path against fake CUDA and NCCL),
# sourced after lib.sh's t_setup: the built ctrain ($ct), the steps of a run
# ($steps), reading its digest and final loss, and running it under spotrun
# (ctjob, preempted) with $ct_args added to its command line. preempted
# compares with $want and $t_tmp/ref.bin, the uninterrupted run's.
ct=$(cd "$top_builddir" && pwd)/examples/ctrain/ctrain
[ -x "$ct" ] || t_bail "no $ct (make examples/ctrain/ctrain)"
steps=400
ct_args=

# digest FILE / loss FILE: the last digest / final loss line of rank 0
# (spotrun's [0] prefix or none).
digest() {
	sed -nE 's/^(\[0\] )?digest ([0-9a-f]{16})$/\2/p' "$1" | tail -n 1
}
final_loss() {
	sed -nE 's/^(\[0\] )?final loss ([0-9.]+) after .*/\2/p' "$1" | tail -n 1
}
# wait_lines FILE REGEX N SECONDS PID: wait until N lines of FILE match.
wait_lines() {
	_w=0
	while [ "$_w" -lt "$(($4 * 10))" ] && kill -0 "$5" 2>/dev/null; do
		[ "$(grep -cE -- "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.1
		_w=$((_w + 1))
	done
	return 1
}
# preempted NAME PROCS AT...: ctjob NAME PROCS under a notice each time rank 0
# prints step AT's loss (after the resume from the notice before), and the
# checks of such a run: exit 0, one attempt more than notices, resumed by
# the library at the steps the timeline names, each attempt past the AT
# before, a commit per notice, the uninterrupted digest and --out's bytes.
preempted() {
	_n=$1 _k=$2 _pre= _ranks="1 rank"
	shift 2
	[ "$_k" -eq 1 ] || { _pre='\[0\] '; _ranks="$_k ranks"; }
	ctjob "$_n" "$_k" "provider.after=0" "provider.preemptions=unlimited" "provider.window=20s" \
		"provider.notice_file=$t_tmp/$_n-now"
	t_bg "$_n" "$SPOTRUN" run "$t_tmp/$_n.ini"
	_pid=$t_last _notices=0
	for _at in "$@"; do
		_notices=$((_notices + 1))
		wait_for "$t_tmp/$_n.out" "^${_pre}step $_at loss " 60 "$_pid" && touch "$t_tmp/$_n-now"
		wait_lines "$t_tmp/$_n.out" "^${_pre}resumed from step " "$_notices" 60 "$_pid"
	done
	t_wait "$_pid"
	t_is "$t_rc" 0 "$_ranks preempted $_notices times: spotrun run exits 0" || t_show "$t_tmp/$_n.err"
	t_like "$t_tmp/$_n.err" "^[0-9:]+  finished exit 0: $((_notices + 1)) attempts, $_notices preemptions, " \
		"timeline: $((_notices + 1)) attempts, $_notices preemptions"
	# the supervisor only names the checkpoint: the library reads it
	_restored=$(sed -nE 's/^[0-9:]+  attempt  [0-9]+ resumes from checkpoint [0-9]+ at step ([0-9]+) \([^)]+\): the job reads it \(library mode\)$/\1/p' \
		"$t_tmp/$_n.err" | tr '\n' ' ')
	_resumed=$(sed -nE "s/^${_pre}resumed from step ([0-9]+) on $_ranks\$/\\1/p" "$t_tmp/$_n.out" |
		tr '\n' ' ')
	t_is "$(echo $_resumed | wc -w):$_resumed" "$_notices:$_restored" \
		"resumed $_notices times by the library's restore, at the steps restored ($_restored)"
	t_is "$(echo "$_resumed|$*" | awk -F'|' '{ n = split($1, r, " "); split($2, a, " "); ok = "progress"
		for (i = 1; i <= n; i++) if (r[i] + 0 < a[i] + 0) ok = "stuck"; print ok }')" \
		progress "each attempt went on from the one before"
	t_is "$(grep -cE '^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed in ' "$t_tmp/$_n.err")" "$_notices" \
		"$_notices commits on the timeline, each one checkpoint of all the ranks"
	t_is "$(digest "$t_tmp/$_n.out")" "$want" "$_ranks preempted $_notices times: the uninterrupted digest $want"
	cmp -s "$t_tmp/ref.bin" "$t_tmp/$_n.bin"
	t_is "$?" 0 "and its final parameters, m and v, byte for byte"
}
# ctjob NAME PROCS [SECTION.KEY=VALUE...]: examples/ctrain/job.ini for this
# test: the built ctrain, its store and local dir in $t_tmp.
ctjob() {
	_n=$1
	sed -e "s|^command = .*|command = $ct $ct_args --steps $steps --every 20 --step-ms 5 --out $t_tmp/$_n.bin|" \
	    -e "s|^name = ctrain|name = ct-$_n|" "$top_srcdir/examples/ctrain/job.ini" > "$t_tmp/$_n.ini"
	ini_set "$t_tmp/$_n.ini" checkpoint store "file://$t_tmp/store-$_n"
	ini_set "$t_tmp/$_n.ini" checkpoint local_dir "$t_tmp/local-$_n"
	ini_set "$t_tmp/$_n.ini" resources procs "$2"
	shift 2
	for _l in "$@"; do
		ini_set "$t_tmp/$_n.ini" "${_l%%.*}" "$(echo "${_l#*.}" | cut -d= -f1)" "${_l#*=}"
	done
}


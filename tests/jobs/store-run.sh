# store-run.sh: the end-to-end runs every remote store must pass alike,
# sourced after lib.sh by the stores' run tests (t82-s3-run.sh,
# t88-az-run.sh), which then check what only their own store and CLI can.
# The caller sets $train (the quickstart's train.py under $PY).
#
#   sr_job INI NAME COMMAND STORE PROVIDER   write a job file: NAME runs the
#                         shell COMMAND in $t_tmp, STORE its store, its local
#                         dir $t_tmp/local-NAME, the provider PROVIDER
#                         (signal gets a 20 s grace)
#   sr_quickstart STORE WHAT   the quickstart with STORE (keep = 2): check,
#                         a run with two simulated preemptions resumed each
#                         time and the uninterrupted result, checkpoints
#                         committed, `spotrun ls` listing two; WHAT names the
#                         store in the TAP lines ("s3://", "az://")
#   sr_resume STORE WHAT  a job preempted by SIGTERM (signal provider, exit
#                         75) resumed by the next run (the next VM) from its
#                         checkpoint in STORE, with the uninterrupted result;
#                         leaves $sr_sig_ini
#   sr_preempt INI NAME   run INI until step 10, SIGTERM it: exit 75; the
#                         step of its last checkpoint in $sr_step

sr_job() {
	{
		printf '[job]\nname = %s\nshell = yes\ncommand = echo $$ > %s.pid; exec %s\n' \
		    "$2" "$1" "$3"
		printf 'workdir = %s\n[checkpoint]\nstore = %s\nlocal_dir = %s/local-%s\n' \
		    "$t_tmp" "$4" "$t_tmp" "$2"
		printf '[provider]\nname = %s\n' "$5"
		[ "$5" != signal ] || printf 'grace = 20s\n'
	} > "$1"
	t_pidfiles="$t_pidfiles $1.pid"
}

sr_preempt() {
	t_bg "$2-1" "$SPOTRUN" run "$1"
	_pid=$t_last
	wait_for "$t_tmp/$2-1.out" '^step 10 ' 20 "$_pid" || t_diag "$2: run 1 did not reach step 10"
	kill -TERM "$_pid"
	t_wait "$_pid"
	t_is "$t_rc" 75 "$2: run 1 preempted by SIGTERM exits 75" || t_show "$t_tmp/$2-1.err"
	sr_step=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$t_tmp/$2-1.out" | tail -n 1)
}

sr_quickstart() {
	$train --sleep 0 > "$t_tmp/plain.out" 2>&1
	_want=$(result_of "$t_tmp/plain.out")
	[ -n "$_want" ] || t_bail "the quickstart job printed no result"
	_ini=$t_tmp/qs.ini
	sed -e "s|^#store = .*|store = $1|" \
	    -e 's|^keep = 3|keep = 2|' \
	    -e "s|^command = .*|command = $PY $top_srcdir/examples/quickstart/train.py --sleep 0.03|" \
	    -e 's|^after = 8s|after = 1500ms|' -e 's|^window = 10s|window = 8s|' \
	    -e 's|^interval = 5s|interval = 1s|' \
	    "$top_srcdir/examples/quickstart.ini" > "$_ini"
	ini_set "$_ini" checkpoint local_dir "$t_tmp/local-qs"
	ini_set "$_ini" checkpoint margin 2s
	"$SPOTRUN" check "$_ini" > "$t_tmp/check.out" 2>&1
	t_is "$?" 0 "spotrun check accepts an $2 store" || t_show "$t_tmp/check.out"
	"$SPOTRUN" run "$_ini" > "$t_tmp/qs.out" 2> "$t_tmp/qs.err"
	t_is "$?" 0 "quickstart on $2 exits 0" || t_show "$t_tmp/qs.err"
	t_is "$(grep -c '^resumed from step' "$t_tmp/qs.out")" 2 \
	    "resumed twice (two simulated preemptions)" || t_show "$t_tmp/qs.out"
	t_is "$(result_of "$t_tmp/qs.out")" "$_want" "the result equals an uninterrupted run's"
	t_like "$t_tmp/qs.err" "^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed" \
	    "checkpoints committed to $2"
	"$SPOTRUN" ls "$_ini" > "$t_tmp/ls.out" 2>&1
	t_is "$?" 0 "spotrun ls on $2 exits 0" || t_show "$t_tmp/ls.out"
	t_is "$(grep -cE '^[0-9]+ ' "$t_tmp/ls.out")" 2 "keep = 2: two checkpoints listed" ||
	    t_show "$t_tmp/ls.out"
}

sr_resume() {
	$train --steps 80 --every 10 --sleep 0 > "$t_tmp/plain80.out" 2>&1
	_want80=$(result_of "$t_tmp/plain80.out")
	sr_sig_ini=$t_tmp/sig.ini
	sr_job "$sr_sig_ini" sig "$train --steps 80 --sleep 0.04 --every 10" "$1" signal
	sr_preempt "$sr_sig_ini" sig
	"$SPOTRUN" run "$sr_sig_ini" > "$t_tmp/sig-2.out" 2> "$t_tmp/sig-2.err"
	t_is "$?" 0 "run 2 (the next VM) exits 0" || t_show "$t_tmp/sig-2.err"
	t_has "$t_tmp/sig-2.out" "resumed from step $sr_step (attempt 1)" \
	    "run 2 resumed from the $2 checkpoint (step $sr_step)"
	t_is "$(result_of "$t_tmp/sig-2.out")" "$_want80" "run 2's result equals an uninterrupted run's"
}

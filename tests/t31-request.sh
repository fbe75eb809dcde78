#!/bin/sh
# t31-request.sh: how a checkpoint is asked of the job (the request file and
# the request signal) and what spotrun says when that goes wrong:
#  - a done file that lands after spotrun withdrew its request is not taken
#    as the answer to the next request;
#  - the request signal goes only to processes that catch it (SigCgt):
#    a Python job with no handler, one whose handler comes after a delay,
#    a launcher (sh -c 'python3 job.py') whose child catches it;
#  - a job killed by spotrun's own request signal is told so, with the fix;
#  - a job killed from outside (SIGTERM to the whole Slurm step) before its
#    notice's checkpoint is told so, with the fix.
# Real processes and real signals throughout.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup

# job NAME COMMAND [EXTRA INI LINES...]: write $t_tmp/NAME.ini
job() {
	_n=$1 _c=$2
	shift 2
	{
		printf '[job]\nname = %s\ncommand = %s\nworkdir = %s\n' "$_n" "$_c" "$t_tmp"
		printf '[checkpoint]\nstore = file://%s/store\nlocal_dir = %s/local-%s\nmargin = 1s\n' "$t_tmp" "$t_tmp" "$_n"
		for _l in "$@"; do printf '%s\n' "$_l"; done
	} > "$t_tmp/$_n.ini"
}
run() {	# run NAME: spotrun run, stdout and stderr to NAME.out/.err, status in $t_rc
	"$SPOTRUN" run "$t_tmp/$1.ini" > "$t_tmp/$1.out" 2> "$t_tmp/$1.err"
	t_rc=$?
}

# 1-3: a late answer. The job lets request 1 pass its deadline (write_timeout
# 1s), answers it once spotrun withdrew it (done holds 999), then answers
# request 2 properly at step 2: the checkpoint is step 2, not the stale 999.
cat > "$t_tmp/late.sh" <<'EOF'
posted() { while [ ! -f "$SPOTRUN_CKPT_REQUEST" ]; do sleep 0.02; done; }
withdrawn() { while [ -f "$SPOTRUN_CKPT_REQUEST" ]; do sleep 0.02; done; }
answer() { echo "$1" > "$SPOTRUN_CKPT_DIR/state"; echo "$1" > "$SPOTRUN_CKPT_DONE.t"; mv "$SPOTRUN_CKPT_DONE.t" "$SPOTRUN_CKPT_DONE"; }
posted; withdrawn; answer 999; echo "answered request 1 late"
posted; sleep 0.2; answer 2; echo "answered request 2"
sleep 0.5
EOF
job late "/bin/sh $t_tmp/late.sh" "interval = 2s" "write_timeout = 1s" "signal = none" "[provider]" "name = local"
run late
t_is "$t_rc" 0 "late answer: the job finishes" || t_show "$t_tmp/late.err"
t_like "$t_tmp/late.err" '^[0-9:]+  ckpt     0 step 2: ' "the next request's checkpoint holds the job's answer to it (step 2)"
t_unlike "$t_tmp/late.err" 'step 999' "the late answer to the withdrawn request is not taken for it"
t_done

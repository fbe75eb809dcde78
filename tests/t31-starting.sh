#!/bin/sh
# t31-starting.sh: a notice while the job is still starting. A process of
# the Python module creates its SPOTRUN_CKPT_LOOK empty at import and marks
# it at its first look for a request; a notice that finds every process
# declared and none looked, the job up for less than the notice leaves,
# stops the job at once (nothing new to save) instead of waiting to the
# deadline for an answer:
#  - one process, imported, not looked: stopped at once, no request;
#  - two ranks, neither looked: the same;
#  - a process that looked: the notice's checkpoint as ever;
#  - two ranks, one looked: spotrun waits for both (to the deadline);
#  - a process that imports the module only after the notice's request:
#    stopped as soon as it says so, however long it has been up;
#  - a process up longer than the notice leaves: waited for, and its
#    answer committed;
#  - a job that marks nothing (a shell job): waited for, as ever;
#  - library mode: a job whose context is made but has not polled is
#    stopped at once; one that polled checkpoints.
# Real processes, the signal provider (SIGTERM to spotrun is the notice).
. "$top_srcdir/tests/jobs/lib.sh"
t_setup

# job.py MODE: MODE "import" imports spotrun and waits (its start-up, not
# over within the test); "look" also looks once, then answers a request;
# "late" imports only once the timeline shows the notice's request, then
# waits; "slow" imports, and looks (and answers) only once a request file
# is there. Each says where it is in $SPOTRUN_CKPT_DIR/../at.R (R its
# rank), and gives up after 2 minutes (exit 9), so nothing hangs.
cat > "$t_tmp/job.py" <<'EOF'
import os, sys, time
from said import said
mode = sys.argv[1]
rank = os.environ.get("RANK", "0")
at = os.path.join(os.environ["SPOTRUN_CKPT_DIR"], "..", "at." + rank)
def put(what):
    with open(at + ".t", "w") as f:
        f.write(what + "\n")
    os.rename(at + ".t", at)
def wait(cond):
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > 120:
            sys.exit(9)
        time.sleep(0.02)
if mode == "late":
    put("waiting")
    wait(lambda: said("request  notice checkpoint"))
import spotrun
if mode == "look" and rank == "1":
    mode = "import"
if mode == "slow":
    put("imported")
    wait(lambda: os.path.exists(os.environ["SPOTRUN_CKPT_REQUEST"]))
    mode = "look"
if mode == "look":
    spotrun.requested()
    put("looked")
    wait(spotrun.requested)
    with open(os.path.join(spotrun.rank_dir() or spotrun.ckpt_dir(), "state"), "w") as f:
        f.write("7\n")
    spotrun.done(7)
    wait(lambda: False)
put("imported")
wait(lambda: False)
EOF

cp "$top_srcdir/tests/jobs/said.py" "$t_tmp/said.py"

# start NAME MODE GRACE [INI LINES...]: the job, run in the background
# (its pid in $spid), with the signal provider's grace GRACE.
start() {
	_n=$1 _m=$2 _g=$3
	shift 3
	t_jobfile "$_n" "python3 $t_tmp/job.py $_m" "margin = 100ms" "$@" \
	    "[provider]" "name = signal" "grace = $_g"
	t_bg "$_n" "$SPOTRUN" run "$t_tmp/$_n.ini"
	spid=$t_last
}
# at NAME RANK WHAT: wait until rank RANK of job NAME says WHAT
at() {
	wait_for "$t_tmp/local-$1/at.$2" "^$3\$" 120 "$spid"
}
# notice NAME: SIGTERM to spotrun once its job has started, then its end
notice() {
	kill -TERM "$spid"
	t_wait "$spid"
}

# 1-4: imported, not looked: stopped at once. The grace is 60 s: waiting
# for an answer would end the run at 00:59 or later.
start imp import 60s
at imp 0 imported
notice imp
t_is "$t_rc" 75 "a notice while the job starts: preempted, exit 75" || t_show "$t_tmp/imp.err"
t_like "$t_tmp/imp.err" '^00:[0-5][0-9]  ckpt     none for this notice: the job is still starting \(up [0-9.]+m?s, it has not looked for a request yet\), with nothing new to save; the previous checkpoint stays the newest$' \
    "the timeline says the job is still starting, with nothing to save"
t_like "$t_tmp/imp.err" '^00:[0-4][0-9]  stop     nothing to save for this notice; SIGTERM to the job$' \
    "... and stops it at once, not at the deadline"
t_unlike "$t_tmp/imp.err" 'request  notice checkpoint' "... asking it for nothing"

# 5-6: two ranks, neither looked
start imp2 import 60s "[resources]" "procs = 2"
at imp2 0 imported
at imp2 1 imported
notice imp2
t_is "$t_rc" 75 "two ranks starting: preempted, exit 75" || t_show "$t_tmp/imp2.err"
t_like "$t_tmp/imp2.err" '^00:[0-4][0-9]  stop     nothing to save for this notice; SIGTERM to the job$' \
    "... stopped at once: neither rank looked"

# 7-9: a process that looked answers the notice's request
start look look 60s
at look 0 looked
notice look
t_is "$t_rc" 75 "a notice after the job's first look: preempted, exit 75" || t_show "$t_tmp/look.err"
t_like "$t_tmp/look.err" '^[0-9:]+  request  notice checkpoint, answer within ' "... the job is asked"
t_like "$t_tmp/look.err" '^[0-9:]+  ckpt     0 step 7: .* committed in ' "... and its answer committed"

# 10-12: two ranks, rank 0 looked, rank 1 not: waited for to the deadline
# (grace 2 s less the margin), rank 1 never answering
start half look 2s "[resources]" "procs = 2"
at half 0 looked
at half 1 imported
notice half
t_is "$t_rc" 75 "one rank of two looked: preempted, exit 75" || t_show "$t_tmp/half.err"
# (1.8s when the supervisor lost the CPU between the signal and the post)
t_like "$t_tmp/half.err" '^[0-9:]+  ckpt     the job did not write its notice checkpoint within 1\.[89]s \(rank 1 of 2 did not answer\); the previous checkpoint stays the newest$' \
    "... spotrun waited for the rank that had not looked" || t_show "$t_tmp/half.err"
t_unlike "$t_tmp/half.err" 'still starting' "... not taken for a job still starting"

# 13-16: a process that imports the module only after the notice's
# request: stopped once its marker says it is starting, though it has been
# up longer than the notice leaves (3 s, grace 2 s): it was starting when
# the notice came
start late late 2s
at late 0 waiting
sleep 3
notice late
t_is "$t_rc" 75 "imported after the notice's request: preempted, exit 75" || t_show "$t_tmp/late.err"
t_like "$t_tmp/late.err" '^[0-9:]+  request  notice checkpoint, answer within ' "... the job was asked first"
t_like "$t_tmp/late.err" '^[0-9:]+  ckpt     none for this notice: the job is still starting \(up [0-9.]+s, ' \
    "... then found still starting" || t_show "$t_tmp/late.err"
t_like "$t_tmp/late.err" '^[0-9:]+  stop     nothing to save for this notice; SIGTERM to the job$' \
    "... and stopped as soon as it said so"

# 17-19: a process up longer than the notice leaves (grace 2 s; the test
# lets it run 3 s before the notice) has not looked: it may be in a long
# first step, so spotrun waits; it answers as soon as it sees the request
start slow slow 2s
at slow 0 imported
sleep 3
notice slow
t_is "$t_rc" 75 "a job up longer than the notice leaves: preempted, exit 75" || t_show "$t_tmp/slow.err"
t_unlike "$t_tmp/slow.err" 'still starting' "... not stopped as one still starting"
t_like "$t_tmp/slow.err" '^[0-9:]+  ckpt     0 step 7: .* committed in ' "... its answer committed"

# 20-21: a shell job marks nothing: its notice's request waits for it
cat > "$t_tmp/sh.sh" <<'EOF'
echo started > "$SPOTRUN_CKPT_DIR/../at.0"
i=0
while [ ! -f "$SPOTRUN_CKPT_REQUEST" ] && [ "$i" -lt 6000 ]; do sleep 0.02; i=$((i + 1)); done
echo 3 > "$SPOTRUN_CKPT_DIR/state"
echo "3 $(sed -n 's/.*\(seq=[0-9]*\).*/\1/p' "$SPOTRUN_CKPT_REQUEST")" > "$SPOTRUN_CKPT_DONE.t"
mv "$SPOTRUN_CKPT_DONE.t" "$SPOTRUN_CKPT_DONE"
sleep 120
EOF
t_jobfile sh "/bin/sh $t_tmp/sh.sh" "margin = 100ms" "[provider]" "name = signal" "grace = 60s"
t_bg sh "$SPOTRUN" run "$t_tmp/sh.ini"
spid=$t_last
at sh 0 started
notice sh
t_is "$t_rc" 75 "a shell job: preempted, exit 75" || t_show "$t_tmp/sh.err"
t_like "$t_tmp/sh.err" '^[0-9:]+  ckpt     0 step 3: .* committed in ' "... asked and waited for, as ever"

# 22-25: library mode (libspotrun): the job's context made (it marks its
# first look: ctl/look, one for every rank), no poll yet: stopped at once;
# one that polled gets its checkpoint
# libstart NAME STEPS [ARGS...]: tests/jobs/libtrain in library mode, run
# in the background (its pid in $spid), grace 60 s
libstart() {
	_n=$1 _s=$2
	shift 2
	t_jobfile "$_n" "$top_builddir/tests/jobs/libtrain $_s 20 $t_tmp/$_n.state $*" \
	    "mode = library" "margin = 100ms" "[provider]" "name = signal" "grace = 60s"
	t_bg "$_n" "$SPOTRUN" run "$t_tmp/$_n.ini"
	spid=$t_last
}
libstart libh 1000 "hold=$t_tmp/libh.go"
wait_for "$t_tmp/libh.out" '^holding$' 120 "$spid"
notice libh
t_is "$t_rc" 75 "library mode, a notice before the first poll: preempted, exit 75" || t_show "$t_tmp/libh.err"
t_like "$t_tmp/libh.err" '^00:[0-4][0-9]  stop     nothing to save for this notice; SIGTERM to the job$' \
    "... stopped at once: the job is still starting"
libstart libp 100000
wait_for "$t_tmp/local-libp/ctl/look" '^looked$' 120 "$spid"
notice libp
t_is "$t_rc" 75 "library mode, a notice after the first poll: preempted, exit 75" || t_show "$t_tmp/libp.err"
t_like "$t_tmp/libp.err" '^[0-9:]+  ckpt     0 step [0-9]+: .* committed in ' "... its checkpoint committed"

t_done

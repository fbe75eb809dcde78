#!/bin/sh
# t90-slurm.sh: the Slurm recipe (examples/slurm, doc/slurm.md) against a
# real slurmctld + slurmd on loopback (tests/slurm.sh, started and stopped
# here: ~1.3 s, and no other test needs it). Each case copies the shipped
# examples/slurm/ into a temp dir, points the store and local directory
# there, and submits the batch script with sbatch.
#
# The recipe (job.sbatch: --requeue, --signal=B:TERM@120, exec spotrun):
#   a1 the time limit: --signal's SIGTERM comes to the batch shell before the
#      limit;
#   a2 preemption: a job of the higher-priority partition takes the node;
#      with preempt_send_user_signal and a GraceTime the job gets its
#      --signal;
#   a3 job-wrapper.sbatch, preempted by hand (`scancel --batch
#      --signal=TERM`, the same signal): the wrapper passes it on and
#      requeues the job with `scontrol requeue` itself.
# Each time spotrun, the batch shell, gets SIGTERM alone; the job answers
# the checkpoint request, spotrun commits it and exits 75; Slurm sees 75
# and requeues the job (RequeueExit=75, or the wrapper); the next run
# restores the checkpoint and resumes; the result equals an uninterrupted
# run's.
#
# The anti-recipes (the job gets SIGTERM too, or spotrun none):
#   b1 `scontrol requeue` (ending a job sends SIGTERM to all its processes);
#   b2 no exec: the batch shell gets --signal's SIGTERM and dies of it;
#   b3 --signal without B: and spotrun under srun: the step gets it;
#   b4 --signal without B: and spotrun the batch shell: nobody gets it.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
command -v slurmctld >/dev/null 2>&1 && command -v sbatch >/dev/null 2>&1 ||
	t_skip_all "Slurm is not installed (build-aux/install-deps installs slurm-wlm)"
t_python_module
PATH=$(dirname "$SPOTRUN"):$PATH	# the batch scripts call `spotrun`
export PATH
ex=$top_srcdir/examples/slurm

sl=$t_tmp/slurm
s_cleanup() {
	"$top_srcdir/tests/slurm.sh" stop "$sl" >/dev/null 2>&1
	t_cleanup
}
trap s_cleanup EXIT
"$top_srcdir/tests/slurm.sh" start "$sl" > "$t_tmp/slurm-start.out" 2>&1 || {
	t_show "$t_tmp/slurm-start.out"
	t_show "$sl/log/slurmctld.log"
	t_show "$sl/log/slurmd.log"
	t_bail "tests/slurm.sh did not start Slurm"
}
. "$sl/env"
ctld=$sl/log/slurmctld.log

# The results of uninterrupted runs, without spotrun.
ref() {	# ref STEPS: the result line of train.py --steps STEPS
	(cd "$top_srcdir/examples/quickstart" && "$PY" train.py --steps "$1" --sleep 0) \
		> "$t_tmp/ref-$1.out" 2>&1
	result_of "$t_tmp/ref-$1.out"
}
ref100=$(ref 100)
ref300=$(ref 300)

# mk_case NAME STEPS SLEEP: $t_tmp/NAME holding the example's job file
# (workdir the example's directory, so its ../quickstart/train.py runs; the
# store and local directory under NAME; the job's steps and sleep per step)
# and its batch scripts.
mk_case() {
	_d=$t_tmp/$1
	mkdir -p "$_d"
	cp "$ex/job.ini" "$ex/job.sbatch" "$ex/job-wrapper.sbatch" "$_d/"
	ini_set "$_d/job.ini" job workdir "$ex"
	ini_set "$_d/job.ini" job command "/usr/bin/python3 ../quickstart/train.py --steps $2 --sleep $3"
	ini_set "$_d/job.ini" checkpoint store "file://$_d/store"
	ini_set "$_d/job.ini" checkpoint local_dir "$_d/local"
}

# submit NAME SCRIPT [SBATCH-OPTIONS...]: sbatch SCRIPT from $t_tmp/NAME;
# the job id in $j, its output file in $out.
submit() {
	_d=$t_tmp/$1
	_s=$2
	shift 2
	j=$(cd "$_d" && sbatch --parsable "$@" "$_s" 2> "$_d/sbatch.err") || {
		t_show "$_d/sbatch.err"
		t_bail "sbatch $_s failed"
	}
	j=${j%%;*}
	out=$_d/spotrun-quickstart-$j.out
}

# started NAME: wait until the job of the last submit is at step 20.
started() {
	wait_for "$out" '^step 20 ' 30 && return 0
	t_show "$out"
	t_bail "$1: the job did not start"
}

# field JOB NAME: a field of `scontrol show job` (JobState, Restarts, ExitCode).
field() {
	scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# ctld_log JOB: slurmctld's lines about the job.
ctld_log() {
	grep -E "JobId=$1( |$)" "$ctld"
}

# wait_ctld JOB REGEX SECONDS: until a line of slurmctld's about JOB matches.
wait_ctld() {
	_i=0
	while [ "$_i" -lt "$(($3 * 10))" ]; do
		ctld_log "$1" | grep -qE -- "$2" && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# wait_state JOB STATE SECONDS: until the job is in STATE.
wait_state() {
	_i=0
	while [ "$_i" -lt "$(($3 * 10))" ]; do
		[ "$(field "$1" JobState)" = "$2" ] && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# resumed_ok NAME JOB REF: the output of a job preempted once and requeued:
# the first run answered the notice and exited 75 with the checkpoint
# committed, the second restored it, resumed there and printed REF; Slurm
# ran it twice and it completed.
resumed_ok() {
	_o=$t_tmp/$1/spotrun-quickstart-$2.out
	t_like "$_o" '^[0-9:]+  notice   SIGTERM, deadline ' "$1: spotrun took the SIGTERM as the notice"
	_k=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$_o" | head -n 1)
	t_like "$_o" "^[0-9:]+  ckpt     0 step $_k: .* committed in " \
		"$1: the job answered it: checkpoint 0 at step $_k committed" || t_show "$_o"
	t_like "$_o" '^[0-9:]+  stop     checkpoint committed; SIGTERM to the job$' \
		"$1: spotrun stopped the job after the commit"
	t_like "$_o" '^[0-9:]+  preempted exit 75: 1 attempt, 1 preemption, [^,]+ of work lost, 1 checkpoint$' \
		"$1: the first run ended 'preempted exit 75' with 1 checkpoint"
	t_like "$_o" "^[0-9:]+  attempt  1 restored checkpoint 0 at step $_k " \
		"$1: the requeued run restored checkpoint 0 (step $_k)"
	t_has "$_o" "resumed from step $_k (attempt 1)" "$1: the job resumed at step $_k"
	t_like "$_o" '^[0-9:]+  finished exit 0: 1 attempt, 0 preemptions, ' "$1: the requeued run finished"
	t_is "$(result_of "$_o")" "$3" "$1: the result equals an uninterrupted run's"
	t_is "$(field "$2" JobState) $(field "$2" Restarts) $(field "$2" ExitCode)" "COMPLETED 1 0:0" \
		"$1: Slurm ran it twice and it completed (JobState Restarts ExitCode)" ||
		ctld_log "$2" | sed 's/^/#   /'
}

# lost_ok NAME JOB: the job got SIGTERM from Slurm too and died before it
# answered; spotrun says so (which signal, from outside, the fix) and that
# no checkpoint was made: "preempted exit 75: ... work lost, 0 checkpoints",
# whichever of the job's death and its own SIGTERM it saw first (the two
# come together).
lost_ok() {
	_o=$t_tmp/$1/spotrun-quickstart-$2.out
	wait_for "$_o" '^[0-9:]+  (preempted|failed) ' 30
	t_unlike "$_o" '^checkpoint at step' "$1: the job never answered (it died of Slurm's SIGTERM)"
	t_has "$_o" "  killed   the job was killed by SIGTERM before it wrote the notice's checkpoint: spotrun did not send it, so it came from outside spotrun" \
		"$1: spotrun says the job died of a SIGTERM from outside before its checkpoint"
	t_like "$_o" '^[0-9:]+  preempted exit 75: 1 attempt, 1 preemption, [^,]+ of work lost, 0 checkpoints$' \
		"$1: spotrun says no checkpoint was made" || t_show "$_o"
	t_diag "$1: spotrun printed: $(grep -E '^[0-9:]+  (preempted|failed) ' "$_o")"
}

# a1: the time limit. --time=1 with --signal=B:TERM@58: the signal is due
# 2 s after the start and comes with slurmctld's next time-limit check (every
# 30 s). A watcher in the background gives the requeued run a 10-minute
# limit and no sleep per step, so it finishes at once, never signalled.
mk_case a1 300 0.15
submit a1 job.sbatch --time=1 --signal=B:TERM@58
a1=$j
(
	wait_ctld "$a1" '^\[[^]]*\] Requeuing JobId=' 90 || exit 1
	ini_set "$t_tmp/a1/job.ini" job command "/usr/bin/python3 ../quickstart/train.py --steps 300 --sleep 0"
	scontrol update JobId="$a1" TimeLimit=10 > "$t_tmp/a1/update.out" 2>&1
) &
a1_watch=$!
t_pids="$t_pids $a1_watch"

# The anti-recipes and a3 run meanwhile (on a node of one CPU they wait for
# a1, which only takes longer).

# b1: `scontrol requeue` ends the job: SIGCONT and SIGTERM to every process
# of it, spotrun and the job alike; Slurm requeues it whatever the exit.
mk_case b1 100 0.05
submit b1 job.sbatch
b1=$j
started b1
scontrol requeue "$b1"
wait_ctld "$b1" '^\[[^]]*\] Requeuing JobId=' 30
t_is "$?" 0 "b1: scontrol requeue requeued the job"
scancel "$b1"
t_like "$out" "\\*\\*\\* JOB $b1 ON $SPOTRUN_TEST_SLURM_NODE CANCELLED AT .* DUE TO JOB REQUEUE \\*\\*\\*" \
	"b1: slurmstepd says it ended the job for the requeue"
lost_ok b1 "$b1"

# b2: no exec: --signal=B:TERM reaches the shell, which is not spotrun and
# dies of it; Slurm calls that a failure (signal 15) and does not requeue;
# spotrun never hears of it. (linuxproc loses track of the shell's orphans:
# spotrun and the job run on outside Slurm; proctrack/cgroup would SIGKILL
# them. Either way no checkpoint.)
mk_case b2 100 0.05
sed 's/^exec spotrun /spotrun /' "$t_tmp/b2/job.sbatch" > "$t_tmp/b2/noexec.sbatch"
t_unlike "$t_tmp/b2/noexec.sbatch" '^exec ' "b2: the batch script without exec"
submit b2 noexec.sbatch
b2=$j
started b2
b2_job=$(sed -nE 's/^[0-9:]+  started  .* \(pid ([0-9]+)\)$/\1/p' "$out")
b2_spotrun=$(ps -o ppid= -p "$b2_job" | tr -d ' ')
t_pids="$t_pids $b2_job $b2_spotrun"
scancel --batch --signal=TERM "$b2"
wait_state "$b2" FAILED 30
t_is "$(field "$b2" JobState) $(field "$b2" Restarts) $(field "$b2" ExitCode)" "FAILED 0 0:15" \
	"b2: the batch shell died of SIGTERM; Slurm did not requeue (JobState Restarts ExitCode)"
t_is "$(ctld_log "$b2" | sed -nE 's/.*_job_complete: JobId=[0-9]+ (W.*)/\1/p')" "WTERMSIG 15" \
	"b2: slurmctld saw signal 15, not spotrun's 75"
sleep 1
t_unlike "$out" '^[0-9:]+  notice ' "b2: spotrun got no notice"
t_unlike "$out" '^checkpoint at step' "b2: no checkpoint was asked for"
kill -KILL "$b2_spotrun" "$b2_job" 2>/dev/null

# b3: --signal=TERM without B: goes to the job's steps, not to the batch
# shell: with spotrun under srun, to every process of that step (`scancel
# --signal=TERM JOB` sends just that).
mk_case b3 100 0.05
sed -e 's/--signal=B:TERM@/--signal=TERM@/' -e 's/^exec spotrun /exec srun spotrun /' \
	"$t_tmp/b3/job.sbatch" > "$t_tmp/b3/srun.sbatch"
t_like "$t_tmp/b3/srun.sbatch" '^#SBATCH --signal=TERM@120$' "b3: the batch script's --signal without B:"
submit b3 srun.sbatch
b3=$j
started b3
scancel --signal=TERM "$b3"
wait_ctld "$b3" '_job_complete: JobId=[0-9]+ W' 30
scancel "$b3"
t_like "$out" "\\*\\*\\* STEP $b3\\.0 ON $SPOTRUN_TEST_SLURM_NODE CANCELLED AT " \
	"b3: the signal went to the srun step"
lost_ok b3 "$b3"

# b4: --signal=TERM without B: and spotrun the batch shell (no srun): no
# step to signal, so nobody hears it; the same signal with B: (`scancel
# --batch`) then reaches spotrun.
mk_case b4 100 0.05
sed 's/--signal=B:TERM@/--signal=TERM@/' "$t_tmp/b4/job.sbatch" > "$t_tmp/b4/nob.sbatch"
submit b4 nob.sbatch
b4=$j
started b4
scancel --signal=TERM "$b4"
sleep 1.5
t_unlike "$out" '^[0-9:]+  notice ' "b4: without B: spotrun hears nothing"
t_is "$(field "$b4" JobState)" RUNNING "b4: the job runs on"
scancel --batch --signal=TERM "$b4"
wait_ctld "$b4" '_job_complete: JobId=[0-9]+ WEXITSTATUS 75' 30
t_is "$?" 0 "b4: with B: spotrun checkpoints and exits 75"
scancel "$b4"

# a3: job-wrapper.sbatch (for clusters without RequeueExit=75), preempted
# by hand with the signal --signal=B:TERM sends (`scancel --batch
# --signal=TERM`): the wrapper passes it on, and on exit 75 requeues the job
# with `scontrol requeue`, so Slurm never sees the 75.
mk_case a3 100 0.05
submit a3 job-wrapper.sbatch
a3=$j
started a3
scancel --batch --signal=TERM "$a3"
wait_state "$a3" COMPLETED 60
t_like "$ctld" "Requeuing JobId=$a3\$" "a3: the wrapper requeued the job"
t_is "$(ctld_log "$a3" | sed -nE 's/.*_job_complete: JobId=[0-9]+ (W.*)/\1/p' | tr '\n' ' ')" \
	"WEXITSTATUS 0 " "a3: slurmctld saw only the second run's exit (0), not 75"
resumed_ok a3 "$a3" "$ref100"

# a1's end.
t_wait "$a1_watch"
t_is "$t_rc" 0 "a1: the time limit's --signal came and the job was requeued" || t_show "$ctld"
wait_state "$a1" COMPLETED 60
t_is "$(ctld_log "$a1" | grep -cE '_job_complete: JobId=[0-9]+ WEXITSTATUS 75$')" 1 \
	"a1: slurmctld saw exit 75 once"
t_like "$t_tmp/a1/spotrun-quickstart-$a1.out" "\\*\\*\\* JOB $a1 ON .* CANCELLED AT " \
	"a1: (slurmstepd's line for a signal it sent)"
resumed_ok a1 "$a1" "$ref300"

# a2: preemption. An exclusive job of partition `urgent` (higher
# PriorityTier) preempts the job; PreemptMode=REQUEUE, GraceTime=30 and
# preempt_send_user_signal make Slurm send the job's --signal (B:TERM) at
# once and wait up to 30 s for it to end.
mk_case a2 100 0.05
submit a2 job.sbatch
a2=$j
started a2
u=$(sbatch --parsable -p urgent --exclusive -o "$t_tmp/a2/urgent-%j.out" \
	--wrap 'echo urgent job on $SLURM_JOB_NODELIST')
u=${u%%;*}
wait_state "$a2" COMPLETED 60
t_has "$t_tmp/a2/urgent-$u.out" "urgent job on $SPOTRUN_TEST_SLURM_NODE" "a2: the urgent job ran"
t_is "$(ctld_log "$a2" | sed -nE 's/.*_job_complete: JobId=[0-9]+ (W.*)/\1/p' | tr '\n' ' ')" \
	"WEXITSTATUS 75 WEXITSTATUS 0 " "a2: slurmctld saw exit 75, then 0"
# The order in slurmctld's log: a2's exit 75, the urgent job's start, a2's
# second start.
order=$(grep -nE "(_job_complete: JobId=$a2 WEXITSTATUS 75|Started JobId=$u |Allocate JobId=$u |Started JobId=$a2 |Allocate JobId=$a2 )" "$ctld" |
	sed -nE "s/.*(WEXITSTATUS 75|JobId=$u |JobId=$a2 ).*/\\1/p" | tr '\n' ',')
t_is "$order" "JobId=$a2 ,WEXITSTATUS 75,JobId=$u ,JobId=$a2 ," \
	"a2: started, exit 75, the urgent job started, a2 started again"
resumed_ok a2 "$a2" "$ref100"

t_done

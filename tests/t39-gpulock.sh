#!/bin/sh
# t39-gpulock.sh: a GPU is handed to one run at a time on a machine
# (runner/gpulock.h), with the fake NVML (tests/fake-nvml.c) and this
# test's own lock folder (SPOTRUN_GPU_LOCK_DIR, set by t_setup):
#
# 1. One fake GPU, two `spotrun run`s of gpus = 1: the second is refused
#    (exit 69) naming GPU 0, its UUID and the first's pid, while the first
#    runs; it runs once the first ended.
# 2. A holder killed with SIGKILL frees its GPU at once.
# 3. An agent on that GPU while a run holds it claims nothing (the job
#    stays queued); two agents on a machine of 2 fake GPUs, with two
#    gpus = 1 jobs running at once, give them different GPUs (the
#    CUDA_VISIBLE_DEVICES each job sees).
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
. "$top_srcdir/tests/jobs/agent.sh"
uuid0=GPU-00000000-fake-0000-0000-000000000000

# gjob NAME [queue]: a job of gpus = 1 that writes the CUDA_VISIBLE_DEVICES
# it sees to $t_tmp/NAME.vis, then waits for $t_tmp/go-NAME; with "queue",
# for a queue (named @ID@, its store the queue's)
gjob() {
	printf '[job]\nname = %s\nshell = yes\n' "$([ -n "$2" ] && echo @ID@ || echo "$1")"
	printf 'command = echo "$CUDA_VISIBLE_DEVICES" > %s/%s.vis; ' "$t_tmp" "$1"
	printf 'while [ ! -e %s/go-%s ]; do sleep 0.1; done\n' "$t_tmp" "$1"
	[ -n "$2" ] ||
	    printf '[checkpoint]\nstore = file://%s/store\nlocal_dir = %s/local-%s\n' "$t_tmp" "$t_tmp" "$1"
	printf '[provider]\nname = local\n[resources]\ngpus = 1\n'
}
# started NAME PID: wait until job NAME runs (its .vis written)
started() {
	wait_for "$t_tmp/$1.vis" '.' 20 "$2" || t_diag "$1 did not start"
}

# 1. two runs, one GPU
for n in r1 r2 r3; do gjob "$n" > "$t_tmp/$n.ini"; done
FAKE_NVML_GPUS=1 t_bg r1 "$SPOTRUN" run "$t_tmp/r1.ini"
p1=$t_last
started r1 "$p1"
FAKE_NVML_GPUS=1 "$SPOTRUN" run "$t_tmp/r2.ini" > "$t_tmp/r2.out" 2> "$t_tmp/r2.err"
t_is "$?" 69 "a second run of gpus = 1 on the one GPU a run holds: exit 69" || t_show "$t_tmp/r2.err"
t_has "$t_tmp/r2.err" "job r2 needs at least 1 GPU; 0 of this machine's 1 are free: GPU 0 ($uuid0) is in use by spotrun pid $p1 (lock $t_tmp/gpus/gpu-$uuid0)" \
    "... saying which GPU, its holder's pid and the lock file"
t_is "$(cat "$t_tmp/r2.vis" 2>/dev/null)" "" "... and its job did not start"
: > "$t_tmp/go-r1"
t_wait "$p1"
t_is "$t_rc|$(cat "$t_tmp/r1.vis")" "0|0" "the first ran on GPU 0 and exits 0" || t_show "$t_tmp/r1.err"
: > "$t_tmp/go-r2"
FAKE_NVML_GPUS=1 "$SPOTRUN" run "$t_tmp/r2.ini" > "$t_tmp/r2.out" 2> "$t_tmp/r2.err"
t_is "$?|$(cat "$t_tmp/r2.vis")" "0|0" "once the first ended, the second runs on GPU 0" || t_show "$t_tmp/r2.err"
t_like "$t_tmp/gpus/gpu-$uuid0" '^[0-9]+$' "the lock file holds a pid"
t_is "$(stat -c %a "$t_tmp/gpus")|$(stat -c %a "$t_tmp/gpus/gpu-$uuid0")" "1777|666" \
    "the lock folder is sticky and world-writable, its files 0666 (every user's runs share them)"

# 2. a holder killed
rm -f "$t_tmp/r1.vis"
FAKE_NVML_GPUS=1 t_bg r1 "$SPOTRUN" run "$t_tmp/r1.ini"
p1=$t_last
rm -f "$t_tmp/go-r1"
started r1 "$p1"
kill -KILL "$p1"
t_wait "$p1"
: > "$t_tmp/go-r3"
FAKE_NVML_GPUS=1 "$SPOTRUN" run "$t_tmp/r3.ini" > "$t_tmp/r3.out" 2> "$t_tmp/r3.err"
t_is "$?|$(cat "$t_tmp/r3.vis")" "0|0" "a holder killed with SIGKILL: its GPU is free at once" || t_show "$t_tmp/r3.err"
: > "$t_tmp/go-r1"	# the killed run's job, left running, ends

# 3. agents, on the machine of the runs (one lock folder)
ag_machine=$SPOTRUN_GPU_LOCK_DIR
Q=file://$t_tmp/q
gjob hold > "$t_tmp/hold.ini"
FAKE_NVML_GPUS=1 t_bg hold "$SPOTRUN" run "$t_tmp/hold.ini"
ph=$t_last
started hold "$ph"
for n in g1 g2; do
	gjob "$n" queue > "$t_tmp/$n.ini"
	"$QTOOL" add "$Q" "$n" "$t_tmp/$n.ini" 1 1 || t_bail "qtool add failed"
done
ag_run ag0 1 --queue "$Q" --once
t_is "$t_rc|$(grep -c ': claimed ' "$t_tmp/ag0.err")" "0|0" \
    "an agent whose one GPU a run holds claims no job of gpus = 1" || t_show "$t_tmp/ag0.err"
t_is "$(ag_status "$Q" g1 | awk '{print $1}')|$(ag_status "$Q" g2 | awk '{print $1}')" "queued|queued" \
    "... both stay queued"
: > "$t_tmp/go-hold"
t_wait "$ph"
ag_start ag1 2 --queue "$Q" --once
a1=$t_last
ag_start ag2 2 --queue "$Q" --once
a2=$t_last
started g1 "$a1"
started g2 "$a2"
t_is "$(cat "$t_tmp/g1.vis" "$t_tmp/g2.vis" | sort | tr '\n' ' ')" "0 1 " \
    "two agents on 2 GPUs, two jobs of gpus = 1 at once: GPU 0 for one, GPU 1 for the other" ||
    { t_show "$t_tmp/ag1.err"; t_show "$t_tmp/ag2.err"; }
: > "$t_tmp/go-g1"
: > "$t_tmp/go-g2"
t_wait "$a1"
r1=$t_rc
t_wait "$a2"
t_is "$r1|$t_rc|$(cat "$t_tmp"/ag[12].err | grep -c ': succeeded ')" "0|0|2" "... both succeed" ||
    { t_show "$t_tmp/ag1.err"; t_show "$t_tmp/ag2.err"; }
t_done

#!/bin/sh
# t70-faults.sh: what survives when things go wrong during a checkpoint.
#
# 1. spotrun killed (SIGKILL, through SPOTRUN_FAULT) at each step of a save:
#    request (the job about to write), pack, upload, manifest, pointer. A
#    first run commits checkpoint A and
#    exits 75 on SIGTERM (signal provider); a second run restores A, is
#    told to checkpoint again and dies at the crash point; a third run must
#    restore A (the job says `resumed from step A`), finish with exit 0 and
#    the same result as an uninterrupted run, and leave no temp file in the
#    store. Before the third run of one point, two restores are killed
#    midway (ckpt-restore); the third run removes their staging directories.
# 2. A job that ignores the request of a preemption notice: the deadline
#    passes, the previous checkpoint stays the newest, the job is stopped
#    with SIGTERM, spotrun exits 75.
# 3. The store's disk fills up during a checkpoint (a 2 MiB tmpfs; needs
#    root): a clear error naming the store and ENOSPC, the previous
#    checkpoint intact and restorable.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup

train="$PY $top_srcdir/examples/quickstart/train.py --steps 80 --sleep 0.04 --every 10"

# mk_ini FILE NAME STORE_DIR COMMAND [KEY=VALUE in [checkpoint]...]: a job
# file for the signal provider (t_pidjob).
mk_ini() {
	_f=$1 _n=$2 _d=$3 _c=$4
	shift 4
	t_pidjob "$_f" "$_n" "file://$_d" "$_c" signal 20s "$@"
}

# The uninterrupted result.
$train --sleep 0 > "$t_tmp/plain.out" 2>&1
want=$(result_of "$t_tmp/plain.out")
[ -n "$want" ] || t_bail "the quickstart job printed no result: $(tail -n 3 "$t_tmp/plain.out")"

for point in ckpt-request ckpt-pack ckpt-upload ckpt-manifest ckpt-pointer; do
	ini=$t_tmp/$point.ini
	mk_ini "$ini" "f-$point" "$t_tmp/store-$point" "$train"

	# Run 1: checkpoint A on SIGTERM, exit 75.
	t_bg "$point-1" "$SPOTRUN" run "$ini"
	pid=$t_last
	wait_for "$t_tmp/$point-1.out" '^step 10 ' 20 "$pid" || t_diag "$point: run 1 did not reach step 10"
	kill -TERM "$pid"
	t_wait "$pid"
	t_is "$t_rc" 75 "$point: run 1 preempted by SIGTERM exits 75" || t_show "$t_tmp/$point-1.err"
	a=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$t_tmp/$point-1.out" | tail -n 1)
	t_like "$t_tmp/$point-1.err" "^[0-9:]+  ckpt     [0-9]+ step ${a:-X}: .* committed" "$point: checkpoint A (step $a) committed"

	# Run 2: restores A, checkpoints again, dies at the crash point.
	t_bg "$point-2" env SPOTRUN_FAULT=$point "$SPOTRUN" run "$ini"
	pid=$t_last
	wait_for "$t_tmp/$point-2.out" "^resumed from step $a " 20 "$pid" || t_diag "$point: run 2 did not resume"
	sleep 0.3
	kill -TERM "$pid" 2>/dev/null
	t_wait "$pid"
	kill_group "$ini.pid"
	t_is "$t_rc" 137 "$point: run 2 killed by SIGKILL at the crash point" || t_show "$t_tmp/$point-2.err"
	t_has "$t_tmp/$point-2.err" "spotrun: fault injected at $point" "$point: the fault fired"
	b=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$t_tmp/$point-2.out" | tail -n 1)
	if [ "$point" = ckpt-request ]; then
		# spotrun died as it asked: the job, killed with it, wrote nothing.
		t_is "$b" "" "$point: the job was killed before it wrote checkpoint B"
	else
		t_result "$([ -n "$b" ] && [ "$b" -gt "$a" ]; echo $?)" "$point: the job wrote checkpoint B (step $b) after A (step $a)"
	fi

	"$SPOTRUN" ls "$ini" > "$t_tmp/$point-ls.out" 2>&1
	t_like "$t_tmp/$point-ls.out" "^[0-9]+ +$a +.* latest\$" "$point: A is still the latest checkpoint"

	if [ "$point" = ckpt-upload ]; then
		# Two restores killed once their chunks are in the staging tree:
		# each leaves its ckpt.restore.PID, and the next one removes it.
		prev=
		for k in 1 2; do
			t_bg "$point-r$k" env SPOTRUN_FAULT=ckpt-restore "$SPOTRUN" run "$ini"
			pid=$t_last
			t_wait "$pid"
			t_is "$t_rc" 137 "$point: restore $k killed at ckpt-restore" || t_show "$t_tmp/$point-r$k.err"
			t_is "$(cd "$t_tmp/local-f-$point" && ls -d ckpt.* 2>/dev/null | tr '\n' ' ')" "ckpt.restore.$pid " \
				"$point: killed restore $k left its staging directory, and only that"
			if [ -n "$prev" ]; then
				t_has "$t_tmp/$point-r$k.err" "ckpt     removed $t_tmp/local-f-$point/ckpt.restore.$prev, left by a restore (pid $prev) that was killed" \
					"$point: restore $k removed the one of restore $((k - 1)) first"
			fi
			prev=$pid
		done
	fi

	# Run 3: restores A, finishes, and sweeps what the killed run left: the
	# partial pack in the store's .tmp, staging directories of restores.
	t_bg "$point-3" "$SPOTRUN" run "$ini"
	pid=$t_last
	t_wait "$pid"
	t_is "$t_rc" 0 "$point: run 3 exits 0" || t_show "$t_tmp/$point-3.err"
	t_has "$t_tmp/$point-3.out" "resumed from step $a (attempt 1)" "$point: run 3 resumed from A (step $a)"
	t_is "$(result_of "$t_tmp/$point-3.out")" "$want" "$point: run 3's result equals the uninterrupted run's"
	t_is "$(ls -A "$t_tmp/store-$point/.tmp" | grep -vx lock | tr '\n' ' ')" "" \
		"$point: no temp file of the killed save is left in the store"
	t_is "$(cd "$t_tmp/local-f-$point" && ls -d ckpt.* 2>/dev/null | tr '\n' ' ')" "" \
		"$point: no staging directory is left beside the checkpoint directory"
	if [ "$point" = ckpt-upload ]; then
		t_has "$t_tmp/$point-3.err" "ckpt     removed $t_tmp/local-f-$point/ckpt.restore.$prev, left by a restore (pid $prev) that was killed" \
			"$point: run 3 says it removed the last one"
	fi
done

# A FIFO as LATEST (no writer): `spotrun ls` and `spotrun run` used to block
# in its open forever; now both stop at once, naming the file.
ini=$t_tmp/ckpt-pointer.ini
latest=$t_tmp/store-ckpt-pointer/f-ckpt-pointer/LATEST
mv "$latest" "$latest.away" && mkfifo "$latest"
timeout 20 "$SPOTRUN" ls "$ini" > "$t_tmp/fifo-ls.out" 2> "$t_tmp/fifo-ls.err"
t_is "$?" 74 "a FIFO as LATEST: spotrun ls exits 74 at once"
t_is "$(cat "$t_tmp/fifo-ls.err")" "spotrun: list checkpoints of f-ckpt-pointer: get f-ckpt-pointer/LATEST: $latest is a FIFO, not a regular file: the file store keeps objects as regular files; remove it" \
	"a FIFO as LATEST: spotrun ls names it"
timeout 20 "$SPOTRUN" run "$ini" > "$t_tmp/fifo-run.out" 2> "$t_tmp/fifo-run.err"
t_is "$?" 74 "a FIFO as LATEST: spotrun run exits 74 at once" || t_show "$t_tmp/fifo-run.err"
t_has "$t_tmp/fifo-run.err" "get f-ckpt-pointer/LATEST: $latest is a FIFO, not a regular file" \
	"a FIFO as LATEST: spotrun run names it"
rm "$latest" && mv "$latest.away" "$latest"

# 2. A job that ignores the notice's request. It answers the first
# (periodic) request, then no more; the notice leaves it 2 s (grace 3 s minus
# a 1 s margin).
ini=$t_tmp/ignore.ini
mk_ini "$ini" ignore "$t_tmp/store-ignore" "$PY $JOBS/blobjob.py --steps 1000 --sleep 0.02 --answer 1" \
	interval=1s margin=1s
ini_set "$ini" provider grace 3s
t_bg ignore "$SPOTRUN" run "$ini"
pid=$t_last
wait_for "$t_tmp/ignore.err" '^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed' 20 "$pid" \
	|| t_diag "ignore: no first checkpoint"
kill -TERM "$pid"
t_wait "$pid"
t_is "$t_rc" 75 "ignore: exit 75 (signal provider, preempted)" || t_show "$t_tmp/ignore.err"
t_like "$t_tmp/ignore.err" '^[0-9:]+  notice ' "ignore: the notice is in the timeline"
t_like "$t_tmp/ignore.out" '^ignoring request seq=[0-9]+ ' "ignore: the job ignored a request"
t_like "$t_tmp/ignore.err" 'the job did not write its notice checkpoint within .*; the previous checkpoint stays the newest' \
	"ignore: the missed deadline is reported"
t_like "$t_tmp/ignore.out" '^stopping on SIGTERM at step [0-9]+$' "ignore: the job was stopped with SIGTERM"
t_unlike "$t_tmp/ignore.err" 'SIGKILL' "ignore: no SIGKILL was needed"
t_result "$(kill -0 "$(cat "$ini.pid")" 2>/dev/null; [ $? -ne 0 ]; echo $?)" "ignore: no job process left"
a=$(sed -nE 's/^answered request seq=[0-9]+ at step ([0-9]+) .*/\1/p' "$t_tmp/ignore.out")
"$SPOTRUN" ls "$ini" > "$t_tmp/ignore-ls.out" 2>&1
t_is "$(grep -cE '^[0-9]+ ' "$t_tmp/ignore-ls.out")" 1 "ignore: one checkpoint in the store" || t_show "$t_tmp/ignore-ls.out"
t_like "$t_tmp/ignore-ls.out" "^[0-9]+ +$a +.* latest\$" "ignore: the answered one (step $a) is the latest"

# 3. Disk full: a 2 MiB tmpfs as the store; the first checkpoint (64 KiB)
# fits, the second (4 MiB of random bytes) does not.
mnt=$t_tmp/full
mkdir "$mnt"
if [ "$(id -u)" -ne 0 ]; then
	why="not root: cannot mount a tmpfs"
elif ! mount -t tmpfs -o size=2m spotrun-test "$mnt" 2> "$t_tmp/mount.err"; then
	why="mount -t tmpfs failed: $(cat "$t_tmp/mount.err")"
else
	why=
	t_mounts="$mnt"
fi
if [ -n "$why" ]; then
	t_skip "disk full: $why"
else
	ini=$t_tmp/full.ini
	mk_ini "$ini" full "$mnt/store" "$PY $JOBS/blobjob.py --steps 150 --sleep 0.02 --sizes 65536,4194304" \
		interval=1s
	t_bg full "$SPOTRUN" run "$ini"
	pid=$t_last
	t_wait "$pid"
	t_is "$t_rc" 0 "disk full: the job still finishes, exit 0" || t_show "$t_tmp/full.err"
	a=$(sed -nE 's/^answered request seq=[0-9]+ at step ([0-9]+) with 65536 bytes$/\1/p' "$t_tmp/full.out")
	t_like "$t_tmp/full.err" "^[0-9:]+  ckpt     [0-9]+ step ${a:-X}: .* committed" "disk full: the first checkpoint (step $a) committed"
	t_like "$t_tmp/full.err" "^[0-9:]+  error    periodic checkpoint failed: .*$mnt/store/.*: No space left on device; the previous checkpoint stays the newest\$" \
		"disk full: the error names the store and ENOSPC"
	used=$(du -sk "$mnt" | cut -f1)
	t_result "$([ "$used" -lt 1024 ]; echo $?)" "disk full: the failed uploads left no garbage (${used} KiB used)"
	"$SPOTRUN" ls "$ini" > "$t_tmp/full-ls.out" 2>&1
	t_is "$(grep -cE '^[0-9]+ ' "$t_tmp/full-ls.out")" 1 "disk full: one checkpoint in the store" || t_show "$t_tmp/full-ls.out"
	t_like "$t_tmp/full-ls.out" "^[0-9]+ +$a +.* latest\$" "disk full: the first (step $a) is the latest"
	# It restores intact: the job checks the blob's SHA-256. The run
	# finished, so a new one would start afresh: drop the FINISHED marker
	# to make it resume from the checkpoint under test.
	t_is "$(cat "$mnt/store/full/FINISHED")" "$(sed -nE 's/^([0-9]+) .* latest$/\1/p' "$t_tmp/full-ls.out")" \
		"disk full: the finished run marked its newest checkpoint"
	rm -f "$mnt/store/full/FINISHED"
	ini_set "$ini" checkpoint interval 0
	"$SPOTRUN" run "$ini" > "$t_tmp/full-2.out" 2> "$t_tmp/full-2.err"
	t_is "$?" 0 "disk full: a new run exits 0" || t_show "$t_tmp/full-2.err"
	t_has "$t_tmp/full-2.out" "resumed from step $a, data ok" "disk full: it restored the first checkpoint intact"
fi

t_done

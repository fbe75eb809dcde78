#!/bin/sh
# t43-cloud-deadline.sh: a notice too close to its deadline, on each cloud
# provider (aws, gcp, azure) against tests/mdemu on loopback, one table:
#  run 1: a notice with time to spare: checkpoint A commits, exit 75;
#  run 2: resumes from A; a notice whose deadline, less the safety margin,
#         leaves too little time: aws's `time` less than the margin ahead
#         (no request at all), gcp's 30 s less a 28 s margin and azure's
#         NotBefore 30 s ahead less a 27 s margin (the job needs longer to
#         write than that: it is cut off half-way). The run says the previous checkpoint
#         stays the newest, stops the job, exits 75; the store holds exactly
#         what it held (no manifest, pack or pointer change, nothing
#         half-committed), A is still the latest, and azure is not
#         acknowledged (no checkpoint was committed for the notice);
#  run 3: no notice: it resumes from A (not the step half-written in run 2)
#         and finishes.
set -u
. "$top_srcdir/tests/jobs/cloud.sh"
stop_emu() { kill $emu; wait $emu 2>/dev/null; emu=; }
# The store's checkpoint objects (the attempt records aside) and LATEST.
# (LATEST's seq: its epoch is that of the run holding the job, which each
# run moves on as it takes the job's lease; that is the fencing, no commit)
store_state() {
	(cd "$1/store" && find . -type f ! -path './*/attempts/*' | sort && cut -d' ' -f1 */LATEST)
}
clouds="aws gcp azure"
# Steps of 0.1 s: enough that run 2, resumed from A, is still running when
# its notice comes 1 s after it started (with 30 a loaded sanitizer build
# reached A at step 15 and finished run 2 before the notice's request).
steps=100
echo "1..$((3 * 10 + 1))"

# too_close CLOUD: start the emulator for run 2 (a notice 1 s after the job
# started, too close to its deadline); set margin, delay (how long the job
# takes to write its checkpoint) and want (the run's message, a regex).
# Each event is timed from the job's start (cloud_emu -C), not the
# emulator's: a loaded machine starts spotrun late.
too_close() {
	now=$(date +%s)
	rm -f "$dir/local/started"
	case $1 in
	aws)	# time: 60 s after now (to the second, fixed in the reply), so
		# under 60 s left at the notice, less than the 100 s margin: not
		# even a request.
		cloud_emu "$dir/port2" "$dir/emu2.log" -C "$dir/local/started" -T 1 -b \
			"{\"action\":\"terminate\",\"time\":\"$(date -u -d @$((now + 60)) +%Y-%m-%dT%H:%M:%SZ)\"}"
		margin=100s delay=0
		want='ckpt     no time for a checkpoint: the notice left [0-9.]+m?s, margin = 1m40s; the previous checkpoint stays the newest$' ;;
	gcp)	# 30 s from the flip to power-off less a 28 s margin: the job has
		# 2 s (less what passed before spotrun saw the flip) and needs 4.
		cloud_emu "$dir/port2" "$dir/emu2.log" -C "$dir/local/started" -G 1
		margin=28s delay=4
		want='ckpt     the job did not write its notice checkpoint within (1\.[0-9]|2\.0)s; the previous checkpoint stays the newest$' ;;
	azure)	# NotBefore 30 s after the event (mdemu's default): 30 s at the
		# notice less a 27 s margin; the job needs 5.
		cloud_emu "$dir/port2" "$dir/emu2.log" -C "$dir/local/started" -Z 1
		margin=27s delay=5
		want='ckpt     the job did not write its notice checkpoint within [0-9.]+m?s; the previous checkpoint stays the newest$' ;;
	esac
}

for cloud in $clouds; do
	dir=$tmp/$cloud err=$tmp/$cloud/err1
	mkdir "$dir"
	case $cloud in
	aws) var=SPOTRUN_AWS_ENDPOINT opt=-T ;;
	gcp) var=SPOTRUN_GCP_ENDPOINT opt=-G ;;
	azure) var=SPOTRUN_AZURE_ENDPOINT opt=-Z ;;
	esac

	# Run 1: a notice 1 s after the job started, with time to spare.
	cloud_emu "$dir/port1" "$dir/emu1.log" -C "$dir/local/started" $opt 1
	cloud_job "$dir" "dl-$cloud" "$cloud" "$steps"
	env "$var=$emu_url" "$SPOTRUN" run "$dir/job.ini" >"$dir/out1" 2>"$err"
	rc=$?
	stop_emu
	a=$(sed -n 's/^[0-9:]*  ckpt     [0-9]* step \([0-9]*\): .* committed in .*/\1/p' "$err")
	[ $rc = 75 ] && [ -n "$a" ] && ok "$cloud: run 1 commits checkpoint A (step $a) and exits 75" ||
		nok "$cloud: run 1: rc $rc, step '$a'"
	before=$(store_state "$dir")

	# Run 2: the notice is too close to its deadline.
	err=$dir/err2
	too_close "$cloud"
	cloud_job "$dir" "dl-$cloud" "$cloud" "$steps" "$delay" "$margin"
	env "$var=$emu_url" "$SPOTRUN" run "$dir/job.ini" >"$dir/out2" 2>"$err"
	rc=$?
	stop_emu
	check $rc 75 "$cloud: run 2 exits 75"
	check "$(sed -n 's/^resumed at //p' "$dir/out2")" "${a:-A}" "$cloud: run 2 resumed from A"
	grep -qE "^[0-9:]+  $want" "$err" && ok "$cloud: run 2 says the previous checkpoint stays the newest" ||
		nok "$cloud: run 2: no line like /$want/"
	grep -qE '^[0-9:]+  ckpt     [0-9]+ step ' "$err" && nok "$cloud: run 2 committed a checkpoint" ||
		ok "$cloud: run 2 committed no checkpoint"
	grep -qE '^[0-9:]+  stop     no checkpoint for this notice; SIGTERM to the job$' "$err" &&
		ok "$cloud: run 2 stopped the job for want of a checkpoint" || nok "$cloud: run 2: the stop"
	check "$(store_state "$dir")" "$before" "$cloud: run 2 left the store's checkpoints as they were (nothing half-committed)"
	"$SPOTRUN" ls "$dir/job.ini" >"$dir/ls" 2>&1
	[ "$(grep -cE '^[0-9]+ ' "$dir/ls")" = 1 ] && grep -qE "^[0-9]+ +${a:-A} .* latest\$" "$dir/ls" &&
		ok "$cloud: A (step $a) is still the one checkpoint, and the latest" ||
		nok "$cloud: ls: $(cat "$dir/ls")"
	if [ $cloud = azure ]; then
		check "$(grep -c '^POST ' "$dir/emu2.log")" 0 "azure: run 2 acknowledged nothing (no checkpoint was committed)"
	fi

	# Run 3: no notice; it resumes from A, not from what run 2's job had
	# half-written, and finishes.
	err=$dir/err3
	cloud_emu "$dir/port3" "$dir/emu3.log"
	cloud_job "$dir" "dl-$cloud" "$cloud" "$steps"
	env "$var=$emu_url" "$SPOTRUN" run "$dir/job.ini" >"$dir/out3" 2>"$err"
	rc=$?
	stop_emu
	check "$rc:$(sed -n 's/^resumed at //p' "$dir/out3")" "0:${a:-A}" "$cloud: run 3 restores A and exits 0"
	check "$(tail -n 1 "$dir/out3")" "done at $steps" "$cloud: run 3 runs the job to its end"
done

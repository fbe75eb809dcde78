#!/bin/sh
# t44-cloud-early.sh: early warnings and `auto`, end to end on each cloud
# provider against tests/mdemu on loopback, one table: AWS's rebalance
# recommendation, GCP's MIGRATE_ON_HOST_MAINTENANCE, an Azure Freeze.
#  run A: [provider] name = auto (the two other clouds on a closed port):
#         the header line names the cloud auto found and how long that took
#         (< 0.5 s); the early warning is on the timeline and starts a
#         checkpoint (early_checkpoint = yes, the default) that commits while
#         the job goes on to its end, exit 0;
#  run B: name = the cloud, early_checkpoint = no: the warning is shown,
#         nothing is asked of the job, no checkpoint, exit 0.
set -u
. "$top_srcdir/tests/jobs/cloud.sh"
stop_emu() { kill $emu; wait $emu 2>/dev/null; emu=; }
echo "1..$((3 * 8))"

for cloud in aws gcp azure; do
	# The cloud's variable, the emulator's early warning (GCP's is read
	# between long-polls: set from the start), and the warning's words.
	case $cloud in
	aws)	var=SPOTRUN_AWS_ENDPOINT
		set -- -R 0.5
		warning='aws rebalance recommendation \([0-9T:Z-]+\)' ;;
	gcp)	var=SPOTRUN_GCP_ENDPOINT
		set -- -m 0
		warning='gcp host maintenance \(MIGRATE_ON_HOST_MAINTENANCE\)' ;;
	azure)	var=SPOTRUN_AZURE_ENDPOINT
		set -- -Z 0.5 -E Freeze
		warning='azure Freeze event 602d9444-d2cd-49c7-8624-8643e7171297' ;;
	esac

	# Run A: auto finds the cloud; the warning starts a checkpoint.
	dir=$tmp/$cloud-auto err=$tmp/$cloud-auto/err
	mkdir "$dir"
	cloud_emu "$dir/port" "$dir/emu.log" "$@"
	cloud_job "$dir" "early-$cloud" auto 20
	env "$var=$emu_url" "$SPOTRUN" run "$dir/job.ini" >"$dir/out" 2>"$err"
	rc=$?
	stop_emu
	check $rc 0 "$cloud: an early warning does not stop the job (exit 0)"
	secs=$(sed -n "s/^spotrun: early-$cloud on $cloud (auto, detected in \([0-9.]*\) s), .*, store file:.*/\1/p" "$err")
	[ -n "$secs" ] && awk -v s="$secs" 'BEGIN { exit !(s < 0.5) }' &&
		ok "$cloud: auto found $cloud in $secs s, and the header line says so" ||
		nok "$cloud: auto: header '$(head -n 1 "$err")'"
	grep -qE "^[0-9:]+  warning  $warning\$" "$err" && ok "$cloud: the early warning is on the timeline" ||
		nok "$cloud: no warning like /$warning/"
	# within write_timeout (10 min) of the warning's arrival, said when
	# the request is made: under load, a second or more later
	grep -qE '^[0-9:]+  request  early checkpoint, answer within (10m00s|9m5[0-9]s) \(by [0-9]{2}:[0-9]{2}:[0-9]{2}\)$' "$err" &&
		grep -qE '^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed in ' "$err" &&
		ok "$cloud: it started an early checkpoint, which committed" || nok "$cloud: no early checkpoint"
	check "$(tail -n 1 "$dir/out")" "done at 20" "$cloud: the job ran on to its end"

	# Run B: early_checkpoint = no.
	dir=$tmp/$cloud-no err=$tmp/$cloud-no/err
	mkdir "$dir"
	cloud_emu "$dir/port" "$dir/emu.log" "$@"
	cloud_job "$dir" "early-$cloud" "$cloud" 20
	echo 'early_checkpoint = no' >>"$dir/job.ini"
	env "$var=$emu_url" "$SPOTRUN" run "$dir/job.ini" >"$dir/out" 2>"$err"
	rc=$?
	stop_emu
	check $rc 0 "$cloud, early_checkpoint = no: exit 0"
	grep -qE "^[0-9:]+  warning  $warning; no checkpoint \(early_checkpoint = no\)\$" "$err" &&
		ok "$cloud, early_checkpoint = no: the warning is shown, and says no checkpoint follows" ||
		nok "$cloud, early_checkpoint = no: the warning"
	! grep -qE '^[0-9:]+  (request|ckpt) ' "$err" && [ ! -s "$dir/local/done-times" ] &&
		ok "$cloud, early_checkpoint = no: nothing was asked of the job, no checkpoint" ||
		nok "$cloud, early_checkpoint = no: a request or checkpoint"
done

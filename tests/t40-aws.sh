#!/bin/sh
# t40-aws.sh: `spotrun run` with [provider] name = aws end to end, against
# tests/mdemu (the metadata emulator) on loopback: the rebalance
# recommendation starts an early checkpoint, the spot interruption notice
# is on the timeline with the emulator's deadline, the job checkpoints,
# and the run exits 75 (no next VM on AWS); the next run resumes. Then the
# job file's keys: endpoint (an IPv6 literal: the emulator on [::1]) wins
# over $SPOTRUN_AWS_ENDPOINT, and poll sets the polling interval.
set -u
. "$top_srcdir/tests/jobs/cloud.sh"
echo "1..9"

# mdemu: a rebalance recommendation at 0.5 s, the notice at 1.5 s.
cloud_emu "$tmp/port" "$tmp/emu.log" -R 0.5 -T 1.5
SPOTRUN_AWS_ENDPOINT=$emu_url
export SPOTRUN_AWS_ENDPOINT

cloud_job "$tmp" awsjob aws

"$SPOTRUN" run "$tmp/job.ini" >"$tmp/out" 2>"$tmp/err"
check $? 75 "the aws notice: checkpoint, then exit 75"
grep -q 'spotrun: awsjob on aws, p5.48xlarge, store ' "$tmp/err" &&
	ok "the facts come from the metadata service" || nok "facts line"
grep -q 'warning  aws rebalance recommendation (' "$tmp/err" &&
	ok "the rebalance recommendation is on the timeline" || nok "rebalance on the timeline"
grep -q 'notice   aws spot interruption (terminate at ' "$tmp/err" && grep -q 'ckpt     0 step [0-9]' "$tmp/err" &&
	ok "the notice and the committed checkpoint are on the timeline" || nok "timeline of the notice"
grep -q '^PUT /latest/api/token ttl=21600 token=none -> 200$' "$tmp/emu.log" &&
	! grep -q 'token=none -> 401' "$tmp/emu.log" &&
	ok "IMDSv2: a token with a TTL, and every GET carried it" || nok "IMDSv2 headers: $(head -3 "$tmp/emu.log")"

# The next run resumes from the notice's checkpoint (the emulator still
# announces the interruption, so this run too ends with 75 or finishes).
kill $emu; wait $emu 2>/dev/null; emu=
cloud_emu "$tmp/port2" "$tmp/emu2.log"
SPOTRUN_AWS_ENDPOINT=$emu_url "$SPOTRUN" run "$tmp/job.ini" >"$tmp/out2" 2>"$tmp/err"
rc=$?
step=$(sed -n 's/^resumed at //p' "$tmp/out2")
[ $rc = 0 ] && [ -n "$step" ] && [ "$step" -ge 5 ] &&
	ok "the next run resumes from that checkpoint (step $step) and finishes" || nok "resume: rc $rc, step '$step'"

# The job file's endpoint, an IPv6 literal, wins over the environment (a
# closed port here); poll = 100ms: about 15 polls before the notice at 1.5 s
# (the default, 500ms, makes 3 or 4).
kill $emu; wait $emu 2>/dev/null; emu=
cloud_emu "$tmp/port6" "$tmp/emu6.log" -6 -T 1.5
mkdir "$tmp/v6"
cloud_job "$tmp/v6" awsv6 aws
printf 'endpoint = http://[::1]:%s\npoll = 100ms\n' "$(cat "$tmp/port6")" >>"$tmp/v6/job.ini"
SPOTRUN_AWS_ENDPOINT=http://127.0.0.1:1 "$SPOTRUN" run "$tmp/v6/job.ini" >"$tmp/out6" 2>"$tmp/err"
check $? 75 "endpoint = http://[::1]:PORT: the notice over IPv6, checkpoint, exit 75"
grep -q '^PUT /latest/api/token ttl=21600 token=none -> 200$' "$tmp/emu6.log" &&
	ok "the job file's endpoint won over SPOTRUN_AWS_ENDPOINT" || nok "no request reached [::1]"
polls=$(grep -c '^GET /latest/meta-data/spot/instance-action ttl=- token=good -> 404$' "$tmp/emu6.log")
[ "$polls" -ge 8 ] && ok "poll = 100ms: $polls polls before the notice" || nok "poll = 100ms: only $polls polls"

#!/bin/sh
# t40-aws.sh: `spotrun run` with [provider] name = aws end to end, against
# tests/mdemu (the metadata emulator) on loopback: the rebalance
# recommendation starts an early checkpoint, the spot interruption notice
# is on the timeline with the emulator's deadline, the job checkpoints,
# and the run exits 75 (no next VM on AWS); the next run resumes.
set -u
tmp=$(mktemp -d)
emu=
trap '[ -n "$emu" ] && kill $emu 2>/dev/null; rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; [ -f "$tmp/err" ] && sed 's/^/# /' "$tmp/err" | tail -n 15; }
check() { if [ "$1" = "$2" ]; then ok "$3"; else nok "$3: got '$1', want '$2'"; fi; }
echo "1..6"

# mdemu: a rebalance recommendation at 0.5 s, the notice at 1.5 s.
"$top_builddir/tests/mdemu" -p "$tmp/port" -l "$tmp/emu.log" -R 0.5 -T 1.5 &
emu=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
SPOTRUN_AWS_ENDPOINT=http://127.0.0.1:$(cat "$tmp/port")
export SPOTRUN_AWS_ENDPOINT

cat >"$tmp/job.sh" <<'SH'
step=0
[ -n "${SPOTRUN_RESUME_STEP:-}" ] && step=$(cat "$SPOTRUN_CKPT_DIR/step") && echo "resumed at $step"
while [ "$step" -lt 40 ]; do
	if [ -f "$SPOTRUN_CKPT_REQUEST" ]; then
		echo "$step" >"$SPOTRUN_CKPT_DIR/step"; echo "$step" >"$SPOTRUN_CKPT_DONE.t"; mv "$SPOTRUN_CKPT_DONE.t" "$SPOTRUN_CKPT_DONE"
	fi
	step=$((step + 1)); sleep 0.1
done
echo "done at $step"
SH
printf '[job]\nname = awsjob\ncommand = /bin/sh %s/job.sh\n[checkpoint]\nsignal = none\nstore = %s/store\nlocal_dir = %s/local\nmargin = 1s\n[provider]\nname = aws\n' \
	"$tmp" "$tmp" "$tmp" >"$tmp/job.ini"

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
"$top_builddir/tests/mdemu" -p "$tmp/port2" -l "$tmp/emu2.log" &
emu=$!
i=0
while [ ! -s "$tmp/port2" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
SPOTRUN_AWS_ENDPOINT=http://127.0.0.1:$(cat "$tmp/port2") "$SPOTRUN" run "$tmp/job.ini" >"$tmp/out2" 2>"$tmp/err"
rc=$?
step=$(sed -n 's/^resumed at //p' "$tmp/out2")
[ $rc = 0 ] && [ -n "$step" ] && [ "$step" -ge 5 ] &&
	ok "the next run resumes from that checkpoint (step $step) and finishes" || nok "resume: rc $rc, step '$step'"

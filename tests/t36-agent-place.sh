#!/bin/sh
# t36-agent-place.sh: an agent whose machine is preempted adds the
# preemption to the queue's placement history (fleet/agent-place.c;
# doc/design.md, "Provisioning"), the place from its provider's facts. An
# agent of provider aws against tests/mdemu (whose facts are p5.48xlarge
# in us-east-1a), the spot notice 1.5 s after the job's step 5 (an event:
# a loaded machine starts the job late):
# 1. the job is released, the agent ends preempted and says it noted the
#    preemption; Q/placement/aws holds one event: us-east-1, us-east-1a,
#    p5.48xlarge, preempted, at a time within the run;
# 2. a history that is not one (a file of the queue's that does not
#    parse): the write fails, the agent says so in a warning, and the job
#    is released all the same (best effort, never the job's failure).
set -u
. "$top_srcdir/tests/jobs/cloud.sh"
: "${top_builddir:=$(dirname "$SPOTRUN")}"
QTOOL=$top_builddir/tests/qtool
echo "1..13"

# agent_case DIR: a queue file://DIR/q with one job of tests/jobs/cloud.sh's
# kind (provider auto: the agent's), an emulator whose notice follows the
# job's step 5, and an agent of provider aws run to its end; its exit
# status in $rc, its stderr DIR/agent.err.
agent_case() {
	mkdir -p "$1"
	cloud_emu "$1/port" "$1/emu.log" -C "$1/local/at-step-5" -T 1.5
	cloud_job "$1" @ID@ auto
	"$QTOOL" add "file://$1/q" pj "$1/job.ini" || echo "Bail out! qtool add"
	t0=$(date +%s)
	SPOTRUN_AWS_ENDPOINT=$emu_url SPOTRUN_LEASE_TTL=3s timeout 120 "$SPOTRUN" agent \
	    --provider aws --label gpus=0 --queue "file://$1/q" --dir "$1/ag" 2>"$1/agent.err"
	rc=$?
	t1=$(date +%s)
	kill $emu 2>/dev/null; wait $emu 2>/dev/null; emu=
}

# 1. the preemption noted
agent_case "$tmp/a"
err=$tmp/a/agent.err
grep -q '^spotrun agent: pj: released' "$err" && ok "the preempted job is released" ||
	nok "no release of pj"
grep -qF 'spotrun agent: preemption of p5.48xlarge in us-east-1a noted in the placement history' "$err" &&
	ok "the agent says it noted the preemption" || nok "no line of the preemption noted"
check "$(grep -c 'warning' "$err")" 0 "no warning"
ev=$(python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["events"]
print(len(e), e[0]["region"], e[0]["zone"], e[0]["type"], e[0]["why"],
      int(sys.argv[2]) - 1 <= e[0]["at"] <= int(sys.argv[3]) + 1)' "$tmp/a/q/placement/aws" "$t0" "$t1" 2>&1)
check "$ev" "1 us-east-1 us-east-1a p5.48xlarge preempted True" \
    "Q/placement/aws: one event, the facts' region, zone and type, preempted, its time the run's"
[ ! -e "$tmp/a/q/placement/gcp" ] && [ ! -e "$tmp/a/q/placement/azure" ] &&
	ok "no other cloud's history" || nok "another cloud's history was written"

# 2. a history that does not parse: a warning, the job released all the same
mkdir -p "$tmp/b/q/placement"
printf 'not a history\n' > "$tmp/b/q/placement/aws"
agent_case "$tmp/b"
err=$tmp/b/agent.err
grep -q '^spotrun agent: pj: released' "$err" && ok "2: the preempted job is released" ||
	nok "2: no release of pj"
grep -qF 'spotrun agent: warning: preemption not added to the placement history: read placement/aws of queue' "$err" &&
	ok "2: a warning says the history was not written" || nok "2: no warning"
grep -qF 'not a placement history (doc/fleet.md); delete it to start a new one' "$err" &&
	ok "2: ... and why, with the fix" || nok "2: the warning's reason"
check "$(cat "$tmp/b/q/placement/aws")" "not a history" "2: the file is left as it was"
check "$(grep -c 'noted in the placement history' "$err")" 0 "2: nothing said noted"

# 3. a notice between jobs: an idle agent of a cloud's spot machine watches
# it with its own provider (fleet/agent-watch.c); the notice comes 1 s
# after the emulator's start, no job in the queue: the agent says so, notes
# the preemption and ends preempted (75), having claimed nothing
mkdir -p "$tmp/c/q"
cloud_emu "$tmp/c/port" "$tmp/c/emu.log" -T 1
SPOTRUN_AWS_ENDPOINT=$emu_url SPOTRUN_LEASE_TTL=3s timeout 120 "$SPOTRUN" agent \
    --provider aws --label gpus=0 --queue "file://$tmp/c/q" --dir "$tmp/c/ag" 2>"$tmp/c/agent.err"
rc=$?
kill $emu 2>/dev/null; wait $emu 2>/dev/null; emu=
err=$tmp/c/agent.err
check "$rc|$(grep -c ': claimed' "$err")" "75|0" "3: the idle agent ends preempted (75), nothing claimed"
grep -qE "^spotrun agent: this machine's notice came between jobs: aws spot interruption \\(terminate at [0-9T:Z-]+\\), deadline in [0-9.ms]+; the machine goes, the agent ends$" "$err" &&
	ok "3: it says the notice came between jobs" || { nok "3: no line of the notice"; sed 's/^/# /' "$err"; }
grep -qF 'spotrun agent: preemption of p5.48xlarge in us-east-1a noted in the placement history' "$err" &&
	ok "3: ... and notes the preemption" || nok "3: no line of the preemption noted"

#!/bin/sh
# t97-queue-hostile.sh: hostile or malformed objects in a file:// queue,
# met by the real `spotrun` agent, status and cancel (doc/fleet.md, "Claim"
# and "Status, cancel, requeue, logs"):
#
# 1. A pending marker whose key does not parse: the agent warns naming it,
#    moves it to malformed/ (its body says why), puts its job's marker back
#    from meta.json, and runs the job; a marker naming no job is moved and
#    said so; `spotrun status` counts what is under malformed/.
# 2. 6,400 markers sorting first that name no job of the queue (and 1,000
#    that do not parse): an agent still claims the real job in its first
#    poll, writing no more than one round of leases for junk. That is 8
#    listing pages, far more than the 64 a claim quarantines and the 4
#    rounds of 8 candidates a claim used to try (200 polls for this junk).
#    The issue's 100,000 asserted nothing more and cost 100 s: each of the
#    agent's listings opens and hashes every marker.
# 3. A job whose status marker does not parse is cancelled all the same,
#    with a warning naming the marker, which the cancel replaces.
# 4. A pending marker naming another checkpoint store than the job's
#    meta.json: the agent warns, claims the job in meta.json's store, and
#    a cancel (which goes by meta.json) reaches the running job.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
. "$top_srcdir/tests/jobs/agent.sh"
Q=file://$t_tmp/q
S=$SPOTRUN

# a job of the queue: ID, its command
job() {
	printf '[job]\nname = %s\ncommand = %s\n[provider]\nname = local\n' "$1" "$2" > "$t_tmp/$1.ini"
}

# ag_bounded NAME ARGS...: a CPU agent in the foreground, killed after
# 300 s (a hang guard, not a timing assertion: the machine is loaded)
ag_bounded() {
	_n=$1
	shift
	ag_start "$_n" 0 "$@"
	ag_wait_bounded "$t_last" 300
}

# 1. a malformed pending marker
job good "echo good"
job bad1 "echo bad1"
"$S" submit --create --queue "$Q" "$t_tmp/good.ini" "$t_tmp/bad1.ini" > /dev/null || t_bail "submit failed"
m=$(cd "$t_tmp/q/pending" && ls | grep '~bad1~')
broken=$(printf '%s\n' "$m" | sed 's/~0-0~/~x-0~/')
mv "$t_tmp/q/pending/$m" "$t_tmp/q/pending/$broken"
: > "$t_tmp/q/pending/zz-no-job"
ag_bounded ag1 --queue "$Q" --once
t_is "$t_rc" 0 "an agent with a malformed pending marker in its queue drains it" || t_show "$t_tmp/ag1.err"
t_has "$t_tmp/ag1.err" "spotrun agent: warning: pending marker pending/$broken: not a key of the form pending/P~T~ID~MIN-MAX~TYPE~STORE~EPOCH~ETAG[~NODES]: moved to malformed/pending/$broken; job bad1 is put back in the queue from its meta.json" \
    "the malformed marker is named, quarantined, and its job put back from meta.json"
t_has "$t_tmp/ag1.err" "spotrun agent: warning: pending marker pending/zz-no-job: not a key of the form pending/P~T~ID~MIN-MAX~TYPE~STORE~EPOCH~ETAG[~NODES]: moved to malformed/pending/zz-no-job; malformed/pending/zz-no-job names no job of this queue: delete it once read" \
    "a marker naming no job: quarantined, with the fix"
t_is "$(ag_status "$Q" bad1 | cut -d' ' -f1)|$(ag_status "$Q" good | cut -d' ' -f1)" "succeeded|succeeded" \
    "the job of the malformed marker ran, not queued for ever"
t_is "$(cat "$t_tmp/q/malformed/pending/$broken")" \
    "pending marker pending/$broken: not a key of the form pending/P~T~ID~MIN-MAX~TYPE~STORE~EPOCH~ETAG[~NODES]" \
    "the quarantined object says why"
t_is "$(find "$t_tmp/q/pending" -type f 2>/dev/null | wc -l)" 0 "nothing left in pending/"
"$S" status --queue "$Q" > "$t_tmp/st1.out" 2> "$t_tmp/st1.err"
t_is "$(cat "$t_tmp/st1.err")" \
    "spotrun: warning: 2 markers in queue $Q (from --queue) were quarantined by an agent as malformed, no job's (the first: malformed/pending/$broken; each object says why; doc/fleet.md): delete them once read" \
    "status counts the quarantined markers and says what to do"
rm -r "$t_tmp/q/malformed"
"$S" status --queue "$Q" > "$t_tmp/st1.out" 2> "$t_tmp/st1.err"
t_is "$(cat "$t_tmp/st1.err")" "" "... and says nothing once they are deleted"

# 2. junk that sorts first
Q2=file://$t_tmp/q2
mkdir -p "$t_tmp/q2/pending"
( cd "$t_tmp/q2/pending" &&
    seq -f '00000~0000000000001~junk%06g~0-0~~q~0~' 1 6400 | xargs touch -d '1 hour ago' &&
    seq -f '00000~junk%06g' 1 1000 | xargs touch ) || t_bail "making junk markers failed"
job real "echo real"
"$S" submit --queue "$Q2" "$t_tmp/real.ini" > /dev/null || t_bail "submit failed"
ag_bounded ag2 --queue "$Q2" --once
t_is "$t_rc" 0 "an agent behind 7,400 junk markers ends" || t_show "$t_tmp/ag2.err"
t_is "$(grep -c ': claimed (' "$t_tmp/ag2.err")|$(grep -c 'spotrun agent: real: succeeded' "$t_tmp/ag2.err")" "1|1" \
    "it claims the real job (its one claim) and runs it"
first=$(grep -n 'spotrun agent: real: claimed' "$t_tmp/ag2.err" | cut -d: -f1)
t_is "$(head -n "${first:-0}" "$t_tmp/ag2.err" | grep -c 'no jobs/junk[0-9]*/spec.ini')" 8 \
    "... in its first poll, after one round of 8 junk candidates (not 4 rounds a poll for 200 polls)"
t_like "$t_tmp/ag2.err" "^spotrun agent: warning: quarantine [0-9]+ more pending markers of queue $Q2 that are no job's: 64 of the [0-9]+ moved to malformed/ now, the rest at the next claims" \
    "the junk is counted and quarantined 64 a claim"
t_is "$(ls "$t_tmp/q2/ckpt/_leases" | wc -l)" 9 "leases written for junk: the first round's 8 only (and the real job's)"

# 3. cancel a job whose status marker does not parse
job c1 "sleep 60"
"$S" submit --queue "$Q" "$t_tmp/c1.ini" > /dev/null || t_bail "submit failed"
k=$(cd "$t_tmp/q/index" && ls | grep '^c1~')
kb=$(printf '%s\n' "$k" | sed 's/~queued~/~bogus~/')
mv "$t_tmp/q/index/$k" "$t_tmp/q/index/$kb"
"$S" cancel --queue "$Q" c1 > "$t_tmp/c1.out" 2> "$t_tmp/c1.err"
t_is "$?|$(cat "$t_tmp/c1.out" | head -n 1)" "0|c1: cancelled (no agent was running it)" \
    "a job whose status marker does not parse is cancelled" || t_show "$t_tmp/c1.err"
t_is "$(cat "$t_tmp/c1.err")" "spotrun: warning: job c1: status marker index/$kb in queue $Q (from --queue) does not parse (not of the form index/ID~EPOCH~...; doc/fleet.md): going by the job's meta.json and lease; the next write of its state replaces the marker" \
    "... saying which marker is broken"
t_is "$(ls "$t_tmp/q/index" | grep -c '^c1~')|$(ag_status "$Q" c1 | cut -d' ' -f1)" \
    "1|cancelled" "... its broken marker replaced by one saying cancelled"
t_is "$("$QTOOL" lease "$Q/ckpt" c1 | cut -d' ' -f1)" cancelled "... and its lease cancelled"

# 4. a marker naming another store than meta.json
printf '[job]\nname = s1\ncommand = sleep 120\nship_workdir = no\n[checkpoint]\nstore = file://%s/other\n[provider]\nname = local\n' \
    "$t_tmp" > "$t_tmp/s1.ini"
"$S" submit --queue "$Q" "$t_tmp/s1.ini" > /dev/null 2>&1 || t_bail "submit failed"
m=$(cd "$t_tmp/q/pending" && ls | grep '~s1~')
wrong=$(printf '%s\n' "$m" | sed -E 's/~[0-9a-f]{16}~/~q~/')
mv "$t_tmp/q/pending/$m" "$t_tmp/q/pending/$wrong"
ag_start ag4 0 --queue "$Q" --once
ag4=$t_last
wait_for "$t_tmp/ag4.err" 'spotrun agent: s1: claimed' 120 "$ag4" || t_diag "s1 was not claimed"
t_has "$t_tmp/ag4.err" "spotrun agent: warning: claim job s1: pending marker pending/$wrong names checkpoint store $Q/ckpt, but jobs/s1/meta.json names file://$t_tmp/other (meta.json is the job's truth: written once, by its submission; cancel goes by it too): the lease taken there is deleted; the job is claimed in its own store" \
    "a marker naming another store than meta.json: said, naming both"
t_like "$t_tmp/ag4.err" "^spotrun agent: s1: claimed \\(epoch 1, [0-9]+ requests\\), store file://$t_tmp/other\$" \
    "... and the job claimed in meta.json's store"
"$S" cancel --queue "$Q" s1 > "$t_tmp/c4.out" 2> "$t_tmp/c4.err"
t_like "$t_tmp/c4.out" "^s1: asked to stop" "cancel reaches the running job (the same store as its agent)" ||
    t_show "$t_tmp/c4.err"
wait_for "$t_tmp/ag4.err" 'spotrun agent: s1: cancelled' 120 "$ag4"
t_has "$t_tmp/ag4.err" "spotrun agent: s1: cancelled (epoch 1)" "... which stops it"
t_wait "$ag4"
t_is "$("$QTOOL" lease "file://$t_tmp/other" s1 | cut -d' ' -f1)|$(ls "$t_tmp/q/ckpt/_leases" 2>/dev/null | grep -c '^s1$')" \
    "cancelled|0" "its lease in meta.json's store cancelled; none left in the marker's"
t_done

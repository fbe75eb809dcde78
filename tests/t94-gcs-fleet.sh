#!/bin/sh
# t94-gcs-fleet.sh: the fleet end to end on gs://, against tests/gcsemu.py
# with GCS's limit of one write a second per object name on
# (--object-rate 1: a second write of a name within a second is answered
# 429 SlowDown, as GCS's XML API answers it), the queue and the
# checkpoints in one bucket:
#
# A sweep of 3 trials (tests/jobs/workjob.py, 20 steps of 0.15 s, a
# checkpoint every second and a simulated preemption notice 2 s into each run,
# whose notice checkpoint follows a periodic one closely) over 2 agents
# with a 3 s lease TTL (renewals every second, the shortest gs:// takes):
# every trial succeeds, once (its lease and status succeeded, its steps
# 1..20 each once), with checkpoints committed to gs://; `spotrun status`
# reads it from gs://; and the emulator's log shows that no object was
# changed twice within a second (gcsemu.py --check-log) and that every 429
# was retried until answered, where two processes wrote one object (the
# agents' claims of a lease, the delete of a pending marker, and of a
# status marker: the next agent's claim deletes the markers the last one
# left, within a second of its last where a handover is quick, as under
# load; and the next holder's fence of LATEST, within a second of the last
# holder's final commit), while LATEST's commits, the attempts' records,
# the status markers' puts,
# the log segments and the manifests, which one process writes, were
# never refused: the store paces
# a handle's own writes of a key (store/pace.c; a lease's renewals and end
# too). A lease
# TTL under 3 s is refused on gs://. And the emulator's 429 itself, through
# curl: its status and body as GCS's XML API sends them.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/gcs-env.sh"
t_setup
. "$top_srcdir/tests/jobs/agent.sh"

gcs_start t89 spotrun-fleet --log-times --object-rate 1
ep=http://127.0.0.1:$port
Q="gs://spotrun-fleet/q?endpoint=$ep"
ST="gs://spotrun-fleet/q/ckpt?endpoint=$ep"

ag_spec "$t_tmp/trial.ini" 20 0.15 "after = 2000ms" "window = 2s" "preemptions = 1" \
    "[resources]" "gpus = 1"
"$QTOOL" add-many "$Q" gsw 3 "$t_tmp/trial.ini" 1 1 || t_bail "qtool add-many failed"
ag_start ga1 1 --queue "$Q" --idle-timeout 4s -q
a1=$t_last
ag_start ga2 1 --queue "$Q" --idle-timeout 4s -q
a2=$t_last
t_wait "$a1"
r1=$t_rc
t_wait "$a2"
t_is "$r1 $t_rc" "0 0" "2 agents on gs:// drain the sweep and go idle (exit 0)" ||
    { t_show "$t_tmp/ga1.err"; t_show "$t_tmp/ga2.err"; }
t_diag "jobs run: ga1 $(grep -c ': claimed ' "$t_tmp/ga1.err"), ga2 $(grep -c ': claimed ' "$t_tmp/ga2.err")"

bad=
for i in 1 2 3; do
	id=gsw.0000$i
	s=$(ag_steps "$id")
	[ "$s" = "ok 20" ] || bad="$bad $id:$s"
	n=$(grep -c '^done ' "$t_tmp/wl/$id.log")
	[ "$n" = 1 ] || bad="$bad $id:done-$n-times"
	l=$("$QTOOL" lease "$ST" "$id" | awk '{print $1}')
	[ "$l" = succeeded ] || bad="$bad $id:lease-$l"
	c=$("$SPOTRUN" ls "$id" -s "$ST" 2>/dev/null | awk 'NR > 1' | wc -l | tr -d ' ')
	[ "$c" -ge 2 ] || bad="$bad $id:$c-checkpoints"
done
t_is "${bad:-none}" none \
    "every trial ran its steps 1..20 once each, finished once, its lease succeeded, 2 or more checkpoints in gs://"
# An attempt ends preempted, or, on a machine loaded past the 3 s lease's
# renewals, with its lease lost to the other agent (which then resumes it:
# the steps above stay once each); the agent says which.
lost=
for i in 1 2 3; do
	n=$(cat "$t_tmp/ga1.err" "$t_tmp/ga2.err" | grep -c "gsw.0000$i: lost its lease")
	lost="$lost gsw.0000$i=$n"
	[ "$n" = 0 ] || t_diag "gsw.0000$i lost its lease $n time(s)"
done
# The attempts are the agents' claims of the job, and at least those the
# job's log shows: on a loaded machine an attempt may end (its notice, or
# its lease taken over) before its job, an interpreter still starting,
# wrote its first line.
starts= claims=
for i in 1 2 3; do
	starts="$starts gsw.0000$i=$(grep -c '^start ' "$t_tmp/wl/gsw.0000$i.log")"
	claims="$claims gsw.0000$i=$(cat "$t_tmp/ga1.err" "$t_tmp/ga2.err" | grep -c "gsw.0000$i: claimed ")"
done
"$SPOTRUN" status --json --queue "$Q" > "$t_tmp/status.json" 2> "$t_tmp/status.err"
got=$($PY -c 'import json, sys
j = json.load(open(sys.argv[1]))
lost = dict(w.split("=") for w in sys.argv[2].split())
starts = dict(w.split("=") for w in sys.argv[3].split())
claims = dict(w.split("=") for w in sys.argv[4].split())
def att(x):
    s, c = int(starts[x["id"]]), int(claims[x["id"]])
    return "ok" if s <= x["attempts"] == c else "%d (log %d, claims %d)" % (x["attempts"], s, c)
print(" ".join("%s:%s:%s:%s" % (x["id"], x["state"], att(x),
    "ok" if x["preemptions"] >= x["attempts"] - 1 - int(lost.get(x["id"], 0))
    else x["preemptions"]) for x in j["jobs"]))' \
    "$t_tmp/status.json" "$lost" "$starts" "$claims" 2>&1)
want=
for i in 1 2 3; do
	want="$want gsw.0000$i:succeeded:ok:ok"
done
t_is "$got" "${want# }" \
    "spotrun status on gs://: every trial succeeded, its attempts its claims (no fewer than its log shows), each but the last preempted or its lease lost" ||
    t_show "$t_tmp/status.err"
grep -h ': claimed \|: released\|: succeeded' "$t_tmp/ga1.err" "$t_tmp/ga2.err" | sed 's/^/# /'

# a TTL whose renewals would come faster than gs:// takes writes: refused
# before any write, by the agent (exit 64) and by spotrun run (exit 65)
SPOTRUN_LEASE_TTL=2s "$SPOTRUN" agent --dir "$t_tmp/short.d" --queue "$Q" --once \
    > "$t_tmp/short.out" 2> "$t_tmp/short.err"
t_is "$?" 64 "SPOTRUN_LEASE_TTL=2s on a gs:// queue: the agent refuses it (exit 64)"
t_has "$t_tmp/short.err" "SPOTRUN_LEASE_TTL=2s: too short for $Q, which takes one write of an object every 1s, and the lease is renewed every TTL / 3: give 3s or more, or unset it for the default of 60s" \
    "... saying why and what to give"
printf '[job]\nname = short\ncommand = /bin/true\nworkdir = %s\n[checkpoint]\nstore = %s\nlocal_dir = %s/short-local\n[provider]\nname = local\n' \
    "$t_tmp" "$ST" "$t_tmp" > "$t_tmp/short.ini"
SPOTRUN_LEASE_TTL=2s "$SPOTRUN" run "$t_tmp/short.ini" > "$t_tmp/short-run.out" 2> "$t_tmp/short-run.err"
t_is "$?" 65 "... and spotrun run on a gs:// store (exit 65)" || t_show "$t_tmp/short-run.err"
t_has "$t_tmp/short-run.err" "SPOTRUN_LEASE_TTL=2s: too short for $ST, which takes one write" \
    "... with the same message"
t_is "$(grep -c '_leases/short' "$t_tmp/requests.log")" 0 "... and no lease written for it"

# the limit as the emulator answers it (curl's own SigV4): a second write of
# a name within a second is 429 with the XML API's SlowDown document, a write
# whose precondition fails is 412 whatever the rate, and a second later the
# name takes writes again
gput() {
	curl -s -o "$t_tmp/r.out" -w '%{http_code}' --aws-sigv4 "aws:amz:auto:s3" \
	    --user "$access:$secret" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@" \
	    "$ep/spotrun-fleet/rate/x"
}
m="exceeded the rate limit for object mutation operations (create, update, and delete). Please reduce your request rate. See https://cloud.google.com/storage/docs/gcs429."
codes="$(gput -X PUT --data-binary one) $(gput -X PUT --data-binary two)"
body=$(cat "$t_tmp/r.out")
codes="$codes $(gput -X PUT -H 'x-goog-if-generation-match: 0' --data-binary three)"
sleep 1.1
codes="$codes $(gput -X PUT --data-binary four) $(gput -X DELETE)"
sleep 1.1
codes="$codes $(gput -X DELETE)"
t_is "$codes" "200 429 412 200 429 204" \
    "gcsemu: PUT, PUT within a second 429, create-only over it 412, a second later PUT, DELETE 429, DELETE"
t_is "$body" "<?xml version='1.0' encoding='UTF-8'?><Error><Code>SlowDown</Code><Message>The object $m</Message><Details>The object spotrun-fleet/rate/x $m</Details></Error>" \
    "... the 429's body as GCS's XML API sends it"

# the request log against GCS's limit
kill "$emu" 2>/dev/null
t_wait "$emu"
$PY "$top_srcdir/tests/gcsemu.py" --check-log "$t_tmp/requests.log" --object-rate 1 \
    > "$t_tmp/check.txt" 2>&1
line=$(head -n 1 "$t_tmp/check.txt")
t_like "$t_tmp/check.txt" '^writes=[1-9][0-9]* refused=[0-9]+ unanswered=0 close=0$' \
    "no object changed twice within a second, every 429 retried until answered ($line)" ||
    t_show "$t_tmp/check.txt"
# refused writes by object: only where two processes wrote one name
$PY - "$t_tmp/requests.log" > "$t_tmp/refused.txt" 2> "$t_tmp/refused-lines.txt" <<'EOF'
import re, sys
kinds = {}
lines = open(sys.argv[1]).read().splitlines()
made = {}	# (path, generation) -> the line of the write that made it
for n, line in enumerate(lines):
    m = re.search(r" 200 x-goog-generation=([0-9]+)", line)
    if m:
        made[(line.split()[1].partition("?")[0], m.group(1))] = n
def fence(n, path):
    # a new holder's fence: its LATEST write refused for the write before
    # it (the last holder's commit), with no commit of its own between (a
    # commit puts its manifest's .json before LATEST, its .commit after)
    m = re.search(r"x-goog-if-generation-match=([0-9]+)", lines[n])
    i = made.get((path, m.group(1))) if m else None
    own = re.compile(r"PUT " + re.escape(path[:-len("LATEST")]) + r"manifests/[0-9]+\.json\S*( x-goog-if-generation-match=\S+)? 200 ")
    return i is not None and not any(own.match(l) for l in lines[i + 1:n])
for n, line in enumerate(lines):
    f = line.split()
    if " 429 " not in line:
        continue
    path = f[1].partition("?")[0]
    kind = (("fence" if fence(n, path) else "LATEST") if path.endswith("/LATEST") else
            "lease" if "/_leases/" in path else
            "index-delete" if "/q/index/" in path and f[0] == "DELETE" else
            "index" if "/q/index/" in path else "pending" if "/q/pending/" in path else
            "logs" if "/q/logs/" in path else "manifest" if "/manifests/" in path else
            "record" if "/attempts/" in path else "probe" if "/rate/" in path else "other")
    kinds[kind] = kinds.get(kind, 0) + 1
    if kind not in ("lease", "pending", "index-delete", "probe", "fence"):
        sys.stderr.write("refused: " + line + "\n")
print(" ".join("%s=%d" % kv for kv in sorted(kinds.items())) or "none")
EOF
refused=$(cat "$t_tmp/refused.txt")
t_diag "429s by object: $refused"
case " $refused " in
*" LATEST="* | *" index="* | *" logs="* | *" manifest="* | *" record="* | *" other="*)
	t_result 1 "LATEST's commits, status markers' puts, attempt records, log segments, manifests: never refused ($refused)"
	t_show "$t_tmp/refused-lines.txt" ;;
*)	t_result 0 "LATEST's commits, status markers' puts, attempt records, log segments, manifests: never refused (429s: $refused)" ;;
esac
t_unlike "$t_tmp/requests.log" ' (400|403|501) ' "no request refused as malformed, unsigned or unsupported"

t_done

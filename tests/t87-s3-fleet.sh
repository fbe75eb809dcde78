#!/bin/sh
# t87-s3-fleet.sh: the fleet end to end on s3:// (the Ceph RGW of
# build-aux/test-all), the queue and the checkpoints in one bucket:
#
# 1. A sweep of 20 trials (tests/jobs/workjob.py, 40 steps of 0.1 s, one
#    GPU each, a simulated preemption 2.5 s into every run) over 4 agents
#    with one fake GPU each, while every 3-5 s one of them is killed with
#    SIGKILL and another started in its place: every trial succeeds, once
#    (its lease and status succeeded, its list of steps 1..40 each once);
#    every attempt resumed from the checkpoint that was newest when it
#    started (read from the manifests of LATEST's chain), so no step of a
#    committed checkpoint ran again; the status adds up: attempts, and for
#    the trials no kill touched, preemptions and GPU-seconds against what
#    the job's log says ran.
# 2. 32 agents started together for one job: one runs it, once.
# 3. An agent stopped in the middle of a checkpoint past its lease: fenced
#    (the cases of tests/jobs/agent.sh, as t36 runs them on file://).
# 4. A queue in a bucket that does not exist: the agent (--once or not)
#    exits 74 with the reason, no retry.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/s3-env.sh"
t_setup
. "$top_srcdir/tests/jobs/agent.sh"
bucket=$(s3_bucket_new) || t_bail "cannot create a bucket on $SPOTRUN_TEST_S3_ENDPOINT"
trap 's3_bucket_rm "$bucket"; t_cleanup' EXIT
s3_spotrun_keys
ep=$SPOTRUN_TEST_S3_ENDPOINT
Q="s3://$bucket/q?endpoint=$ep"
ST="s3://$bucket/q/ckpt?endpoint=$ep"

# 1. the sweep
ag_spec "$t_tmp/trial.ini" 40 0.1 "after = 2500ms" "window = 4s" "preemptions = 1" \
    "[resources]" "gpus = 1"
"$QTOOL" add-many "$Q" sw 20 "$t_tmp/trial.ini" 1 1 || t_bail "qtool add-many failed"
n=0
live=
start_one() {
	n=$((n + 1))
	ag_start "fa$n" 1 --queue "$Q" --idle-timeout 6s -q
	live="$live fa$n:$t_last"
}
for i in 1 2 3 4; do start_one; done
kills=0
killed=
t_end=$(($(date +%s) + 150))
while :; do
	sleep "$(awk -v s="$$$kills" 'BEGIN { srand(s); printf "%.1f", 3 + 2 * rand() }')"
	done_n=$("$QTOOL" status "$Q" | awk '$2 == "succeeded"' | wc -l)
	[ "$done_n" -ge 20 ] && break
	[ "$(date +%s)" -ge "$t_end" ] && break
	[ "$kills" -ge 8 ] && continue
	# kill one agent that runs a job (its last claimed line has no end yet)
	victim=
	for e in $live; do
		nm=${e%%:*} pid=${e#*:}
		kill -0 "$pid" 2>/dev/null || continue
		last=$(grep -E ': (claimed|succeeded|failed|released|cancelled|lost)' "$t_tmp/$nm.err" | tail -n 1)
		case "$last" in *": claimed "*) victim=$e; break ;; esac
	done
	[ -n "$victim" ] || continue
	kill -KILL "${victim#*:}"
	kills=$((kills + 1))
	killed="$killed ${victim%%:*}"
	new=
	for e in $live; do [ "$e" = "$victim" ] || new="$new $e"; done
	live=$new
	start_one
done
for e in $live; do t_wait "${e#*:}"; done
t_diag "$kills agents killed:$killed"
"$QTOOL" status "$Q" > "$t_tmp/status.txt"
t_is "$(awk '$1 ~ /^sw\./ && $2 == "succeeded"' "$t_tmp/status.txt" | wc -l | tr -d ' ')" 20 \
    "every trial succeeded (status)" || t_show "$t_tmp/status.txt" 25
bad=
for i in $(seq -w 1 20); do
	id=sw.000$i
	s=$(ag_steps "$id")
	[ "$s" = "ok 40" ] || bad="$bad $id:$s"
	l=$("$QTOOL" lease "$ST" "$id" | awk '{print $1}')
	[ "$l" = succeeded ] || bad="$bad $id:lease-$l"
	"$SPOTRUN" ls "$id" -s "$ST" 2>/dev/null | awk 'NR > 1 {print $1}' > "$t_tmp/wl/$id.seqs"
	mkdir -p "$t_tmp/man/$id"
	s3_aws s3 sync --no-progress "s3://$bucket/q/ckpt/$id/manifests" "$t_tmp/man/$id" >/dev/null 2>&1
done
t_is "${bad:-none}" none "every trial's steps ran 1..40 once each, its lease succeeded"
t_result "$([ "$kills" -ge 3 ]; echo $?)" "... while $kills agents were killed with SIGKILL (at least 3)"
# the trial each killed agent was running (its last claim) lost its
# counts since its last status marker
touched=
for nm in $killed; do
	touched="$touched $(sed -nE 's/^spotrun agent: (sw\.[0-9]+): claimed .*/\1/p' "$t_tmp/$nm.err" | tail -n 1)"
done
t_diag "trials whose job ended twice (its last steps after its last checkpoint ran again):" \
    "$(grep -c '^done ' "$t_tmp"/wl/sw.*.log | awk -F: '$2 > 1 {print $1}' | xargs -r -n1 basename | tr '\n' ' ')"
$PY - "$t_tmp" "$kills" $touched > "$t_tmp/check.txt" 2>&1 <<'EOF'
import json, os, sys
tmp, kills, touched = sys.argv[1], int(sys.argv[2]), set(sys.argv[3:])
status = {}
for line in open(os.path.join(tmp, "status.txt")):
    f = line.split()
    status[f[0]] = {"attempts": int(f[3]), "preemptions": int(f[4]), "used": int(f[5]),
                    "lost": int(f[6])}
bad_resume, bad_status, starts_all, attempts_all, gaps = [], [], 0, 0, []
for i in range(1, 21):
    id = "sw.%05d" % i
    seqs = [l.strip() for l in open(os.path.join(tmp, "wl", id + ".seqs")) if l.strip()]
    committed = []
    for s in seqs:
        m = json.load(open(os.path.join(tmp, "man", id, "%010d.json" % int(s))))
        committed.append((m["created"], m["step"]))
    runs = {}          # pid -> [start, last time]
    starts, done = [], set()
    for line in open(os.path.join(tmp, "wl", id + ".log")):
        f = line.split()
        if f[0] == "start":
            t, k, pid = float(f[1]), int(f[2]), f[3]
            starts.append((t, k))
            runs[pid] = [t, t]
        elif f[0] in ("step", "ckpt"):
            runs[f[3]][1] = float(f[2])
        elif f[0] == "done":
            runs[f[2]][1] = float(f[1])
            done.add(f[2])
    # In a trial no kill touched, every run but the last was preempted,
    # whether or not it answered the notice (on a loaded machine some
    # notices come before the job's first step), and the last was not: one
    # that answered its notice at its last step and exited 0 on its own is
    # done ("finished exit 0", 0 preemptions). A run may write its "done"
    # line and still be preempted: stopped at the window's end before it
    # exited (seen at load 12: two "done" lines, the second run's resumed
    # from the notice's checkpoint), so "done" does not decide it.
    notices = max(len(runs) - 1, 0)
    for t, k in starts:
        want = max([st for c, st in committed if c < t], default=0)
        if k != want:
            bad_resume.append("%s: an attempt at %.3f resumed after step %d, the newest "
                              "checkpoint then was step %d" % (id, t, k, want))
    st = status[id]
    starts_all += len(starts)
    attempts_all += st["attempts"]
    if id in touched:
        continue
    ran = sum(b - a for a, b in runs.values())
    gaps.append((st["used"] - ran) / max(len(starts), 1))
    if st["attempts"] != len(starts) or st["preemptions"] != notices or \
            not (ran - 1 <= st["used"] <= ran + 2 * len(starts) + 1) or st["lost"] > st["used"]:
        bad_status.append("%s: status %s, the log: %d attempts, %d notices, %.1f s run" %
                          (id, st, len(starts), notices, ran))
print("resume:", "ok" if not bad_resume else "; ".join(bad_resume))
print("status:", "ok" if not bad_status else "; ".join(bad_status))
print("attempts:", "ok" if abs(attempts_all - starts_all) <= kills else
      "status %d, the logs %d, kills %d" % (attempts_all, starts_all, kills))
print("gap: the status's GPU-seconds less the logs', per attempt: %.1f to %.1f s" %
      (min(gaps, default=0), max(gaps, default=0)))
print("untouched:", 20 - len(touched & set("sw.%05d" % i for i in range(1, 21))))
EOF
t_is "$(sed -n 's/^resume: //p' "$t_tmp/check.txt")" ok \
    "every attempt resumed from the newest committed checkpoint: no step of one ran again" ||
    t_show "$t_tmp/check.txt"
t_diag "$(sed -n 's/^gap: //p' "$t_tmp/check.txt")"
t_is "$(sed -n 's/^attempts: //p' "$t_tmp/check.txt")" ok \
    "the attempts in the status add up to those the jobs' logs show (within one per kill)"
t_is "$(sed -n 's/^status: //p' "$t_tmp/check.txt")" ok \
    "for the $(sed -n 's/^untouched: //p' "$t_tmp/check.txt") trials no kill touched: attempts, preemptions and GPU-seconds as the logs say"

# 2. and 3.
ag_race "s3://$bucket/race?endpoint=$ep" s3
ag_fenced "s3://$bucket/fence?endpoint=$ep" "s3://$bucket/fence/ckpt?endpoint=$ep" s3
# 4. a bucket that does not exist: a permanent error, exit 74 at once
for once in --once ""; do
	ag_run_bounded nob 0 --queue "s3://$bucket-none/q?endpoint=$ep" $once
	t_is "$t_rc" 74 "a queue in a bucket that does not exist (${once:-no --once}): exit 74" ||
	    t_show "$t_tmp/nob.err"
	t_like "$t_tmp/nob.err" "^spotrun agent: .*bucket $bucket-none does not exist \\(create it, .*\\(a permanent error: the agent stops\\)\$" \
	    "... saying why" || t_show "$t_tmp/nob.err"
done
t_done

#!/bin/sh
# fleet.sh: the fleet at scale (issue 11), on loopback against Ceph RGW
# (tests/rgw.sh, started here in a temporary directory and stopped at exit),
# the queue and the checkpoints in one bucket. Measured:
#
#  submit:   `spotrun submit` of a sweep of BENCH_FLEET_JOBS trials (default
#            10,000), each `echo ${i} >> done.txt`: seconds, jobs a second;
#  run:      BENCH_FLEET_AGENTS agent processes (default 50, `spotrun agent
#            --once`) until the queue is drained: every job done exactly
#            once (done.txt holds each trial's number once; the status
#            says 10,000 succeeded in 10,000 attempts), claims a second
#            over the whole run, and the requests of each claim, from the
#            agents' lines (`claimed (epoch 1, N requests)`): their mean,
#            the share with 3, the largest;
#  uncontended: one agent alone on BENCH_FLEET_SOLO jobs (default 200): the
#            requests of its claims (target <= 3);
#  takeover: an agent killed with SIGKILL while it runs a job, another
#            agent of "another machine" (--label host=...) waiting: the
#            seconds from the dead lease's expiry to the new claim (the
#            lease's own "claimed"), and to the job's start, with a 5 s TTL,
#            BENCH_FLEET_TAKEOVERS times (default 3; target <= 1 s);
#  status:   `spotrun status --json` over all the jobs: seconds (target
#            <= 5 s), requests, peak RSS;
#  memory:   the peak RSS of the agents (the largest) and of status;
#  load:     during the run, RGW's requests (its log's "req done" lines) per
#            job and a second, by method, and the CPU seconds of RGW
#            (radosgw, ceph-osd, ceph-mon) against those of the agents and
#            their jobs: what limits the figures on a machine that runs both.
#
# The figures go to stdout, with the machine; doc/benchmarks.md has them.
# Without radosgw or the aws CLI it says so and skips (exit 0).
set -eu
: "${top_builddir:=.}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$top_srcdir/bench/lib.sh"
: "${SPOTRUN:=$top_builddir/spotrun}"
PY=/usr/bin/python3
N=${BENCH_FLEET_JOBS:-10000}
A=${BENCH_FLEET_AGENTS:-50}
SOLO=${BENCH_FLEET_SOLO:-200}
TAKEOVERS=${BENCH_FLEET_TAKEOVERS:-3}
for c in radosgw aws /usr/bin/time; do
	command -v "$c" >/dev/null 2>&1 || { echo "fleet.sh: no $c: skipped"; exit 0; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-fleet.XXXXXX")
pids=
trap 'for p in $pids; do kill -KILL "$p" 2>/dev/null || :; done; sh "$top_srcdir/tests/rgw.sh" stop "$tmp/rgw" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
sh "$top_srcdir/tests/rgw.sh" start "$tmp/rgw" >"$tmp/rgw-start.out" 2>&1 ||
    { cat "$tmp/rgw-start.out" >&2; echo "fleet.sh: could not start RGW" >&2; exit 1; }
. "$tmp/rgw/env"
SPOTRUN_TEST_REQUIRE_S3=1
. "$top_srcdir/tests/s3-env.sh"
. "$top_srcdir/tests/jobs/no-cloud.sh"
s3_spotrun_keys
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data"
unset SPOTRUN_QUEUE SPOTRUN_LEASE_TTL 2>/dev/null || true
mkdir -p "$HOME"
ep=$SPOTRUN_TEST_S3_ENDPOINT
bucket=$(s3_bucket_new)
echo "machine: $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)),"\
    "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM, $(uname -sr);"\
    "$(radosgw --version 2>/dev/null | awk '{print "ceph " $3}') (memstore OSD) on the same CPUs"
echo "command: make bench (bench/fleet.sh), BENCH_FLEET_JOBS=$N BENCH_FLEET_AGENTS=$A"

# rss_and_secs FILE: "MAXRSS_KIB SECONDS" written by /usr/bin/time -f "%M %e"
# requests LOGS...: the requests of each claim in the agents' lines
requests() {
	sed -nE 's/^spotrun agent: [^ ]+: claimed \(epoch [0-9]+(, taken over)?, ([0-9]+) requests\).*/\2/p' "$@"
}
# summary: mean, share equal to 3, max of numbers on stdin
summary() {
	awk '{ n++; s += $1; if ($1 == 3) t++; if ($1 > m) m = $1 }
	END { if (n == 0) print "none"; else printf "%d claims: mean %.2f, %.1f%% in 3, at most %d\n", n, s / n, 100 * t / n, m }'
}

# ---- submit ----
Q="s3://$bucket/q?endpoint=$ep"
printf '[job]\nname = fb\nshell = yes\ncommand = echo ${i} >> %s/done.txt\n[provider]\nname = local\n[sweep]\ni = 1..%d\n' \
    "$tmp" "$N" > "$tmp/sweep.ini"
t0=$(now)
"$SPOTRUN" submit --queue "$Q" "$tmp/sweep.ini" > "$tmp/submit.out" 2> "$tmp/submit.err" ||
    { tail -n 5 "$tmp/submit.err" >&2; exit 1; }
t1=$(now)
echo "submit: $N jobs in $(secs "$t0" "$t1" | awk '{printf "%.1f", $1}') s ($(awk -v n="$N" -v s="$(secs "$t0" "$t1")" 'BEGIN { printf "%.0f", n / s }') jobs/s)"

# cpu PIDFILES...: user + system seconds of the processes so far
cpu() {
	cat "$@" | while read -r p; do cat "/proc/$p/stat" 2>/dev/null; done |
	    awk -v hz="$(getconf CLK_TCK)" '{ s += $14 + $15 } END { printf "%.1f", s / hz }'
}
rgwlog=$tmp/rgw/log/client.rgw.a.log
reqs() { grep -c '====== req done' "$rgwlog" 2>/dev/null || echo 0; }

# ---- run: A agents until the queue is drained ----
r0=$(reqs)
l0=$(wc -l < "$rgwlog")
c0=$(cpu "$tmp/rgw/rgw.pid" "$tmp/rgw/osd.pid" "$tmp/rgw/mon.pid")
t0=$(now)
i=0
while [ $i -lt "$A" ]; do
	/usr/bin/time -f "%M %e %U %S" -o "$tmp/a$i.time" "$SPOTRUN" agent --queue "$Q" --once -q \
	    --dir "$tmp/a$i" > "$tmp/a$i.out" 2> "$tmp/a$i.err" &
	pids="$pids $!"
	i=$((i + 1))
done
for p in $pids; do wait "$p" || true; done
pids=
t1=$(now)
wall=$(secs "$t0" "$t1")
c1=$(cpu "$tmp/rgw/rgw.pid" "$tmp/rgw/osd.pid" "$tmp/rgw/mon.pid")
r1=$(reqs)
done_n=$(sort -n "$tmp/done.txt" | uniq | wc -l)
dup=$(sort -n "$tmp/done.txt" | uniq -d | wc -l)
lines=$(wc -l < "$tmp/done.txt")
echo "run: $N jobs over $A agents in $(awk -v s="$wall" 'BEGIN { printf "%.1f", s }') s:" \
    "$(awk -v n="$N" -v s="$wall" 'BEGIN { printf "%.1f", n / s }') claims/s (each a whole run: lease, fence, restore, the job, status, log, end)"
echo "exactly once: $done_n of $N jobs ran, $lines runs, $dup ran twice"
requests "$tmp"/a*.err | summary | sed "s/^/requests per claim, $A agents (contended): /"
tail -n "+$((l0 + 1))" "$rgwlog" | sed -nE 's/.*beast: .*"([A-Z]+) ([^ ]*) HTTP.*/\1 \2/p' |
    awk -v n="$N" -v t="$wall" -v all="$((r1 - r0))" '
	{ k = $1; if ($1 == "GET" && $2 ~ /[?&](list-type|prefix)=/) k = "LIST"; c[k]++ }
	END { printf "RGW during the run: %d requests, %.1f a job, %.0f a second (", all, all / n, all / t
	      sep = ""; for (k in c) { printf "%s%s %.1f", sep, k, c[k] / n; sep = ", " } print " a job)" }'
agents_cpu=$(cat "$tmp"/a*.time | awk '{ s += $3 + $4 } END { printf "%.1f", s }')
echo "CPU during the run: RGW $(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.1f", b - a }') s," \
    "the agents and their jobs $agents_cpu s, of $(awk -v w="$wall" -v n="$(nproc)" 'BEGIN { printf "%.0f", w * n }') s of $(nproc) CPUs" \
    "(load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
echo "agent peak RSS: $(cat "$tmp"/a*.time | awk '{ if ($1 > m) m = $1 } END { printf "%.1f MiB", m / 1024 }')" \
    "(the largest of $A; median $(cat "$tmp"/a*.time | sort -n | awk '{ v[NR] = $1 } END { printf "%.1f MiB", v[int((NR + 1) / 2)] / 1024 }'))"

# ---- status over all the jobs ----
/usr/bin/time -f "%M %e" -o "$tmp/status.time" "$SPOTRUN" status --queue "$Q" --json > "$tmp/status.json" 2> "$tmp/status.err"
$PY - "$tmp/status.json" "$tmp/status.time" "$N" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
rss, secs = open(sys.argv[2]).read().split()[-2:]
t = s["totals"]
print("status: %d jobs (%d succeeded, %d attempts) in %s s, %d requests (%d lists, %d GETs), "
      "peak RSS %.1f MiB" % (t["jobs"], t["states"]["succeeded"], t["attempts"], secs,
      s["requests"]["total"], s["requests"]["lists"], s["requests"]["gets"], int(rss) / 1024))
ok = t["jobs"] == int(sys.argv[3]) and t["states"]["succeeded"] == t["jobs"] and \
    t["attempts"] == t["jobs"]
print("status adds up:", "yes" if ok else "NO")
EOF

# ---- uncontended: one agent alone ----
Q1="s3://$bucket/solo?endpoint=$ep"
printf '[job]\nname = fs\ncommand = true\n[provider]\nname = local\n[sweep]\ni = 1..%d\n' "$SOLO" > "$tmp/solo.ini"
"$SPOTRUN" submit --queue "$Q1" "$tmp/solo.ini" > /dev/null 2>&1
t0=$(now)
"$SPOTRUN" agent --queue "$Q1" --once -q --dir "$tmp/solo" > /dev/null 2> "$tmp/solo.err"
t1=$(now)
requests "$tmp/solo.err" | summary | sed 's/^/requests per claim, 1 agent (uncontended): /'
echo "one agent: $(awk -v n="$SOLO" -v s="$(secs "$t0" "$t1")" 'BEGIN { printf "%.1f", n / s }') jobs/s"

# ---- takeover after a killed agent ----
export SPOTRUN_LEASE_TTL=5s
k=1
while [ $k -le "$TAKEOVERS" ]; do
	Qk="s3://$bucket/take$k?endpoint=$ep"
	printf '[job]\nname = ft%d\nshell = yes\ncommand = date +%%s.%%N >> %s/ft%d.start; exec sleep 60\n[provider]\nname = local\n' \
	    "$k" "$tmp" "$k" > "$tmp/ft$k.ini"
	"$SPOTRUN" submit --queue "$Qk" "$tmp/ft$k.ini" > /dev/null 2>&1
	"$SPOTRUN" agent --queue "$Qk" --label host=bench-a --dir "$tmp/ta$k" -q > /dev/null 2> "$tmp/ta$k.err" &
	a=$!
	pids="$pids $a"
	while [ ! -s "$tmp/ft$k.start" ]; do sleep 0.05; done
	sleep 1
	kill -KILL "$a"
	wait "$a" 2>/dev/null || true
	dead=$(s3_aws s3 cp "s3://$bucket/take$k/ckpt/_leases/ft$k" - 2>/dev/null)
	"$SPOTRUN" agent --queue "$Qk" --label host=bench-b --dir "$tmp/tb$k" -q --max-jobs 1 \
	    > /dev/null 2> "$tmp/tb$k.err" &
	b=$!
	pids="$pids $b"
	while [ "$(wc -l < "$tmp/ft$k.start")" -lt 2 ]; do sleep 0.05; done
	kill -TERM "$b" 2>/dev/null || true
	wait "$b" 2>/dev/null || true
	new=$(s3_aws s3 cp "s3://$bucket/take$k/ckpt/_leases/ft$k" - 2>/dev/null)
	$PY - "$dead" "$new" "$(tail -n 1 "$tmp/ft$k.start")" <<'EOF'
import json, sys
dead, new, start = json.loads(sys.argv[1]), json.loads(sys.argv[2]), float(sys.argv[3])
print("takeover: lease expired at +0, claimed at +%.3f s, the job started at +%.3f s (epoch %d -> %d)"
      % (new["claimed"] - dead["expires"], start - dead["expires"], dead["epoch"], new["epoch"]))
EOF
	pids=
	k=$((k + 1))
done

#!/bin/sh
# t36-lease-clock.sh: lease expiry does not rest on any machine's wall
# clock (doc/fleet.md, "Clocks"). Agents on a file:// queue with a 3 s
# lease TTL, each "another machine" by its --label host, some of them
# under libfaketime (Debian's faketime) with a clock 20 s or 5 min fast or
# 20 s slow. Two agents hold a job each (sk1, sk2), renewing every second:
#
# 1. While they renew, no fast claimer takes a job: an agent --once 5 min
#    fast and one 20 s fast (each waits for the leases it sees to be
#    renewed, then ends with no job), a `spotrun run` of sk1 20 s fast (it
#    watches the lease, sees it renewed: exit 69), and a long-running
#    agent 20 s fast that scans for expired leases through 2 TTLs.
# 2. The first holder killed (SIGKILL, no release): the fast agent takes
#    sk1 over within the bound of doc/fleet.md (TTL + TTL / 3 after its
#    last renewal: 4 s; 15 s allowed on a loaded machine, under the 20 s
#    by which a wall-clock judgement would be early or late).
# 3. A slow agent (20 s behind) leaves sk2 alone while its holder renews;
#    once the holder is killed it takes sk2 over within the same bound
#    (a wall-clock judgement would wait 20 s more). The takers, stopped,
#    release the jobs at epoch 2.
#
# Each faketime'd process is bounded (`timeout`, or killed after 150 s):
# clang's ASan runtime can deadlock at its start under libfaketime; that
# then fails, not hangs.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
. "$top_srcdir/tests/jobs/agent.sh"
Q=file://$t_tmp/q

if ! command -v faketime > /dev/null 2>&1; then
	t_skip_all "no faketime (build-aux/install-deps installs it)"
fi
# An ASan build wants its runtime first; libfaketime comes first here.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
export ASAN_OPTIONS
ft_lib=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -n 1)
[ -n "$ft_lib" ] || t_skip_all "no libfaketime.so.1 under /usr/lib/*/faketime/"
# clang's AddressSanitizer runtime (linked into the program) calls
# clock_gettime while it starts, before libfaketime has its own pointers:
# libfaketime says so and the process deadlocks, whatever spotrun would do
# (t85 probes the same). The gcc builds, sanitized or not, run this test.
timeout 60 env LD_PRELOAD="$ft_lib${LD_PRELOAD:+:$LD_PRELOAD}" FAKETIME=+20s \
    "$SPOTRUN" --version > "$t_tmp/probe.out" 2>&1
[ $? = 124 ] && grep -q 'libfaketime: Unexpected recursive calls' "$t_tmp/probe.out" &&
	t_skip_all "libfaketime deadlocks in this build's sanitizer start (clang ASan: $(head -n 1 "$t_tmp/probe.out"))"
ahead=$(env LD_PRELOAD="$ft_lib" FAKETIME=+20s date +%s)
t_result "$([ $((ahead - $(date +%s))) -ge 19 ]; echo $?)" \
    "libfaketime with FAKETIME=+20s moves a process's clock 20 s ahead"

# sk_start NAME SKEW ARGS...: an agent of machine NAME whose clock is SKEW
# off (libfaketime's FAKETIME offset; "" for none), in the background; its
# pid (spotrun's own: cleanup kills it) in $t_last. One that has not ended
# after 150 s is killed: a start deadlocked under libfaketime fails.
sk_start() {
	_n=$1 _s=$2
	shift 2
	if [ -z "$_s" ]; then
		ag_start "$_n" 0 --label "host=$_n" "$@"
		return
	fi
	t_bg "$_n" env FAKE_NVML_GPUS=0 SPOTRUN_GPU_LOCK_DIR="$t_tmp/$_n.gpus" \
	    LD_PRELOAD="$ft_lib${LD_PRELOAD:+:$LD_PRELOAD}" FAKETIME="$_s" \
	    "$SPOTRUN" agent --dir "$t_tmp/$_n.d" --label "host=$_n" "$@"
	_p=$t_last
	( sleep 150; kill -KILL "$_p" ) > /dev/null 2>&1 &
	t_pids="$t_pids $!"
	t_last=$_p
}

# secs_since T0: seconds since T0 (date +%s.%N), to the tenth
secs_since() {
	awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
}

# ---- two holders ----
for j in sk1 sk2; do
	ag_spec "$t_tmp/$j.ini" 3000 0.05
	"$QTOOL" add "$Q" "$j" "$t_tmp/$j.ini" || t_bail "qtool add failed"
done
sk_start hold1 "" --queue "$Q" --max-jobs 1
h1=$t_last
wait_for "$t_tmp/hold1.err" ": sk[12]: claimed \\(epoch 1" 30 "$h1" || t_diag "hold1 claimed nothing"
sk_start hold2 "" --queue "$Q" --max-jobs 1
h2=$t_last
wait_for "$t_tmp/hold2.err" ": sk[12]: claimed \\(epoch 1" 30 "$h2" || t_diag "hold2 claimed nothing"
j1=$(sed -nE 's/^spotrun agent: (sk[12]): claimed .*/\1/p' "$t_tmp/hold1.err")
j2=$(sed -nE 's/^spotrun agent: (sk[12]): claimed .*/\1/p' "$t_tmp/hold2.err")
t_is "$(printf '%s\n' "$j1" "$j2" | sort | tr '\n' ' ')" "sk1 sk2 " "two agents hold a job each"
wait_for "$t_tmp/wl/$j1.log" '^step 5 ' 30 "$h1" || t_diag "$j1 did not start"
wait_for "$t_tmp/wl/$j2.log" '^step 5 ' 30 "$h2" || t_diag "$j2 did not start"

# ---- 1. fast claimers leave live leases alone ----
for s in 5m 20s; do
	sk_start "once-$s" "+$s" --queue "$Q" --once
	t_wait "$t_last"
	t_is "$t_rc|$(grep -c 'claimed' "$t_tmp/once-$s.err")" "0|0" \
	    "an agent --once whose clock is $s ahead takes no live lease and ends" ||
	    t_show "$t_tmp/once-$s.err"
done
lr=$t_tmp/run-$j1
printf '[job]\nname = %s\ncommand = /bin/true\n[checkpoint]\nstore = %s/ckpt\nlocal_dir = %s\n[provider]\nname = local\n' \
    "$j1" "$Q" "$lr" > "$lr.ini"
timeout 150 faketime -f '+20s' "$SPOTRUN" run "$lr.ini" > "$lr.out" 2> "$lr.err"
t_is "$?" 69 "spotrun run of a held job, its clock 20 s ahead: refused (69), not taken over" ||
    t_show "$lr.err"
t_like "$lr.err" "^spotrun: run $j1: not started: its lease in .* is held by hold1-$h1 \\(host hold1, " \
    "... naming the holder"
sk_start fast +20s --queue "$Q" --max-jobs 1
f=$t_last
sleep 6		# two TTLs: six scans for expired leases
t_is "$(grep -c 'claimed' "$t_tmp/fast.err")" 0 \
    "an agent 20 s ahead, scanning through 2 TTLs, takes no live lease" || t_show "$t_tmp/fast.err"
t_is "$("$QTOOL" lease "$Q/ckpt" "$j1" | awk '{print $1, $2}')|$("$QTOOL" lease "$Q/ckpt" "$j2" | awk '{print $1, $2}')" \
    "running 1|running 1" "... both leases are still their holders' (epoch 1)"

# taken_over HOLDER NAME PID JOB SKEW TAIL: kill -9 the holder of JOB; the
# agent NAME (PID, its clock SKEW) takes JOB over within the bound.
taken_over() {
	kill -KILL "$1"
	_t0=$(date +%s.%N)
	t_wait "$1"
	wait_for "$t_tmp/$2.err" "^spotrun agent: $4: claimed \\(epoch 2, taken over" 60 "$3"
	_took=$(secs_since "$_t0")
	t_has "$t_tmp/$2.err" "spotrun agent: $4: claimed (epoch 2, taken over" \
	    "the holder killed: the agent $5 takes $4 over" || t_show "$t_tmp/$2.err"
	t_result "$(awk -v t="$_took" 'BEGIN { exit !(t < 15) }'; echo $?)" \
	    "... $_took s after the kill: within TTL + TTL / 3 of its last renewal (4 s; 15 s allowed)$6"
}

# ---- 2. the first holder dies: the fast agent takes its job within the bound ----
taken_over "$h1" fast "$f" "$j1" "20 s ahead" ""

# ---- 3. a slow agent: not early, not late ----
sk_start slow -20s --queue "$Q" --max-jobs 1
s=$t_last
sleep 6
t_is "$(grep -c 'claimed' "$t_tmp/slow.err")" 0 \
    "an agent 20 s behind takes no live lease through 2 TTLs" || t_show "$t_tmp/slow.err"
taken_over "$h2" slow "$s" "$j2" "20 s behind" ", not 20 s late"

# the takers stop (SIGTERM: checkpoint, release): the leases are theirs
kill -TERM "$f" "$s"
t_wait "$f"
t_is "$t_rc" 143 "the fast agent stops on SIGTERM (143)" || t_show "$t_tmp/fast.err"
t_wait "$s"
t_is "$t_rc" 143 "the slow agent stops on SIGTERM (143)" || t_show "$t_tmp/slow.err"
t_is "$("$QTOOL" lease "$Q/ckpt" "$j1" | awk '{print $1, $2}')|$("$QTOOL" lease "$Q/ckpt" "$j2" | awk '{print $1, $2}')" \
    "released 2|released 2" "... each released its job at epoch 2"
t_done

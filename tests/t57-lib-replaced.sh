#!/bin/sh
# t57-lib-replaced.sh: library mode, a commit that answered a request a
# newer one replaced. The job (a shell stand-in for libspotrun, speaking
# its protocol: the request file, the done marker) leaves the periodic
# request unanswered, makes the local provider's notice (its notice_file)
# and waits until the notice's request replaces the periodic one, then
# answers the old request (as a library whose save was under way does),
# and, once the timeline shows that commit, the notice's. Both are in the
# store, so the timeline shows both and the run counts both; before,
# the first was dropped as "an older request's, written late" (6 shown,
# 7 committed).
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
cat > "$t_tmp/job.sh" <<'EOF'
T=$1
[ -e "$T/ran" ] && exit 0
: > "$T/ran"
seq_of() { sed -n 's/^seq=\([0-9]*\) .*/\1/p' "$SPOTRUN_CKPT_REQUEST" 2>/dev/null; }
# wait_until CMD...: at most 10 minutes, so a test that goes wrong fails
wait_until() { i=0; until "$@"; do sleep 0.05; i=$((i + 1)); [ $i -lt 12000 ] || exit 9; done; }
answer() {
	printf 'seq=%s step=%s checkpoint=%s raw=4096 stored=2048 new=2048 reused=0 seconds=0.100\n' \
	    "$1" "$2" "$3" > "$SPOTRUN_CKPT_DONE.t" && mv "$SPOTRUN_CKPT_DONE.t" "$SPOTRUN_CKPT_DONE"
}
asked() { s=$(seq_of); [ -n "$s" ] && [ "$s" != "$1" ]; }
wait_until asked none
first=$(seq_of)
echo "asked $first"
: > "$T/notice"		# the provider's notice, once the periodic request is seen
wait_until asked "$first"
second=$(seq_of)
echo "asked $second"
answer "$first" 5 1
wait_until [ -e "$T/go" ]
answer "$second" 6 2
wait_until false
EOF
cat > "$t_tmp/job.ini" <<EOF
[job]
name = replaced
command = /bin/sh $t_tmp/job.sh $t_tmp
[checkpoint]
mode = library
store = file://$t_tmp/store
local_dir = $t_tmp/local
interval = 1s
[provider]
name = local
notice_file = $t_tmp/notice
window = 3m
EOF
"$SPOTRUN" run "$t_tmp/job.ini" > "$t_tmp/out" 2> "$t_tmp/err" &
pid=$!
t_pids="$t_pids $pid"
wait_for "$t_tmp/err" "ckpt +1 step 5: .* committed by the job for request [0-9]+, which request [0-9]+ replaced in " 170 "$pid"
t_is "$?" 0 "the commit that answered the replaced request is on the timeline" || t_show "$t_tmp/err"
: > "$t_tmp/go"
t_wait "$pid"
t_is "$t_rc" 0 "the run ends (exit 0)" || t_show "$t_tmp/err"
first=$(sed -n 's/^asked //p' "$t_tmp/out" | head -n 1)
second=$(sed -n 's/^asked //p' "$t_tmp/out" | sed -n 2p)
t_is "$(grep -cE "ckpt +1 step 5: 4\.0 KiB -> 2\.0 KiB \(0\.50\), 2\.0 KiB new, committed by the job for request $first, which request $second replaced in " "$t_tmp/err")" 1 \
	"said once, with the request it answered and the one that replaced it" || t_show "$t_tmp/err"
t_is "$(grep -cE "ckpt +2 step 6: .* committed in " "$t_tmp/err")" 1 "the notice's commit follows" || t_show "$t_tmp/err"
t_is "$(grep -cE "finished +exit 0: 2 attempts, 1 preemption, .* 2 checkpoints" "$t_tmp/err")" 1 \
	"the run counts both checkpoints" || t_show "$t_tmp/err"
t_done

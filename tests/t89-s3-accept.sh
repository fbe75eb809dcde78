#!/bin/sh
# t89-s3-accept.sh: what the S3 acceptance run (issue 14, tried as a new user
# would) found, each against Ceph RGW with tests/faultproxy in between:
#
# a. Every request of the store, from `spotrun run` (multipart uploads
#    included) and `spotrun ls`, carries User-Agent: spotrun/VERSION, as
#    the server sees it (the proxy's header mode logs each request's).
# b. A LATEST without its newline, and a garbage one, put there with the
#    aws CLI: `spotrun ls` and the restore of `spotrun run` give
#    doc/format.md's warnings, exactly, naming the key.
# c. A failed save leaves no unfinished multipart upload: cancelled by the
#    user's second ^C in mid-upload (aborted at once), and with the store
#    gone in mid-upload, the abort too (owed, and aborted as soon as the
#    store answers: the next save). list-multipart-uploads shows none.
# d. A notice's checkpoint retries until its deadline: with the store down
#    for 4 s of the 20 s it commits; down past its deadline, it gives up at
#    the deadline (not before) saying how often it tried and what failed.
# e. The notice's retention (keep = 1) runs after its job is stopped, not
#    between the commit and the stop: with gc slowed (the fault point
#    ckpt-gc-list), the timeline's order is commit, stop, gc, retention,
#    the run's end; and the old checkpoint is deleted all the same.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/s3-env.sh"
. "$top_srcdir/tests/jobs/faults.sh"
t_setup
: "${top_builddir:=$(dirname "$SPOTRUN")}"

bucket=$(s3_bucket_new) || t_bail "cannot create a bucket on $SPOTRUN_TEST_S3_ENDPOINT"
px=
trap '[ -n "$px" ] && kill "$px" 2>/dev/null; s3_bucket_rm "$bucket"; t_cleanup' EXIT
s3_spotrun_keys

# px_up [PORT]: start the proxy (again, on PORT: the gateway back);
# px_down: kill it: every connection cut, new ones refused (the gateway gone).
px_up() {
	rm -f "$t_tmp/px.port"
	"$top_builddir/tests/faultproxy" -p "$t_tmp/px.port" ${1:+-P "$1"} \
		-t "${SPOTRUN_TEST_S3_ENDPOINT#http://}" -c "$t_tmp/control" -l "$t_tmp/proxy.log" &
	px=$!
	wait_for "$t_tmp/px.port" '^[0-9]+$' 5 "$px" || t_bail "tests/faultproxy did not start (make first?)"
}
px_down() {
	kill "$px"
	wait "$px" 2>/dev/null
	px=
}
px_up
pport=$(cat "$t_tmp/px.port")
pep=http://127.0.0.1:$pport
job="$PY $top_srcdir/tests/jobs/chainjob.py"
COMMIT='^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed'

# mk_ini FILE NAME COMMAND URL-OPTIONS PROVIDER [KEY=VALUE in [checkpoint]...]
mk_ini() {
	_f=$1 _n=$2 _c=$3 _o=$4 _p=$5
	shift 5
	t_pidjob "$_f" "$_n" "s3://$bucket/jobs?endpoint=$pep&part_size=5MiB&concurrency=4&stall_timeout=2$_o" \
	    "$_c" "$_p" "" "$@"
}

# uploads: the keys of the bucket's unfinished multipart uploads, one a line.
uploads() {
	s3_aws s3api list-multipart-uploads --bucket "$bucket" --query 'Uploads[].Key' \
		--output text 2>/dev/null | tr '\t' '\n' | grep -v '^None$' | grep .
}

# ---- a: User-Agent ----
ua="spotrun/$("$SPOTRUN" --version | sed 's/^spotrun //')"
fault "header name=User-Agent"
ini=$t_tmp/a.ini
mk_ini "$ini" ua "$job --steps 30 --sleep 0.05 --size 12582912" "" local interval=1s
"$SPOTRUN" run "$ini" > "$t_tmp/a.out" 2> "$t_tmp/a.err"
t_is "$?" 0 "a: a run through the proxy's header mode exits 0" || t_show "$t_tmp/a.err"
"$SPOTRUN" ls "$ini" > "$t_tmp/a-ls.out" 2>&1
t_is "$?" 0 "a: and spotrun ls" || t_show "$t_tmp/a-ls.out"
wait_plog '^conn [0-9]+: header User-Agent: ' 1 5
all=$(plog '^conn [0-9]+: header User-Agent of ')
t_is "$([ "$all" -gt 0 ] && echo some)|$(plog "^conn [0-9]+: header User-Agent of [A-Z]+ [^ ]+: $ua\$")" "some|$all" \
	"a: all $all requests the server saw had User-Agent: $ua" ||
	t_diag "$(grep 'header User-Agent of' "$t_tmp/proxy.log" | grep -v ": $ua\$" | head -n 3)"
t_result "$([ "$(plog '^conn [0-9]+: header User-Agent of PUT [^ ]*partNumber=')" -ge 3 ]; echo $?)" \
	"a: the multipart uploads' parts among them"
fault pass

# ---- b: LATEST without its newline, and garbage ----
printf '1' > "$t_tmp/L1"
s3_aws s3 cp --no-progress "$t_tmp/L1" "s3://$bucket/jobs/ua/LATEST" > /dev/null 2>&1
"$SPOTRUN" ls "$ini" > "$t_tmp/b1.out" 2> "$t_tmp/b1.err"
t_is "$?|$(head -n 1 "$t_tmp/b1.err")" \
	"0|spotrun: warning: ua/LATEST holds 1 without the newline that ends it: read as 1; the next save rewrites LATEST" \
	"b: ls on a LATEST of 1 without its newline: read as 1, with format.md's warning"
printf 'garbage\n' > "$t_tmp/L2"
s3_aws s3 cp --no-progress "$t_tmp/L2" "s3://$bucket/jobs/ua/LATEST" > /dev/null 2>&1
"$SPOTRUN" ls "$ini" > "$t_tmp/b2.out" 2> "$t_tmp/b2.err"
tail="every manifest counts as committed and the newest is the latest; the next save rewrites LATEST"
t_is "$?|$(cat "$t_tmp/b2.err")" \
	"0|spotrun: warning: ua/LATEST is not a checkpoint number (it holds \"garbage\\n\"): $tail" \
	"b: ls on a garbage LATEST: format.md's warning, naming the key and what it holds"
s3_aws s3 rm "s3://$bucket/jobs/ua/FINISHED" > /dev/null 2>&1
"$SPOTRUN" run "$ini" > "$t_tmp/b3.out" 2> "$t_tmp/b3.err"
t_is "$?|$(grep -c "^[0-9:]*  ckpt     warning: ua/LATEST is not a checkpoint number (it holds \"garbage\\\\n\"): $tail\$" "$t_tmp/b3.err")" \
	"0|1" "b: run: the restore says so once on the timeline" || t_show "$t_tmp/b3.err"
s3_aws s3 cp --no-progress "s3://$bucket/jobs/ua/LATEST" "$t_tmp/L3" > /dev/null 2>&1
t_like "$t_tmp/L3" '^[0-9]+ [0-9]+$' "b: and its lease and saves rewrote LATEST (SEQ EPOCH)"

# ---- c: no unfinished upload after a failed save ----
# c1: the second ^C cancels the save in mid-upload (1 MiB/s a connection:
# the 12 MiB take ~3 s).
ini=$t_tmp/c1.ini
mk_ini "$ini" cancel "$job --steps 100000 --sleep 0.05 --size 12582912" "" local interval=1s
fault "slow rate=1048576 count=all"
t_bg c1 "$SPOTRUN" run "$ini"
pid=$t_last
wait_count "$t_tmp/c1.err" '^[0-9:]+  request  periodic checkpoint' 1 30 "$pid"
sleep 1.5
kill -INT "$pid"; sleep 0.3; kill -INT "$pid"
wait_max "$pid" 30
t_is "$(grep -cE '^[0-9:]+  error    periodic checkpoint failed: .*: upload cancel/packs/[0-9]+-[0-9a-f]+\.tar: cancelled; the previous checkpoint stays the newest$' "$t_tmp/c1.err")|$(grep -cE "$COMMIT" "$t_tmp/c1.err")" \
	"1|0" "c1: the second ^C cancelled the save in mid-upload" || t_show "$t_tmp/c1.err"
fault pass
t_is "$(uploads)" "" "c1: list-multipart-uploads shows none: the cancelled upload was aborted"

# c2: every connection reset from mid-upload on, the abort's too; then the
# store answers again: the next save's upload aborts the owed one first.
ini=$t_tmp/c2.ini
mk_ini "$ini" gone "$job --steps 100000 --sleep 0.05 --size 12582912 --delay 0.5" "&attempts=2" \
	local interval=1s
fault "slow rate=1048576 count=all"
t_bg c2 "$SPOTRUN" run "$ini"
pid=$t_last
wait_count "$t_tmp/c2.err" '^[0-9:]+  request  periodic checkpoint' 1 30 "$pid"
sleep 2
fault "reset after=0 count=all"
wait_count "$t_tmp/c2.err" '^[0-9:]+  error    periodic checkpoint failed' 1 20 "$pid"
t_result $? "c2: the store gone in mid-upload: the save fails" || t_show "$t_tmp/c2.err"
kill -STOP "$pid"
fault pass
left=$(uploads)
t_result "$([ -n "$left" ]; echo $?)" "c2: its upload could not be aborted then (${left:-none left})"
kill -CONT "$pid"
wait_count "$t_tmp/c2.err" "$COMMIT" 1 30 "$pid"
t_result $? "c2: the next save commits once the store is back" || t_show "$t_tmp/c2.err"
kill -STOP "$pid"
t_is "$(uploads)" "" "c2: and the owed abort went first: list-multipart-uploads shows none"
kill -CONT "$pid"
kill -INT "$pid"
wait_max "$pid" 30

# ---- d: a notice's checkpoint retries until its deadline ----
# notice_down NAME GRACE: a job NAME of the signal provider (margin 2 s,
# grace GRACE), 1 MiB of state, the proxy killed (the store gone) just
# before its notice; leaves $ini and $pid.
notice_down() {
	ini=$t_tmp/$1.ini
	mk_ini "$ini" "$1" "$job --steps 100000 --sleep 0.05 --size 1048576" "&attempts=2" signal \
		margin=2s
	ini_set "$ini" provider grace "$2"
	t_bg "$1" "$SPOTRUN" run "$ini"
	pid=$t_last
	wait_for "$t_tmp/$1.out" '^step 10 |starting fresh' 20 "$pid"
	sleep 0.5
	px_down
	kill -TERM "$pid"
}

# d1: the store down when the notice comes, back 4 s later, well within
# the 20 s: the checkpoint commits.
notice_down notice 20s
sleep 4
px_up "$pport"
wait_max "$pid" 30
t_is "$t_rc|$(grep -cE "^[0-9:]+  ckpt     0 step [0-9]+: .* committed" "$t_tmp/notice.err")" "75|1" \
	"d1: the store back 4 s into a 20 s notice: the notice's checkpoint commits, exit 75" ||
	t_show "$t_tmp/notice.err"
t_like "$t_tmp/notice.err" '^[0-9:]+  ckpt     warning: checkpoint try 1 failed: .*Couldn.t connect to server.*; trying again until the deadline \([0-9.]+s left\)$' \
	"d1: the timeline says the first try failed and why, and that it tries again"

# d2: down for good: it gives up at the deadline (the notice's 8 s less
# the 2 s margin), with how often it tried and the last error.
notice_down notice2 8s
wait_max "$pid" 40
px_up "$pport"
t_is "$t_rc" 75 "d2: the store down past the deadline: exit 75" || t_show "$t_tmp/notice2.err"
t_like "$t_tmp/notice2.err" '^[0-9:]+  ckpt     notice checkpoint of notice2 missed its deadline after [0-9]+ tries, the store failing until then \(the last: .*\); nothing committed; the previous checkpoint stays the newest$' \
	"d2: it says it missed the deadline after N tries of a failing store, with the last error" ||
	t_show "$t_tmp/notice2.err"
# mm:ss of the notice and of the give-up: 6 s apart at least (the deadline)
gap=$(awk '/  notice   /{split($1,a,":"); n=a[1]*60+a[2]} /missed its deadline/{split($1,b,":"); print b[1]*60+b[2]-n}' "$t_tmp/notice2.err")
t_result "$([ -n "$gap" ] && [ "$gap" -ge 5 ]; echo $?)" \
	"d2: the give-up came at the deadline, ${gap:-?} s after the notice (6 s allowed; the retry count would stop in under 1 s)"

# ---- e: the notice's retention after the job's stop ----
ini=$t_tmp/e.ini
mk_ini "$ini" keep1 "$job --steps 100000 --sleep 0.05 --size 1048576" "" signal keep=1
ini_set "$ini" provider grace 20s
for r in 1 2; do
	SPOTRUN_FAULT=ckpt-gc-list:delay=1 t_bg "e$r" "$SPOTRUN" run "$ini"
	pid=$t_last
	wait_for "$t_tmp/e$r.out" '^(starting fresh|resumed from)' 20 "$pid"
	sleep 0.5
	kill -TERM "$pid"
	wait_max "$pid" 30
done
t_is "$t_rc" 75 "e: the second run's notice: exit 75" || t_show "$t_tmp/e2.err"
order=$(sed -nE -e 's/^[0-9:]+  ckpt     ([0-9]+) step [0-9]+: .* committed in .*/commit \1/p' \
	-e 's/^[0-9:]+  stop     checkpoint committed; SIGTERM to the job$/stop/p' \
	-e 's/^spotrun: fault injected at ckpt-gc-list: delaying 1 s$/gc/p' \
	-e 's/^[0-9:]+  ckpt     retention: kept 1 checkpoints, deleted .*/retention/p' \
	-e 's/^[0-9:]+  preempted exit 75: .*/end/p' "$t_tmp/e2.err" | tr '\n' ' ')
t_is "$order" "commit 1 stop gc retention end " \
	"e: the notice's commit and the job's stop, then gc and its retention, then the run's end" ||
	t_show "$t_tmp/e2.err"
t_is "$(timeout 60 "$SPOTRUN" ls "$ini" 2>&1 | grep -cE '^[0-9]+ +[0-9]+ ')" 1 \
	"e: keep = 1: one checkpoint left after the deferred retention"
t_done

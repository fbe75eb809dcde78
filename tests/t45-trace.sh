#!/bin/sh
# t45-trace.sh: the local provider's trace replay, from the job file to the
# run: `spotrun check` reads a trace it can read, so a trace_start past the
# trace's last up-period, or a file that is not a trace, is an error with
# the file, the line and the fix (exit 65) rather than an "ok" the run then
# belies; a trace not there yet is the run's to find, and the run, finding
# it missing, exits 65 (the job file's to fix) with the reason, not 70. A
# multi-node trace (values the nodes up) with fewer nodes than the gang may
# have is refused by check on the trace line.
set -u
. "$top_srcdir/tests/jobs/cloud.sh"
echo "1..9"

# One up-period, 10 s to 30 s, in a trace of 50 s.
printf '{"metadata": {"gap_seconds": 10}, "data": [0, 1, 1, 0, 0]}\n' >"$tmp/one.json"
printf '{"metadata": ' >"$tmp/bad.json"
# job NAME TRACE [START]: $tmp/NAME.ini, a short job replaying TRACE.
job() {
	printf '[job]\nname = %s\ncommand = /bin/sh -c "sleep 0.2"\n[checkpoint]\nstore = %s/store\nlocal_dir = %s/local-%s\n[provider]\nname = local\ntrace = %s\ntrace_scale = 100\n' \
		"$1" "$tmp" "$tmp" "$1" "$2" >"$tmp/$1.ini"
	[ -n "${3:-}" ] && echo "trace_start = $3" >>"$tmp/$1.ini"
	return 0
}

job inside one.json 25s
"$SPOTRUN" check "$tmp/inside.ini" >"$tmp/out" 2>"$tmp/err"
check "$?:$(cat "$tmp/out")" "65:" "check: trace_start inside the last up-period: exit 65, no ok"
check "$(cat "$tmp/err")" "$tmp/inside.ini:11: trace_start = 25s: inside the last up-period of trace $tmp/one.json (10 s to 30 s); no up-period starts at or after it; use a start time of at most 10 s, where the last one starts" \
	"check: the message names the file, the line, where the start lies and the fix"

job after one.json 40s
"$SPOTRUN" check "$tmp/after.ini" >"$tmp/out" 2>"$tmp/err"
check "$?:$(cat "$tmp/err")" "65:$tmp/after.ini:11: trace_start = 40s: after the last up-period of trace $tmp/one.json (10 s to 30 s); no up-period starts at or after it; use a start time of at most 10 s, where the last one starts" \
	"check: trace_start after the last up-period"

job badfile bad.json
"$SPOTRUN" check "$tmp/badfile.ini" >"$tmp/out" 2>"$tmp/err"
check "$?:$(cat "$tmp/err")" "65:$tmp/badfile.ini:9: trace = bad.json: load trace $tmp/bad.json: bad JSON at line 1, column 13: unexpected token near end of file" \
	"check: a trace that is not JSON, on the trace line"

job good one.json 10s
"$SPOTRUN" check "$tmp/good.ini" >"$tmp/out" 2>"$tmp/err"
check "$?:$(cat "$tmp/out")" "0:$tmp/good.ini: ok" "check: trace_start at the last up-period's start is fine"

# A gang replays a multi-node trace node by node (the format's 4-node
# traces count the nodes up, no "nodes" of their own): a gang of more
# nodes than the trace has is an error on the trace line; a one-node trace
# replays the same for each node.
printf '{"metadata": {"gap_seconds": 10}, "data": [0, 2, 2, 1, 0]}\n' >"$tmp/two.json"
job gang3 two.json
printf '[resources]\nnodes = 3\n' >>"$tmp/gang3.ini"
"$SPOTRUN" check "$tmp/gang3.ini" >"$tmp/out" 2>"$tmp/err"
check "$?:$(cat "$tmp/out")|$(cat "$tmp/err")" "65:|$tmp/gang3.ini:9: trace = two.json: load trace $tmp/two.json: node 3 is not in it: it has 2 nodes (the largest value of \"data\"); a gang replaying it may have at most that many" \
	"check: a 2-node trace for a gang of 3, on the trace line"
job gang2 two.json
printf '[resources]\nnodes = 2-3\n' >>"$tmp/gang2.ini"
job gang1 one.json
printf '[resources]\nnodes = 3\n' >>"$tmp/gang1.ini"
"$SPOTRUN" check "$tmp/gang2.ini" "$tmp/gang1.ini" >"$tmp/out" 2>"$tmp/err"
check "$?:$(cat "$tmp/out")|$(cat "$tmp/err")" "65:$tmp/gang1.ini: ok: a gang of 3 nodes|$tmp/gang2.ini:9: trace = two.json: load trace $tmp/two.json: node 3 is not in it: it has 2 nodes (the largest value of \"data\"); a gang replaying it may have at most that many" \
	"check: a gang of 2-3 may reach 3 nodes (refused); a one-node trace for a gang of 3 is fine"

# Not there yet: check cannot tell (the trace may come with the machine);
# the run finds it missing and exits 65, saying why.
job missing later.json 10s
"$SPOTRUN" check "$tmp/missing.ini" >"$tmp/out" 2>"$tmp/err"
check "$?:$(cat "$tmp/out")" "0:$tmp/missing.ini: ok" "check: a trace not there yet is left to the run"
"$SPOTRUN" run "$tmp/missing.ini" >"$tmp/out" 2>"$tmp/err"
check "$?:$(cat "$tmp/err")" "65:spotrun: create provider local: load trace $tmp/later.json: No such file or directory" \
	"run: the trace missing: exit 65 (not 70, an internal error) and the reason"

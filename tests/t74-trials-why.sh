#!/bin/sh
# t74-trials-why.sh: `spotrun status SWEEP` says why trials failed or wait
# (doc/spotrun.1, status; doc/fleet.md, "status SWEEP"), on a file:// queue:
# a sweep run by an agent in this process (submit --run-local) where one
# trial succeeds, one exits 1 after a Python-like traceback on stderr (and a
# line on stdout after it), one is killed by SIGKILL after a progress line
# redrawn with \r; beside it trial 4 needs 1xH100, which the one agent of
# the queue (a record under agents/) has not, and trial 5 runs under an
# agent that went silent 4 minutes ago (its marker from tests/fleet-helper,
# its lease's time set back). Checked exactly:
# 1. the 80-column table, ATT/P, with a note per trial under it (the exit
#    code and the last line of stderr, the signal and the last line of
#    stdout, the wait, the silent agent), cut to 80 columns and escaped;
# 2. --wide: PREEMPT, START (local time), GPU-HOURS, the notes whole;
# 3. --json: reason, exit_code and signal per trial, and started, seconds,
#    preemptions and gpu_seconds against the attempt records and markers;
# 4. colour: --color=always's escapes (state colours, the best row bold),
#    the same visible columns; auto on a terminal colours, NO_COLOR (not
#    empty) wins over auto, not over always; not a terminal: none; a bad
#    --color is refused (64).
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/jobs/fleet.sh"
t_setup
S=$SPOTRUN
T=$t_tmp
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config TZ=UTC
unset SPOTRUN_QUEUE NO_COLOR
mkdir -p "$HOME"
Q=$T/data/spotrun/queue
echo "1..16"

cat > "$T/tr.sh" <<'SH'
case $SPOTRUN_PARAM_MODE in
ok)	echo "step=1 loss=0.5" >> "$SPOTRUN_METRICS"
	echo "step=2 loss=0.25" >> "$SPOTRUN_METRICS" ;;
fail)	echo "step=1 loss=2" >> "$SPOTRUN_METRICS"
	echo "Traceback (most recent call last):" >&2
	echo '  File "train.py", line 3, in <module>' >&2
	printf 'ValueError: lr too large\033]0;x\007\n' >&2
	echo "cleaning up"
	exit 1 ;;
kill)	echo "step=1 loss=1" >> "$SPOTRUN_METRICS"
	printf 'loading shard 6\rloading shard 7\n'
	kill -KILL $$ ;;
esac
SH
printf '[job]\nname = tw\ncommand = /bin/sh %s/tr.sh\nship_workdir = no\n[sweep]\nmode = ok, fail, kill\n' \
	"$T" > "$T/tw.ini"
"$S" submit --create --run-local "$T/tw.ini" > "$T/sub.out" 2> "$T/sub.err"
t_is "$(grep -c '^spotrun agent: tw\.[123]: \(succeeded\|failed\) ' "$T/sub.err")|$(grep '^spotrun agent: ends:' "$T/sub.err")" \
	"3|spotrun agent: ends: 3 jobs (1 succeeded, 2 failed, 0 released, 0 cancelled, 0 lost)" \
	"the agent ran the three trials: one succeeded, two failed" || t_show "$T/sub.err"
printf '[job]\nname = tw.4\ncommand = /bin/true\nship_workdir = no\n[resources]\ngpus = 1\ngpu_type = H100\n' > "$T/t4.ini"
printf '[job]\nname = tw.5\ncommand = /bin/true\nship_workdir = no\n' > "$T/t5.ini"
run s "$S" submit "$T/t4.ini" "$T/t5.ini"
mkdir -p "$Q/agents" "$Q/ckpt/_leases"
printf '{"agent":"vm-a-1","host":"vm-a","time":%s,"gpu_nodes":0,"gpus":0,"gpu_type":"","no_driver":""}' "$(date +%s)" > "$Q/agents/vm-a-1"
"$H" status "file://$Q" tw.5 running 3 2 1 7200 360 1.5 4.25 -1 vm-b
: > "$Q/ckpt/_leases/tw.5"
touch -d '-250 seconds' "$Q/ckpt/_leases/tw.5"
t_is "$rc|$(ls "$Q/index" | sed 's/~.*//' | tr '\n' ' ')" "0|tw.1 tw.2 tw.3 tw.4 tw.5 " \
	"trial 4 (1xH100) and 5 queued beside them, 5 marked running"

# --- 1. 80 columns ------------------------------------------------------------
# the time run masked: a second or two, at any load
mask() { sed -E 's/([0-9]\/[0-9]+) +([0-9]+s|-) /\1 TIME /'; }
run st "$S" status tw
t_is "$rc|$(mask < "$T/st.out")|$(cat "$T/st.err")" "0|sweep tw: 5 trials, metric loss (smallest is best)
TRIAL  mode STATE     ATT/P    TIME     COST      LAST      BEST CURVE
1      ok   succeeded   1/0 TIME    \$0.00      0.25      0.25 ._
2      fail failed      1/0 TIME    \$0.00         2         2 @
3      kill failed      1/0 TIME    \$0.00         1         1 =
4           queued      0/0 TIME    \$0.00         -         -
5           running     2/1 TIME    \$1.50         -         -

2: failed, exit 1: ValueError: lr too large\\x1b]0;x\\x07
3: failed, killed by SIGKILL: loading shard 7
4: queued, needs 1xH100: no agent has one (vm-a: 0 GPUs)
5: running, agent silent for 4m (its lease was last renewed 4m ago; another age~|" \
	"status SWEEP: ATT/P, and a note per trial that failed or waits: exit code and last stderr line, signal, the wait, the silent agent" ||
	t_show "$T/st.out"
w=$(awk '{ if (length($0) > w) w = length($0) } END { print w }' "$T/st.out")
t_is "$w" 80 "in 80 columns, the longest note cut to them"
run sj "$S" status --json tw
t_is "$(sed -n 4p "$T/st.out" | awk '{ print $5 }')" "$($PY -c 'import json, sys
print("%ds" % round(json.load(open(sys.argv[1]))["trials"][1]["seconds"]))' "$T/sj.out")" \
	"a trial's time run is its attempt's, from its record" || t_show "$T/st.out"

# --- 2. --wide ----------------------------------------------------------------
start=$($PY -c 'import json, sys, time
t = json.load(open(sys.argv[1]))["trials"]
print(time.strftime("%m-%d %H:%M", time.localtime(t[0]["started"])))' "$T/sj.out")
run sw "$S" status --wide tw
t_is "$rc|$(sed -E '3,7s/^(.{46}).{7}/\1   TIME/' "$T/sw.out")" "0|sweep tw: 5 trials, metric loss (smallest is best)
TRIAL  mode STATE     ATT PREEMPT START          TIME GPU-HOURS     COST      LAST      BEST CURVE
1      ok   succeeded   1       0 $start    TIME      0.00    \$0.00      0.25      0.25 ._
2      fail failed      1       0 $start    TIME      0.00    \$0.00         2         2 @
3      kill failed      1       0 $start    TIME      0.00    \$0.00         1         1 =
4           queued      0       0 -              TIME      0.00    \$0.00         -         -
5           running     2       1 -              TIME      2.00    \$1.50         -         -

2: failed, exit 1: ValueError: lr too large\\x1b]0;x\\x07
3: failed, killed by SIGKILL: loading shard 7
4: queued, needs 1xH100: no agent has one (vm-a: 0 GPUs)
5: running, agent silent for 4m (its lease was last renewed 4m ago; another agent takes the job over once it expires)" \
	"--wide: attempts, preemptions, start in local time, GPU-hours; the notes whole" || t_show "$T/sw.out"
TZ=Asia/Kolkata "$S" status --wide tw > "$T/sk.out" 2>&1
t_is "$(sed -n 3p "$T/sk.out" | cut -c 35-45 | grep -v "^$start\$")" "$(TZ=Asia/Kolkata $PY -c 'import json, sys, time
t = json.load(open(sys.argv[1]))["trials"]
print(time.strftime("%m-%d %H:%M", time.localtime(t[0]["started"])))' "$T/sj.out")" \
	"START is in the local time zone (TZ), 5:30 off UTC's"

# --- 3. --json -----------------------------------------------------------------
t_is "$rc|$($PY - "$T/sj.out" "$Q/ckpt" <<'PY'
import glob, json, os, sys
d = json.load(open(sys.argv[1]))
t = {x["id"]: x for x in d["trials"]}
for i in sorted(t):
    print(i, t[i]["state"], json.dumps(t[i]["reason"]), t[i]["exit_code"], t[i]["signal"])
# started, seconds from the attempt records; preemptions, gpu_seconds from the markers
for i in ("tw.1", "tw.2", "tw.3"):
    recs = [json.load(open(f)) for f in glob.glob(os.path.join(sys.argv[2], i, "attempts", "*.json"))]
    assert len(recs) == 1 and t[i]["started"] == recs[0]["started"], (i, recs, t[i])
    assert abs(t[i]["seconds"] - (recs[0]["ended"] - recs[0]["started"])) < 0.002, (i, t[i])
    assert t[i]["preemptions"] == 0 and t[i]["gpu_seconds"] == 0 and t[i]["attempts"] == 1, t[i]
assert t["tw.3"]["signal"] == 9 and recs[0]["signal"] == 9 and recs[0]["exit_code"] == 137
x = t["tw.5"]
print(x["attempts"], x["preemptions"], x["gpu_seconds"], x["cost"], x["on_demand_cost"], x["started"], x["seconds"])
PY
)" '0|tw.1 succeeded null None None
tw.2 failed "exit 1: ValueError: lr too large\u001b]0;x\u0007" 1 None
tw.3 failed "killed by SIGKILL: loading shard 7" 137 9
tw.4 queued "needs 1xH100: no agent has one (vm-a: 0 GPUs)" None None
tw.5 running "agent silent for 4m (its lease was last renewed 4m ago; another agent takes the job over once it expires)" None None
2 1 7200 1.5 4.25 None 0.0' \
	"--json: reason (null: none), exit_code and signal per trial; started and seconds as the records say, the markers' counts" ||
	t_show "$T/sj.out"

# --- 4. colour -----------------------------------------------------------------
E=$(printf '\033')
run sc "$S" status --color=always tw
t_is "$rc|$(mask < "$T/sc.out" | sed -n 3,7p | sed "s/$E/<E>/g")" "0|<E>[1m1      ok   <E>[32msucceeded<E>[39m   1/0 TIME    \$0.00      0.25      0.25 ._<E>[22m
2      fail <E>[31mfailed<E>[39m      1/0 TIME    \$0.00         2         2 @
3      kill <E>[31mfailed<E>[39m      1/0 TIME    \$0.00         1         1 =
4           <E>[36mqueued<E>[39m      0/0 TIME    \$0.00         -         -
5           <E>[33mrunning<E>[39m     2/1 TIME    \$1.50         -         -" \
	"--color=always: the state in colour (green, red, cyan, yellow), the best trial's row bold" ||
	t_show "$T/sc.out"
t_is "$(sed "s/$E\\[[0-9]*m//g" "$T/sc.out" | mask)" "$(mask < "$T/st.out")" \
	"... its columns where they are without colour: widths count what shows, not escapes"
run sm "$S" status --sort --metric loss:max --color=always tw
t_is "$(sed -n 3p "$T/sm.out" | sed "s/$E/<E>/g" | cut -c 1-17)" "<E>[1m2      fail" \
	"--sort with loss:max: the largest first, and bold"
if command -v script > /dev/null; then
	tty() {	# NAME ENV...: status tw on a terminal, its escapes counted
		_n=$1
		shift
		env "$@" script -qfec "$S status tw" "$T/$_n.tty" > /dev/null 2>&1
		grep -c "$E\\[3[0-9]m" "$T/$_n.tty"
	}
	t_is "$(tty a TERM=xterm)" 5 "on a terminal: colour by default"
	t_is "$(tty b NO_COLOR=1)|$(grep -c 'failed, exit 1' "$T/b.tty")" "0|1" "NO_COLOR wins over auto (the notes still there)"
	t_is "$(tty c NO_COLOR=)" 5 "an empty NO_COLOR is not set (no-color.org)"
	env NO_COLOR=1 script -qfec "$S status --color=always tw" "$T/d.tty" > /dev/null 2>&1
	t_is "$(grep -c "$E\\[3[0-9]m" "$T/d.tty")" 5 "--color=always wins over NO_COLOR"
else
	for i in 1 2 3 4; do t_skip "no script(1) for a terminal"; done
fi
run sn "$S" status tw
run sx "$S" status --color=sometimes tw
t_is "$(grep -c "$E" "$T/sn.out")|$rc|$(cat "$T/sx.err")" "0|64|spotrun: status: --color sometimes: auto, always or never" \
	"not a terminal: no colour; --color sometimes: refused (64)"

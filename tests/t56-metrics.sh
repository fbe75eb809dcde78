#!/bin/sh
# t56-metrics.sh: the job's metrics end to end on a file:// queue and store
# (doc/spotrun.1, METRICS):
# 1. `spotrun run`: a shell job appending to "$SPOTRUN_METRICS" with echo,
#    preempted (local provider) and resumed: its segments in the job's
#    store, the resumed attempt's from the step after its checkpoint; a
#    bad line warned once in the timeline, not shipped; the other ranks'
#    SPOTRUN_METRICS is /dev/null.
# 2. a sweep through the queue (submit --run-local), its trials reporting
#    through spotrun.report() (and one through echo), each preempted and
#    resumed: `status SWEEP` in 80 columns (golden, times masked), --sort,
#    --metric acc (largest is best), --json with every step exactly once;
#    --metric on a plain status is refused; on a UTF-8 terminal the curve
#    in block characters.
# 3. spotrun.report() alone: nothing outside spotrun, ValueError for a bad
#    step, name or value, the line it appends.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
S=$SPOTRUN
T=$t_tmp
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config
unset SPOTRUN_QUEUE
mkdir -p "$HOME"
echo "1..16"

# --- 1. spotrun run, a shell job -------------------------------------------
cat > "$T/sh.sh" <<'SH'
step=0
[ -n "$SPOTRUN_RESUME_STEP" ] && step=$(cat "$SPOTRUN_CKPT_DIR/step")
while [ "$step" -lt 30 ]; do
	step=$((step + 1))
	echo "step=$step loss=$((100 - step))" >> "$SPOTRUN_METRICS"
	[ "$step" = 3 ] && echo "loss is 97 now" >> "$SPOTRUN_METRICS"
	if [ -f "$SPOTRUN_CKPT_REQUEST" ]; then
		echo "$step" >"$SPOTRUN_CKPT_DIR/step"; echo "$step" >"$SPOTRUN_CKPT_DONE.t"
		mv "$SPOTRUN_CKPT_DONE.t" "$SPOTRUN_CKPT_DONE"
	fi
	sleep 0.1
done
SH
printf '[job]\nname = shm\ncommand = /bin/sh %s/sh.sh\n[checkpoint]\nstore = %s/store\nlocal_dir = %s/l-shm\nsignal = none\nmargin = 1s\n[provider]\nname = local\nafter = 1s\nwindow = 4s\npreemptions = 1\n' \
	"$T" "$T" "$T" > "$T/shm.ini"
"$S" run -q "$T/shm.ini" > "$T/shm.out" 2> "$T/shm.err"
t_is "$?" 0 "run: the shell job finishes after its preemption"
segs=$(ls "$T/store/shm/metrics" 2>/dev/null)
t_is "$(printf '%s\n' "$segs" | sed 's/-[0-9]*\.txt$//' | sort -u | tr '\n' ' ')" \
	"000000000001-0001 000000000001-0002 " "its metrics in segments of both attempts, in its store"
a1=$(cat "$T"/store/shm/metrics/000000000001-0001-*.txt)
a2=$(cat "$T"/store/shm/metrics/000000000001-0002-*.txt)
resumed=$(grep -o 'restored checkpoint 0 at step [0-9]*' "$T/shm.err" | sed 's/.* //')
t_is "$(printf '%s\n' "$a2" | head -n 1)|$(printf '%s\n' "$a2" | tail -n 1)|$(printf '%s\n' "$a2" | wc -l)" \
	"step=$((resumed + 1)) loss=$((99 - resumed))|step=30 loss=70|$((30 - resumed))" \
	"attempt 2 appends from the step after its checkpoint ($resumed) to 30"
t_is "$(printf '%s\n' "$a1" | head -n 3 | tr '\n' ' ')|$(printf '%s\n' "$a1" | grep -c 'loss is')" \
	"step=1 loss=99 step=2 loss=98 step=3 loss=97 |0" "attempt 1's lines as written, the bad line not shipped"
t_is "$(grep -c 'metrics: 1 line of SPOTRUN_METRICS skipped' "$T/shm.err")" 1 \
	"the bad line is one warning in the timeline"
t_has "$T/shm.err" "(the first: line 4: field 1 'loss': not NAME=VALUE)" "naming its line and why"

# --- 2. a sweep through the queue --------------------------------------------
cat > "$T/train.py" <<'PY'
import os, sys, time
import spotrun
lr = float(os.environ["SPOTRUN_PARAM_LR"])
step = 0
if spotrun.resume_step() is not None:
    step = int(open(os.path.join(os.environ["SPOTRUN_CKPT_DIR"], "step")).read())
while step < 24:
    step += 1
    loss = round(4.0 / (1 + lr * step), 4)
    if os.environ["SPOTRUN_PARAM_HOW"] == "echo":
        with open(os.environ["SPOTRUN_METRICS"], "a") as f:
            f.write("step=%d loss=%s\n" % (step, loss))
        spotrun.report(step, acc=round(1 - loss / 4, 4))
    else:
        spotrun.report(step, loss=loss, acc=round(1 - loss / 4, 4))
    if spotrun.requested():
        open(os.path.join(spotrun.ckpt_dir(), "step"), "w").write(str(step))
        spotrun.done(step)
    time.sleep(0.1)
PY
cat > "$T/sw.ini" <<EOF2
[job]
name = sw
command = $PY $T/train.py
[checkpoint]
signal = none
margin = 1s
[provider]
name = local
after = 1s
window = 4s
preemptions = 1
[sweep]
lr = 0.5, 2, 8
seed = 7
how = py, echo
EOF2
"$S" submit --run-local "$T/sw.ini" > "$T/sub.out" 2> "$T/sub.err"
t_is "$?" 0 "the sweep's six trials ran (submit --run-local)" || t_show "$T/sub.err"
# the time run and the attempts (each run of the agent is preempted once)
mask() { sed -E 's/ +[0-9]+\/[0-9]+ +[0-9]+[smhd][0-9]*[smh]? +\$/ A\/P TIME \$/'; }
"$S" status sw > "$T/st.out" 2> "$T/st.err"
t_is "$?|$(mask < "$T/st.out")|$(cat "$T/st.err")" "0|sweep sw: 6 trials, metric loss (smallest is best)
TRIAL  lr  how  STATE     ATT/P    TIME     COST      LAST      BEST CURVE
1      0.5 py   succeeded A/P TIME \$0.00    0.3077    0.3077 *==--......
2      0.5 echo succeeded A/P TIME \$0.00    0.3077    0.3077 *==--......
3      2   py   succeeded A/P TIME \$0.00    0.0816    0.0816 -..._______
4      2   echo succeeded A/P TIME \$0.00    0.0816    0.0816 -..._______
5      8   py   succeeded A/P TIME \$0.00    0.0207    0.0207 .__________
6      8   echo succeeded A/P TIME \$0.00    0.0207    0.0207 .__________|" \
	"status SWEEP: a row per trial, the varying parameters only (not seed), the metric and its curve"
w=$(awk '{ if (length($0) > w) w = length($0) } END { print w }' "$T/st.out")
t_is "$([ "$w" -le 80 ] && echo fits)" fits "in 80 columns ($w)"
"$S" status --metric acc --sort sw > "$T/sa.out" 2> "$T/sa.err"
t_is "$?|$(sed -n 1p "$T/sa.out")|$(sed 1,2d "$T/sa.out" | awk '{ print $1 }' | tr '\n' ' ')" \
	"0|sweep sw: 6 trials, metric acc (largest is best)|5 6 3 4 1 2 " "--metric acc: the largest is best; --sort puts it first"
"$S" status --json sw > "$T/sj.out" 2> "$T/sj.err"
t_is "$?|$($PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
t = d["trials"]
print(d["metric"], d["varying"], len(t), all([p["step"] for p in x["metrics"]] == list(range(1, 25)) for x in t),
      all(set(p) == {"step", "loss", "acc"} for x in t for p in x["metrics"]),
      t[4]["metric"]["best"], t[4]["metric"]["best_step"], t[4]["params"]["seed"], min(x["attempts"] for x in t) >= 2)
' "$T/sj.out")" "0|{'name': 'loss', 'goal': 'min'} ['lr', 'how'] 6 True True 0.0207 24 7 True" \
	"--json: every trial's steps 1-24 exactly once, with all their metrics, and the best"
t_is "$($PY - "$T/sj.out" "$T/data/spotrun/queue/ckpt" <<'PY'
import glob, json, os, sys
for x in json.load(open(sys.argv[1]))["trials"]:
    recs = [json.load(open(f)) for f in glob.glob(os.path.join(sys.argv[2], x["id"], "attempts", "*.json"))]
    want = (len(recs), sum(r["outcome"] == "preempted" for r in recs), min(r["started"] for r in recs),
            round(sum(r["ended"] - r["started"] for r in recs), 3), 0)
    got = (x["attempts"], x["preemptions"], x["started"], x["seconds"], x["gpu_seconds"])
    if got != want or x["preemptions"] < 1:
        print(x["id"], got, want)
print("right")
PY
)" "right" "--json: attempts, preemptions, first start and seconds run as the attempt records say; no GPU-seconds"
# on a terminal whose locale is UTF-8: the curve in block characters
if command -v script > /dev/null; then
	LC_ALL=C.UTF-8 script -qfec "$S status --color=never sw" "$T/tty" > /dev/null 2>&1
	t_is "$(tr -d '\r' < "$T/tty" | grep '^5 ' | sed 's/.* //')" "▂▁▁▁▁▁▁▁▁▁▁" \
		"on a UTF-8 terminal the curve is in block characters"
else
	t_skip "no script(1) for a terminal"
fi
"$S" status --metric loss > "$T/sm.out" 2> "$T/sm.err"
t_is "$?|$(cat "$T/sm.err")" "64|spotrun: status: --metric, --sort and --wide are for one sweep's trials: spotrun status SWEEP" \
	"--metric without a sweep is refused"

# --- 3. spotrun.report() by itself --------------------------------------------
out=$(cd "$T" && env -u SPOTRUN_METRICS PYTHONPATH="$top_srcdir/python" $PY -c '
import spotrun
print(spotrun.report(1, loss=0.5))
for args, kw in (((-1,), {"loss": 1}), ((1,), {}), ((1,), {"9x": 1}),
                 ((1,), {"loss": float("nan")}), ((1,), {"loss": "x"}), ((True,), {"loss": 1})):
    try:
        spotrun.report(*args, **kw)
        print("accepted", args, kw)
    except ValueError as e:
        print("ValueError")
' 2>&1 | tr '\n' ' ')
t_is "$out" "False ValueError ValueError ValueError ValueError ValueError ValueError " \
	"report(): False outside spotrun; a bad step, name or value raises ValueError"
out=$(cd "$T" && SPOTRUN_METRICS=$T/pm PYTHONPATH="$top_srcdir/python" $PY -c '
import spotrun
print(spotrun.report(7, loss=0.1, **{"val/acc": 1, "lr": 3e-4}))
' 2>&1)
t_is "$out|$(cat "$T/pm")" "True|step=7 loss=0.1 val/acc=1.0 lr=0.0003" \
	"report(): one line of the metrics format appended to SPOTRUN_METRICS"

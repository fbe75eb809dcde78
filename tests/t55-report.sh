#!/bin/sh
# t55-report.sh: `spotrun report` (doc/spotrun.1, REPORT; doc/fleet.md,
# "report") on a file:// queue: a sweep of three trials run through the
# queue (submit --run-local), each reporting a metric and preempted once,
# one trial's parameter and job file holding markup, quotes and a byte
# that is no UTF-8. The page has no URL of a network and is loaded in
# headless Chromium with the network disabled: no console message (a page
# that logs an error is caught by the same check), its DOM has a curve per
# trial, a screenshot of it is not blank. A job without metrics still
# renders, saying so; an unknown sweep, -o into a missing folder and a bad
# --metric are refused as status refuses them. Without Chromium the
# browser's checks are skipped, or fail with SPOTRUN_TEST_REQUIRE_CHROMIUM=1.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
S=$SPOTRUN
T=$t_tmp
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config
unset SPOTRUN_QUEUE
mkdir -p "$HOME"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

cat > "$T/train.py" <<'PY'
import os, time
import spotrun
lr = float(os.environ["SPOTRUN_PARAM_LR"].split("<")[0].split("&")[0])
step = 0
if spotrun.resume_step() is not None:
    step = int(open(os.path.join(os.environ["SPOTRUN_CKPT_DIR"], "step")).read())
while step < 20:
    step += 1
    spotrun.report(step, loss=round(4.0 / (1 + lr * step), 4))
    if spotrun.requested():
        open(os.path.join(spotrun.ckpt_dir(), "step"), "w").write(str(step))
        spotrun.done(step)
    time.sleep(0.1)
PY
# the third trial's lr is markup, an entity and quotes: "8<b>x</b>&amp;'\""
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
lr = 0.5, 2, 8<b>x</b>&amp;'"
EOF2
"$S" submit --run-local "$T/sw.ini" > "$T/sub.out" 2> "$T/sub.err"
t_is "$?" 0 "the sweep's three trials ran (submit --run-local)" || t_show "$T/sub.err"
# the best trial's job file in the queue, with a byte that is no UTF-8
Q=$XDG_DATA_HOME/spotrun/queue
printf '; \377 <script>x</script>\n' >> "$Q/jobs/sw.3/spec.ini"

"$S" report -o "$T/r.html" sw > "$T/r.out" 2> "$T/r.err"
t_is "$?|$(cat "$T/r.out" "$T/r.err")" "0|" "report SWEEP -o FILE: written, nothing said"
t_is "$(grep -c '<path class="curve' "$T/r.html")|$(grep -c '<path class="curve best" data-job="sw.3"' "$T/r.html")" \
	"3|1" "a curve per trial, the best (sw.3, the largest lr) highlighted"
t_unlike "$T/r.html" '<b>|<script|https?:|src=|@import|url\(' \
	"no markup from the store, no URL, nothing the page would fetch"
t_is "$(grep -c '8&lt;b&gt;x&lt;/b&gt;&amp;amp;&#39;&quot;' "$T/r.html")" 4 \
	"the hostile parameter escaped: the legend, the table, the job file's two lines"
t_has "$T/r.html" "; $(printf '\357\277\275') &lt;script&gt;x&lt;/script&gt;" \
	"the job file's byte that is no UTF-8 is U+FFFD, its markup escaped"
t_is "$($PY -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8"); print("utf-8")' "$T/r.html")" \
	utf-8 "the page is well-formed UTF-8"
t_like "$T/r.html" '<tr class="best"><td>sw.3</td>' "the table's best row is marked"
t_like "$T/r.html" '<g class="attempt preempted"><rect' "the timeline has the preempted attempts"
t_is "$(grep -c '<circle class="ckpt"' "$T/r.html" | awk '{ print ($1 >= 3) }')" 1 \
	"and the checkpoints"
t_has "$T/r.html" 'cost $0.00, on demand $0.00' "the cost against on-demand"

# a job with no metrics: the page says so
printf '[job]\nname = quiet\ncommand = /bin/true\n' > "$T/quiet.ini"
"$S" submit --run-local "$T/quiet.ini" > /dev/null 2> "$T/q.err"
"$S" report -o "$T/q.html" quiet > "$T/q.out" 2>&1
t_is "$?|$(grep -c '<path class="curve' "$T/q.html")" "0|0" "report JOB: a job without metrics renders"
t_has "$T/q.html" "No metrics reported" "saying that no metric was reported"

# refusals
"$S" report -o "$T/x.html" nosuch > "$T/e1.out" 2>&1
rc=$?
"$S" status nosuch > "$T/e1s.out" 2>&1
t_is "$rc|$(cat "$T/e1.out")" "66|$(cat "$T/e1s.out")" "an unknown sweep: 66, as status says it"
"$S" report -o "$T/none/r.html" sw > "$T/e2.out" 2>&1
t_is "$?|$(cat "$T/e2.out")|$(ls "$T/none" 2>&1 | wc -l)" \
	"74|spotrun: report: write $T/none/r.html: No such file or directory|1" "-o into a missing folder: 74"
"$S" report --metric 'loss:best' -o "$T/x.html" sw > "$T/e3.out" 2>&1
t_is "$?|$(cat "$T/e3.out")|$(ls "$T" | grep -c 'x.html')" \
	"64|spotrun: report: --metric loss:best: a metric's name, or NAME:min or NAME:max|0" \
	"a bad --metric: 64, no file left"

# --- in the browser ------------------------------------------------------------
if [ ! -x "$CHROMIUM" ]; then
	if [ "${SPOTRUN_TEST_REQUIRE_CHROMIUM:-}" = 1 ]; then
		t_result 1 "no $CHROMIUM, and SPOTRUN_TEST_REQUIRE_CHROMIUM=1 (build-aux/install-deps installs chromium)"
	else
		t_skip "no $CHROMIUM (Debian's chromium; build-aux/install-deps installs it)"
	fi
	t_done
fi
# chrome URL DOM-FILE [PNG]: load URL offline; its stderr (log) in DOM-FILE.err
chrome() {
	d=$(mktemp -d "$T/chr.XXXXXX")
	if [ -n "${3:-}" ]; then
		set -- "$1" "$2" --screenshot="$3" --window-size=900,1600
	else
		set -- "$1" "$2" --dump-dom
	fi
	u=$1 f=$2
	shift 2
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$d" \
		--host-resolver-rules='MAP * ~NOTFOUND' --no-first-run --disable-extensions \
		--enable-logging=stderr --v=1 --log-level=0 --virtual-time-budget=2000 \
		"$@" "$u" > "$f" 2> "$f.err"
}
printf '<!DOCTYPE html><title>b</title><script>console.error("broken-page-marker")</script>\n' > "$T/broken.html"
chrome "file://$T/broken.html" "$T/b.dom"
t_is "$?|$(grep -c 'CONSOLE.*broken-page-marker' "$T/b.dom.err")" "0|1" \
	"the check can fail: a page logging an error shows in Chromium's CONSOLE lines"
chrome "file://$T/r.html" "$T/r.dom"
t_is "$?|$(grep -E 'CONSOLE|Refused|Uncaught' "$T/r.dom.err")" "0|" "the report loads offline with no console message" ||
	t_show "$T/r.dom.err"
t_is "$(grep -o '<path class="curve[^"]*" data-job="[^"]*"' "$T/r.dom" | sed 's/.*data-job=//' | sort | tr '\n' ' ')" \
	'"sw.1" "sw.2" "sw.3" ' "the loaded DOM has one curve path per trial"
chrome "file://$T/r.html" "$T/r.shot.out" "$T/shot.png"
t_is "$?|$($PY - "$T/shot.png" <<'PY'
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
i, idat = 8, b""
while i < len(b):
    n, kind = struct.unpack(">I4s", b[i:i + 8])
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", b[i + 8:i + 18])
    elif kind == b"IDAT":
        idat += b[i + 8:i + 8 + n]
    i += 12 + n
assert depth == 8 and ctype in (2, 6), (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw, stride, prev, colours, o = zlib.decompress(idat), w * bpp, bytearray(w * bpp), set(), 0
for y in range(h):
    f, row = raw[o], bytearray(raw[o + 1:o + 1 + stride])
    o += 1 + stride
    for x in range(stride):
        a = row[x - bpp] if x >= bpp else 0
        c = prev[x - bpp] if x >= bpp else 0
        up = prev[x]
        if f == 1: row[x] = (row[x] + a) & 255
        elif f == 2: row[x] = (row[x] + up) & 255
        elif f == 3: row[x] = (row[x] + (a + up) // 2) & 255
        elif f == 4:
            p = a + up - c
            pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
            row[x] = (row[x] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
    if y % 2 == 0:
        for x in range(0, stride, bpp * 2):
            colours.add(bytes(row[x:x + 3]))
    prev = row
print("colours" if len(colours) > 50 else "blank: %d colours" % len(colours), w, h)
PY
)" "0|colours 900 1600" "a screenshot of it is a 900x1600 PNG of more than 50 colours, not blank"
t_done

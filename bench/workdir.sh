#!/bin/sh
# workdir.sh: shipping a job's working directory (issue 23, doc/fleet.md
# "Working directory"): `spotrun submit` of a 200 MB workdir, then again
# unchanged, then with one source file changed, into a file:// queue on
# this disk and into Ceph RGW on loopback (tests/rgw.sh, started here and
# stopped at exit; skipped without radosgw). The baseline in the same
# invocation is what a user would do without spotrun: `tar -c | zstd -3
# -T0` of the folder (and, for RGW, `aws s3 cp` of that archive), every
# time. Then setup caching: a sweep of two trials with `setup = python3 -m
# venv` on one agent: the first runs setup, the second finds it done.
#
# The workdir (made once per run, deterministic): BENCH_WORKDIR_MB (default
# 200) of which 20% is source text (Python's standard library, repeated)
# in ~2,000 files and 80% float32 weights (normal noise, what a checkpoint
# of a fine-tuned model looks like to a compressor) in 8 files.
# Printed: wall seconds, CPU seconds (user+sys of the command), bytes
# written to the store (spotrun's own count; for the baseline the
# archive's size), and the ratio to the baseline.
set -eu
: "${top_builddir:=.}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$top_srcdir/bench/lib.sh"
: "${SPOTRUN:=$top_builddir/spotrun}"
PY=/usr/bin/python3
MB=${BENCH_WORKDIR_MB:-200}
for c in zstd /usr/bin/time; do
	command -v "$c" >/dev/null 2>&1 || { echo "workdir.sh: no $c: skipped"; exit 0; }
done
"$PY" -c 'import numpy' 2>/dev/null || { echo "workdir.sh: no numpy: skipped"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-workdir.XXXXXX")
trap 'sh "$top_srcdir/tests/rgw.sh" stop "$tmp/rgw" >/dev/null 2>&1 || :; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
. "$top_srcdir/tests/jobs/no-cloud.sh"
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data"
unset SPOTRUN_QUEUE 2>/dev/null || true
mkdir -p "$HOME"
echo "machine: $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)),"\
    "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM, $(uname -sr);"\
    "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: make bench (bench/workdir.sh), BENCH_WORKDIR_MB=$MB"

# ---- the workdir -------------------------------------------------------------
W=$tmp/w
"$PY" - "$W" "$MB" <<'PY'
import glob, os, sys
import numpy as np
w, mb = sys.argv[1], int(sys.argv[2])
os.makedirs(w + "/src", exist_ok=True)
os.makedirs(w + "/weights", exist_ok=True)
texts = sorted(glob.glob("/usr/lib/python3*/*.py"))
want, n, i = mb * 2 ** 20 // 5, 0, 0
while n < want:
    with open(texts[i % len(texts)], "rb") as f:
        b = f.read()
    d = "%s/src/m%02d" % (w, i // 200)
    os.makedirs(d, exist_ok=True)
    # a different header per copy: repeated files are not the same file
    b = b"# copy %d\n" % i + b
    with open("%s/f%04d.py" % (d, i), "wb") as f:
        f.write(b)
    n += len(b)
    i += 1
rng = np.random.default_rng(7)
per = (mb * 2 ** 20 - n) // 8 // 4
for k in range(8):
    rng.standard_normal(per, dtype=np.float32).tofile("%s/weights/layer%d.bin" % (w, k))
print("workdir: %d source files, %d bytes of source, 8 weight files" % (i, n))
PY
cat > "$W/job.ini" <<EOF
[job]
name = wd
command = true
workdir_max = 1GiB
[provider]
name = local
EOF
echo "workdir: $(du -sb "$W" | cut -f1) bytes in $(find "$W" -type f | wc -l) files"

# timed NAME CMD...: run CMD under GNU time; "NAME WALL CPU" to $res, its
# output in $tmp/NAME.out.
res=$tmp/res
timed() {
	_n=$1; shift
	/usr/bin/time -f "%e %U %S" -o "$tmp/$_n.time" "$@" >"$tmp/$_n.out" 2>&1 ||
	    { cat "$tmp/$_n.out" >&2; echo "workdir.sh: $_n failed" >&2; exit 1; }
	awk -v n="$_n" '{ printf "%s %.2f %.2f\n", n, $1, $2 + $3 }' "$tmp/$_n.time" >>"$res"
}
# uploaded NAME: the bytes submit says it uploaded
uploaded() { sed -n 's/.*; uploaded [0-9]* chunks\{0,1\}, \([0-9]*\) bytes.*/\1/p' "$tmp/$1.out"; }
# run_store STORE QUEUE [BASELINE-UPLOAD...]: the baseline, then the three submits
run_store() {
	_st=$1 _q=$2; shift 2
	: >"$res"
	rm -f "$tmp/base.tar.zst"
	timed base sh -c "tar -C '$W' -cf - . | zstd -3 -T0 -q -o '$tmp/base.tar.zst'${1:+ && $*}"
	_bb=$(stat -c %s "$tmp/base.tar.zst")
	timed first "$SPOTRUN" submit --create --queue "$_q" "$W/job.ini"
	# --again: the job is in the queue already (as a user resubmits)
	timed unchanged "$SPOTRUN" submit --again --queue "$_q" "$W/job.ini"
	echo "# one line more" >>"$W/src/m00/f0000.py"
	timed onefile "$SPOTRUN" submit --again --queue "$_q" "$W/job.ini"
	echo "$_st: queue $_q"
	awk -v b="$_bb" -v u1="$(uploaded first)" -v u2="$(uploaded unchanged)" -v u3="$(uploaded onefile)" '
	{ wall[$1] = $2; cpu[$1] = $3 }
	END {
		up["first"] = u1; up["unchanged"] = u2; up["onefile"] = u3
		printf "  %-30s %8s %8s %12s %9s\n", "", "wall s", "CPU s", "bytes", "wall/base"
		printf "  %-30s %8.2f %8.2f %12d %9s\n", "baseline: tar | zstd -3 -T0", wall["base"], cpu["base"], b, "1.00"
		split("first unchanged onefile", k, " ")
		split("submit, first|submit, unchanged|submit, one file changed", l, "|")
		for (i = 1; i <= 3; i++)
			printf "  %-30s %8.2f %8.2f %12d %9.2f\n", l[i], wall[k[i]], cpu[k[i]], up[k[i]], wall[k[i]] / wall["base"]
	}' "$res"
	undo_change
}
# put the changed file back, for the next store
undo_change() { sed -i '$d' "$W/src/m00/f0000.py"; }

run_store file "file://$tmp/q"

if command -v radosgw >/dev/null && command -v aws >/dev/null; then
	rgw_up "$tmp/rgw" >/dev/null
	bucket=$(awsc s3api create-bucket --bucket "bench-wd-$$" >/dev/null && echo "bench-wd-$$")
	run_store s3 "s3://$bucket/q?endpoint=$ep" \
	    "'$aws' --endpoint-url '$ep' s3 cp --quiet '$tmp/base.tar.zst' 's3://$bucket/base.tar.zst'"
	echo "  (s3's baseline: tar | zstd, then aws s3 cp of the archive)"
else
	echo "s3: skipped (no radosgw or aws CLI)"
fi

# ---- setup caching -----------------------------------------------------------
S=$tmp/setup
mkdir -p "$S"
printf 'print("train")\n' >"$S/train.py"
cat >"$S/job.ini" <<EOF
[job]
name = su
command = python3 train.py
setup = $PY -m venv .venv
[provider]
name = local
[sweep]
i = 1, 2
EOF
"$SPOTRUN" submit --create --queue "file://$tmp/qs" "$S/job.ini" >/dev/null
timed agent "$SPOTRUN" agent --queue "file://$tmp/qs" --once --dir "$tmp/ag"
echo "setup ($PY -m venv .venv), two trials of one sweep on one agent:"
grep -E ': setup: ' "$tmp/agent.out" | sed 's/^/  /'
echo "  the agent, both jobs: $(awk '$1 == "agent" { print $2 " s wall, " $3 " s CPU" }' "$res")"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

# lib.sh: what the benchmark scripts share (bench/ckpt.sh, bench/s3.sh,
# bench/compress.sh, bench/libsave.sh); sourced. Timing helpers, the
# results file, the awk functions that turn repeated measurements into a
# median and a range, the server's CPU, and the real trained state.

now() { date +%s.%N; }
# secs T0 T1: the seconds from T0 to T1 (both from now).
secs() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }
# rec NAME VALUE: one measurement, appended to $res.
rec() { echo "$1 $2" >>"$res"; }
# rgw_cpu STATEDIR: CPU seconds used so far by the RGW that tests/rgw.sh
# started there (radosgw and ceph-osd), since client and server share the
# machine's CPUs.
rgw_cpu()
{
	cat "$1/rgw.pid" "$1/osd.pid" | while read -r _pid; do
		cat "/proc/$_pid/stat"
	done | awk -v hz="$(getconf CLK_TCK)" '{ s += $14 + $15 } END { print s / hz }'
}

# The real trained state (bench/train-state.py): steps and width of the
# model; the state of the last step and of the one twenty steps before.
state_steps=200
state_hidden=2048
state_prev=$((state_steps - 20))
# real_state DIR: train into DIR once (the files and config are kept:
# about 7 minutes on 2 cores); 0 when DIR holds the state, 1 when there is
# no PyTorch (the caller skips), exits on a failed training.
real_state()
{
	_cfg="steps=$state_steps hidden=$state_hidden"
	[ "$(cat "$1/config" 2>/dev/null)" != "$_cfg" ] || return 0
	_py=${PYTHON:-/usr/bin/python3}
	"$_py" -c 'import torch' 2>/dev/null || return 1
	"$_py" "$top_srcdir/bench/train-state.py" "$1" "$state_steps" "$state_hidden" ||
	    { echo "real_state: training into $1 failed" >&2; exit 1; }
	echo "$_cfg" >"$1/config"
}

# awk functions over the measurements read into cnt[k] and val[k, i]:
# prepend to a report's program ("$bench_stats_awk"'...').
bench_stats_awk='
function sorted(k, v,    n, i, j, t) {
	n = cnt[k]
	for (i = 1; i <= n; i++) v[i] = val[k, i]
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	return n
}
function median(k,    n, v) {
	n = sorted(k, v)
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function range(k,    n, v) {
	n = sorted(k, v)
	return sprintf("%.2f-%.2f", v[1], v[n])
}
'

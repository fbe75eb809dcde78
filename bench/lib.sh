# lib.sh: what the benchmark scripts share (bench/ckpt.sh, bench/s3.sh);
# sourced. Timing helpers, the results file, and the awk functions that
# turn repeated measurements into a median and a range.

now() { date +%s.%N; }
# secs T0 T1: the seconds from T0 to T1 (both from now).
secs() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }
# rec NAME VALUE: one measurement, appended to $res.
rec() { echo "$1 $2" >>"$res"; }

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

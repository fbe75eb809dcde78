# lib.sh: what the benchmark scripts share (bench/ckpt.sh, bench/s3.sh,
# bench/azure.sh,
# bench/compress.sh, bench/libsave.sh, bench/goodput-run.sh, bench/goodput-gang.sh);
# sourced. Timing helpers, the
# results file, the awk functions that turn repeated measurements into a
# median and a range, a local RGW and the aws CLI pointed at it, and the
# real trained state.

now() { date +%s.%N; }
# secs T0 T1: the seconds from T0 to T1 (both from now).
secs() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }
# rec NAME VALUE: one measurement, appended to $res.
rec() { echo "$1 $2" >>"$res"; }
# timed NAME CMD...: run CMD under GNU time (its figures in $tmp/time);
# record NAME (wall seconds, also left in $wall), NAME_cpu (user + system
# of CMD and its children), NAME_srv (the CPU seconds of the server, from
# the caller's server_cpu) and NAME_rss (KiB, the largest process).
timed()
{
	_n=$1
	shift
	_s0=$(server_cpu)
	_t0=$(now)
	/usr/bin/time -f '%U %S %M' -o "$tmp/time" "$@" >/dev/null ||
	    { echo "${0##*/}: $_n failed" >&2; exit 1; }
	wall=$(secs "$_t0" "$(now)")
	rec "$_n" "$wall"
	rec "${_n}_srv" "$(secs "$_s0" "$(server_cpu)")"
	rec "${_n}_cpu" "$(awk 'END { print $1 + $2 }' "$tmp/time")"
	rec "${_n}_rss" "$(awk 'END { print $3 }' "$tmp/time")"
}
# synced NAME: sync, and record NAME = the last timed step's wall time plus
# the sync's.
synced()
{
	_t0=$(now)
	sync
	rec "$1" "$(awk -v a="$wall" -v b="$(secs "$_t0" "$(now)")" 'BEGIN { print a + b }')"
}

# rgw_cpu STATEDIR: CPU seconds used so far by the RGW that tests/rgw.sh
# started there (radosgw and ceph-osd), since client and server share the
# machine's CPUs.
rgw_cpu()
{
	cat "$1/rgw.pid" "$1/osd.pid" | while read -r _pid; do
		cat "/proc/$_pid/stat"
	done | awk -v hz="$(getconf CLK_TCK)" '{ s += $14 + $15 } END { print s / hz }'
}

# rgw_tools: what the RGW benchmarks need. Exits when GNU time is missing;
# returns 1, saying that the script is skipped, without radosgw or the aws
# CLI (build-aux/install-deps installs all three).
rgw_tools()
{
	[ -x /usr/bin/time ] || { echo "${0##*/}: GNU time (/usr/bin/time) is needed:" \
	    "build-aux/install-deps" >&2; exit 1; }
	for _tool in radosgw aws; do
		if ! command -v "$_tool" >/dev/null; then
			echo "${0##*/}: skipped: no $_tool (build-aux/install-deps installs it)"
			return 1
		fi
	done
}
# rgw_up STATEDIR [--tls]: start tests/rgw.sh's RGW there (its output in
# STATEDIR.out), read its env, and give the aws CLI its keys through the
# environment (never a command line) and nothing from the user's files or
# a metadata service. Sets st (STATEDIR), ep (its endpoint: the HTTPS one
# with --tls, whose CA goes to AWS_CA_BUNDLE, which the store reads too)
# and aws (the CLI itself, not a pyenv shim: a bash script that costs 0.1 s
# a call). awsc, drop and stored below use them and $bucket.
rgw_up()
{
	st=$1
	sh "$top_srcdir/tests/rgw.sh" start "$@" >"$st.out" 2>&1 ||
	    { cat "$st.out" >&2; echo "${0##*/}: could not start RGW" >&2; exit 1; }
	. "$st/env"
	ep=$SPOTRUN_TEST_S3_ENDPOINT
	if [ "${2:-}" = --tls ]; then
		ep=$SPOTRUN_TEST_S3_TLS_ENDPOINT
		AWS_CA_BUNDLE=$SPOTRUN_TEST_S3_CA
		export AWS_CA_BUNDLE
	fi
	AWS_ACCESS_KEY_ID=$SPOTRUN_TEST_S3_ACCESS_KEY
	AWS_SECRET_ACCESS_KEY=$SPOTRUN_TEST_S3_SECRET_KEY
	AWS_DEFAULT_REGION=$SPOTRUN_TEST_S3_REGION
	AWS_REGION=$SPOTRUN_TEST_S3_REGION
	AWS_CONFIG_FILE=/dev/null
	AWS_SHARED_CREDENTIALS_FILE=/dev/null
	AWS_EC2_METADATA_DISABLED=true
	export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_DEFAULT_REGION AWS_REGION \
	    AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE AWS_EC2_METADATA_DISABLED
	aws=$(command -v aws)
	if command -v pyenv >/dev/null && pyenv which aws >/dev/null 2>&1; then
		aws=$(pyenv which aws)
	fi
}
awsc() { "$aws" --endpoint-url "$ep" "$@"; }
# Delete every object in the bucket and collect RGW's garbage (the tails
# of deleted objects are otherwise kept for hours), so that the OSD holds
# one run's objects at most.
drop()
{
	awsc s3 rm --recursive --quiet "s3://$bucket/" >/dev/null
	radosgw-admin -c "$st/ceph.conf" gc process --include-all >/dev/null 2>&1 ||
	    echo "${0##*/}: warning: radosgw-admin gc process failed" >&2
}
# stored PREFIX: the sum of the sizes of the objects under s3://bucket/PREFIX.
stored()
{
	_sz=$(awsc s3 ls --recursive --summarize "s3://$bucket/$1" | sed -n 's/^ *Total Size: //p')
	case $_sz in
	'' | *[!0-9]*) echo "${0##*/}: cannot list s3://$bucket/$1" >&2; exit 1 ;;
	esac
	echo "$_sz"
}

# The real trained state (bench/train-state.py): steps and width of the
# model; the state of the last step, of the one twenty steps before (the
# previous checkpoint) and of sixty before (three checkpoints back).
state_steps=200
state_hidden=2048
state_prev=$((state_steps - 20))
state_key=$((state_steps - 60))
# real_state DIR: train into DIR once (the files and config are kept:
# about 3 minutes on 2 cores); 0 when DIR holds the state, 1 when there is
# no PyTorch (the caller skips), exits on a failed training.
real_state()
{
	_cfg="steps=$state_steps hidden=$state_hidden dumps=$state_key,$state_prev,$state_steps"
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
function best(k,    n, v) { n = sorted(k, v); return v[1] }
function worst(k,    n, v) { n = sorted(k, v); return v[n] }
'

# goodput_settings NAME TRACE...: what bench/goodput-run.sh and
# bench/goodput-gang.sh share: each trace readable (else a message naming
# NAME and exit 1), and their settings: scale (GOODPUT_SCALE, trace seconds
# per real second, 300), work (GOODPUT_WORK, seconds, 40), step_ms (20),
# steps, interval (30 min of trace) and window (120 s of trace).
goodput_settings()
{
	_gname=$1
	shift
	for _gt; do
		[ -r "$_gt" ] || { echo "$_gname: cannot read the trace $_gt" >&2; exit 1; }
	done
	scale=${GOODPUT_SCALE:-300}
	work=${GOODPUT_WORK:-40}
	step_ms=20
	steps=$((work * 1000 / step_ms))
	interval=$(awk -v s="$scale" 'BEGIN { printf "%.0fms", 1800 / s * 1000 }')
	window=$(awk -v s="$scale" 'BEGIN { printf "%.0fms", 120 / s * 1000 }')
}

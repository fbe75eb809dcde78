# cloud.sh: shared by the end-to-end tests of the cloud providers
# (t40-aws.sh, t41-gcp.sh, t42-azure.sh, t43-cloud-deadline.sh,
# t44-cloud-early.sh); sourced, not run. Every metadata endpoint starts out
# on a closed loopback port (no-cloud.sh); a test points one at its emulator.
. "$top_srcdir/tests/jobs/no-cloud.sh"

# The TAP set-up every cloud test shares: a temp dir $tmp, removed at exit
# with the emulator $emu if one runs; ok, nok and check number their lines;
# nok shows the tail of $err (default $tmp/err), spotrun's output.
tmp=$(mktemp -d)
emu=
trap '[ -n "$emu" ] && kill $emu 2>/dev/null; rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() {
	n=$((n + 1)); echo "not ok $n - $1"
	_e=${err:-$tmp/err}
	[ -f "$_e" ] && sed 's/^/# /' "$_e" | tail -n 15
	return 0
}
check() { if [ "$1" = "$2" ]; then ok "$3"; else nok "$3: got '$1', want '$2'"; fi; }

# check_ua LOG DESC: every request in LOG (an emulator started with -U)
# came with the User-Agent spotrun/VERSION, and there was one at least.
check_ua() {
	_ua="spotrun/$("$SPOTRUN" --version | sed 's/^spotrun //')"
	_all=$(grep -c '^ua ' "$1")
	_bad=$(grep '^ua ' "$1" | grep -vF " $_ua" | head -n 2)
	[ "$_all" -gt 0 ] && [ -z "$_bad" ] && [ "$(grep -c " $_ua\$" "$1")" = "$_all" ] &&
		ok "$2: User-Agent: $_ua on all $_all requests" || nok "$2: $_all requests, not $_ua: $_bad"
}

# cloud_emu PORTFILE LOGFILE [MDEMU OPTIONS...]: start tests/mdemu in the
# background and wait (at most 5 s) until it listens; sets $emu (its pid)
# and $emu_url (its base URL).
cloud_emu() {
	_pf=$1 _lf=$2
	shift 2
	"$top_builddir/tests/mdemu" -p "$_pf" -l "$_lf" "$@" &
	emu=$!
	_i=0
	while [ ! -s "$_pf" ] && [ $_i -lt 100 ]; do sleep 0.05; _i=$((_i + 1)); done
	emu_url=http://127.0.0.1:$(cat "$_pf")
}

# cloud_job DIR NAME PROVIDER [STEPS [DELAY [MARGIN]]]: DIR/job.sh, a job of
# STEPS (default 40) steps of 0.1 s that answers checkpoint requests with
# its step (resuming from it): it writes the step file, takes DELAY seconds
# (default 0) to finish writing, then notes the time in
# DIR/local/done-times and writes the done marker (the step and the seq of
# the request it read); and DIR/job.ini running
# it with that provider, the store and local dir in DIR, margin = MARGIN
# (default 1s). [provider] comes last: a test may append its keys. Once
# started the job creates DIR/local/started, at step 5 DIR/local/at-step-5:
# `cloud_emu ... -C FILE` times the emulator's events from there, not from
# its own start, so that a job started late on a loaded machine still gets
# there first.
cloud_job() {
	cat >"$1/job.sh" <<'SH'
steps=${1:-40} delay=${2:-0}
step=0
[ -n "${SPOTRUN_RESUME_STEP:-}" ] && step=$(cat "$SPOTRUN_CKPT_DIR/step") && echo "resumed at $step"
: >"$SPOTRUN_CKPT_DIR/../started"
while [ "$step" -lt "$steps" ]; do
	if [ -f "$SPOTRUN_CKPT_REQUEST" ]; then
		seq=$(sed -n 's/^seq=\([0-9]*\) .*/\1/p' "$SPOTRUN_CKPT_REQUEST" 2>/dev/null)
		echo "$step" >"$SPOTRUN_CKPT_DIR/step"; [ "$delay" = 0 ] || sleep "$delay"
		date +%s.%N >>"$SPOTRUN_CKPT_DIR/../done-times"
		echo "$step${seq:+ seq=$seq}" >"$SPOTRUN_CKPT_DONE.t"; mv "$SPOTRUN_CKPT_DONE.t" "$SPOTRUN_CKPT_DONE"
	fi
	step=$((step + 1)); sleep 0.1
	[ "$step" = 5 ] && : >"$SPOTRUN_CKPT_DIR/../at-step-5"
done
echo "done at $step"
SH
	printf '[job]\nname = %s\ncommand = /bin/sh %s/job.sh %s %s\n[checkpoint]\nsignal = none\nstore = %s/store\nlocal_dir = %s/local\nmargin = %s\n[provider]\nname = %s\n' \
		"$2" "$1" "${4:-40}" "${5:-0}" "$1" "$1" "${6:-1s}" "$3" >"$1/job.ini"
}

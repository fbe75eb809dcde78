# ec2emu-env.sh: sourced by the shell tests that run spotrun against moto
# (t54-up-aws.sh, t58-scale-aws.sh). With $tmp (the test's folder) and
# $top_srcdir set, `ec2emu_start ARGS...` starts tests/ec2emu.py (ARGS
# passed on), waits for its port, sets $ep (its URL) and $emu_pid (kill
# it in the test's cleanup), and exports what points every AWS client at
# it with keys of no account: no config file, no instance role.
# `ec2emu_have_moto` is 0 when this Python has moto and boto3; else it
# prints the TAP skip (or, with SPOTRUN_TEST_REQUIRE_MOTO=1, the failure)
# and the test exits with its status ($ec2emu_exit).
ec2emu_have_moto() {
	python3 -c 'import moto, boto3' >/dev/null 2>&1 && return 0
	if [ "${SPOTRUN_TEST_REQUIRE_MOTO:-}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - moto is not installed in this Python (python3 -m moto.server), and SPOTRUN_TEST_REQUIRE_MOTO=1"
		ec2emu_exit=1
	else
		echo "1..0 # SKIP moto is not installed in this Python (python3 -m moto.server)"
		ec2emu_exit=0
	fi
	return 1
}

ec2emu_start() {
	python3 "$top_srcdir/tests/ec2emu.py" --port-file "$tmp/port" "$@" 2> "$tmp/emu.err" &
	emu_pid=$!
	_i=0
	while [ ! -s "$tmp/port" ] && [ $_i -lt 600 ]; do
		kill -0 "$emu_pid" 2>/dev/null || break
		sleep 0.2
		_i=$((_i + 1))
	done
	if [ ! -s "$tmp/port" ]; then
		echo "Bail out! tests/ec2emu.py did not start: $(tail -3 "$tmp/emu.err")"
		exit 1
	fi
	ep=http://127.0.0.1:$(cat "$tmp/port")
	export AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
	export AWS_REGION=us-east-1 AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
	export AWS_EC2_METADATA_DISABLED=true
	export AWS_ENDPOINT_URL_EC2=$ep AWS_ENDPOINT_URL_SSM=$ep AWS_ENDPOINT_URL_S3=$ep
	unset AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_REGION AWS_ENDPOINT_URL SPOTRUN_EC2_ENDPOINT
	unset SPOTRUN_QUEUE
}

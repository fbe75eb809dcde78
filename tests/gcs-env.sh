# tests/gcs-env.sh: sourced, after lib.sh and t_setup, by the shell tests of
# gs:// against tests/gcsemu.py (our emulator of GCS's XML API).
#
#   gcs_start TAG BUCKET [GCSEMU-OPTIONS...]
#       starts the emulator on loopback with bucket BUCKET and an HMAC key
#       pair shaped like GCS's (in $t_tmp/keys, the secret made from TAG),
#       its request log in $t_tmp/requests.log, and the options given
#       (--log-times, --object-rate 1); exports the pair as gsutil reads it
#       (GS_ACCESS_KEY_ID, GS_SECRET_ACCESS_KEY), with nothing of AWS's set
#       for spotrun to find instead; sets access, secret, emu (its pid) and
#       port. Bails out when it does not start.
gcs_start() {
	_tag=$1 _bucket=$2
	shift 2
	access=GOOG1EQX7TESTSPOTRUNEMULATORACCESSIDFORGCSHMACKEYS0123456789AB
	secret="$_tag+Secret/For/The/GCS/Emulator/0123456"
	printf '%s %s\n' "$access" "$secret" > "$t_tmp/keys"
	t_bg gcsemu "$PY" "$top_srcdir/tests/gcsemu.py" --port-file "$t_tmp/port" \
	    --keys "$t_tmp/keys" --bucket "$_bucket" --log "$t_tmp/requests.log" "$@"
	emu=$t_last
	wait_for "$t_tmp/port" '^[0-9]+$' 10 "$emu" ||
	    { t_show "$t_tmp/gcsemu.err"; t_bail "gcsemu.py did not start"; }
	port=$(cat "$t_tmp/port")
	export GS_ACCESS_KEY_ID="$access" GS_SECRET_ACCESS_KEY="$secret" BOTO_CONFIG=/dev/null
	unset GS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN \
	    AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 \
	    AWS_CA_BUNDLE 2>/dev/null
	export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null \
	    AWS_EC2_METADATA_DISABLED=true
}

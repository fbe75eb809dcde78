# tests/s3-env.sh: sourced by the shell tests that need a real S3 server
# (build-aux/test-all starts Ceph RGW with tests/rgw.sh and exports its
# SPOTRUN_TEST_S3_ENDPOINT, _ACCESS_KEY, _SECRET_KEY and _REGION).
#
# Without a server the test is skipped (whole-file TAP skip), unless
# SPOTRUN_TEST_REQUIRE_S3=1 (test-all sets it): then it fails, so that an RGW
# that did not start cannot pass for a green run.
#
# It offers:
#   s3_aws ARGS...          the aws CLI against the server (keys in its env,
#                           never on a command line)
#   s3_bucket_new           create a bucket with a unique name, print the name
#   s3_bucket_rm NAME       remove the bucket, its objects and its uploads
#   s3_curl ARGS...         curl with SigV4 for the server (the keys go
#                           in on stdin: send bodies from files, -T FILE)
#   s3_curl_secret SECRET ARGS...   the same, signed with SECRET
#   s3_spotrun_keys         export the server's keys for spotrun, as the aws
#                           CLI's environment variables, with no config file
#                           or instance role to find others in
# The aws CLI 1.x crashes on RGW's empty error <Message>: check error
# replies with s3_curl.

# s3_unavailable WHY: skip the test, or fail it when S3 is required.
s3_unavailable()
{
	if [ "${SPOTRUN_TEST_REQUIRE_S3:-}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - $1, and SPOTRUN_TEST_REQUIRE_S3=1: build-aux/test-all could not start Ceph RGW (see its output)"
		exit 1
	fi
	echo "1..0 # SKIP $1"
	exit 0
}

if [ -z "${SPOTRUN_TEST_S3_ENDPOINT:-}" ]; then
	s3_unavailable "no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset; build-aux/test-all starts Ceph RGW)"
fi
command -v aws >/dev/null 2>&1 ||
    s3_unavailable "no aws CLI on PATH (build-aux/install-deps installs awscli)"
command -v curl >/dev/null 2>&1 ||
    s3_unavailable "no curl on PATH (build-aux/install-deps installs it)"
: "${SPOTRUN_TEST_S3_REGION:=us-east-1}"

s3_aws()
{
	AWS_ACCESS_KEY_ID=$SPOTRUN_TEST_S3_ACCESS_KEY \
	AWS_SECRET_ACCESS_KEY=$SPOTRUN_TEST_S3_SECRET_KEY \
	AWS_DEFAULT_REGION=$SPOTRUN_TEST_S3_REGION \
	AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null \
	AWS_EC2_METADATA_DISABLED=true \
	    aws --endpoint-url "$SPOTRUN_TEST_S3_ENDPOINT" "$@"
}

s3_bucket_new()
{
	# DNS-style: lower case, digits and '-', at most 63 characters.
	_s3_name=$(basename "$0" .sh | tr 'A-Z_.' 'a-z--' | tr -dc 'a-z0-9-' |
	    cut -c1-24)
	_s3_name=spotrun-$_s3_name-$$-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
	s3_aws s3api create-bucket --bucket "$_s3_name" >/dev/null || return 1
	echo "$_s3_name"
}

s3_bucket_rm()
{
	[ -n "$1" ] || return 0
	s3_aws s3api list-multipart-uploads --bucket "$1" \
	    --query 'Uploads[].[Key,UploadId]' --output text 2>/dev/null |
	    while read -r _s3_key _s3_id; do
		[ "$_s3_key" = None ] && continue
		s3_aws s3api abort-multipart-upload --bucket "$1" \
		    --key "$_s3_key" --upload-id "$_s3_id" >/dev/null 2>&1
	    done
	s3_aws s3 rb --force "s3://$1" >/dev/null 2>&1
}

s3_curl_secret()
{
	_s3_secret=$1
	shift
	# The user:secret goes through a config file on stdin, not argv. curl
	# 7.88 sends no x-amz-content-sha256, which RGW requires (403
	# SignatureDoesNotMatch without it): give it one to sign.
	printf 'user = "%s:%s"\n' "$SPOTRUN_TEST_S3_ACCESS_KEY" "$_s3_secret" |
	    curl -K - --aws-sigv4 "aws:amz:$SPOTRUN_TEST_S3_REGION:s3" \
	    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}

s3_spotrun_keys()
{
	export AWS_ACCESS_KEY_ID="$SPOTRUN_TEST_S3_ACCESS_KEY"
	export AWS_SECRET_ACCESS_KEY="$SPOTRUN_TEST_S3_SECRET_KEY"
	export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
	export AWS_EC2_METADATA_DISABLED=true
	unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 2>/dev/null || true
}

s3_curl()
{
	s3_curl_secret "$SPOTRUN_TEST_S3_SECRET_KEY" "$@"
}

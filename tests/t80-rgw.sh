#!/bin/sh
# t80-rgw.sh: the S3 server the tests run against is a real one - it
# verifies signatures and honours conditional writes - so that the S3 tests
# that pass against it mean something. Also checks tests/s3-env.sh's bucket
# helpers. Skipped without a server (see tests/s3-env.sh).
set -u
. "$top_srcdir/tests/s3-env.sh"
tmp=$(mktemp -d)
bucket=
trap 's3_bucket_rm "$bucket"; rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; [ -f "$tmp/body" ] && sed 's/^/# /' "$tmp/body" | head -n 5; }
check() { if [ "$1" = "$2" ]; then ok "$3"; else nok "$3: got '$1', want '$2'"; fi; }
echo "1..8"

# put KEY FILE [CURL ARGS...]: PUT FILE as KEY; prints the HTTP status, the
# reply body in $tmp/body.
put()
{
	_key=$1 _file=$2
	shift 2
	s3_curl -s -o "$tmp/body" -w '%{http_code}' -T "$_file" "$@" \
	    "$SPOTRUN_TEST_S3_ENDPOINT/$bucket/$_key"
}

bucket=$(s3_bucket_new)
check $? 0 "s3_bucket_new creates a bucket"
case $bucket in
spotrun-t80-rgw-$$-????????) ok "its name is unique: $bucket" ;;
*) nok "bucket name '$bucket'" ;;
esac

printf 'first\n' >"$tmp/a"
printf 'second\n' >"$tmp/b"
check "$(put k "$tmp/a")" 200 "a signed PUT is accepted"
# A wrong secret must not pass: the server checks SigV4 signatures.
st=$(s3_curl_secret "wrong-$SPOTRUN_TEST_S3_SECRET_KEY" -s -o "$tmp/body" \
    -w '%{http_code}' -T "$tmp/b" "$SPOTRUN_TEST_S3_ENDPOINT/$bucket/k")
check "$st $(grep -o '<Code>[A-Za-z]*</Code>' "$tmp/body")" \
    "403 <Code>SignatureDoesNotMatch</Code>" "a PUT with a wrong secret: 403 SignatureDoesNotMatch"

# Create-only writes: the second one must fail, the first body stays.
check "$(put c "$tmp/a" -H 'If-None-Match: *')" 200 "If-None-Match: * on a new key: 200"
st=$(put c "$tmp/b" -H 'If-None-Match: *')
check "$st $(grep -o '<Code>[A-Za-z]*</Code>' "$tmp/body")" \
    "412 <Code>PreconditionFailed</Code>" "If-None-Match: * on an existing key: 412 PreconditionFailed"
s3_curl -s -o "$tmp/got" "$SPOTRUN_TEST_S3_ENDPOINT/$bucket/c"
cmp -s "$tmp/got" "$tmp/a" && ok "the first write is what is stored" ||
    nok "stored: '$(cat "$tmp/got")'"

s3_bucket_rm "$bucket"
check "$(s3_curl -s -o /dev/null -w '%{http_code}' "$SPOTRUN_TEST_S3_ENDPOINT/$bucket/c")" \
    404 "s3_bucket_rm removes the bucket and its objects"
bucket=

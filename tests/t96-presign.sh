#!/bin/sh
# t96-presign.sh: `spotrun cloud-init` without --source against real
# servers on loopback: the binary put into the queue's store under
# bin/spotrun-VERSION-SHA16 and fetched back with the presigned URL by a
# plain curl, byte-exact, from Ceph RGW (SigV4 query signing, HTTPS) and
# Azurite (a service SAS, which Azurite verifies); a tampered URL gets 403
# from both. The generated install script's fetch-and-verify part (up to
# its sha256sum -c) run as the VM runs it, with the real URL, installs;
# with a wrong checksum it stops before installing anything. gs://
# against tests/gcsemu.py, which takes no signed URLs: the GOOG4 signed
# URL is recomputed here with Python's hmac/hashlib from GCS's documented
# canonical request and must match. A file:// queue is refused.
# RGW and Azurite parts skip when their server is not there.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/gcs-env.sh"
t_setup
unset SPOTRUN_QUEUE AZURE_STORAGE_CONNECTION_STRING AZURE_STORAGE_SAS_TOKEN
sum=$(sha256sum < "$SPOTRUN" | cut -c1-64)
ver=$("$SPOTRUN" --version | sed 's/^spotrun //')

# s_like STRING BRE DESC: STRING matches the basic regular expression.
s_like() {
	if printf '%s\n' "$1" | grep -q -- "$2"; then
		t_result 0 "$3"
	else
		t_result 1 "$3"
		t_diag "got: '$1'" "want: /$2/"
	fi
}
# ud_url FILE: the url='...' of the user-data's install script.
ud_url() { sed -n "s/^      url='\(.*\)'\$/\1/p" "$1"; }
# fetch_part FILE DIR: the install script's lines up to its sha256sum -c,
# into DIR/fetch.sh, fetching into DIR/work instead of /var/tmp.
fetch_part() {
	"$PY" -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print([f["content"] for f in d["write_files"] if f["path"].endswith("spotrun-install")][0], end="")' \
	    "$1" | sed -e "s|^dir=/var/tmp/spotrun-bin\$|dir=$2/work|" -e '/sha256sum -c/q' \
	    > "$2/fetch.sh"
}

# ---- s3:// on RGW, over HTTPS ----
if [ -n "${SPOTRUN_TEST_S3_TLS_ENDPOINT:-}" ] && command -v aws >/dev/null 2>&1; then
	. "$top_srcdir/tests/s3-env.sh"
	bucket=t96-$$-$(date +%s)
	s3_aws s3 mb "s3://$bucket" >/dev/null 2>&1 || t_bail "aws s3 mb failed"
	(
	export AWS_ACCESS_KEY_ID=$SPOTRUN_TEST_S3_ACCESS_KEY \
	    AWS_SECRET_ACCESS_KEY=$SPOTRUN_TEST_S3_SECRET_KEY AWS_CONFIG_FILE=/dev/null \
	    AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true \
	    AWS_CA_BUNDLE=$SPOTRUN_TEST_S3_CA
	"$SPOTRUN" cloud-init --queue "s3://$bucket/q?endpoint=$SPOTRUN_TEST_S3_TLS_ENDPOINT" \
	    --url-expires 1h > "$t_tmp/s3.yaml" 2> "$t_tmp/s3.err"
	) > "$t_tmp/s3.rc" 2>&1
	t_is "$(cat "$t_tmp/s3.err")" "" "s3: cloud-init without --source says nothing on stderr"
	url=$(ud_url "$t_tmp/s3.yaml")
	s_like "$url" "^$SPOTRUN_TEST_S3_TLS_ENDPOINT/$bucket/q/bin/spotrun-$ver-$(echo "$sum" | cut -c1-16)?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=$SPOTRUN_TEST_S3_ACCESS_KEY%2F[0-9]\{8\}%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=[0-9]\{8\}T[0-9]\{6\}Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=[0-9a-f]\{64\}\$" \
	    "s3: the URL is SigV4 query-signed, content-addressed, 1 h"
	t_has "$t_tmp/s3.yaml" "      sum=$sum" "s3: the user-data checks spotrun's own SHA-256"
	code=$(curl -sS --cacert "$SPOTRUN_TEST_S3_CA" -o "$t_tmp/s3.bin" -w '%{http_code}' "$url")
	t_is "$code $(sha256sum < "$t_tmp/s3.bin" | cut -c1-64)" "200 $sum" \
	    "s3: a plain curl of the URL gets the binary, byte-exact"
	bad=$(printf '%s' "$url" | sed 's/\(X-Amz-Expires=\)3600/\13601/')
	t_is "$(curl -sS --cacert "$SPOTRUN_TEST_S3_CA" -o /dev/null -w '%{http_code}' "$bad")" \
	    403 "s3: a tampered URL (its expiry lengthened) gets 403"
	mkdir -p "$t_tmp/s3run"
	fetch_part "$t_tmp/s3.yaml" "$t_tmp/s3run"
	CURL_CA_BUNDLE=$SPOTRUN_TEST_S3_CA sh "$t_tmp/s3run/fetch.sh" > "$t_tmp/s3run/out" 2>&1
	t_is "$? $(cat "$t_tmp/s3run/out") $(cmp "$t_tmp/s3run/work/spotrun" "$SPOTRUN" && echo same)" \
	    "0 spotrun: OK same" "s3: the install script's fetch and sha256sum -c pass"
	sed "s/^sum=.*/sum=$(printf '%064d' 0)/" "$t_tmp/s3run/fetch.sh" > "$t_tmp/s3run/bad.sh"
	printf 'echo INSTALLED\n' >> "$t_tmp/s3run/bad.sh"
	CURL_CA_BUNDLE=$SPOTRUN_TEST_S3_CA sh "$t_tmp/s3run/bad.sh" > "$t_tmp/s3run/bad.out" 2>&1
	t_is "$? $(tr '\n' ' ' < "$t_tmp/s3run/bad.out")" \
	    "1 spotrun: FAILED sha256sum: WARNING: 1 computed checksum did NOT match " \
	    "s3: a wrong checksum stops the script before it installs"
	before=$(s3_aws s3api head-object --bucket "$bucket" --key "q/bin/spotrun-$ver-$(echo "$sum" | cut -c1-16)" --query ETag --output text 2>&1)
	s_like "$before" '^"[0-9a-f]\{32\}"$' "s3: the object is there under its content's key"
else
	t_skip "no RGW with TLS (build-aux/test-all starts it)"
fi

# ---- az:// on Azurite ----
if [ -n "${SPOTRUN_TEST_AZ_ENDPOINT:-}" ]; then
	. "$top_srcdir/tests/az-env.sh"
	az_cli storage container create -n t96 -o none >/dev/null 2>&1
	AZURE_STORAGE_KEY=$SPOTRUN_TEST_AZ_KEY "$SPOTRUN" cloud-init \
	    --queue "az://$SPOTRUN_TEST_AZ_ACCOUNT/t96/q?endpoint=$SPOTRUN_TEST_AZ_ENDPOINT" \
	    > "$t_tmp/az.yaml" 2> "$t_tmp/az.err"
	t_is "$?$(cat "$t_tmp/az.err")" 0 "az: cloud-init without --source"
	url=$(ud_url "$t_tmp/az.yaml")
	s_like "$url" "^$SPOTRUN_TEST_AZ_ENDPOINT/t96/q/bin/spotrun-$ver-[0-9a-f]\{16\}?sv=2021-08-06&sr=b&sp=r&se=[0-9-]\{10\}T[0-9]\{2\}%3A[0-9]\{2\}%3A[0-9]\{2\}Z&sig=[A-Za-z0-9%]*\$" \
	    "az: the URL carries a read-only service SAS"
	code=$(curl -sS -o "$t_tmp/az.bin" -w '%{http_code}' "$url")
	t_is "$code $(sha256sum < "$t_tmp/az.bin" | cut -c1-64)" "200 $sum" \
	    "az: Azurite verifies the SAS and serves the binary, byte-exact"
	bad=$(printf '%s' "$url" | sed 's/sp=r/sp=rw/')
	t_is "$(curl -sS -o /dev/null -w '%{http_code}' "$bad")" 403 \
	    "az: a tampered SAS (sp=rw) gets 403"
else
	t_skip "no Azurite (build-aux/test-all starts it)"
fi

# ---- gs:// on gcsemu: the GOOG4 signature recomputed ----
gcs_start t96 spotrun-t96
"$SPOTRUN" cloud-init --queue "gs://spotrun-t96/q?endpoint=http://127.0.0.1:$port" \
    > "$t_tmp/gs.yaml" 2> "$t_tmp/gs.err"
t_is "$?" 0 "gs: cloud-init without --source"
url=$(ud_url "$t_tmp/gs.yaml")
got=$("$PY" - "$url" "$access" "$secret" <<'PYEOF'
import hashlib, hmac, sys, urllib.parse
url, access, secret = sys.argv[1:]
u = urllib.parse.urlsplit(url)
q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
sig = q.pop("X-Goog-Signature")
date = q["X-Goog-Date"]
scope = "%s/auto/storage/goog4_request" % date[:8]
assert q["X-Goog-Credential"] == access + "/" + scope, q["X-Goog-Credential"]
assert q["X-Goog-Algorithm"] == "GOOG4-HMAC-SHA256" and q["X-Goog-SignedHeaders"] == "host"
cq = "&".join("%s=%s" % (urllib.parse.quote(k, safe="-_.~"), urllib.parse.quote(v, safe="-_.~"))
    for k, v in sorted(q.items()))
creq = "\n".join(["GET", u.path, cq, "host:" + u.netloc + "\n", "host", "UNSIGNED-PAYLOAD"])
sts = "\n".join(["GOOG4-HMAC-SHA256", date, scope, hashlib.sha256(creq.encode()).hexdigest()])
k = ("GOOG4" + secret).encode()
for m in (date[:8], "auto", "storage", "goog4_request"):
	k = hmac.new(k, m.encode(), hashlib.sha256).digest()
want = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
print("match" if want == sig else "differ: " + sts.replace("\n", "|"), q["X-Goog-Expires"])
PYEOF
)
t_is "$got" "match 604800" "gs: the GOOG4-HMAC-SHA256 signature is GCS's, 7 days by default"
s_like "$url" "^http://127.0.0.1:$port/spotrun-t96/q/bin/spotrun-$ver-" \
    "gs: the URL is path-style on the endpoint"

# ---- file:// ----
"$SPOTRUN" cloud-init --queue "file://$t_tmp/q" > /dev/null 2> "$t_tmp/f.err"
t_is "$? $(cat "$t_tmp/f.err")" "64 spotrun cloud-init: --queue file://$t_tmp/q is a directory of this machine: a VM cannot fetch spotrun's binary from it; give --source (a git repository or a source tarball) to build it there" \
    "file://: refused without --source"
t_done

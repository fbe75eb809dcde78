#!/bin/sh
# tests/rgw.sh: a real S3 server for the tests - Ceph's RADOS Gateway on
# loopback: one ceph-mon, one memstore OSD (the data lives in RAM) and
# radosgw, cephx off, every file under STATEDIR, ports picked free.
# build-aux/test-all starts it around `make -k check`; tests read its address
# and keys from the environment (tests/s3-env.sh).
#
#   tests/rgw.sh start STATEDIR [--tls]    start; write STATEDIR/env (~1.5 s);
#                                          --tls: serve HTTPS too (below)
#   tests/rgw.sh stop STATEDIR             SIGKILL what `start` started (by
#                                          PID); STATEDIR stays (logs)
#   tests/rgw.sh restart-gateway STATEDIR  SIGKILL radosgw, start it again on
#                                          the same port, wait until it
#                                          answers (~0.2 s); also after
#                                          stop-gateway. Object requests go
#                                          on at once; the next bucket
#                                          create or delete waits ~20 s
#                                          for the killed one's watches to
#                                          expire
#   tests/rgw.sh stop-gateway STATEDIR     SIGKILL radosgw and leave it down
#                                          (a store that is unreachable)
#   tests/rgw.sh wait STATEDIR             wait until the gateway answers
#   tests/rgw.sh config STATEDIR OPTION VALUE
#                                          change a radosgw option at run time
#                                          (through its admin socket), e.g.
#                                          rgw_multipart_min_part_size 65536
#
# STATEDIR/env: `export SPOTRUN_TEST_S3_ENDPOINT=http://127.0.0.1:PORT` and
# the ..._ACCESS_KEY, ..._SECRET_KEY and ..._REGION (us-east-1) of a fresh S3
# user with random keys; and SPOTRUN_TEST_S3_LIMITED_USER, _ACCESS_KEY and
# _SECRET_KEY: a second user that may create no bucket (max-buckets -1)
# and owns none, so that it reaches only what a bucket policy of the first
# user's grants it (principal arn:aws:iam:::user/NAME; t98-s3-policy.sh).
# Logs: STATEDIR/log/. SPOTRUN_RGW_MIN_PART=BYTES at start lowers the
# multipart minimum part size (default 5 MiB, as AWS).
# With --tls the gateway also serves HTTPS on a second port, with a
# certificate for 127.0.0.1 and localhost signed by a CA made at start
# (openssl, EC P-256, ~0.1 s; files in STATEDIR/tls/), and env adds
# SPOTRUN_TEST_S3_TLS_ENDPOINT=https://127.0.0.1:PORT and
# SPOTRUN_TEST_S3_CA=STATEDIR/tls/ca.pem (the CA to trust, PEM).
#
# How this RGW (Ceph 16.2.15 pacific, Debian 12) answers, probed with
# botocore's signer + urllib and curl; S3 clients must cope with each:
# - Region: the zonegroup's api_name is set to us-east-1 (start does it). RGW
#   does not check the region of the SigV4 credential scope at all: it signs
#   with whatever region the request names, so a wrong region is accepted
#   (200), never 400 AuthorizationHeaderMalformed - that code is not even in
#   libradosgw.so.2 - and no api_name setting changes this. api_name matters
#   only to CreateBucket: a LocationConstraint other than it -> 400
#   InvalidLocationConstraint; none, or "us-east-1" -> 200.
# - Clock skew: x-amz-date 20 min off (either way) -> 403
#   RequestTimeTooSkewed; 14 min off -> 200 (limit 15 min).
# - Wrong secret -> 403 SignatureDoesNotMatch; unknown access key -> 403
#   InvalidAccessKeyId; no x-amz-content-sha256 header -> 403
#   SignatureDoesNotMatch; a wrong payload hash -> 400
#   XAmzContentSHA256Mismatch; UNSIGNED-PAYLOAD -> 200; a wrong Content-MD5
#   on PUT -> 400 BadDigest. A query value sent raw ("prefix=a/") while
#   signed encoded ("a%2F") -> 403 SignatureDoesNotMatch: send it encoded.
# - Error bodies have an empty <Message></Message> (aws CLI 1.x crashes on
#   them) and <Code>, <RequestId>, <HostId>, often <BucketName>.
# - PUT If-None-Match: * -> 200, then 412 PreconditionFailed when the key
#   exists. PUT If-Match: the current ETag unquoted -> 200, quoted ("...")
#   -> 412 even though it is current, stale -> 412, missing key -> 412,
#   "*" on an existing key -> 200. If-None-Match: <etag> on PUT is ignored.
#   GET If-Match takes either form; GET If-None-Match: current -> 304.
# - ETag: a quoted lower-case hex MD5 ("f97c5d29..."); multipart:
#   "<MD5 of the parts' binary MD5s>-N". CompleteMultipartUpload answers 200
#   with an empty <ETag></ETag> and no ETag header: HEAD for it. It ignores
#   If-None-Match: * (overwrites an existing key, 200).
# - ListObjectsV2: 1000 keys a page at most (max-keys=2000 answers
#   <MaxKeys>1000</MaxKeys>), <IsTruncated>true</IsTruncated>, and the
#   NextContinuationToken is the last key itself (not opaque).
# - Multipart: rgw_multipart_min_part_size is 5 MiB by default; a smaller
#   part that is not the last -> 400 EntityTooSmall at
#   CompleteMultipartUpload (UploadPart takes it). It can be lowered for fast
#   tests: SPOTRUN_RGW_MIN_PART at start, or `config` at run time.
# - Nagle: beast's tcp_nodelay is off (RGW's default, kept here): a reply's
#   headers and body are two writes, and the body waits for the headers'
#   ACK, which a client on a kept connection delays 40 ms unless it sets
#   TCP_QUICKACK (store/conns.c does). curl(1): 20 ranged GETs of 4 KiB on
#   one connection, 42 ms each; with tcp_nodelay=1 in `rgw frontends`,
#   0.9 ms.
# - Bucket policies (PutBucketPolicy) apply at once, to a principal
#   "arn:aws:iam:::user/NAME". A user made with --max-buckets=-1 gets 403 on
#   CreateBucket. s3:ListBucket with {"StringLike": {"s3:prefix": "q/*"}}:
#   a list with prefix q/ -> 200, r/ -> 403; but a GET or HEAD of a missing
#   key under q/ then -> 403 AccessDenied, not 404 (the request has no
#   s3:prefix); with StringLikeIfExists -> 404, and a list without any
#   prefix -> 200 (doc/aws.md).
# - DeleteObjects (POST ?delete): Content-MD5 is not checked - none, a right
#   one and a wrong one all -> 200 and the keys are deleted (AWS requires
#   it: send it anyway).
set -eu

region=us-east-1
. "$(dirname "$0")/daemon-util.sh"

die()
{
	echo "rgw.sh: $*" >&2
	exit 1
}

# rand_key LEN: LEN random alphanumerics (an S3 key must survive a shell).
rand_key()
{
	head -c 256 /dev/urandom | tr -dc 'A-Za-z0-9' | head -c "$1"
}

# ours PID: is PID a daemon of this STATEDIR (not a later process that
# reused the number)?
ours()
{
	tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -qF -- "-c $st/ceph.conf "
}

# ceph_q ARGS...: a ceph CLI call that gives up instead of hanging on a
# monitor that is not up.
ceph_q()
{
	ceph -c "$st/ceph.conf" --connect-timeout 5 "$@"
}

# write_conf MON_PORT RGW_PORT [TLS_PORT]: STATEDIR/ceph.conf for a one-OSD
# cluster; with TLS_PORT the gateway serves HTTPS there too.
write_conf()
{
	_ssl=
	[ -z "${3:-}" ] || _ssl=" ssl_endpoint=127.0.0.1:$3 ssl_certificate=$st/tls/server.pem ssl_private_key=$st/tls/server.key"
	cat >"$st/ceph.conf" <<EOF
[global]
fsid = $(cat /proc/sys/kernel/random/uuid)
mon host = [v2:127.0.0.1:$1]
mon initial members = a
public network = 127.0.0.0/8
auth cluster required = none
auth service required = none
auth client required = none
# radosgw asks for "secure" mode towards the monitor, which auth "none"
# cannot give (its connection fails with -13, EACCES).
ms mon client mode = crc
run dir = $st/run
admin socket = $st/run/\$name.asok
log file = $st/log/\$name.log
keyring = $st/keyring
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
mon data avail warn = 1
osd crush chooseleaf type = 0
osd fast shutdown notify mon = false
[mon]
mon data = $st/mon-a
# Each monitor update (a pool, an OSD) otherwise waits out a 1 s batching
# interval; radosgw's first start makes ~10 of them.
paxos propose interval = 0.01
paxos min wait = 0.001
[osd]
osd data = $st/osd0
osd objectstore = memstore
memstore device bytes = ${SPOTRUN_RGW_MEMSTORE_BYTES:-4294967296}
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$2$_ssl
rgw data = $st/rgw
rgw multipart min part size = ${SPOTRUN_RGW_MIN_PART:-5242880}
EOF
}

# start_mon: create and start the monitor; wait until it answers.
start_mon()
{
	_mport=$(sed -n 's/^mon host = \[v2:127.0.0.1:\([0-9]*\)\]$/\1/p' "$st/ceph.conf")
	_fsid=$(sed -n 's/^fsid = //p' "$st/ceph.conf")
	ceph-authtool --create-keyring "$st/keyring" --gen-key -n mon. \
	    --cap mon 'allow *' >/dev/null
	# msgr2 only, spelled out (monmaptool takes a port other than 6789 for
	# v2 anyway): with a v1 monitor on such a port the OSD's first command
	# can go out before the monitor map, with fsid 0, and the OSD exits.
	monmaptool --create --addv a "[v2:127.0.0.1:$_mport]" --fsid "$_fsid" \
	    "$st/monmap" >/dev/null
	ceph-mon -c "$st/ceph.conf" --mkfs -i a --monmap "$st/monmap" \
	    --keyring "$st/keyring" >"$st/log/mon-mkfs.out" 2>&1 ||
	    die "ceph-mon --mkfs failed: see $st/log/mon-mkfs.out"
	bg mon ceph-mon -c "$st/ceph.conf" -i a -f
	for _ in $(seq 1 100); do
		ceph_q mon stat >/dev/null 2>&1 && return 0
		# its own reason where it logged one (a disk under 5% free:
		# "monitor data filesystem reached concerning levels")
		alive mon || die "ceph-mon exited$(sed -n 's/.* -1 error: /: /p' \
		    "$st/log/mon.a.log" 2>/dev/null | tail -n 1): see $st/log/mon.out, $st/log/mon.a.log"
		sleep 0.1
	done
	die "ceph-mon on port $_mport does not answer: see $st/log/mon.a.log"
}

# start_osd: create and start the memstore OSD; wait until it is up.
start_osd()
{
	_uuid=$(cat /proc/sys/kernel/random/uuid)
	_id=$(ceph_q osd new "$_uuid") || die "ceph osd new failed"
	echo "$_id" >"$st/osd.id"
	ceph-osd -c "$st/ceph.conf" -i "$_id" --mkfs --osd-uuid "$_uuid" \
	    >"$st/log/osd-mkfs.out" 2>&1 ||
	    die "ceph-osd --mkfs failed: see $st/log/osd-mkfs.out"
	bg osd ceph-osd -c "$st/ceph.conf" -i "$_id" -f
	for _ in $(seq 1 200); do
		ceph_q osd stat 2>/dev/null | grep -q ' 1 up' && return 0
		alive osd || die "ceph-osd exited: see $st/log/osd.out"
		sleep 0.1
	done
	die "the OSD is not up after 20 s: see $st/log/osd.$_id.log"
}

# start_rgw: start radosgw on the port in ceph.conf.
start_rgw()
{
	bg rgw radosgw -c "$st/ceph.conf" -n client.rgw.a -f
}

# wait_rgw: wait until the gateway answers HTTP (up to 60 s).
wait_rgw()
{
	_url=$(sed -n 's/^export SPOTRUN_TEST_S3_ENDPOINT=//p' "$st/env" 2>/dev/null) ||
	    true
	[ -n "$_url" ] || _url=http://127.0.0.1:$(rgw_port)
	_tls=$(tls_port)
	for _ in $(seq 1 600); do
		if curl -s -o /dev/null "$_url/"; then
			[ -z "$_tls" ] && return 0
			curl -s -o /dev/null --cacert "$st/tls/ca.pem" \
			    "https://127.0.0.1:$_tls/" && return 0
		fi
		alive rgw || die "radosgw exited: see $st/log/rgw.out, $st/log/client.rgw.a.log"
		sleep 0.1
	done
	die "radosgw at $_url does not answer after 60 s"
}

rgw_port()
{
	sed -n 's/^rgw frontends = beast endpoint=127.0.0.1:\([0-9]*\).*/\1/p' \
	    "$st/ceph.conf"
}

tls_port()
{
	sed -n 's/^rgw frontends = .* ssl_endpoint=127.0.0.1:\([0-9]*\) .*/\1/p' \
	    "$st/ceph.conf"
}

# admin ARGS...: radosgw-admin on this cluster.
admin()
{
	radosgw-admin -c "$st/ceph.conf" "$@"
}

# make_user: an S3 user with random keys; its address and keys to env.
make_user()
{
	_ak=$(rand_key 20)
	_sk=$(rand_key 40)
	admin user create --uid=spotrun-test --display-name=spotrun-test \
	    --access-key="$_ak" --secret-key="$_sk" >"$st/log/user.out" 2>&1 ||
	    die "radosgw-admin user create failed: see $st/log/user.out"
	cat >"$st/env.tmp" <<EOF
export SPOTRUN_TEST_S3_ENDPOINT=http://127.0.0.1:$(rgw_port)
export SPOTRUN_TEST_S3_ACCESS_KEY=$_ak
export SPOTRUN_TEST_S3_SECRET_KEY=$_sk
export SPOTRUN_TEST_S3_REGION=$region
EOF
	if [ -n "$(tls_port)" ]; then
		cat >>"$st/env.tmp" <<EOF
export SPOTRUN_TEST_S3_TLS_ENDPOINT=https://127.0.0.1:$(tls_port)
export SPOTRUN_TEST_S3_CA=$st/tls/ca.pem
EOF
	fi
	make_limited_user
	mv "$st/env.tmp" "$st/env"
}

# make_limited_user: the second user of env (above), added to env.tmp.
make_limited_user()
{
	_ak=$(rand_key 20)
	_sk=$(rand_key 40)
	admin user create --uid=spotrun-limited --display-name=spotrun-limited \
	    --max-buckets=-1 --access-key="$_ak" --secret-key="$_sk" \
	    >"$st/log/user-limited.out" 2>&1 ||
	    die "radosgw-admin user create failed: see $st/log/user-limited.out"
	cat >>"$st/env.tmp" <<EOF
export SPOTRUN_TEST_S3_LIMITED_USER=spotrun-limited
export SPOTRUN_TEST_S3_LIMITED_ACCESS_KEY=$_ak
export SPOTRUN_TEST_S3_LIMITED_SECRET_KEY=$_sk
EOF
}

# set_api_name: name the default zonegroup $region, as AWS's us-east-1
# is, so that CreateBucket from clients configured for $region passes.
set_api_name()
{
	admin zonegroup modify --rgw-zonegroup=default --api-name="$region" \
	    >"$st/log/zonegroup.out" 2>&1 ||
	    die "radosgw-admin zonegroup modify failed: see $st/log/zonegroup.out"
}

cmd_start()
{
	[ ! -f "$st/mon.pid" ] || die "$st is in use: run 'tests/rgw.sh stop $st' first"
	command -v radosgw >/dev/null ||
	    die "radosgw is not installed: run build-aux/install-deps"
	mkdir -p "$st/mon-a" "$st/osd0" "$st/log" "$st/run" "$st/rgw"
	# A start that fails half-way, or is interrupted, leaves nothing running.
	trap cmd_stop EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	_ports=$(free_ports 3) || die "no free ports"
	_mon_port=$(echo "$_ports" | sed -n 1p)
	_rgw_port=$(echo "$_ports" | sed -n 2p)
	_tls_port=
	if [ "$tls" = 1 ]; then
		make_tls
		_tls_port=$(echo "$_ports" | sed -n 3p)
	fi
	write_conf "$_mon_port" "$_rgw_port" "$_tls_port"
	start_mon
	start_osd
	# The gateway reads the zonegroup when it starts, so name it first
	# (the user's creation makes the default zone). Starting the gateway
	# once only also keeps a killed first instance's watches on the
	# metadata objects from stalling the first CreateBucket until the OSD
	# drops them (~25 s).
	make_user
	set_api_name
	start_rgw
	wait_rgw
	trap - EXIT INT TERM
}

cmd_restart_gateway()
{
	[ -f "$st/mon.pid" ] || die "no cluster started in $st"
	kill_wait rgw
	start_rgw
	wait_rgw
}

cmd_stop_gateway()
{
	[ -f "$st/mon.pid" ] || die "no cluster started in $st"
	kill_wait rgw
}

cmd_stop()
{
	kill_wait rgw
	kill_wait osd
	kill_wait mon
}

[ $# -ge 2 ] ||
    die "usage: tests/rgw.sh start|stop|restart-gateway|stop-gateway|wait|config STATEDIR"
st=$2
tls=0
case $1 in
start)
	case ${3:-} in
	'') ;;
	--tls) tls=1 ;;
	*) die "usage: tests/rgw.sh start STATEDIR [--tls]" ;;
	esac
	mkdir -p "$st"
	;;
stop)
	[ -d "$st" ] || exit 0
	;;
esac
[ -d "$st" ] || die "no such directory: $st"
# Absolute, as in the daemons' command lines (see ours).
st=$(cd "$st" && pwd)
case $1 in
start)
	cmd_start
	;;
stop)
	cmd_stop
	;;
restart-gateway)
	cmd_restart_gateway
	;;
stop-gateway)
	cmd_stop_gateway
	;;
wait)
	wait_rgw
	;;
config)
	[ $# -eq 4 ] ||
	    die "usage: tests/rgw.sh config STATEDIR OPTION VALUE"
	ceph --admin-daemon "$st/run/client.rgw.a.asok" config set "$3" "$4" \
	    >/dev/null || die "cannot set $3 on radosgw in $st"
	;;
*)
	die "unknown command '$1': use start, stop, restart-gateway, stop-gateway, wait or config"
	;;
esac

#!/bin/sh
# tests/azurite.sh: a real Azure Blob endpoint for the tests - Azurite
# 3.35.0 (Microsoft's emulator, the last version that runs on Node 20) on
# loopback, with an account of its own and a random key, every file under
# STATEDIR, ports picked free. build-aux/test-all starts it around
# `make -k check`, as it starts Ceph RGW; tests read its address and key from
# the environment (tests/az-env.sh, tests/az-util.h).
#
#   tests/azurite.sh install             npm install azurite@3.35.0 into the
#                                        cache ($SPOTRUN_AZURITE_CACHE, else
#                                        /var/cache/spotrun-test/azurite),
#                                        unless it is there; needs npm and
#                                        the npm registry once per machine
#   tests/azurite.sh start STATEDIR [--tls|--strict]
#                                        start; write STATEDIR/env (~1.5 s).
#                                        --tls: a second Azurite on HTTPS
#                                        with OAuth on (--oauth basic: the
#                                        bearer tokens of a managed
#                                        identity, tests/mdemu -J), its
#                                        certificate signed by a CA made at
#                                        start. --strict: without --loose
#                                        (Azurite's default strict mode,
#                                        which refuses x-ms-content-crc64)
#   tests/azurite.sh stop STATEDIR       SIGKILL what `start` started (by
#                                        PID); STATEDIR stays (logs)
#   tests/azurite.sh restart STATEDIR    SIGKILL the HTTP Azurite and start
#                                        it again on the same port with the
#                                        same data (~1 s)
#   tests/azurite.sh stop-server STATEDIR
#                                        SIGKILL the HTTP Azurite and leave
#                                        it down (a store that is gone)
#
# STATEDIR/env: `export SPOTRUN_TEST_AZ_ENDPOINT=http://127.0.0.1:PORT/ACCOUNT`
# (path-style, as Azurite serves accounts), SPOTRUN_TEST_AZ_ACCOUNT,
# SPOTRUN_TEST_AZ_KEY (the account key, base64 of 64 random bytes: Azurite
# takes custom accounts from AZURITE_ACCOUNTS), and with --tls
# SPOTRUN_TEST_AZ_TLS_ENDPOINT and SPOTRUN_TEST_AZ_CA (the CA, PEM).
# Logs: STATEDIR/log/ (azurite.out is its access log, one line a request).
#
# How this Azurite answers, probed with curl and the Azure CLI 2.45 of
# Debian 12 (azure-cli; its SDK signs with x-ms-version 2021-08-06):
# - Shared Key is checked (a wrong key: 403 AuthorizationFailure "Server
#   failed to authenticate the request..."; real Azure says
#   AuthenticationFailed); SAS tokens are checked (signature, expiry,
#   permissions); Bearer tokens only over HTTPS and only with --oauth basic,
#   which decodes the JWT without checking its signature but checks iat,
#   nbf, exp, an iss under https://sts.windows.net/ and the audience
#   https://storage.azure.com (an expired one: 403 AuthenticationFailed,
#   detail "Lifetime validation failed. The token is expired.").
# - Content-MD5 on Put Blob and Put Block is verified (400 Md5Mismatch).
#   x-ms-content-crc64 is refused in Azurite's default strict mode (500
#   FeatureNotSupported, "not supported in Azurite strict mode"), so it runs
#   with --loose, which takes the header and does not check it.
# - Put Blob with If-None-Match: * on an existing blob: 409
#   BlobAlreadyExists; If-Match with a stale ETag: 412 ConditionNotMet, with
#   a missing blob: 412 too. ETags are quoted "0x...".
# - List Blobs pages hold at most 5000 names and go on with NextMarker;
#   include=uncommittedblobs lists blobs that have only uncommitted blocks.
# - Delete Blob of a missing blob: 404 BlobNotFound; HEAD of a missing
#   container: 404 with x-ms-error-code ContainerNotFound.
set -eu

. "$(dirname "$0")/daemon-util.sh"

version=3.35.0
account=spotruntest
cache=${SPOTRUN_AZURITE_CACHE:-/var/cache/spotrun-test/azurite}
bin=$cache/node_modules/.bin/azurite-blob

die()
{
	echo "azurite.sh: $*" >&2
	exit 1
}

# ours PID: is PID an Azurite of this STATEDIR?
ours()
{
	tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -qF -- "--location $st/"
}

cmd_install()
{
	if [ -x "$bin" ] && grep -q "\"version\": \"$version\"" \
	    "$cache/node_modules/azurite/package.json" 2>/dev/null; then
		return 0
	fi
	command -v npm >/dev/null || die "npm is not installed: run build-aux/install-deps"
	mkdir -p "$cache"
	(cd "$cache" && npm install --no-audit --no-fund --silent "azurite@$version") ||
	    die "npm install azurite@$version into $cache failed"
	[ -x "$bin" ] || die "npm installed no $bin"
}

# serve NAME PORT [TLS]: start one Azurite with its data in $st/NAME.
serve()
{
	mkdir -p "$st/$1"
	_tls=
	[ -z "${3:-}" ] || _tls="--cert $st/tls/server.pem --key $st/tls/server.key --oauth basic"
	AZURITE_ACCOUNTS="$account:$(cat "$st/key")"
	export AZURITE_ACCOUNTS
	# shellcheck disable=SC2086
	bg "$1" "$bin" --blobHost 127.0.0.1 --blobPort "$2" --location "$st/$1/" \
	    --disableTelemetry $loose $_tls
	unset AZURITE_ACCOUNTS
}

# wait_up NAME URL: until it answers HTTP (up to 30 s).
wait_up()
{
	for _ in $(seq 1 300); do
		curl -s -o /dev/null ${SPOTRUN_TEST_AZ_CA_OPT:-} "$2/" && return 0
		alive "$1" || die "Azurite ($1) exited: see $st/log/$1.out"
		sleep 0.1
	done
	die "Azurite ($1) at $2 does not answer after 30 s: see $st/log/$1.out"
}

port_of()
{
	sed -n "s|^export SPOTRUN_TEST_AZ_$1=https*://127.0.0.1:\([0-9]*\)/.*|\1|p" "$st/env"
}

cmd_start()
{
	[ ! -f "$st/azurite.pid" ] || die "$st is in use: run 'tests/azurite.sh stop $st' first"
	[ -x "$bin" ] || die "Azurite is not installed in $cache: run 'tests/azurite.sh install'"
	command -v node >/dev/null || die "node is not installed: run build-aux/install-deps"
	mkdir -p "$st/log"
	trap cmd_stop EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	_ports=$(free_ports 2) || die "no free ports"
	_port=$(echo "$_ports" | sed -n 1p)
	_tls_port=$(echo "$_ports" | sed -n 2p)
	head -c 64 /dev/urandom | base64 -w0 >"$st/key"
	serve azurite "$_port"
	if [ "$tls" = 1 ]; then
		make_tls
		serve azurite-tls "$_tls_port" tls
	fi
	cat >"$st/env.tmp" <<EOF
export SPOTRUN_TEST_AZ_ENDPOINT=http://127.0.0.1:$_port/$account
export SPOTRUN_TEST_AZ_ACCOUNT=$account
export SPOTRUN_TEST_AZ_KEY=$(cat "$st/key")
export SPOTRUN_TEST_AZ_LOG=$st/log/azurite.out
EOF
	if [ "$tls" = 1 ]; then
		cat >>"$st/env.tmp" <<EOF
export SPOTRUN_TEST_AZ_TLS_ENDPOINT=https://127.0.0.1:$_tls_port/$account
export SPOTRUN_TEST_AZ_CA=$st/tls/ca.pem
EOF
	fi
	mv "$st/env.tmp" "$st/env"
	wait_up azurite "http://127.0.0.1:$_port"
	if [ "$tls" = 1 ]; then
		SPOTRUN_TEST_AZ_CA_OPT="--cacert $st/tls/ca.pem" wait_up azurite-tls \
		    "https://127.0.0.1:$_tls_port"
	fi
	trap - EXIT INT TERM
}

cmd_stop()
{
	kill_wait azurite
	kill_wait azurite-tls
}

[ $# -ge 1 ] || die "usage: tests/azurite.sh install|start|stop|restart|stop-server [STATEDIR]"
if [ "$1" = install ]; then
	cmd_install
	exit 0
fi
[ $# -ge 2 ] || die "usage: tests/azurite.sh $1 STATEDIR"
st=$2
tls=0
loose=--loose
case $1 in
start)
	case ${3:-} in
	'') ;;
	--tls) tls=1 ;;
	--strict) loose= ;;
	*) die "usage: tests/azurite.sh start STATEDIR [--tls|--strict]" ;;
	esac
	mkdir -p "$st"
	;;
stop)
	[ -d "$st" ] || exit 0
	;;
esac
[ -d "$st" ] || die "no such directory: $st"
# Absolute, as in the servers' command lines (see ours).
st=$(cd "$st" && pwd)
case $1 in
start)
	cmd_start
	;;
stop)
	cmd_stop
	;;
restart)
	[ -f "$st/env" ] || die "no Azurite started in $st"
	kill_wait azurite
	serve azurite "$(port_of ENDPOINT)"
	wait_up azurite "http://127.0.0.1:$(port_of ENDPOINT)"
	;;
stop-server)
	[ -f "$st/env" ] || die "no Azurite started in $st"
	kill_wait azurite
	;;
*)
	die "unknown command '$1': use install, start, stop, restart or stop-server"
	;;
esac

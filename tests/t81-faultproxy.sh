#!/bin/sh
# t81-faultproxy.sh: tests/faultproxy does what the S3 fault tests rely on,
# each fault mode against a plain HTTP backend (python3's http.server on
# loopback) with curl as the client: pass-through is byte-exact, a reset is
# a reset (curl 56), a stall lasts, 503 SlowDown and 500 InternalError carry
# S3 error bodies, a drop is an empty reply (curl 52), a lost reply is a
# reset after the server answered, a slow link crawls at its rate, a wan
# link at its rate both ways, a flip inverts the one byte it names, a request
# signed for the wrong region gets AWS's 400 AuthorizationHeaderMalformed
# (checked request by request on a kept-alive connection), counts run out,
# and the control file and SIGHUP switch faults at run time.
set -u
tmp=$(mktemp -d)
srv= px=
trap '[ -n "$px" ] && kill $px 2>/dev/null; [ -n "$srv" ] && kill $srv 2>/dev/null; rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/proxy.log" 2>/dev/null | tail -n 5; }
check() { if [ "$1" = "$2" ]; then ok "$3"; else nok "$3: got '$1', want '$2'"; fi; }
echo "1..44"

# wait_file FILE: until FILE exists and is not empty (5 s at most).
wait_file()
{
	for _ in $(seq 1 100); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# wait_log PATTERN: until a line of the proxy log matches (grep -E), 5 s
# at most; a connection's line is written as it ends.
wait_log()
{
	for _ in $(seq 1 100); do
		grep -qE "$1" "$tmp/proxy.log" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# fault LINE: switch the proxy's fault (atomic rewrite: a new inode).
fault()
{
	echo "$1" >"$tmp/control.new"
	mv "$tmp/control.new" "$tmp/control"
}

# get [CURL ARGS...]: GET /data through the proxy; prints "EXIT STATUS",
# the body in $tmp/body, the headers in $tmp/head.
get()
{
	_st=$(curl -s -m 20 -D "$tmp/head" -o "$tmp/body" -w '%{http_code}' "$@" \
	    "http://127.0.0.1:$port/data")
	echo "$? $_st"
}

mkdir "$tmp/www"
head -c 1048576 /dev/urandom >"$tmp/www/data"
# python3 -m http.server, plus PUT (reads the body, answers its length),
# with HTTP/1.1: connections stay open between requests (region mode reads
# each of them).
cat >"$tmp/srv.py" <<'EOF'
import functools, http.server, sys
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_PUT(self):
        n = len(self.rfile.read(int(self.headers["Content-Length"])))
        body = b"%d\n" % n
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
    functools.partial(H, directory=sys.argv[1]))
print("Serving HTTP on 127.0.0.1 port %d (http://127.0.0.1:%d/) ..." % (s.server_port, s.server_port), flush=True)
s.serve_forever()
EOF
python3 -u "$tmp/srv.py" "$tmp/www" >"$tmp/srv.out" 2>"$tmp/srv.err" &
srv=$!
for _ in $(seq 1 100); do
	bport=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$tmp/srv.out" 2>/dev/null)
	[ -n "$bport" ] && break
	sleep 0.05
done
[ -n "$bport" ] || { echo "Bail out! python3 -m http.server did not start"; exit 1; }

"$top_builddir/tests/faultproxy" -p "$tmp/port" -t "127.0.0.1:$bport" \
    -c "$tmp/control" -l "$tmp/proxy.log" &
px=$!
wait_file "$tmp/port" || { echo "Bail out! faultproxy wrote no port file"; exit 1; }
port=$(cat "$tmp/port")

# No control file: pass, byte for byte.
check "$(get)" "0 200" "no control file: the request passes"
cmp -s "$tmp/body" "$tmp/www/data" && ok "pass-through is byte-exact (1 MiB)" ||
    nok "the body differs from the backend's file"
wait_log '^conn 1: pass: [0-9]+ bytes in, 10[0-9]{5} bytes out$' &&
    ok "the log says pass, with the byte counts" || nok "log line of conn 1"

# reset: curl sends its ~80-byte request at once, so the RST meets it
# waiting for the reply: "Connection reset by peer", exit 56.
fault "reset after=20"
check "$(get)" "56 000" "reset after=20: curl fails with 56"
wait_log '^conn 2: reset after 20 bytes from the client$' &&
    ok "the log says reset after 20 bytes" || nok "log line of conn 2"
check "$(get)" "0 200" "count=1 (the default): the next connection passes"

# stall, then pass: slow but complete.
fault "stall seconds=1.5"
t0=$(date +%s.%N)
r=$(get)
t1=$(date +%s.%N)
check "$r" "0 200" "stall seconds=1.5: the request completes afterwards"
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 1.3) }' &&
    ok "it took >= 1.3 s ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s)" ||
    nok "the stall was too short"

# stall, then close: a hung server; curl sees no reply at all.
fault "stall seconds=0.5 then=close"
check "$(get)" "52 000" "stall then=close: curl fails with 52 (empty reply)"

# slowdown twice, then pass.
fault "slowdown count=2"
r1=$(get)
grep -q '<Code>SlowDown</Code>' "$tmp/body" && c1=yes || c1=no
grep -qi '^Connection: close' "$tmp/head" && cl=yes || cl=no
r2=$(get)
r3=$(get)
check "$r1 $c1 $cl $r2 $r3" "0 503 yes yes 0 503 0 200" \
    "slowdown count=2: 503 with <Code>SlowDown</Code> and Connection: close twice, then 200"
wait_log '^conn [0-9]+: slowdown: 503 SlowDown to GET /data$' &&
    ok "the log names the request it answered" || nok "slowdown log line"

fault "internal"
r=$(get)
grep -q '<Code>InternalError</Code>' "$tmp/body" && c=yes || c=no
check "$r $c" "0 500 yes" "internal: 500 with <Code>InternalError</Code>"

fault "drop count=all"
check "$(get) $(get)" "52 000 52 000" "drop count=all: every request gets an empty reply (52)"

# SIGHUP rearms an unchanged file; pass clears the fault.
fault "drop"
get >/dev/null
kill -HUP $px
sleep 0.2
check "$(get)" "52 000" "SIGHUP rearms the fault of an unchanged control file"
fault "pass"
check "$(get)" "0 200" "pass clears a fault"

# lose: the backend answered (it logged the GET), curl saw a reset.
fault "lose"
n_get=$(grep -c '"GET /data HTTP/1.1" 200' "$tmp/srv.err")
check "$(get)" "56 000" "lose: the client sees a reset (56)"
wait_log '^conn [0-9]+: lose: forwarded [0-9]+ bytes of GET /data, reset before the reply$' &&
    ok "the log says the reply was lost" || nok "lose log line"
check "$(grep -c '"GET /data HTTP/1.1" 200' "$tmp/srv.err")" "$((n_get + 1))" \
    "lose: the request reached the backend, which answered it"

# slow: a PUT of 256 KiB at 128 KiB/s takes ~2 s.
head -c 262144 /dev/urandom >"$tmp/up"
fault "slow rate=131072"
t0=$(date +%s.%N)
r=$(curl -s -m 20 -H 'Expect:' -o "$tmp/body" -w '%{http_code}' -T "$tmp/up" "http://127.0.0.1:$port/up")
t1=$(date +%s.%N)
check "$r $(cat "$tmp/body")" "200 262144" "slow: the whole upload passes"
wait_log '^conn [0-9]+: slow 131072 B/s: pass: 262[0-9]{3} bytes in, [0-9]+ bytes out$' &&
    ok "slow: the log says slow, with the byte counts" || nok "slow log line"
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 1.5 && b - a < 6) }' &&
    ok "slow: 256 KiB at 128 KiB/s took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s (1.5 to 6)" ||
    nok "slow: took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"

# wan: each way at its rate; a GET of 256 KiB at 128 KiB/s takes ~2 s.
head -c 262144 /dev/urandom >"$tmp/www/wan"
fault "wan rate=131072"
t0=$(date +%s.%N)
r=$(curl -s -m 20 -o "$tmp/body" -w '%{http_code}' "http://127.0.0.1:$port/wan")
t1=$(date +%s.%N)
check "$r" 200 "wan: the download passes"
cmp -s "$tmp/body" "$tmp/www/wan" && ok "wan: byte-exact" || nok "wan: the body differs"
wait_log '^conn [0-9]+: wan 131072 B/s: pass: [0-9]+ bytes in, 262[0-9]{3} bytes out$' &&
    ok "wan: the log says wan, with the byte counts" || nok "wan log line"
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 1.5 && b - a < 6) }' &&
    ok "wan: 256 KiB down at 128 KiB/s took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s (1.5 to 6)" ||
    nok "wan: took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"

# flip: the lowest bit of the client's byte 5 inverted, the 'd' of
# "GET /data" (0x64 -> 0x65): the backend is asked for /eata.
fault "flip after=5"
check "$(get)" "0 404" "flip after=5: the request reaches the backend as GET /eata: 404"
wait_log '^conn [0-9]+: flip byte 5: pass: [0-9]+ bytes in, [0-9]+ bytes out$' &&
    ok "flip: the log names the byte" || nok "flip log line"
fault "flip after=1000000"
check "$(get)" "0 200" "flip past the end of the request: it passes"
cmp -s "$tmp/body" "$tmp/www/data" && ok "... byte-exact" || nok "flip: the body differs"
wait_log '^conn [0-9]+: flip: byte not reached: pass: [0-9]+ bytes in, [0-9]+ bytes out$' &&
    ok "flip: the log says the byte was not reached" || nok "flip: not-reached log line"

# region: AWS's answer to a request signed for another region.
auth() { echo "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/$1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=00"; }
fault "region name=eu-central-1"
check "$(get -H "$(auth us-west-2)")" "0 400" "region: a request signed for us-west-2 gets 400"
check "$(cat "$tmp/body")" "<?xml version=\"1.0\" encoding=\"UTF-8\"?>
<Error><Code>AuthorizationHeaderMalformed</Code><Message>The authorization header is malformed; the region 'us-west-2' is wrong; expecting 'eu-central-1'</Message><Region>eu-central-1</Region><RequestId>faultproxy-$(sed -n 's/^x-amz-request-id: faultproxy-\([0-9]*\)\r$/\1/p' "$tmp/head")</RequestId><HostId>faultproxy</HostId></Error>" \
    "region: the S3 error body names the right region, as AWS's does"
check "$(grep -c '^x-amz-bucket-region: eu-central-1' "$tmp/head") $(grep -ci '^Connection: close' "$tmp/head")" \
    "1 1" "region: with x-amz-bucket-region: eu-central-1 and Connection: close"
wait_log '^conn [0-9]+: region: 400 AuthorizationHeaderMalformed to GET /data \(signed for us-west-2\)$' &&
    ok "region: the log names the request and its region" || nok "region log line"
check "$(get -H "$(auth eu-central-1)")" "0 200" "region: a request signed for eu-central-1 is forwarded"
cmp -s "$tmp/body" "$tmp/www/data" && ok "... byte-exact" || nok "region: the forwarded body differs"
check "$(get)" "0 200" "region: an unsigned request is forwarded"
st=$(curl -s -m 20 -I -o /dev/null -w '%{http_code} %{size_download}' -H "$(auth us-east-1)" \
    "http://127.0.0.1:$port/data")
check "$st" "400 0" "region: a HEAD signed for us-east-1 gets 400 without a body"
# One kept-alive connection, three requests: each is checked.
: >"$tmp/proxy.log"
st=$(curl -s -m 20 -o /dev/null -w '%{http_code} ' -H "$(auth eu-central-1)" "http://127.0.0.1:$port/data" \
    --next -s -m 20 -o /dev/null -w '%{http_code} ' -H "$(auth eu-central-1)" "http://127.0.0.1:$port/data" \
    --next -s -m 20 -o /dev/null -w '%{http_code}' -H "$(auth ap-south-1)" "http://127.0.0.1:$port/data")
wait_log '^conn [0-9]+: region eu-central-1: 2 requests forwarded: ' ||
    nok "region: no line for the kept-alive connection"
check "$st $(grep -c '^conn ' "$tmp/proxy.log")" "200 200 400 2" \
    "region: on one connection two requests pass and the third, for ap-south-1, gets 400"
check "$(grep -c '^conn [0-9]*: region: 400 AuthorizationHeaderMalformed to GET /data (signed for ap-south-1)$' "$tmp/proxy.log")" 1 \
    "region: the log has the one refusal"
# bad_control LINE MESSAGE DESC: the control LINE is logged as wrong, with
# MESSAGE (the fix), and the next request passes.
bad_control() {
	fault "$1"
	_r=$(get)
	wait_log "^control $tmp/control line 1: $2: pass\$" &&
	    [ "$_r" = "0 200" ] && ok "$3: logged with the fix, and pass" || nok "$3: $_r"
}
bad_control region "region needs name=REGION, e.g. name=eu-central-1" "region without a name"

# header: each request of a kept-alive connection forwarded, its header logged.
fault "header name=User-Agent"
: >"$tmp/proxy.log"
st=$(curl -s -m 20 -o /dev/null -w '%{http_code} ' -A 'probe/1.0' "http://127.0.0.1:$port/data" \
    --next -s -m 20 -o /dev/null -w '%{http_code}' -A '' "http://127.0.0.1:$port/data")
wait_log '^conn [0-9]+: header User-Agent: 2 requests forwarded: ' ||
    nok "header: no line for the kept-alive connection"
check "$st|$(sed -n 's/^conn [0-9]*: //p' "$tmp/proxy.log" | sed 's/forwarded: .*/forwarded/')" \
    "200 200|header User-Agent of GET /data: probe/1.0
header User-Agent of GET /data: absent
header User-Agent: 2 requests forwarded" \
    "header: both requests forwarded, each one's User-Agent logged (absent when not sent)"
bad_control header "header needs name=HEADER, e.g. name=User-Agent" "header without a name"

# A wrong control line is reported and means pass.
bad_control "explode count=2" \
    "unknown mode 'explode': use pass, reset, stall, slowdown, internal, drop, lose, slow, region, wan, header or flip" \
    "a wrong control line"

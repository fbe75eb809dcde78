#!/bin/sh
# t81-faultproxy.sh: tests/faultproxy does what the S3 fault tests rely on,
# each fault mode against a plain HTTP backend (python3 -m http.server on
# loopback) with curl as the client: pass-through is byte-exact, a reset is
# a reset (curl 56), a stall lasts, 503 SlowDown and 500 InternalError carry
# S3 error bodies, a drop is an empty reply (curl 52), counts run out, and
# the control file and SIGHUP switch faults at run time.
set -u
tmp=$(mktemp -d)
srv= px=
trap '[ -n "$px" ] && kill $px 2>/dev/null; [ -n "$srv" ] && kill $srv 2>/dev/null; rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/proxy.log" 2>/dev/null | tail -n 5; }
check() { if [ "$1" = "$2" ]; then ok "$3"; else nok "$3: got '$1', want '$2'"; fi; }
echo "1..16"

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
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$tmp/www" \
    >"$tmp/srv.out" 2>"$tmp/srv.err" &
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

# A wrong control line is reported and means pass.
fault "explode count=2"
r=$(get)
wait_log "^control $tmp/control line 1: unknown mode 'explode': use pass, reset, stall, slowdown, internal or drop: pass$" &&
    [ "$r" = "0 200" ] && ok "a wrong control line: logged with the fix, and pass" ||
    nok "wrong control line: $r"

# daemon-util.sh: sourced by the scripts that start servers for the tests
# (tests/rgw.sh, tests/azurite.sh, tests/slurm.sh): free ports, daemons
# started in the background and killed again by PID, and a private CA with a
# certificate for 127.0.0.1 for the servers that also speak HTTPS. The
# sourcing script sets $st (its STATEDIR, with log/ in it) and defines `ours
# PID` (is PID a daemon of this STATEDIR, not a later process that reused
# the number?) and `die MESSAGE`.

# free_ports N: print N different TCP ports in 20000-32767 (below the
# kernel's ephemeral range, so no outgoing connection holds one), one a line,
# that nothing listens on now. All N are bound at once, so they differ.
free_ports()
{
	python3 - "$1" <<'EOF'
import random, socket, sys
want, held = int(sys.argv[1]), []
try:
    for _ in range(400):
        if len(held) == want:
            break
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", random.randint(20000, 32767)))
            held.append(s)
        except OSError:
            s.close()
    if len(held) < want:
        raise SystemExit("no %d free ports in 20000-32767" % want)
    print("\n".join(str(s.getsockname()[1]) for s in held))
finally:
    for s in held:
        s.close()
EOF
}

# bg NAME CMD...: run CMD in the background, log and pid under $st.
bg()
{
	_name=$1
	shift
	"$@" >"$st/log/$_name.out" 2>&1 &
	echo $! >"$st/$_name.pid"
}

# running PID: is PID alive? Not kill -0: a killed daemon whose parent
# has exited stays a zombie until init reaps it, which may take seconds.
running()
{
	_state=$(sed -n 's/.*) \(.\) .*/\1/p' "/proc/$1/stat" 2>/dev/null) || true
	[ -n "$_state" ] && [ "$_state" != Z ]
}

# alive NAME: is the process we started as NAME still running?
alive()
{
	[ -f "$st/$1.pid" ] && running "$(cat "$st/$1.pid")"
}

# kill_wait NAME: SIGKILL the process we started as NAME and wait until it
# is gone (its port free). KILL, not TERM: a test server's state is thrown
# away anyway, and daemons take seconds to shut down on TERM (Ceph's ~2 s
# each).
kill_wait()
{
	[ -f "$st/$1.pid" ] || return 0
	_pid=$(cat "$st/$1.pid")
	if ours "$_pid"; then
		kill -KILL "$_pid" 2>/dev/null || true
	fi
	# Reap it when we are its parent; otherwise wait until init has.
	wait "$_pid" 2>/dev/null || true
	for _ in $(seq 1 100); do
		running "$_pid" || break
		sleep 0.05
	done
	rm -f "$st/$1.pid"
}

# make_tls: a CA and a server certificate for 127.0.0.1 signed by it, in
# $st/tls (valid 30 days: the tests that fake the clock move it minutes).
make_tls()
{
	mkdir -p "$st/tls"
	(
		cd "$st/tls" &&
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		    -keyout ca.key -out ca.pem -days 30 -subj '/CN=spotrun test CA' \
		    -addext basicConstraints=critical,CA:TRUE \
		    -addext keyUsage=critical,keyCertSign,cRLSign &&
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		    -keyout server.key -out server.csr -subj '/CN=127.0.0.1' &&
		printf '%s\n' 'subjectAltName=IP:127.0.0.1,DNS:localhost' \
		    'basicConstraints=CA:FALSE' 'extendedKeyUsage=serverAuth' >server.ext &&
		openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key \
		    -CAcreateserial -out server.pem -days 30 -extfile server.ext
	) >"$st/log/tls.out" 2>&1 ||
	    die "openssl failed to make the TLS files: see $st/log/tls.out"
}

# vm.sh: a "VM" made on this machine from the user-data `spotrun
# cloud-init` prints, for the tests of the whole (t53) and of the pool's
# loop (t16, whose emulator boots one per instance): its own root folder
# ($T/vm-X: HOME, the agent's state, /usr/local/bin, /var/tmp), its
# write_files written there, the install script the user-data carries run
# with sh in a network namespace of its own (loopback only; the host's
# servers reached through tests/boot/relay.py), systemctl a stub that
# records its arguments, then the unit's ExecStart as
# tests/boot/unit-exec.py reads it, in a network and UTS namespace (host
# name the VM's). Why not cloud-init itself: see t53's head comment.
#
# The caller sets T (its folder), PY, top_srcdir, and vm_relays: "PORT
# SOCK ..." the host's ports the VM reaches, each at the same port on its
# loopback, through SOCK, where the caller runs `relay.py unix-to-tcp SOCK
# PORT` (vm_relay starts one); the first is the S3 server's. vm_env:
# lines VAR=VALUE added to the VM's EnvironmentFile (its keys by default:
# an instance role on a cloud).

# vm_relay SOCK PORT: the host side of a relay (its pid in $t_last)
vm_relay() {
	"$PY" -u "$top_srcdir/tests/boot/relay.py" unix-to-tcp "$1" "$2" > "$1.log" 2>&1 &
	t_last=$!
	t_pids="$t_pids $t_last"
	wait_for "$1.log" '^ready$' 30 "$t_last" || t_bail "relay.py (host side) is not ready: $(cat "$1.log")"
}

# vm_userdata USERDATA DIR: the user-data's write_files under DIR; prints
# its runcmd
vm_userdata() {
	"$PY" - "$1" "$2" <<'PYEOF'
import os, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
out = sys.argv[2]
os.makedirs(out)
for f in d["write_files"]:
    p = os.path.join(out, f["path"].lstrip("/"))
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as fp:
        fp.write(f["content"])
    os.chmod(p, int(f["permissions"], 8))
print("runcmd", d["runcmd"])
PYEOF
}

# _vm_relays: the words that put a command behind the VM's side of each
# relay of $vm_relays (paths without blanks)
_vm_relays() {
	# shellcheck disable=SC2086
	set -- $vm_relays
	while [ $# -ge 2 ]; do
		printf ' %s %s tcp-to-unix %s %s --' "$PY" "$top_srcdir/tests/boot/relay.py" "$1" "$2"
		shift 2
	done
}

# vm_make X UDDIR: the VM's folder $T/vm-X from the user-data's files in
# UDDIR (vm_userdata), its install script run as the VM runs it; its
# output in $T/vm-X/install.out, the unit's argument vector (the binary,
# then its words, one a line) in $T/vm-X/argv
vm_make() {
	V=$T/vm-$1
	mkdir -p "$V/root" "$V/var/tmp" "$V/var/lib" "$V/usr/local/bin" "$V/etc/default" "$T/stub"
	[ -x "$T/stub/systemctl" ] || {
		printf '#!/bin/sh\necho "$*" >> "$VM/systemctl.log"\n' > "$T/stub/systemctl.t"
		chmod 755 "$T/stub/systemctl.t"
		mv "$T/stub/systemctl.t" "$T/stub/systemctl"
	}
	cp -r "$2/." "$V/"
	sed -e "s|^\\( *dir=\\)/var/tmp/|\\1$V/var/tmp/|" -e "s| /usr/local/bin/spotrun\$| $V/usr/local/bin/spotrun|" \
	    "$V/usr/local/sbin/spotrun-install" > "$V/install.sh"
	# the VM's EnvironmentFile: its keys (an instance role on a cloud)
	cat > "$V/etc/default/spotrun-agent" <<EOF2
AWS_ACCESS_KEY_ID=$SPOTRUN_TEST_S3_ACCESS_KEY
AWS_SECRET_ACCESS_KEY=$SPOTRUN_TEST_S3_SECRET_KEY
AWS_CONFIG_FILE=/dev/null
AWS_SHARED_CREDENTIALS_FILE=/dev/null
AWS_EC2_METADATA_DISABLED=true
SPOTRUN_AWS_ENDPOINT=http://127.0.0.1:1
SPOTRUN_GCP_ENDPOINT=http://127.0.0.1:1
SPOTRUN_AZURE_ENDPOINT=http://127.0.0.1:1
${AWS_CA_BUNDLE:+AWS_CA_BUNDLE=$AWS_CA_BUNDLE}
${vm_env:-}
EOF2
	# shellcheck disable=SC2046
	(unshare -n sh -c 'ip link set lo up && exec "$@"' sh $(_vm_relays) \
	    env -i PATH="$T/stub:/usr/sbin:/usr/bin:/sbin:/bin" VM="$V" \
	    ${CURL_CA_BUNDLE:+CURL_CA_BUNDLE=$CURL_CA_BUNDLE} sh "$V/install.sh") > "$V/install.out" 2>&1
	_rc=$?
	"$PY" "$top_srcdir/tests/boot/unit-exec.py" "$V" /etc/systemd/system/spotrun-agent.service --print > "$V/argv.t" &&
	    sed '$d' "$V/argv.t" > "$V/argv" && rm -f "$V/argv.t"
	return $_rc
}

# vm_exec X [VAR=VALUE...]: become the unit's ExecStart on VM X, as systemd
# starts it (its environment, EnvironmentFile, StateDirectory as the
# working directory), in a network and UTS namespace of its own (host
# vm-X, or $vm_host)
vm_exec() {
	V=$T/vm-$1 _h=${vm_host:-vm-$1}
	shift
	mkdir -p "$V/var/lib/spotrun"
	cd "$V/var/lib/spotrun" || exit 1
	# shellcheck disable=SC2046
	exec unshare -n -u sh -c 'ip link set lo up && hostname "$0" && exec "$@"' "$_h" \
	    $(_vm_relays) env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
	    HOME="$V/root" USER=root LOGNAME=root SHELL=/bin/sh $(grep . "$V/etc/default/spotrun-agent") "$@" \
	    "$V/usr/local/bin/spotrun" $(sed 1d "$V/argv")
}

# vm_start X [VAR=VALUE...]: vm_exec in the background, its pid in $t_last
# (and $agent_pids), its output in $T/agent-X.out and .err
vm_start() {
	(vm_exec "$@") > "$T/agent-$1.out" 2> "$T/agent-$1.err" &
	t_last=$!
	t_pids="$t_pids $t_last"
	agent_pids="${agent_pids:-} $t_last"
}

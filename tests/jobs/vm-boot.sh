# vm-boot.sh CONF NAME USERDATA: an emulated cloud's instance booted as a
# VM (tests/jobs/vm.sh), the --on-instance command of tests/gceemu.py in
# t16-loop-gcp.sh and of tests/armemu.py in t17-loop-azure.sh: CONF
# (shell) sets T, PY, top_srcdir, vm_relays and vm_env; NAME is the VM's
# host name (GCP: the instance's name; Azure: its computer name), USERDATA
# its user-data. "PID NAME.N" is appended to $T/boots. A name the group makes again after a preemption boots a
# fresh VM: its folder is $T/vm-NAME.N, N the boot's number; the agent's
# output in $T/agent-NAME.N.out and .err, the boot's in $T/boot-NAME.N
# (with its start and end times, for bench/loop.sh).
# This process becomes the agent (exec), so the emulator's SIGTERM is the
# agent's, as systemd's stop would be.
. "$1"
. "$top_srcdir/tests/jobs/vm.sh"
name=$2
n=1
while ! mkdir "$T/vm-$name.$n" 2>/dev/null; do
	n=$((n + 1))
done
x=$name.$n
# which boot this process is, in boot order, for tests/jobs/loop.sh: the
# emulator's log names the pid ($$: sh's exec kept it)
echo "$$ $x" >> "$T/boots"
exec > "$T/boot-$x" 2>&1
echo "boot start $(date +%s.%N)"
vm_userdata "$3" "$T/ud-$x" || exit 1
vm_make "$x" "$T/ud-$x" || { cat "$T/vm-$x/install.out"; exit 1; }
echo "booted $x $(date +%s.%N)"
vm_host=$name
exec > "$T/agent-$x.out" 2> "$T/agent-$x.err"
vm_exec "$x"

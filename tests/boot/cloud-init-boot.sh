#!/bin/sh
# cloud-init-boot.sh: one real boot of `spotrun cloud-init`'s user-data, as
# far as a machine without VMs allows. Prints TAP and the time of each step.
#
#   sudo tests/boot/cloud-init-boot.sh        (from a built tree; root only)
#
# 1. A Debian 12 root as a cloud image has it (debootstrap minbase from
#    Debian's mirror, systemd, cloud-init), made once per machine and kept in
#    $SPOTRUN_TEST_CACHE (default /var/cache/spotrun-test/debian12-cloud);
#    each run boots a copy of it (an overlay, thrown away at the end), and
#    the packages the boot downloads are kept beside it too.
# 2. spotrun from this tree: `make dist`'s tarball, served by python3 -m
#    http.server on loopback; the user-data is `spotrun cloud-init` with
#    --source that URL and --sha256.
# 3. The NoCloud seed (/var/lib/cloud/seed/nocloud/{user-data,meta-data})
#    and cloud-init's four stages run by hand in a chroot, in a mount
#    namespace of their own (unshare): `cloud-init init --local`, `init`,
#    `modules --mode config`, `modules --mode final`. The image's apt reaches
#    Debian's mirror (the user-data's packages, install-deps --runtime);
#    cloud-init is held to the seed (datasource_list: [NoCloud]) and writes no
#    network configuration, so nothing asks a metadata service.
# 4. What the user-data left: spotrun installed, the unit in place and
#    enabled, the VM's own systemd-analyze verify silent on it, the agent's
#    command line as the unit will run it.
# 5. The agent step: systemd is not PID 1 in a chroot, so
#    tests/boot/unit-exec.py stands in for it and runs the unit's ExecStart
#    in the root, in a network namespace with loopback only; the agent must
#    claim a job submitted from this machine into a file:// queue that the
#    root shares through a bind mount, run it, and run its idle command once
#    idle; `spotrun status` here then says the job succeeded on the VM.
#    Always on: it is what the boot is for, and it adds seconds.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
SPOTRUN=${SPOTRUN:-$top_builddir/spotrun}
cache=${SPOTRUN_TEST_CACHE:-/var/cache/spotrun-test}
mirror=${SPOTRUN_TEST_MIRROR:-http://deb.debian.org/debian}
# What the cached root is made of: a change here makes a new one.
recipe="bookworm minbase +systemd,systemd-sysv,ca-certificates; apt: cloud-init locales; LANG=C.UTF-8; 1"
PY=/usr/bin/python3

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (debootstrap, chroot, mounts)"
	exit 0
fi
# The test runs in a mount namespace of its own, so every mount it makes
# goes away with it, whatever way it ends; its folder is removed from out
# here, where none of them is seen (a removal inside could reach through a
# bind mount). And in a UTS namespace of its own: cloud-init sets the host
# name from the seed (its set_hostname and update_hostname modules call
# hostname(1)), which in the host's namespace renamed this machine.
if [ -z "${SR_BOOT_TMP:-}" ]; then
	SR_BOOT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/spotrun-boot.XXXXXX") || exit 1
	export SR_BOOT_TMP
	host=$(hostname)
	unshare --mount --uts --propagation private -- /bin/sh "$0" "$@"
	rc=$?
	rm -rf --one-file-system "$SR_BOOT_TMP"
	if [ "$(hostname)" = "$host" ]; then
		echo "ok 21 - this machine's host name is still $host"
	else
		echo "not ok 21 - this machine's host name was $host, is $(hostname) after the boot"
		rc=1
	fi
	exit "$rc"
fi

n=0 failed=0
pass() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
now() { date +%s; }
times=
took() { times="$times $1 $(($(now) - $2))s,"; }
t_all=$(now)

tmp=$SR_BOOT_TMP
server=
trap '[ -z "$server" ] || kill "$server" 2>/dev/null' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "1..21"
# ---- 1. the image, made once per machine
root_cache=$cache/debian12-cloud
mkdir -p "$cache/apt-archives"
t=$(now)
(
	flock 9
	[ -f "$root_cache/.spotrun-recipe" ] && [ "$(cat "$root_cache/.spotrun-recipe")" = "$recipe" ] &&
		exit 0
	echo "# making the Debian 12 root in $root_cache (once per machine)"
	rm -rf "$root_cache.new" "$root_cache"
	debootstrap --variant=minbase --include=systemd,systemd-sysv,ca-certificates \
		bookworm "$root_cache.new" "$mirror" >"$cache/debootstrap.log" 2>&1 || exit 1
	# apt, not debootstrap, resolves cloud-init's dependencies (debootstrap
	# does not pick the providers of virtual packages); locales, as cloud
	# images have it, for cloud-init's locale module.
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
		chroot "$root_cache.new" sh -c 'apt-get update -qq &&
		apt-get install -y -qq --no-install-recommends cloud-init locales' \
		>>"$cache/debootstrap.log" 2>&1 ||
		exit 1
	rm -rf "$root_cache.new/var/cache/apt/archives/"*.deb
	# The image's locale, as cloud images set it: without one, cloud-init
	# 22.4 falls back to en_US.UTF-8, which Debian's locale-gen does not
	# make from its argument, and its locale module fails (cloud-init
	# issue 4195; 23.4 falls back to C.UTF-8).
	echo LANG=C.UTF-8 >"$root_cache.new/etc/default/locale"
	echo "$recipe" >"$root_cache.new/.spotrun-recipe"
	mv "$root_cache.new" "$root_cache"
) 9>"$cache/.lock"
rc=$?
took image "$t"
check "a Debian 12 root with systemd and cloud-init in $root_cache (log: $cache/debootstrap.log)" \
	[ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { echo "Bail out! no root to boot"; exit 1; }

# ---- 2. spotrun's source, served on loopback
t=$(now)
version=$("$SPOTRUN" --version | sed 's/^spotrun //')
# make dist's content (its distdir), made in this test's folder and packed
# as make dist packs it: `make dist` itself would leave its folder in the
# build tree while other tests look at it.
mkdir "$tmp/www" &&
	make -s -C "$top_builddir" distdir distdir="$tmp/www/spotrun-$version" >"$tmp/dist.log" 2>&1 &&
	tar -czf "$tmp/www/spotrun-$version.tar.gz" -C "$tmp/www" "spotrun-$version" &&
	rm -rf "$tmp/www/spotrun-$version"
rc=$?
took dist "$t"
check "this tree as make dist packs it: spotrun-$version.tar.gz" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { sed 's/^/# /' "$tmp/dist.log" | tail -n 20; echo "Bail out! no tarball"; exit 1; }
sha=$(sha256sum "$tmp/www/spotrun-$version.tar.gz" | cut -d' ' -f1)
"$PY" -u -m http.server --bind 127.0.0.1 --directory "$tmp/www" 0 >"$tmp/http.log" 2>&1 &
server=$!
port=
for _ in $(seq 50); do
	port=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$tmp/http.log" | head -n 1)
	[ -n "$port" ] && break
	sleep 0.1
done
check "the tarball served on 127.0.0.1:$port" [ -n "$port" ]

# ---- 3. the boot
R=$tmp/root
mkdir -p "$R" "$tmp/upper" "$tmp/work" "$tmp/queue" "$tmp/shared"
mount -t overlay overlay -o "lowerdir=$root_cache,upperdir=$tmp/upper,workdir=$tmp/work" "$R" || exit 1
mount -t proc proc "$R/proc"
# /dev: a tmpfs with the host's few device nodes bound in, never the host's
# /dev itself.
mount -t tmpfs -o mode=755 tmpfs "$R/dev"
for d in null zero full random urandom tty; do
	touch "$R/dev/$d" && mount --bind "/dev/$d" "$R/dev/$d"
done
mkdir -p "$R/dev/pts" "$R/dev/shm"
mount -t tmpfs tmpfs "$R/run"
mount -t tmpfs tmpfs "$R/tmp"
mount --bind "$cache/apt-archives" "$R/var/cache/apt/archives"
cp /etc/resolv.conf "$R/etc/resolv.conf"
# The queue and a folder for the job's result, at the same paths inside.
for d in "$tmp/queue" "$tmp/shared"; do mkdir -p "$R$d" && mount --bind "$d" "$R$d"; done
# No service is started by a package installed in the chroot.
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
chmod 755 "$R/usr/sbin/policy-rc.d"
printf 'datasource_list: [ NoCloud ]\nnetwork: {config: disabled}\n' \
	>"$R/etc/cloud/cloud.cfg.d/90-spotrun-boot-test.cfg"
# The idle command stands for `systemctl poweroff`: it leaves a mark.
set -- --queue "file://$tmp/queue" --idle-timeout 5s \
	--idle-command "touch $tmp/shared/idle-ran" --labels test=boot
seed=$R/var/lib/cloud/seed/nocloud
mkdir -p "$seed"
"$SPOTRUN" cloud-init "$@" --source "http://127.0.0.1:$port/spotrun-$version.tar.gz" --sha256 "$sha" \
	>"$seed/user-data" 2>"$tmp/ci.err"
rc=$?
printf 'instance-id: spotrun-boot-test\nlocal-hostname: spotrun-boot\n' >"$seed/meta-data"
check "spotrun cloud-init wrote the seed's user-data (warnings: $(tr '\n' ' ' <"$tmp/ci.err"))" \
	[ "$rc" -eq 0 ]
stage=0
for s in "init --local" "init" "modules --mode config" "modules --mode final"; do
	stage=$((stage + 1))
	t=$(now)
	# shellcheck disable=SC2086
	# systemctl cannot tell this chroot from a booted system here (it cannot
	# read PID 1's root): SYSTEMD_OFFLINE=1 tells it no manager runs, so the
	# install script's daemon-reload and start are skipped ("Running in
	# chroot, ignoring command") and its enable is done, as in any chroot.
	env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
		HOME=/root SYSTEMD_OFFLINE=1 chroot "$R" cloud-init $s >"$tmp/stage$stage.log" 2>&1
	rc=$?
	took "$(echo "$s" | sed 's/modules --mode //; s/ --local/-local/')" "$t"
	check "cloud-init $s exits 0 ($(($(now) - t))s)" [ "$rc" -eq 0 ]
	[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/stage$stage.log" | tail -n 30
done
errors=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["v1"]["errors"])' \
	"$R/run/cloud-init/result.json" 2>&1)
check "cloud-init's result.json has no error: $errors" [ "$errors" = "[]" ]
[ "$errors" = "[]" ] || tail -n 40 "$R/var/log/cloud-init-output.log" | sed 's/^/# /'

# ---- 4. what the user-data left
pk=$(chroot "$R" dpkg-query -W -f '${Status}' curl 2>&1)
check "the user-data's packages are installed (curl: $pk)" [ "$pk" = "install ok installed" ]
check "the VM checked the tarball's SHA-256 (spotrun-install's output)" \
	grep -qx 'source.tar: OK' "$R/var/log/cloud-init-output.log"
v=$(chroot "$R" /usr/local/bin/spotrun --version 2>&1)
check "spotrun is installed in /usr/local/bin: $v" [ "$v" = "spotrun $version" ]
"$SPOTRUN" cloud-init "$@" --unit >"$tmp/unit.want" 2>/dev/null
check "the unit in /etc/systemd/system is the one spotrun cloud-init --unit prints" \
	cmp -s "$tmp/unit.want" "$R/etc/systemd/system/spotrun-agent.service"
link=$(readlink "$R/etc/systemd/system/multi-user.target.wants/spotrun-agent.service")
check "the unit is enabled (multi-user.target.wants -> $link)" \
	[ "$link" = /etc/systemd/system/spotrun-agent.service ]
out=$(chroot "$R" systemd-analyze verify --man=no /etc/systemd/system/spotrun-agent.service 2>&1)
rc=$?
check "the VM's systemd-analyze verify is silent on it with spotrun installed${out:+: $out}" \
	eval '[ "$rc" -eq 0 ] && [ -z "$out" ]'
printf '%s\n' /usr/local/bin/spotrun agent --queue "file://$tmp/queue" --idle-timeout 5s \
	--idle-command "touch $tmp/shared/idle-ran" --labels test=boot "cwd /var/lib/spotrun" >"$tmp/argv.want"
"$PY" "$top_srcdir/tests/boot/unit-exec.py" "$R" /etc/systemd/system/spotrun-agent.service --print \
	>"$tmp/argv" 2>&1
check "the unit runs: $(tr '\n' ' ' <"$tmp/argv")" cmp -s "$tmp/argv.want" "$tmp/argv"
py=$(chroot "$R" /usr/bin/python3 -c 'import spotrun; print(spotrun.__file__)' 2>&1)
check "the jobs' Python module is installed: $py" [ "${py#/usr/local/lib/python3}" != "$py" ]
check "the install script removed its build folder" [ ! -e "$R/var/tmp/spotrun-source" ]

# ---- 5. the agent claims a job
t=$(now)
cat >"$tmp/job.ini" <<EOF
[job]
name = boot-job
command = /bin/sh -c "echo ran on the VM >$tmp/shared/job-ran"
EOF
# The endpoints of tests/jobs/no-cloud.sh, as the unit's environment file.
printf 'SPOTRUN_AWS_ENDPOINT=http://127.0.0.1:1\nSPOTRUN_GCP_ENDPOINT=http://127.0.0.1:1\nSPOTRUN_AZURE_ENDPOINT=http://127.0.0.1:1\n' \
	>"$R/etc/default/spotrun-agent"
sub=$("$SPOTRUN" submit --queue "file://$tmp/queue" "$tmp/job.ini" 2>&1)
src=$?
unshare --net -- sh -c 'ip link set lo up 2>/dev/null; exec "$@"' sh \
	"$PY" "$top_srcdir/tests/boot/unit-exec.py" "$R" /etc/systemd/system/spotrun-agent.service \
	>"$tmp/agent.log" 2>&1 &
agent=$!
for _ in $(seq 600); do
	[ -e "$tmp/shared/job-ran" ] && [ -e "$tmp/shared/idle-ran" ] && break
	kill -0 "$agent" 2>/dev/null || break
	sleep 0.2
done
kill -TERM "$agent" 2>/dev/null
wait "$agent"
took agent "$t"
check "the agent claimed the job submitted here (submit: $sub), ran it and went idle" \
	eval '[ "$src" -eq 0 ] && [ "$(cat "$tmp/shared/job-ran" 2>/dev/null)" = "ran on the VM" ] && [ -e "$tmp/shared/idle-ran" ]'
sed 's/^/# agent: /' "$tmp/agent.log" | tail -n 20
# The job's status marker as this machine reads it: succeeded, in one
# attempt, on the VM's host name, which cloud-init set from the seed's
# local-hostname (in the boot's UTS namespace).
got=$("$SPOTRUN" status --json --queue "file://$tmp/queue" boot-job 2>&1 | "$PY" -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
print(j["id"], j["state"], j["attempts"], j["host"])' 2>&1)
check "spotrun status here reads the VM's result: $got" [ "$got" = "boot-job succeeded 1 spotrun-boot" ]
took total "$t_all"
echo "# times:${times%,}"
[ "$failed" -eq 0 ]

#!/bin/sh
# cloud-init-boot.sh: one real boot of `spotrun cloud-init`'s user-data, as
# far as a machine without VMs allows, timed from cloud-init's start to the
# agent's claim of a job (issue 23's target: under 60 s, no build on the VM).
# Prints TAP and the time of each step.
#
#   sudo tests/boot/cloud-init-boot.sh        (from a built tree; root only)
#
# 1. A Debian 12 root as a cloud image has it (debootstrap minbase from
#    Debian's mirror, systemd, cloud-init), made once per machine and kept in
#    $SPOTRUN_TEST_CACHE (default /var/cache/spotrun-test/debian12-cloud);
#    each run boots a copy of it (an overlay, thrown away at the end), and
#    the packages the boot downloads are kept beside it too.
# 2. The queue: Ceph RGW on loopback (tests/rgw.sh, stopped at the end
#    whatever happens), a bucket, s3://BUCKET/q?endpoint=...; the user-data
#    is `spotrun cloud-init` without --source (the prebuilt binary): run
#    here, it puts this tree's spotrun into the bucket and presigns a GET of
#    it. A job is submitted into the queue before the boot, as a fleet
#    launches VMs for jobs that wait.
# 3. The NoCloud seed (/var/lib/cloud/seed/nocloud/{user-data,meta-data})
#    and cloud-init's four stages run by hand in a chroot, in a mount
#    namespace of their own (unshare): `cloud-init init --local`, `init`,
#    `modules --mode config`, `modules --mode final`. The image's apt reaches
#    Debian's mirror (the user-data's runtime libraries and curl); its curl
#    fetches spotrun from RGW with the presigned URL (the chroot shares this
#    machine's network). cloud-init is held to the seed (datasource_list:
#    [NoCloud]) and writes no network configuration, so nothing asks a
#    metadata service.
# 4. The agent, started as soon as the last stage ends (where the install
#    script's `systemctl start` starts it on a VM): systemd is not PID 1 in a
#    chroot, so tests/boot/unit-exec.py stands in for it and runs the unit's
#    ExecStart in the root, in a network namespace with loopback only, where
#    tests/boot/relay.py joins 127.0.0.1:RGW's port to RGW through a UNIX
#    socket (and nothing else: 169.254.169.254 is never reachable). It must
#    claim the job, run it and run its idle command once idle; `spotrun
#    status` here then says the job succeeded on the VM. The boot's time is
#    from the first stage's start to the agent's claim, under 60 s.
# 5. What the user-data left: no compiler and no build in the output log,
#    the packages, spotrun installed, the unit in place and enabled, the
#    VM's own systemd-analyze verify silent on it, the agent's command line
#    as the unit runs it.
# The boot with --source (the VM builds spotrun: 30-45 s of configure and
# make on its own) is no longer run here: t12-cloud-init.sh checks its
# user-data, and doc/fleet.md ("The boot") gives its last times.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
SPOTRUN=${SPOTRUN:-$top_builddir/spotrun}
cache=${SPOTRUN_TEST_CACHE:-/var/cache/spotrun-test}
mirror=${SPOTRUN_TEST_MIRROR:-http://deb.debian.org/debian}
# What the cached root is made of: a change here makes a new one.
recipe="bookworm minbase +systemd,systemd-sysv,ca-certificates; apt: cloud-init locales; LANG=C.UTF-8; 1"
PY=/usr/bin/python3
ntests=24

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (debootstrap, chroot, mounts)"
	exit 0
fi
# The test runs in a mount namespace of its own, so every mount it makes
# goes away with it, whatever way it ends; its folder is removed from out
# here, where none of them is seen (a removal inside could reach through a
# bind mount), after RGW, if the test left it running, is stopped. And in
# a UTS namespace of its own: cloud-init sets the host name from the seed
# (its set_hostname and update_hostname modules call hostname(1)), which in
# the host's namespace renamed this machine.
if [ -z "${SR_BOOT_TMP:-}" ]; then
	SR_BOOT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/spotrun-boot.XXXXXX") || exit 1
	export SR_BOOT_TMP
	host=$(hostname)
	# A signal ends the inner half (its own traps stop RGW and exit); this
	# half waits for it and cleans up all the same.
	trap : INT TERM
	unshare --mount --uts --propagation private -- /bin/sh "$0" "$@"
	rc=$?
	"$top_srcdir/tests/rgw.sh" stop "$SR_BOOT_TMP/rgw" 2>/dev/null
	rm -rf --one-file-system "$SR_BOOT_TMP"
	if [ "$(hostname)" = "$host" ]; then
		echo "ok $ntests - this machine's host name is still $host"
	else
		echo "not ok $ntests - this machine's host name was $host, is $(hostname) after the boot"
		rc=1
	fi
	exit "$rc"
fi

n=0 failed=0
pass() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
# Milliseconds since the epoch; secs MS: MS as seconds, one decimal.
ms() { date +%s%3N; }
secs() { echo "$(($1 / 1000)).$(($1 % 1000 / 100))"; }
times=
took() { times="$times $1 $(secs $(($(ms) - $2)))s,"; }
t_all=$(ms)

tmp=$SR_BOOT_TMP
relay=
trap '[ -z "$relay" ] || kill "$relay" 2>/dev/null; "$top_srcdir/tests/rgw.sh" stop "$tmp/rgw" 2>/dev/null' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "1..$ntests"
# ---- 1. the image, made once per machine
root_cache=$cache/debian12-cloud
mkdir -p "$cache/apt-archives"
t=$(ms)
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

# ---- 2. the queue in RGW on loopback, spotrun in it, a job waiting
t=$(ms)
"$top_srcdir/tests/rgw.sh" start "$tmp/rgw" >"$tmp/rgw.log" 2>&1
rc=$?
[ "$rc" -ne 0 ] || . "$tmp/rgw/env"
bucket=spotrun-boot
ep=${SPOTRUN_TEST_S3_ENDPOINT:-}
# The bucket, made with curl's SigV4 (the keys through a config on stdin,
# never on a command line); RGW wants a payload hash header to sign.
[ "$rc" -ne 0 ] || printf 'user = "%s:%s"\n' "$SPOTRUN_TEST_S3_ACCESS_KEY" "$SPOTRUN_TEST_S3_SECRET_KEY" |
	curl -sS -f -K - --aws-sigv4 "aws:amz:$SPOTRUN_TEST_S3_REGION:s3" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -X PUT "$ep/$bucket" >>"$tmp/rgw.log" 2>&1
rc=$((rc + $?))
took rgw "$t"
check "Ceph RGW on $ep with a bucket $bucket (log: tests/rgw.sh's output)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { sed 's/^/# /' "$tmp/rgw.log" | tail -n 20; echo "Bail out! no S3 server"; exit 1; }
port=${ep##*:}
QU="s3://$bucket/q?endpoint=$ep"
# spotrun here takes the keys from the environment, as on a laptop, and
# nothing else: no settings file, no profile, no instance role.
export AWS_ACCESS_KEY_ID="$SPOTRUN_TEST_S3_ACCESS_KEY"
export AWS_SECRET_ACCESS_KEY="$SPOTRUN_TEST_S3_SECRET_KEY"
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_EC2_METADATA_DISABLED=true
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/config" XDG_DATA_HOME="$tmp/home/data"
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 SPOTRUN_QUEUE 2>/dev/null
mkdir -p "$HOME"

R=$tmp/root
mkdir -p "$R" "$tmp/upper" "$tmp/work" "$tmp/shared" "$tmp/job" "$tmp/relay"
mount -t overlay overlay -o "lowerdir=$root_cache,upperdir=$tmp/upper,workdir=$tmp/work" "$R" || exit 1
version=$("$SPOTRUN" --version | sed 's/^spotrun //')
sha=$(sha256sum <"$SPOTRUN" | cut -c1-64)
# The idle command stands for `systemctl poweroff`: it leaves a mark.
set -- --queue "$QU" --idle-timeout 5s \
	--idle-command "touch $tmp/shared/idle-ran" --labels test=boot
seed=$R/var/lib/cloud/seed/nocloud
mkdir -p "$seed"
"$SPOTRUN" cloud-init "$@" >"$seed/user-data" 2>"$tmp/ci.err"
rc=$?
url=$(sed -n 's/^ *url=.\(.*\).$/\1/p' "$seed/user-data")
printf 'instance-id: spotrun-boot-test\nlocal-hostname: spotrun-boot\n' >"$seed/meta-data"
# shellcheck disable=SC2034 # read by the check's eval
key=bin/spotrun-$version-$(echo "$sha" | cut -c1-16)
check "spotrun cloud-init put this spotrun into the queue's store and presigned it: ${url%%\?*} (stderr: $(tr '\n' ' ' <"$tmp/ci.err"))" \
	eval '[ "$rc" -eq 0 ] && [ "${url%%\?*}" = "$ep/$bucket/q/$key" ] && grep -qx "      sum=$sha" "$seed/user-data"'
cat >"$tmp/job/job.ini" <<EOF2
[job]
name = boot-job
command = /bin/sh -c "echo ran on the VM >$tmp/shared/job-ran"
EOF2
sub=$("$SPOTRUN" submit --queue "$QU" "$tmp/job/job.ini" 2>&1)
rc=$?
check "a job submitted into $QU, waiting for the VM: $(echo "$sub" | tail -n 1)" [ "$rc" -eq 0 ]

# ---- 3. the boot
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
# A folder for the job's and the idle command's marks, at the same path
# inside.
mkdir -p "$R$tmp/shared" && mount --bind "$tmp/shared" "$R$tmp/shared"
# No service is started by a package installed in the chroot.
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
chmod 755 "$R/usr/sbin/policy-rc.d"
printf 'datasource_list: [ NoCloud ]\nnetwork: {config: disabled}\n' \
	>"$R/etc/cloud/cloud.cfg.d/90-spotrun-boot-test.cfg"
# The agent's keys. On a VM they come from the instance's role (IMDSv2),
# which this root has no way to: here they are in the unit's
# EnvironmentFile, which unit-exec.py reads as systemd would, and never in
# the user-data. The endpoints of tests/jobs/no-cloud.sh keep the
# providers' metadata questions on a closed port.
cat >"$R/etc/default/spotrun-agent" <<EOF2
AWS_ACCESS_KEY_ID=$SPOTRUN_TEST_S3_ACCESS_KEY
AWS_SECRET_ACCESS_KEY=$SPOTRUN_TEST_S3_SECRET_KEY
AWS_CONFIG_FILE=/dev/null
AWS_SHARED_CREDENTIALS_FILE=/dev/null
AWS_EC2_METADATA_DISABLED=true
SPOTRUN_AWS_ENDPOINT=http://127.0.0.1:1
SPOTRUN_GCP_ENDPOINT=http://127.0.0.1:1
SPOTRUN_AZURE_ENDPOINT=http://127.0.0.1:1
EOF2
chmod 600 "$R/etc/default/spotrun-agent"
# This side of the agent's way to RGW (relay.py), listening before the boot.
"$PY" -u "$top_srcdir/tests/boot/relay.py" unix-to-tcp "$tmp/relay/rgw.sock" "$port" \
	>"$tmp/relay.log" 2>&1 &
relay=$!
t_boot=$(ms)
stage=0
for s in "init --local" "init" "modules --mode config" "modules --mode final"; do
	stage=$((stage + 1))
	t=$(ms)
	# shellcheck disable=SC2086
	# systemctl cannot tell this chroot from a booted system here (it cannot
	# read PID 1's root): SYSTEMD_OFFLINE=1 tells it no manager runs, so the
	# install script's daemon-reload and start are skipped ("Running in
	# chroot, ignoring command") and its enable is done, as in any chroot.
	env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
		HOME=/root SYSTEMD_OFFLINE=1 chroot "$R" cloud-init $s >"$tmp/stage$stage.log" 2>&1
	rc=$?
	took "$(echo "$s" | sed 's/modules --mode //; s/ --local/-local/')" "$t"
	check "cloud-init $s exits 0 ($(secs $(($(ms) - t)))s)" [ "$rc" -eq 0 ]
	[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/stage$stage.log" | tail -n 30
done

# ---- 4. the agent, started where the install script's systemctl start is
t=$(ms)
grep -qx ready "$tmp/relay.log" ||
	{ sleep 1; grep -qx ready "$tmp/relay.log"; } ||
	echo "# relay.py (host side) is not ready: $(cat "$tmp/relay.log")"
unshare --net -- sh -c 'ip link set lo up 2>/dev/null; exec "$@"' sh \
	"$PY" "$top_srcdir/tests/boot/relay.py" tcp-to-unix "$port" "$tmp/relay/rgw.sock" -- \
	"$PY" "$top_srcdir/tests/boot/unit-exec.py" "$R" /etc/systemd/system/spotrun-agent.service \
	>"$tmp/agent.log" 2>&1 &
agent=$!
# The agent's first line, and its claim (fleet/agent-job.c's "ID: claimed").
t_up='' t_claim='' claim_re='^spotrun agent: boot-job: claimed '
for _ in $(seq 1200); do
	[ -n "$t_up" ] || { [ -s "$tmp/agent.log" ] && t_up=$(ms); }
	[ -n "$t_claim" ] || { grep -q "$claim_re" "$tmp/agent.log" && t_claim=$(ms); }
	[ -e "$tmp/shared/job-ran" ] && [ -e "$tmp/shared/idle-ran" ] && break
	kill -0 "$agent" 2>/dev/null || break
	sleep 0.1
done
kill -TERM "$agent" 2>/dev/null
wait "$agent"
took agent "$t"
check "the agent claimed the job submitted here, ran it and went idle" \
	eval '[ "$(cat "$tmp/shared/job-ran" 2>/dev/null)" = "ran on the VM" ] && [ -e "$tmp/shared/idle-ran" ]'
sed 's/^/# agent: /' "$tmp/agent.log" | tail -n 20
up=none boot=none
[ -z "$t_up" ] || up=$(secs $((t_up - t_boot)))s
[ -z "$t_claim" ] || boot=$(secs $((t_claim - t_boot)))s
check "boot to a running agent under 60 s: $boot from cloud-init's first stage to the claim (its first line: $up)" \
	eval '[ -n "$t_claim" ] && [ $((t_claim - t_boot)) -lt 60000 ]'
# The job's status marker as this machine reads it: succeeded, in one
# attempt, on the VM's host name, which cloud-init set from the seed's
# local-hostname (in the boot's UTS namespace).
got=$("$SPOTRUN" status --json --queue "$QU" boot-job 2>&1 | "$PY" -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
print(j["id"], j["state"], j["attempts"], j["host"])' 2>&1)
check "spotrun status here reads the VM's result: $got" [ "$got" = "boot-job succeeded 1 spotrun-boot" ]

# Where the stages' time went: cloud-init's own account, slowest first.
chroot "$R" cloud-init analyze blame -i /var/log/cloud-init.log 2>/dev/null |
	sed -n 's/^ *\([0-9.]*s\) (\(.*\))$/# blame: \1 \2/p' | head -n 5

# ---- 5. what the user-data left
errors=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["v1"]["errors"])' \
	"$R/run/cloud-init/result.json" 2>&1)
check "cloud-init's result.json has no error: $errors" [ "$errors" = "[]" ]
[ "$errors" = "[]" ] || tail -n 40 "$R/var/log/cloud-init-output.log" | sed 's/^/# /'
cc=$(chroot "$R" sh -c 'command -v cc gcc make' 2>&1)
check "no compiler on the VM (command -v cc gcc make: '$cc')" [ -z "$cc" ]
built=$(grep -E '^checking |^config\.status:|^make(\[[0-9]+\])?: |^(gcc|cc) |autoreconf' \
	"$R/var/log/cloud-init-output.log" | head -n 3)
check "no build in cloud-init's output log (configure, make, a compiler: '$built')" [ -z "$built" ]
# (dpkg-query lists them by name)
pk=$(chroot "$R" dpkg-query -W -f '${Package}:${Status} ' curl libcurl4 libexpat1 libinih1 \
	libjansson4 libssl3 libxxhash0 libzstd1 2>&1 | sed 's/:install ok installed / /g')
check "the user-data's packages are installed: $pk" \
	[ "$pk" = "curl libcurl4 libexpat1 libinih1 libjansson4 libssl3 libxxhash0 libzstd1 " ]
check "the VM checked spotrun's SHA-256 (spotrun-install's output)" \
	grep -qx 'spotrun: OK' "$R/var/log/cloud-init-output.log"
v=$(chroot "$R" /usr/local/bin/spotrun --version 2>&1)
# shellcheck disable=SC2034 # read by the check's eval
isum=$(sha256sum <"$R/usr/local/bin/spotrun" | cut -c1-64)
check "spotrun is installed in /usr/local/bin, this very binary: $v" \
	eval '[ "$v" = "spotrun $version" ] && [ "$isum" = "$sha" ]'
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
printf '%s\n' /usr/local/bin/spotrun agent --queue "$QU" --idle-timeout 5s \
	--idle-command "touch $tmp/shared/idle-ran" --labels test=boot "cwd /var/lib/spotrun" >"$tmp/argv.want"
"$PY" "$top_srcdir/tests/boot/unit-exec.py" "$R" /etc/systemd/system/spotrun-agent.service --print \
	>"$tmp/argv" 2>&1
check "the unit runs: $(tr '\n' ' ' <"$tmp/argv")" cmp -s "$tmp/argv.want" "$tmp/argv"
py=$(chroot "$R" /usr/bin/python3 -c 'import spotrun' 2>&1 | tail -n 1)
check "the jobs' Python module is not installed (the prebuilt binary is the command alone): $py" \
	[ "$py" = "ModuleNotFoundError: No module named 'spotrun'" ]
check "the install script removed its folder" [ ! -e "$R/var/tmp/spotrun-bin" ]
took total "$t_all"
echo "# times:${times%,}; boot to the agent's claim: $boot"
[ "$failed" -eq 0 ]

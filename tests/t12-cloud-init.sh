#!/bin/sh
# t12-cloud-init.sh: `spotrun cloud-init` as a user runs it: the user-data of
# two examples against golden files (tests/cloud-init/), the same with AWS
# and GCS keys in the environment (none of them in the output), keys given
# in options refused without being shown, usage errors and warnings with
# their exact messages; the user-data against cloud-init's own schema check
# (Debian's cloud-init 22.4: `cloud-init schema -c`), the unit in it equal to
# `--unit`, the install script valid sh; the unit and the one `make install`
# installs through `systemd-analyze verify` (which runs offline on unit
# files: no systemd as PID 1 is needed), and the install rule itself.
# Characters YAML reads as line breaks (U+0085, U+2028, U+2029) or structure
# are refused with their exact messages; the worst input that is accepted
# (every printable ASCII character in --idle-command, YAML and sh syntax in
# it) still makes user-data that cloud-init's schema passes with exactly
# the expected top-level keys.
# The real boot is tests/boot/cloud-init-boot.sh.
set -u
. "$top_srcdir/tests/jobs/no-cloud.sh"
golden="$top_srcdir/tests/cloud-init"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t12.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
PY=/usr/bin/python3
SHA=5f2b1a0c9e8d7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a
unset SPOTRUN_QUEUE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN \
	GS_ACCESS_KEY_ID GS_SECRET_ACCESS_KEY
echo "1..30"
i=0
pass() { i=$((i + 1)); echo "ok $i - $*"; }
fail() { i=$((i + 1)); echo "not ok $i - $*"; }
# check DESCRIPTION COMMAND...: ok when COMMAND succeeds.
check() {
	what=$1; shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
# run: spotrun cloud-init with the arguments; stdout in $tmp/out, stderr in
# $tmp/err, the exit code in $rc.
run() {
	"$SPOTRUN" cloud-init "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
same() { # file1 file2: equal, else the diff as comments
	if cmp -s "$1" "$2"; then return 0; fi
	diff -u "$1" "$2" | sed 's/^/# /' | head -n 40
	return 1
}

tarball_args="--queue s3://spotrun-fleet/queue?region=eu-west-1 \
--source https://example.org/spotrun-0.1.0.tar.gz --sha256 $SHA --idle-timeout 30m"
# shellcheck disable=SC2086
run $tarball_args --idle-command 'systemctl poweroff' --labels team=ml,tier=spot
check "a tarball's user-data is tests/cloud-init/tarball.yaml, nothing on stderr, exit 0" \
	eval '[ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && same "$golden/tarball.yaml" "$tmp/out"'
cp "$tmp/out" "$tmp/tarball.yaml"
run --source 'https://git.example.org/spotrun.git#v0.1.0' --queue s3://spotrun-fleet/queue
check "a git source's user-data is tests/cloud-init/git.yaml" \
	eval '[ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && same "$golden/git.yaml" "$tmp/out"'
cp "$tmp/out" "$tmp/git.yaml"

# Keys in the environment change nothing and never reach the output.
k1=AKIAIOSFODNN7EXAMPLE k2=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
k3=IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN0123456789
k4=GOOG1EEXAMPLEHMACACCESSIDABCDEFGHIJKLMNOPQRSTUVWXYZ012345678 k5=gsSecretExampleValue0123456789abcdef
# shellcheck disable=SC2086
AWS_ACCESS_KEY_ID=$k1 AWS_SECRET_ACCESS_KEY=$k2 AWS_SESSION_TOKEN=$k3 GS_ACCESS_KEY_ID=$k4 \
	GS_SECRET_ACCESS_KEY=$k5 "$SPOTRUN" cloud-init $tarball_args --idle-command 'systemctl poweroff' \
	--labels team=ml,tier=spot >"$tmp/keys.out" 2>"$tmp/keys.err"
rc=$?
leaked=
for k in "$k1" "$k2" "$k3" "$k4" "$k5"; do
	grep -qF -e "$k" "$tmp/keys.out" "$tmp/keys.err" && leaked="$leaked ${k%"${k#????}"}..."
done
check "with AWS and GCS keys in the environment: the same user-data, none of the keys in it$leaked" \
	eval '[ "$rc" -eq 0 ] && [ -z "$leaked" ] && same "$golden/tarball.yaml" "$tmp/keys.out"'
SPOTRUN_QUEUE=s3://spotrun-fleet/queue "$SPOTRUN" cloud-init \
	--source 'https://git.example.org/spotrun.git#v0.1.0' >"$tmp/env.out" 2>&1
check "the queue from SPOTRUN_QUEUE when --queue is not given" same "$golden/git.yaml" "$tmp/env.out"

why="credentials come from the instance's role on the VM, never from user-data, which anyone on the VM and the cloud's console can read"
# expect DESCRIPTION CODE MESSAGE ARGS...: exit CODE, MESSAGE alone on
# stderr, nothing on stdout.
expect() {
	what=$1 want_rc=$2 want=$3; shift 3
	run "$@"
	if [ "$rc" -eq "$want_rc" ] && [ ! -s "$tmp/out" ] && [ "$(cat "$tmp/err")" = "$want" ]; then
		pass "$what"
	else
		fail "$what: exit $rc"
		sed 's/^/# stderr: /' "$tmp/err"
		head -n 3 "$tmp/out" | sed 's/^/# stdout: /'
	fi
}
expect "a key set in --idle-command is refused (64)" 64 \
	"spotrun cloud-init: --idle-command sets AWS_SECRET_ACCESS_KEY: $why" \
	--queue s3://spotrun-fleet/q --source https://example.org/s.tar.gz --idle-timeout 1m \
	--idle-command "env AWS_SECRET_ACCESS_KEY=$k2 poweroff"
AWS_SECRET_ACCESS_KEY=$k2 "$SPOTRUN" cloud-init --queue s3://spotrun-fleet/q \
	--source "https://example.org/s.tar.gz?sig=$k2" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "the environment's secret in --source is refused without being shown" \
	eval '[ "$rc" -eq 64 ] && [ ! -s "$tmp/out" ] && ! grep -qF -e "$k2" "$tmp/err" &&
	[ "$(cat "$tmp/err")" = "spotrun cloud-init: --source holds the value of \$AWS_SECRET_ACCESS_KEY: $why" ]'
expect "a password in the --source URL is refused" 64 \
	"spotrun cloud-init: --source has a user or password in the URL (USER:PASSWORD@HOST): $why" \
	--queue s3://spotrun-fleet/q --source https://ci:s3cr3t@git.example.org/spotrun.git
expect "no queue at all" 64 \
	"spotrun cloud-init: no queue: give --queue URL (or set SPOTRUN_QUEUE): the agent claims its jobs from it" \
	--source https://example.org/s.tar.gz
expect "a misspelt option gets its suggestion and the usage" 64 \
	"spotrun cloud-init: unknown option --queu (did you mean --queue?); see 'spotrun help cloud-init'
usage: spotrun cloud-init [--queue URL] [--source URL] [--sha256 HEX]
                          [--idle-timeout DURATION] [--idle-command COMMAND]
                          [--labels LIST] [--unit] [--url-expires DURATION]" \
	--queu s3://spotrun-fleet/q
expect "an operand is refused" 64 \
	"spotrun cloud-init: too many arguments: 'extra' (takes none); see 'spotrun help cloud-init'
usage: spotrun cloud-init [--queue URL] [--source URL] [--sha256 HEX]
                          [--idle-timeout DURATION] [--idle-command COMMAND]
                          [--labels LIST] [--unit] [--url-expires DURATION]" \
	--queue s3://spotrun-fleet/q extra
expect "a bad --idle-timeout" 64 \
	"spotrun cloud-init: --idle-timeout '30 min': not a duration (e.g. 30m, 1h30m, 90s)" \
	--queue s3://spotrun-fleet/q --source https://example.org/s.tar.gz --idle-timeout '30 min'
run --queue file:///srv/queue --source http://127.0.0.1:8000/spotrun-0.1.0.tar.gz
check "warnings (plain http, a file:// queue) go to stderr and the user-data is still printed" \
	eval '[ "$rc" -eq 0 ] && head -n 1 "$tmp/out" | grep -qx "#cloud-config" &&
	[ "$(cat "$tmp/err")" = "spotrun cloud-init: warning: --source is plain http: the VM builds and runs as root what it fetches from it; give --sha256 (a tarball) or use https
spotrun cloud-init: warning: --queue file:///srv/queue is a directory on each VM: agents share it only where it is a shared file system (NFS) mounted at that path" ]'
cp "$tmp/out" "$tmp/http.yaml"
run --help
check "--help: the usage first, on three lines of at most 80 columns, exit 0" \
	eval '[ "$rc" -eq 0 ] && [ "$(head -n 3 "$tmp/out")" = "usage: spotrun cloud-init [--queue URL] [--source URL] [--sha256 HEX]
                          [--idle-timeout DURATION] [--idle-command COMMAND]
                          [--labels LIST] [--unit] [--url-expires DURATION]" ] && [ -z "$(awk "length > 80" "$tmp/out")" ]'

# cloud-init's own check of the user-data.
for f in tarball git http; do
	out=$(cd "$tmp" && cloud-init schema -c "$f.yaml" 2>&1)
	check "cloud-init schema passes $f.yaml: $out" [ "$out" = "Valid cloud-config: $f.yaml" ]
done
sed 's/^packages:$/packages: 5\nxpackages:/' "$tmp/tarball.yaml" >"$tmp/bad.yaml"
out=$(cd "$tmp" && cloud-init schema -c bad.yaml 2>&1)
check "cloud-init schema fails a broken copy (so the check can fail)" \
	eval 'printf "%s\n" "$out" | grep -qF "packages: 5 is not of type '"'array'"'"'

# What YAML or systemd could read as structure is refused in every option:
# a U+2028 would end the unit's block scalar and make what follows it
# top-level cloud-config (a bootcmd run as root).
ascii_only="the user-data and its unit take printable ASCII only (YAML ends a line at U+0085, U+2028 and U+2029, and reads control characters as structure)"
expect "U+2028 in --idle-command is refused, naming it, its byte and the fix (64)" 64 \
	"spotrun cloud-init: --idle-command has U+2028 at byte 9: $ascii_only; write the value in ASCII" \
	--queue s3://spotrun-fleet/q --source https://example.org/s.tar.gz --idle-timeout 1m \
	--idle-command "poweroff$(printf '\342\200\250')bootcmd: [[sh, -c, 'id > /tmp/pwned']]"
expect "U+0085 in the queue URL's prefix is refused, with its percent-encoding" 64 \
	"spotrun cloud-init: --queue has U+0085 at byte 21: $ascii_only; percent-encode it as %C2%85" \
	--queue "s3://spotrun-fleet/q$(printf '\302\205')x" --source https://example.org/s.tar.gz
# The worst accepted: every printable ASCII character, and YAML, systemd and
# sh syntax, in the idle command.
all=$("$PY" -c 'print("".join(map(chr, range(32, 127))))')
worst="sh -c 'echo \"a: b # c\\n- bootcmd: [x]\" | tee %h/\$HOME' ; $all"
run --queue 's3://spotrun-fleet/q%0Abootcmd?region=eu-west-1' --source https://example.org/s.tar.gz \
	--idle-timeout 30m --idle-command "$worst" --labels team=ml,url=a:/b
cp "$tmp/out" "$tmp/worst.yaml"
out=$(cd "$tmp" && cloud-init schema -c worst.yaml 2>&1)
check "the worst accepted input: exit $rc, cloud-init schema passes it: $out" \
	eval '[ "$rc" -eq 0 ] && [ "$out" = "Valid cloud-config: worst.yaml" ]'
"$PY" - "$tmp/worst.yaml" "$tmp" <<'EOF' >"$tmp/wparts" 2>&1
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
files = {f["path"]: f for f in doc["write_files"]}
open(sys.argv[2] + "/worst-unit.service", "w").write(files["/etc/systemd/system/spotrun-agent.service"]["content"])
print(sorted(doc), sorted(files))
EOF
check "... exactly its top-level keys and two files: $(cat "$tmp/wparts")" [ "$(cat "$tmp/wparts")" = \
"['package_update', 'packages', 'runcmd', 'write_files'] ['/etc/systemd/system/spotrun-agent.service', '/usr/local/sbin/spotrun-install']" ]
run --queue 's3://spotrun-fleet/q%0Abootcmd?region=eu-west-1' --idle-timeout 30m \
	--idle-command "$worst" --labels team=ml,url=a:/b --unit
check "... the unit in it is what --unit prints" same "$tmp/out" "$tmp/worst-unit.service"

# The parts of the user-data, read as YAML.
run --queue 's3://spotrun-fleet/queue?region=eu-west-1' --idle-timeout 30m \
	--idle-command 'systemctl poweroff' --labels team=ml,tier=spot --unit
cp "$tmp/out" "$tmp/unit.service"
"$PY" - "$tmp/tarball.yaml" "$tmp" <<'EOF' >"$tmp/parts" 2>&1
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
files = {f["path"]: f for f in doc["write_files"]}
open(sys.argv[2] + "/yaml-unit.service", "w").write(files["/etc/systemd/system/spotrun-agent.service"]["content"])
open(sys.argv[2] + "/install.sh", "w").write(files["/usr/local/sbin/spotrun-install"]["content"])
print(sorted(doc), doc["packages"], doc["runcmd"],
      [(f["path"], f["owner"], f["permissions"]) for f in doc["write_files"]])
EOF
check "the user-data's keys, packages, runcmd and files: $(cat "$tmp/parts")" [ "$(cat "$tmp/parts")" = \
"['package_update', 'packages', 'runcmd', 'write_files'] ['ca-certificates', 'curl'] [['/usr/local/sbin/spotrun-install']] [('/etc/systemd/system/spotrun-agent.service', 'root:root', '0644'), ('/usr/local/sbin/spotrun-install', 'root:root', '0755')]" ]
check "the unit in the user-data is what --unit prints" same "$tmp/unit.service" "$tmp/yaml-unit.service"
check "the install script is valid sh" sh -n "$tmp/install.sh"
check "the install script stops at the first failure (set -eu) and checks the tarball" \
	eval 'grep -qx "set -eu" "$tmp/install.sh" && grep -qxF "echo '"'$SHA  source.tar'"' | sha256sum -c -" "$tmp/install.sh"'

# systemd's own check of the units. It wants the ExecStart binary to
# exist, so spotrun's path on the VM is replaced by the built one's; its
# warnings (an unknown key, a bad value) exit 0, so its output must be empty.
verify() { # unit file: systemd-analyze verify's output and status in $out
	mkdir -p "$tmp/v"
	sed "s|^ExecStart=[^ ]*/spotrun |ExecStart=$SPOTRUN |" "$1" >"$tmp/v/spotrun-agent.service"
	out=$(systemd-analyze verify --man=no "$tmp/v/spotrun-agent.service" 2>&1)
	vrc=$?
}
verify "$tmp/unit.service"
check "systemd-analyze verify passes the user-data's unit, silent${out:+: $out}" \
	eval '[ "$vrc" -eq 0 ] && [ -z "$out" ]'
verify "$top_builddir/dist/spotrun-agent.service"
check "systemd-analyze verify passes the unit make install installs, silent${out:+: $out}" \
	eval '[ "$vrc" -eq 0 ] && [ -z "$out" ] && grep -qx "ExecStart=.*/spotrun agent" "$top_builddir/dist/spotrun-agent.service"'
sed 's/^KillMode=mixed$/KillMode=mixd/' "$tmp/unit.service" >"$tmp/bad.service"
verify "$tmp/bad.service"
check "systemd-analyze verify reports a bad KillMode (so the check can fail)" \
	eval 'printf "%s\n" "$out" | grep -qF "Failed to parse kill mode specification, ignoring: mixd"'

# make install puts the unit where configure said, or nowhere with "no".
dir=$(sed -n 's/^systemdsystemunitdir = //p' "$top_builddir/Makefile")
prefix=$(sed -n 's/^prefix = //p' "$top_builddir/Makefile")
make -s -C "$top_builddir" install-systemdsystemunitDATA DESTDIR="$tmp/dest" >"$tmp/inst" 2>&1
irc=$?
if [ "$dir" = no ]; then
	check "configured without a unit folder: make install installs no unit" \
		eval '[ "$irc" -eq 0 ] && [ -z "$(find "$tmp/dest" -type f 2>/dev/null)" ]'
else
	unitdir=$(printf '%s\n' "$dir" | sed "s|\${prefix}|$prefix|")
	check "make install puts the unit in $unitdir" \
		eval '[ "$irc" -eq 0 ] && same "$top_builddir/dist/spotrun-agent.service" "$tmp/dest$unitdir/spotrun-agent.service"'
fi

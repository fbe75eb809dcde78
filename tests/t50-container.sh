#!/bin/sh
# t50-container.sh: [job] image, every rank run in a container
# (runner/container.h). First through a fake runtime on PATH that records
# its argv and runs the command after the image itself: the exact command
# line of each rank (its name, mounts, GPUs by CDI for podman and --gpus for
# docker, the variables spotrun sets passed by name, CUDA_VISIBLE_DEVICES
# renumbered inside), the image pulled once, a missing runtime and a failed
# pull as errors naming the key, exit 128+N read as death by signal N, and a
# client killed with SIGKILL followed by `RUNTIME kill NAME`. Then with real
# podman, on an image imported from a busybox root (no registry), where it
# can run containers here: exit codes, SIGTERM reaching the job, a
# checkpoint request answered through the mounts, files owned as spotrun's
# user. Skipped, with podman's own error, where it cannot.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup

bin=$t_tmp/bin
mkdir -p "$bin"
# The fake runtime: argv to $t_tmp/calls (one line a call), `image inspect`
# fails until `pull` made $t_tmp/pulled; `run` skips its options and runs
# the command with -w's directory, its pid first in $t_tmp/client.pid.
cat > "$bin/fake" <<'EOF'
#!/bin/sh
echo "$(basename "$0") $*" >> "$T/calls"
case $1 in
image)	[ -e "$T/pulled" ]; exit ;;
pull)	[ -z "$FAIL_PULL" ] || { echo "trying to pull $2..." >&2; echo "Error: $2: manifest unknown" >&2; exit 125; }
	: > "$T/pulled"; exit 0 ;;
kill)	exit 0 ;;
run)	shift ;;
*)	exit 125 ;;
esac
while [ $# -gt 0 ]; do
	case $1 in
	--name|-v|-e|--device|--gpus) shift 2 ;;
	-w)	cd "$2" || exit 126; shift 2 ;;
	-*)	shift ;;
	*)	shift; break ;;		# the image
	esac
done
echo $$ > "$T/client.pid"
exec "$@"
EOF
chmod +x "$bin/fake"
ln -s fake "$bin/podman"
T=$t_tmp
export T
# PATH with the fake podman alone, and one with docker alone
mkdir -p "$t_tmp/dbin"
ln -s "$bin/fake" "$t_tmp/dbin/docker"
# and the tools the jobs and the fake use, apart from any real runtime
mkdir -p "$t_tmp/sys"
for c in sh sleep true touch basename cat; do
	for d in /usr/bin /bin; do [ -x "$d/$c" ] && { ln -s "$d/$c" "$t_tmp/sys/$c"; break; }; done
done
FPATH=$bin:$t_tmp/sys
DPATH=$t_tmp/dbin:$t_tmp/sys

run() {	# run NAME PATH: spotrun run, output to NAME.out/.err, status in $t_rc
	PATH=$2 "$SPOTRUN" run "$t_tmp/$1.ini" > "$t_tmp/$1.out" 2> "$t_tmp/$1.err"
	t_rc=$?
}
calls() {	# calls WORD: the recorded calls whose second word is WORD
	grep -c "^[a-z]* $1 " "$t_tmp/calls" 2>/dev/null
}

# 1-9: two ranks on two named GPUs through podman: the command lines.
t_jobfile gpu "sh -c 'echo rank \$RANK sees \$CUDA_VISIBLE_DEVICES in \$PWD'" \
	"[resources]" "gpus = 2" "[env]" "FOO = bar" "[provider]" "name = local"
ini_set "$t_tmp/gpu.ini" job image example.org/train:1
CUDA_VISIBLE_DEVICES=GPU-aa,GPU-bb run gpu "$FPATH"
t_is "$t_rc" 0 "a job in an image: exit 0" || t_show "$t_tmp/gpu.err"
t_is "$(calls image) $(calls pull)" "1 1" "the image inspected, then pulled once"
t_like "$t_tmp/gpu.err" "  image    pulled example.org/train:1 with podman \($bin/podman\) in [0-9.]+s$" \
	"the pull in the timeline, with the runtime and its time"
line0=$(grep '^podman run .*-r0 ' "$t_tmp/calls")
pid=$(echo "$line0" | sed -n 's/.*--name spotrun-gpu-\([0-9]*\)-a1-r0 .*/\1/p')
t_is "$(echo "$line0" | sed 's/ -e [A-Z_]*[=0-9,]*//g')" \
	"podman run --rm --init --sig-proxy=true --name spotrun-gpu-$pid-a1-r0 --network=host --ipc=host --user=$(id -u):$(id -g)$( [ "$(id -u)" = 0 ] || echo ' --userns=keep-id') -v $t_tmp:$t_tmp -w $t_tmp --device nvidia.com/gpu=GPU-aa example.org/train:1 sh -c echo rank \$RANK sees \$CUDA_VISIBLE_DEVICES in \$PWD" \
	"rank 0's command line: name, host network and IPC, user, the workdir (holding the local dir), its GPU by CDI"
t_like "$t_tmp/calls" '^podman run .*-r1 .* --device nvidia.com/gpu=GPU-bb .*-e CUDA_VISIBLE_DEVICES=0 ' \
	"rank 1 gets GPU-bb, seen inside as device 0"
for v in FOO RANK WORLD_SIZE SPOTRUN_CKPT_DIR SPOTRUN_CKPT_REQUEST SPOTRUN_CKPT_DONE MASTER_PORT; do
	echo "$line0" | grep -q " -e $v " || missing="$missing $v"
done
t_is "${missing:-none}" none "passed by name: [env]'s FOO, RANK, WORLD_SIZE, SPOTRUN_CKPT_*, MASTER_PORT"
t_unlike "$t_tmp/calls" ' -e (PATH|HOME|T)( |=)' "spotrun's own environment (PATH, HOME) is not passed"
t_like "$t_tmp/gpu.out" '^\[1\] rank 1 sees GPU-bb in ' "the client's environment holds the values (the fake runs the command with it)"
CUDA_VISIBLE_DEVICES=GPU-aa,GPU-bb run gpu "$FPATH"
t_is "$t_rc $(calls pull) $(calls image)" "0 1 2" "a second run finds the image: inspected, not pulled again"
t_like "$t_tmp/gpu.err" '  image    example.org/train:1 is on this machine; podman ' "the timeline says so"

# 10-11: docker's flags.
: > "$t_tmp/calls"
t_jobfile dock "true" "[resources]" "gpus = 1" "[provider]" "name = local"
ini_set "$t_tmp/dock.ini" job image example.org/train:1
ini_set "$t_tmp/dock.ini" job container_runtime docker
CUDA_VISIBLE_DEVICES=3 run dock "$DPATH"
t_is "$t_rc" 0 "container_runtime = docker: exit 0" || t_show "$t_tmp/dock.err"
t_like "$t_tmp/calls" '^docker run --rm --init --sig-proxy=true --name spotrun-dock-[0-9]+-a1-r0 .* --gpus device=3 .*-e CUDA_VISIBLE_DEVICES=0 .* example.org/train:1 true$' \
	"docker: --gpus device=3, seen inside as 0"

# 12-15: no runtime, a failed pull: errors naming the key, the job not run.
t_jobfile none "touch ran" "[provider]" "name = local"
ini_set "$t_tmp/none.ini" job image example.org/train:1
ini_set "$t_tmp/none.ini" job container_runtime podman
run none "$DPATH"
t_is "$t_rc" 65 "container_runtime = podman without podman: exit 65 (the job file's to fix)"
t_like "$t_tmp/none.err" 'image = example.org/train:1: no container runtime: container_runtime = podman and podman is not on PATH; install it, or set container_runtime = auto' \
	"the error names the key and the fix"
rm -f "$t_tmp/pulled"
CUDA_VISIBLE_DEVICES=GPU-aa,GPU-bb FAIL_PULL=1 run gpu "$FPATH"
t_is "$t_rc" 65 "a failed pull: exit 65"
t_like "$t_tmp/gpu.err" 'image = example.org/train:1: podman pull failed \(exit 125\): Error: example.org/train:1: manifest unknown; give an image' \
	"its error holds the runtime's last line"

# 16-18: exit codes through the client; 143 is death by SIGTERM.
t_jobfile code "sh -c 'exit 3'" "[provider]" "name = local"
ini_set "$t_tmp/code.ini" job image img:1
run code "$FPATH"
t_is "$t_rc" 3 "the job's exit 3 is spotrun's"
t_jobfile sig "sh -c 'if [ \$RANK = 0 ]; then exit 137; fi; exec sleep 30'" "[resources]" "procs = 2" \
	"[provider]" "name = local"
ini_set "$t_tmp/sig.ini" job image img:1
run sig "$FPATH"
t_is "$t_rc" 137 "exit 137 from the runtime: 137"
t_like "$t_tmp/sig.err" '  ranks    rank 0 SIGKILL \(first\); rank 1 SIGTERM from spotrun$' \
	"read as rank 0's death by SIGKILL, as without a container"

# 19-20: the client killed with SIGKILL: the container is killed by name.
: > "$t_tmp/calls"
rm -f "$t_tmp/client.pid"
t_jobfile hang "sleep 60" "[provider]" "name = local"
ini_set "$t_tmp/hang.ini" job image img:1
PATH=$FPATH t_bg hang "$SPOTRUN" run "$t_tmp/hang.ini"
wait_for "$t_tmp/calls" '^podman run ' 10 "$t_last"
i=0
while [ ! -s "$t_tmp/client.pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -KILL "$(cat "$t_tmp/client.pid")"
t_wait "$t_last"
t_is "$t_rc" 137 "the client killed: 137"
t_like "$t_tmp/calls" "^podman kill spotrun-hang-$t_last-a1-r0\$" "then \`podman kill NAME\` for the container it left"

# 21-22: [data] in a container: the cache mounted read-only at its own path
# (a relative destination's link then resolves inside), an absolute
# destination mounted there too.
mkdir -p "$t_tmp/dsrc/set" "$t_tmp/dw"
printf 'seen' > "$t_tmp/dsrc/set/a.txt"
abs=/tmp/t50-data-$$
cat > "$t_tmp/dw/dj.ini" <<EOF
[job]
name = dj
image = img:1
command = sh -c 'cat in/a.txt'
[provider]
name = local
[data]
in = file://$t_tmp/dsrc/set/
$abs = file://$t_tmp/dsrc/set/
EOF
: > "$t_tmp/calls"
PATH=$FPATH "$SPOTRUN" run "$t_tmp/dw/dj.ini" > "$t_tmp/dj.out" 2> "$t_tmp/dj.err"
t_is "$?|$(cat "$t_tmp/dj.out")" "0|seen" "a job with [data] in an image: exit 0, it read the data" ||
	t_show "$t_tmp/dj.err"
tree=$(readlink "$t_tmp/dw/in")
t_like "$t_tmp/calls" "^podman run .* -v $t_tmp/dw:$t_tmp/dw -v $tree:$tree:ro -v $tree:$tree:ro -v $tree:$abs:ro -w $t_tmp/dw " \
	"each entry's cached copy mounted read-only at its path, the absolute one at its destination too"
rm -f "$abs"

# 23-: real podman, where it can run a container here.
real() {
	if ! command -v podman > /dev/null; then echo "podman is not installed"; return 1; fi
	bb=$(command -v busybox || ls /bin/busybox 2>/dev/null)
	if [ -z "$bb" ] || ! file -L "$bb" 2>/dev/null | grep -q 'statically linked'; then
		echo "no static busybox (busybox-static) to build an image from"; return 1
	fi
	root=$t_tmp/root
	mkdir -p "$root/bin" "$root/tmp"
	cp "$bb" "$root/bin/busybox"
	for a in sh sleep cat echo touch id ls test [ true mkdir; do ln -s busybox "$root/bin/$a"; done
	tar -C "$root" -c . | podman import - spotrun-t50:1 > /dev/null 2> "$t_tmp/import.err" ||
		{ echo "podman import: $(tail -n 1 "$t_tmp/import.err")"; return 1; }
	podman run --rm spotrun-t50:1 true > /dev/null 2> "$t_tmp/try.err" ||
		{ echo "podman run: $(tail -n 1 "$t_tmp/try.err")"; return 1; }
}
# This machine (a VM without CAP_SYS_RESOURCE, cgroups v1 with v2 hybrid)
# needs runc (crun refuses hybrid cgroups) and ulimits no higher than the
# runtime's own (it cannot raise them): a containers.conf of the test's.
if [ -z "$CONTAINERS_CONF" ] && command -v runc > /dev/null; then
	cat > "$t_tmp/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[engine]
runtime = "runc"
EOF
	CONTAINERS_CONF=$t_tmp/containers.conf
	export CONTAINERS_CONF
fi
why=$(real)
if [ -n "$why" ]; then
	for d in "exit 3" "files owned as spotrun's user" "SIGTERM reaches the job" "a request answered" "its checkpoint committed" \
	    "[data] read through its link and at its absolute destination" "[data] read-only even to root"; do
		t_skip "real podman: $d" "$why"
	done
	t_done
fi
RPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
t_jobfile r3 "sh -c 'touch made; exit 3'" "[provider]" "name = local"
ini_set "$t_tmp/r3.ini" job image spotrun-t50:1
ini_set "$t_tmp/r3.ini" job container_runtime podman
run r3 "$RPATH"
t_is "$t_rc" 3 "real podman: exit 3 from the job" || t_show "$t_tmp/r3.err"
t_is "$(stat -c %u:%g "$t_tmp/made" 2>/dev/null)" "$(id -u):$(id -g)" "the file it made in the workdir is spotrun's user's"
# SIGTERM to spotrun reaches the job in the container, whose trap notes it.
t_jobfile rt "sh -c 'trap \"echo TERM > term; exit 7\" TERM; echo up; while :; do sleep 0.1; done'" \
	"[provider]" "name = local"
ini_set "$t_tmp/rt.ini" job image spotrun-t50:1
PATH=$RPATH t_bg rt "$SPOTRUN" run "$t_tmp/rt.ini"
wait_for "$t_tmp/rt.out" '^up$' 30 "$t_last"
kill -TERM "$t_last"
t_wait "$t_last"
t_is "$t_rc $(cat "$t_tmp/term" 2>/dev/null)" "7 TERM" "SIGTERM to spotrun reached the job's trap; its exit 7 is spotrun's"
# A periodic request answered through the mounted local directory.
t_jobfile rq "sh -c 'while [ ! -e \"\$SPOTRUN_CKPT_REQUEST\" ]; do sleep 0.1; done; echo 5 > \"\$SPOTRUN_CKPT_DIR/step\"; echo 5 > \"\$SPOTRUN_CKPT_DONE\"; sleep 1; exit 0'" \
	"interval = 1s" "signal = none" "[provider]" "name = local"
ini_set "$t_tmp/rq.ini" job image spotrun-t50:1
run rq "$RPATH"
t_is "$t_rc" 0 "real podman: a job that answers a request: exit 0" || t_show "$t_tmp/rq.err"
t_like "$t_tmp/rq.err" '  ckpt     .* committed' "its checkpoint, written in the container, committed"
# [data] inside: through the relative link and at the absolute path; a
# write refused by the read-only mount, although the job runs as root.
sed -i "s/^image = .*/image = spotrun-t50:1/; s|^command = .*|command = sh -c \"cat in/a.txt $abs/a.txt > got; if echo x > in/a.txt; then echo wrote > wrote; fi\"|" "$t_tmp/dw/dj.ini"
PATH=$RPATH "$SPOTRUN" run "$t_tmp/dw/dj.ini" > "$t_tmp/dj.out" 2> "$t_tmp/dj.err"
t_is "$?|$(cat "$t_tmp/dw/got" 2>/dev/null)" "0|seenseen" "real podman: [data] read through its link and at its absolute destination" ||
	t_show "$t_tmp/dj.err"
t_is "$(cat "$t_tmp/dw/wrote" 2>/dev/null || echo refused)|$(cat "$tree/a.txt")" "refused|seen" \
	"real podman: [data] read-only even to root (the mount), the cache unchanged"
rm -f "$abs"
t_done

#!/bin/sh
# t53-whole.sh: issue 23's test of the whole, on s3:// (the Ceph RGW of
# build-aux/test-all, over HTTPS when it serves it): a sweep submitted from
# a laptop's folder runs on machines that share nothing with it but the
# queue.
#
# 1. The laptop ($T/laptop): a PyTorch job (CPU, deterministic: fixed
#    seeds, torch.use_deterministic_algorithms, one thread, dropout whose
#    generator spotrun.torch saves) whose requirements.txt names a small
#    package in the folder (tinynet-src), installed offline by the job's
#    `setup` into a virtual environment with --system-site-packages
#    (Debian's torch); its dataset uploaded to the bucket and named in
#    [data]; a [sweep] of 2 trials; checkpoints through python/spotrun;
#    queue and store in the bucket.
# 2. Two agents, A and B, each a "VM": its own network namespace with
#    loopback only (RGW reached through tests/boot/relay.py, as make
#    check-boot does), its own host name (a UTS namespace), its own root
#    folder ($T/vm-X: HOME, the agent's state, /usr/local/bin, /var/tmp).
#    Each is made from the user-data `spotrun cloud-init` (without --source)
#    prints: its write_files written under the VM's folder, the install
#    script the user-data carries run with sh (the prebuilt spotrun fetched
#    from the bucket by its presigned URL, SHA-256 checked), then the
#    unit's ExecStart as tests/boot/unit-exec.py reads it. Not done here,
#    and why: cloud-init itself and its `packages` (apt: curl and the
#    runtime libraries, on this machine already) are make check-boot's,
#    which boots the same user-data in a debootstrapped root and reaches
#    Debian's mirror, where the suite reaches loopback only; so the script
#    is run with its three paths (/var/tmp/spotrun-bin, /usr/local/bin and
#    the unit's ExecStart binary) moved into the VM's folder and systemctl
#    a stub that records its arguments; the agent is started where the
#    script's `systemctl start` would start it. The keys reach the agent
#    as a VM's EnvironmentFile would give them, never through the
#    user-data.
# 3. A's trial is preempted: the job, on A only (T53_HOLD in A's
#    environment), waits at step 6 for a checkpoint request; SIGTERM to
#    A's agent (a spot VM's shutdown, systemd's KillMode=mixed) makes the
#    notice's checkpoint, releases the job, exits 143; B, done with its own
#    trial, resumes it from step 6 and finds setup done. Every trial's
#    result (a SHA-256 of the model's state_dict), read from `spotrun
#    logs` on the laptop, is the one a direct run of the script gives.
# 4. One source file changed, `submit --again`: one new chunk in one new
#    pack, the rest referenced (the bucket listed before and after); B
#    runs the new trials: setup runs for the new snapshot, but its virtual
#    environment (kept per machine by the requirements' content) is reused,
#    not installed again; the second trial finds setup done.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/jobs/fleet.sh"
. "$top_srcdir/tests/jobs/vm.sh"
. "$top_srcdir/tests/s3-env.sh"
t_setup
"$PY" -c 'import torch' 2>/dev/null || t_skip_all "no torch for $PY (python3-torch)"
"$PY" -c 'import yaml, setuptools, pip' 2>/dev/null ||
    t_skip_all "no yaml, pip or setuptools for $PY (python3-yaml, python3-pip, python3-setuptools)"
unshare -n -u true 2>/dev/null ||
    t_skip_all "unshare -n -u fails here (needs root or user namespaces): $(unshare -n -u true 2>&1)"
command -v ip > /dev/null || t_skip_all "no ip(8) to bring a namespace's loopback up"
bucket=$(s3_bucket_new) || t_bail "cannot create a bucket on $SPOTRUN_TEST_S3_ENDPOINT"
trap 'stop_agents; s3_bucket_rm "$bucket"; t_cleanup' EXIT
s3_spotrun_keys
S=$SPOTRUN
T=$t_tmp
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config XDG_STATE_HOME=$T/state
unset SPOTRUN_QUEUE PYTHONPATH
mkdir -p "$HOME"
t0=$(date +%s)
# The agents' address of the server: HTTPS when RGW serves it.
if [ -n "${SPOTRUN_TEST_S3_TLS_ENDPOINT:-}" ]; then
	ep=$SPOTRUN_TEST_S3_TLS_ENDPOINT
	export AWS_CA_BUNDLE=$SPOTRUN_TEST_S3_CA CURL_CA_BUNDLE=$SPOTRUN_TEST_S3_CA
else
	ep=$SPOTRUN_TEST_S3_ENDPOINT
fi
port=${ep##*:}
QU="s3://$bucket/q?endpoint=$ep"
export SPOTRUN_QUEUE=$QU

# wait_count FILE REGEX N SECONDS PID: wait until N lines of FILE match
wait_count() {
	_end=$(($(date +%s) + $4))
	while [ "$(grep -cE -- "$2" "$1" 2>/dev/null)" -lt "$3" ]; do
		kill -0 "$5" 2>/dev/null && [ "$(date +%s)" -lt "$_end" ] || return 1
		sleep 0.1
	done
}
stop_agents() {	# SIGTERM to the agents still running, so their jobs stop
	for p in $agent_pids; do kill -TERM "$p" 2>/dev/null; done
	for p in $agent_pids; do wait "$p" 2>/dev/null; done
	agent_pids=
}
agent_pids=

# --- 1. the laptop ----------------------------------------------------------
L=$T/laptop
mkdir -p "$L/tinynet-src/tinynet" "$T/dataset"
cat > "$L/tinynet-src/pyproject.toml" <<'EOF2'
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "tinynet"
version = "1.0"

[tool.setuptools]
packages = ["tinynet"]
EOF2
cat > "$L/tinynet-src/tinynet/__init__.py" <<'EOF2'
"""tinynet: the model of t53's job, a package its setup installs."""
import torch


def make(n_in, hidden, n_out):
    return torch.nn.Sequential(torch.nn.Linear(n_in, hidden), torch.nn.Tanh(),
                               torch.nn.Dropout(0.2), torch.nn.Linear(hidden, n_out))
EOF2
printf './tinynet-src\n' > "$L/requirements.txt"
# setup: a virtual environment per machine and requirements (the key), so
# that a new snapshot of the same requirements does not install again
cat > "$L/setup.sh" <<'EOF2'
set -eu
key=$(cat requirements.txt tinynet-src/pyproject.toml tinynet-src/tinynet/*.py | sha256sum | cut -c1-16)
venv=$HOME/.cache/venvs/$key
if [ -e "$venv/.installed" ]; then
	echo "venv: reusing $key"
else
	echo "venv: installing $key"
	rm -rf "$venv"
	/usr/bin/python3 -m venv --without-pip --system-site-packages "$venv"
	"$venv/bin/python" -m pip install -q --no-index --no-build-isolation --no-deps --no-compile \
	    --disable-pip-version-check -r requirements.txt
	touch "$venv/.installed"
fi
ln -sfn "$venv" .venv
EOF2
cat > "$L/train.py" <<'EOF2'
import spotrun  # first: it catches the checkpoint request's signal
import hashlib
import os
import sys
import time

import torch
import spotrun.torch
import tinynet

seed = int(sys.argv[sys.argv.index("--seed") + 1])
data = sys.argv[sys.argv.index("--data") + 1] if "--data" in sys.argv else "data"
STEPS, HOLD_AT = 12, 6
torch.use_deterministic_algorithms(True)
torch.set_num_threads(1)
torch.manual_seed(seed)
rows = torch.frombuffer(bytearray(open(os.path.join(data, "train.bin"), "rb").read()),
                        dtype=torch.float32).reshape(-1, 9)
x, y = rows[:, :8], rows[:, 8:]
model = tinynet.make(8, 16, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
step = spotrun.torch.load(model=model, optimizer=opt) or 0
print("start at step %d" % step, flush=True)
hold = os.environ.get("T53_HOLD")
# the training loop
while step < STEPS:
    g = torch.Generator().manual_seed(seed * 1000 + step)
    idx = torch.randperm(x.shape[0], generator=g)[:32]
    loss = torch.nn.functional.mse_loss(model(x[idx]), y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    step += 1
    if spotrun.requested():
        spotrun.torch.save(step, model=model, optimizer=opt)
    if hold and step == HOLD_AT:
        # the test's preemption: wait here for the notice's request
        open(hold, "w").write("%s %d\n" % (os.environ["SPOTRUN_JOB"], step))
        for _ in range(2400):
            if spotrun.requested():
                spotrun.torch.save(step, model=model, optimizer=opt)
            time.sleep(0.05)
        sys.exit("no notice in 120 s")
h = hashlib.sha256()
for k, v in sorted(model.state_dict().items()):
    h.update(k.encode())
    h.update(v.numpy().tobytes())
print("result: " + h.hexdigest(), flush=True)
EOF2
cat > "$L/sweep.ini" <<EOF2
[job]
name = whole
command = .venv/bin/python train.py --seed \${seed}
setup = sh setup.sh
[checkpoint]
interval = 1h
[data]
data = s3://$bucket/ds/?endpoint=$ep
[sweep]
seed = 1, 2
EOF2
# the dataset: 256 rows of 8 inputs and a target, float32
"$PY" -c 'import random, struct, sys
r = random.Random(7)
rows = []
for _ in range(256):
    v = [r.uniform(-1, 1) for _ in range(8)]
    rows += v + [sum(v[:4]) - 0.5 * v[5] * v[6]]
sys.stdout.buffer.write(struct.pack("<%df" % len(rows), *rows))' > "$T/dataset/train.bin"
s3_aws s3 cp --quiet "$T/dataset/train.bin" "s3://$bucket/ds/train.bin" || t_bail "upload of the dataset failed"

# the uninterrupted runs: the script itself, here, in the background
for s in 1 2; do
	(cd "$L" && PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$L/tinynet-src:$top_srcdir/python "$PY" train.py --seed $s \
	    --data "$T/dataset" > "$T/ref$s.out" 2>&1) &
	t_pids="$t_pids $!"
	eval "ref_pid$s=\$!"
done

# workdir_keys: the workdir's objects in the bucket, KEY SIZE ETAG, a pack's
# random part as RAND
workdir_keys() {
	s3_aws s3api list-objects-v2 --bucket "$bucket" --prefix q/ckpt/_workdir/ \
	    --query 'Contents[].[Key,Size,ETag]' --output text | grep -v '^None$' |
	    sed 's/-[0-9a-f]\{16\}\.tar\t/-RAND.tar\t/' | LC_ALL=C sort
}

run s "$S" submit "$L/sweep.ini"
t_like "$T/s.out" "^whole: workdir $L: snapshot 0, 6 files, [0-9]+ bytes; uploaded 6 chunks, [0-9]+ bytes \\(0 chunks already in the store\\)\$" \
    "submit ships the laptop's folder: 6 files" || t_show "$T/s.err"
t_is "$rc|$(sed 1d "$T/s.out")" "0|sweep whole ($L/sweep.ini): 2 trials
whole.1: queued (seed=1)
whole.2: queued (seed=2)
2 queued, 0 already in the queue: $QU (from \$SPOTRUN_QUEUE)" "the sweep's 2 trials are queued on s3://"

# --- 2. two VMs from the user-data -------------------------------------------
"$S" cloud-init --queue "$QU" --labels test=t53 > "$T/user-data" 2> "$T/ci.err"
t_is "$?|$(cat "$T/ci.err")" "0|" "spotrun cloud-init (the prebuilt binary) prints the user-data"
vm_userdata "$T/user-data" "$T/ud" > "$T/ud.out" 2>&1
t_is "$?|$(cat "$T/ud.out")" "0|runcmd [['/usr/local/sbin/spotrun-install']]" \
    "the user-data: a unit and an install script, run by runcmd"
vm_relay "$T/rgw.sock" "$port"
vm_relays="$port $T/rgw.sock"
sum=$(sha256sum < "$S" | cut -c1-64)
for x in a b; do
	vm_make $x "$T/ud"
	rc=$?
	V=$T/vm-$x
	t_is "$rc|$(cat "$V/install.out")|$(cat "$V/systemctl.log" 2>/dev/null | tr '\n' ' ')|$(sha256sum < "$V/usr/local/bin/spotrun" | cut -c1-64)|$(ls -A "$V/var/tmp")" \
	    "0|spotrun: OK|daemon-reload enable spotrun-agent.service start spotrun-agent.service |$sum|" \
	    "VM $x: the install script fetched spotrun by its presigned URL, checked it, installed it, started the unit" ||
	    t_show "$V/install.out"
done
t_is "$(tr '\n' ' ' < "$T/vm-a/argv")" "/usr/local/bin/spotrun agent --queue $QU --labels test=t53 " \
    "the unit's ExecStart: the agent on the queue"

t_diag "the VMs made in $(($(date +%s) - t0)) s"
# --- 3. A's trial preempted, resumed on B --------------------------------------
vm_start a T53_HOLD="$T/vm-a/held"
pa=$t_last
wait_for "$T/agent-a.err" '^spotrun agent: whole\.[12]: claimed ' 120 "$pa"
t_result $? "agent A claims a trial" || t_show "$T/agent-a.err"
held=$(sed -n 's/^spotrun agent: \(whole\.[12]\): claimed .*/\1/p' "$T/agent-a.err" | head -n 1)
[ -n "$held" ] || t_bail "agent A claimed nothing"
other=whole.$((3 - ${held#whole.}))
vm_start b
pb=$t_last
wait_for "$T/vm-a/held" "^$held 6\$" 300 "$pa"
t_result $? "A's trial $held reaches step 6 (setup, data, the job in A's virtual environment)" ||
    t_show "$T/agent-a.err"
kill -TERM "$pa"
t_wait "$pa"
agent_pids=$pb
t_is "$t_rc|$(grep -E "^spotrun agent: $held: (released|succeeded|failed)" "$T/agent-a.err")" \
    "143|spotrun agent: $held: released (epoch 1)" "SIGTERM to A (its VM shutting down): the job released, exit 143" ||
    t_show "$T/agent-a.err"
wait_for "$T/agent-b.err" "^spotrun agent: $held: succeeded" 300 "$pb"
t_result $? "B runs its own trial, then resumes $held" || t_show "$T/agent-b.err"
t_is "$(grep -E '^spotrun agent: whole\.[12]: (claimed|succeeded|setup: done)' "$T/agent-b.err" | sed 's/: claimed .*/: claimed/; s/ (took [0-9.]* s)$//; s/ (epoch [0-9]*)$//')" \
    "spotrun agent: $other: claimed
spotrun agent: $other: succeeded
spotrun agent: $held: claimed
spotrun agent: $held: setup: done before on this machine
spotrun agent: $held: succeeded" "B: the other trial, then $held, setup found done" ||
    t_show "$T/agent-b.err"
for s in 1 2; do
	eval "wait \$ref_pid$s"
	ref=$(result_of "$T/ref$s.out")
	run lg$s "$S" logs "whole.$s"
	got=$(sed -n 's/^+[0-9.]* out \(result: .*\)$/\1/p' "$T/lg$s.out")
	t_is "${ref:+x}|$got" "x|$ref" "whole.$s: the result in spotrun logs is the uninterrupted run's" ||
	    { t_show "$T/ref$s.out"; t_show "$T/lg$s.out"; }
done
t_is "$(sed -n 's/^+[0-9.]* out \(start at step [0-9]*\)$/\1/p' "$T/lg${held#whole.}.out" | tr '\n' ' ')" \
    "start at step 0 start at step 6 " "$held started at step 0 on A and at step 6 on B"
"$S" status --json "$held" "$other" > "$T/st.json" 2>&1
t_is "$("$PY" -c 'import json, sys
for j in json.load(open(sys.argv[1]))["jobs"]:
    print(j["id"], j["state"], j["attempts"], j["host"])' "$T/st.json" 2>&1 | LC_ALL=C sort | tr '\n' ' ')" \
    "$(printf '%s\n' "$held succeeded 2 vm-b" "$other succeeded 1 vm-b" | LC_ALL=C sort | tr '\n' ' ')" \
    "status on the laptop: both succeeded, $held in 2 attempts, on vm-b"

t_diag "the sweep done in $(($(date +%s) - t0)) s"
# --- 4. one file changed, submitted again --------------------------------------
before=$(workdir_keys)
sed -i 's/^# the training loop$/# the training loop: one batch a step/' "$L/train.py"
run s2 "$S" submit --again "$L/sweep.ini"
t_like "$T/s2.out" "^whole: workdir $L: snapshot 1, 6 files, [0-9]+ bytes; uploaded 1 chunk, [0-9]+ bytes \\(5 chunks already in the store\\)\$" \
    "submit --again of the folder with train.py changed: 1 chunk uploaded, 5 referenced" || t_show "$T/s2.err"
after=$(workdir_keys)
new=$(printf '%s\n' "$after" | grep -vxF "$before")
t_is "$(printf '%s\n' "$new" | cut -f1 | tr '\n' ' ')" \
    "q/ckpt/_workdir/whole/LATEST q/ckpt/_workdir/whole/manifests/0000000001.commit q/ckpt/_workdir/whole/manifests/0000000001.json q/ckpt/_workdir/whole/packs/0000000001-RAND.tar " \
    "the bucket: one new pack, the new snapshot's manifest, LATEST"
csize=$(sed -n 's/.* uploaded 1 chunk, \([0-9]*\) bytes .*/\1/p' "$T/s2.out")
pkey=$(s3_aws s3api list-objects-v2 --bucket "$bucket" --prefix q/ckpt/_workdir/whole/packs/0000000001- \
    --query 'Contents[].Key' --output text)
s3_aws s3 cp --quiet "s3://$bucket/$pkey" "$T/pack.tar"
tar -tvf "$T/pack.tar" > "$T/pack.list" 2>&1
t_is "$(wc -l < "$T/pack.list")|$(awk '{ print $3 }' "$T/pack.list")" "1|$csize" \
    "... the new pack holds that one chunk, its $csize bytes"
wait_count "$T/agent-b.err" '^spotrun agent: whole\.r2\.[12]: succeeded' 2 300 "$pb"
t_is "$(grep -cE '^spotrun agent: whole\.r2\.[12]: succeeded' "$T/agent-b.err")|$(grep -cE '^spotrun agent: whole\.r2\.[12]: setup: done before on this machine' "$T/agent-b.err")" \
    "2|1" "B runs both new trials; the second finds setup done" || t_show "$T/agent-b.err"
cat "$T"/vm-a/root/.local/state/spotrun/agent/setup/*.log "$T"/vm-b/root/.local/state/spotrun/agent/setup/*.log 2>/dev/null |
    sed -n 's/^+[0-9.]* out venv: \([a-z]*\) .*/\1/p' | sort | uniq -c | sed 's/^ *//' > "$T/venvs"
t_is "$(tr '\n' ' ' < "$T/venvs")" "2 installing 1 reusing " \
    "the virtual environment installed once per machine; the new snapshot's setup reused B's"
for s in 1 2; do
	run lr$s "$S" logs "whole.r2.$s"
	got=$(sed -n 's/^+[0-9.]* out \(result: .*\)$/\1/p' "$T/lr$s.out")
	t_is "$got" "$(result_of "$T/ref$s.out")" "whole.r2.$s (a comment changed): the same result"
done
kill -TERM "$pb"
t_wait "$pb"
agent_pids=
t_is "$t_rc" 143 "SIGTERM to B between jobs: exit 143"
t_diag "took $(($(date +%s) - t0)) s; setup and attempts:" \
    "$(grep -hE ': setup: sh setup\.sh: [0-9.]+ s|^[0-9:]+  (finished|interrupted|preempted|released)' "$T/agent-a.err" "$T/agent-b.err")"
t_done

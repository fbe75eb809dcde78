#!/bin/sh
# t91-kubernetes.sh: the Kubernetes recipe (examples/kubernetes/job.yaml,
# doc/kubernetes.md) without a cluster. The manifest is YAML that python3's
# yaml module (Debian's python3-yaml) reads as a ConfigMap and a Job whose
# parts fit together: the pod is never restarted in place, exit 75 and pod
# disruptions are ignored by the podFailurePolicy (for the container that
# runs spotrun), the container's command is `spotrun run` on the job file
# the ConfigMap mounts, that job file passes `spotrun check`, uses the
# signal provider, and its grace fits in terminationGracePeriodSeconds.
# Then the kubelet's part is played on this machine: spotrun as the first
# process (PID 1) of a PID namespace of its own, as in a container, gets
# SIGTERM from outside, checkpoints and exits 75; the next run (the new pod)
# resumes, and the result equals an uninterrupted run's.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
"$PY" -c 'import yaml' 2>/dev/null ||
	t_skip_all "python3-yaml is not installed (build-aux/install-deps installs it)"
t_python_module
manifest=$top_srcdir/examples/kubernetes/job.yaml

# The manifest's facts, as shell assignments (values quoted by shlex).
"$PY" - "$manifest" "$t_tmp/job.ini" > "$t_tmp/facts.sh" 2> "$t_tmp/facts.err" <<'EOF'
import shlex, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]
out = {"kinds": " ".join("%s/%s" % (d.get("apiVersion"), d.get("kind")) for d in docs)}
cm = next(d for d in docs if d.get("kind") == "ConfigMap")
job = next(d for d in docs if d.get("kind") == "Job")
pod = job["spec"]["template"]["spec"]
out["restart"] = pod.get("restartPolicy", "")
out["grace_period"] = pod.get("terminationGracePeriodSeconds", "")
out["backoff"] = job["spec"].get("backoffLimit", "")
(ctr,) = pod["containers"]
out["container"] = ctr["name"]
out["command"] = " ".join(ctr.get("command", []) + ctr.get("args", []))
rules = job["spec"].get("podFailurePolicy", {}).get("rules", [])
out["ignore_exit"] = " ".join(
    "%s:%s:%s" % (r["onExitCodes"].get("containerName", "*"), r["onExitCodes"]["operator"],
                  ",".join(map(str, r["onExitCodes"]["values"])))
    for r in rules if r.get("action") == "Ignore" and "onExitCodes" in r)
out["ignore_cond"] = " ".join(
    c["type"] for r in rules if r.get("action") == "Ignore"
    for c in r.get("onPodConditions", []))
# Where the ConfigMap's keys appear in the container: mountPath/KEY.
vols = {v["name"]: v for v in pod.get("volumes", [])}
paths = []
for m in ctr.get("volumeMounts", []):
    v = vols.get(m["name"], {})
    if v.get("configMap", {}).get("name") == cm["metadata"]["name"]:
        paths += ["%s/%s" % (m["mountPath"].rstrip("/"), k) for k in cm["data"]]
out["mounted"] = " ".join(paths)
(key,) = cm["data"]
open(sys.argv[2], "w").write(cm["data"][key])
for k, v in out.items():
    print("%s=%s" % (k, shlex.quote(str(v))))
EOF
t_is "$?" 0 "the manifest is YAML with a ConfigMap and a Job" || t_show "$t_tmp/facts.err"
. "$t_tmp/facts.sh"
t_is "$kinds" "v1/ConfigMap batch/v1/Job" "its documents: a ConfigMap (the job file) and a Job"
t_is "$restart" Never "restartPolicy: Never (podFailurePolicy requires it)"
t_like "$t_tmp/facts.sh" "^backoff='?[0-9]+'?\$" "backoffLimit is set"
t_is "$ignore_exit" "$container:In:75" "podFailurePolicy ignores exit 75 of the container '$container'"
t_is "$ignore_cond" DisruptionTarget "podFailurePolicy ignores pod disruptions"
t_is "$command" "spotrun run $mounted" "the container runs spotrun on the job file the ConfigMap mounts"

# The job file itself.
"$SPOTRUN" check "$t_tmp/job.ini" > "$t_tmp/check.out" 2>&1
t_is "$?" 0 "the ConfigMap's job file passes spotrun check" || t_show "$t_tmp/check.out"
t_is "$(ini_get "$t_tmp/job.ini" provider name)" signal "it uses the signal provider"
grace=$(ini_get "$t_tmp/job.ini" provider grace)
t_is "${grace%s}" "$grace_period" "its grace ($grace) is terminationGracePeriodSeconds ($grace_period)"

# The kubelet's part: SIGTERM to the container's first process. The job
# file from the manifest, run from this checkout's examples with a store in
# the temp dir.
ini_set "$t_tmp/job.ini" job workdir "$top_srcdir/examples"
ini_set "$t_tmp/job.ini" job command "/usr/bin/python3 quickstart/train.py --steps 100 --sleep 0.05"
ini_set "$t_tmp/job.ini" checkpoint store "file://$t_tmp/store"
ini_set "$t_tmp/job.ini" checkpoint local_dir "$t_tmp/local"
(cd "$top_srcdir/examples/quickstart" && "$PY" train.py --steps 100 --sleep 0) > "$t_tmp/ref.out" 2>&1

t_bg pod1 unshare --pid --fork --kill-child --mount-proc "$SPOTRUN" run "$t_tmp/job.ini"
pod1=$t_last
wait_for "$t_tmp/pod1.out" '^step 20 ' 30 "$pod1" || { t_show "$t_tmp/pod1.err"; t_bail "the first pod's job did not start"; }
init=$(ps -o pid= --ppid "$pod1" | tr -d ' ')
t_pids="$t_pids $init"
t_like "/proc/$init/status" '^NSpid:[[:space:]]+[0-9]+[[:space:]]+1$' "spotrun is PID 1 of its PID namespace"
kill -TERM "$init"
t_wait "$pod1"
t_is "$t_rc" 75 "SIGTERM to PID 1: spotrun exits 75 (the pod fails with 75)" || t_show "$t_tmp/pod1.err"
t_like "$t_tmp/pod1.err" '^[0-9:]+  ckpt     0 step [0-9]+: .* committed in ' "the notice's checkpoint was committed"
t_like "$t_tmp/pod1.out" '^checkpoint at step [0-9]+$' "the job answered the request (it did not get the SIGTERM)"

t_bg pod2 unshare --pid --fork --kill-child --mount-proc "$SPOTRUN" run "$t_tmp/job.ini"
t_wait "$t_last"
t_is "$t_rc" 0 "the next pod's run exits 0" || t_show "$t_tmp/pod2.err"
step=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$t_tmp/pod1.out")
t_has "$t_tmp/pod2.out" "resumed from step $step (attempt 1)" "the next pod resumed at step $step"
t_is "$(result_of "$t_tmp/pod2.out")" "$(result_of "$t_tmp/ref.out")" "the result equals an uninterrupted run's"

t_done

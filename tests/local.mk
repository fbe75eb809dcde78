# tests/local.mk: test programs and scripts not owned by one module.
# The house: include paths, links and calls follow doc/design.md's diagram.
dist_check_SCRIPTS += tests/t01-house.sh
EXTRA_DIST += tests/house.py
# clang builds the tree (a copy of it) with no warning, as gcc does.
dist_check_SCRIPTS += tests/t02-clang-build.sh
slow_TESTS += tests/t02-clang-build.sh
# End-to-end tests: `spotrun run` on the example jobs and under faults. They
# use the built spotrun ($SPOTRUN, which `make check` builds first) and
# /usr/bin/python3; tests/jobs/ holds their helpers.
dist_check_SCRIPTS += tests/t60-quickstart.sh tests/t61-pytorch.sh tests/t70-faults.sh
# PyTorch jobs of several ranks: examples/pytorch/ddp.py preempted and
# resumed on as many, fewer and more ranks; the ranks' environment against
# Debian's torchrun; a rank that hangs or crashes.
dist_check_SCRIPTS += tests/t65-pytorch-ranks.sh
slow_TESTS += tests/t65-pytorch-ranks.sh
EXTRA_DIST += tests/jobs/hangjob.py tests/jobs/printenv.py tests/jobs/oncejob.py tests/jobs/said.py
# A state sharded across the ranks saved with torch.distributed.checkpoint
# (examples/pytorch/dcp.py): 2 ranks preempted, resumed on 3, bit-identical
# to an uninterrupted run; on a torch without dcp (Debian's 1.13), on the
# stand-in tests/standins/dcp.
dist_check_SCRIPTS += tests/t71-pytorch-dcp.sh
slow_TESTS += tests/t71-pytorch-dcp.sh
# spotrun.hf's and spotrun.lightning's callbacks (examples/pytorch/hf_train.py,
# pl_train.py) preempted and resumed at the step they saved; where
# transformers or Lightning cannot be imported, on the stand-ins in
# tests/standins.
dist_check_SCRIPTS += tests/t72-pytorch-callbacks.sh
slow_TESTS += tests/t72-pytorch-callbacks.sh
EXTRA_DIST += tests/standins/dcp/sitecustomize.py tests/standins/dcp/dcp_standin.py \
	tests/standins/transformers/__init__.py tests/standins/lightning/__init__.py \
	tests/standins/lightning/pytorch/__init__.py
# The code doc/python.md shows is the examples' code, word for word.
dist_check_SCRIPTS += tests/t73-python-doc.sh
# The source tree's Python module on the PYTHONPATH of jobs under a spotrun
# that was not installed.
dist_check_SCRIPTS += tests/t64-python-path.sh
# The spotrun Python module (python/spotrun): its unit test in Python, TAP.
dist_check_SCRIPTS += tests/t63-python-helper.sh
EXTRA_DIST += tests/python-helper.py
EXTRA_DIST += tests/jobs/lib.sh tests/jobs/blobjob.py tests/jobs/cloud.sh tests/jobs/slowsave.py \
	tests/jobs/fleet.sh
# .gitignore covers every file the build and the tests make (git status
# stays clean after an in-tree build as after one in _build/).
dist_check_SCRIPTS += tests/t08-gitignore.sh
# `make deb`'s Debian package (build-aux/make-deb): its control fields,
# Depends against the libraries the binaries need, its files, the
# extracted binary's --version; `make deb` refusing a tree not for /usr.
dist_check_SCRIPTS += tests/t13-deb.sh
# A mutation fuzzer of manifests through parse, validate and restore.
check_PROGRAMS += tests/t-fuzz-manifest
tests_t_fuzz_manifest_SOURCES = tests/t-fuzz-manifest.c tests/tap.h tests/ckpt-util.h
# The real S3 server (Ceph RGW, started by build-aux/test-all through
# tests/rgw.sh), the helper S3 tests source, and a fault-injecting TCP proxy
# for the S3 fault tests. faultproxy needs only libc.
EXTRA_DIST += tests/rgw.sh tests/s3-env.sh tests/daemon-util.sh tests/store-util.h
dist_check_SCRIPTS += tests/t80-rgw.sh tests/t81-faultproxy.sh
# `spotrun cloud-init` without --source: the binary behind presigned URLs
# of RGW, Azurite and gcsemu, fetched and checked as the VM does.
dist_check_SCRIPTS += tests/t96-presign.sh
noinst_PROGRAMS += tests/faultproxy
tests_faultproxy_SOURCES = tests/faultproxy.c
tests_faultproxy_LDADD =
# spotrun run/ls/gc on s3:// (Ceph RGW) and interop with the aws CLI.
dist_check_SCRIPTS += tests/t82-s3-run.sh
# The S3 engine through tests/faultproxy's region mode (a wrong region,
# learned from the server's answer and kept), and races of 16 committers on
# S3: checkpoint saves, LATEST compare-and-swap, conditional writes whose
# reply was lost. Helpers in tests/s3-util.h.
check_PROGRAMS += tests/t-s3-region tests/t-s3-race
tests_t_s3_region_SOURCES = tests/t-s3-region.c tests/tap.h tests/s3-util.h
tests_t_s3_race_SOURCES = tests/t-s3-race.c tests/tap.h tests/s3-util.h tests/ckpt-util.h
# Checkpoints of one job written by several runs at once, on file:// and
# S3: a gc delayed while another run commits (issue 11's race), stale
# writers stopped with SIGSTOP and fenced by a newer epoch, racing epochs.
check_PROGRAMS += tests/t-fence
tests_t_fence_SOURCES = tests/t-fence.c tests/tap.h tests/s3-util.h tests/ckpt-util.h tests/ckpt-store-util.h
# The gs:// store against tests/gcsemu.py, an emulator of GCS's XML API
# (SigV4 with HMAC keys, generations, x-goog-if-generation-match), and
# `spotrun run` on gs:// preempted and resumed.
check_PROGRAMS += tests/t-store-gs
tests_t_store_gs_SOURCES = tests/t-store-gs.c tests/tap.h tests/s3-util.h tests/gs-util.h
dist_check_SCRIPTS += tests/t84-gcs-run.sh
EXTRA_DIST += tests/gcsemu.py tests/gcs-env.sh
# Checkpoints to s3:// under network and server faults (tests/faultproxy,
# a Ceph RGW of the test's own whose gateway it kills), and clock skew and
# TLS against the shared one.
dist_check_SCRIPTS += tests/t83-s3-faults.sh tests/t85-s3-clock-tls.sh
# Azure Blob: Azurite (tests/azurite.sh, started by build-aux/test-all), the
# shell tests' helpers (tests/az-env.sh), spotrun run/ls/gc on az:// and
# interop with the Azure CLI.
EXTRA_DIST += tests/azurite.sh tests/az-env.sh tests/az-util.h tests/jobs/store-run.sh
dist_check_SCRIPTS += tests/t88-az-run.sh
# What the S3 acceptance run found (issue 14): User-Agent, LATEST warnings,
# no upload left by a failed save, a notice retried until its deadline, the
# notice's retention after the stop; RGW behind tests/faultproxy.
dist_check_SCRIPTS += tests/t89-s3-accept.sh
EXTRA_DIST += tests/jobs/chainjob.py tests/jobs/faults.sh
# The Slurm recipe (examples/slurm, doc/slurm.md) against a real slurmctld +
# slurmd (Debian's slurm-wlm) that the test starts on loopback with
# tests/slurm.sh: time limit, preemption and requeue; skipped without Slurm.
dist_check_SCRIPTS += tests/t90-slurm.sh
EXTRA_DIST += tests/slurm.sh
# The Kubernetes recipe (examples/kubernetes/job.yaml, doc/kubernetes.md)
# without a cluster: the manifest read with python3-yaml, its job file
# checked, and spotrun as PID 1 of a PID namespace taking the kubelet's
# SIGTERM; skipped without python3-yaml.
dist_check_SCRIPTS += tests/t91-kubernetes.sh
# The agent (fleet/agent.c, `spotrun agent`): tests/qtool puts jobs in a
# queue and reads their status and leases from the shell (the queue library,
# queue.h), for the agent's tests and its benchmark.
noinst_PROGRAMS += tests/qtool
tests_qtool_SOURCES = tests/qtool.c
# The lease of `spotrun run` (refused, taken over, fenced) on file:// and on
# RGW; tests/jobs/workjob.py logs which steps ran where.
dist_check_SCRIPTS += tests/t37-run-lease.sh tests/t86-s3-lease.sh
EXTRA_DIST += tests/jobs/lease-run.sh tests/jobs/workjob.py
# Lease expiry by no wall clock: agents and a run under libfaketime, 20 s
# and 5 min fast, 20 s slow, neither take a live lease nor wait past the
# bound for a dead one.
dist_check_SCRIPTS += tests/t36-lease-clock.sh
# `spotrun agent` on file://: claims, GPUs (the fake NVML), status, logs,
# malformed objects, idling, 32 agents for one job, cancel, fencing.
dist_check_SCRIPTS += tests/t36-agent.sh
# An agent on a machine whose GPUs have no working driver (device nodes, NVML
# failing or absent), and why an agent skips each job it cannot take.
dist_check_SCRIPTS += tests/t36-agent-driver.sh
# A preempted agent of provider aws (tests/mdemu) adds the preemption to the
# queue's placement history; a history that does not parse is a warning.
dist_check_SCRIPTS += tests/t36-agent-place.sh
# An agent replays a spot trace on across its jobs (the local provider's
# next machine after each preemption), not from its first period each claim.
dist_check_SCRIPTS += tests/t36-agent-trace.sh
# An agent watches its machine between its runs: a notice that comes idle
# or as a gang forms moves it to the next machine, not into a run.
dist_check_SCRIPTS += tests/t36-agent-watch.sh
EXTRA_DIST += tests/jobs/agent.sh
# Hostile or malformed queue objects met by the real agent, status and
# cancel on file://: malformed pending markers quarantined, 100,000 junk
# markers read past, a broken status marker, a marker naming another store.
dist_check_SCRIPTS += tests/t97-queue-hostile.sh
slow_TESTS += tests/t97-queue-hostile.sh
# Work lost, for every cause, once: a crash restarted (also under the local
# provider), a run killed and run again, an agent killed and taken over.
dist_check_SCRIPTS += tests/t34-lost.sh
slow_TESTS += tests/t34-lost.sh
# `spotrun gc` on file://: the debris of a dead save, a dead gang's part, a
# stale status marker; a dry run, --apply, a held lease, the idle agent.
dist_check_SCRIPTS += tests/t47-gc.sh
# A job's working directory shipped by submit and run by an agent in its
# own copy: ignore rules, modes, dedup of a resubmit, the size limit, and
# ship_workdir = no.
dist_check_SCRIPTS += tests/t48-workdir.sh
dist_check_SCRIPTS += tests/t49-setup.sh
# [job] image: the ranks in containers, through a fake runtime's recorded
# command lines, then real podman where it can run here.
dist_check_SCRIPTS += tests/t50-container.sh
# A job's [data]: fetched into the machine's cache, linked read-only, not
# fetched again unless changed; by spotrun run and by an agent.
dist_check_SCRIPTS += tests/t51-data.sh
# The same from s3:// on RGW: fetched by ETag, an overwritten object anew.
dist_check_SCRIPTS += tests/t52-data-s3.sh
# Issue 23's test of the whole on RGW: a PyTorch sweep submitted from a
# laptop's folder (setup into a venv, [data] from the bucket) run by two
# agents made from cloud-init's user-data in network namespaces of their
# own, preempted and resumed elsewhere bit-identical to a direct run; one
# file changed and submitted again uploads one chunk, reuses the venv.
dist_check_SCRIPTS += tests/t53-whole.sh
slow_TESTS += tests/t53-whole.sh
# The job's metrics: written by a shell job and by spotrun.report(), shipped
# to the store across a preemption, a sweep's trials in `status SWEEP`.
dist_check_SCRIPTS += tests/t56-metrics.sh
# Why a sweep's trials failed or wait in `status SWEEP` (exit code, signal,
# last error line, a GPU no agent has, a silent agent), --wide, --json,
# colour (--color, NO_COLOR).
dist_check_SCRIPTS += tests/t74-trials-why.sh
# `spotrun report`: a sweep's page loaded offline in headless Chromium (no
# console error, a curve per trial, a screenshot not blank), hostile text
# escaped, its errors.
dist_check_SCRIPTS += tests/t55-report.sh
# A GPU handed to one run at a time (runner/gpulock.h): `spotrun run`s and
# agents on the fake NVML's GPUs, a holder killed.
dist_check_SCRIPTS += tests/t39-gpulock.sh
# Gangs of agents on loopback: torchrun's variables of node N, a PyTorch job
# across 2 agents, 3 agents preempted down to 2, resumed from the parts.
dist_check_SCRIPTS += tests/t38-gang.sh
# A gang whose machines all get notices, one after the other: each agent
# goes on its next machine, none takes the job again on one that goes.
dist_check_SCRIPTS += tests/t38-gang-notice.sh
# A member whose job succeeded first is no node gone: node 0's job, which
# runs on (rank 0's last save), is not stopped nor put back.
dist_check_SCRIPTS += tests/t38-gang-finish.sh
# The fleet end to end on RGW: a sweep of 20 trials over 4 agents killed and
# replaced at random, with simulated preemptions; 32 agents for one job; an
# agent stopped past its lease, fenced.
dist_check_SCRIPTS += tests/t87-s3-fleet.sh
slow_TESTS += tests/t87-s3-fleet.sh
# The fleet end to end on gs:// against gcsemu with GCS's one write a second
# per object: a sweep of 3 over 2 agents, TTL 3 s, the log checked.
dist_check_SCRIPTS += tests/t94-gcs-fleet.sh
# doc/aws.md's least-privilege policy, as a bucket policy on RGW for a user
# that has nothing else: the fleet end to end (submit, an agent through a
# preemption with multipart checkpoints, status, logs, gc); refused on
# another bucket, and without s3:DeleteObject.
dist_check_SCRIPTS += tests/t98-s3-policy.sh
slow_TESTS += tests/t98-s3-policy.sh
# The fleet's commands on the laptop (submit, status, logs, cancel, requeue,
# retry) end to end on a file:// queue and on Ceph RGW; fleet-helper plays
# the agent's part (claims, status markers, log segments) with the queue's
# own calls.
noinst_PROGRAMS += tests/fleet-helper
tests_fleet_helper_SOURCES = tests/fleet-helper.c
dist_check_SCRIPTS += tests/t92-fleet-cmds.sh tests/t93-fleet-s3.sh
slow_TESTS += tests/t93-fleet-s3.sh
# What a hostile queue or store holds (a marker's host, a segment's key, an
# attempt record, a LATEST) printed escaped by status, logs and ls.
dist_check_SCRIPTS += tests/t95-hostile-output.sh
# One real boot of `spotrun cloud-init`'s user-data, timed: a Debian 12
# root made with debootstrap (cached in /var/cache/spotrun-test), Ceph RGW
# on loopback as the queue's store, the prebuilt spotrun fetched from it by
# the user-data (no build on the VM), cloud-init's stages run in a chroot,
# the agent claiming a job under 60 s after the first stage; root only. Not
# part of `make check`: it reaches Debian's mirror (the root, and the
# packages the user-data installs), and the tests reach loopback only.
# `make check-boot` runs it; doc/fleet.md ("The boot") records its result.
EXTRA_DIST += tests/boot/cloud-init-boot.sh tests/boot/unit-exec.py tests/boot/relay.py
check-boot: all
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	  SPOTRUN='$(abs_top_builddir)/spotrun' $(SHELL) $(top_srcdir)/tests/boot/cloud-init-boot.sh
.PHONY: check-boot
# The chunk codec on real trained state (bench/train-state.py trains a small
# model with Debian's PyTorch; tests/bench-codec measures): `make bench`.
SR_BENCH += bench/compress.sh
EXTRA_DIST += bench/compress.sh bench/train-state.py
# up and down on GCP against tests/gceemu.py (Compute, OAuth; the key made
# by openssl), the queue on tests/gcsemu.py: labels, SPOT and DELETE, the
# user-data free of credentials, failover to the next region, waiting for
# capacity, nothing left after down.
dist_check_SCRIPTS += tests/t59-up-gcp.sh
EXTRA_DIST += tests/pool/gcp-up.ini
# Issue 24's loop end to end on GCP: tests/gceemu.py boots each instance as a
# VM from its user-data (tests/jobs/vm-boot.sh, vm.sh: t53's way), the queue
# on RGW: up, the agent claims, a preemption, the group makes the VM again,
# the job resumes from its checkpoint, the scaler takes the pool to 0, down.
dist_check_SCRIPTS += tests/t16-loop-gcp.sh
slow_TESTS += tests/t16-loop-gcp.sh
EXTRA_DIST += tests/pool/gcp-loop.ini tests/jobs/loop.sh tests/jobs/vm.sh tests/jobs/vm-boot.sh
# Its figures: up to the first job running, requests per scaling decision.
SR_BENCH += bench/loop.sh
EXTRA_DIST += bench/loop.sh
# The failover decision time after a capacity error, on each cloud's emulator.
SR_BENCH += bench/failover.sh
EXTRA_DIST += bench/failover.sh
# The same loop on Azure: tests/armemu.py boots each VM of the set, Try &
# Restore makes the evicted one again.
dist_check_SCRIPTS += tests/t17-loop-azure.sh
slow_TESTS += tests/t17-loop-azure.sh
EXTRA_DIST += tests/pool/azure-loop.ini tests/vmproc.py
# And on AWS: moto's instances booted by tests/ec2emu.py, its maintain fleet
# replacing the interrupted one as EC2 does (moto does not).
dist_check_SCRIPTS += tests/t18-loop-aws.sh
slow_TESTS += tests/t18-loop-aws.sh
EXTRA_DIST += tests/pool/aws-loop.ini
# up and down on Azure against tests/armemu.py (ARM, Entra ID's token
# endpoint), the queue on tests/gcsemu.py: a Flexible set of Spot VMs
# with eviction Delete, tags, the user-data as customData, free of
# credentials, failover to the next region, nothing left after down.
dist_check_SCRIPTS += tests/t21-up-azure.sh
dist_check_SCRIPTS += tests/t22-up-azure-cli.sh
EXTRA_DIST += tests/pool/azure-up.ini tests/pool/azure-cli.ini

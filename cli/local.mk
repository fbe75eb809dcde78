# cli/local.mk: the command line, the top of the house: main (spotrun.c),
# the command table (cmd.c) and one cmd-NAME.c per subcommand, their shared
# argument templates and parser (args.c), what a command is pointed at (a
# job file, or a NAME in a store: target.c), and loading a job file (a
# script given instead is recognised: jobfile.c). The only module that
# knows exit codes (cmd.h); it may include every other one.
libcli_a_CPPFLAGS = $(SR_CPPFLAGS_BASE) -I$(top_srcdir)/kernels -I$(top_srcdir)/store \
	-I$(top_srcdir)/ckpt -I$(top_srcdir)/queue -I$(top_srcdir)/providers \
	-I$(top_srcdir)/jobspec -I$(top_srcdir)/runner -I$(top_srcdir)/cloud/aws -I$(top_srcdir)/fleet \
	-I$(top_srcdir)/cli
libcli_a_SOURCES += cli/cmd.h cli/cmd.c cli/cmd-run.c cli/cmd-check.c cli/cmd-help.c \
	cli/cmd-ls.c cli/cmd-agent.c cli/args.c cli/args.h cli/target.c cli/target.h cli/jobfile.c cli/jobfile.h
# The fleet's commands on the queue (doc/fleet.md): submit, status, logs,
# cancel, requeue and retry, one file each; what they share: the user's
# settings file (settings.c), where the queue is and opening it (fleet.c,
# also the agent's), the status markers read once (fleet-index.c), their
# arguments as job ids (fleet-target.c); a submission's plan
# (submit-jobs.c); status's grouping and its JSON (status-view.c,
# status-json.c), the pools and their VMs (status-pools.c).
libcli_a_SOURCES += cli/cmd-submit.c cli/cmd-status.c cli/cmd-logs.c cli/cmd-cancel.c \
	cli/cmd-requeue.c cli/settings.c cli/settings.h cli/fleet.c cli/fleet.h \
	cli/fleet-index.c cli/fleet-index.h cli/fleet-target.c cli/fleet-target.h \
	cli/submit-jobs.c cli/submit-jobs.h cli/submit-workdir.c cli/submit-workdir.h \
	cli/status-view.c cli/status-view.h cli/status-trials.c cli/status-trials.h \
	cli/status-json.c cli/status-pools.c cli/status-pools.h
# report: a sweep's or a job's results as one HTML page (report.h): what
# it reads (report-data.c), the page (report-html.c), its charts
# (report-svg.c), the store's text made inert (report-esc.c); checked in
# headless Chromium by tests/t55-report.sh (tests/local.mk).
libcli_a_SOURCES += cli/cmd-report.c cli/report.h cli/report-data.c cli/report-html.c \
	cli/report-svg.c cli/report-esc.c
# Why a job waits, or its agent is silent (status-why.c).
libcli_a_SOURCES += cli/status-why.c cli/status-why.h cli/status-reason.c \
	cli/status-reason.h
# gc: what saves, gangs and markers left behind (fleet/debris.c).
libcli_a_SOURCES += cli/cmd-gc.c
# up and down: a pool of spot VMs (spotrun-pool(5)) through its cloud's
# fleet engine (fleet/pool-engine.h); up --dry-run prints the plan.
libcli_a_SOURCES += cli/cmd-up.c cli/cmd-down.c
# up and down on AWS against moto (tests/ec2emu.py: EC2, SSM, S3), skipped
# without moto.
dist_check_SCRIPTS += tests/t54-up-aws.sh
slow_TESTS += tests/t54-up-aws.sh
# the pool sized to its queue by its agents (fleet/agent-scale.c) on moto
dist_check_SCRIPTS += tests/t58-scale-aws.sh
slow_TESTS += tests/t58-scale-aws.sh
# Failover on AWS (tests/ec2cap.py, a proxy in front of moto, answers
# EC2's capacity errors): the next region, the history's order, waiting.
dist_check_SCRIPTS += tests/t75-up-aws-failover.sh
slow_TESTS += tests/t75-up-aws-failover.sh
EXTRA_DIST += tests/ec2cap.py tests/pool/aws-failover.ini tests/pool/aws-failover2.ini
EXTRA_DIST += tests/ec2emu-env.sh tests/pool/aws-scale.ini tests/pool/aws-scale-cap.ini
EXTRA_DIST += tests/pool/aws-up.ini tests/pool/aws-mars.ini
dist_check_SCRIPTS += tests/t99-up-dry.sh
EXTRA_DIST += tests/pool/aws.out tests/pool/gcp.ini tests/pool/gcp.out \
	tests/pool/azure.ini tests/pool/azure.out tests/pool/bad.ini tests/pool/noshape.ini
check_PROGRAMS += tests/t-args
tests_t_args_SOURCES = tests/t-args.c tests/tap.h
dist_check_SCRIPTS += tests/t06-args.sh
# Where the queue and the prices are (fleet.c, settings.c): the order, the
# settings file's faults; the fleet's commands end to end are
# tests/t92-fleet-cmds.sh and t93-fleet-s3.sh (tests/local.mk).
check_PROGRAMS += tests/t-fleet-conf
tests_t_fleet_conf_SOURCES = tests/t-fleet-conf.c tests/tap.h
tests_t_fleet_conf_CPPFLAGS = $(AM_CPPFLAGS) -DSR_TOP_SRCDIR='"$(abs_top_srcdir)"'
# `spotrun cloud-init` (the user-data's text is fleet/cloudinit.c's).
libcli_a_SOURCES += cli/cmd-cloud-init.c
dist_check_SCRIPTS += tests/t12-cloud-init.sh
EXTRA_DIST += tests/cloud-init

#!/bin/sh
# t37-run-lease.sh: the lease of `spotrun run` on a file:// store: a second
# run refused naming the holder, a killed run taken over at once on this
# machine, a run stopped past its lease in the middle of a checkpoint fenced
# out (tests/jobs/lease-run.sh has the cases; t86-s3-lease.sh runs them on
# Ceph RGW).
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
: "${top_builddir:=$(dirname "$SPOTRUN")}"
. "$top_srcdir/tests/jobs/lease-run.sh"
lease_run_cases "file://$t_tmp/store" file
t_done

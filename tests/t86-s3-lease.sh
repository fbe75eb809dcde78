#!/bin/sh
# t86-s3-lease.sh: the lease of `spotrun run` on s3:// (the Ceph RGW of
# build-aux/test-all): the cases of tests/jobs/lease-run.sh, as t35 runs them
# on file://.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/s3-env.sh"
t_setup
: "${top_builddir:=$(dirname "$SPOTRUN")}"
bucket=$(s3_bucket_new) || t_bail "cannot create a bucket on $SPOTRUN_TEST_S3_ENDPOINT"
trap 's3_bucket_rm "$bucket"; t_cleanup' EXIT
s3_spotrun_keys
. "$top_srcdir/tests/jobs/lease-run.sh"
lease_run_cases "s3://$bucket/ckpt?endpoint=$SPOTRUN_TEST_S3_ENDPOINT" s3
t_done

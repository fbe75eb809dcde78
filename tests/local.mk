# tests/local.mk: test programs and scripts not owned by one module.
# End-to-end tests: `spotrun run` on the example jobs and under faults. They
# use the built spotrun ($SPOTRUN, which `make check` builds first) and
# /usr/bin/python3; tests/jobs/ holds their helpers.
dist_check_SCRIPTS += tests/t60-quickstart.sh tests/t61-pytorch.sh tests/t70-faults.sh
EXTRA_DIST += tests/jobs/lib.sh tests/jobs/blobjob.py tests/jobs/cloud.sh
# A mutation fuzzer of manifests through parse, validate and restore.
check_PROGRAMS += tests/t-fuzz-manifest
tests_t_fuzz_manifest_SOURCES = tests/t-fuzz-manifest.c tests/tap.h tests/ckpt-util.h
# The real S3 server (Ceph RGW, started by build-aux/test-all through
# tests/rgw.sh), the helper S3 tests source, and a fault-injecting TCP proxy
# for the S3 fault tests. faultproxy needs only libc.
EXTRA_DIST += tests/rgw.sh tests/s3-env.sh
dist_check_SCRIPTS += tests/t80-rgw.sh tests/t81-faultproxy.sh
noinst_PROGRAMS += tests/faultproxy
tests_faultproxy_SOURCES = tests/faultproxy.c
tests_faultproxy_LDADD =
# spotrun run/ls/gc on s3:// (Ceph RGW) and interop with the aws CLI.
dist_check_SCRIPTS += tests/t82-s3-run.sh

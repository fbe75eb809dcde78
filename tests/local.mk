# tests/local.mk: test programs and scripts not owned by one module.
# End-to-end tests: `spotrun run` on the example jobs and under faults. They
# use the built spotrun ($SPOTRUN, which `make check` builds first) and
# /usr/bin/python3; tests/jobs/ holds their helpers.
dist_check_SCRIPTS += tests/t60-quickstart.sh tests/t61-pytorch.sh tests/t70-faults.sh
EXTRA_DIST += tests/jobs/lib.sh tests/jobs/blobjob.py tests/jobs/cloud.sh
# A mutation fuzzer of manifests through parse, validate and restore.
check_PROGRAMS += tests/t-fuzz-manifest
tests_t_fuzz_manifest_SOURCES = tests/t-fuzz-manifest.c tests/tap.h tests/ckpt-util.h

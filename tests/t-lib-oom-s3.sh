#!/bin/sh
# t-lib-oom-s3.sh: the S3 half of tests/t-lib-oom (every allocation of
# create, save, save_async and restore failed in turn, on RGW), a test of
# its own so that make -j runs it beside the file:// half: together they
# were the suite's longest test.
exec ./tests/t-lib-oom s3

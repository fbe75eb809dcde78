# ckpt/local.mk: object stores, the chunk codec and the checkpoint format.
libckpt_a_SOURCES += ckpt/store.h ckpt/store.c ckpt/store-file.c ckpt/store-int.h \
	ckpt/codec.h ckpt/codec.c ckpt/zframe.c ckpt/zframe.h

check_PROGRAMS += tests/t-store-file tests/t-codec tests/t-store-direct
tests_t_store_file_SOURCES = tests/t-store-file.c tests/tap.h
tests_t_store_direct_SOURCES = tests/t-store-direct.c tests/tap.h
tests_t_codec_SOURCES = tests/t-codec.c tests/tap.h

# Codec throughput and ratio against plain zstd: `make bench`.
noinst_PROGRAMS += tests/bench-codec
tests_bench_codec_SOURCES = tests/bench-codec.c
SR_BENCH += bench/codec.sh
EXTRA_DIST += bench/codec.sh

# The checkpoint format: manifests, packs, save, restore, list, gc.
libckpt_a_SOURCES += ckpt/ckpt.h ckpt/catalog.c ckpt/catalog.h ckpt/chunkhash.c ckpt/chunkhash.h ckpt/idtab.c ckpt/idtab.h \
	ckpt/manifest.c ckpt/manifest.h ckpt/pack.c ckpt/pack.h ckpt/pathsafe.c \
	ckpt/pathsafe.h ckpt/restore.c ckpt/save.c
check_PROGRAMS += tests/t-manifest tests/t-ckpt tests/t-restore-hostile
tests_t_manifest_SOURCES = tests/t-manifest.c tests/tap.h
tests_t_ckpt_SOURCES = tests/t-ckpt.c tests/tap.h tests/ckpt-util.h
tests_t_restore_hostile_SOURCES = tests/t-restore-hostile.c tests/tap.h tests/ckpt-util.h
EXTRA_DIST += doc/format.md

# The checkpoint pipeline against tar | zstd on a synthetic 1 GiB training
# checkpoint: `make bench` (bench/ckpt.sh).
noinst_PROGRAMS += tests/bench-ckpt
tests_bench_ckpt_SOURCES = tests/bench-ckpt.c
SR_BENCH += bench/ckpt.sh
EXTRA_DIST += bench/ckpt.sh bench/lib.sh
# The public job-side header (installed) and a C job using it.
include_HEADERS += ckpt/spotrun.h
noinst_PROGRAMS += tests/cjob
tests_cjob_SOURCES = tests/cjob.c
dist_check_SCRIPTS += tests/t62-cjob.sh

# SigV4 signing for the S3/GCS stores, checked against the AWS signing test
# suite in ../shared (SPOTRUN_SIGV4_SUITE overrides where it is looked for).
libckpt_a_SOURCES += ckpt/sigv4.c ckpt/sigv4.h
check_PROGRAMS += tests/t-sigv4
tests_t_sigv4_SOURCES = tests/t-sigv4.c tests/tap.h
tests_t_sigv4_CPPFLAGS = $(AM_CPPFLAGS) -DSR_TOP_SRCDIR='"$(abs_top_srcdir)"'

# The s3:// and gs:// stores: S3 requests (s3.c), XML replies (s3-xml.c),
# parallel multipart uploads (s3-mpu.c), the backend (store-s3.c); tested
# against Ceph RGW (build-aux/test-all starts it).
libckpt_a_SOURCES += ckpt/s3.c ckpt/s3.h ckpt/s3-xml.c ckpt/s3-xml.h ckpt/s3-mpu.c \
	ckpt/s3-mpu.h ckpt/store-s3.c
check_PROGRAMS += tests/t-s3-xml tests/t-store-s3
tests_t_s3_xml_SOURCES = tests/t-s3-xml.c tests/tap.h
tests_t_store_s3_SOURCES = tests/t-store-s3.c tests/tap.h tests/s3-util.h
# Credentials and settings of the s3:// and gs:// stores (the AWS CLI's
# chain, gsutil's boto config); the test runs tests/mdemu (providers/local.mk)
# as the instance-role metadata service.
libckpt_a_SOURCES += ckpt/creds.c ckpt/creds.h ckpt/creds-int.h ckpt/creds-ini.c \
	ckpt/creds-imds.c
check_PROGRAMS += tests/t-creds
tests_t_creds_SOURCES = tests/t-creds.c tests/tap.h tests/mdemu-util.h
EXTRA_tests_t_creds_DEPENDENCIES = tests/mdemu$(EXEEXT)
# The pipeline into an s3:// store against tar | zstd | aws s3 cp, on Ceph
# RGW that the script starts on loopback: `make bench` (bench/s3.sh).
SR_BENCH += bench/s3.sh
EXTRA_DIST += bench/s3.sh

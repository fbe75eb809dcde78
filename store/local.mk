# store/local.mk: the object store, a module of its own: the interface
# (store.h, the one header other modules include), the file:// backend, what
# the network families share (request engine, part uploads, XML, checksums), and
# the S3 family of backends in store/s3/ (s3:// and gs://: requests, SigV4,
# replies, multipart uploads, credentials). It depends on common/ only: its
# include path has no other module, so an upward include does not compile.
libstore_a_CPPFLAGS = $(SR_CPPFLAGS_BASE) -I$(top_srcdir)/store -I$(top_srcdir)/store/s3 \
	-I$(top_srcdir)/store/azure
libstore_a_SOURCES += store/store.h store/store.c store/store-file.c store/store-int.h \
	store/pace.c store/pace.h store/url-same.c store/dio-align.c store/bgwrite.c
# Two spellings of one store URL told the same (url-same.c).
check_PROGRAMS += tests/t-url-same
tests_t_url_same_SOURCES = tests/t-url-same.c tests/tap.h
# What the network stores' families share: the request engine (xfer.c) and
# its connections (conns.c: each reply acknowledged at once),
# parallel part uploads (parts.c), the operations they do alike (netops.c),
# the XML walker (xmlwalk.c), the upload checksums (digest.c; CRC-64 in
# crc64.c) and the credentials cache (credcache.c).
libstore_a_SOURCES += store/xfer.c store/xfer.h store/parts.c store/parts.h \
	store/xmlwalk.c store/xmlwalk.h store/digest.c store/digest.h store/crc64.c \
	store/crc64.h store/credcache.c store/credcache.h store/netops.c store/netops.h \
	store/netopts.c store/conns.c store/conns.h
check_PROGRAMS += tests/t-digest
tests_t_digest_SOURCES = tests/t-digest.c tests/tap.h tests/oom.c tests/oom.h tests/oom-trial.h
# The request engine under out-of-memory, against tests/mdemu.
check_PROGRAMS += tests/t-xfer
tests_t_xfer_SOURCES = tests/t-xfer.c tests/tap.h tests/oom.c tests/oom.h tests/oom-trial.h \
	tests/mdemu-util.h
check_PROGRAMS += tests/t-store-file tests/t-store-direct
tests_t_store_file_SOURCES = tests/t-store-file.c tests/tap.h tests/oom.c tests/oom.h \
	tests/oom-trial.h tests/nofsync.h
tests_t_store_direct_SOURCES = tests/t-store-direct.c tests/tap.h tests/oom.c tests/oom.h
# The direct writer's background syncs (bgwrite.c), through its internal header.
check_PROGRAMS += tests/t-bgwrite
tests_t_bgwrite_SOURCES = tests/t-bgwrite.c tests/tap.h

# SigV4 signing for the S3/GCS stores, checked against the AWS signing test
# suite in ../shared (SPOTRUN_SIGV4_SUITE overrides where it is looked for).
libstore_a_SOURCES += store/s3/sigv4.c store/s3/sigv4.h
# The same signing and the AWS credentials chain lent to other AWS APIs
# (cloud/aws/): store/awsauth.h, the store's second public header.
libstore_a_SOURCES += store/awsauth.h store/s3/awsauth.c
check_PROGRAMS += tests/t-sigv4
tests_t_sigv4_SOURCES = tests/t-sigv4.c tests/tap.h tests/oom.c tests/oom.h tests/oom-trial.h
tests_t_sigv4_CPPFLAGS = $(AM_CPPFLAGS) -DSR_TOP_SRCDIR='"$(abs_top_srcdir)"'

# The s3:// and gs:// stores: S3 requests (s3.c), XML replies (s3-xml.c),
# parallel multipart uploads (s3-mpu.c), the backend (store-s3.c); tested
# against Ceph RGW (build-aux/test-all starts it).
libstore_a_SOURCES += store/s3/s3.c store/s3/s3.h store/s3/s3-xml.c store/s3/s3-xml.h store/s3/s3-mpu.c \
	store/s3/s3-mpu.h store/s3/store-s3.c
check_PROGRAMS += tests/t-s3-xml tests/t-store-s3
tests_t_s3_xml_SOURCES = tests/t-s3-xml.c tests/tap.h tests/oom.c tests/oom.h tests/oom-trial.h
tests_t_store_s3_SOURCES = tests/t-store-s3.c tests/tap.h tests/s3-util.h tests/oom.c tests/oom.h \
	tests/oom-trial.h
# Credentials and settings of the s3:// and gs:// stores (the AWS CLI's
# chain, gsutil's boto config); the test runs tests/mdemu (providers/local.mk)
# as the instance-role metadata service.
libstore_a_SOURCES += store/s3/creds.c store/s3/creds.h store/s3/creds-int.h store/s3/creds-ini.c \
	store/s3/creds-imds.c
check_PROGRAMS += tests/t-creds
tests_t_creds_SOURCES = tests/t-creds.c tests/tap.h tests/mdemu-util.h tests/oom.c tests/oom.h \
	tests/oom-trial.h
EXTRA_tests_t_creds_DEPENDENCIES = tests/mdemu$(EXEEXT)

# The az:// store (store/azure/): the family of the request engine (az.c),
# Shared Key signing (az-sign.c, checked against what the Azure SDK signs),
# credentials (az-creds.c), List Blobs replies (az-xml.c), Put Blob and
# block uploads (az-blocks.c), the backend (store-az.c).
libstore_a_SOURCES += store/azure/az.c store/azure/az.h store/azure/az-sign.c store/azure/az-sign.h \
	store/azure/az-creds.c store/azure/az-creds.h store/azure/az-xml.c store/azure/az-xml.h \
	store/azure/az-blocks.c store/azure/az-blocks.h store/azure/store-az.c
check_PROGRAMS += tests/t-az-sign tests/t-az-xml
# Both with out-of-memory trials (tests/oom-trial.h on tests/oom.c).
tests_t_az_sign_SOURCES = tests/t-az-sign.c tests/tap.h tests/oom.c tests/oom.h tests/oom-trial.h
tests_t_az_xml_SOURCES = tests/t-az-xml.c tests/tap.h tests/oom.c tests/oom.h tests/oom-trial.h
# The az:// store against Azurite (build-aux/test-all starts it with
# tests/azurite.sh); helpers in tests/az-util.h.
check_PROGRAMS += tests/t-store-az tests/t-az-creds tests/t-az-faults
slow_TESTS += tests/t-store-az
tests_t_store_az_SOURCES = tests/t-store-az.c tests/tap.h tests/az-util.h tests/store-util.h \
	tests/mdemu-util.h tests/ckpt-util.h tests/oom.c tests/oom.h tests/oom-trial.h
# Its credentials, each source against Azurite; tests/mdemu is the managed
# identity's token service.
tests_t_az_creds_SOURCES = tests/t-az-creds.c tests/tap.h tests/az-util.h tests/store-util.h \
	tests/mdemu-util.h tests/oom.c tests/oom.h tests/oom-trial.h
EXTRA_tests_t_az_creds_DEPENDENCIES = tests/mdemu$(EXEEXT)
# Its requests through tests/faultproxy (tests/local.mk builds it).
tests_t_az_faults_SOURCES = tests/t-az-faults.c tests/tap.h tests/az-util.h tests/store-util.h \
	tests/mdemu-util.h
EXTRA_tests_t_az_faults_DEPENDENCIES = tests/faultproxy$(EXEEXT)
# The latency of one small request after another through the store (a
# library restore's ranged reads): bench/s3.sh and doc/benchmarks.md.
noinst_PROGRAMS += tests/bench-ranges
tests_bench_ranges_SOURCES = tests/bench-ranges.c

# providers/local.mk: sources of preemption notices. Above common/ only: it
# knows neither the store, the checkpoints nor the runner.
libproviders_a_CPPFLAGS = $(SR_CPPFLAGS_BASE) -I$(top_srcdir)/providers
libproviders_a_SOURCES += providers/provider.h
libproviders_a_SOURCES += providers/provider-int.h providers/provider.c \
	providers/local.c providers/signal.c providers/trace.h providers/trace.c \
	providers/watch.c providers/watch.h
libproviders_a_SOURCES += providers/aws.c
check_PROGRAMS += tests/t-provider
tests_t_provider_SOURCES = tests/t-provider.c tests/tap.h
# The trace replay from the job file (`spotrun check`) to the run's exit code.
dist_check_SCRIPTS += tests/t45-trace.sh
# The AWS provider against the metadata emulator.
noinst_PROGRAMS += tests/mdemu
tests_mdemu_SOURCES = tests/mdemu.c
check_PROGRAMS += tests/t-provider-aws
tests_t_provider_aws_SOURCES = tests/t-provider-aws.c tests/tap.h tests/mdemu-util.h
dist_check_SCRIPTS += tests/t40-aws.sh
# The GCP provider against the same emulator.
libproviders_a_SOURCES += providers/gcp.c
check_PROGRAMS += tests/t-provider-gcp
tests_t_provider_gcp_SOURCES = tests/t-provider-gcp.c tests/tap.h tests/mdemu-util.h
dist_check_SCRIPTS += tests/t41-gcp.sh
# The goodput model on a real spot trace (`make bench`).
noinst_PROGRAMS += tests/bench-goodput
tests_bench_goodput_SOURCES = tests/bench-goodput.c
SR_BENCH += bench/goodput.sh
EXTRA_DIST += bench/goodput.sh
# The Azure provider (Scheduled Events) against the same emulator.
libproviders_a_SOURCES += providers/azure.c
check_PROGRAMS += tests/t-provider-azure
tests_t_provider_azure_SOURCES = tests/t-provider-azure.c tests/tap.h tests/mdemu-util.h
dist_check_SCRIPTS += tests/t42-azure.sh
SR_BENCH += bench/notice-latency.sh
EXTRA_DIST += bench/notice-latency.sh
# "auto" (parallel probes), endpoints and the aws IPv6 address, against the
# emulator on loopback (127.0.0.1 and [::1]).
check_PROGRAMS += tests/t-provider-detect
tests_t_provider_detect_SOURCES = tests/t-provider-detect.c tests/tap.h tests/mdemu-util.h
EXTRA_DIST += tests/jobs/no-cloud.sh
# End to end on the three clouds, one table each: a notice too close to its
# deadline; early warnings (early_checkpoint) and `auto` finding the cloud.
dist_check_SCRIPTS += tests/t43-cloud-deadline.sh tests/t44-cloud-early.sh
# No metadata address asked where none may be (provider local or signal,
# agent --provider, AWS_EC2_METADATA_DISABLED and its kin), the store's
# credentials included: tests/mdemu counts the requests.
dist_check_SCRIPTS += tests/t46-no-metadata.sh

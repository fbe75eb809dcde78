# runner/local.mk: the engine under the command line: the job spec and the
# supervisor. It may include every module below it but store/s3/ (the store
# is used through store.h); not cli/, so it knows no exit code.
librunner_a_CPPFLAGS = $(SR_CPPFLAGS_BASE) -I$(top_srcdir)/kernels -I$(top_srcdir)/store \
	-I$(top_srcdir)/ckpt -I$(top_srcdir)/queue -I$(top_srcdir)/providers -I$(top_srcdir)/runner \
	-I$(top_srcdir)/jobspec
librunner_a_SOURCES += runner/supervise.h
# The supervisor (run-int.h says which file holds what) and the checkpoint
# methods behind method.h, one file each.
librunner_a_SOURCES += runner/run.c runner/run.h runner/run-int.h runner/run-setup.c \
	runner/data.c runner/data.h \
	runner/attempt.c runner/attempt-ckpt.c runner/attempt-signal.c runner/attempt-intr.c \
	runner/attempt-record.c runner/attempt-ranks.c runner/ranks.c runner/ranks.h \
	runner/gpus.c runner/gpus-nvml.c runner/gpus.h runner/gpulock.c runner/gpulock.h \
	runner/finished.c runner/run-lease.c \
	runner/method.c runner/method.h runner/method-dir.c runner/method-lib.c \
	runner/ctlwatch.c runner/ctlwatch.h \
	runner/gang-ckpt.c runner/gang-ckpt.h runner/sigcatch.c runner/sigcatch.h \
	runner/timeline.c runner/timeline.h \
	runner/jobenv.c runner/jobenv.h runner/request.c runner/request.h \
	runner/leftover.c runner/leftover.h runner/contain.c runner/contain.h runner/keeper.c \
	runner/container.c runner/container.h \
	runner/record.c runner/record.h runner/progress.c runner/progress.h \
	runner/metrics.c runner/metrics.h \
	runner/term.c runner/term.h runner/vclone.c runner/vclone.h
# The keeper's own program (keeper-main.c): keeper.c and leftover.c over
# libcommon.a, linked against libc alone, and built into spotrun as data
# (keeper-bin.h) for contain.c to start from memory: a keeper that is
# spotrun re-executed loads libcurl, libcrypto and theirs at every run.
noinst_PROGRAMS += runner/spotrun-keeper
runner_spotrun_keeper_SOURCES = runner/keeper-main.c runner/keeper.c runner/leftover.c
runner_spotrun_keeper_CPPFLAGS = $(librunner_a_CPPFLAGS)
runner_spotrun_keeper_LDADD = libcommon.a -lpthread -lm
librunner_a_SOURCES += runner/keeper-bin.h
nodist_librunner_a_SOURCES += runner/keeper-bin.c
CLEANFILES += runner/keeper-bin.c
runner/keeper-bin.c: runner/spotrun-keeper$(EXEEXT) $(srcdir)/build-aux/bin-to-c
	$(AM_V_GEN)$(MKDIR_P) runner && \
	{ $(SHELL) $(srcdir)/build-aux/bin-to-c sr_keeper_bin runner/spotrun-keeper$(EXEEXT) \
	    keeper-bin.h && \
	  printf 'const size_t sr_keeper_bin_size = sizeof sr_keeper_bin;\n'; } >$@.tmp && mv $@.tmp $@
# The spotrun Python module built into the binary (pymodule.h), which a run
# not started from its build tree writes out for its jobs' PYTHONPATH:
# python/spotrun/*.py as C text (build-aux/text-to-c), one generated file.
librunner_a_SOURCES += runner/pymodule.c runner/pymodule.h
nodist_librunner_a_SOURCES += runner/pymodule-text.c
CLEANFILES += runner/pymodule-text.c
runner/pymodule-text.c: $(srcdir)/python/spotrun/__init__.py $(srcdir)/python/spotrun/torch.py \
    $(srcdir)/python/spotrun/hf.py $(srcdir)/python/spotrun/lightning.py $(srcdir)/build-aux/text-to-c
	$(AM_V_GEN)$(MKDIR_P) runner && \
	{ $(SHELL) $(srcdir)/build-aux/text-to-c sr_pymodule_init_py \
	    $(srcdir)/python/spotrun/__init__.py pymodule.h && \
	  $(SHELL) $(srcdir)/build-aux/text-to-c sr_pymodule_torch_py \
	    $(srcdir)/python/spotrun/torch.py pymodule.h && \
	  $(SHELL) $(srcdir)/build-aux/text-to-c sr_pymodule_hf_py \
	    $(srcdir)/python/spotrun/hf.py pymodule.h && \
	  $(SHELL) $(srcdir)/build-aux/text-to-c sr_pymodule_lightning_py \
	    $(srcdir)/python/spotrun/lightning.py pymodule.h; } >$@.tmp && mv $@.tmp $@
# The supervisor's process layer and the job's output log; sup-driver is a
# tiny init over supervise.c that the shell tests drive (not a test itself).
librunner_a_SOURCES += runner/supervise.c runner/joblog.c runner/joblog.h
check_PROGRAMS += tests/t-supervise tests/t-joblog tests/t-progress tests/t-ranks
tests_t_ranks_SOURCES = tests/t-ranks.c tests/tap.h
tests_t_progress_SOURCES = tests/t-progress.c tests/tap.h
tests_t_supervise_SOURCES = tests/t-supervise.c tests/tap.h
tests_t_joblog_SOURCES = tests/t-joblog.c tests/tap.h
# The job's metrics: the line, its keys, the shipper's cap, the reader's merge.
check_PROGRAMS += tests/t-metrics
tests_t_metrics_SOURCES = tests/t-metrics.c tests/tap.h
# A seeded mutation fuzzer of the metrics line's parser.
check_PROGRAMS += tests/t-fuzz-metrics
tests_t_fuzz_metrics_SOURCES = tests/t-fuzz-metrics.c tests/tap.h
noinst_PROGRAMS += tests/sup-driver
tests_sup_driver_SOURCES = tests/sup-driver.c
dist_check_SCRIPTS += tests/t20-supervise.sh
slow_TESTS += tests/t20-supervise.sh
EXTRA_DIST += tests/jobspec
SR_BENCH += bench/idle.sh
EXTRA_DIST += bench/idle.sh
dist_check_SCRIPTS += tests/t30-run.sh tests/t31-request.sh tests/t31-last.sh tests/t31-starting.sh tests/t32-interrupt.sh tests/t33-tty.sh \
	tests/t34-record.sh
# A job of several ranks (procs, one per GPU, launch = once) end to end.
dist_check_SCRIPTS += tests/t35-ranks.sh
# No process of a job outlives its spotrun: killed, or stopped past its lease.
dist_check_SCRIPTS += tests/t39-contain.sh
EXTRA_DIST += tests/jobs/rankjob.py
SR_BENCH += bench/ranks.sh
EXTRA_DIST += bench/ranks.sh
SR_BENCH += bench/goodput-run.sh
EXTRA_DIST += bench/goodput-run.sh
# This machine's GPUs through NVML, loaded at run time (gpus-nvml.c), tested with
# a stand-in for NVML (tests/fake-nvml.c) built as a shared library that the
# tests load by path or through LD_LIBRARY_PATH; check_SCRIPTS, so that
# `make check` builds it before the tests run.
SR_FAKE_NVML = tests/fake-nvml/libnvidia-ml.so.1
check_SCRIPTS += $(SR_FAKE_NVML)
EXTRA_DIST += tests/fake-nvml.c
CLEANFILES += $(SR_FAKE_NVML)
$(SR_FAKE_NVML): $(srcdir)/tests/fake-nvml.c
	@$(MKDIR_P) tests/fake-nvml
	$(AM_V_CC)$(CC) $(CFLAGS) -std=gnu11 -Wall -fPIC -shared \
	    -Wl,-soname,libnvidia-ml.so.1 -o $@ $(srcdir)/tests/fake-nvml.c
check_PROGRAMS += tests/t-gpus
tests_t_gpus_SOURCES = tests/t-gpus.c tests/tap.h
tests_t_gpus_CPPFLAGS = $(AM_CPPFLAGS) -DSR_FAKE_NVML='"$(abs_top_builddir)/$(SR_FAKE_NVML)"'

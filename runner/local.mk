# runner/local.mk: the engine under the command line: the job spec and the
# supervisor. It may include every module below it but store/s3/ (the store
# is used through store.h); not cli/, so it knows no exit code.
librunner_a_CPPFLAGS = $(SR_CPPFLAGS_BASE) -I$(top_srcdir)/kernels -I$(top_srcdir)/store \
	-I$(top_srcdir)/ckpt -I$(top_srcdir)/providers -I$(top_srcdir)/runner \
	-DSR_BUILD_BINARY='"$(abs_top_builddir)/spotrun$(EXEEXT)"' \
	-DSR_SRC_PYTHONDIR='"$(abs_top_srcdir)/python"'
librunner_a_SOURCES += runner/supervise.h runner/jobspec.h
# The supervisor (run-int.h says which file holds what) and the checkpoint
# methods behind method.h, one file each.
librunner_a_SOURCES += runner/run.c runner/run.h runner/run-int.h runner/run-setup.c \
	runner/attempt.c runner/attempt-ckpt.c runner/attempt-signal.c runner/attempt-intr.c \
	runner/attempt-record.c runner/attempt-ranks.c runner/ranks.c runner/ranks.h \
	runner/gpus.c runner/gpus.h \
	runner/finished.c \
	runner/method.c runner/method.h runner/method-dir.c runner/sigcatch.c runner/sigcatch.h \
	runner/timeline.c runner/timeline.h \
	runner/jobenv.c runner/jobenv.h runner/request.c runner/request.h \
	runner/defaults.c runner/defaults.h runner/leftover.c runner/leftover.h \
	runner/record.c runner/record.h runner/progress.c runner/progress.h \
	runner/term.c runner/term.h
# The supervisor's process layer and the job's output log; sup-driver is a
# tiny init over supervise.c that the shell tests drive (not a test itself).
librunner_a_SOURCES += runner/supervise.c runner/joblog.c runner/joblog.h
check_PROGRAMS += tests/t-supervise tests/t-joblog tests/t-progress tests/t-ranks
tests_t_ranks_SOURCES = tests/t-ranks.c tests/tap.h
tests_t_progress_SOURCES = tests/t-progress.c tests/tap.h
tests_t_supervise_SOURCES = tests/t-supervise.c tests/tap.h
tests_t_joblog_SOURCES = tests/t-joblog.c tests/tap.h
noinst_PROGRAMS += tests/sup-driver
tests_sup_driver_SOURCES = tests/sup-driver.c
dist_check_SCRIPTS += tests/t20-supervise.sh
# The job file: parser and validator, its unit and word helpers, `spotrun check`.
librunner_a_SOURCES += runner/jobspec.c runner/jobspec-keys.c runner/jobspec-int.h \
	runner/jobspec-msg.c runner/jobspec-msg.h runner/jobspec-text.c runner/jobspec-text.h \
	runner/jobspec-sweep.c runner/sweep.c runner/sweep.h \
	runner/units.c runner/units.h runner/words.c runner/words.h
dist_man_MANS += doc/spotrun-job.5
check_PROGRAMS += tests/t-jobspec tests/t-units-words tests/t-sweep
tests_t_jobspec_SOURCES = tests/t-jobspec.c tests/tap.h tests/jobspec-util.h
tests_t_sweep_SOURCES = tests/t-sweep.c tests/tap.h tests/jobspec-util.h tests/mdemu-util.h
# A seeded mutation fuzzer of the parser and of sweep expansion.
check_PROGRAMS += tests/t-fuzz-jobspec
tests_t_fuzz_jobspec_SOURCES = tests/t-fuzz-jobspec.c tests/tap.h tests/jobspec-util.h
tests_t_fuzz_jobspec_CPPFLAGS = $(AM_CPPFLAGS) -DSR_TOP_SRCDIR='"$(abs_top_srcdir)"'
tests_t_jobspec_CPPFLAGS = $(AM_CPPFLAGS) -DSR_TOP_SRCDIR='"$(abs_top_srcdir)"'
tests_t_units_words_SOURCES = tests/t-units-words.c tests/tap.h
dist_check_SCRIPTS += tests/t10-check.sh
EXTRA_DIST += tests/jobspec
SR_BENCH += bench/idle.sh
EXTRA_DIST += bench/idle.sh
dist_check_SCRIPTS += tests/t30-run.sh tests/t31-request.sh tests/t32-interrupt.sh tests/t33-tty.sh
# A job of several ranks (procs, one per GPU, launch = once) end to end.
dist_check_SCRIPTS += tests/t34-ranks.sh
EXTRA_DIST += tests/jobs/rankjob.py
SR_BENCH += bench/ranks.sh
EXTRA_DIST += bench/ranks.sh
SR_BENCH += bench/goodput-run.sh
EXTRA_DIST += bench/goodput-run.sh

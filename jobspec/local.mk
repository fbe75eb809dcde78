# jobspec/local.mk: the job-file language: INI to a validated struct
# (jobspec.c), its key table and each value's parsing (jobspec-keys.c), its
# messages (jobspec-msg.c), what bytes a file may hold (jobspec-text.c),
# sweeps (sweep.c, jobspec-sweep.c), [data] (jobspec-data.c), units and
# words, and the embedded defaults (defaults.c). Below runner/: it asks the modules it names for
# what is valid (providers from the provider table, store URLs from
# store.h, checkpoint methods from the caller's table) and knows no
# supervisor, queue or exit code.
libjobspec_a_CPPFLAGS = $(SR_CPPFLAGS_BASE) -I$(top_srcdir)/kernels -I$(top_srcdir)/store \
	-I$(top_srcdir)/ckpt -I$(top_srcdir)/providers -I$(top_srcdir)/jobspec \
	-DSR_BUILD_BINARY='"$(abs_top_builddir)/spotrun$(EXEEXT)"' \
	-DSR_SRC_PYTHONDIR='"$(abs_top_srcdir)/python"'
libjobspec_a_SOURCES += jobspec/jobspec.c jobspec/jobspec.h jobspec/jobspec-keys.c \
	jobspec/jobspec-int.h jobspec/jobspec-msg.c jobspec/jobspec-msg.h \
	jobspec/jobspec-text.c jobspec/jobspec-text.h jobspec/jobspec-sweep.c \
	jobspec/jobspec-data.c \
	jobspec/sweep.c jobspec/sweep.h jobspec/units.c jobspec/units.h \
	jobspec/words.c jobspec/words.h jobspec/defaults.c jobspec/defaults.h
# The pool file (spotrun-pool(5)): what `spotrun up` acquires.
libjobspec_a_SOURCES += jobspec/pool.c jobspec/pool.h jobspec/pool-int.h jobspec/pool-keys.c
dist_man_MANS += doc/spotrun-pool.5
check_PROGRAMS += tests/t-pool
tests_t_pool_SOURCES = tests/t-pool.c tests/tap.h
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

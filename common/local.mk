# common/local.mk: helpers shared by every module, and compat/. The bottom
# of the house: it includes no other module.
libcommon_a_CPPFLAGS = $(SR_CPPFLAGS_BASE)
libcommon_a_SOURCES += common/util.c common/util.h common/fault.c common/fault.h \
	common/http.c common/http.h common/imds.c common/imds.h \
	common/iniparse.c common/iniparse.h common/inifile.c common/inifile.h \
	common/similar.c common/similar.h common/json.c common/json.h \
	common/jobkeys.c common/jobkeys.h common/termsafe.c common/termsafe.h \
	common/copytree.c common/copytree.h common/metricline.c common/metricline.h \
	common/capture.c common/capture.h common/strbuf.c common/strbuf.h \
	compat/compat.h compat/strlcpy.c
EXTRA_DIST += tests/tap.h
# Out-of-memory injection for the tests (tests/oom.c replaces malloc in the
# program it is linked into) and its own test with common/util's sr_try_*.
check_PROGRAMS += tests/t-oom
tests_t_oom_SOURCES = tests/t-oom.c tests/oom.c tests/oom.h tests/tap.h tests/oom-trial.h \
	tests/mdemu-util.h
EXTRA_DIST += tests/oom.h tests/oom-trial.h
# The keys of a job's objects (common/jobkeys.c): their text, read back.
check_PROGRAMS += tests/t-jobkeys
tests_t_jobkeys_SOURCES = tests/t-jobkeys.c tests/oom.c tests/oom.h tests/tap.h
# A program run and its output read (common/capture.c).
check_PROGRAMS += tests/t-capture
tests_t_capture_SOURCES = tests/t-capture.c tests/tap.h
# Outside text escaped for a terminal (common/termsafe.c).
check_PROGRAMS += tests/t-termsafe
tests_t_termsafe_SOURCES = tests/t-termsafe.c tests/tap.h
# The growing string (common/strbuf.c), exact and under out-of-memory.
check_PROGRAMS += tests/t-strbuf
tests_t_strbuf_SOURCES = tests/t-strbuf.c tests/tap.h tests/oom.c tests/oom.h tests/oom-trial.h

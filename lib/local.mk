# lib/local.mk: libspotrun, the job's side of library mode (libspotrun.h):
# the one shared library, built with libtool from lib/spotrun.c and the
# archives of the modules it stands on (ckpt, store, kernels, common; built
# as PIC), exporting only the API (lib/libspotrun.map).
lib_LTLIBRARIES += libspotrun.la
libspotrun_la_SOURCES = lib/spotrun.c lib/msg.c lib/lib.h lib/libspotrun.h lib/ranks.c
libspotrun_la_CPPFLAGS = $(SR_CPPFLAGS_BASE) -I$(top_srcdir)/kernels -I$(top_srcdir)/store \
	-I$(top_srcdir)/ckpt -I$(top_srcdir)/lib
libspotrun_la_LIBADD = libckpt.a libstore.a libkernels.a libcommon.a $(DEPLIBS)
# 0:0:0 (libtool's current:revision:age): the first interface.
libspotrun_la_LDFLAGS = -version-info 0:0:0 -no-undefined \
	-Wl,--version-script=$(top_srcdir)/lib/libspotrun.map
EXTRA_libspotrun_la_DEPENDENCIES = lib/libspotrun.map libckpt.a libstore.a libkernels.a \
	libcommon.a
EXTRA_DIST += lib/libspotrun.map lib/spotrun.pc.in
include_HEADERS += lib/libspotrun.h
pkgconfig_DATA += lib/spotrun.pc
dist_man3_MANS += doc/libspotrun.3

# The library on host buffers of every dtype and slices: save, restore
# bit-exact, errors by name and message, the request protocol, silence.
check_PROGRAMS += tests/t-lib
tests_t_lib_SOURCES = tests/t-lib.c tests/tap.h tests/ckpt-util.h
tests_t_lib_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib
tests_t_lib_LDADD = libspotrun.la $(LDADD)
# Ranks: one checkpoint saved by N ranks, restored by M (resharding),
# replicated tensors saved once, only the chunks needed read, the errors.
check_PROGRAMS += tests/t-reshard
tests_t_reshard_SOURCES = tests/t-reshard.c tests/tap.h tests/ckpt-util.h tests/s3-util.h \
	tests/store-util.h tests/mdemu-util.h
tests_t_reshard_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib
tests_t_reshard_LDADD = libspotrun.la $(LDADD)
# It exports the API and nothing else.
dist_check_SCRIPTS += tests/t09-lib-exports.sh

# A small C training loop checkpointing through the library (Adam on f32
# weights, a bf16 copy), run preempted under `spotrun run` with
# mode = library against an uninterrupted run.
noinst_PROGRAMS += tests/jobs/libtrain
tests_jobs_libtrain_SOURCES = tests/jobs/libtrain.c
tests_jobs_libtrain_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib
tests_jobs_libtrain_LDADD = libspotrun.la -lm
dist_check_SCRIPTS += tests/t66-libjob.sh
# Two ranks of a job under `spotrun run` with launch = ranks, preempted:
# every rank asked, one collective checkpoint, rank 0's done marker.
noinst_PROGRAMS += tests/jobs/libranks
tests_jobs_libranks_SOURCES = tests/jobs/libranks.c
tests_jobs_libranks_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib
tests_jobs_libranks_LDADD = libspotrun.la
dist_check_SCRIPTS += tests/t67-libranks.sh

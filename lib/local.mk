# lib/local.mk: libspotrun, the job's side of library mode (libspotrun.h):
# the one shared library, built with libtool from lib/spotrun.c and the
# archives of the modules it stands on (ckpt, store, kernels, common; built
# as PIC), exporting only the API (lib/libspotrun.map).
lib_LTLIBRARIES += libspotrun.la
libspotrun_la_SOURCES = lib/spotrun.c lib/msg.c lib/report.c lib/lib.h lib/libspotrun.h \
	lib/async.c lib/staging.c lib/staging.h lib/ranks.c
libspotrun_la_SOURCES += lib/device.c lib/device-save.c lib/device.h lib/device-int.h
libspotrun_la_CPPFLAGS = $(SR_CPPFLAGS_BASE) $(CUDA_CFLAGS) -I$(top_srcdir)/kernels -I$(top_srcdir)/store \
	-I$(top_srcdir)/ckpt -I$(top_srcdir)/lib
libspotrun_la_LIBADD = libckpt.a libstore.a libkernels.a libcommon.a $(DEPLIBS)
# 0:0:0 (libtool's current:revision:age): the first interface.
libspotrun_la_LDFLAGS = -version-info 0:0:0 -no-undefined \
	-Wl,--version-script=$(top_srcdir)/lib/libspotrun.map
EXTRA_libspotrun_la_DEPENDENCIES = lib/libspotrun.map libckpt.a libstore.a libkernels.a \
	libcommon.a
EXTRA_DIST += lib/libspotrun.map lib/spotrun.pc.in lib/spotrun-uninstalled.pc.in
include_HEADERS += lib/libspotrun.h
pkgconfig_DATA += lib/spotrun.pc
dist_man3_MANS += doc/libspotrun.3

# The library on host buffers of every dtype and slices: save, restore
# bit-exact, errors by name and message, the request protocol, silence.
check_PROGRAMS += tests/t-lib
tests_t_lib_SOURCES = tests/t-lib.c tests/tap.h tests/ckpt-util.h tests/lib-util.h
tests_t_lib_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib
tests_t_lib_LDADD = libspotrun.la $(LDADD)
# Ranks: one checkpoint saved by N ranks, restored by M (resharding),
# replicated tensors saved once, only the chunks needed read, the errors;
# the same collective save in the background.
check_PROGRAMS += tests/t-reshard
tests_t_reshard_SOURCES = tests/t-reshard.c tests/tap.h tests/ckpt-util.h tests/s3-util.h \
	tests/store-util.h tests/mdemu-util.h tests/ranks-util.h
tests_t_reshard_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib
tests_t_reshard_LDADD = libspotrun.la $(LDADD)
# The async save: the snapshot, the staging budget, the calls that wait,
# a failing store, requests during a save.
check_PROGRAMS += tests/t-lib-async
tests_t_lib_async_SOURCES = tests/t-lib-async.c tests/tap.h tests/ckpt-util.h
tests_t_lib_async_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib
tests_t_lib_async_LDADD = libspotrun.la $(LDADD)
# It exports the API and nothing else, each tier at its version node.
dist_check_SCRIPTS += tests/t09-lib-exports.sh
# A program built against the build tree with spotrun-uninstalled.pc
# alone runs; the experimental tier is fenced by SPOTRUN_EXPERIMENTAL.
dist_check_SCRIPTS += tests/t11-lib-pkgconfig.sh

# A small C training loop checkpointing through the library (Adam on f32
# weights, a bf16 copy), run preempted under `spotrun run` with
# mode = library against an uninterrupted run.
noinst_PROGRAMS += tests/jobs/libtrain
tests_jobs_libtrain_SOURCES = tests/jobs/libtrain.c
tests_jobs_libtrain_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib
tests_jobs_libtrain_LDADD = libspotrun.la -lm
dist_check_SCRIPTS += tests/t66-libjob.sh
# library mode: a commit that answered a request a newer one replaced
dist_check_SCRIPTS += tests/t57-lib-replaced.sh
# Two ranks of a job under `spotrun run` with launch = ranks, preempted:
# every rank asked, one collective checkpoint, rank 0's done marker.
noinst_PROGRAMS += tests/jobs/libranks
tests_jobs_libranks_SOURCES = tests/jobs/libranks.c
tests_jobs_libranks_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib
tests_jobs_libranks_LDADD = libspotrun.la
dist_check_SCRIPTS += tests/t67-libranks.sh

# The library's save of registered host buffers into RGW against directory
# mode on the same state (real trained state of bench/train-state.py), and
# a LoRA-like run whose frozen tensors are not uploaded again: `make bench`
# (bench/libsave.sh drives tests/bench-libsave).
noinst_PROGRAMS += tests/bench-libsave
tests_bench_libsave_SOURCES = tests/bench-libsave.c
tests_bench_libsave_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib
tests_bench_libsave_LDADD = libspotrun.la $(LDADD)
SR_BENCH += bench/libsave.sh
EXTRA_DIST += bench/libsave.sh
# The first spotrun_save_async's blocking against the second's, with and
# without spotrun_prepare_async (bench/first-async.sh, the same program).
SR_BENCH += bench/first-async.sh
EXTRA_DIST += bench/first-async.sh
# Device buffers (lib/device.c) against a stand-in for the CUDA driver
# (tests/fake-cuda.c: device memory the host cannot dereference, streams on
# threads of their own, the kernels' CPU twins, errors injected by the
# environment), a module built for the tests only and loaded by path
# through SPOTRUN_CUDA_LIBRARY; with and without nvcc's kernels.
check_LTLIBRARIES = tests/fake-cuda.la
tests_fake_cuda_la_SOURCES = tests/fake-cuda.c tests/fake-fail.h
tests_fake_cuda_la_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS)
tests_fake_cuda_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere -no-undefined
tests_fake_cuda_la_LIBADD = libkernels.a libcommon.a $(XXHASH_LIBS) -lpthread
# A stand-in for NCCL across rank processes (tests/fake-nccl.c: the unique id
# an abstract Unix socket, fake-cuda's device memory moved, failures
# injected, ncclCommAbort unblocking a collective), for examples/ctrain's
# device path (tests/t69-ctrain-cuda.sh).
check_LTLIBRARIES += tests/fake-nccl.la
tests_fake_nccl_la_SOURCES = tests/fake-nccl.c tests/fake-fail.h
tests_fake_nccl_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/examples/ctrain
tests_fake_nccl_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere -no-undefined
tests_fake_nccl_la_LIBADD = -ldl -lpthread
check_PROGRAMS += tests/t-fake-nccl
tests_t_fake_nccl_SOURCES = tests/t-fake-nccl.c tests/tap.h
tests_t_fake_nccl_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS) -I$(top_srcdir)/examples/ctrain \
	-DSR_FAKE_CUDA='"$(abs_top_builddir)/tests/.libs/fake-cuda.so"' \
	-DSR_FAKE_NCCL='"$(abs_top_builddir)/tests/.libs/fake-nccl.so"'
tests_t_fake_nccl_LDADD = -ldl -lpthread
check_PROGRAMS += tests/t-lib-device
tests_t_lib_device_SOURCES = tests/t-lib-device.c tests/tap.h tests/ckpt-util.h \
	tests/lib-util.h
tests_t_lib_device_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS) -I$(top_srcdir)/lib \
	-DSR_FAKE_CUDA='"$(abs_top_builddir)/tests/.libs/fake-cuda.so"'
tests_t_lib_device_LDADD = libspotrun.la $(LDADD)
# Device buffers of several ranks (forked), blocking and async, restored
# onto other rank counts within two chunks of pinned memory.
check_PROGRAMS += tests/t-reshard-device
tests_t_reshard_device_SOURCES = tests/t-reshard-device.c tests/tap.h tests/ckpt-util.h \
	tests/mdemu-util.h tests/ranks-util.h
tests_t_reshard_device_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS) -I$(top_srcdir)/lib \
	-DSR_FAKE_CUDA='"$(abs_top_builddir)/tests/.libs/fake-cuda.so"'
tests_t_reshard_device_LDADD = libspotrun.la $(LDADD)
# The same device path through the real driver, for tests/gpu/run.sh on a
# machine with a GPU (it says "skipped" elsewhere).
noinst_PROGRAMS += tests/gpu-lib
tests_gpu_lib_SOURCES = tests/gpu-lib.c
tests_gpu_lib_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS) -I$(top_srcdir)/lib
tests_gpu_lib_LDADD = libspotrun.la
# Out of memory: every allocation of create, save, save_async and restore
# failed in turn (tests/oom.c), on file://, with a device buffer (the fake
# driver) and on RGW: MEMORY or the exact result, no leak, no checkpoint
# lost or fallen back from.
check_PROGRAMS += tests/t-lib-oom
tests_t_lib_oom_SOURCES = tests/t-lib-oom.c tests/oom.c tests/oom.h tests/tap.h \
	tests/ckpt-util.h tests/s3-util.h tests/store-util.h tests/mdemu-util.h
tests_t_lib_oom_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS) -I$(top_srcdir)/lib -I$(top_srcdir)/kernels \
	-DSR_FAKE_CUDA='"$(abs_top_builddir)/tests/.libs/fake-cuda.so"'
tests_t_lib_oom_LDADD = libspotrun.la $(LDADD)
dist_check_SCRIPTS += tests/t-lib-oom-s3.sh
slow_TESTS += tests/t-lib-oom-s3.sh tests/t-lib-oom

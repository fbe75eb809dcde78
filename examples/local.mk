# examples/local.mk: example jobs, shipped in the tarball (run by
# tests/t60-quickstart.sh, tests/t61-pytorch.sh, t65-pytorch-ranks.sh,
# t71-pytorch-dcp.sh, t72-pytorch-callbacks.sh (quoted by doc/python.md,
# which t73-python-doc.sh checks), under Slurm by
# tests/t90-slurm.sh, and as a Kubernetes pod would run them by
# tests/t91-kubernetes.sh; sweep.ini, the quickstart as a sweep, is submitted by
# tests/t92-fleet-cmds.sh). quickstart/ and pytorch/ link spotrun ->
# ../../python/spotrun: Python searches the script's own directory first, so
# the examples import the tree's module, run by hand or by a spotrun that is
# not installed; slurm/ and kubernetes/ run quickstart/train.py.
# ctrain/, a C training program on libspotrun (data-parallel ranks over TCP,
# its Adam state sharded), is built with the library's include path alone, as
# `pkg-config --cflags --libs spotrun` builds it outside the tree; run by
# tests/t68-ctrain.sh.
EXTRA_DIST += examples/quickstart.ini examples/sweep.ini examples/pool-aws.ini examples/quickstart/train.py \
	examples/quickstart/spotrun \
	examples/pytorch/job.ini examples/pytorch/train.py examples/pytorch/spotrun \
	examples/pytorch/ddp.ini examples/pytorch/ddp.py examples/pytorch/dcp.py \
	examples/pytorch/hf_train.py examples/pytorch/pl_train.py \
	examples/slurm/job.ini examples/slurm/job.sbatch examples/slurm/job-wrapper.sbatch \
	examples/kubernetes/job.yaml
# Its device path (--device=cuda: kern.cu's kernels, NCCL) loads the CUDA
# driver and NCCL at run time, so the one binary runs with and without GPUs;
# with nvcc the kernels' fat binary is linked in as data (without it the
# device path says it has no kernels). -ffp-contract=off: no fused
# multiply-add on the host either (nvcc: --fmad=false), the CPU and device
# paths round alike. -export-dynamic: the kernels' CPU twins (twin.c), found
# by name by a driver that runs fat binaries on the host (tests/fake-cuda).
noinst_PROGRAMS += examples/ctrain/ctrain
examples_ctrain_ctrain_SOURCES = examples/ctrain/ctrain.c examples/ctrain/model.c \
	examples/ctrain/model.h examples/ctrain/group.c examples/ctrain/group.h \
	examples/ctrain/ctmath.h examples/ctrain/kern.h examples/ctrain/twin.c \
	examples/ctrain/cuapi.h examples/ctrain/gpu.c examples/ctrain/gpu.h \
	examples/ctrain/ncclapi.h examples/ctrain/comm.c examples/ctrain/comm.h \
	examples/ctrain/devstep.c examples/ctrain/devstep.h
examples_ctrain_ctrain_CPPFLAGS = -I$(top_srcdir)/lib -I$(top_srcdir)/examples/ctrain
examples_ctrain_ctrain_CFLAGS = $(AM_CFLAGS) -ffp-contract=off
examples_ctrain_ctrain_LDFLAGS = -export-dynamic
examples_ctrain_ctrain_LDADD = libspotrun.la -ldl -lm
EXTRA_DIST += examples/ctrain/README.md examples/ctrain/job.ini examples/ctrain/kern.cu
if HAVE_CUDA
examples_ctrain_ctrain_CPPFLAGS += $(CUDA_CFLAGS) -DCT_CUDA_H=1 -DCT_FATBIN=1
nodist_examples_ctrain_ctrain_SOURCES = examples/ctrain/fatbin/kern.c
CLEANFILES += examples/ctrain/fatbin/kern.fatbin examples/ctrain/fatbin/kern.c
examples/ctrain/fatbin/kern.fatbin: examples/ctrain/kern.cu examples/ctrain/kern.h \
	examples/ctrain/ctmath.h
	@$(MKDIR_P) examples/ctrain/fatbin
	$(nvcc_verbose)$(NVCC) -fatbin $(AM_NVCCFLAGS) --fmad=false $(NVCCFLAGS) -o $@ \
	  $(top_srcdir)/examples/ctrain/kern.cu
examples/ctrain/fatbin/kern.c: examples/ctrain/fatbin/kern.fatbin $(top_srcdir)/build-aux/bin-to-c
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/build-aux/bin-to-c ct_fatbin_kern \
	  examples/ctrain/fatbin/kern.fatbin gpu.h >$@.tmp && mv $@.tmp $@
endif
dist_check_SCRIPTS += tests/t68-ctrain.sh tests/t69-ctrain-cuda.sh
EXTRA_DIST += tests/jobs/ctrain.sh

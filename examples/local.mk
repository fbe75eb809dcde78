# examples/local.mk: example jobs, shipped in the tarball (run by
# tests/t60-quickstart.sh, tests/t61-pytorch.sh, t65-pytorch-ranks.sh, under Slurm by
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
EXTRA_DIST += examples/quickstart.ini examples/sweep.ini examples/quickstart/train.py \
	examples/quickstart/spotrun \
	examples/pytorch/job.ini examples/pytorch/train.py examples/pytorch/spotrun \
	examples/pytorch/ddp.ini examples/pytorch/ddp.py \
	examples/slurm/job.ini examples/slurm/job.sbatch examples/slurm/job-wrapper.sbatch \
	examples/kubernetes/job.yaml
noinst_PROGRAMS += examples/ctrain/ctrain
examples_ctrain_ctrain_SOURCES = examples/ctrain/ctrain.c examples/ctrain/model.c \
	examples/ctrain/model.h examples/ctrain/group.c examples/ctrain/group.h
examples_ctrain_ctrain_CPPFLAGS = -I$(top_srcdir)/lib
examples_ctrain_ctrain_LDADD = libspotrun.la -lm
EXTRA_DIST += examples/ctrain/README.md examples/ctrain/job.ini
dist_check_SCRIPTS += tests/t68-ctrain.sh

# examples/local.mk: example jobs, shipped in the tarball (run by
# tests/t60-quickstart.sh and tests/t61-pytorch.sh). Each job's directory
# links spotrun -> ../../python/spotrun: Python searches the script's own
# directory first, so the examples import the tree's module, run by hand or
# by a spotrun that is not installed.
EXTRA_DIST += examples/quickstart.ini examples/quickstart/train.py \
	examples/quickstart/spotrun \
	examples/pytorch/job.ini examples/pytorch/train.py examples/pytorch/spotrun

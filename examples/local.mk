# examples/local.mk: example jobs, shipped in the tarball (run by
# tests/t60-quickstart.sh and tests/t61-pytorch.sh).
EXTRA_DIST += examples/quickstart.ini examples/quickstart/train.py \
	examples/pytorch/job.ini examples/pytorch/train.py

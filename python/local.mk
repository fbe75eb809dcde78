# python/local.mk: the spotrun Python module, the job side of the checkpoint
# protocol, installed for the Python configure found (import spotrun,
# spotrun.torch, spotrun.hf, spotrun.lightning). Pure Python: the source tree's python/ works as it is on
# PYTHONPATH. Tested by tests/t63-python-helper.sh.
if HAVE_PYTHON
pkgpython_PYTHON = python/spotrun/__init__.py python/spotrun/torch.py python/spotrun/hf.py \
	python/spotrun/lightning.py
else
EXTRA_DIST += python/spotrun/__init__.py python/spotrun/torch.py python/spotrun/hf.py \
	python/spotrun/lightning.py
endif
# For pip (doc/python.md).
EXTRA_DIST += python/pyproject.toml

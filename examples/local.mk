# examples/local.mk: example jobs, shipped in the tarball.

# kernels/local.mk: data transforms with a CPU twin for every CUDA kernel.
libkernels_a_SOURCES += kernels/byteplane.c kernels/byteplane.h
EXTRA_DIST += kernels/byteplane.cu

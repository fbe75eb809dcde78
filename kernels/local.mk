# kernels/local.mk: data transforms with a CPU twin for every CUDA kernel.
# Above common/ only.
libkernels_a_CPPFLAGS = $(SR_CPPFLAGS_BASE) -I$(top_srcdir)/kernels
libkernels_a_SOURCES += kernels/byteplane.c kernels/byteplane.h
check_PROGRAMS += tests/t-byteplane
tests_t_byteplane_SOURCES = tests/t-byteplane.c tests/tap.h
EXTRA_DIST += kernels/byteplane.cu tests/gpu/run.sh

# The CUDA twins, when configure found nvcc. Per-target flags give the C
# objects of libkernels.a their own names (kernels/libkernels_a-X.o), so
# X.c and X.cu can sit side by side. NVCCFLAGS is the user's to set.
libkernels_a_CFLAGS = $(AM_CFLAGS)
if HAVE_CUDA
# No C++ runtime in the link: no exceptions, and the kernel launch stubs'
# one-time statics need no libstdc++ guard (they hold constants).
AM_NVCCFLAGS = -O3 -std=c++17 -Xcompiler -fno-exceptions,-fno-threadsafe-statics,-Wall \
	-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90
libkernels_a_SOURCES += kernels/byteplane.cu
check_PROGRAMS += tests/t-byteplane-cuda
tests_t_byteplane_cuda_SOURCES = tests/t-byteplane-cuda.c tests/tap.h
tests_t_byteplane_cuda_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS)
SUFFIXES = .cu
nvcc_verbose = $(nvcc_verbose_@AM_V@)
nvcc_verbose_ = $(nvcc_verbose_@AM_DEFAULT_V@)
nvcc_verbose_0 = @echo "  NVCC    " $@;
.cu.o:
	$(nvcc_verbose)$(NVCC) $(AM_NVCCFLAGS) $(NVCCFLAGS) $(DEFS) $(DEFAULT_INCLUDES) \
	  $(INCLUDES) $(libkernels_a_CPPFLAGS) $(CPPFLAGS) -c -o $@ $<
kernels/byteplane.$(OBJEXT): kernels/byteplane.h
endif

# kernels/local.mk: data transforms with a CPU twin for every CUDA kernel.
# Above common/ only.
libkernels_a_CPPFLAGS = $(SR_CPPFLAGS_BASE) -I$(top_srcdir)/kernels
libkernels_a_SOURCES += kernels/byteplane.c kernels/byteplane.h kernels/bp-tile.h \
	kernels/chunksum.c kernels/chunksum.h kernels/cs-lanes.h
# The CUDA driver loaded at run time, and the kernels' launches, in every
# build: the driver API is declared in cudaapi.h where cuda.h is not, so a
# build without the toolkit has a device path too (raw copies, and the CPU
# twins on the host: there are no fat binaries without nvcc).
libkernels_a_SOURCES += kernels/cudadrv.c kernels/cudadrv.h kernels/cudaapi.h \
	kernels/fatbin.h kernels/byteplane-cuda.c kernels/chunksum-cuda.c
# The CPU twins, and the CUDA kernels' bodies run on the host (bp-tile.h,
# cs-lanes.h) against them and against libxxhash.
check_PROGRAMS += tests/t-byteplane tests/t-chunksum
tests_t_byteplane_SOURCES = tests/t-byteplane.c tests/tap.h
tests_t_chunksum_SOURCES = tests/t-chunksum.c tests/tap.h
EXTRA_DIST += kernels/byteplane.cu kernels/chunksum.cu \
	tests/t-kernels-cuda.c tests/bench-gpu.c tests/gpu/run.sh build-aux/bin-to-c

# The CUDA kernels, when configure found nvcc. No CUDA library is linked:
# cudadrv.c loads the driver (libcuda.so.1) at run time and the kernels from
# fat binaries that nvcc builds and build-aux/bin-to-c turns into C arrays,
# so the same binary runs with and without a GPU. NVCCFLAGS is the user's.
libkernels_a_CFLAGS = $(AM_CFLAGS)
if HAVE_CUDA
libkernels_a_CPPFLAGS += $(CUDA_CFLAGS)
# Generated into kernels/fatbin/ of the build tree: no file of the product's
# folders (tests/house.py counts and checks those), whatever the build.
nodist_libkernels_a_SOURCES = kernels/fatbin/byteplane.c kernels/fatbin/chunksum.c
CLEANFILES += kernels/fatbin/byteplane.fatbin kernels/fatbin/chunksum.fatbin \
	kernels/fatbin/byteplane.c kernels/fatbin/chunksum.c
# Machine code for the A100 (sm_80) and the H100/H200 (sm_90), PTX for
# the driver to compile on later chips.
AM_NVCCFLAGS = -O3 -std=c++17 -Xcompiler -Wall \
	-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90
nvcc_verbose = $(nvcc_verbose_@AM_V@)
nvcc_verbose_ = $(nvcc_verbose_@AM_DEFAULT_V@)
nvcc_verbose_0 = @echo "  NVCC    " $@;
kernels/fatbin/byteplane.fatbin: kernels/byteplane.cu kernels/bp-tile.h
	@$(MKDIR_P) kernels/fatbin
	$(nvcc_verbose)$(NVCC) -fatbin $(AM_NVCCFLAGS) $(NVCCFLAGS) -o $@ \
	  $(top_srcdir)/kernels/byteplane.cu
kernels/fatbin/chunksum.fatbin: kernels/chunksum.cu kernels/cs-lanes.h kernels/chunksum.h
	@$(MKDIR_P) kernels/fatbin
	$(nvcc_verbose)$(NVCC) -fatbin $(AM_NVCCFLAGS) $(NVCCFLAGS) -o $@ \
	  $(top_srcdir)/kernels/chunksum.cu
kernels/fatbin/byteplane.c: kernels/fatbin/byteplane.fatbin $(top_srcdir)/build-aux/bin-to-c
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/build-aux/bin-to-c sr_fatbin_byteplane \
	  kernels/fatbin/byteplane.fatbin fatbin.h >$@.tmp && mv $@.tmp $@
kernels/fatbin/chunksum.c: kernels/fatbin/chunksum.fatbin $(top_srcdir)/build-aux/bin-to-c
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/build-aux/bin-to-c sr_fatbin_chunksum \
	  kernels/fatbin/chunksum.fatbin fatbin.h >$@.tmp && mv $@.tmp $@
# The device against the twins (skips the device part without a GPU, and
# says why), and the GPU benchmark tests/gpu/run.sh runs.
check_PROGRAMS += tests/t-kernels-cuda
tests_t_kernels_cuda_SOURCES = tests/t-kernels-cuda.c tests/tap.h
tests_t_kernels_cuda_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS) \
	-DSR_CUDA_STUB='"$(CUDA_PREFIX)/lib64/stubs/libcuda.so"'
noinst_PROGRAMS += tests/bench-gpu
tests_bench_gpu_SOURCES = tests/bench-gpu.c
tests_bench_gpu_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS)
endif

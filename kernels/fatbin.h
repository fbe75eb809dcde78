/*
 * fatbin.h: the kernels' fat binaries (nvcc -fatbin of byteplane.cu and
 * chunksum.cu: machine code for sm_80 and sm_90, PTX for later chips),
 * linked in as data by the build (build-aux/bin-to-c) and loaded by
 * sr_cuda_open with cuModuleLoadData.
 */
#ifndef SR_FATBIN_H
#define SR_FATBIN_H

extern const unsigned char sr_fatbin_byteplane[];
extern const unsigned char sr_fatbin_chunksum[];

#endif

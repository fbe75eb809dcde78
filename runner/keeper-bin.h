/*
 * keeper-bin.h: the keeper's own program (keeper-main.c), built into
 * spotrun as data by build-aux/bin-to-c (keeper-bin.c, generated), for
 * contain.c to start from memory.
 */
#ifndef SR_KEEPER_BIN_H
#define SR_KEEPER_BIN_H

#include <stddef.h>

extern const unsigned char sr_keeper_bin[];
extern const size_t sr_keeper_bin_size;

#endif

/*
 * crc64.h: CRC-64/NVME (polynomial 0xAD93D23594C93659, reflected, initial
 * value and final xor all ones; check value 0xAE8B14860A799888 for
 * "123456789"), the checksum Azure takes as x-ms-content-crc64. Two ways to
 * one result: 8 tables of 256 entries sliced 8 bytes a step (every machine;
 * the twin the other is tested against), and folding 128 bytes a step by
 * carry-less multiplication (x86-64 with PCLMULQDQ, chosen at run time).
 * Debian 12 has no library with this polynomial (ISA-L 2.30's "Jones" CRC-64
 * is 0xAD93D23594C935A9: another check value).
 */
#ifndef SR_CRC64_H
#define SR_CRC64_H

#include <stddef.h>
#include <stdint.h>

/* CRC-64/NVME of len bytes, continuing crc (0 to start): folded where
 * sr_crc64_folds() and len >= 128, else by the tables. Thread-safe; never
 * fails. */
uint64_t sr_crc64(uint64_t crc, const void *buf, size_t len);
/* The same, by the tables alone. */
uint64_t sr_crc64_table(uint64_t crc, const void *buf, size_t len);
/* 1 if this CPU folds by carry-less multiplication, else 0. */
int sr_crc64_folds(void);

#endif

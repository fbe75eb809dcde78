/*
 * heap-ours.h: the bytes in use that spotrun's own code allocated, for the
 * leak checks of OOM trials that go through libcurl: mallinfo2
 * (oom_in_use) sees curl's heap too, which moves by tens of bytes from one
 * request to the next (each handle keeps its last reply's headers) with
 * nothing leaked. A test program linked with tests/heap-ours.c and
 * HEAP_OURS_LDFLAGS has the malloc family of its own objects (the test,
 * libstore.a, libcommon.a...) go through counting wrappers
 * (ld --wrap); the shared libraries' calls do not.
 */
#ifndef SR_TEST_HEAP_OURS_H
#define SR_TEST_HEAP_OURS_H

#include <stddef.h>

/* Bytes (malloc_usable_size) allocated by the program's own objects and
 * not freed yet. */
size_t heap_ours_in_use(void);

#endif

/*
 * dio-align.c: the offset granularity at which direct writes to a file
 * reach its disk whole. statx's stx_dio_offset_align is what the kernel
 * accepts, often the disk's logical block (512 bytes), but a disk whose
 * physical block is 4 KiB does each 512-aligned write as a read-modify-
 * write: 34-39 MB/s against 362-611 MB/s 4 KiB-aligned on the same disk
 * (issue 22; `bench-ckpt align` measures it). The block layer tells the
 * real figure in sysfs: queue/physical_block_size and minimum_io_size (a
 * RAID's chunk) of the device under the file system.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "store-int.h"

/* Never less: the page size, and the physical block of every disk sold in
 * the last decade, so a device sysfs does not describe (an overlay, a
 * network file system) gets no read-modify-write either. */
#define ALIGN_FLOOR	4096

/* The number in /sys/dev/block/M:m/REL, or 0 when absent or not one. */
static unsigned long
sysfs_num(unsigned maj, unsigned min, const char *rel)
{
	char path[96], buf[32];
	unsigned long v;
	ssize_t n;
	char *end;
	int fd;

	snprintf(path, sizeof path, "/sys/dev/block/%u:%u/%s", maj, min, rel);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	v = strtoul(buf, &end, 10);
	return end != buf && (*end == '\n' || *end == '\0') ? v : 0;
}

/* The larger of a device's physical block and minimum I/O size; a
 * partition has no queue/ of its own, its disk's is one level up. */
static unsigned long
device_granularity(dev_t dev)
{
	static const char *const dirs[] = { "queue/", "../queue/" };
	unsigned long best = 0;
	size_t i;

	for (i = 0; i < sizeof dirs / sizeof dirs[0] && best == 0; i++) {
		char rel[32];
		unsigned long v;

		snprintf(rel, sizeof rel, "%sphysical_block_size", dirs[i]);
		best = sysfs_num(major(dev), minor(dev), rel);
		snprintf(rel, sizeof rel, "%sminimum_io_size", dirs[i]);
		if ((v = sysfs_num(major(dev), minor(dev), rel)) > best)
			best = v;
	}
	return best;
}

size_t
sr_dio_write_align(int fd, size_t kernel_align, size_t most)
{
	size_t align = kernel_align > ALIGN_FLOOR ? kernel_align : ALIGN_FLOOR;
	struct stat sb;
	unsigned long dev;

	if (fstat(fd, &sb) == -1)
		return align;
	dev = device_granularity(sb.st_dev);
	/* a power of two that the staging buffer holds whole, or ignored */
	if (dev > align && dev <= most && (dev & (dev - 1)) == 0)
		align = dev;
	return align;
}

/*
 * fake-nvml.c: a stand-in for NVIDIA's libnvidia-ml.so.1 (NVML), built as
 * tests/fake-nvml/libnvidia-ml.so.1 so that a test can put that folder on
 * LD_LIBRARY_PATH (or dlopen the file) and give spotrun the GPUs it wants
 * on a machine that has none. The same entry points and codes as NVML
 * (../shared/design.md section 13); what it reports comes from the
 * environment, read at each call:
 *   FAKE_NVML_GPUS    how many GPUs (default 0)
 *   FAKE_NVML_NAME    their name (default "NVIDIA H100 80GB HBM3")
 *   FAKE_NVML_NAMES   names of GPU 0, 1, ... separated by commas (a machine of
 *                     mixed models; GPUs past the list take FAKE_NVML_NAME)
 *   FAKE_NVML_MEMORY  their memory in bytes (default 80 GiB)
 *   FAKE_NVML_INIT    an NVML code nvmlInit_v2 returns (default 0; 9 is
 *                     "driver not loaded")
 * The UUID of GPU i is GPU-00000000-fake-0000-0000-00000000000i.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_INSUFFICIENT_SIZE 7

typedef void *nvmlDevice_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned int *count);
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
int nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
int nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
const char *nvmlErrorString(int result);

static unsigned long
env_num(const char *name, unsigned long dflt)
{
	const char *s = getenv(name);

	return s != NULL && *s != '\0' ? strtoul(s, NULL, 10) : dflt;
}

/* Device handles are the index + 1, so that none is NULL. */
static unsigned long
index_of(nvmlDevice_t d)
{
	return (unsigned long)(size_t)d - 1;
}

static int
valid(nvmlDevice_t d)
{
	return d != NULL && index_of(d) < env_num("FAKE_NVML_GPUS", 0);
}

int
nvmlInit_v2(void)
{
	return (int)env_num("FAKE_NVML_INIT", 0);
}

int
nvmlShutdown(void)
{
	return NVML_SUCCESS;
}

int
nvmlDeviceGetCount_v2(unsigned int *count)
{
	if (count == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = (unsigned int)env_num("FAKE_NVML_GPUS", 0);
	return NVML_SUCCESS;
}

int
nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (device == NULL || index >= env_num("FAKE_NVML_GPUS", 0))
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = (nvmlDevice_t)(size_t)(index + 1);
	return NVML_SUCCESS;
}

static int
copy_out(const char *s, char *buf, unsigned int length)
{
	if (strlen(s) >= length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(buf, s);
	return NVML_SUCCESS;
}

int
nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	const char *s = getenv("FAKE_NVML_NAME"), *list = getenv("FAKE_NVML_NAMES"), *e;
	char one[128];
	unsigned long i;

	if (!valid(device) || name == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (i = 0; list != NULL && *list != '\0'; i++) {
		e = strchr(list, ',');
		if (i == index_of(device)) {
			snprintf(one, sizeof one, "%.*s", (int)(e != NULL ? (size_t)(e - list) :
			    strlen(list)), list);
			return copy_out(one, name, length);
		}
		if (e == NULL)
			break;
		list = e + 1;
	}
	return copy_out(s != NULL ? s : "NVIDIA H100 80GB HBM3", name, length);
}

int
nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	char s[64];

	if (!valid(device) || uuid == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(s, sizeof s, "GPU-00000000-fake-0000-0000-%012lu", index_of(device));
	return copy_out(s, uuid, length);
}

int
nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	if (!valid(device) || memory == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	memory->total = env_num("FAKE_NVML_MEMORY", 80UL << 30);
	memory->used = 0;
	memory->free = memory->total;
	return NVML_SUCCESS;
}

const char *
nvmlErrorString(int result)
{
	switch (result) {
	case 0:
		return "Success";
	case 2:
		return "Invalid Argument";
	case 9:
		return "Driver Not Loaded";
	case 12:
		return "NVML Shared Library Not Found";
	}
	return "Unknown Error";
}

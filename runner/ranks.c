/*
 * ranks.c: see ranks.h.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ranks.h"
#include "util.h"

/* "id0,id1,...": the ids of GPUs [first, first + n). */
static char *
join_ids(const struct sr_gpus *g, size_t first, size_t n)
{
	char *s = sr_strdup(g->v[first].id), *t;
	size_t i;

	for (i = 1; i < n; i++) {
		t = sr_asprintf("%s,%s", s, g->v[first + i].id);
		free(s);
		s = t;
	}
	return s;
}

int
sr_ranks_plan(const struct sr_jobspec *js, const struct sr_gpus *g, int ncpus,
    struct sr_ranks *rk, char *err)
{
	int i, have = (int)g->n;

	memset(rk, 0, sizeof *rk);
	if (have < js->gpus_min)
		return sr_err(err, "job %s needs at least %d GPU%s; this machine has %d%s",
		    js->name, js->gpus_min, js->gpus_min == 1 ? "" : "s", have,
		    strcmp(g->source, "CUDA_VISIBLE_DEVICES") == 0 ?
		    " (spotrun's CUDA_VISIBLE_DEVICES names them)" : "");
	rk->gpus = have < js->gpus_max ? have : js->gpus_max;
	rk->pci_order = rk->gpus > 0 && g->by_index;
	if (js->launch == SR_LAUNCH_ONCE) {
		rk->n = 1;
		rk->visible = sr_calloc(1, sizeof *rk->visible);
		if (rk->gpus > 0)
			rk->visible[0] = join_ids(g, 0, (size_t)rk->gpus);
		return 0;
	}
	if (rk->gpus > 0)
		rk->n = rk->gpus;
	else if (js->procs_max > 0)
		rk->n = ncpus < js->procs_min ? js->procs_min :
		    ncpus > js->procs_max ? js->procs_max : ncpus;
	else
		rk->n = 1;
	rk->world = rk->n;
	rk->visible = sr_calloc((size_t)rk->n, sizeof *rk->visible);
	for (i = 0; i < rk->n && rk->gpus > 0; i++)
		rk->visible[i] = join_ids(g, (size_t)i, 1);
	return 0;
}

void
sr_ranks_free(struct sr_ranks *rk)
{
	int i;

	for (i = 0; rk->visible != NULL && i < rk->n; i++)
		free(rk->visible[i]);
	free(rk->visible);
	memset(rk, 0, sizeof *rk);
}

int
sr_ranks_ncpus(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof set, &set) == -1)
		return sr_ncpus();
	n = CPU_COUNT(&set);
	return n < 1 ? 1 : n;
}

int
sr_ranks_free_port(int *port, char *err)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd == -1)
		return sr_errno(err, "find a free port: socket");
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) == -1) {
		sr_errno(err, "find a free port on 127.0.0.1");
		close(fd);
		return -1;
	}
	close(fd);
	*port = ntohs(sa.sin_port);
	return 0;
}

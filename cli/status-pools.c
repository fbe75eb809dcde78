/*
 * status-pools.c: see status-pools.h. The pools' records and VMs read
 * once, and their lines.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool-scale.h"
#include "status-pools.h"
#include "termsafe.h"
#include "util.h"

/* The engines' clients opened for the listings: one per engine, shared
 * by its pools (one token, project or subscription fetched). */
struct clients {
	struct client {
		const struct sr_pool_engine *e;
		void *c;		/* NULL: its open failed (err) */
		char err[SR_ERRMAX];
	} *v;
	size_t n;
};

/* e's client in cl, opened at its first pool. */
static struct client *
client_of(struct clients *cl, const struct sr_pool_engine *e)
{
	struct client *c;
	size_t i;

	for (i = 0; i < cl->n; i++)
		if (cl->v[i].e == e)
			return &cl->v[i];
	cl->v = sr_reallocarray(cl->v, cl->n + 1, sizeof *cl->v);
	c = &cl->v[cl->n++];
	c->e = e;
	if (e->open(&c->c, c->err) == -1)
		c->c = NULL;
	return c;
}

/* Pool p's VMs, asked of its engine through c, priced (t may be NULL). */
static void
list_vms(struct sr_status_pool *p, const struct client *c, const struct sr_prices *t)
{
	struct sr_pool_where w;
	size_t i;

	sr_pool_where_of(&p->rec, &w);
	if (c->c == NULL) {
		snprintf(p->list_err, sizeof p->list_err, "%s", c->err);
		return;
	}
	if (p->e->list(c->c, &w, p->rec.name, &p->vms, &p->nvms, p->list_err) == -1) {
		p->vms = NULL;
		p->nvms = 0;
		return;
	}
	p->listed = 1;
	p->price = sr_calloc(p->nvms + 1, sizeof *p->price);
	p->from = sr_calloc(p->nvms + 1, sizeof *p->from);
	for (i = 0; i < p->nvms; i++) {
		p->price[i] = sr_pool_vm_price(&p->vms[i], t);
		p->from[i] = p->vms[i].price > 0 ? SR_STATUS_PRICE_LAUNCH : p->price[i] > 0 ?
		    SR_STATUS_PRICE_TABLE : SR_STATUS_PRICE_NONE;
	}
}

int
sr_status_pools_read(struct sr_queue *q, const struct sr_settings *s, int no_cloud,
    struct sr_status_pools *out, char *err)
{
	struct sr_queue_pool *v;
	struct sr_prices *t = NULL;
	struct clients cl = { NULL, 0 };
	char perr[SR_ERRMAX];
	size_t i;

	memset(out, 0, sizeof *out);
	if (sr_queue_pools_read(q, &v, &out->n, &out->bad, err) == -1)
		return -1;
	out->v = sr_calloc(out->n + 1, sizeof *out->v);
	if (out->n > 0 && !no_cloud && sr_fleet_prices(NULL, s, &t, perr) == -1)
		fprintf(stderr, "spotrun: warning: %s; VMs priced by their cloud only\n", perr);
	for (i = 0; i < out->n; i++) {
		out->v[i].rec = v[i];
		out->v[i].e = sr_pool_engine_named(v[i].cloud);
		if (!no_cloud && out->v[i].e != NULL && out->v[i].e->list != NULL)
			list_vms(&out->v[i], client_of(&cl, out->v[i].e), t);
	}
	for (i = 0; i < cl.n; i++)
		cl.v[i].e->close(cl.v[i].c);
	free(cl.v);
	out->now = sr_now();
	sr_prices_free(t);
	free(v);
	return 0;
}

void
sr_status_pools_free(struct sr_status_pools *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->v[i].vms);
		free(p->v[i].price);
		free(p->v[i].from);
	}
	free(p->v);
	memset(p, 0, sizeof *p);
}

/* "$0.40/h", "$0.3712/h": cents, and up to 4 decimals when the cloud
 * priced finer (a spot price). */
static void
dollars_an_hour(double x, char *buf, size_t len)
{
	size_t n;

	snprintf(buf, len, "$%.4f", x);
	n = strlen(buf);
	while (n > 0 && buf[n - 1] == '0' && strchr(buf, '.') != NULL &&
	    strlen(strchr(buf, '.')) > 3)
		buf[--n] = '\0';
	snprintf(buf + n, len - n, "/h");
}

/* ", VMs: N STATE, ..." (by state, in the order first met), then a line
 * per VM. */
static void
print_vms(const struct sr_status_pool *p, double now)
{
	const struct sr_pool_vm *v = p->vms;
	char safe[SR_TERMSAFE_LEN(SR_ERRMAX)], age[32], price[32];
	char nm[SR_TERMSAFE_LEN(sizeof v->name)], st[SR_TERMSAFE_LEN(sizeof v->state)];
	char z[SR_TERMSAFE_LEN(sizeof v->zone)], ty[SR_TERMSAFE_LEN(sizeof v->type)];
	size_t n = p->nvms, i, k, same;
	int first;

	if (!p->listed) {
		printf("; VMs not listed: %s\n", sr_termsafe(p->list_err, safe, sizeof safe));
		return;
	}
	if (n == 0)
		printf("; no VMs");
	for (i = 0, first = 1; i < n; i++) {
		for (k = 0; k < i && strcmp(v[k].state, v[i].state) != 0; k++)
			;
		if (k < i)
			continue;
		for (k = i, same = 0; k < n; k++)
			same += strcmp(v[k].state, v[i].state) == 0;
		printf("%s%zu %s", first ? "; VMs: " : ", ", same, sr_termsafe(v[i].state, st,
		    sizeof st));
		first = 0;
	}
	putchar('\n');
	for (i = 0; i < n; i++) {
		if (p->price[i] > 0)
			dollars_an_hour(p->price[i], price, sizeof price);
		else
			snprintf(price, sizeof price, "price unknown");
		printf("  %s %s %s %s %s %s\n", sr_termsafe(v[i].name[0] != '\0' ? v[i].name :
		    v[i].id, nm, sizeof nm), sr_termsafe(v[i].state, st, sizeof st),
		    v[i].zone[0] != '\0' ? sr_termsafe(v[i].zone, z, sizeof z) : "-",
		    v[i].type[0] != '\0' ? sr_termsafe(v[i].type, ty, sizeof ty) : "-", price,
		    v[i].launched > 0 ? sr_fmt_duration(now > v[i].launched ? now - v[i].launched :
		    0, age, sizeof age) : "age unknown");
	}
}

void
sr_status_pools_print(const struct sr_status_pools *p)
{
	const struct sr_queue_pool *r;
	char g[SR_TERMSAFE_LEN(sizeof r->group)], rg[SR_TERMSAFE_LEN(sizeof r->region)];
	char c[SR_TERMSAFE_LEN(sizeof r->cloud)], nm[SR_TERMSAFE_LEN(sizeof r->name)];
	char tr[SR_TERMSAFE_LEN(sizeof r->tried)], wy[SR_TERMSAFE_LEN(sizeof r->why)];
	char by[SR_TERMSAFE_LEN(sizeof r->by)];
	size_t i;
	int other;

	if (p->n > 0)
		putchar('\n');
	for (i = 0; i < p->n; i++) {
		r = &p->v[i].rec;
		other = r->by[0] != '\0' && strcmp(r->by, "spotrun up") != 0;
		/* "no EC2 Fleet": waiting for capacity with none made */
		printf("pool %s on %s in %s: %s%s%s%s, target %u VM%s (%s%s%s)",
		    sr_termsafe(r->name, nm, sizeof nm), sr_termsafe(r->cloud, c, sizeof c),
		    sr_termsafe(r->region, rg, sizeof rg), r->group[0] == '\0' ? "no " : "",
		    p->v[i].e != NULL ? p->v[i].e->what : "group", r->group[0] == '\0' ? "" : " ",
		    sr_termsafe(r->group, g, sizeof g), r->target, r->target == 1 ? "" : "s",
		    r->why[0] != '\0' ? sr_termsafe(r->why, wy, sizeof wy) : "as spotrun up set it",
		    other ? ", by " : "", other ? sr_termsafe(r->by, by, sizeof by) : "");
		if (r->tried[0] != '\0')
			printf("; %s: tried %s", r->waiting ? "waiting for capacity" :
			    "moved here after no capacity", sr_termsafe(r->tried, tr, sizeof tr));
		/* spent's split: what the VMs cost while a job ran on them, and
		 * idle (none in a record written before the split) */
		if (r->cost_cap > 0)
			printf("; $%.2f of $%.2f spent", r->spent, r->cost_cap);
		else if (r->spent > 0)
			printf("; $%.2f spent", r->spent);
		if ((r->cost_cap > 0 || r->spent > 0) && (r->in_jobs > 0 || r->idle > 0))
			printf(", $%.2f in jobs, $%.2f idle", r->in_jobs, r->idle);
		if (p->v[i].listed || p->v[i].list_err[0] != '\0')
			print_vms(&p->v[i], p->now);
		else
			putchar('\n');
	}
}

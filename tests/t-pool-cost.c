/*
 * t-pool-cost.c: what a pool's VMs cost between two scaler steps and how
 * it is split (fleet/pool-scale.h, sr_pool_cost_add; doc/design.md "What
 * a pool costs"): each billed VM at its launch price, else the table's,
 * from the record's spent_at (or its launch when later) to now, into
 * in_jobs when a job ran on it, else idle; VMs not billed, priced by
 * nothing or launched after now cost nothing; a record with no spent_at
 * yet gets only one. Exact figures.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pool-scale.h"
#include "prices.h"
#include "tap.h"
#include "util.h"

static struct sr_pool_vm
vm(const char *id, const char *type, double launched, int billed, double price)
{
	struct sr_pool_vm v;

	memset(&v, 0, sizeof v);
	snprintf(v.id, sizeof v.id, "%s", id);
	snprintf(v.type, sizeof v.type, "%s", type);
	v.launched = launched;
	v.spot = 1;
	v.billed = billed;
	v.price = price;
	return v;
}

/* x in millionths of a dollar, rounded: exact figures to compare */
static long
micro(double x)
{
	return lround(x * 1e6);
}

int
main(void)
{
	static const char table[] = "[aws]\nas_of = 2025-01-01\nsource = t-pool-cost\n"
	    "g5.xlarge = 1.0 0.72\n";
	struct sr_prices *t;
	struct sr_queue_pool rec;
	struct sr_pool_vm v[5];
	int busy[5] = { 1, 0, 1, 1, 1 };
	char err[SR_ERRMAX];

	is_int(sr_prices_parse("t.ini", table, strlen(table), &t, err), 0, "the price table parses");
	/* A: its launch price, busy, the whole 100 s; B: the table's spot
	 * price, idle, from its launch 50 s in; C: not billed; D: no price;
	 * E: launched after now */
	v[0] = vm("i-a", "g5.xlarge", 500, 1, 0.36);
	v[1] = vm("i-b", "g5.xlarge", 1050, 1, 0);
	v[2] = vm("i-c", "g5.xlarge", 500, 0, 0.36);
	v[3] = vm("i-d", "x9.huge", 500, 1, 0);
	v[4] = vm("i-e", "g5.xlarge", 1200, 1, 0.36);
	memset(&rec, 0, sizeof rec);
	rec.spent_at = 1000;
	rec.spent = 1;
	rec.in_jobs = 0.25;
	rec.idle = 0.75;
	sr_pool_cost_add(&rec, v, 5, busy, t, 1100);
	is_int(micro(rec.spent), 1020000, "spent: $1 + 0.36/h * 100 s + 0.72/h * 50 s = $1.02");
	is_int(micro(rec.in_jobs), 260000, "in jobs: $0.25 + A's 100 s at 0.36/h = $0.26");
	is_int(micro(rec.idle), 760000, "idle: $0.75 + B's 50 s at 0.72/h = $0.76");
	ok(rec.spent_at == 1100, "spent_at is now");

	/* the next step, no job running (busy NULL): all idle, E not yet */
	sr_pool_cost_add(&rec, v, 5, NULL, t, 1190);
	is_int(micro(rec.spent), 1020000 + 9000 + 18000, "next step: A 90 s ($0.009), B 90 s "
	    "($0.018)");
	is_int(micro(rec.in_jobs), 260000, "... in jobs unchanged");
	is_int(micro(rec.idle), 760000 + 27000, "... all of it idle");

	/* the clock behind spent_at: nothing added */
	sr_pool_cost_add(&rec, v, 5, busy, t, 1150);
	is_int(micro(rec.spent), 1047000, "a now before spent_at adds nothing");
	ok(rec.spent_at == 1150, "... spent_at is that now");

	/* no spent_at yet: nothing counted, spent_at set */
	memset(&rec, 0, sizeof rec);
	sr_pool_cost_add(&rec, v, 5, busy, t, 1100);
	is_int(micro(rec.spent) + micro(rec.in_jobs) + micro(rec.idle), 0,
	    "no spent_at yet: nothing counted");
	ok(rec.spent_at == 1100, "... spent_at set");

	/* no table: A by its launch price only */
	memset(&rec, 0, sizeof rec);
	rec.spent_at = 1000;
	sr_pool_cost_add(&rec, v, 5, busy, NULL, 1100);
	is_int(micro(rec.spent), 10000, "no table: A alone, $0.01");
	is_int(micro(rec.in_jobs), 10000, "... in jobs");
	sr_prices_free(t);
	return tap_done();
}

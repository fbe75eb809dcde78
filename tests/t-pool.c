/*
 * t-pool.c: the pool file (jobspec/pool.c, spotrun-pool(5)): a good file's
 * every field and the defaults; each error's exact message and line,
 * did-you-mean for keys, sections and clouds; every error of a file
 * reported, not the first only.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "tap.h"

/* The errors of text as "LINE: msg" lines joined by '\n' (static), or
 * "ok" when it parses. */
static const char *
errors(const char *text)
{
	static char out[4096];
	struct sr_jobspec_errors errs;
	struct sr_pool *p;
	size_t i;

	*out = '\0';
	if (sr_pool_parse("t.ini", text, strlen(text), &p, &errs) == 0) {
		sr_pool_free(p);
		return "ok";
	}
	for (i = 0; i < errs.n; i++)
		snprintf(out + strlen(out), sizeof out - strlen(out), "%s%d: %s", i ? "\n" : "",
		    errs.v[i].line, errs.v[i].msg);
	sr_jobspec_errors_free(&errs);
	return out;
}

#define HEAD "[pool]\nname = p\ncloud = aws\nregions = us-east-1\n"

int
main(void)
{
	struct sr_jobspec_errors errs;
	struct sr_pool *p;
	const char *good =
	    "; a sweep pool\n"
	    "[pool]\n"
	    "name = sweep-a10g\n"
	    "cloud = aws\n"
	    "regions = us-east-1, us-west-2\n"
	    "zones = us-east-1a, us-east-1b, us-west-2c\n"
	    "max_vms = 4\n"
	    "max_price = $0.75\n"
	    "cost_cap = 500\n"
	    "idle_timeout = 20m\n"
	    "on_demand_after = 1h\n"
	    "[vm]\n"
	    "gpus = 1xA10G, 1xL4\n"
	    "image = ami-0123456789abcdef0\n"
	    "disk_size = 200\n"
	    "role = spotrun-agent\n";

	is_int(sr_pool_parse("good.ini", good, strlen(good), &p, &errs), 0, "a good file parses");
	is_str(p->name, "sweep-a10g", "name");
	is_str(sr_pool_cloud_name(p->cloud), "aws", "cloud");
	ok(p->nregions == 2 && strcmp(p->regions[0], "us-east-1") == 0 &&
	    strcmp(p->regions[1], "us-west-2") == 0, "regions, in order");
	ok(p->nzones == 3 && strcmp(p->zones[2], "us-west-2c") == 0, "zones, in order");
	ok(p->ngpus == 2 && p->gpus[0].count == 1 && strcmp(p->gpus[0].model, "A10G") == 0 &&
	    strcmp(p->gpus[1].model, "L4") == 0, "gpus: two shapes");
	is_int(p->ntypes, 0, "no instance_types");
	is_str(p->image, "ami-0123456789abcdef0", "image");
	is_int(p->disk_gib, 200, "disk_size");
	is_str(p->role, "spotrun-agent", "role");
	is_int(p->max_vms, 4, "max_vms");
	ok(p->max_price == 0.75 && p->cost_cap == 500, "max_price with '$', cost_cap");
	ok(p->idle_timeout == 1200 && p->on_demand_after == 3600, "idle_timeout, on_demand_after");
	sr_pool_free(p);

	is_int(sr_pool_parse("min.ini", HEAD "[vm]\ninstance_types = g5.xlarge\n",
	    strlen(HEAD "[vm]\ninstance_types = g5.xlarge\n"), &p, NULL), 0, "a minimal file");
	ok(p->image == NULL && p->role == NULL && p->disk_gib == 100 && p->max_vms == 1 &&
	    p->max_price == 0 && p->cost_cap == 0 && p->idle_timeout == 1800 &&
	    p->on_demand_after == 0 && p->nzones == 0, "the defaults");
	sr_pool_free(p);
	is_str(sr_pool_default_image(SR_POOL_AZURE), "microsoft-dsvm:ubuntu-hpc:2204:latest",
	    "azure's default image");

	is_str(errors("[pool]\n[vm]\n"),
	    "0: missing required key 'name' in [pool]; add e.g. name = sweep-a10g\n"
	    "0: missing required key 'cloud' in [pool]; add e.g. cloud = aws\n"
	    "0: missing required key 'regions' in [pool]; add e.g. regions = us-east-1\n"
	    "0: missing instance_types or gpus in [vm]; add e.g. gpus = 1xA10G",
	    "every missing key, at once");
	is_str(errors(HEAD "max_vm = 3\n[vm]\ngpus = 1xL4\n"),
	    "5: unknown key 'max_vm' in [pool]; did you mean 'max_vms'? Valid keys: name, "
	    "cloud, regions, zones, max_vms, max_price, cost_cap, idle_timeout, on_demand_after",
	    "unknown key: did you mean");
	is_str(errors(HEAD "gpus = 1xL4\n"),
	    "5: unknown key 'gpus' in [pool]; gpus belongs in [vm]\n"
	    "0: missing instance_types or gpus in [vm]; add e.g. gpus = 1xA10G",
	    "a key in the other section");
	is_str(errors(HEAD "[vms]\ngpus = 1xL4\nimage = x\n"),
	    "6: unknown section [vms]; did you mean [vm]? Valid sections: [pool], [vm]\n"
	    "0: missing instance_types or gpus in [vm]; add e.g. gpus = 1xA10G",
	    "unknown section: did you mean, said once");
	is_str(errors("cloud = aws\n" HEAD "[vm]\ngpus = 1xL4\n"),
	    "1: key 'cloud' is outside any section; put it under [pool]", "a key before [pool]");
	is_str(errors("[pool]\nname = p\ncloud = awz\nregions = us-east-1\n[vm]\ngpus = 1xL4\n"),
	    "3: cloud = awz: not a cloud a pool can be on; did you mean aws? (aws, gcp or azure)",
	    "bad cloud: did you mean");
	is_str(errors("[pool]\nname = p\ncloud = ibm\nregions = us-east-1\n[vm]\ngpus = 1xL4\n"),
	    "3: cloud = ibm: not a cloud a pool can be on; give aws, gcp or azure", "bad cloud");
	is_str(errors(HEAD "name = q\n[vm]\ngpus = 1xL4\n"),
	    "5: duplicate key 'name' in [pool] (first set on line 2); keep one", "duplicate key");
	is_str(errors("[pool]\nname = Sweep_1\ncloud = aws\nregions = us-east-1\n[vm]\n"
	    "gpus = 1xL4\n"),
	    "2: name = Sweep_1: a pool's name is lowercase letters, digits and '-', starting "
	    "with a letter, at most 40 characters (e.g. sweep-a10g)", "bad name");
	is_str(errors(HEAD "zones = us-east-1a, us-west-2a\n[vm]\ngpus = 1xL4\n"),
	    "5: zones: us-west-2a is in none of the regions (us-east-1); an aws zone is its "
	    "region and a letter, e.g. us-east-1a", "an AWS zone outside the regions");
	is_str(errors("[pool]\nname = p\ncloud = gcp\nregions = us-central1\n"
	    "zones = us-central1a\n[vm]\ngpus = 1xL4\n"),
	    "5: zones: us-central1a is in none of the regions (us-central1); a gcp zone is its "
	    "region and '-' and a letter, e.g. us-central1-a", "a GCP zone written AWS's way");
	is_str(errors("[pool]\nname = p\ncloud = azure\nregions = eastus\nzones = 1, 4\n"
	    "[vm]\ngpus = 1xT4\n"),
	    "5: zones: 4 is not an azure zone; azure zones are 1, 2 or 3, in each of the regions",
	    "an Azure zone out of 1..3");
	is_str(errors("[pool]\nname = p\ncloud = azure\nregions = east-us\n[vm]\ngpus = 1xT4\n"),
	    "4: regions: east-us is not an azure region; write it as the cloud does, e.g. eastus",
	    "an Azure region with a dash");
	is_str(errors(HEAD "[vm]\ngpus = 8H100\n"),
	    "6: gpus: '8H100' is not a GPU shape; write COUNTxMODEL, e.g. 8xH100 or 1xA10G, "
	    "or a list of them (1xA10G, 1xL4)", "a shape without x");
	is_str(errors(HEAD "[vm]\ngpus = 1xA10G, xL4\n"),
	    "6: gpus: 'xL4' is not a GPU shape; write COUNTxMODEL, e.g. 8xH100 or 1xA10G, "
	    "or a list of them (1xA10G, 1xL4)", "a shape without a count");
	is_str(errors(HEAD "[vm]\ngpus = 32xH100\n"),
	    "6: gpus: '32xH100' has 32 GPUs; a shape has 1 to 16", "too many GPUs");
	is_str(errors(HEAD "[vm]\ngpus = 1xL4,,1xT4\n"),
	    "6: gpus = 1xL4,,1xT4: an empty item; separate the items with one comma (e.g. a, b)",
	    "an empty list item");
	is_str(errors(HEAD "[vm]\ninstance_types = g5.xlarge, g5.xlarge\n"),
	    "6: instance_types = g5.xlarge, g5.xlarge: g5.xlarge is listed twice; keep one",
	    "a type listed twice");
	is_str(errors(HEAD "[vm]\ninstance_types = g5.xlarge\ngpus = 1xL4\n"),
	    "7: instance_types and gpus both choose the machines; keep one",
	    "instance_types and gpus");
	is_str(errors(HEAD "max_price = 0\n[vm]\ngpus = 1xL4\n"),
	    "5: max_price = 0: not above 0; give dollars a VM-hour above 0 (e.g. max_price = "
	    "1.50), or remove it to pay up to the on-demand price", "max_price 0");
	is_str(errors(HEAD "max_price = -1\n[vm]\ngpus = 1xL4\n"),
	    "5: max_price = -1: not an amount of dollars; give dollars a VM-hour above 0 (e.g. "
	    "max_price = 1.50), or remove it to pay up to the on-demand price", "max_price < 0");
	is_str(errors(HEAD "max_vms = 0\n[vm]\ngpus = 1xL4\n"),
	    "5: max_vms = 0: not in range; give a whole number of VMs from 1 to 1000 (e.g. "
	    "max_vms = 4)", "max_vms 0");
	is_str(errors(HEAD "idle_timeout = 20 minutes\n[vm]\ngpus = 1xL4\n"),
	    "5: idle_timeout = 20 minutes: not a duration; give a duration from 1m to 7d, or 0 "
	    "for never (e.g. idle_timeout = 30m)", "idle_timeout not a duration");
	is_str(errors(HEAD "idle_timeout = 0\n[vm]\ngpus = 1xL4\n"), "ok", "idle_timeout 0: never");
	is_str(errors(HEAD "on_demand_after = 0\n[vm]\ngpus = 1xL4\n"),
	    "5: on_demand_after = 0: out of range; give a duration from 1m to 7d (e.g. "
	    "on_demand_after = 1h), or remove it to stay on spot", "on_demand_after 0");
	is_str(errors(HEAD "[vm]\ngpus = 1xL4\nrole = arn:aws:iam::1:role/x\n"),
	    "7: role = arn:aws:iam::1:role/x: not an instance profile's name; give e.g. "
	    "spotrun-agent, or arn:aws:iam::ACCOUNT:instance-profile/NAME",
	    "an AWS role ARN, not an instance profile");
	is_str(errors("[pool]\nname = p\ncloud = gcp\nregions = us-central1\n[vm]\ngpus = 1xL4\n"
	    "role = spotrun-agent\n"),
	    "7: role = spotrun-agent: not a service account's name; give e.g. "
	    "spotrun-agent@PROJECT.iam.gserviceaccount.com", "a GCP role that is no email");
	is_str(errors(HEAD "[vm]\ngpus = 1xL4\ndisk_size = 5\n"),
	    "7: disk_size = 5: not in range; give GiB of each VM's disk, from 10 to 65536 (e.g. "
	    "disk_size = 200)", "disk_size too small");
	is_str(errors(HEAD "[vm]\ngpus 1xL4\n"),
	    "6: not a setting: write key = value, a [section] header, or a comment starting "
	    "with ';' or '#'", "a syntax error, with its line");
	is_str(errors(HEAD "[vm]\nimage = a b\ngpus = 1xL4\n"),
	    "6: image = a b: an image is one word with no blank; give an image ID, or remove "
	    "image for the cloud's GPU image", "an image with a blank");
	return tap_done();
}

/*
 * jobenv.c: see jobenv.h. Later entries replace earlier ones with the same
 * name, so the precedence is simply the order of addition.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "jobenv.h"
#include "jobspec.h"
#include "util.h"

/* The store's keys stay with the supervisor: a job (and whatever it
 * prints or spawns) never sees them unless its job file's env sets them. */
static const char *const secret_vars[] = {
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
	"GS_ACCESS_KEY_ID", "GS_SECRET_ACCESS_KEY",
	"AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CONNECTION_STRING",
};

static int
is_secret(const char *kv)
{
	size_t klen = strcspn(kv, "="), i;

	for (i = 0; i < SR_ARRAY_LEN(secret_vars); i++)
		if (strlen(secret_vars[i]) == klen && strncmp(kv, secret_vars[i], klen) == 0)
			return 1;
	return 0;
}

struct envbuf {
	char **v;
	size_t n, cap;
};

/* Add kv after everything, without replacing an entry of the same name. */
static void
env_append(struct envbuf *e, char *kv)
{
	if (e->n + 2 > e->cap) {
		e->cap = e->cap ? e->cap * 2 : 64;
		e->v = sr_reallocarray(e->v, e->cap, sizeof *e->v);
	}
	e->v[e->n++] = kv;
	e->v[e->n] = NULL;
}

/* Add kv, replacing an entry of the same name where there is one. */
static void
env_set(struct envbuf *e, char *kv)
{
	size_t klen = strcspn(kv, "="), i;

	for (i = 0; i < e->n; i++) {
		if (strncmp(e->v[i], kv, klen) == 0 && e->v[i][klen] == '=') {
			free(e->v[i]);
			e->v[i] = kv;
			return;
		}
	}
	env_append(e, kv);
}

/* Append dir to PYTHONPATH: after what the user or the job file put there
 * (their copy of the module stays first; PYTHONPATH still comes before the
 * installed site directories), alone when it is unset or empty (an empty
 * entry would put the current directory on the path), not at all when it
 * is already there. */
static void
add_python_path(struct envbuf *e, const char *dir)
{
	const char *cur = NULL, *p;
	size_t i, dlen = strlen(dir);

	for (i = 0; i < e->n; i++)
		if (strncmp(e->v[i], "PYTHONPATH=", 11) == 0)
			cur = e->v[i] + 11;
	if (cur == NULL || *cur == '\0') {
		env_set(e, sr_asprintf("PYTHONPATH=%s", dir));
		return;
	}
	for (p = cur; p != NULL; p = strchr(p, ':') != NULL ? strchr(p, ':') + 1 : NULL) {
		if (strncmp(p, dir, dlen) == 0 && (p[dlen] == ':' || p[dlen] == '\0'))
			return;
	}
	env_set(e, sr_asprintf("PYTHONPATH=%s:%s", cur, dir));
}

/* Set name=value unless the environment has name already (torchrun's
 * defaults that the user may set otherwise). */
static void
env_default(struct envbuf *e, const char *name, const char *value)
{
	size_t i, n = strlen(name);

	for (i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, n) == 0 && e->v[i][n] == '=')
			return;
	env_append(e, sr_asprintf("%s=%s", name, value));
}

/* torchrun's variables for one worker (torch 1.13's local_elastic_agent.py,
 * doc/spotrun.1 RANKS), of a one-node group or of node node_rank of a gang
 * as torchrun --nnodes gives them: the group is the node, the role every
 * rank of the job; but for TORCHELASTIC_USE_AGENT_STORE: False, since no
 * agent of spotrun's holds a TCPStore, so rank 0 must host it at
 * MASTER_PORT. */
static void
add_ranks(struct envbuf *e, const struct sr_jobenv_vars *v, const struct sr_jobenv_proc *p)
{
	int nodes = v->nodes > 1 ? v->nodes : 1, node = v->nodes > 1 ? v->node_rank : 0;
	int rank = node * v->world_size + p->rank, world = nodes * v->world_size;

	env_set(e, sr_asprintf("RANK=%d", rank));
	env_set(e, sr_asprintf("LOCAL_RANK=%d", p->rank));
	env_set(e, sr_asprintf("GROUP_RANK=%d", node));
	env_set(e, sr_asprintf("ROLE_RANK=%d", rank));
	env_set(e, sr_strdup("ROLE_NAME=default"));
	env_set(e, sr_asprintf("LOCAL_WORLD_SIZE=%d", v->world_size));
	env_set(e, sr_asprintf("WORLD_SIZE=%d", world));
	env_set(e, sr_asprintf("GROUP_WORLD_SIZE=%d", nodes));
	env_set(e, sr_asprintf("ROLE_WORLD_SIZE=%d", world));
	env_set(e, sr_asprintf("MASTER_ADDR=%s", v->master_addr));
	env_set(e, sr_asprintf("MASTER_PORT=%d", v->master_port));
	env_set(e, sr_asprintf("TORCHELASTIC_RESTART_COUNT=%d", v->restart_count));
	env_set(e, sr_asprintf("TORCHELASTIC_MAX_RESTARTS=%d", v->max_restarts));
	env_set(e, sr_asprintf("TORCHELASTIC_RUN_ID=%s", v->run_id));
	env_set(e, sr_strdup("TORCHELASTIC_USE_AGENT_STORE=False"));
	if (p->error_file != NULL)
		env_set(e, sr_asprintf("TORCHELASTIC_ERROR_FILE=%s", p->error_file));
	/* torch 1.13's name and today's: each only when the user set none. */
	env_default(e, "NCCL_ASYNC_ERROR_HANDLING", "1");
	env_default(e, "TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
	/* As torchrun: several ranks each with a thread per core would
	 * overload the machine. */
	if (world > 1)
		env_default(e, "OMP_NUM_THREADS", "1");
}

/* spotrun's own environment (less a supervisor's SPOTRUN_* and the
 * secrets), then the job file's [env], into e. */
static void
add_base(struct envbuf *e, char *const *base, const struct sr_jobspec *js)
{
	size_t i;

	env_set(e, sr_strdup("SPOTRUN_JOB=x"));	/* makes sure e->v exists */
	for (i = 0; base != NULL && base[i] != NULL; i++) {
		/* A supervisor above us must not leak its own job's variables. */
		if (strncmp(base[i], "SPOTRUN_", 8) == 0 && strncmp(base[i], "SPOTRUN_FAULT", 13) != 0)
			continue;
		if (is_secret(base[i]))
			continue;
		if (strchr(base[i], '=') != NULL)
			env_set(e, sr_strdup(base[i]));
	}
	for (i = 0; js->env != NULL && js->env[i] != NULL; i++)
		env_set(e, sr_strdup(js->env[i]));
}

char **
sr_jobenv_setup(char *const *base, const struct sr_jobspec *js, const char *provider)
{
	struct envbuf e = { NULL, 0, 0 };

	add_base(&e, base, js);
	env_set(&e, sr_asprintf("SPOTRUN_JOB=%s", js->name));
	env_set(&e, sr_strdup("SPOTRUN_SETUP=1"));
	env_set(&e, sr_asprintf("SPOTRUN_PROVIDER=%s", provider));
	return e.v;
}

char **
sr_jobenv_build(char *const *base, const struct sr_jobspec *js, const struct sr_jobenv_vars *v,
    const struct sr_jobenv_proc *p)
{
	struct envbuf e = { NULL, 0, 0 };
	size_t i;

	add_base(&e, base, js);
	if (v->python_dir != NULL)
		add_python_path(&e, v->python_dir);
	env_set(&e, sr_asprintf("SPOTRUN_JOB=%s", js->name));
	env_set(&e, sr_asprintf("SPOTRUN_ATTEMPT=%d", v->attempt));
	env_set(&e, sr_asprintf("SPOTRUN_CKPT_DIR=%s", v->ckpt_dir));
	for (i = 0; v->method_env != NULL && v->method_env[i] != NULL; i++)
		env_set(&e, sr_strdup(v->method_env[i]));
	for (i = 0; p->method_env != NULL && p->method_env[i] != NULL; i++)
		env_set(&e, sr_strdup(p->method_env[i]));
	if (v->resume_step >= 0)
		env_set(&e, sr_asprintf("SPOTRUN_RESUME_STEP=%lld", v->resume_step));
	else
		env_set(&e, sr_strdup("SPOTRUN_RESUME_STEP="));
	env_set(&e, sr_strdup("SPOTRUN_DEADLINE=0"));
	env_set(&e, sr_asprintf("SPOTRUN_PROVIDER=%s", v->provider));
	/* The processes that answer a request, each with its own done
	 * marker: the ranks, or the one process of launch = once. */
	env_set(&e, sr_asprintf("SPOTRUN_WORLD_SIZE=%d", v->world_size > 0 ?
	    (v->nodes > 1 ? v->nodes : 1) * v->world_size : 1));
	/* The gang: which machine of how many (1 and 0 on one machine). */
	env_set(&e, sr_asprintf("SPOTRUN_NODES=%d", v->nodes > 1 ? v->nodes : 1));
	env_set(&e, sr_asprintf("SPOTRUN_NODE_RANK=%d", v->nodes > 1 ? v->node_rank : 0));
	if (v->prev_world_size > 0)
		env_set(&e, sr_asprintf("SPOTRUN_PREV_WORLD_SIZE=%d", v->prev_world_size));
	else
		env_set(&e, sr_strdup("SPOTRUN_PREV_WORLD_SIZE="));
	if (v->world_size > 0)
		add_ranks(&e, v, p);
	env_set(&e, sr_asprintf("SPOTRUN_METRICS=%s", v->metrics != NULL && p->rank == 0 &&
	    (v->nodes <= 1 || v->node_rank == 0) ? v->metrics : "/dev/null"));
	if (p->visible != NULL) {
		env_set(&e, sr_asprintf("CUDA_VISIBLE_DEVICES=%s", p->visible));
		if (v->pci_order)
			env_set(&e, sr_strdup("CUDA_DEVICE_ORDER=PCI_BUS_ID"));
	}
	return e.v;
}

void
sr_jobenv_free(char **env)
{
	size_t i;

	if (env == NULL)
		return;
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

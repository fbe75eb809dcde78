/*
 * t-jobspec.c: the job file parser and validator (runner/jobspec.c).
 *
 *  - bad input: a table of job files (inline text, or files in
 *    tests/jobspec/) and the exact error lines `spotrun check` prints for
 *    them, line numbers included; files with many errors must report all;
 *  - good input: the parsed values of tests/jobspec/good-*.ini (units,
 *    lists, ranges, defaults, argv splitting, shell = yes);
 *  - text: bytes that are not UTF-8 and control characters, with the place
 *    and byte offset of each; UTF-8 of every length and tabs accepted;
 *  - ranges: every numeric key over its maximum and with a huge number;
 *  - scale: 110,000 [env] keys (the duplicate check is linear).
 * The mutation fuzzer of the parser is tests/t-fuzz-jobspec.c.
 */
#include "config.h"

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobspec-int.h"
#include "util.h"
#include "tap.h"
#include "jobspec-util.h"

/* The smallest valid [job]: bad cases add their lines after it (line 4 on). */
#define JOB "[job]\nname = t\ncommand = true\n"
#define SECTIONS "[job], [env], [resources], [checkpoint], [provider], [retry], [sweep], [data]"
#define CKPT_KEYS "mode, interval, keep, store, local_dir, signal, write_timeout, " \
	"chunk_size, level, margin"
#define DUR "use a number with a unit s, m, h"
#define UTF8_FIX "a job file is UTF-8 text: save it as UTF-8, or remove the bytes"
#define CTL_FIX "remove it (a job file holds text and tabs, no other control character)"

struct bad_case {
	const char *text;	/* the job file; NULL: file is a path under tests/jobspec */
	const char *file;
	const char *want;	/* exactly what is printed, every line */
};

static const struct bad_case bad_cases[] = {
	/* Sections */
	{ JOB "[foo]\nx = 1\n", NULL,
	  "job.ini:4: unknown section [foo]; valid sections: " SECTIONS "\n" },
	{ JOB "[checkpoints]\ninterval = 5m\n", NULL,
	  "job.ini:4: unknown section [checkpoints]; did you mean [checkpoint]? Valid sections: "
	  SECTIONS "\n" },
	{ "[Job]\nname = t\ncommand = true\n", NULL,
	  "job.ini:1: unknown section [Job]; did you mean [job]? Valid sections: " SECTIONS "\n"
	  "job.ini: missing required key 'name' in [job]; add e.g. name = llama-lora\n"
	  "job.ini: missing required key 'command' in [job]; add e.g. command = python3 train.py\n" },
	{ JOB "[retry\nmax_restarts = 2\n", NULL,
	  "job.ini:4: section header [retry has no closing ']'\n" },
	{ JOB "[retry] max_restarts = 2\n", NULL,
	  "job.ini:4: text after the section header: max_restarts = 2; put comments after ';' or '#'\n" },
	{ JOB "[]\n", NULL,
	  "job.ini:4: empty section name []; valid sections: " SECTIONS "\n" },
	/* [data] */
	{ JOB "[data]\ndata/../x = s3://bkt/p/\n", NULL,
	  "job.ini:5: [data] data/../x: a destination cannot hold \"..\"; name the path without "
	  "it (e.g. data/train or /data/train)\n" },
	{ JOB "[data]\n./ = s3://bkt/p/\n/ = s3://bkt/p/\n", NULL,
	  "job.ini:5: [data] ./: names the working directory itself; name a folder or a file "
	  "inside it (e.g. data/train)\n"
	  "job.ini:6: [data] /: names the root itself; name a folder or a file inside it "
	  "(e.g. /data/train)\n" },
	{ JOB "[data]\ndata = s3://bkt/p/\n./data/ = s3://bkt/q/\n", NULL,
	  "job.ini:6: duplicate destination './data/' in [data] (first set on line 5); keep one\n" },
	{ JOB "[data]\ndata = s3://bkt/p/\ndata/x = s3://bkt/q\n", NULL,
	  "job.ini:6: [data] data/x: inside data (line 5); one destination cannot hold another: "
	  "copy the outer one alone, or put them side by side\n" },
	{ JOB "[data]\n.spotrun/x = s3://bkt/p/\n", NULL,
	  "job.ini:5: [data] .spotrun/x: inside the working directory's .spotrun/, which is "
	  "spotrun's own; choose another destination\n" },
	{ JOB "[checkpoint]\nlocal_dir = /scratch/ck\n[data]\n/scratch/ck/d = s3://bkt/p/\n", NULL,
	  "job.ini:7: [data] /scratch/ck/d: inside local_dir /scratch/ck, the job's checkpoint "
	  "copy; choose another destination\n" },
	{ JOB "[data]\nd = s3://b/p/\n", NULL,
	  "job.ini:5: [data] d = s3://b/p/: bucket \"b\": a bucket name has 3 to 63 characters\n" },
	{ JOB "[data]\nd = http://b/p/\n", NULL,
	  "job.ini:5: [data] d = http://b/p/: not a store URL; use file:///absolute/path, s3://bucket/prefix, gs://bucket/prefix or "
	  "az://account/container/prefix (a folder ends in '/')\n" },
	/* Keys */
	{ JOB "[checkpoint]\nintervall = 5m\n", NULL,
	  "job.ini:5: unknown key 'intervall' in [checkpoint]; did you mean 'interval'? "
	  "Valid keys: " CKPT_KEYS "\n" },
	{ JOB "[checkpoint]\nInterval = 5m\n", NULL,
	  "job.ini:5: unknown key 'Interval' in [checkpoint]; did you mean 'interval'? "
	  "Valid keys: " CKPT_KEYS "\n" },
	{ JOB "[retry]\nattempts = 3\n", NULL,
	  "job.ini:5: unknown key 'attempts' in [retry]; valid keys: max_restarts, "
	  "on_exit_codes, backoff, backoff_max\n" },
	{ JOB "gpus = 8\n", NULL,
	  "job.ini:4: unknown key 'gpus' in [job]; gpus belongs in [resources]\n" },
	{ "name = t\n[job]\nname = t\ncommand = true\n", NULL,
	  "job.ini:1: key 'name' is outside any section; put it under [job]\n" },
	{ "colour = blue\n" JOB, NULL,
	  "job.ini:1: key 'colour' is outside any section; put keys under a section header "
	  "such as [job]\n" },
	{ JOB "this is not a setting\n", NULL,
	  "job.ini:4: expected key = value or [section]: this is not a setting\n" },
	{ JOB "    --epochs 3\n", NULL,
	  "job.ini:4: expected key = value: --epochs 3 (a value cannot continue on an indented "
	  "line; put it on one line)\n" },
	{ JOB "= 5\n", NULL,
	  "job.ini:4: no key name before '='; write key = value\n" },
	{ JOB "name = u\n", NULL,
	  "job.ini:4: duplicate key 'name' in [job] (first set on line 2); keep one\n" },
	{ "[job]\ncommand = true\n", NULL,
	  "job.ini: missing required key 'name' in [job]; add e.g. name = llama-lora\n" },
	{ "[job]\nname = t\n", NULL,
	  "job.ini: missing required key 'command' in [job]; add e.g. command = python3 train.py\n" },
	{ "", NULL,
	  "job.ini: missing required key 'name' in [job]; add e.g. name = llama-lora\n"
	  "job.ini: missing required key 'command' in [job]; add e.g. command = python3 train.py\n" },
	/* [job] values */
	{ "[job]\nname = -t\ncommand = true\n", NULL,
	  "job.ini:2: name = -t: not a valid job name; use 1-64 letters, digits, '.', '_' or '-', "
	  "starting with a letter or digit (e.g. llama-lora)\n" },
	{ "[job]\nname = a2345678901234567890123456789012345678901234567890123456789012345\n"
	  "command = true\n", NULL,
	  "job.ini:2: name = a23456789012345678901234567890123456789012345678...: not a valid job "
	  "name; use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit "
	  "(e.g. llama-lora)\n" },
	{ "[job]\nname =\ncommand = true\n", NULL,
	  "job.ini:2: name has no value; use 1-64 letters, digits, '.', '_' or '-', starting with "
	  "a letter or digit (e.g. llama-lora)\n" },
	{ "[job]\nname = t\ncommand = python3 \"train.py --out /x\n", NULL,
	  "job.ini:3: command: unterminated double quote at character 9; close it, or write \\\" "
	  "for a literal quote\n" },
	{ "[job]\nname = t\ncommand = echo 'it\n", NULL,
	  "job.ini:3: command: unterminated single quote at character 6; close it, or write \\' "
	  "for a literal quote\n" },
	{ "[job]\nname = t\ncommand = run \\\n", NULL,
	  "job.ini:3: command: ends with a backslash; remove it, or write \\\\ for a literal "
	  "backslash\n" },
	{ "[job]\ncommand = train --out $SPOTRUN_CKPT_DIR\nname = t\n", NULL,
	  "job.ini:2: command: $SPOTRUN_CKPT_DIR is not expanded without a shell; set shell = yes, "
	  "or write '$SPOTRUN_CKPT_DIR' to pass it literally\n" },
	{ "[job]\nname = t\ncommand = python3 train.py > log\n", NULL,
	  "job.ini:3: command: '>' at character 18 means something only to a shell, and none runs "
	  "this command; set shell = yes, or quote it\n" },
	{ "[job]\nname = t\ncommand = '' x\n", NULL,
	  "job.ini:3: command = '' x: the program name is empty; give the program and its "
	  "arguments (e.g. python3 train.py --epochs 3)\n" },
	{ "[job]\nname = t\nshell = yes\ncommand = cd data ; ./run\n", NULL,
	  "job.ini:4: command = cd data: a ';' after a blank starts a comment in a job file, so "
	  "the shell would get only this; put no blank before ';' (e.g. cd data; ./run), or put "
	  "the comment on a line of its own\n" },
	{ "[job]\nname = t\ncommand = echo \"a ; b\"\n", NULL,
	  "job.ini:3: command: unterminated double quote at character 6; close it, or write \\\" "
	  "for a literal quote (note: a ';' after a blank starts a comment, which cut this line; "
	  "write \\; or ';' for a literal semicolon)\n" },
	{ JOB "setup =\n", NULL,
	  "job.ini:4: setup has no value; give a shell command run once per machine before the "
	  "job (e.g. pip install -r requirements.txt)\n" },
	{ JOB "setup = pip install -r requirements.txt ; ./fetch\n", NULL,
	  "job.ini:4: setup = pip install -r requirements.txt: a ';' after a blank starts a "
	  "comment in a job file, so the shell would get only this; put no blank before ';' "
	  "(e.g. pip install -r requirements.txt; ./fetch-data), or put the comment on a line "
	  "of its own\n" },
	{ JOB "shell = maybe\n", NULL,
	  "job.ini:4: shell = maybe: not a yes/no value; use yes or no (or true/false, on/off, "
	  "1/0)\n" },
	{ JOB "workdir = ~/runs\n", NULL,
	  "job.ini:4: workdir = ~/runs: ~ is not expanded; give an absolute path or one relative "
	  "to the job file\n" },
	/* [env] */
	{ JOB "[env]\n1FOO = x\n", NULL,
	  "job.ini:5: [env] 1FOO: not a valid variable name; use letters, digits and _, not "
	  "starting with a digit (e.g. DATA_DIR)\n" },
	{ JOB "[env]\nSPOTRUN_CKPT_DIR = /x\n", NULL,
	  "job.ini:5: [env] SPOTRUN_CKPT_DIR: names starting with SPOTRUN_ are reserved for "
	  "spotrun's own variables (SPOTRUN_PARAM_ excepted); rename it\n" },
	{ JOB "[env]\nA = 1\nB = 2\nA = 3\n", NULL,
	  "job.ini:7: duplicate key 'A' in [env] (first set on line 5); keep one\n" },
	/* [resources] */
	{ JOB "[resources]\ngpus = eight\n", NULL,
	  "job.ini:5: gpus = eight: not a GPU count; use a number from 0 to 64 or a range MIN-MAX "
	  "(e.g. 8 or 1-8)\n" },
	{ JOB "[resources]\ngpus = 128\n", NULL,
	  "job.ini:5: gpus = 128: too many; at most 64 GPUs\n" },
	{ JOB "[resources]\ngpus = 1-65\n", NULL,
	  "job.ini:5: gpus = 1-65: too many; at most 64 GPUs\n" },
	{ JOB "[resources]\ngpus = 8-1\n", NULL,
	  "job.ini:5: gpus = 8-1: the range is reversed; write MIN-MAX (e.g. 1-8)\n" },
	{ JOB "[resources]\ngpus = 1-\n", NULL,
	  "job.ini:5: gpus = 1-: not a GPU count; use a number from 0 to 64 or a range MIN-MAX "
	  "(e.g. 8 or 1-8)\n" },
	{ JOB "[resources]\ngpu_type =\n", NULL,
	  "job.ini:5: gpu_type has no value; give a GPU model (e.g. H100), or remove the line\n" },
	{ JOB "[resources]\nprocs = four\n", NULL,
	  "job.ini:5: procs = four: not a process count; use a number from 1 to 256 or a range "
	  "MIN-MAX (e.g. 4 or 2-8)\n" },
	{ JOB "[resources]\nprocs = 0\n", NULL,
	  "job.ini:5: procs = 0: out of range; use a number from 1 to 256 or a range MIN-MAX "
	  "(e.g. 4 or 2-8)\n" },
	{ JOB "[resources]\nprocs = 0-4\n", NULL,
	  "job.ini:5: procs = 0-4: out of range; use a number from 1 to 256 or a range MIN-MAX "
	  "(e.g. 4 or 2-8)\n" },
	{ JOB "[resources]\nprocs = 300\n", NULL,
	  "job.ini:5: procs = 300: too many; at most 256 processes\n" },
	{ JOB "[resources]\nprocs = 8-2\n", NULL,
	  "job.ini:5: procs = 8-2: the range is reversed; write MIN-MAX (e.g. 2-8)\n" },
	{ JOB "[resources]\nnodes = two\n", NULL,
	  "job.ini:5: nodes = two: not a node count; use a number from 1 to 64 or a range "
	  "MIN-MAX (e.g. 2 or 2-4)\n" },
	{ JOB "[resources]\nnodes = 0\n", NULL,
	  "job.ini:5: nodes = 0: out of range; use a number from 1 to 64 or a range MIN-MAX "
	  "(e.g. 2 or 2-4)\n" },
	{ JOB "[resources]\nnodes = 65\n", NULL,
	  "job.ini:5: nodes = 65: too many; at most 64 nodes\n" },
	{ JOB "[resources]\nnodes = 4-2\n", NULL,
	  "job.ini:5: nodes = 4-2: the range is reversed; write MIN-MAX (e.g. 2-4)\n" },
	{ JOB "[resources]\nlaunch = once\nnodes = 2\n", NULL,
	  "job.ini:6: nodes = 2 with launch = once: spotrun starts the ranks of every node of a "
	  "gang and gives them torchrun's variables; set launch = ranks, or remove nodes (one "
	  "machine)\n" },
	{ JOB "image = -v /:/host\n", NULL,
	  "job.ini:4: image = -v /:/host: not an image reference; give an image as docker or "
	  "podman name it, letters, digits and ._-/:@ (e.g. nvcr.io/nvidia/pytorch:24.05-py3)\n" },
	{ JOB "image = ubuntu 22.04\n", NULL,
	  "job.ini:4: image = ubuntu 22.04: not an image reference; give an image as docker or "
	  "podman name it, letters, digits and ._-/:@ (e.g. nvcr.io/nvidia/pytorch:24.05-py3)\n" },
	{ JOB "image = ubuntu:22.04\ncontainer_runtime = lxc\n", NULL,
	  "job.ini:5: container_runtime = lxc: not a container runtime; use auto, podman or "
	  "docker (e.g. podman)\n" },
	{ JOB "container_runtime = podman\n", NULL,
	  "job.ini:4: container_runtime = podman without image: it names the runtime that runs "
	  "the job's image; add image = REF to [job], or remove container_runtime\n" },
	{ JOB "[resources]\nlaunch = torchrun\n", NULL,
	  "job.ini:5: launch = torchrun: not a launch mode; use ranks or once (e.g. once, for a "
	  "job that runs torchrun itself)\n" },
	{ JOB "[resources]\nlaunch = once\nprocs = 4\n", NULL,
	  "job.ini:6: procs = 4 with launch = once: once starts one process, the job's own "
	  "launcher (torchrun, mpirun) starts the others; remove procs, or set launch = ranks to "
	  "have spotrun start them\n" },
	{ JOB "[resources]\nprocs = 2-4\ngpus = 1-8\n", NULL,
	  "job.ini:5: procs = 2-4 with gpus = 1-8: with GPUs spotrun starts one process per GPU; "
	  "remove procs (or set launch = once and start the processes yourself)\n" },
	/* [checkpoint] */
	{ JOB "[checkpoint]\nmode = Library\n", NULL,
	  "job.ini:5: mode = Library: not a checkpoint mode; use directory or library "
	  "(e.g. directory)\n" },
	{ JOB "[checkpoint]\nmode = transparent\n", NULL,
	  "job.ini:5: mode = transparent: not a checkpoint mode; use directory or library "
	  "(e.g. directory)\n" },
	{ JOB "[checkpoint]\nmode = files\n", NULL,
	  "job.ini:5: mode = files: not a checkpoint mode; use directory or library "
	  "(e.g. directory)\n" },
	{ JOB "[checkpoint]\ninterval = 20 minutes\n", NULL,
	  "job.ini:5: interval = 20 minutes: not a duration; " DUR " (e.g. 20m)\n" },
	{ JOB "[checkpoint]\ninterval = 20\n", NULL,
	  "job.ini:5: interval = 20: not a duration; " DUR " (e.g. 20m)\n" },
	{ JOB "[checkpoint]\ninterval = 30m1h\n", NULL,
	  "job.ini:5: interval = 30m1h: not a duration; " DUR " (e.g. 20m)\n" },
	{ JOB "[checkpoint]\ninterval = 500ms\n", NULL,
	  "job.ini:5: interval = 500ms: out of range; use 0 (off) or from 1s to 365d (e.g. 20m)\n" },
	{ JOB "[checkpoint]\ninterval = 400d\n", NULL,
	  "job.ini:5: interval = 400d: out of range; use 0 (off) or from 1s to 365d (e.g. 20m)\n" },
	{ JOB "[checkpoint]\ninterval =\n", NULL,
	  "job.ini:5: interval has no value; " DUR " (e.g. 20m)\n" },
	{ JOB "[checkpoint]\nkeep = 0\n", NULL,
	  "job.ini:5: keep = 0: out of range; use a whole number from 1 to 1000000 (e.g. 3)\n" },
	{ JOB "[checkpoint]\nkeep = three\n", NULL,
	  "job.ini:5: keep = three: not a whole number; use a whole number from 1 to 1000000 "
	  "(e.g. 3)\n" },
	{ JOB "[checkpoint]\nkeep = 99999999999999999999999\n", NULL,
	  "job.ini:5: keep = 99999999999999999999999: out of range; use a whole number from 1 to "
	  "1000000 (e.g. 3)\n" },
	{ JOB "[checkpoint]\nstore = s3://Bad_Bucket/runs\n", NULL,
	  "job.ini:5: store = s3://Bad_Bucket/runs: bucket \"Bad_Bucket\": a bucket name has "
	  "lowercase letters, digits, '.', '-' and '_' only\n" },
	{ JOB "[checkpoint]\nstore = gs://bucket/runs?part_size=1MiB\n", NULL,
	  "job.ini:5: store = gs://bucket/runs?part_size=1MiB: option part_size: want a size from "
	  "5MiB to 5GiB, e.g. part_size=16MiB\n" },
	{ JOB "[checkpoint]\nstore = s3://bucket/a//b\n", NULL,
	  "job.ini:5: store = s3://bucket/a//b: the prefix has an empty segment\n" },
	{ JOB "[checkpoint]\nstore = az://acct/c/p\n", NULL,
	  "job.ini:5: store = az://acct/c/p: container \"c\": a container name has 3 to 63 "
	  "characters\n" },
	{ JOB "[checkpoint]\nstore = az://acct/ckpt?block_size=64KiB\n", NULL,
	  "job.ini:5: store = az://acct/ckpt?block_size=64KiB: option block_size: want a size "
	  "from 1MiB to 4000MiB, e.g. block_size=16MiB\n" },
	{ JOB "[checkpoint]\nstore = az://\n", NULL,
	  "job.ini:5: store = az://: no account after az://; use az://account/container/prefix\n" },
	{ JOB "[checkpoint]\nstore = gs://\n", NULL,
	  "job.ini:5: store = gs://: no bucket after gs://; use gs://bucket/prefix\n" },
	{ JOB "[checkpoint]\nstore = runs/here\n", NULL,
	  "job.ini:5: store = runs/here: not a store URL; use an absolute path or "
	  "file:///absolute/path, s3://bucket/prefix, gs://bucket/prefix or "
	  "az://account/container/prefix (e.g. file:///srv/spotrun)\n" },
	{ JOB "[checkpoint]\nstore = http://example.com/x\n", NULL,
	  "job.ini:5: store = http://example.com/x: not a store URL; use an absolute path or "
	  "file:///absolute/path, s3://bucket/prefix, gs://bucket/prefix or "
	  "az://account/container/prefix (e.g. file:///srv/spotrun)\n" },
	{ JOB "[checkpoint]\nstore = file://host/x\n", NULL,
	  "job.ini:5: store = file://host/x: a file URL takes an absolute path and no host "
	  "(file:///absolute/path)\n" },
	{ JOB "[checkpoint]\nsignal = KILL\n", NULL,
	  "job.ini:5: signal = KILL: cannot be caught, so the job could not checkpoint; use USR1, "
	  "USR2, HUP, INT, QUIT, TERM, ALRM, WINCH or none (e.g. USR1)\n" },
	{ JOB "[checkpoint]\nsignal = 10\n", NULL,
	  "job.ini:5: signal = 10: not a signal the job can catch; use USR1, USR2, HUP, INT, QUIT, "
	  "TERM, ALRM, WINCH or none (e.g. USR1)\n" },
	{ JOB "[checkpoint]\nwrite_timeout = 0\n", NULL,
	  "job.ini:5: write_timeout = 0: out of range; use from 1s to 365d (e.g. 10m)\n" },
	{ JOB "[checkpoint]\nchunk_size = 512KiB\n", NULL,
	  "job.ini:5: chunk_size = 512KiB: out of range; use a size from 1MiB to 256MiB "
	  "(e.g. 16MiB)\n" },
	{ JOB "[checkpoint]\nchunk_size = 16 megs\n", NULL,
	  "job.ini:5: chunk_size = 16 megs: not a size; use a number with a unit KiB, MiB or GiB "
	  "(e.g. 64MiB)\n" },
	{ JOB "[checkpoint]\nchunk_size = 16M\n", NULL,
	  "job.ini:5: chunk_size = 16M: not a size; use a number with a unit KiB, MiB or GiB "
	  "(e.g. 64MiB)\n" },
	{ JOB "[checkpoint]\nlevel = 20\n", NULL,
	  "job.ini:5: level = 20: out of range; use a whole number from 1 to 19 (e.g. 1)\n" },
	{ JOB "[checkpoint]\nmargin = -5s\n", NULL,
	  "job.ini:5: margin = -5s: not a duration; " DUR " (e.g. 5s)\n" },
	/* [provider] */
	{ JOB "[provider]\nname = oracle\n", NULL,
	  "job.ini:5: name = oracle: not a provider; use auto, aws, azure, gcp, local or signal "
	  "(e.g. auto)\n" },
	{ JOB "[provider]\nname = kubernetes\n", NULL,
	  "job.ini:5: name = kubernetes: not a provider; use auto, aws, azure, gcp, local or signal "
	  "(e.g. auto)\n" },
	{ JOB "[provider]\nwindow = 1\n", NULL,
	  "job.ini:5: window = 1: not a duration; " DUR " (e.g. 30s)\n" },
	{ JOB "[provider]\nseed = -1\n", NULL,
	  "job.ini:5: seed = -1: out of range; use a whole number from 0 to "
	  "18446744073709551615 (e.g. 1)\n" },
	{ JOB "[provider]\nseed = 1e3\n", NULL,
	  "job.ini:5: seed = 1e3: not a whole number; use a whole number from 0 to "
	  "18446744073709551615 (e.g. 1)\n" },
	{ JOB "[provider]\nseed = 18446744073709551616\n", NULL,
	  "job.ini:5: seed = 18446744073709551616: out of range; use a whole number from 0 to "
	  "18446744073709551615 (e.g. 1)\n" },
	{ JOB "[provider]\ntrace_scale = 0\n", NULL,
	  "job.ini:5: trace_scale = 0: not a positive number; use a number greater than 0 "
	  "and at most 1000000 (e.g. 60 or 0.5)\n" },
	{ JOB "[provider]\ntrace_scale = inf\n", NULL,
	  "job.ini:5: trace_scale = inf: not a positive number; use a number greater than 0 "
	  "and at most 1000000 (e.g. 60 or 0.5)\n" },
	{ JOB "[provider]\ntrace_scale = -2\n", NULL,
	  "job.ini:5: trace_scale = -2: not a positive number; use a number greater than 0 "
	  "and at most 1000000 (e.g. 60 or 0.5)\n" },
	{ JOB "[provider]\ntrace_scale = 1e-400\n", NULL,
	  "job.ini:5: trace_scale = 1e-400: out of range; use a number greater than 0 "
	  "and at most 1000000 (e.g. 60 or 0.5)\n" },
	{ JOB "[provider]\npreemptions = -2\n", NULL,
	  "job.ini:5: preemptions = -2: out of range; use a whole number from 0 to 1000000, or "
	  "unlimited (e.g. 3)\n" },
	{ JOB "[provider]\npreemptions = many\n", NULL,
	  "job.ini:5: preemptions = many: not a count; use a whole number from 0 to 1000000, or "
	  "unlimited (e.g. 3)\n" },
	{ JOB "[provider]\nnotice_file =\n", NULL,
	  "job.ini:5: notice_file has no value; give a file, absolute or relative to the job file "
	  "(e.g. /tmp/preempt-now)\n" },
	/* the cloud providers' keys */
	{ JOB "[provider]\nname = aws\nendpoint = ftp://169.254.169.254\n", NULL,
	  "job.ini:6: endpoint = ftp://169.254.169.254: not a base URL; use http://HOST[:PORT] "
	  "or https://HOST[:PORT] (e.g. http://169.254.169.254)\n" },
	{ JOB "[provider]\nname = aws\nendpoint = 169.254.169.254\n", NULL,
	  "job.ini:6: endpoint = 169.254.169.254: not a base URL; use http://HOST[:PORT] "
	  "or https://HOST[:PORT] (e.g. http://169.254.169.254)\n" },
	{ JOB "[provider]\nname = gcp\nendpoint = http://[fd00:ec2::254\n", NULL,
	  "job.ini:6: endpoint = http://[fd00:ec2::254: not a base URL; use http://HOST[:PORT] "
	  "or https://HOST[:PORT] (e.g. http://169.254.169.254)\n" },
	{ JOB "[provider]\nname = azure\nendpoint = http://-x.internal\n", NULL,
	  "job.ini:6: endpoint = http://-x.internal: not a base URL; use http://HOST[:PORT] "
	  "or https://HOST[:PORT] (e.g. http://169.254.169.254)\n" },
	{ JOB "[provider]\nname = aws\nendpoint = http://127.0.0.1:\n", NULL,
	  "job.ini:6: endpoint = http://127.0.0.1:: not a base URL; use http://HOST[:PORT] "
	  "or https://HOST[:PORT] (e.g. http://169.254.169.254)\n" },
	{ JOB "[provider]\nname = aws\nendpoint = http://127.0.0.1:65536\n", NULL,
	  "job.ini:6: endpoint = http://127.0.0.1:65536: out of range; use a port from 1 to "
	  "65535 (e.g. http://127.0.0.1:8080)\n" },
	{ JOB "[provider]\nname = aws\nendpoint = http://169.254.169.254/latest/\n", NULL,
	  "job.ini:6: endpoint = http://169.254.169.254/latest/: a base URL has no path; spotrun "
	  "adds the metadata service's paths (e.g. http://169.254.169.254)\n" },
	{ JOB "[provider]\nendpoint = http://127.0.0.1:8080\n", NULL,
	  "job.ini:5: endpoint = http://127.0.0.1:8080: only for name = aws, gcp or azure (name "
	  "is auto); name the cloud whose metadata service it is, or remove endpoint\n" },
	{ JOB "[provider]\nendpoint = http://127.0.0.1:8080\nname = local\n", NULL,
	  "job.ini:5: endpoint = http://127.0.0.1:8080: only for name = aws, gcp or azure (name "
	  "is local); name the cloud whose metadata service it is, or remove endpoint\n" },
	{ JOB "[provider]\nname = aws\npoll = 10ms\n", NULL,
	  "job.ini:6: poll = 10ms: out of range; use from 50ms to 1h (e.g. 1s)\n" },
	{ JOB "[provider]\nname = azure\npoll = 2\n", NULL,
	  "job.ini:6: poll = 2: not a duration; " DUR " (e.g. 1s)\n" },
	{ JOB "[provider]\nname = gcp\npoll = 1s\n", NULL,
	  "job.ini:6: poll = 1s: only for name = aws, azure or auto (name is gcp, which "
	  "long-polls); remove poll\n" },
	{ JOB "[provider]\nname = signal\npoll = 1s\n", NULL,
	  "job.ini:6: poll = 1s: only for name = aws, azure or auto (name is signal); "
	  "remove poll\n" },
	{ JOB "[provider]\nname = local\nipv6 = yes\n", NULL,
	  "job.ini:6: ipv6 = yes: only for name = aws or auto (name is local); remove ipv6\n" },
	{ JOB "[provider]\nname = aws\nipv6 = on\nendpoint = http://[::1]:8080\n", NULL,
	  "job.ini:6: ipv6 = on and endpoint = http://[::1]:8080 both choose the address of the "
	  "metadata service; keep one\n" },
	{ JOB "[provider]\nipv6 = v6\n", NULL,
	  "job.ini:5: ipv6 = v6: not a yes/no value; use yes or no (or true/false, on/off, "
	  "1/0)\n" },
	{ JOB "[provider]\nearly_checkpoint = maybe\n", NULL,
	  "job.ini:5: early_checkpoint = maybe: not a yes/no value; use yes or no (or "
	  "true/false, on/off, 1/0)\n" },
	{ JOB "[provider]\nearly_checkpoint =\n", NULL,
	  "job.ini:5: early_checkpoint has no value; use yes or no (or true/false, on/off, "
	  "1/0)\n" },
	/* [retry] */
	{ JOB "[retry]\nmax_restarts = -1\n", NULL,
	  "job.ini:5: max_restarts = -1: out of range; use a whole number from 0 to 1000000 "
	  "(e.g. 10)\n" },
	{ JOB "[retry]\non_exit_codes = 1, 0\n", NULL,
	  "job.ini:5: on_exit_codes = 1, 0: 0 is out of range; use a comma-separated list of exit "
	  "codes from 1 to 255 (e.g. 1, 137)\n" },
	{ JOB "[retry]\non_exit_codes = 1,,2\n", NULL,
	  "job.ini:5: on_exit_codes = 1,,2: an item is empty; use a comma-separated list of exit "
	  "codes from 1 to 255 (e.g. 1, 137)\n" },
	{ JOB "[retry]\non_exit_codes = 1, segv\n", NULL,
	  "job.ini:5: on_exit_codes = 1, segv: segv is not an exit code; use a comma-separated "
	  "list of exit codes from 1 to 255 (e.g. 1, 137)\n" },
	{ JOB "[retry]\non_exit_codes = 137, 1, 137\n", NULL,
	  "job.ini:5: on_exit_codes = 137, 1, 137: 137 is listed twice\n" },
	{ JOB "[retry]\nbackoff = 10m\n", NULL,
	  "job.ini:5: backoff = 10m is longer than backoff_max (5m, the default); lower backoff "
	  "or set backoff_max\n" },
	{ JOB "[retry]\nbackoff_max = 100ms\n", NULL,
	  "job.ini:5: backoff_max = 100ms is shorter than backoff = 1s (the default); make "
	  "backoff_max at least backoff\n" },
	{ JOB "[retry]\nbackoff_max = 1m\nbackoff = 2m\n", NULL,
	  "job.ini:5: backoff_max = 1m is shorter than backoff = 2m; make backoff_max at least "
	  "backoff\n" },
	/* the notice window against the safety margin */
	{ JOB "[provider]\nname = local\nwindow = 5s\n", NULL,
	  "job.ini:6: window = 5.0s is not longer than margin = 5.0s (the default): a notice would "
	  "leave no time for a checkpoint; make window longer or lower margin in [checkpoint]\n" },
	{ JOB "[checkpoint]\nmargin = 40s\n[provider]\nname = local\n", NULL,
	  "job.ini:5: window = 30.0s is not longer than margin = 40.0s: a notice would leave no "
	  "time for a checkpoint; make window longer or lower margin in [checkpoint]\n" },
	{ JOB "[provider]\nname = signal\ngrace = 2s\n", NULL,
	  "job.ini:6: grace = 2.0s is not longer than margin = 5.0s (the default): a notice would "
	  "leave no time for a checkpoint; make grace longer or lower margin in [checkpoint]\n" },
	/* [sweep] */
	{ JOB "[sweep]\nlr =\n", NULL,
	  "job.ini:5: lr has no values; list them separated by commas (e.g. 1e-4, 3e-4) or give "
	  "a range (e.g. 1..3)\n" },
	{ JOB "[sweep]\nlr = 1e-4, , 1e-3\n", NULL,
	  "job.ini:5: lr = 1e-4, , 1e-3: an item is empty; list values separated by commas "
	  "(e.g. 1e-4, 3e-4)\n" },
	{ JOB "[sweep]\nseed = 3..1\n", NULL,
	  "job.ini:5: seed = 3..1: the range 3..1 is reversed; write LOW..HIGH (e.g. 1..3)\n" },
	{ JOB "[sweep]\nseed = 1..x\n", NULL,
	  "job.ini:5: seed = 1..x: 1..x is not an integer range; write LOW..HIGH with whole numbers "
	  "(e.g. 1..3), or list the values\n" },
	{ JOB "[sweep]\nseed = 1..20000\n", NULL,
	  "job.ini:5: seed = 1..20000: too many values; at most 10000 per parameter\n" },
	{ JOB "[sweep]\nlearning-rate = 1\n", NULL,
	  "job.ini:5: [sweep] learning-rate: not a valid parameter name; use 1-64 letters, digits "
	  "and _, not starting with a digit (e.g. lr)\n" },
	{ JOB "[sweep]\nlr = 1\nlr = 2\n", NULL,
	  "job.ini:6: duplicate key 'lr' in [sweep] (first set on line 5); keep one\n" },
	{ JOB "[sweep]\na = 1..100\nb = 1..100\nc = 1..100\n", NULL,
	  "job.ini:5: the sweep has 1000000 trials, more than 10000; split it into several job "
	  "files\n" },
	/* Text: UTF-8 only, no control character but tab (jobspec-text.c) */
	{ JOB "[env]\nA = \xff\xfe\n", NULL,
	  "job.ini:5: [env] A: invalid UTF-8 (0xff) at byte 5 of the line; " UTF8_FIX "\n" },
	{ JOB "[resources]\ngpu_type = \x01\x02\n", NULL,
	  "job.ini:5: gpu_type: control character 0x01 at byte 12 of the line; " CTL_FIX "\n" },
	{ JOB "[resources]\ngpu_type = H\x80\n", NULL,
	  "job.ini:5: gpu_type: invalid UTF-8 (0x80) at byte 13 of the line; " UTF8_FIX "\n" },
	{ JOB "[env]\nA = caf\xe9" "s\n", NULL,
	  "job.ini:5: [env] A: an incomplete UTF-8 sequence (0xe9) at byte 8 of the line; "
	  UTF8_FIX "\n" },
	{ JOB "[env]\nA = \xe2\x82\n", NULL,
	  "job.ini:5: [env] A: an incomplete UTF-8 sequence (0xe2 0x82) at byte 5 of the line; "
	  UTF8_FIX "\n" },
	{ JOB "[env]\nA = \xc0\xaf\n", NULL,
	  "job.ini:5: [env] A: an overlong UTF-8 sequence (0xc0 0xaf) at byte 5 of the line; "
	  UTF8_FIX "\n" },
	{ JOB "[env]\nA = \xe0\x80\xaf\n", NULL,
	  "job.ini:5: [env] A: an overlong UTF-8 sequence (0xe0 0x80 0xaf) at byte 5 of the line; "
	  UTF8_FIX "\n" },
	{ JOB "[env]\nA = \xf0\x80\x80\xaf\n", NULL,
	  "job.ini:5: [env] A: an overlong UTF-8 sequence (0xf0 0x80 0x80 0xaf) at byte 5 of the "
	  "line; " UTF8_FIX "\n" },
	{ JOB "[env]\nA = \xed\xa0\x80\n", NULL,
	  "job.ini:5: [env] A: a UTF-16 surrogate encoded as UTF-8 (0xed 0xa0 0x80) at byte 5 of "
	  "the line; " UTF8_FIX "\n" },
	{ JOB "[env]\nA = \xf4\x90\x80\x80\n", NULL,
	  "job.ini:5: [env] A: a UTF-8 sequence beyond U+10FFFF (0xf4 0x90 0x80 0x80) at byte 5 of "
	  "the line; " UTF8_FIX "\n" },
	{ JOB "[env]\nA = \xf5\x80\x80\x80\n", NULL,
	  "job.ini:5: [env] A: invalid UTF-8 (0xf5) at byte 5 of the line; " UTF8_FIX "\n" },
	{ JOB "[env]\nA = a\x1b[31mred\n", NULL,
	  "job.ini:5: [env] A: control character 0x1b at byte 6 of the line; " CTL_FIX "\n" },
	{ JOB "[env]\nA = a\x7f\n", NULL,
	  "job.ini:5: [env] A: control character DEL (0x7f) at byte 6 of the line; " CTL_FIX "\n" },
	{ JOB "[env]\nA = a\xc2\x9b" "31m\n", NULL,
	  "job.ini:5: [env] A: control character U+009B at byte 6 of the line; " CTL_FIX "\n" },
	{ JOB "[env]\nA = a\rb\n", NULL,
	  "job.ini:5: [env] A: control character 0x0d at byte 6 of the line; " CTL_FIX "\n" },
	{ JOB "\f[env]\nA = 1\n", NULL,
	  "job.ini:4: the indentation: control character 0x0c at byte 1 of the line; " CTL_FIX
	  "\n" },
	{ "[job]\nname = t\x01\ncommand = true\n", NULL,
	  "job.ini:2: name: control character 0x01 at byte 9 of the line; " CTL_FIX "\n" },
	{ "[job]\nname = t\ncommand = echo \xff\n", NULL,
	  "job.ini:3: command: invalid UTF-8 (0xff) at byte 16 of the line; " UTF8_FIX "\n" },
	{ JOB "[sweep]\nlr = 1, \xff\n", NULL,
	  "job.ini:5: [sweep] lr: invalid UTF-8 (0xff) at byte 9 of the line; " UTF8_FIX "\n" },
	{ JOB "[env]\nA\xc3\x28 = 1\n", NULL,
	  "job.ini:5: the key name: an incomplete UTF-8 sequence (0xc3) at byte 2 of the line; "
	  UTF8_FIX "\n" },
	{ JOB "[ch\xe9" "ckpoint]\nkeep = x\n", NULL,
	  "job.ini:4: the section header: an incomplete UTF-8 sequence (0xe9) at byte 4 of the "
	  "line; " UTF8_FIX "\n" },
	{ JOB "; caf\xe9\n", NULL,
	  "job.ini:4: a comment: an incomplete UTF-8 sequence (0xe9) at byte 6 of the line; "
	  UTF8_FIX "\n" },
	{ JOB "[env] ; \x07\nA = 1\nA = 2\n", NULL,
	  "job.ini:4: a comment: control character 0x07 at byte 9 of the line; " CTL_FIX "\n"
	  "job.ini:6: duplicate key 'A' in [env] (first set on line 5); keep one\n" },
	{ JOB "[checkpoint]\nkeep = 0 ; \xff\n", NULL,
	  "job.ini:5: a comment: invalid UTF-8 (0xff) at byte 12 of the line; " UTF8_FIX "\n"
	  "job.ini:5: keep = 0: out of range; use a whole number from 1 to 1000000 (e.g. 3)\n" },
	{ JOB "[checkpoint]\nkeep = \x01\nkeep = 2\n", NULL,
	  "job.ini:5: keep: control character 0x01 at byte 8 of the line; " CTL_FIX "\n"
	  "job.ini:6: duplicate key 'keep' in [checkpoint] (first set on line 5); keep one\n" },
	/* Whole files */
	{ NULL, "bad-text.ini",
	  "bad-text.ini:4: name: invalid UTF-8 (0xff) at byte 8 of the line; " UTF8_FIX "\n"
	  "bad-text.ini:7: [env] LATIN1: an incomplete UTF-8 sequence (0xe9) at byte 13 of the "
	  "line; " UTF8_FIX "\n"
	  "bad-text.ini:8: [env] ESCAPE: control character 0x1b at byte 10 of the line; "
	  CTL_FIX "\n"
	  "bad-text.ini:9: [env] OVERLONG: an overlong UTF-8 sequence (0xc0 0xaf) at byte 12 of "
	  "the line; " UTF8_FIX "\n"
	  "bad-text.ini:10: [env] SURROGATE: a UTF-16 surrogate encoded as UTF-8 (0xed 0xb2 0x80) "
	  "at byte 13 of the line; " UTF8_FIX "\n"
	  "bad-text.ini:12: gpu_type: control character 0x01 at byte 12 of the line; "
	  CTL_FIX "\n"
	  "bad-text.ini:13: a comment: control character DEL (0x7f) at byte 2 of the line; "
	  CTL_FIX "\n" },
	{ NULL, "bad-sweep.ini",
	  "bad-sweep.ini:4: command: ${depth} is not a parameter of [sweep] (lr); write $${depth} "
	  "for a literal ${depth}\n"
	  "bad-sweep.ini:6: [env] RUN: ${run} is not a parameter of [sweep] (lr); write $${run} "
	  "for a literal ${run}\n"
	  "bad-sweep.ini:7: [env] SPOTRUN_PARAM_LR: the sweep's parameter lr (line 10) sets it in "
	  "every trial; remove it here\n"
	  "bad-sweep.ini:8: [env] SPOTRUN_ENV: names starting with SPOTRUN_ are reserved for "
	  "spotrun's own variables (SPOTRUN_PARAM_ excepted); rename it\n"
	  "bad-sweep.ini:11: [sweep] LR: lr (line 10) differs only in case, and both would be "
	  "SPOTRUN_PARAM_LR in the job's environment; rename one\n"
	  "bad-sweep.ini:12: layers = 1..99999999999: the range 1..99999999999 is out of range; "
	  "use bounds from -1000000000 to 1000000000\n"
	  "bad-sweep.ini:13: warmup = 10,;20: a value cannot start with ';'; quote it where it is "
	  "used, or drop the ';'\n" },
	{ NULL, "bad-multi.ini",
	  "bad-multi.ini:4: name = bad name: not a valid job name; use 1-64 letters, digits, '.', "
	  "'_' or '-', starting with a letter or digit (e.g. llama-lora)\n"
	  "bad-multi.ini:5: shell = perhaps: not a yes/no value; use yes or no (or true/false, "
	  "on/off, 1/0)\n"
	  "bad-multi.ini:8: [env] 2FAST: not a valid variable name; use letters, digits and _, "
	  "not starting with a digit (e.g. DATA_DIR)\n"
	  "bad-multi.ini:9: [env] SPOTRUN_JOB: names starting with SPOTRUN_ are reserved for "
	  "spotrun's own variables (SPOTRUN_PARAM_ excepted); rename it\n"
	  "bad-multi.ini:12: gpus = 9-2: the range is reversed; write MIN-MAX (e.g. 2-9)\n"
	  "bad-multi.ini:15: mode = transparent: not a checkpoint mode; use directory or library "
	  "(e.g. directory)\n"
	  "bad-multi.ini:16: interval = 20 minutes: not a duration; " DUR " (e.g. 20m)\n"
	  "bad-multi.ini:17: keep = 0: out of range; use a whole number from 1 to 1000000 "
	  "(e.g. 3)\n"
	  "bad-multi.ini:18: unknown key 'intervall' in [checkpoint]; did you mean 'interval'? "
	  "Valid keys: " CKPT_KEYS "\n"
	  "bad-multi.ini:19: store = s3://bucket/runs?colour=red: option colour: unknown (known: "
	  "endpoint, region, profile, part_size, concurrency, checksum, md5, attempts, stall_timeout)\n"
	  "bad-multi.ini:20: chunk_size = 1GiB: out of range; use a size from 1MiB to 256MiB "
	  "(e.g. 16MiB)\n"
	  "bad-multi.ini:23: name = oracle: not a provider; use auto, aws, azure, gcp, local or "
	  "signal (e.g. auto)\n"
	  "bad-multi.ini:24: seed = -3: out of range; use a whole number from 0 to "
	  "18446744073709551615 (e.g. 1)\n"
	  "bad-multi.ini:27: on_exit_codes = 1, 300: 300 is out of range; use a comma-separated "
	  "list of exit codes from 1 to 255 (e.g. 1, 137)\n"
	  "bad-multi.ini:28: backoff = 10m is longer than backoff_max (5m, the default); lower "
	  "backoff or set backoff_max\n"
	  "bad-multi.ini:31: lr = 1e-4,, 1e-3: an item is empty; list values separated by commas "
	  "(e.g. 1e-4, 3e-4)\n"
	  "bad-multi.ini:32: seed = 5..1: the range 5..1 is reversed; write LOW..HIGH "
	  "(e.g. 1..5)\n"
	  "bad-multi.ini:34: unknown section [extra]; valid sections: " SECTIONS "\n"
	  "bad-multi.ini: missing required key 'command' in [job]; add e.g. "
	  "command = python3 train.py\n" },
	{ NULL, "bad-syntax.ini",
	  "bad-syntax.ini:2: key 'stray' is outside any section; put keys under a section header "
	  "such as [job]\n"
	  "bad-syntax.ini:3: section header [job has no closing ']'\n"
	  "bad-syntax.ini:6: expected key = value or [section]: this line has no equals sign\n"
	  "bad-syntax.ini:8: expected key = value: --epochs 3 (a value cannot continue on an "
	  "indented line; put it on one line)\n"
	  "bad-syntax.ini:9: no key name before '='; write key = value\n"
	  "bad-syntax.ini:10: text after the section header: trailing; put comments after ';' or '#'\n"
	  "bad-syntax.ini:12: empty section name []; valid sections: " SECTIONS "\n"
	  "bad-syntax.ini:16: duplicate key 'max_restarts' in [retry] (first set on line 15); "
	  "keep one\n" },
};

static char tmpdir[] = "/tmp/t-jobspec.XXXXXX";
static char datadir[PATH_MAX];

static void
write_text(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fwrite(text, 1, len, f) != len || fclose(f) != 0)
		sr_fatal("write %s", path);
}

static void
write_str(const char *path, const char *text)
{
	write_text(path, text, strlen(text));
}

/* Load path; *printed gets exactly what `spotrun check` would print. */
static int
load(const char *path, struct sr_jobspec **js, char **printed)
{
	struct sr_jobspec_errors errs = { NULL, 0 };
	size_t len;
	FILE *mem = open_memstream(printed, &len);
	int r;

	r = sr_jobspec_load(path, runner_names(), js, &errs);
	sr_jobspec_errors_print(path, &errs, mem);
	fclose(mem);
	if (r == 0 && errs.n != 0)
		tap_diag("load %s: returned 0 with %zu errors", path, errs.n);
	sr_jobspec_errors_free(&errs);
	return r;
}

static void
test_bad(void)
{
	struct sr_jobspec *js;
	char *printed, label[60];
	size_t i;
	int r;

	for (i = 0; i < SR_ARRAY_LEN(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];

		if (c->text != NULL) {
			write_str("job.ini", c->text);
			r = load("job.ini", &js, &printed);
			snprintf(label, sizeof label, "bad case %zu", i + 1);
		} else {
			if (chdir(datadir) == -1)
				sr_fatal("chdir %s", datadir);
			r = load(c->file, &js, &printed);
			if (chdir(tmpdir) == -1)
				sr_fatal("chdir %s", tmpdir);
			snprintf(label, sizeof label, "%s", c->file);
		}
		ok(r == -1 && js == NULL, "%s: rejected", label);
		is_str(printed, c->want, "%s: exact messages", label);
		free(printed);
	}
}

/* Inputs a text table cannot hold: NUL bytes, huge lines, no file. */
static void
test_bad_special(void)
{
	struct sr_jobspec *js;
	char *printed, *big, want[300];
	size_t n;

	write_text("job.ini", JOB "gpu\0_type = x\n", sizeof JOB - 1 + 14);
	ok(load("job.ini", &js, &printed) == -1, "NUL byte: rejected");
	is_str(printed, "job.ini:4: the line contains a NUL byte; a job file is text\n",
	    "NUL byte: exact message");
	free(printed);

	n = 70000;
	big = sr_malloc(sizeof JOB + n + 40);
	memcpy(big, JOB "[env]\nX = ", sizeof JOB - 1 + 10);
	memset(big + sizeof JOB - 1 + 10, 'x', n);
	memcpy(big + sizeof JOB - 1 + 10 + n, "\nY = 1\nY = 2\n", 13);
	write_text("job.ini", big, sizeof JOB - 1 + 10 + n + 13);
	ok(load("job.ini", &js, &printed) == -1, "70000-character line: rejected");
	is_str(printed, "job.ini:5: the line is longer than 65536 characters\n"
	    "job.ini:7: duplicate key 'Y' in [env] (first set on line 6); keep one\n",
	    "70000-character line: exact message, and the lines after it are counted right");
	free(printed);

	/* Just under the limit: accepted whole. */
	n = 65536 - 4;
	memcpy(big, JOB "[env]\nX = ", sizeof JOB - 1 + 10);
	memset(big + sizeof JOB - 1 + 10, 'y', n);
	memcpy(big + sizeof JOB - 1 + 10 + n, "\n", 1);
	write_text("job.ini", big, sizeof JOB - 1 + 10 + n + 1);
	if (ok(load("job.ini", &js, &printed) == 0, "65536-character line: accepted")) {
		ok(strlen(js->env[0]) == 2 + n && js->env[0][2 + n - 1] == 'y',
		    "65536-character line: the whole value is kept");
		sr_jobspec_free(js);
	}
	free(printed);
	free(big);

	/* A file of more than 1 MiB. */
	big = sr_calloc(1, 1024 * 1024 + 1);
	memset(big, '\n', 1024 * 1024 + 1);
	write_text("big.ini", big, 1024 * 1024 + 1);
	ok(load("big.ini", &js, &printed) == -1, "file over 1 MiB: rejected");
	is_str(printed, "big.ini: larger than 1048576 bytes; a job file is a short text file\n",
	    "file over 1 MiB: exact message");
	free(printed);
	free(big);

	ok(load("missing.ini", &js, &printed) == -1, "missing file: rejected");
	is_str(printed, "missing.ini: cannot open: No such file or directory\n",
	    "missing file: exact message");
	free(printed);

	ok(load(".", &js, &printed) == -1, "directory: rejected");
	is_str(printed, ".: is a directory, not a regular file; a job file is a short text file\n",
	    "directory: exact message");
	free(printed);

	if (geteuid() != 0) {
		write_str("secret.ini", JOB);
		chmod("secret.ini", 0);
		ok(load("secret.ini", &js, &printed) == -1, "unreadable file: rejected");
		is_str(printed, "secret.ini: cannot open: Permission denied\n",
		    "unreadable file: exact message");
		free(printed);
	} else {
		ok(1, "# SKIP unreadable file: running as root");
		ok(1, "# SKIP unreadable file: running as root");
	}

	/* More than 100 errors: the first 99, then a count of the rest. */
	big = sr_malloc(300 * 8 + 1);
	big[0] = '\0';
	for (n = 0; n < 300; n++)
		strcat(big, "[nope]\n");
	write_str("job.ini", big);
	ok(load("job.ini", &js, &printed) == -1, "300 errors: rejected");
	snprintf(want, sizeof want, "job.ini:99: unknown section [nope]; valid sections: "
	    SECTIONS "\njob.ini: too many errors (203 more not shown); fix these first\n");
	n = strlen(printed) >= strlen(want) ? strlen(printed) - strlen(want) : 0;
	is_str(printed + n, want, "300 errors: capped at 100 lines, ending with the count");
	n = 0;
	for (char *s = printed; (s = strchr(s, '\n')) != NULL; s++)
		n++;
	is_int(n, 100, "300 errors: 100 lines printed");
	free(printed);
	free(big);
}

static struct sr_jobspec *
load_good(const char *path)
{
	struct sr_jobspec *js = NULL;
	char *printed;

	if (!ok(load(path, &js, &printed) == 0 && js != NULL, "%s: accepted", path))
		tap_diag("%s", printed);
	free(printed);
	return js;
}

static void
test_good_full(void)
{
	struct sr_jobspec *js;
	char want[PATH_MAX + 100];
	static const char *const argv[] = {
		"python3", "train.py", "--data", "/data/my set", "--tag", "a b", "--esc", "a b",
		"--quote", "say \"hi\"", "", NULL
	};
	size_t i;

	if (chdir(datadir) == -1)
		sr_fatal("chdir %s", datadir);
	js = load_good("good-full.ini");
	if (chdir(tmpdir) == -1)
		sr_fatal("chdir %s", tmpdir);
	if (js == NULL)
		return;
	is_str(js->path, "good-full.ini", "path as given");
	is_str(js->dir, datadir, "dir: the job file's absolute directory");
	is_str(js->name, "full_job-1.0", "name");
	is_str(js->command, "python3 train.py --data \"/data/my set\" --tag 'a b' --esc a\\ b "
	    "--quote \"say \\\"hi\\\"\" ''", "command: as written");
	for (i = 0; argv[i] != NULL && js->argv[i] != NULL; i++)
		is_str(js->argv[i], argv[i], "argv[%zu]", i);
	ok(argv[i] == NULL && js->argv[i] == NULL, "argv: %zu words, NULL-terminated", i);
	is_int(js->shell, 0, "shell = off");
	snprintf(want, sizeof want, "%s/sub/deeper", datadir);
	is_str(js->workdir, want, "workdir: relative to the job file, tidied");
	is_str(js->env[0], "DATA_DIR=/data", "env[0]");
	is_str(js->env[1], "EMPTY=", "env[1]: empty value");
	is_str(js->env[2], "_UNDER=a = b", "env[2]: '=' in the value, inline comment dropped");
	ok(js->env[3] == NULL, "env: 3 entries");
	is_int(js->gpus_min, 1, "gpus 1-8: min");
	is_int(js->gpus_max, 8, "gpus 1-8: max");
	is_str(js->gpu_type, "H100", "gpu_type");
	ok(js->procs_min == 1 && js->procs_max == 1, "procs = 1");
	ok(js->nodes_min == 1 && js->nodes_max == 1, "default nodes: 1");
	is_int(js->launch, SR_LAUNCH_ONCE, "launch = once");
	is_str(js->image, "registry.example:5000/team/train:24.05-py3@sha256:0123abcd",
	    "image: a registry with a port, a tag and a digest");
	is_int(js->container_runtime, SR_CONTAINER_DOCKER, "container_runtime = docker");
	is_str(js->mode, "directory", "mode");
	ok(js->interval == 5400, "interval = 1h30m is 5400 s");
	is_int(js->ckpt.keep, 5, "keep");
	is_str(js->store, "file:///srv/spotrun", "store: file URL tidied");
	is_str(js->local_dir, "/scratch/ckpt", "local_dir");
	is_int(js->request_signal, SIGUSR2, "signal = SIGUSR2");
	ok(js->write_timeout == 90, "write_timeout = 90s");
	is_int(js->ckpt.chunk_size, 64 << 20, "chunk_size = 64MiB");
	is_int(js->ckpt.level, 19, "level");
	ok(js->margin == 0.25, "margin = 250ms");
	is_str(js->provider.name, "local", "provider");
	ok(js->provider.window == 45, "window");
	ok(js->provider.grace == 120, "grace = 2m");
	ok(js->provider.after == 5400, "after = 1.5h");
	ok(js->provider.random_mean == 172800, "random_mean = 2d");
	ok(js->provider.seed == UINT64_MAX, "seed: the largest uint64");
	snprintf(want, sizeof want, "%s/notices/now", datadir);
	is_str(js->provider.notice_file, want, "notice_file: made absolute");
	snprintf(want, sizeof want, "%s/../traces/spot.json", datadir);
	is_str(js->provider.trace, want, "trace: made absolute, .. kept");
	ok(js->provider.trace_scale == 0.5, "trace_scale");
	ok(js->provider.trace_start == 10800, "trace_start = 3h");
	is_int(js->provider.max_preemptions, -1, "preemptions = unlimited");
	is_int(js->max_restarts, 10, "max_restarts");
	is_int(js->n_on_exit_codes, 3, "on_exit_codes: 3 codes");
	if (js->n_on_exit_codes == 3)
		ok(js->on_exit_codes[0] == 1 && js->on_exit_codes[1] == 137 &&
		    js->on_exit_codes[2] == 255, "on_exit_codes = 1, 137, 255");
	ok(js->backoff == 2, "backoff");
	ok(js->backoff_max == 600, "backoff_max");
	is_int(js->nsweep, 3, "sweep: 3 parameters");
	if (js->nsweep == 3) {
		is_str(js->sweep[0].key, "lr", "sweep[0] key");
		is_int(js->sweep[0].line, 54, "sweep[0] line");
		is_int(js->sweep[0].nvalues, 3, "lr: 3 values");
		is_str(js->sweep[0].values[1], "3e-4", "lr: values trimmed");
		is_int(js->sweep[1].nvalues, 3, "seed = 1..3: 3 values");
		is_str(js->sweep[1].values[0], "1", "seed[0]");
		is_str(js->sweep[1].values[2], "3", "seed[2]");
		is_int(js->sweep[2].nvalues, 5, "mix = -1..1, x y, 7: 5 values");
		is_str(js->sweep[2].values[0], "-1", "mix[0]: negative range");
		is_str(js->sweep[2].values[3], "x y", "mix[3]: a value with a blank");
		is_str(js->sweep[2].values[4], "7", "mix[4]");
	}
	sr_jobspec_free(js);
}

static void
test_good_defaults(void)
{
	struct sr_jobspec *js;
	char want[PATH_MAX + 100];

	if (chdir(datadir) == -1)
		sr_fatal("chdir %s", datadir);
	js = load_good("good-minimal.ini");
	if (chdir(tmpdir) == -1)
		sr_fatal("chdir %s", tmpdir);
	if (js == NULL)
		return;
	is_str(js->argv[0], "./run.sh", "argv[0]");
	ok(js->argv[1] == NULL, "argv: one word");
	is_int(js->shell, 0, "default shell = no");
	is_str(js->workdir, datadir, "default workdir: the job file's directory");
	ok(js->env != NULL && js->env[0] == NULL, "default env: empty, NULL-terminated");
	ok(js->gpus_min == 0 && js->gpus_max == 0, "default gpus: 0");
	ok(js->procs_min == 0 && js->procs_max == 0, "default procs: not set");
	ok(js->nodes_min == 1 && js->nodes_max == 1, "default nodes: 1-1 (one machine)");
	is_int(js->launch, SR_LAUNCH_RANKS, "default launch: ranks");
	ok(js->gpu_type == NULL, "default gpu_type: none");
	ok(js->setup == NULL, "default setup: none");
	ok(js->image == NULL, "default image: none (no container)");
	is_int(js->container_runtime, SR_CONTAINER_AUTO, "default container_runtime: auto");
	is_str(js->mode, "directory", "default mode: directory");
	ok(js->interval == 0, "default interval: 0 (off)");
	is_int(js->ckpt.keep, 3, "default keep: 3");
	is_str(js->store, "file:///xdg/data/spotrun", "default store: $XDG_DATA_HOME/spotrun");
	snprintf(want, sizeof want, "%s/.spotrun/minimal", datadir);
	is_str(js->local_dir, want, "default local_dir: <workdir>/.spotrun/<name>");
	is_int(js->request_signal, SIGUSR1, "default signal: USR1");
	ok(js->write_timeout == 600, "default write_timeout: 10m");
	is_int(js->ckpt.chunk_size, 0, "default chunk_size: 0, the save chooses");
	is_int(js->ckpt.level, 1, "default level: 1");
	ok(js->margin == 5, "default margin: 5s");
	is_str(js->provider.name, "auto", "default provider: auto");
	ok(js->provider.window == 30 && js->provider.grace == 30, "default window and grace: 30s");
	ok(js->provider.after == 0 && js->provider.random_mean == 0,
	    "default after, random_mean: off");
	ok(js->provider.seed == 1, "default seed: 1");
	ok(js->provider.notice_file == NULL && js->provider.trace == NULL,
	    "default notice_file, trace: none");
	ok(js->provider.trace_scale == 1 && js->provider.trace_start == 0,
	    "default trace_scale 1, trace_start 0");
	is_int(js->provider.max_preemptions, -1, "default preemptions: unlimited");
	ok(js->provider.endpoint == NULL,
	    "default endpoint: none (the provider's own, or its env)");
	ok(js->provider.poll == 0, "default poll: 0 (the provider's default)");
	is_int(js->provider.ipv6, 0, "default ipv6: no");
	is_int(js->early_checkpoint, 1, "default early_checkpoint: yes");
	is_int(js->max_restarts, 0, "default max_restarts: 0");
	ok(js->n_on_exit_codes == 0 && js->on_exit_codes == NULL, "default on_exit_codes: any");
	ok(js->backoff == 1 && js->backoff_max == 300, "default backoff 1s, backoff_max 5m");
	ok(js->nsweep == 0 && js->sweep == NULL, "default sweep: none");
	sr_jobspec_free(js);

	/* XDG_DATA_HOME unset, or relative (to be ignored): $HOME/.local/share. */
	unsetenv("XDG_DATA_HOME");
	setenv("HOME", "/home/u", 1);
	write_str("job.ini", JOB);
	if ((js = load_good("job.ini")) != NULL)
		is_str(js->store, "file:///home/u/.local/share/spotrun", "store without XDG_DATA_HOME");
	sr_jobspec_free(js);
	setenv("XDG_DATA_HOME", "rel/data", 1);
	if ((js = load_good("job.ini")) != NULL)
		is_str(js->store, "file:///home/u/.local/share/spotrun", "relative XDG_DATA_HOME ignored");
	sr_jobspec_free(js);
	setenv("XDG_DATA_HOME", "/xdg/data", 1);

	/* local_dir follows workdir. */
	write_str("job.ini", JOB "workdir = /w\n");
	if ((js = load_good("job.ini")) != NULL) {
		is_str(js->workdir, "/w", "workdir absolute");
		is_str(js->local_dir, "/w/.spotrun/t", "local_dir under workdir");
	}
	sr_jobspec_free(js);
	write_str("job.ini", JOB "workdir = /\n[checkpoint]\nstore = /\n");
	if ((js = load_good("job.ini")) != NULL) {
		is_str(js->local_dir, "/.spotrun/t", "local_dir under workdir /");
		is_str(js->store, "file:///", "store = /");
	}
	sr_jobspec_free(js);
	/* object stores are kept as written; nothing is contacted to check them */
	write_str("job.ini", JOB "[checkpoint]\nstore = s3://my-bucket/runs/a?endpoint="
	    "http://127.0.0.1:1&part_size=32MiB\n");
	if ((js = load_good("job.ini")) != NULL)
		is_str(js->store, "s3://my-bucket/runs/a?endpoint=http://127.0.0.1:1&part_size=32MiB",
		    "store = s3://... kept verbatim");
	sr_jobspec_free(js);
	write_str("job.ini", JOB "[checkpoint]\nstore = gs://my-bucket\n");
	if ((js = load_good("job.ini")) != NULL)
		is_str(js->store, "gs://my-bucket", "store = gs://bucket");
	sr_jobspec_free(js);
}

static void
test_good_other(void)
{
	struct sr_jobspec *js;

	if (chdir(datadir) == -1)
		sr_fatal("chdir %s", datadir);
	js = load_good("good-shell.ini");
	if (js != NULL) {
		is_int(js->shell, 1, "shell = yes");
		is_str(js->argv[0], "/bin/sh", "shell argv[0]");
		is_str(js->argv[1], "-c", "shell argv[1]");
		is_str(js->argv[2], "echo $$ > pid;exec python3 train.py \"$@\" | tee log",
		    "shell argv[2]: the command untouched");
		ok(js->argv[3] == NULL, "shell argv: 3 words");
		is_int(js->request_signal, 0, "signal = none");
		is_str(js->workdir, "/", "workdir = /");
	}
	sr_jobspec_free(js);

	/* library mode (lib/libspotrun.h, runner/method-lib.c) */
	if (chdir(tmpdir) == -1)
		sr_fatal("chdir %s", tmpdir);
	/* setup: the shell's to parse, whatever shell = says */
	write_str("job.ini", JOB "setup = pip install -r \"req s.txt\" > log;python3 -c 'x'\n");
	js = load_good("job.ini");
	if (js != NULL)
		is_str(js->setup, "pip install -r \"req s.txt\" > log;python3 -c 'x'",
		    "setup = the command line untouched");
	sr_jobspec_free(js);
	/* an image: the request file only, unless a signal is named */
	write_str("job.ini", JOB "image = debian:12\n");
	js = load_good("job.ini");
	if (js != NULL)
		is_int(js->request_signal, 0, "image: the default signal is none");
	sr_jobspec_free(js);
	write_str("job.ini", JOB "image = debian:12\n[checkpoint]\nsignal = USR1\n");
	js = load_good("job.ini");
	if (js != NULL)
		is_int(js->request_signal, SIGUSR1, "image and signal = USR1: sent");
	sr_jobspec_free(js);
	write_str("job.ini", JOB "[checkpoint]\nmode = library\n");
	js = load_good("job.ini");
	if (js != NULL)
		is_str(js->mode, "library", "mode = library");
	sr_jobspec_free(js);
	if (chdir(datadir) == -1)
		sr_fatal("chdir %s", datadir);

	js = load_good("good-bom-crlf.ini");
	if (js != NULL) {
		is_str(js->name, "crlf", "BOM and CRLF: name");
		is_str(js->argv[2], "exit 3", "CRLF, indented key: argv[2]");
		ok(js->argv[3] == NULL, "CRLF: 3 words");
		is_int(js->shell, 0, "'shell: no' (colon form)");
		ok(js->interval == 0, "interval = 0");
		is_str(js->store, "file:///abs/path", "store: an absolute path becomes a file URL");
	}
	sr_jobspec_free(js);
	if (chdir(tmpdir) == -1)
		sr_fatal("chdir %s", tmpdir);

	/* Spellings of one value. */
	write_str("job.ini", JOB "[checkpoint]\nsignal = usr2\n[resources]\ngpus = 8\n"
	    "[provider]\npreemptions = -1\n[env]\nA=x;y ;z\n");
	if ((js = load_good("job.ini")) != NULL) {
		is_int(js->request_signal, SIGUSR2, "signal = usr2");
		ok(js->gpus_min == 8 && js->gpus_max == 8, "gpus = 8: min = max = 8");
		is_int(js->provider.max_preemptions, -1, "preemptions = -1");
		is_str(js->env[0], "A=x;y", "';' after a blank starts a comment, not before");
	}
	sr_jobspec_free(js);

	/* The cloud providers' keys. */
	write_str("job.ini", JOB "[provider]\nname = aws\nendpoint = http://[::1]:8080/\n"
	    "poll = 250ms\nearly_checkpoint = no\n");
	if ((js = load_good("job.ini")) != NULL) {
		is_str(js->provider.endpoint, "http://[::1]:8080/",
		    "endpoint: an IPv6 literal, a port, a trailing slash");
		ok(js->provider.poll == 0.25, "poll = 250ms");
		is_int(js->early_checkpoint, 0, "early_checkpoint = no");
		is_int(js->provider.ipv6, 0, "ipv6: no");
	}
	sr_jobspec_free(js);
	write_str("job.ini", JOB "[provider]\nipv6 = yes\npoll = 2s\n");
	if ((js = load_good("job.ini")) != NULL) {
		is_int(js->provider.ipv6, 1, "ipv6 = yes with auto");
		ok(js->provider.poll == 2, "poll = 2s with auto");
	}
	sr_jobspec_free(js);
	write_str("job.ini", JOB "[provider]\nname = gcp\nendpoint = https://metadata.example:8443"
	    "\nipv6 = no\n");
	if ((js = load_good("job.ini")) != NULL)
		is_str(js->provider.endpoint, "https://metadata.example:8443",
		    "endpoint: https, a name, a port");
	sr_jobspec_free(js);
	write_str("job.ini", JOB "[provider]\nname = azure\nendpoint = http://169.254.169.254\n"
	    "poll = 1h\n");
	if ((js = load_good("job.ini")) != NULL)
		ok(js->provider.poll == 3600 &&
		    strcmp(js->provider.endpoint, "http://169.254.169.254") == 0,
		    "azure: endpoint and poll = 1h (the longest)");
	sr_jobspec_free(js);

	/* Comments on the command line, and a literal semicolon. */
	write_str("job.ini", "[job]\nname = t\ncommand = echo a \\; ';' b ; says hello\n");
	if ((js = load_good("job.ini")) != NULL) {
		is_str(js->command, "echo a \\; ';' b", "command: the comment is dropped");
		ok(js->argv[0] != NULL && js->argv[1] != NULL && js->argv[2] != NULL &&
		    js->argv[3] != NULL && js->argv[4] != NULL && js->argv[5] == NULL &&
		    strcmp(js->argv[2], ";") == 0 && strcmp(js->argv[3], ";") == 0 &&
		    strcmp(js->argv[4], "b") == 0, "command: \\; and ';' are literal semicolons");
	}
	sr_jobspec_free(js);

	/* '#' after a blank starts a comment as ';' does (README's DDP example);
	 * one that follows no blank is part of the value. */
	write_str("job.ini", JOB "[resources]\nprocs = 4            # or gpus = 1-8: one rank per "
	    "GPU\n[env]\nURL = http://h/p#frag #a comment\nC=#fff\n[checkpoint] # the store\n"
	    "interval = 5m\t# every five minutes\n");
	if ((js = load_good("job.ini")) != NULL) {
		ok(js->procs_min == 4 && js->procs_max == 4,
		    "procs = 4   # ...: '#' after a blank starts a comment");
		is_str(js->env[0], "URL=http://h/p#frag", "'#' after no blank is the value's");
		is_str(js->env[1], "C=#fff", "'=#' keeps a value that starts with '#'");
		ok(js->interval == 300, "a '#' after a tab, and after a section header");
	}
	sr_jobspec_free(js);
	/* A " #" comment after a shell command is what the shell would do:
	 * no error, unlike " ;". */
	write_str("job.ini", "[job]\nname = t\nshell = yes\ncommand = ./run # the run\n");
	if ((js = load_good("job.ini")) != NULL)
		is_str(js->command, "./run", "shell command: a '#' comment is dropped, no error");
	sr_jobspec_free(js);
}

/*
 * Every numeric key against its two old defects: a value over the maximum
 * must say the range with its maximum, and a number too large for any
 * type ("99999999999999999999s") must be out of range, never "not a
 * duration". Each row: section, key, value, the exact message after
 * "job.ini:5: KEY = VALUE: ". Every numeric key of the table has rows.
 */
#define HUGE_NUM "99999999999999999999"
#define RANGE_DAYS(key, lo) \
	{ "checkpoint", key, "366d", "out of range; use " lo }, \
	{ "checkpoint", key, HUGE_NUM "s", "out of range; use " lo }
static const struct range_case {
	const char *section, *key, *value, *want;
} range_cases[] = {
	{ "resources", "gpus", "65", "too many; at most 64 GPUs" },
	{ "resources", "gpus", HUGE_NUM, "too many; at most 64 GPUs" },
	{ "resources", "gpus", "1-" HUGE_NUM, "too many; at most 64 GPUs" },
	{ "resources", "procs", "257", "too many; at most 256 processes" },
	{ "resources", "nodes", "2-" HUGE_NUM, "too many; at most 64 nodes" },
	{ "resources", "procs", HUGE_NUM, "too many; at most 256 processes" },
	RANGE_DAYS("interval", "0 (off) or from 1s to 365d (e.g. 20m)"),
	{ "checkpoint", "interval", HUGE_NUM "ms", "out of range; use 0 (off) or from 1s to 365d "
	  "(e.g. 20m)" },
	{ "checkpoint", "keep", "1000001", "out of range; use a whole number from 1 to 1000000 "
	  "(e.g. 3)" },
	{ "checkpoint", "keep", HUGE_NUM, "out of range; use a whole number from 1 to 1000000 "
	  "(e.g. 3)" },
	RANGE_DAYS("write_timeout", "from 1s to 365d (e.g. 10m)"),
	{ "job", "workdir_max", "1025GiB", "out of range; use a size from 1B to 1TiB (e.g. 4GiB)" },
	{ "job", "workdir_max", HUGE_NUM "GiB", "out of range; use a size from 1B to 1TiB "
	  "(e.g. 4GiB)" },
	{ "checkpoint", "chunk_size", "257MiB", "out of range; use a size from 1MiB to 256MiB "
	  "(e.g. 16MiB)" },
	{ "checkpoint", "chunk_size", HUGE_NUM "MiB", "out of range; use a size from 1MiB to "
	  "256MiB (e.g. 16MiB)" },
	{ "checkpoint", "chunk_size", HUGE_NUM, "out of range; use a size from 1MiB to 256MiB "
	  "(e.g. 16MiB)" },
	{ "checkpoint", "level", "20", "out of range; use a whole number from 1 to 19 (e.g. 1)" },
	{ "checkpoint", "level", HUGE_NUM, "out of range; use a whole number from 1 to 19 "
	  "(e.g. 1)" },
	RANGE_DAYS("margin", "at most 365d (e.g. 5s)"),
	{ "provider", "window", "366d", "out of range; use at most 365d (e.g. 30s)" },
	{ "provider", "window", HUGE_NUM "h", "out of range; use at most 365d (e.g. 30s)" },
	{ "provider", "grace", "366d", "out of range; use at most 365d (e.g. 30s)" },
	{ "provider", "grace", HUGE_NUM "s", "out of range; use at most 365d (e.g. 30s)" },
	{ "provider", "after", "366d", "out of range; use 0 (off) or at most 365d (e.g. 10m)" },
	{ "provider", "after", HUGE_NUM "d", "out of range; use 0 (off) or at most 365d "
	  "(e.g. 10m)" },
	{ "provider", "random_mean", "366d", "out of range; use 0 (off) or at most 365d "
	  "(e.g. 1h)" },
	{ "provider", "random_mean", HUGE_NUM "s", "out of range; use 0 (off) or at most 365d "
	  "(e.g. 1h)" },
	{ "provider", "seed", "18446744073709551616", "out of range; use a whole number from 0 to "
	  "18446744073709551615 (e.g. 1)" },
	{ "provider", "seed", HUGE_NUM HUGE_NUM, "out of range; use a whole number from 0 to "
	  "18446744073709551615 (e.g. 1)" },
	{ "provider", "trace_scale", "1000001", "out of range; use a number greater than 0 and at "
	  "most 1000000 (e.g. 60 or 0.5)" },
	{ "provider", "trace_scale", "1e999", "out of range; use a number greater than 0 and at "
	  "most 1000000 (e.g. 60 or 0.5)" },
	{ "provider", "trace_start", "366d", "out of range; use at most 365d (e.g. 2h)" },
	{ "provider", "trace_start", HUGE_NUM "m", "out of range; use at most 365d (e.g. 2h)" },
	{ "provider", "preemptions", "1000001", "out of range; use a whole number from 0 to "
	  "1000000, or unlimited (e.g. 3)" },
	{ "provider", "preemptions", HUGE_NUM, "out of range; use a whole number from 0 to "
	  "1000000, or unlimited (e.g. 3)" },
	{ "provider", "endpoint", "http://127.0.0.1:65536", "out of range; use a port from 1 to "
	  "65535 (e.g. http://127.0.0.1:8080)" },
	{ "provider", "endpoint", "http://127.0.0.1:" HUGE_NUM, "out of range; use a port from 1 "
	  "to 65535 (e.g. http://127.0.0.1:8080)" },
	{ "provider", "poll", "2h", "out of range; use from 50ms to 1h (e.g. 1s)" },
	{ "provider", "poll", HUGE_NUM "s", "out of range; use from 50ms to 1h (e.g. 1s)" },
	{ "retry", "max_restarts", "1000001", "out of range; use a whole number from 0 to 1000000 "
	  "(e.g. 10)" },
	{ "retry", "max_restarts", HUGE_NUM, "out of range; use a whole number from 0 to 1000000 "
	  "(e.g. 10)" },
	{ "retry", "on_exit_codes", "1, 256", "256 is out of range; use a comma-separated list of "
	  "exit codes from 1 to 255 (e.g. 1, 137)" },
	{ "retry", "on_exit_codes", HUGE_NUM HUGE_NUM, HUGE_NUM HUGE_NUM " is out of range; use a "
	  "comma-separated list of exit codes from 1 to 255 (e.g. 1, 137)" },
	{ "retry", "backoff", "366d", "out of range; use at most 365d (e.g. 1s)" },
	{ "retry", "backoff", HUGE_NUM "s", "out of range; use at most 365d (e.g. 1s)" },
	{ "retry", "backoff_max", "366d", "out of range; use at most 365d (e.g. 5m)" },
	{ "retry", "backoff_max", HUGE_NUM "s", "out of range; use at most 365d (e.g. 5m)" },
	{ "sweep", "seed", "1..1000000001", "the range 1..1000000001 is out of range; use bounds "
	  "from -1000000000 to 1000000000" },
	{ "sweep", "seed", "-" HUGE_NUM "..1", "the range -" HUGE_NUM "..1 is out of range; use "
	  "bounds from -1000000000 to 1000000000" },
};

static int
is_numeric(enum type t)
{
	return t == T_GPUS || t == T_DURATION || t == T_INT || t == T_SIZE || t == T_UINT64 ||
	    t == T_POSITIVE || t == T_PREEMPTIONS || t == T_EXITCODES || t == T_URL;
}

static void
test_ranges(void)
{
	struct sr_jobspec *js;
	char *printed, *text, *want;
	size_t i, j, rows, missing = 0;

	for (i = 0; i < SR_ARRAY_LEN(range_cases); i++) {
		const struct range_case *c = &range_cases[i];

		/* endpoint is only for a cloud provider: name one, after the key */
		text = sr_asprintf(JOB "[%s]\n%s = %s\n%s", c->section, c->key, c->value,
		    strcmp(c->key, "endpoint") == 0 ? "name = aws\n" : "");
		write_str("job.ini", text);
		want = sr_asprintf("job.ini:5: %s = %s: %s\n", c->key, c->value, c->want);
		ok(load("job.ini", &js, &printed) == -1, "range: %s = %s: rejected", c->key, c->value);
		is_str(printed, want, "range: %s = %s: the range and its maximum", c->key, c->value);
		free(printed);
		free(want);
		free(text);
	}
	for (i = 0; i < sr_js_nkeys; i++) {
		if (!is_numeric(sr_js_keys[i].type))
			continue;
		for (rows = 0, j = 0; j < SR_ARRAY_LEN(range_cases); j++)
			rows += strcmp(range_cases[j].key, sr_js_keys[i].name) == 0 &&
			    strcmp(range_cases[j].section, sr_js_section_names[sr_js_keys[i].sec]) == 0;
		if (rows < 2) {
			tap_diag("numeric key %s has %zu range rows, not 2", sr_js_keys[i].name, rows);
			missing++;
		}
	}
	is_int(missing, 0, "range: every numeric key has a row over its maximum and a huge one");
}

/* UTF-8 text of every length, tabs in values: accepted as written. */
static void
test_good_text(void)
{
	struct sr_jobspec *js;

	if (chdir(datadir) == -1)
		sr_fatal("chdir %s", datadir);
	js = load_good("good-utf8.ini");
	if (chdir(tmpdir) == -1)
		sr_fatal("chdir %s", tmpdir);
	if (js == NULL)
		return;
	is_str(js->argv[1], "caf\xc3\xa9", "utf8: a 2-byte character in a quoted word");
	is_str(js->argv[2], "\xe2\x82\xac", "utf8: a 3-byte character as a word");
	is_str(js->argv[3], "\xf0\x9f\x98\x80", "utf8: a 4-byte character; a tab separates words");
	is_str(js->argv[4], "a\tb", "utf8: a tab inside quotes is kept");
	ok(js->argv[5] == NULL, "utf8: 5 words");
	is_str(js->env[0], "GREETING=gr\xc3\xbc\xc3\x9f dich, \xe4\xbd\xa0\xe5\xa5\xbd",
	    "utf8: [env] value");
	is_str(js->env[1], "TAB=a\tb", "utf8: a tab in an [env] value");
	is_str(js->env[2], "EDGES=\xc2\xa0\xef\xbb\xbf\xf4\x8f\xbf\xbf\xee\x80\x80",
	    "utf8: U+00A0, U+FEFF, U+10FFFF, U+E000 are text");
	is_str(js->gpu_type, "H100\xe2\x80\x91SXM", "utf8: gpu_type");
	sr_jobspec_free(js);
}

/* [env] of 110,000 variables (under the 1 MiB limit): the duplicate check
 * is linear (a hash of the names), so this completes; it used to take
 * 31 s. Not timed: it must finish, with every variable, and a duplicate at
 * the very end must still be found with the line of the first. */
static void
test_env_many(void)
{
	struct sr_jobspec *js;
	char *printed, *text, *p;
	size_t i, n = 110000, cap = sizeof JOB + n * 16 + 64;

	text = sr_malloc(cap);
	p = text + sprintf(text, JOB "[env]\n");
	for (i = 0; i < n; i++)
		p += sprintf(p, "K%zu=%zu\n", i, i % 10);
	write_text("job.ini", text, (size_t)(p - text));
	ok((size_t)(p - text) < 1024 * 1024, "110000 [env] keys: %zu bytes, under 1 MiB",
	    (size_t)(p - text));
	if (ok(load("job.ini", &js, &printed) == 0, "110000 [env] keys: accepted")) {
		for (i = 0; js->env[i] != NULL; i++)
			;
		is_int(i, n, "110000 [env] keys: all of them in the environment");
		is_str(js->env[n - 1], "K109999=9", "110000 [env] keys: the last one");
		sr_jobspec_free(js);
	}
	free(printed);
	p += sprintf(p, "K54321=x\n");
	write_text("job.ini", text, (size_t)(p - text));
	ok(load("job.ini", &js, &printed) == -1, "110000 [env] keys and a duplicate: rejected");
	is_str(printed, "job.ini:110005: duplicate key 'K54321' in [env] (first set on line "
	    "54326); keep one\n", "110000 [env] keys: the duplicate at the end, with its first line");
	free(printed);
	free(text);
}

/* Every section and key of the parser's table is documented in the man page. */
static void
test_doc(const char *top)
{
	char path[PATH_MAX], want[100], *man;
	size_t i, missing = 0;

	snprintf(path, sizeof path, "%s/doc/spotrun-job.5", top);
	if (sr_read_file(path, 1 << 20, &man, NULL, NULL) == -1) {
		ok(0, "read %s", path);
		return;
	}
	for (i = 0; i < NSECTIONS; i++) {
		snprintf(want, sizeof want, "\n.Ss [%s]\n", sr_js_section_names[i]);
		if (strstr(man, want) == NULL) {
			tap_diag("no '.Ss [%s]' in %s", sr_js_section_names[i], path);
			missing++;
		}
	}
	for (i = 0; i < sr_js_nkeys; i++) {
		snprintf(want, sizeof want, "\n.It Cm %s No = ", sr_js_keys[i].name);
		if (strstr(man, want) == NULL) {
			tap_diag("no '.It Cm %s No =' in %s", sr_js_keys[i].name, path);
			missing++;
		}
	}
	is_int(missing, 0, "doc/spotrun-job.5 documents all %d sections and %zu keys",
	    NSECTIONS, sr_js_nkeys);
	free(man);
}

int
main(void)
{
	const char *top = getenv("top_srcdir");

	jobspec_test_dirs(datadir, tmpdir);
	test_bad();
	test_bad_special();
	test_good_full();
	test_good_defaults();
	test_good_other();
	test_good_text();
	test_ranges();
	test_env_many();
	test_doc(top != NULL ? top : SR_TOP_SRCDIR);

	if (chdir("/") == -1 || sr_rmtree(tmpdir, NULL) == -1)
		tap_diag("could not remove %s", tmpdir);
	return tap_done();
}

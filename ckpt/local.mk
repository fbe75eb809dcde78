# ckpt/local.mk: the checkpoint format (chunk codec, manifests, packs,
# catalog) and the directory save/restore pipeline. It uses the object store
# only through store/store.h: its include path has store/ but not store/s3/.
libckpt_a_CPPFLAGS = $(SR_CPPFLAGS_BASE) -I$(top_srcdir)/kernels -I$(top_srcdir)/store \
	-I$(top_srcdir)/ckpt
libckpt_a_SOURCES += ckpt/codec.h ckpt/codec.c ckpt/zframe.c ckpt/zframe.h

check_PROGRAMS += tests/t-codec
tests_t_codec_SOURCES = tests/t-codec.c tests/tap.h

# Codec throughput and ratio against plain zstd: `make bench`.
noinst_PROGRAMS += tests/bench-codec
tests_bench_codec_SOURCES = tests/bench-codec.c
SR_BENCH += bench/codec.sh
EXTRA_DIST += bench/codec.sh

# The checkpoint format: manifests, packs, save, restore, list, gc.
libckpt_a_SOURCES += ckpt/ckpt.h ckpt/catalog.c ckpt/catalog.h ckpt/chunkhash.c ckpt/chunkhash.h ckpt/chunksize.c ckpt/chunksize.h ckpt/idtab.c ckpt/idtab.h \
	ckpt/manifest.c ckpt/manifest-write.c ckpt/manifest.h ckpt/pack.c ckpt/pack.h ckpt/pathsafe.c \
	ckpt/pathsafe.h ckpt/restore.c ckpt/writeback.c ckpt/writeback.h ckpt/save.c \
	ckpt/gangparts.c ckpt/gangparts.h
# LATEST and its epoch (fencing), the chain of committed checkpoints, the
# listing and gc.
libckpt_a_SOURCES += ckpt/latest.c ckpt/latest.h ckpt/fence.c ckpt/fence.h ckpt/chain.c \
	ckpt/chain.h ckpt/list.c ckpt/gc.c
check_PROGRAMS += tests/t-manifest tests/t-ckpt tests/t-restore-hostile
# A restore's writeback, started on a thread of its own.
check_PROGRAMS += tests/t-writeback
tests_t_writeback_SOURCES = tests/t-writeback.c tests/tap.h
tests_t_manifest_SOURCES = tests/t-manifest.c tests/tap.h
tests_t_ckpt_SOURCES = tests/t-ckpt.c tests/tap.h tests/ckpt-util.h tests/ckpt-store-util.h \
	tests/nofsync.h
tests_t_restore_hostile_SOURCES = tests/t-restore-hostile.c tests/tap.h tests/ckpt-util.h
# Small files sharing a chunk: members, slices, dedup both ways, damage.
check_PROGRAMS += tests/t-bundles
tests_t_bundles_SOURCES = tests/t-bundles.c tests/tap.h tests/ckpt-util.h tests/ckpt-store-util.h
# The chunk size a directory's save chooses, and keeps from save to save.
check_PROGRAMS += tests/t-chunksize
tests_t_chunksize_SOURCES = tests/t-chunksize.c tests/tap.h tests/ckpt-util.h tests/ckpt-store-util.h
# A gang's checkpoint: parts of nodes, node 0 waiting for them and
# committing them as one, a part late or fenced.
# Out-of-memory trials of the format and the pipeline (tests/oom.c).
check_PROGRAMS += tests/t-ckpt-oom
tests_t_ckpt_oom_SOURCES = tests/t-ckpt-oom.c tests/oom.c tests/oom.h tests/oom-trial.h tests/tap.h \
	tests/ckpt-util.h tests/ckpt-store-util.h
check_PROGRAMS += tests/t-gangparts
tests_t_gangparts_SOURCES = tests/t-gangparts.c tests/tap.h tests/ckpt-util.h tests/ckpt-store-util.h tests/mdemu-util.h
EXTRA_DIST += doc/format.md

# The checkpoint pipeline against tar | zstd on a synthetic 1 GiB training
# checkpoint: `make bench` (bench/ckpt.sh).
noinst_PROGRAMS += tests/bench-ckpt
tests_bench_ckpt_SOURCES = tests/bench-ckpt.c
SR_BENCH += bench/ckpt.sh
EXTRA_DIST += bench/ckpt.sh bench/lib.sh
# The public job-side header (installed) and a C job using it.
include_HEADERS += ckpt/spotrun.h
noinst_PROGRAMS += tests/cjob
tests_cjob_SOURCES = tests/cjob.c
dist_check_SCRIPTS += tests/t62-cjob.sh

# The pipeline into an s3:// store against tar | zstd | aws s3 cp, on Ceph
# RGW that the script starts on loopback: `make bench` (bench/s3.sh).
SR_BENCH += bench/s3.sh
EXTRA_DIST += bench/s3.sh
# The same into an az:// store on Azurite against tar | zstd | the Azure
# SDK's streaming upload (bench/azblob.py): `make bench` (bench/azure.sh).
SR_BENCH += bench/azure.sh
EXTRA_DIST += bench/azure.sh bench/azblob.py

# What a save reads (savesrc.h): a directory (save-dir.c) or buffers in
# memory, the library's tensors (save-tensors.c); what a restore walks
# (restore.h): the candidates (restore-walk.c), into a directory
# (restore.c) or into buffers (restore-tensors.c).
# A directory shipped as a snapshot (a submitted job's working directory):
# the walk's ignore rules (ignore.c), the snapshot and its restore by id.
libckpt_a_SOURCES += ckpt/ignore.c ckpt/ignore.h ckpt/snapshot.c ckpt/snapshot.h
check_PROGRAMS += tests/t-ignore
tests_t_ignore_SOURCES = tests/t-ignore.c tests/tap.h
libckpt_a_SOURCES += ckpt/savesrc.h ckpt/save-dir.c ckpt/save-tensors.c ckpt/restore.h \
	ckpt/restore-walk.c ckpt/restore-tensors.c
# Boxes of tensors: the index of saved pieces a restore onto other ranks
# searches, the runs of bytes it copies, the tiling a ranks' merge checks.
libckpt_a_SOURCES += ckpt/reshard.c ckpt/reshard.h
check_PROGRAMS += tests/t-boxes
tests_t_boxes_SOURCES = tests/t-boxes.c tests/tap.h

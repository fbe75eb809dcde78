# queue/local.mk: the fleet's queue and the job lease (doc/fleet.md), kept
# in an object store. It sits on the store (store/store.h only) and
# common/, and knows nothing of checkpoints, providers or the runner: its
# include path has store/ and itself only.
libqueue_a_CPPFLAGS = $(SR_CPPFLAGS_BASE) -I$(top_srcdir)/store -I$(top_srcdir)/queue
# The lease: its JSON, claim, renew, states, requeue; the keeper thread.
libqueue_a_SOURCES += queue/lease.h queue/lease-int.h queue/lease.c queue/lease-json.c \
	queue/lease-keeper.c queue/lease-seen.c
# The queue: the handle and counted store calls, marker keys, jobs (submit,
# cancel, requeue), claims, status markers, expired leases, log segments.
libqueue_a_SOURCES += queue/queue.h queue/queue-int.h queue/queue.c queue/qkey.c \
	queue/qjob.c queue/qclaim.c queue/qindex.c queue/qstale.c queue/qlog.c \
	queue/qmachine.c queue/qpool.c queue/qplace.c
# Gangs: the slots of a job of several machines.
libqueue_a_SOURCES += queue/gang.h queue/gang.c
EXTRA_DIST += doc/fleet.md

# The lease and the queue on file://, on Ceph RGW (build-aux/test-all
# starts it), on Azurite and on gs:// against tests/gcsemu.py with GCS's
# limit of one write a second per object (tests/gs-util.h): races of 32 processes, a SIGSTOPped holder, malformed and
# random lease objects, request counts; tests/faultproxy for a store that
# stops answering.
check_PROGRAMS += tests/t-lease
tests_t_lease_SOURCES = tests/t-lease.c tests/tap.h tests/s3-util.h tests/queue-util.h \
	tests/mdemu-util.h tests/gs-util.h
EXTRA_tests_t_lease_DEPENDENCIES = tests/faultproxy$(EXEEXT)
check_PROGRAMS += tests/t-queue
slow_TESTS += tests/t-queue
tests_t_queue_SOURCES = tests/t-queue.c tests/tap.h tests/s3-util.h tests/queue-util.h \
	tests/mdemu-util.h tests/gs-util.h
# Gang slots: the leader, members, 8 claimers for 2 slots, stale slots,
# timeouts, a gang of a range, notices passed on.
check_PROGRAMS += tests/t-gang
tests_t_gang_SOURCES = tests/t-gang.c tests/tap.h tests/s3-util.h tests/queue-util.h \
	tests/mdemu-util.h

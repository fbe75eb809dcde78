# cloud/local.mk: the clients of the clouds' own fleet engines, what
# `spotrun up` and `spotrun down` drive (issue 24), a module below fleet/:
# cloud/aws/, EC2's Query API (ec2.c: transport, errors, XML; ec2-ops.c:
# launch template, EC2 Fleet of type maintain, a pool found by tag). It may
# include common/ and, of the store, store.h and awsauth.h (SigV4 and the
# AWS credentials chain, implemented in store/s3/).
libcloud_a_CPPFLAGS = $(SR_CPPFLAGS_BASE) -I$(top_srcdir)/store -I$(top_srcdir)/cloud/aws
libcloud_a_SOURCES += cloud/aws/ec2.c cloud/aws/ec2.h cloud/aws/ec2-int.h cloud/aws/ec2-ops.c \
	cloud/aws/ssm.c
# The engine against moto (tests/ec2emu.py: moto's server with ModifyFleet,
# which moto 5.2.1 lacks), skipped when moto is not installed; its error
# replies and their classes; SigV4 against botocore's.
check_PROGRAMS += tests/t-ec2
tests_t_ec2_SOURCES = tests/t-ec2.c tests/tap.h
tests_t_ec2_CPPFLAGS = $(AM_CPPFLAGS) -DSR_TOP_SRCDIR='"$(abs_top_srcdir)"'
EXTRA_DIST += tests/ec2emu.py

# cloud/local.mk: the clients of the clouds' own fleet engines, what
# `spotrun up` and `spotrun down` drive (issue 24), a module below fleet/:
# cloud/aws/, EC2's Query API (ec2.c: transport, errors, XML; ec2-ops.c:
# launch template, EC2 Fleet of type maintain, a pool found by tag);
# cloud/gcp/, Compute Engine's REST API (gce-auth.c: application default
# credentials and the metadata server's token; gce.c: transport, errors,
# operations; gce-ops.c: instance template, regional managed instance
# group, a pool found by label); cloud/azure/, Azure Resource Manager's
# REST API (arm-auth.c: a service principal's and the managed identity's
# tokens; arm.c: transport, errors, long-running operations; arm-ops.c:
# resource group, virtual network, Flexible VM scale set of Spot VMs, a
# pool found by tag). It may include common/ and, of the store,
# store.h and awsauth.h (SigV4 and the AWS credentials chain, implemented
# in store/s3/).
libcloud_a_CPPFLAGS = $(SR_CPPFLAGS_BASE) -I$(top_srcdir)/store -I$(top_srcdir)/cloud/aws \
	-I$(top_srcdir)/cloud/gcp -I$(top_srcdir)/cloud/azure
libcloud_a_SOURCES += cloud/aws/ec2.c cloud/aws/ec2.h cloud/aws/ec2-int.h cloud/aws/ec2-ops.c \
	cloud/aws/ssm.c
libcloud_a_SOURCES += cloud/gcp/gce.c cloud/gcp/gce.h cloud/gcp/gce-int.h cloud/gcp/gce-ops.c \
	cloud/gcp/gce-auth.c cloud/gcp/gce-auth.h \
	cloud/gcp/gce-advice.c
libcloud_a_SOURCES += cloud/azure/arm.c cloud/azure/arm.h cloud/azure/arm-int.h \
	cloud/azure/arm-ops.c cloud/azure/arm-auth.c cloud/azure/arm-auth.h
# The engine against moto (tests/ec2emu.py: moto's server with ModifyFleet,
# which moto 5.2.1 lacks), skipped when moto is not installed; its error
# replies and their classes; SigV4 against botocore's.
check_PROGRAMS += tests/t-ec2
tests_t_ec2_SOURCES = tests/t-ec2.c tests/tap.h
tests_t_ec2_CPPFLAGS = $(AM_CPPFLAGS) -DSR_TOP_SRCDIR='"$(abs_top_srcdir)"'
EXTRA_DIST += tests/ec2emu.py
# The GCP engine against tests/gceemu.py (Compute's endpoints, the OAuth
# token endpoint and the metadata server's token, python3's standard
# library only): credentials of both kinds, the JWT checked by the
# emulator, a pool made, resized, listed, found and deleted, errors and
# their classes, operations waited on.
check_PROGRAMS += tests/t-gce
tests_t_gce_SOURCES = tests/t-gce.c tests/tap.h
tests_t_gce_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/cloud/gcp \
	-DSR_TOP_SRCDIR='"$(abs_top_srcdir)"'
EXTRA_DIST += tests/gceemu.py
# The Azure engine against tests/armemu.py (ARM's endpoints, Entra ID's
# client-credentials grant, the metadata service's token; python3's
# standard library only): both kinds of credentials, a pool's group,
# network and Flexible set made, its capacity set, its VMs listed,
# capacity errors of the call and of the operation classified, a refused
# token fetched again, retries, the pool found by tag and deleted.
check_PROGRAMS += tests/t-arm
tests_t_arm_SOURCES = tests/t-arm.c tests/tap.h
tests_t_arm_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/cloud/azure \
	-DSR_TOP_SRCDIR='"$(abs_top_srcdir)"'
EXTRA_DIST += tests/armemu.py

# providers/local.mk: sources of preemption notices.
libproviders_a_SOURCES += providers/provider.h

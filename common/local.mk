# common/local.mk: helpers shared by every module, and compat/. The bottom
# of the house: it includes no other module.
libcommon_a_CPPFLAGS = $(SR_CPPFLAGS_BASE)
libcommon_a_SOURCES += common/util.c common/util.h common/fault.c common/fault.h \
	common/http.c common/http.h common/imds.c common/imds.h \
	common/iniparse.c common/iniparse.h common/inifile.c common/inifile.h \
	common/similar.c common/similar.h \
	compat/compat.h compat/strlcpy.c
EXTRA_DIST += tests/tap.h

# common/local.mk: helpers shared by every module, and compat/.
libcommon_a_SOURCES += common/util.c common/util.h common/fault.c common/fault.h \
	common/http.c common/http.h common/imds.c common/imds.h \
	common/iniparse.c common/iniparse.h \
	compat/compat.h compat/strlcpy.c
EXTRA_DIST += tests/tap.h

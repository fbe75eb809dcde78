dnl sr_warn_cflags.m4: the compiler's warning flags, kept to those the
dnl compiler in use accepts, so that gcc and clang both build without a
dnl warning (clang warns about each -W option it does not know on every
dnl file it compiles). Debian's autoconf-archive has AX_CHECK_COMPILE_FLAG,
dnl but the build must not need one more package for this.

dnl SR_CC_WARN_FLAG(FLAG, VARIABLE): append FLAG to VARIABLE when the C
dnl compiler compiles an empty program with it under -Werror. A
dnl -Wno-NAME is tried as -WNAME: gcc accepts any -Wno-NAME silently and
dnl clang with only a warning, so the negative form says nothing about
dnl whether the compiler knows the warning.
AC_DEFUN([SR_CC_WARN_FLAG], [
  AS_CASE([$1], [-Wno-*], [sr_flag_try=-W`expr "x$1" : 'x-Wno-\(.*\)'`],
    [sr_flag_try=$1])
  AS_VAR_PUSHDEF([sr_cv], [sr_cv_cflag_$1])
  AC_CACHE_CHECK([whether $CC accepts $1], [sr_cv], [
    sr_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS -Werror $sr_flag_try"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
      [AS_VAR_SET([sr_cv], [yes])], [AS_VAR_SET([sr_cv], [no])])
    CFLAGS=$sr_save_CFLAGS])
  AS_VAR_IF([sr_cv], [yes], [$2="${$2:+$$2 }$1"])
  AS_VAR_POPDEF([sr_cv])
])

dnl SR_CC_WARN_FLAGS(VARIABLE, FLAGS...): SR_CC_WARN_FLAG for each of the
dnl space-separated FLAGS, and AC_SUBST of VARIABLE.
AC_DEFUN([SR_CC_WARN_FLAGS], [
  $1=
  m4_foreach_w([sr_f], [$2], [SR_CC_WARN_FLAG(sr_f, [$1])])
  AC_SUBST([$1])
])

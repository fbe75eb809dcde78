# dist/local.mk: files spotrun installs for the system around it: the
# agent's systemd unit, from the template the binary embeds as well
# (fleet/local.mk), installed where configure found systemd's unit folder
# (--with-systemdsystemunitdir), with the queue left to
# /etc/default/spotrun-agent; and `make deb`, the Debian package (below).
EXTRA_DIST += dist/spotrun-agent.service.in build-aux/text-to-c
# Built either way: tests/t12-cloud-init.sh checks it.
if HAVE_SYSTEMD_UNITDIR
systemdsystemunit_DATA = dist/spotrun-agent.service
else
noinst_DATA = dist/spotrun-agent.service
endif
CLEANFILES += dist/spotrun-agent.service
dist/spotrun-agent.service: $(srcdir)/dist/spotrun-agent.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) dist && \
	sed -e 's|@bindir[@]|$(bindir)|g' -e 's|@agent_args[@]||g' \
	    $(srcdir)/dist/spotrun-agent.service.in >$@.tmp && mv $@.tmp $@

# `make deb`: a Debian binary package of this build, spotrun_VERSION_ARCH.deb
# here, for VM images without a compiler (doc/fleet.md, "The Debian
# package"): what `make install` installs, with the unit in
# /lib/systemd/system and the Python module where Debian's python3 looks,
# packed by build-aux/make-deb (stripped; Depends from dpkg-shlibdeps). A
# package installs under /usr, and the unit's ExecStart and spotrun.pc carry
# the prefix, so the tree must be configured with --prefix=/usr; a sanitizer
# build is refused (the package is for machines, not for debugging).
EXTRA_DIST += build-aux/make-deb dist/spotrun-agent.default
CLEANFILES += spotrun_*.deb
deb: all
	@test '$(prefix)' = /usr || { \
	  echo "make deb: this tree is configured for $(prefix); a package installs under /usr: ./configure --prefix=/usr first" >&2; \
	  exit 1; }
	@case ' $(CFLAGS) $(LDFLAGS) ' in *' -fsanitize='*) \
	  echo "make deb: this tree is built with sanitizers; configure it without --enable-sanitizers" >&2; \
	  exit 1;; esac
	rm -rf deb-root
	$(MAKE) $(AM_MAKEFLAGS) install DESTDIR='$(abs_builddir)/deb-root' \
	  systemdsystemunitdir=/lib/systemd/system pythondir=/usr/lib/python3/dist-packages
	$(SHELL) $(srcdir)/build-aux/make-deb --unit dist/spotrun-agent.service \
	  deb-root '$(PACKAGE_VERSION)' .
	rm -rf deb-root
.PHONY: deb

# dist/local.mk: files spotrun installs for the system around it: the
# agent's systemd unit, from the template the binary embeds as well
# (fleet/local.mk), installed where configure found systemd's unit folder
# (--with-systemdsystemunitdir), with the queue left to
# /etc/default/spotrun-agent.
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

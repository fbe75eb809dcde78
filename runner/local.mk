# runner/local.mk: the CLI, the job spec and the supervisor.
librunner_a_SOURCES += runner/cmd.h runner/cmd.c \
	runner/supervise.h runner/jobspec.h

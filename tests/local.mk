# tests/local.mk: test programs and scripts not owned by one module.

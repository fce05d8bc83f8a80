# worklist — PGXS build
#
#   make && make install          build and install into the server of pg_config
#   make installcheck             pg_regress, isolation and TAP suites against
#                                 a running server (PGHOST/PGPORT)
#   make installcheck-pgtap       pgTAP suite through pg_prove
#   make installcheck-deploy      the deployment tests (pooler, exporter,
#                                 failover manager), which need the
#                                 packages of test/deploy/packages
#
# ./run test does all of it on a private throwaway cluster; see doc/testing.md.

EXTENSION   = worklist
EXTVERSION  = 0.4
PREVVERSION = 0.3
MODULE_big  = worklist
OBJS = \
	src/worklist.o \
	src/args.o \
	src/errors.o \
	src/spi.o \
	src/tenant.o \
	src/binding.o \
	src/trust.o \
	src/task.o \
	src/task_list.o \
	src/task_sweep.o \
	src/ticket.o \
	src/fold.o \
	src/fold_store.o \
	src/fold_sql.o \
	src/run.o \
	src/run_state.o \
	src/runlist.o \
	src/run_queue.o \
	src/sweep.o \
	src/retention.o \
	src/sweeper.o \
	src/worker.o \
	src/launcher.o \
	src/control.o \
	src/utility.o \
	src/stats.o \
	src/metrics.o \
	src/change.o \
	src/settle.o \
	src/hint.o \
	src/shmem.o \
	src/channel.o

# Scripts.  sql/*.sql are pg_regress inputs only; the extension's scripts
# live in subdirectories:
#   sql/parts/      the current version's install script, one part per
#                   concept, concatenated into $(EXTENSION)--$(EXTVERSION).sql
#   sql/upgrade/    what the upgrade from the previous release changes in
#                   objects that release has; the upgrade script
#                   $(EXTENSION)--$(PREVVERSION)--$(EXTVERSION).sql is these
#                   pieces interleaved by name with the blocks of sql/parts/
#                   marked as new in this version (sql/upgrade.awk), so no
#                   object is written twice
#   sql/released/   scripts of released versions and their upgrades, frozen
# doc/testing.md ("Releasing a version") says how a version is frozen.
INSTALL_PARTS = $(sort $(wildcard sql/parts/*.sql))
UPGRADE_PARTS = $(sort $(wildcard sql/upgrade/*.sql))
# Each piece of sql/upgrade/ comes before the part of sql/parts/ of the same
# name.
UPGRADE_SOURCES = $(shell { for f in $(UPGRADE_PARTS:sql/upgrade/%=%); do echo "$$f 0 sql/upgrade/$$f"; done; \
	for f in $(INSTALL_PARTS:sql/parts/%=%); do echo "$$f 1 sql/parts/$$f"; done; } | \
	LC_ALL=C sort | cut -d' ' -f3)
DATA_built  = $(EXTENSION)--$(EXTVERSION).sql $(EXTENSION)--$(PREVVERSION)--$(EXTVERSION).sql
DATA        = $(sort $(wildcard sql/released/$(EXTENSION)--*.sql))

# pg_regress: sql/*.sql against expected/*.out, in a database that has the
# extension already, in name order (core_* first: some of them count every
# row of a table, so a test that leaves rows behind sorts after them).
REGRESS = $(sort $(basename $(notdir $(wildcard sql/*.sql))))
REGRESS_OPTS = --load-extension=$(EXTENSION)

# pg_isolation_regress: test/isolation/specs/*.spec against
# test/isolation/expected/*.out
ISOLATION = $(sort $(basename $(notdir $(wildcard test/isolation/specs/*.spec))))
ISOLATION_OPTS = --inputdir=test/isolation --load-extension=$(EXTENSION)

# TAP: test/t/*.pl, each on clusters of its own, with the helpers of
# test/perl/WorklistNode.pm (PG_PROVE_FLAGS is set below, after PGXS sets it)
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

# The deployment tests: test/deploy/*.pl, the same way, with what runs in
# front of and beside the server (test/deploy/packages)
DEPLOY_TESTS = test/deploy/*.pl

EXTRA_CLEAN = $(DATA_built) output_iso tmp_check tmp_deploy results regression.diffs regression.out

# -Wextra minus the warnings PostgreSQL's own headers trip; ./run adds -Werror.
WERROR ?=
PG_CPPFLAGS += -DWL_EXTVERSION=\"$(EXTVERSION)\" -DWL_PREVVERSION=\"$(PREVVERSION)\"
PG_CFLAGS += -Wextra -Wno-unused-parameter -Wno-sign-compare \
	-Wno-missing-field-initializers $(WERROR) $(WL_CFLAGS)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# prove runs in the source directory: the TAP tests' own module
PG_PROVE_FLAGS += -I test/perl

$(EXTENSION)--$(EXTVERSION).sql: $(INSTALL_PARTS)
	cat $(INSTALL_PARTS) > $@

$(EXTENSION)--$(PREVVERSION)--$(EXTVERSION).sql: $(UPGRADE_PARTS) $(INSTALL_PARTS) sql/upgrade.awk
	LC_ALL=C awk -v version=$(EXTVERSION) -f sql/upgrade.awk $(UPGRADE_SOURCES) > $@

# The layering of src/ (the list at the head of src/worklist.c), checked
# against the built objects; ./run test runs it as the suite "layers".
check-layers: all
	test/tools/layers .

# pgTAP files are plain SQL run by pg_prove in a database of their own.
PGTAP_DB ?= worklist_pgtap
installcheck-pgtap:
	dropdb --if-exists $(PGTAP_DB)
	createdb $(PGTAP_DB)
	psql -X -q -v ON_ERROR_STOP=1 -d $(PGTAP_DB) \
		-c 'CREATE EXTENSION pgtap' -c 'CREATE EXTENSION $(EXTENSION)'
	pg_prove -d $(PGTAP_DB) test/pgtap/*.sql

# Like the TAP suite, in a directory of their own (tmp_deploy), so that
# the logs of a failed TAP suite are kept.
installcheck-deploy:
	rm -rf '$(CURDIR)'/tmp_deploy
	$(MKDIR_P) '$(CURDIR)'/tmp_deploy
	TESTDIR='$(CURDIR)/tmp_deploy' PATH="$(bindir):$$PATH" PGPORT='6$(DEF_PGPORT)' \
	PG_REGRESS='$(top_builddir)/src/test/regress/pg_regress' \
	$(PROVE) $(PG_PROVE_FLAGS) $(PROVE_FLAGS) $(DEPLOY_TESTS)

.PHONY: installcheck-pgtap installcheck-deploy check-layers

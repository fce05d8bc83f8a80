/*-------------------------------------------------------------------------
 *
 * run.h
 *	  What the files of the run concept share: a run's address as the
 *	  verbs take it (run.c), the where-clause of its key, and the
 *	  checkpoint row type as the statements build it.  run_state.c (the
 *	  state an agent framework keeps beside its checkpoints) calls into
 *	  run.c, never the other way round.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_RUN_H
#define WORKLIST_RUN_H

#include "worklist.h"

/* The address of a run: tenant plus the first three arguments. */
typedef struct RunAddress
{
	text	   *tenant;
	text	   *project;
	text	   *session;
	text	   *run;
} RunAddress;

/*
 * Tenant first, then the trust checks listed (NULL: none), then project,
 * session and run (arguments 0..2).
 */
extern void wl_run_address_as(FunctionCallInfo fcinfo, RunAddress *addr,
							  const WlTrustArg *checks);
#define wl_run_address(fcinfo, addr) wl_run_address_as((fcinfo), (addr), NULL)
/* The address as statement parameters $1..$4. */
extern void wl_run_address_values(const RunAddress *addr, Datum *values);

/* Where-clause fragment for the run key $1..$4, on the alias given. */
#define RUN_KEY(a) \
	" " a ".tenant OPERATOR(pg_catalog.=) $1" \
	" AND " a ".project OPERATOR(pg_catalog.=) $2" \
	" AND " a ".session OPERATOR(pg_catalog.=) $3" \
	" AND " a ".run OPERATOR(pg_catalog.=) $4"

/*
 * The checkpoint row type, with parent_run and run_created_at of the run,
 * over worklist.run_checkpoint c: CHECKPOINT_ROW for this version's
 * schema, CHECKPOINT_ROW_03 for 0.3's.
 */
#define CHECKPOINT_ROW_OF(more) \
	"ROW(c.project, c.session, c.run, r.parent_run, c.checkpoint_id," \
	" c.created_at, r.run_created_at, c.body, c.park_request, c.parked_at," \
	" c.park_deadline, c.park_resolved_at" more ")::worklist.checkpoint" \
	" FROM worklist.run_checkpoint c" \
	" LEFT JOIN worklist.run r ON r.tenant OPERATOR(pg_catalog.=) c.tenant" \
	"  AND r.project OPERATOR(pg_catalog.=) c.project" \
	"  AND r.session OPERATOR(pg_catalog.=) c.session" \
	"  AND r.run OPERATOR(pg_catalog.=) c.run"
#define CHECKPOINT_ROW \
	CHECKPOINT_ROW_OF(", c.park_tasks, c.metadata, c.parent_checkpoint_id")
#define CHECKPOINT_ROW_03 CHECKPOINT_ROW_OF("")

/*
 * Is the fence sequence's next value above every stored fence?  What a
 * statement that mints a fence checks first (a boolean expression).
 */
#define FENCE_SEQ_AHEAD \
	"(SELECT s.last_value OPERATOR(pg_catalog.-)" \
	"        CASE WHEN s.is_called THEN 0 ELSE 1 END" \
	"   FROM worklist.fence_seq s)" \
	" OPERATOR(pg_catalog.>=)" \
	" COALESCE((SELECT pg_catalog.max(l.fence) FROM worklist.run_claim l), 0)"

/*
 * The fence sequence fell behind a stored fence: move it past the highest
 * one, waiting for every transaction that drew from it (claim_run's
 * guard).  A verb that mints a fence with nextval checks first, in the
 * statement that mints, that the sequence is not behind, and calls this
 * when it is.  SPI must be begun.
 */
extern void wl_run_fence_catch_up(void);

#endif							/* WORKLIST_RUN_H */

/*-------------------------------------------------------------------------
 *
 * run.h
 *	  What run.c offers the other files of the run concept (run_queue.c,
 *	  and run_state.c, the verbs that persist an agent framework's state):
 *	  a run's address as the verbs take it, the where-clause of its key, the
 *	  checkpoint row type as the statements build it, and the steps every
 *	  write of a run takes, in the order every writer of a run locks (a
 *	  run's lease < its row < its checkpoints).  Those files call into
 *	  run.c, never the other way round.
 *
 * A run's address is passed to the steps as four datums: tenant, project,
 * session, run (text), the first four parameters of every statement of a
 * run.  Every step must be called with SPI begun.
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
	CHECKPOINT_ROW_OF(", c.park_tasks, COALESCE(c.metadata, '{}'::pg_catalog.jsonb)," \
					  " c.parent_checkpoint_id")
#define CHECKPOINT_ROW_03 CHECKPOINT_ROW_OF("")

/*
 * Lock the run's row (FOR NO KEY UPDATE) and refuse (WL008) a run that
 * conclude_run concluded.  The caller has locked the run's lease first if
 * it needs it.  Returns whether the run has a row (false: it does not
 * exist, and nothing is locked).  On a 0.3 schema, which has no
 * conclusion, it only locks.
 */
extern bool wl_run_refuse_concluded(Datum *address);
/* The same lock, without the refusal: *concluded says whether it is. */
extern bool wl_run_lock_row(Datum *address, bool *concluded);

/* Create the run's row, or lock the existing one (FOR NO KEY UPDATE). */
extern void wl_run_ensure(Datum *address);

/*
 * Write a checkpoint of a run whose row is locked, and bring the run's
 * summary up to date, as write_checkpoint does: values and nulls are
 * the statement's 16 parameters, $1-$4 the address, then checkpoint_id,
 * created_at, body, parent_run, run_created_at, park_request, parked_at,
 * park_deadline, park_resolved_at, metadata, parent_checkpoint_id and
 * park_tasks (a text[], NULL when the park awaits no task).  0.4 schema
 * only.
 */
#define WL_RUN_WRITE_NARGS 16
extern void wl_run_write(Datum *values, const char *nulls);

/*
 * Checkpoint $5 of the run ($1-$4 the address) as a worklist.checkpoint,
 * read with a new snapshot; *isnull when there is none.
 */
extern Datum wl_run_read_checkpoint(Datum *values, bool *isnull);

/*
 * When a lease of ttl taken at now expires; refuses (22023) a ttl that is
 * not positive, too long, or reaches past the last instant, and a
 * non-finite now.
 */
extern TimestampTz wl_run_lease_end(Interval *ttl, TimestampTz now);

/*
 * Take the run's lease for holder with a new fence, as claim_run does:
 * values are $1-$4 the address, $5 holder, $6 now, $7 expires_at.
 * Succeeds when nobody holds it, holder renews it, or it expired at now.
 * Returns a worklist.run_lease datum, or (Datum) 0 when somebody else's
 * lease is unexpired; *reclaimed says the lease was taken from another
 * holder whose lease expired.  Marks the run queued on a 0.4 schema.
 * After SPI ends, the caller of a successful claim calls wl_run_claimed.
 */
extern Datum wl_run_mint(Datum *values, bool *reclaimed);

/*
 * After a successful claim, with SPI ended: make the fence durable, make
 * the commit durable where synchronous_commit is off, count it and notify
 * "claimed".
 */
extern void wl_run_claimed(text *tenant, bool reclaimed);

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

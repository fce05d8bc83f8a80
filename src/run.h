/*-------------------------------------------------------------------------
 *
 * run.h
 *	  What run.c offers the other files of the run concept (run_queue.c,
 *	  and the verbs that persist an agent framework's state): the steps
 *	  every write of a run takes, in the order every writer of a run locks
 *	  (a run's lease < its row < its checkpoints).
 *
 * A run's address is passed as four datums: tenant, project, session, run
 * (text), the first four parameters of every statement of a run.
 * Everything here must be called with SPI begun.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_RUN_H
#define WORKLIST_RUN_H

#include "worklist.h"

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

#endif							/* WORKLIST_RUN_H */

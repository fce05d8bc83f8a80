/*-------------------------------------------------------------------------
 *
 * sweep.h
 *	  The sweep (sweep.c), and its parts, implemented with their data.
 *	  Each part acts on the given tenant only, locks with SKIP LOCKED, and
 *	  must be called with SPI already begun (wl_spi_begin).
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_SWEEP_H
#define WORKLIST_SWEEP_H

#include "worklist.h"

/* Expiry policies of overdue tasks (task_sweep.c). */
extern void wl_task_sweep(text *tenant, TimestampTz now, int32 lim,
						  WlSweepResult *result);
/* Claims held past their claim_timeout, released (task_sweep.c). */
extern void wl_task_claim_timeouts(text *tenant, TimestampTz now, int32 lim,
								   WlSweepResult *result);
/* The ticket watchdog (ticket.c). */
extern void wl_ticket_watchdog(text *tenant, TimestampTz now, int32 lim,
							   WlSweepResult *result);
/* Purge by the tenant's retention policy, lim items in all (retention.c). */
extern void wl_retention_purge(text *tenant, TimestampTz now, int32 lim,
							   WlSweepResult *result);
/*
 * What the retention purge asks of each kind: up to lim of its rows of the
 * tenant that are old enough (settled, closed or last written at or before
 * before), with what belongs to them; each returns how many went.
 */
extern uint64 wl_task_purge(text *tenant, TimestampTz before, int32 lim);
extern uint64 wl_ticket_purge(text *tenant, TimestampTz before, int32 lim);
extern uint64 wl_run_purge(text *tenant, TimestampTz before, TimestampTz now,
						   int32 lim);

/*
 * One sweep of one tenant at now: every part above, in the documented
 * order, each bounded by lim.  What worklist.sweep() does, and what the
 * sweeper does for each tenant with something due.  SPI must be begun.
 */
extern void wl_sweep_tenant(text *tenant, TimestampTz now, int32 lim,
							WlSweepResult *result);
/* Did a sweep of lim come back full in some part (more may be due)? */
extern bool wl_sweep_full(const WlSweepResult *result, int32 lim);
/* Add one sweep's counts to a total. */
extern void wl_sweep_add(WlSweepResult *total, const WlSweepResult *one);
/*
 * The tenants that have something due at now (a list of text *, allocated
 * in cxt), at a cost that follows what is due, not the number of tenants.
 * SPI must be begun.
 */
extern List *wl_due_tenants(TimestampTz now, MemoryContext cxt);

#endif							/* WORKLIST_SWEEP_H */

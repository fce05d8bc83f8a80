/*-------------------------------------------------------------------------
 *
 * change.h
 *	  What a transaction records of its changes, per tenant (change.c):
 *	  the counts of its notifications and of the cumulative counters.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_CHANGE_H
#define WORKLIST_CHANGE_H

#include "worklist.h"

/*
 * Record that a change happened in the tenant (no-op while worklist.notify
 * is off).  The tenant's listeners hear of it, as a count, once the
 * transaction commits; never if it rolls back.  Payloads name no id, so
 * none is taken.
 */
extern void wl_change_record(const char *tenant, WlChange change);
/* The same for a tenant given as text (converted only when recorded). */
extern void wl_change_record_text(text *tenant, WlChange change);
/* n changes of one kind at once, as n calls of wl_change_record_text. */
extern void wl_change_record_text_n(text *tenant, WlChange change, uint32 n);

/*
 * Add one to a cumulative counter of the current tenant (worklist.tenant,
 * which the verb has entered; the sweeper sets it to the tenant it sweeps).
 * No-op when not preloaded.  Claim conflicts and stale-fence refusals count
 * at once (they are refusals: their transaction fails); the others count
 * when the transaction commits.  Claim timeouts are counted by
 * wl_sweep_tenant() from claims_released: the sweep parts do not count
 * them.
 */
extern void wl_count(WlCounter counter);
/* Add n to a counter, as wl_count does. */
extern void wl_count_n(WlCounter counter, uint32 n);

/*
 * The counters of a tenant of the current database, copied into out[];
 * false when they are not kept (library not preloaded, or more tenants
 * than the table holds).
 */
extern bool wl_change_counters(const char *tenant, uint64 *out);

#endif							/* WORKLIST_CHANGE_H */

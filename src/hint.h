/*-------------------------------------------------------------------------
 *
 * hint.h
 *	  Where claim_next starts (hint.c): a key in queue order (WlQueueKey,
 *	  shmem.h) below which no task of the tenant is claimable.  See the
 *	  head of hint.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_HINT_H
#define WORKLIST_HINT_H

#include "shmem.h"

/*
 * The tenant's hint (wl_queue_key_min when unknown), with what a later
 * wl_hint_raise must find unchanged.  false when hints are not kept (the
 * library is not preloaded).  When raise is not NULL the read is a claim's:
 * *raise says whether this claim should find where the queue starts and
 * raise the hint to it (one claim in WL_HINT_RAISE_EVERY, see hint.c).
 */
extern bool wl_hint_read(const char *tenant, WlQueueKey *at, uint64 *version,
						 uint64 *raises, bool *raise);
/* Raise the hint to *to, if nothing changed it since wl_hint_read. */
extern void wl_hint_raise(const char *tenant, uint64 version, uint64 raises,
						  const WlQueueKey *to);
/*
 * This transaction took tasks out of the queue (claimed or settled them):
 * it raises no hint from now on.
 */
extern void wl_hint_took(void);
/* The sweeper's tick: unpin hints once no prepared transaction is left. */
extern void wl_hint_tick(void);
/* This transaction made a task of the tenant claimable (lowers at commit). */
extern void wl_hint_claimable(const char *tenant, int32 priority,
							  TimestampTz created_at);

#endif							/* WORKLIST_HINT_H */

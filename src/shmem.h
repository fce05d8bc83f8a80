/*-------------------------------------------------------------------------
 *
 * shmem.h
 *	  Everything the extension keeps in shared memory (shmem.c): the
 *	  sweepers' slots and the launcher's mailbox, each tenant's counters
 *	  and waiting notifications, and the claim hints.  The structures are
 *	  private to shmem.c; every other part reaches them through these
 *	  functions, which take and release the locks themselves.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_SHMEM_H
#define WORKLIST_SHMEM_H

#include "worklist.h"

/* Bytes of an error message a slot keeps, and tenants it names in error. */
#define WL_ERROR_LEN		512
#define WL_ERROR_TENANTS	8
/* Databases the launcher can be asked to look at before it drains them. */
#define WL_PROBE_MAX		32

/*
 * Defines worklist.max_tenant_counters (only when preloading: it sizes
 * shared memory).
 */
extern void wl_shmem_init(void);
/* Preloading: shared memory is made at server start (worklist.c's hooks). */
extern void wl_shmem_preload(void);
extern void wl_shmem_request(void);
extern void wl_shmem_startup(void);
/* Was the library loaded through shared_preload_libraries? */
extern bool wl_shm_preloaded(void);

/* ----------
 * Sweeper slots: one per database that has (or had) a sweeper
 * ----------
 */
typedef struct WlSlot WlSlot;

/* Why the last sweeper of a slot left. */
typedef enum WlSweeperExit
{
	WL_EXIT_NONE,				/* still running, or never started */
	WL_EXIT_FAILED,				/* an error or a signal ended it */
	WL_EXIT_NO_EXTENSION,		/* the database lacks the extension */
	WL_EXIT_STOPPED,			/* asked to leave the database alone */
	WL_EXIT_DUPLICATE			/* another sweeper already works there */
} WlSweeperExit;

/* What worklist.sweeper_status shows of a slot, besides its sweeper's pid. */
typedef struct WlSweeperStatus
{
	TimestampTz started_at;
	TimestampTz last_tick;
	double		last_duration_ms;
	int64		ticks;
	WlSweepTotals totals;
	int			n_error_tenants;
	char		error_tenants[WL_ERROR_TENANTS][WL_TENANT_KEY_LEN];
	TimestampTz last_error_at;
	char		last_error[WL_ERROR_LEN];
	char		last_error_tenant[WL_TENANT_KEY_LEN];
} WlSweeperStatus;

/* How many slots there are (for messages). */
extern int	wl_shm_slot_count(void);

/* The sweeper's side, in the sweeper of the database. */
typedef enum WlSlotClaim
{
	WL_SLOT_CLAIMED,			/* this process is the database's sweeper */
	WL_SLOT_TAKEN,				/* another sweeper works there */
	WL_SLOT_PAUSED,				/* a command keeps sweepers out for now */
	WL_SLOT_FULL				/* every slot is in use */
} WlSlotClaim;

/*
 * Without preloading, before connecting: has a sweeper of this database
 * failed to connect `attempts` times in a row (then give up)?
 */
extern bool wl_shm_slot_give_up(Oid database, int attempts);
/* Take the database's slot and mark it running (*other: who has it). */
extern WlSlotClaim wl_shm_slot_claim(Oid database, WlSlot **slot, pid_t *other);
/* This sweeper leaves its slot: failed, or why it left (wl_shm_slot_exit). */
extern void wl_shm_slot_release(WlSlot *slot, bool failed);
extern void wl_shm_slot_exit(WlSlot *slot, WlSweeperExit reason);
/* The sweeper found the extension. */
extern void wl_shm_slot_ran(WlSlot *slot);
/* Was this sweeper asked to leave (the utility hook)? */
extern bool wl_shm_slot_stop_requested(WlSlot *slot);
/* Was it asked to check the extension (reset by the call)? */
extern bool wl_shm_slot_take_recheck(WlSlot *slot);
/* A tick ended: its totals, duration and instant. */
extern void wl_shm_slot_tick(WlSlot *slot, TimestampTz start, TimestampTz end,
							 const WlSweepResult *done);
/* An error, with the tenant it came from (NULL: none), and its end. */
extern void wl_shm_slot_error(WlSlot *slot, const char *tenant,
							  const char *message);
extern void wl_shm_slot_unlist_error(WlSlot *slot, const char *tenant);

/* The launcher's side. */
extern void wl_shm_launcher_register(void);
extern void wl_shm_launcher_unregister(void);
/* The databases asked for since the last call (*all: every one). */
extern int	wl_shm_launcher_take_probes(Oid *probe, bool *all);
/* Before starting a sweeper: its slot, so that it can say why it stops. */
extern bool wl_shm_slot_prepare(Oid database);
/* Why the last sweeper of the database stopped, and whether it ran. */
extern void wl_shm_slot_exit_status(Oid database, WlSweeperExit *reason,
									bool *ran);
/* Free the slot of a database that is gone, unless something holds it. */
extern void wl_shm_slot_forget(Oid database);
/* Does a sweeper run in the database; is it paused? */
extern void wl_shm_slot_state(Oid database, bool *running, bool *paused);

/* Asking the launcher (any backend). */
extern void wl_shm_launcher_wake(void);
/* Look at a database again (after CREATE EXTENSION, say); wakes it. */
extern void wl_shm_launcher_probe(Oid database);

/* The utility hook's side (any backend, preloaded). */
/*
 * Pause the database's slot for this backend, and ask its sweeper to leave;
 * returns the sweeper's pid, 0 (and no pause) when none runs.
 */
extern pid_t wl_shm_slot_pause(Oid database);
/* Has the sweeper pid left the database's slot? */
extern bool wl_shm_slot_left(Oid database, pid_t pid);
/* Lift this backend's pause of the database. */
extern void wl_shm_slot_unpause(Oid database);
/* Make the database's running sweeper check its extension now. */
extern void wl_shm_slot_recheck(Oid database);

/* start_sweeper() and sweeper_status (any backend). */
/* The pid of the sweeper working in the database, or 0. */
extern pid_t wl_shm_sweeper_pid(Oid database);

typedef enum WlSlotStart
{
	WL_START_FULL,				/* every slot is in use */
	WL_START_RUNNING,			/* a sweeper works there (*pid) */
	WL_START_MINE,				/* this backend starts it now */
	WL_START_WAIT				/* another backend is starting it */
} WlSlotStart;

/* Without preloading: decide, under the lock, who starts the sweeper. */
extern WlSlotStart wl_shm_slot_start(Oid database, pid_t *pid);
/* This backend's start is over (started or not). */
extern void wl_shm_slot_started(Oid database);
/*
 * A copy of the database's status, and the pid of its sweeper (0: none; a
 * stale one may remain); false when it never had a slot.
 */
extern bool wl_shm_slot_status(Oid database, pid_t *pid,
							   WlSweeperStatus *status);

/* ----------
 * Tenants: counters and notifications waiting to be sent, per (database,
 * tenant); only when preloaded
 * ----------
 */
typedef struct WlTenantEntry WlTenantEntry;

/*
 * The entry of a tenant of a database; with create, added if missing
 * (NULL when the table is full, with one log line the first time).  NULL
 * when not preloaded.  Never raises: called at commit.
 */
extern WlTenantEntry *wl_shm_tenant(Oid database, const char *tenant, bool create);
/* Add n to a counter of the entry. */
extern void wl_shm_tenant_count(WlTenantEntry *entry, WlCounter counter, uint32 n);
/*
 * Add counts to its counters and events to its waiting notifications
 * (either may be NULL).  True when that queued the entry for sending: the
 * database's sweeper must be woken (wl_shm_notify_wake).
 */
extern bool wl_shm_tenant_add(WlTenantEntry *entry, const uint32 *counts,
							  const uint32 *events);
/* The counters of an entry. */
extern void wl_shm_tenant_counters(WlTenantEntry *entry, uint64 *out);
/* Could an entry not be added at some point (the table was full)? */
extern bool wl_shm_tenants_full(void);

/* Notifications that wait for their database's sweeper. */
typedef struct WlPendingEvents
{
	char	   *tenant;
	uint32		events[WL_CHANGE__N];
} WlPendingEvents;

/* Tell the database's sweeper that notifications wait, and wake it. */
extern void wl_shm_notify_wake(Oid database);
/* Do notifications wait for the database? */
extern bool wl_shm_notify_pending(Oid database);
/*
 * Take the database's waiting notifications off their entries: how many
 * tenants have some (*out, palloc'd).
 */
extern int	wl_shm_take_events(Oid database, WlPendingEvents **out);

/* ----------
 * Claim hints (hint.c says what they mean): per (database, task table,
 * tenant); only when preloaded
 * ----------
 */

/* A key in queue order: where claim_next starts. */
typedef struct WlQueueKey
{
	int64		neg_priority;	/* -priority, so the order is ascending */
	TimestampTz created_at;
	char		id[WL_IDENT_MAX * 4 + 1];
} WlQueueKey;

/* The head of every queue, and past its end. */
extern const WlQueueKey wl_queue_key_min;
extern const WlQueueKey wl_queue_key_max;

/* Are hints kept (preloaded)? */
extern bool wl_shm_hints_kept(void);
/*
 * The tenant's hint (wl_queue_key_min when it has none), its version and
 * raise count; with count, this claim is counted and *claims says how many
 * claims read it since its last raise.  False when it has no entry yet.
 */
extern bool wl_shm_hint_read(Oid table, const char *tenant, bool count,
							 WlQueueKey *at, uint64 *version, uint64 *raises,
							 uint32 *claims);
/* Raise the hint to *to if neither version nor raises changed since. */
extern void wl_shm_hint_raise(Oid table, const char *tenant, uint64 version,
							  uint64 raises, const WlQueueKey *to);
/*
 * Lower it to (neg_priority, created_at, '') or below; when pin is a valid
 * transaction id (a prepared transaction), pin it there until that
 * transaction is prepared no longer (wl_shm_hint_unpin).
 */
#define WL_HINT_PINS 8			/* prepared transactions an entry remembers */
extern void wl_shm_hint_lower(Oid table, const char *tenant,
							  int64 neg_priority, TimestampTz created_at,
							  TransactionId pin);
/* Send every hint of the database back to the head. */
extern void wl_shm_hint_reset(Oid database);
/* Is any hint pinned (a prepared transaction lowered it)? */
extern bool wl_shm_hints_pinned(void);
/*
 * Unpin the hints of the database from every prepared transaction that is
 * not among the n of prepared (those still prepared in it); an entry that
 * lost count of them (more than WL_HINT_PINS) is unpinned once n is 0.
 */
extern void wl_shm_hint_unpin(Oid database, const TransactionId *prepared, int n);

#endif							/* WORKLIST_SHMEM_H */

/*-------------------------------------------------------------------------
 *
 * stats.h
 *	  Per-server state in shared memory: what is kept per (database,
 *	  tenant) -- cumulative counters and notifications waiting to be sent
 *	  -- the slots of the sweepers, and the launcher's mailbox.
 *
 * Locking protocol:
 *
 *	 WlShared.lock (LWLock) guards the sweeper slots and the launcher's
 *		fields: a slot is read and written only under it (shared to read,
 *		exclusive to write).  Nothing that can fail runs while it is held.
 *	 WlShared.tenants_lock (LWLock) guards the membership of the tenant hash
 *		(shared to look an entry up, exclusive to add one) and the list of
 *		entries that have notifications waiting (dirty_head and each entry's
 *		next_dirty; exclusive to change).  Entries are never removed, so a
 *		pointer to one stays valid for the life of the server.  The values in
 *		an entry are atomics, changed without the lock once the entry is
 *		found.  An entry is on the list exactly while its "queued" flag is 1:
 *		whoever turns the flag from 0 to 1 (compare-and-exchange) links it;
 *		the sender unlinks it, resets the flag, and only then takes the
 *		counts (atomic exchange), so a count added meanwhile either is taken
 *		or queues the entry again.  Whoever queues an entry then sets the
 *		notify_pending flag of its database's slot and that sweeper's latch;
 *		the sweeper clears the flag before it unlinks.
 *
 * The tenant hash exists only when the library is preloaded (its size is
 * requested at server start).  The rest is created at startup when
 * preloaded, otherwise on first use from the space PostgreSQL keeps spare.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_STATS_H
#define WORKLIST_STATS_H

#include "worklist.h"

#include "port/atomics.h"
#include "storage/lwlock.h"

#define WL_ERROR_LEN		512
/* Tenants in error a sweeper slot names (sweeper_status.tenants_in_error). */
#define WL_ERROR_TENANTS	8
/* Databases the launcher can be asked to look at before it drains them. */
#define WL_PROBE_MAX		32

/* Tenants whose counters shared memory holds (worklist.max_tenant_counters). */
extern int	wl_max_tenant_counters;
/* A tenant name: 256 characters of at most 4 bytes, and the NUL. */
#define WL_TENANT_KEY_LEN	(WL_IDENT_MAX * 4 + 1)

/* Key of the tenant hash: a tenant of one database. */
typedef struct WlTenantKey
{
	Oid			database;
	char		tenant[WL_TENANT_KEY_LEN];
} WlTenantKey;

/* What shared memory keeps for one tenant of one database. */
typedef struct WlTenantEntry
{
	WlTenantKey key;			/* hash key */
	pg_atomic_uint64 counters[WL_COUNT__N];
	/* notifications committed and not yet sent, per WlChange */
	pg_atomic_uint32 events[WL_CHANGE__N];
	pg_atomic_uint32 queued;	/* 1 while on the dirty list */
	struct WlTenantEntry *next_dirty;	/* under tenants_lock */
} WlTenantEntry;

/* Why the last sweeper of a slot left. */
typedef enum WlSweeperExit
{
	WL_EXIT_NONE,				/* still running, or never started */
	WL_EXIT_FAILED,				/* an error or a signal ended it */
	WL_EXIT_NO_EXTENSION,		/* the database lacks the extension */
	WL_EXIT_STOPPED,			/* asked to leave the database alone */
	WL_EXIT_DUPLICATE			/* another sweeper already works there */
} WlSweeperExit;

/* One database's sweeper: its control fields and the status it shows. */
typedef struct WlSweeperSlot
{
	Oid			database;		/* InvalidOid: free */
	pid_t		pid;			/* the running sweeper, 0 if none */
	int			pgprocno;		/* its PGPROC (for its latch), or -1 */
	TimestampTz used_at;		/* last start or pause: the oldest is reused */
	/* start_sweeper() without preloading: one caller starts, others wait */
	pid_t		starter;
	TimestampTz starting_since;
	/* a backend about to take a lock the sweeper must not be in the way of */
	pid_t		paused_by;
	bool		stop_requested;
	bool		recheck_extension;	/* CREATE/ALTER/DROP EXTENSION committed */
	bool		notify_pending; /* tenant entries of the database are queued */
	WlSweeperExit exit_reason;
	bool		ran;			/* its last sweeper found the extension */
	int			connect_failures;	/* restarts that never connected */
	/* status, as worklist.sweeper_status shows it */
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
} WlSweeperSlot;

typedef struct WlShared
{
	int			tranche_id;		/* of the two LWLocks below */
	LWLock		lock;			/* slots, launcher fields */
	LWLock		tenants_lock;	/* the tenant hash */
	bool		tenants_full;	/* an entry could not be added */
	WlTenantEntry *dirty_head;	/* entries with notifications waiting */
	/* the launcher (preloaded only) */
	pid_t		launcher_pid;
	int			launcher_procno;
	int			nprobe;			/* databases to look at again */
	bool		probe_all;		/* more than WL_PROBE_MAX were asked for */
	Oid			probe[WL_PROBE_MAX];
	int			nslots;
	WlSweeperSlot slots[FLEXIBLE_ARRAY_MEMBER];
} WlShared;

/* True when loaded through shared_preload_libraries. */
extern bool wl_preloaded;

/*
 * The shared block: created at startup when preloaded; otherwise attached
 * on first use (a dynamically started sweeper still needs somewhere to
 * report to).  Never returns NULL.
 */
extern WlShared *wl_shared_attach(void);

/*
 * The entry of a tenant of a database; with create, added if missing
 * (NULL when the hash is full, with one log line the first time).  NULL
 * when not preloaded.  Never raises: called at commit.
 */
extern WlTenantEntry *wl_tenant_entry(Oid database, const char *tenant, bool create);
/*
 * Put the entry on the list of entries with notifications waiting, unless
 * it is there already; true when it was not (the sweeper must be woken).
 */
extern bool wl_tenant_queue(WlTenantEntry *entry);

/*
 * The counters of a tenant of the current database, copied into out[];
 * false when they are not kept (library not preloaded, or more tenants
 * than the table holds).
 */
extern bool wl_tenant_counters(const char *tenant, uint64 *out);

/*
 * What the current transaction did, per tenant and (sub)transaction level:
 * counts for the counters and events for notifications.  Added to shared
 * memory when the transaction commits (the events: sent at commit when
 * not preloaded); dropped with a (sub)transaction that rolls back.
 */
typedef struct WlXactTenant
{
	char	   *tenant;
	int			nest_level;
	bool		open_only;		/* reached only through worklist.open_tenants:
								 * takes no place in shared memory */
	uint32		counts[WL_COUNT__N];
	uint32		events[WL_CHANGE__N];
} WlXactTenant;

/* The record of a tenant at the current level (TopTransactionContext). */
extern WlXactTenant *wl_xact_tenant(const char *tenant);

/* notify.c: send the events of the records given (not preloaded), at commit. */
extern void wl_notify_at_commit(List *records);
/* notify.c: wake the sweeper of the current database (notifications wait). */
extern void wl_notify_wake_sweeper(void);

#endif							/* WORKLIST_STATS_H */

/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  Every structure the extension keeps in shared memory, and the only
 *	  code that touches one.
 *
 * Three structures, each with its locks:
 *
 *	 The main block (WlShared): one slot per database that has, or had, a
 *	 sweeper, and the launcher's fields.  Created at server start when the
 *	 library is preloaded; otherwise on first use from the space PostgreSQL
 *	 keeps spare (a sweeper started by start_sweeper() still needs
 *	 somewhere to report to), with room for WL_SLOTS_DYNAMIC databases.
 *
 *	 The tenant table (a hash of WlTenantEntry by database and tenant): the
 *	 cumulative counters of stats() and the notifications committed and not
 *	 yet sent.  Only when preloaded (its size, worklist.max_tenant_counters,
 *	 is requested at server start).
 *
 *	 The claim hints (a hash of HintEntry by database, task table and
 *	 tenant; hint.c says what a hint means and why it stays a lower bound).
 *	 Only when preloaded.
 *
 * Locking protocol:
 *
 *	 WlShared.lock (LWLock, tranche "worklist") guards every field of the
 *		slots and the launcher's fields: read under it shared, written
 *		under it exclusive.  Nothing that can fail runs while it is held.
 *	 WlShared.tenants_lock (LWLock, tranche "worklist") guards the
 *		membership of the tenant table (shared to look an entry up,
 *		exclusive to add one), tenants_full, and the list of entries that
 *		have notifications waiting (dirty_head and each entry's next_dirty;
 *		exclusive to change).  Entries are never removed, so a pointer to
 *		one stays valid for the life of the server.  The counters and
 *		events of an entry are atomics, changed without the lock once the
 *		entry is found.  An entry is on the list exactly while its "queued"
 *		flag is 1: whoever turns the flag from 0 to 1 (compare-and-exchange)
 *		links it; the sender unlinks it, resets the flag, and only then
 *		takes the counts (atomic exchange), so a count added meanwhile is
 *		either taken or queues the entry again.  Whoever queues an entry
 *		then sets the notify_pending flag of its database's slot and that
 *		sweeper's latch (wl_shm_notify_wake); the sweeper clears the flag
 *		before it unlinks.
 *	 HintShared.lock (LWLock, tranche "worklist hints") guards the hint
 *		table and every field of its entries but "claims", an atomic
 *		counted under the lock held shared: shared to read a hint,
 *		exclusive to create an entry, raise, lower, reset or unpin one.
 *		any_pinned is written under it exclusive and read without it (a
 *		stale read only puts an unpin off to the sweeper's next tick).
 *		Keys are compared in C by priority and instant only, never by id,
 *		so no collation is needed.
 *
 * Latches are set after the lock is released.
 *
 *-------------------------------------------------------------------------
 */
#include "shmem.h"
#include "worker.h"

#include "common/hashfn.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/hsearch.h"

/* Sweeper slots without preloading: a few databases can use start_sweeper(). */
#define WL_SLOTS_DYNAMIC	4
/* With preloading: one per worker process, and a few for paused databases. */
#define WL_SLOTS_SPARE		8

/* One database's sweeper: its control fields and the status it shows. */
struct WlSlot
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
	WlSweeperStatus status;		/* what worklist.sweeper_status shows */
};

/* Key of the tenant table: a tenant of one database. */
typedef struct WlTenantKey
{
	Oid			database;
	char		tenant[WL_TENANT_KEY_LEN];
} WlTenantKey;

/* What shared memory keeps for one tenant of one database. */
struct WlTenantEntry
{
	WlTenantKey key;			/* hash key */
	pg_atomic_uint64 counters[WL_COUNT__N];
	/* notifications committed and not yet sent, per WlChange */
	pg_atomic_uint32 events[WL_CHANGE__N];
	pg_atomic_uint32 queued;	/* 1 while on the dirty list */
	struct WlTenantEntry *next_dirty;	/* under tenants_lock */
};

typedef struct WlShared
{
	int			tranche_id;		/* of the two LWLocks below */
	LWLock		lock;			/* slots, launcher fields */
	LWLock		tenants_lock;	/* the tenant table */
	bool		tenants_full;	/* an entry could not be added */
	WlTenantEntry *dirty_head;	/* entries with notifications waiting */
	/* the launcher (preloaded only) */
	pid_t		launcher_pid;
	int			launcher_procno;
	int			nprobe;			/* databases to look at again */
	bool		probe_all;		/* more than WL_PROBE_MAX were asked for */
	Oid			probe[WL_PROBE_MAX];
	int			nslots;
	WlSlot		slots[FLEXIBLE_ARRAY_MEMBER];
} WlShared;

typedef struct HintKey
{
	Oid			database;
	Oid			table;			/* worklist.task of that database */
	char		tenant[WL_TENANT_KEY_LEN];
} HintKey;

typedef struct HintEntry
{
	HintKey		key;			/* hash key */
	uint64		version;		/* bumped by every lowering */
	uint64		raises;			/* bumped by every raise */
	pg_atomic_uint32 claims;	/* claims that read it since the last raise */
	/* the prepared transactions that lowered it (see hint.c) */
	TransactionId pins[WL_HINT_PINS];
	int			npins;
	bool		pins_overflow;	/* and more than WL_HINT_PINS of them */
	WlQueueKey	at;				/* the hint */
} HintEntry;

typedef struct HintShared
{
	LWLock	   *lock;
	bool		full_logged;
	bool		any_pinned;		/* some entry is pinned */
} HintShared;

const WlQueueKey wl_queue_key_min = {PG_INT64_MIN, DT_NOBEGIN, ""};
const WlQueueKey wl_queue_key_max = {PG_INT64_MAX, DT_NOEND, ""};

/* worklist.max_tenant_counters: entries of the tenant and hint tables */
static int	max_tenant_counters = 4096;

static bool preloaded = false;
static WlShared *wl_shared = NULL;
static HTAB *tenant_hash = NULL;
static HintShared *hint_shared = NULL;
static HTAB *hints = NULL;

/* ----------
 * Set-up
 * ----------
 */
void
wl_shmem_init(void)
{
	/* sizes shared memory: only when preloaded (counters need that anyway) */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("worklist.max_tenant_counters",
								"Tenants whose cumulative counters shared memory holds.",
								"Counters of further tenants are not kept (stats() shows them as NULL).",
								&max_tenant_counters,
								4096, 16, 1000000,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);
}

void
wl_shmem_preload(void)
{
	preloaded = true;
}

bool
wl_shm_preloaded(void)
{
	return preloaded;
}

static int
slot_count(void)
{
	return preloaded ? max_worker_processes + WL_SLOTS_SPARE : WL_SLOTS_DYNAMIC;
}

static Size
shared_size(void)
{
	return add_size(offsetof(WlShared, slots),
					mul_size(slot_count(), sizeof(WlSlot)));
}

void
wl_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(shared_size()));
	RequestAddinShmemSpace(hash_estimate_size(max_tenant_counters,
											  sizeof(WlTenantEntry)));
	RequestAddinShmemSpace(MAXALIGN(sizeof(HintShared)));
	RequestAddinShmemSpace(hash_estimate_size(max_tenant_counters,
											  sizeof(HintEntry)));
	RequestNamedLWLockTranche("worklist hints", 1);
}

/* The tenant table compares the database and the name up to its NUL. */
static uint32
tenant_key_hash(const void *key, Size keysize)
{
	const WlTenantKey *k = (const WlTenantKey *) key;

	return hash_bytes((const unsigned char *) k->tenant, strlen(k->tenant)) ^
		hash_uint32((uint32) k->database);
}

static int
tenant_key_match(const void *key1, const void *key2, Size keysize)
{
	const WlTenantKey *a = (const WlTenantKey *) key1;
	const WlTenantKey *b = (const WlTenantKey *) key2;

	if (a->database != b->database)
		return 1;
	return strcmp(a->tenant, b->tenant);
}

/*
 * The main block: created at startup when preloaded; otherwise attached
 * on first use.  Never returns NULL.
 */
static WlShared *
shared_attach(void)
{
	bool		found;

	if (wl_shared)
		return wl_shared;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	wl_shared = ShmemInitStruct("worklist", shared_size(), &found);
	if (!found)
	{
		memset(wl_shared, 0, shared_size());
		wl_shared->tranche_id = LWLockNewTrancheId();
		LWLockInitialize(&wl_shared->lock, wl_shared->tranche_id);
		LWLockInitialize(&wl_shared->tenants_lock, wl_shared->tranche_id);
		wl_shared->launcher_procno = -1;
		wl_shared->nslots = slot_count();
		for (int i = 0; i < wl_shared->nslots; i++)
			wl_shared->slots[i].pgprocno = -1;
	}
	if (preloaded)
	{
		HASHCTL		info;

		info.keysize = sizeof(WlTenantKey);
		info.entrysize = sizeof(WlTenantEntry);
		info.hash = tenant_key_hash;
		info.match = tenant_key_match;
		tenant_hash = ShmemInitHash("worklist tenants",
									max_tenant_counters,
									max_tenant_counters,
									&info,
									HASH_ELEM | HASH_FUNCTION | HASH_COMPARE);
	}
	LWLockRelease(AddinShmemInitLock);
	LWLockRegisterTranche(wl_shared->tranche_id, "worklist");
	return wl_shared;
}

static void
hints_attach(void)
{
	bool		found;
	HASHCTL		info;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	hint_shared = ShmemInitStruct("worklist hint state", sizeof(HintShared), &found);
	if (!found)
	{
		hint_shared->lock = &(GetNamedLWLockTranche("worklist hints"))->lock;
		hint_shared->full_logged = false;
		hint_shared->any_pinned = false;
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(HintKey);
	info.entrysize = sizeof(HintEntry);
	hints = ShmemInitHash("worklist hints", max_tenant_counters,
						  max_tenant_counters, &info,
						  HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

void
wl_shmem_startup(void)
{
	wl_shared = NULL;
	(void) shared_attach();
	hints_attach();
}

/* ----------
 * Slots
 * ----------
 */

/* Lock the slots and the launcher's fields in mode; unlock_slots() ends it. */
static WlShared *
lock_slots(LWLockMode mode)
{
	WlShared   *shared = shared_attach();

	LWLockAcquire(&shared->lock, mode);
	return shared;
}

static void
unlock_slots(void)
{
	LWLockRelease(&wl_shared->lock);
}

/* The slot of a database, or NULL.  The slots are locked. */
static WlSlot *
slot_find(WlShared *shared, Oid database)
{
	for (int i = 0; i < shared->nslots; i++)
		if (shared->slots[i].database == database)
			return &shared->slots[i];
	return NULL;
}

/* Lock the slots in mode, and find the database's (NULL: none). */
static WlSlot *
lock_slot(Oid database, LWLockMode mode)
{
	return slot_find(lock_slots(mode), database);
}

/*
 * The slot of a database, taking a free one (or the one unused longest)
 * when it has none; NULL when every slot is busy.  The slots are locked
 * exclusively.
 */
static WlSlot *
slot_take(Oid database)
{
	WlSlot	   *slot = slot_find(wl_shared, database);
	WlSlot	   *oldest = NULL;

	if (slot)
		return slot;
	for (int i = 0; i < wl_shared->nslots; i++)
	{
		WlSlot	   *s = &wl_shared->slots[i];

		if (s->database == InvalidOid)
		{
			oldest = s;
			break;
		}
		/* a slot whose database nobody works in or holds may be reused */
		if (wl_pid_alive(s->pid) || wl_pid_alive(s->paused_by) ||
			wl_pid_alive(s->starter))
			continue;
		if (oldest == NULL || s->used_at < oldest->used_at)
			oldest = s;
	}
	if (oldest == NULL)
		return NULL;
	memset(oldest, 0, sizeof(*oldest));
	oldest->database = database;
	oldest->pgprocno = -1;
	oldest->used_at = GetCurrentTimestamp();
	return oldest;
}

static void
set_latch(int procno)
{
	if (procno >= 0)
		SetLatch(&GetPGProcByNumber(procno)->procLatch);
}

int
wl_shm_slot_count(void)
{
	return shared_attach()->nslots;
}

bool
wl_shm_slot_give_up(Oid database, int attempts)
{
	WlSlot	   *slot = lock_slot(database, LW_EXCLUSIVE);
	bool		give_up = false;

	if (slot && slot->pid == 0)
	{
		give_up = slot->connect_failures >= attempts;
		if (give_up)
			slot->connect_failures = 0;
		else
			slot->connect_failures++;
	}
	unlock_slots();
	return give_up;
}

WlSlotClaim
wl_shm_slot_claim(Oid database, WlSlot **claimed, pid_t *other)
{
	WlSlot	   *slot;
	WlSlotClaim result = WL_SLOT_CLAIMED;

	*claimed = NULL;
	*other = 0;
	lock_slots(LW_EXCLUSIVE);
	slot = slot_take(database);
	if (slot == NULL)
		result = WL_SLOT_FULL;
	else if (slot->pid != 0 && slot->pid != MyProcPid && wl_pid_alive(slot->pid))
	{
		*other = slot->pid;
		result = WL_SLOT_TAKEN;
	}
	else if (wl_pid_alive(slot->paused_by))
		result = WL_SLOT_PAUSED;
	else
	{
		slot->pid = MyProcPid;
		slot->pgprocno = MyProc->pgprocno;
		slot->used_at = GetCurrentTimestamp();
		slot->status.started_at = slot->used_at;
		slot->exit_reason = WL_EXIT_NONE;
		slot->stop_requested = false;
		slot->recheck_extension = false;
		slot->ran = false;
		slot->connect_failures = 0;
		slot->starter = 0;
		slot->status.n_error_tenants = 0;	/* this sweeper's failures are its own */
		slot->notify_pending = true;	/* send what waited meanwhile */
		*claimed = slot;
	}
	unlock_slots();
	return result;
}

void
wl_shm_slot_release(WlSlot *slot, bool failed)
{
	lock_slots(LW_EXCLUSIVE);
	if (slot->pid == MyProcPid)
	{
		slot->pid = 0;
		slot->pgprocno = -1;
		if (failed && slot->exit_reason == WL_EXIT_NONE)
			slot->exit_reason = WL_EXIT_FAILED;
	}
	unlock_slots();
}

void
wl_shm_slot_exit(WlSlot *slot, WlSweeperExit reason)
{
	lock_slots(LW_EXCLUSIVE);
	if (slot && slot->pid == MyProcPid)
		slot->exit_reason = reason;
	unlock_slots();
}

void
wl_shm_slot_ran(WlSlot *slot)
{
	lock_slots(LW_EXCLUSIVE);
	slot->ran = true;
	unlock_slots();
}

bool
wl_shm_slot_stop_requested(WlSlot *slot)
{
	bool		asked;

	lock_slots(LW_SHARED);
	asked = slot->stop_requested;
	unlock_slots();
	return asked;
}

bool
wl_shm_slot_take_recheck(WlSlot *slot)
{
	bool		asked;

	lock_slots(LW_EXCLUSIVE);
	asked = slot->recheck_extension;
	slot->recheck_extension = false;
	unlock_slots();
	return asked;
}

void
wl_shm_slot_tick(WlSlot *slot, TimestampTz start, TimestampTz end,
				 const WlSweepResult *done)
{
	lock_slots(LW_EXCLUSIVE);
	slot->status.last_tick = end;
	slot->status.last_duration_ms = (double) (end - start) / 1000.0;
	slot->status.ticks++;
#define ADD(name) slot->status.totals.name += done->name;
	WL_SWEEP_COUNTS(ADD)
#undef ADD
	unlock_slots();
}

/* Copy a message cut at a character boundary (half a character is not text). */
static void
copy_text(char *dst, size_t size, const char *src)
{
	int			len = pg_mbcliplen(src, strlen(src), size - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

void
wl_shm_slot_error(WlSlot *slot, const char *tenant, const char *message)
{
	WlSweeperStatus *s = &slot->status;
	TimestampTz at = GetCurrentTimestamp();

	lock_slots(LW_EXCLUSIVE);
	s->last_error_at = at;
	copy_text(s->last_error, sizeof(s->last_error), message);
	strlcpy(s->last_error_tenant, tenant ? tenant : "",
			sizeof(s->last_error_tenant));
	if (tenant)
	{
		bool		listed = false;

		for (int i = 0; i < s->n_error_tenants && !listed; i++)
			listed = strcmp(s->error_tenants[i], tenant) == 0;
		if (!listed && s->n_error_tenants < WL_ERROR_TENANTS)
			strlcpy(s->error_tenants[s->n_error_tenants++], tenant,
					WL_TENANT_KEY_LEN);
	}
	unlock_slots();
}

void
wl_shm_slot_unlist_error(WlSlot *slot, const char *tenant)
{
	WlSweeperStatus *s = &slot->status;

	lock_slots(LW_EXCLUSIVE);
	for (int i = 0; i < s->n_error_tenants; i++)
		if (strcmp(s->error_tenants[i], tenant) == 0)
		{
			int			last = --s->n_error_tenants;

			if (i != last)
				memcpy(s->error_tenants[i], s->error_tenants[last],
					   WL_TENANT_KEY_LEN);
			break;
		}
	unlock_slots();
}

void
wl_shm_launcher_register(void)
{
	WlShared   *shared = lock_slots(LW_EXCLUSIVE);

	shared->launcher_pid = MyProcPid;
	shared->launcher_procno = MyProc->pgprocno;
	unlock_slots();
}

void
wl_shm_launcher_unregister(void)
{
	WlShared   *shared = lock_slots(LW_EXCLUSIVE);

	if (shared->launcher_pid == MyProcPid)
	{
		shared->launcher_pid = 0;
		shared->launcher_procno = -1;
	}
	unlock_slots();
}

int
wl_shm_launcher_take_probes(Oid *probe, bool *all)
{
	WlShared   *shared = lock_slots(LW_EXCLUSIVE);
	int			n = shared->nprobe;

	memcpy(probe, shared->probe, sizeof(Oid) * n);
	*all = shared->probe_all;
	shared->nprobe = 0;
	shared->probe_all = false;
	unlock_slots();
	return n;
}

bool
wl_shm_slot_prepare(Oid database)
{
	WlSlot	   *slot;

	lock_slots(LW_EXCLUSIVE);
	slot = slot_take(database);
	if (slot)
	{
		slot->exit_reason = WL_EXIT_NONE;
		slot->ran = false;
		slot->used_at = GetCurrentTimestamp();
	}
	unlock_slots();
	return slot != NULL;
}

void
wl_shm_slot_exit_status(Oid database, WlSweeperExit *reason, bool *ran)
{
	WlSlot	   *slot = lock_slot(database, LW_SHARED);

	*reason = slot ? slot->exit_reason : WL_EXIT_FAILED;
	*ran = slot ? slot->ran : false;
	unlock_slots();
}

void
wl_shm_slot_forget(Oid database)
{
	WlSlot	   *slot = lock_slot(database, LW_EXCLUSIVE);

	if (slot && slot->pid == 0 && !wl_pid_alive(slot->paused_by))
		slot->database = InvalidOid;
	unlock_slots();
}

void
wl_shm_slot_state(Oid database, bool *running, bool *paused)
{
	WlSlot	   *slot = lock_slot(database, LW_SHARED);

	*running = slot && wl_pid_alive(slot->pid);
	*paused = slot && wl_pid_alive(slot->paused_by);
	unlock_slots();
}

void
wl_shm_launcher_wake(void)
{
	int			procno = lock_slots(LW_SHARED)->launcher_procno;

	unlock_slots();
	set_latch(procno);
}

void
wl_shm_launcher_probe(Oid database)
{
	WlShared   *shared = lock_slots(LW_EXCLUSIVE);

	if (shared->nprobe < WL_PROBE_MAX)
		shared->probe[shared->nprobe++] = database;
	else
		shared->probe_all = true;
	unlock_slots();
	wl_shm_launcher_wake();
}

pid_t
wl_shm_slot_pause(Oid database)
{
	/*
	 * Only a database whose sweeper runs is paused: no slot is taken, or
	 * kept from reuse, for one that has none (that would let a role owning
	 * many databases fill the slots by pausing them all in one
	 * transaction).
	 */
	WlSlot	   *slot = lock_slot(database, LW_EXCLUSIVE);
	pid_t		pid = 0;
	int			procno = -1;

	if (slot && wl_pid_alive(slot->pid))
	{
		slot->paused_by = MyProcPid;
		slot->used_at = GetCurrentTimestamp();
		pid = slot->pid;
		procno = slot->pgprocno;
		slot->stop_requested = true;
	}
	unlock_slots();
	set_latch(procno);
	return pid;
}

bool
wl_shm_slot_left(Oid database, pid_t pid)
{
	WlSlot	   *slot = lock_slot(database, LW_SHARED);
	bool		gone = (slot == NULL || slot->pid != pid);

	unlock_slots();
	return gone;
}

void
wl_shm_slot_unpause(Oid database)
{
	WlSlot	   *slot = lock_slot(database, LW_EXCLUSIVE);

	if (slot && slot->paused_by == MyProcPid)
		slot->paused_by = 0;
	unlock_slots();
}

void
wl_shm_slot_recheck(Oid database)
{
	WlSlot	   *slot = lock_slot(database, LW_EXCLUSIVE);
	int			procno = -1;

	if (slot && slot->pid != 0)
	{
		slot->recheck_extension = true;
		procno = slot->pgprocno;
	}
	unlock_slots();
	set_latch(procno);
}

pid_t
wl_shm_sweeper_pid(Oid database)
{
	WlSlot	   *slot = lock_slot(database, LW_SHARED);
	pid_t		pid = 0;

	if (slot && wl_pid_alive(slot->pid))
		pid = slot->pid;
	unlock_slots();
	return pid;
}

WlSlotStart
wl_shm_slot_start(Oid database, pid_t *pid)
{
	WlSlot	   *slot;
	WlSlotStart result = WL_START_WAIT;

	*pid = 0;
	lock_slots(LW_EXCLUSIVE);
	slot = slot_take(database);
	if (slot == NULL)
		result = WL_START_FULL;
	else if (wl_pid_alive(slot->pid))
	{
		*pid = slot->pid;
		result = WL_START_RUNNING;
	}
	else if (!wl_pid_alive(slot->starter) ||
			 TimestampDifferenceExceeds(slot->starting_since,
										GetCurrentTimestamp(), 30 * 1000))
	{
		slot->starter = MyProcPid;
		slot->starting_since = GetCurrentTimestamp();
		slot->used_at = slot->starting_since;
		slot->connect_failures = 0;
		result = WL_START_MINE;
	}
	unlock_slots();
	return result;
}

void
wl_shm_slot_started(Oid database)
{
	WlSlot	   *slot = lock_slot(database, LW_EXCLUSIVE);

	if (slot && slot->starter == MyProcPid)
		slot->starter = 0;
	unlock_slots();
}

bool
wl_shm_slot_status(Oid database, pid_t *pid, WlSweeperStatus *status)
{
	WlSlot	   *slot = lock_slot(database, LW_SHARED);

	if (slot)
	{
		*pid = slot->pid;
		*status = slot->status;
	}
	unlock_slots();
	return slot != NULL;
}

/* ----------
 * Tenants
 * ----------
 */
static void
make_tenant_key(WlTenantKey *key, Oid database, const char *tenant)
{
	memset(key, 0, sizeof(*key));
	key->database = database;
	strlcpy(key->tenant, tenant, sizeof(key->tenant));
}

WlTenantEntry *
wl_shm_tenant(Oid database, const char *tenant, bool create)
{
	WlShared   *shared;
	WlTenantEntry *entry;
	WlTenantKey key;
	bool		found;
	bool		became_full = false;

	if (!preloaded)
		return NULL;
	shared = shared_attach();
	make_tenant_key(&key, database, tenant);

	LWLockAcquire(&shared->tenants_lock, LW_SHARED);
	entry = hash_search(tenant_hash, &key, HASH_FIND, NULL);
	LWLockRelease(&shared->tenants_lock);
	if (entry != NULL || !create)
		return entry;

	LWLockAcquire(&shared->tenants_lock, LW_EXCLUSIVE);
	/* a hard cap: the table must not eat shared memory others need */
	if (hash_get_num_entries(tenant_hash) < max_tenant_counters)
		entry = hash_search(tenant_hash, &key, HASH_ENTER_NULL, &found);
	else
		entry = hash_search(tenant_hash, &key, HASH_FIND, &found);
	if (entry == NULL)
	{
		became_full = !shared->tenants_full;
		shared->tenants_full = true;
	}
	else if (!found)
	{
		for (int i = 0; i < WL_COUNT__N; i++)
			pg_atomic_init_u64(&entry->counters[i], 0);
		for (int i = 0; i < WL_CHANGE__N; i++)
			pg_atomic_init_u32(&entry->events[i], 0);
		pg_atomic_init_u32(&entry->queued, 0);
		entry->next_dirty = NULL;
	}
	LWLockRelease(&shared->tenants_lock);

	if (became_full)
		ereport(LOG,
				(errmsg("worklist tenant table is full: counters and notifications of further tenants are not kept"),
				 errdetail("Shared memory holds %d tenants (of all databases).",
						   max_tenant_counters),
				 errhint("Raise worklist.max_tenant_counters (needs a restart).")));
	return entry;
}

void
wl_shm_tenant_count(WlTenantEntry *entry, WlCounter counter, uint32 n)
{
	pg_atomic_fetch_add_u64(&entry->counters[counter], n);
}

/*
 * Put the entry on the list of entries with notifications waiting, unless
 * it is there already; true when it was not (the sweeper must be woken).
 */
static bool
tenant_queue(WlTenantEntry *entry)
{
	uint32		expected = 0;
	WlShared   *shared;

	if (!pg_atomic_compare_exchange_u32(&entry->queued, &expected, 1))
		return false;
	shared = shared_attach();
	LWLockAcquire(&shared->tenants_lock, LW_EXCLUSIVE);
	entry->next_dirty = shared->dirty_head;
	shared->dirty_head = entry;
	LWLockRelease(&shared->tenants_lock);
	return true;
}

bool
wl_shm_tenant_add(WlTenantEntry *entry, const uint32 *counts,
				  const uint32 *events)
{
	bool		any = false;

	if (counts)
		for (int i = 0; i < WL_COUNT__N; i++)
			if (counts[i] != 0)
				pg_atomic_fetch_add_u64(&entry->counters[i], counts[i]);
	if (events)
		for (int i = 0; i < WL_CHANGE__N; i++)
			if (events[i] != 0)
			{
				pg_atomic_fetch_add_u32(&entry->events[i], events[i]);
				any = true;
			}
	return any && tenant_queue(entry);
}

void
wl_shm_tenant_counters(WlTenantEntry *entry, uint64 *out)
{
	for (int i = 0; i < WL_COUNT__N; i++)
		out[i] = pg_atomic_read_u64(&entry->counters[i]);
}

bool
wl_shm_tenants_full(void)
{
	WlShared   *shared = shared_attach();
	bool		full;

	LWLockAcquire(&shared->tenants_lock, LW_SHARED);
	full = shared->tenants_full;
	LWLockRelease(&shared->tenants_lock);
	return full;
}

void
wl_shm_notify_wake(Oid database)
{
	WlSlot	   *slot = lock_slot(database, LW_EXCLUSIVE);
	int			procno = -1;

	if (slot)
	{
		slot->notify_pending = true;
		procno = slot->pgprocno;
	}
	unlock_slots();
	set_latch(procno);
}

bool
wl_shm_notify_pending(Oid database)
{
	WlSlot	   *slot = lock_slot(database, LW_SHARED);
	bool		pending = slot && slot->notify_pending;

	unlock_slots();
	return pending;
}

int
wl_shm_take_events(Oid database, WlPendingEvents **out)
{
	WlShared   *shared = shared_attach();
	WlSlot	   *slot;
	WlTenantEntry *mine = NULL;
	WlTenantEntry **link;
	int			n = 0;
	int			size = 16;
	WlPendingEvents *pending;

	/* cleared first: whatever is queued from now on sets it again */
	slot = lock_slot(database, LW_EXCLUSIVE);
	if (slot)
		slot->notify_pending = false;
	unlock_slots();

	LWLockAcquire(&shared->tenants_lock, LW_EXCLUSIVE);
	link = &shared->dirty_head;
	while (*link != NULL)
	{
		WlTenantEntry *e = *link;

		if (e->key.database == database)
		{
			*link = e->next_dirty;
			e->next_dirty = mine;
			mine = e;
		}
		else
			link = &e->next_dirty;
	}
	LWLockRelease(&shared->tenants_lock);

	pending = palloc(sizeof(WlPendingEvents) * size);
	for (WlTenantEntry *e = mine; e != NULL;)
	{
		WlTenantEntry *next = e->next_dirty;
		WlPendingEvents *p = &pending[n];
		bool		any = false;

		e->next_dirty = NULL;
		pg_atomic_write_u32(&e->queued, 0);
		pg_memory_barrier();
		for (int i = 0; i < WL_CHANGE__N; i++)
		{
			p->events[i] = pg_atomic_exchange_u32(&e->events[i], 0);
			any |= (p->events[i] != 0);
		}
		if (any)
		{
			p->tenant = pstrdup(e->key.tenant);
			if (++n == size)
			{
				size *= 2;
				pending = repalloc(pending, sizeof(WlPendingEvents) * size);
			}
		}
		e = next;
	}
	*out = pending;
	return n;
}

/* ----------
 * Claim hints
 * ----------
 */
bool
wl_shm_hints_kept(void)
{
	return preloaded && hints != NULL;
}

static void
make_hint_key(HintKey *key, Oid table, const char *tenant)
{
	memset(key, 0, sizeof(*key));
	key->database = MyDatabaseId;
	key->table = table;
	strlcpy(key->tenant, tenant, sizeof(key->tenant));
}

/* A new entry, at the head.  The lock is held exclusively. */
static void
init_hint(HintEntry *entry)
{
	entry->version = 0;
	entry->raises = 0;
	pg_atomic_init_u32(&entry->claims, 0);
	entry->npins = 0;
	entry->pins_overflow = false;
	entry->at = wl_queue_key_min;
}

bool
wl_shm_hint_read(Oid table, const char *tenant, bool count, WlQueueKey *at,
				 uint64 *version, uint64 *raises, uint32 *claims)
{
	HintKey		key;
	HintEntry  *entry;

	make_hint_key(&key, table, tenant);
	LWLockAcquire(hint_shared->lock, LW_SHARED);
	entry = hash_search(hints, &key, HASH_FIND, NULL);
	if (entry)
	{
		*at = entry->at;
		*version = entry->version;
		*raises = entry->raises;
		if (count)
			*claims = pg_atomic_fetch_add_u32(&entry->claims, 1) + 1;
	}
	LWLockRelease(hint_shared->lock);
	return entry != NULL;
}

void
wl_shm_hint_raise(Oid table, const char *tenant, uint64 version,
				  uint64 raises, const WlQueueKey *to)
{
	HintKey		key;
	HintEntry  *entry;
	bool		found;
	bool		full = false;

	make_hint_key(&key, table, tenant);
	LWLockAcquire(hint_shared->lock, LW_EXCLUSIVE);
	entry = hash_search(hints, &key, HASH_ENTER_NULL, &found);
	if (entry == NULL)
		full = !hint_shared->full_logged;
	else if (!found)
	{
		/* a new entry: nothing was ever lowered or raised here */
		init_hint(entry);
		found = true;
	}
	if (entry && entry->npins == 0 && !entry->pins_overflow &&
		entry->version == version &&
		entry->raises == raises)
	{
		entry->at = *to;
		entry->raises++;
		pg_atomic_write_u32(&entry->claims, 0);
	}
	if (full)
		hint_shared->full_logged = true;
	LWLockRelease(hint_shared->lock);

	if (full)
		ereport(LOG,
				(errmsg("worklist claim hints are full: further tenants' claims start at the head of the queue"),
				 errhint("Raise worklist.max_tenant_counters (needs a restart).")));
}

/* Remember that prepared transaction xid pinned entry (lock exclusive). */
static void
pin_hint(HintEntry *entry, TransactionId xid)
{
	for (int i = 0; i < entry->npins; i++)
		if (entry->pins[i] == xid)
			return;
	if (entry->npins < WL_HINT_PINS)
		entry->pins[entry->npins++] = xid;
	else
		entry->pins_overflow = true;
	hint_shared->any_pinned = true;
}

void
wl_shm_hint_lower(Oid table, const char *tenant, int64 neg_priority,
				  TimestampTz created_at, TransactionId pin)
{
	HintKey		key;
	HintEntry  *entry;
	bool		found;

	make_hint_key(&key, table, tenant);
	LWLockAcquire(hint_shared->lock, LW_EXCLUSIVE);
	/*
	 * A missing entry is made (at the head), so that a claim that read "no
	 * entry" before this cannot raise past the row once it makes one.
	 */
	entry = hash_search(hints, &key, HASH_ENTER_NULL, &found);
	if (entry && !found)
		init_hint(entry);
	if (entry && TransactionIdIsValid(pin))
		pin_hint(entry, pin);
	if (entry)
	{
		if (neg_priority < entry->at.neg_priority ||
			(neg_priority == entry->at.neg_priority &&
			 created_at <= entry->at.created_at))
		{
			entry->at.neg_priority = neg_priority;
			entry->at.created_at = created_at;
			entry->at.id[0] = '\0';
		}
		entry->version++;
	}
	LWLockRelease(hint_shared->lock);
}

void
wl_shm_hint_reset(Oid database)
{
	HASH_SEQ_STATUS scan;
	HintEntry  *entry;

	LWLockAcquire(hint_shared->lock, LW_EXCLUSIVE);
	hash_seq_init(&scan, hints);
	while ((entry = hash_seq_search(&scan)) != NULL)
	{
		if (entry->key.database != database)
			continue;
		entry->at = wl_queue_key_min;
		entry->version++;
	}
	LWLockRelease(hint_shared->lock);
}

bool
wl_shm_hints_pinned(void)
{
	return hint_shared->any_pinned;
}

/* Is xid among the n transactions of prepared? */
static bool
still_prepared(TransactionId xid, const TransactionId *prepared, int n)
{
	for (int i = 0; i < n; i++)
		if (prepared[i] == xid)
			return true;
	return false;
}

void
wl_shm_hint_unpin(Oid database, const TransactionId *prepared, int n)
{
	HASH_SEQ_STATUS scan;
	HintEntry  *entry;
	bool		pinned_left = false;

	LWLockAcquire(hint_shared->lock, LW_EXCLUSIVE);
	hash_seq_init(&scan, hints);
	while ((entry = hash_seq_search(&scan)) != NULL)
	{
		if (entry->key.database == database)
		{
			int			kept = 0;

			for (int i = 0; i < entry->npins; i++)
				if (still_prepared(entry->pins[i], prepared, n))
					entry->pins[kept++] = entry->pins[i];
			entry->npins = kept;
			/* which ones it lost count of is unknown: wait for none */
			if (n == 0)
				entry->pins_overflow = false;
		}
		if (entry->npins > 0 || entry->pins_overflow)
			pinned_left = true;
	}
	hint_shared->any_pinned = pinned_left;
	LWLockRelease(hint_shared->lock);
}

/*-------------------------------------------------------------------------
 *
 * hint.c
 *	  Where claim_next starts looking: a per-tenant lower bound on the
 *	  claimable tasks, so a claim's cost does not grow with the time an old
 *	  snapshot has been held.
 *
 * Every claim, and every settlement of an unclaimed task, leaves a dead
 * entry at the head of the queue index (task_claimable).  A claim that
 * meets one marks it dead in the index so later claims skip it -- but only
 * once no snapshot older than the change that killed it is held.  While a
 * report, a pg_dump or an idle-in-transaction session holds one, every
 * claim_next walks every entry the claims since left behind, and
 * throughput collapses.  So claim_next does not start at the head: it
 * starts at the tenant's hint, a key in queue order (negated priority,
 * created_at, id) below which no task is claimable, kept in shared memory.
 *
 * The rules that keep the hint a lower bound:
 *	 - claim_next reads the hint (and the entry's version and raise count)
 *	   before its statement takes its snapshot.  A transaction that has
 *	   itself made tasks of the tenant claimable reads from the head
 *	   instead (its own changes are not lowered for until it commits).
 *	   The statement claims the first task for the caller's roles at or
 *	   after the hint.  One claim in WL_HINT_RAISE_EVERY (and each claim
 *	   after it until one succeeds) also finds F, the first task claimable
 *	   by anybody at or after the hint in its snapshot, and afterwards
 *	   raises the hint to F (or past everything, when there is no F) --
 *	   only if nothing lowered the hint
 *	   and nobody raised it since it was read, and only under READ
 *	   COMMITTED (an older transaction snapshot would see rows as claimable
 *	   that are not, and miss rows that are), and only in a transaction
 *	   that has not already taken rows out of the queue (a claim, a
 *	   settlement): its snapshot sees them gone, but they come back if it
 *	   rolls back.  Rows before F were, in that
 *	   snapshot, not claimable by anybody: claimed, settled, or gone.  A
 *	   claim that is not yet committed leaves its row claimable in every
 *	   other snapshot, so no hint passes it before it commits, and a claim
 *	   that rolls back needs nothing.
 *	 - every transaction that makes a task claimable (open_task, release,
 *	   escalate, a claim timeout, an escalating expiry) lowers the hint to
 *	   that task's key (with an empty id: below every id of its priority
 *	   and instant), once just before its commit becomes visible and once
 *	   just after, and bumps the version each time, which fails every raise
 *	   by a claim that read the hint before.  A raise therefore never
 *	   passes a row whose change committed after the raiser's read; a row
 *	   whose change committed earlier was lowered for before the read, or
 *	   is visible to the raiser's snapshot (so F does not pass it).
 * The relaxations: a task made claimable by a transaction that commits
 * while a claim_next is between reading the hint and taking its snapshot
 * (a few microseconds) may be passed over by that one call; the next call
 * sees it.  A transaction prepared for two-phase commit sends its tenants'
 * hints back to the head when it is prepared, but a claim may raise them
 * again before the prepared transaction is committed elsewhere: a task it
 * made claimable can then be passed over until the tenant's queue next
 * changes.  So a prepared transaction also pins its tenants' hints at the
 * head (no raise) until the sweeper finds that it is no longer prepared
 * (committed or rolled back elsewhere).  Each entry remembers which
 * prepared transactions pinned it (up to WL_HINT_PINS of them), so one
 * tenant's prepared transaction, left for as long as it likes, pins no
 * other tenant's hint: while it holds back the removal of dead entries,
 * a pinned hint would make every claim walk all that the claims since left
 * behind.  Only a tenant with more than WL_HINT_PINS of its own prepared
 * transactions pending at once stays pinned until the database has none.  Rows written behind the verbs' back -- the owner's own
 * INSERT, UPDATE or COPY into worklist.task, a data-only restore -- send
 * every hint of the database back to the head when that transaction
 * commits (a statement trigger, worklist.task_written); a new task table
 * (DROP and CREATE EXTENSION, a restore with --clean) starts with hints of
 * its own, since they are keyed by the table.  The hints start unknown
 * (the head) at server start.
 *
 * Locking: one LWLock guards the hash table and its entries (shared to
 * read a hint, exclusive to create an entry, raise or lower one).  Keys
 * are compared in C only by priority and instant, never by id, so no
 * collation is needed.  Without the library preloaded there is no shared
 * memory: claim_next starts at the head, as before.
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"
#include "stats.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/trigger.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

typedef struct HintKey
{
	Oid			database;
	Oid			table;			/* worklist.task of that database */
	char		tenant[WL_TENANT_KEY_LEN];
} HintKey;

/* Prepared transactions an entry remembers by their transaction id. */
#define WL_HINT_PINS 8

typedef struct HintEntry
{
	HintKey		key;			/* hash key */
	uint64		version;		/* bumped by every lowering */
	uint64		raises;			/* bumped by every raise */
	pg_atomic_uint32 claims;	/* claims that read it since the last raise */
	/* the prepared transactions that lowered it (see the file header) */
	TransactionId pins[WL_HINT_PINS];
	int			npins;
	bool		pins_overflow;	/* and more than WL_HINT_PINS of them */
	WlQueueKey	at;				/* the hint */
} HintEntry;

/*
 * How many claims read a hint for one that raises it.  Finding where the
 * queue starts is a second scan of task_claimable and a raise takes the
 * lock exclusively; raising on every claim would cost both on every claim.
 * Between two raises, claims walk at most the entries the claims since the
 * last raise left behind (dead, but not yet removable while an old snapshot
 * is held) -- a handful, whatever the snapshot's age.
 */
#define WL_HINT_RAISE_EVERY 8

typedef struct HintShared
{
	LWLock	   *lock;
	bool		full_logged;
	bool		any_pinned;		/* some entry is pinned */
} HintShared;

static HintShared *hint_shared = NULL;
static HTAB *hints = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static bool hints_enabled = false;

/* A tenant's lowest key made claimable by this transaction. */
typedef struct PendingLower
{
	char	   *tenant;
	int64		neg_priority;
	TimestampTz created_at;
} PendingLower;

static List *pending_lowers = NIL;	/* in TopTransactionContext */
static bool xact_took_rows = false;		/* wl_hint_took() in this transaction */
static bool xact_wrote_table = false;	/* worklist.task written behind the verbs */
static bool callbacks_registered = false;

const WlQueueKey wl_queue_key_min = {PG_INT64_MIN, DT_NOBEGIN, ""};
const WlQueueKey wl_queue_key_max = {PG_INT64_MAX, DT_NOEND, ""};

static void
hint_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(HintShared)));
	RequestAddinShmemSpace(hash_estimate_size(wl_max_tenant_counters,
											  sizeof(HintEntry)));
	RequestNamedLWLockTranche("worklist hints", 1);
}

static void
hint_shmem_startup(void)
{
	bool		found;
	HASHCTL		info;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

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
	hints = ShmemInitHash("worklist hints", wl_max_tenant_counters,
						  wl_max_tenant_counters, &info,
						  HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

void
wl_hint_shmem_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	hints_enabled = true;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = hint_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = hint_shmem_startup;
}

/* The OID of worklist.task in this database (InvalidOid: none). */
static Oid
task_table(void)
{
	Oid			nsp = get_namespace_oid("worklist", true);

	return OidIsValid(nsp) ? get_relname_relid("task", nsp) : InvalidOid;
}

/*
 * Whether this transaction may raise a hint at all: only under READ
 * COMMITTED, and only before it took rows out of the queue (see the file
 * header).
 */
static bool
may_raise(void)
{
	return !IsolationUsesXactSnapshot() && !xact_took_rows;
}

/* A new entry, at the head.  The lock is held exclusively. */
static void
init_entry(HintEntry *entry)
{
	entry->version = 0;
	entry->raises = 0;
	pg_atomic_init_u32(&entry->claims, 0);
	entry->npins = 0;
	entry->pins_overflow = false;
	entry->at = wl_queue_key_min;
}

static void
make_key(HintKey *key, const char *tenant)
{
	memset(key, 0, sizeof(*key));
	key->database = MyDatabaseId;
	key->table = task_table();
	strlcpy(key->tenant, tenant, sizeof(key->tenant));
}

bool
wl_hint_read(const char *tenant, WlQueueKey *at, uint64 *version,
			 uint64 *raises, bool *raise)
{
	HintKey		key;
	HintEntry  *entry;
	ListCell   *lc;
	bool		counts;

	*at = wl_queue_key_min;
	*version = 0;
	*raises = 0;
	if (raise)
		*raise = false;
	if (!hints_enabled || hints == NULL)
		return false;
	foreach(lc, pending_lowers)
	{
		if (strcmp(((PendingLower *) lfirst(lc))->tenant, tenant) == 0)
			return true;		/* from the head: see the file header */
	}
	/* a claim that could not raise neither counts nor asks to */
	counts = raise && may_raise();

	make_key(&key, tenant);
	LWLockAcquire(hint_shared->lock, LW_SHARED);
	entry = hash_search(hints, &key, HASH_FIND, NULL);
	if (entry)
	{
		*at = entry->at;
		*version = entry->version;
		*raises = entry->raises;
		/*
		 * Every WL_HINT_RAISE_EVERY-th claim since the last raise, and
		 * every claim after it until one raises (a lowering refuses the
		 * raises of the claims that read the hint before it).
		 */
		if (counts)
			*raise = pg_atomic_fetch_add_u32(&entry->claims, 1) + 1 >=
				WL_HINT_RAISE_EVERY;
	}
	else if (counts)
		*raise = true;			/* the first claim makes the entry */
	LWLockRelease(hint_shared->lock);
	return true;
}

void
wl_hint_raise(const char *tenant, uint64 version, uint64 raises,
			  const WlQueueKey *to)
{
	HintKey		key;
	HintEntry  *entry;
	bool		found;
	bool		full = false;

	if (!hints_enabled || hints == NULL || !may_raise())
		return;

	make_key(&key, tenant);
	LWLockAcquire(hint_shared->lock, LW_EXCLUSIVE);
	entry = hash_search(hints, &key, HASH_ENTER_NULL, &found);
	if (entry == NULL)
		full = !hint_shared->full_logged;
	else if (!found)
	{
		/* a new entry: nothing was ever lowered or raised here */
		init_entry(entry);
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

/* Remember that prepared transaction xid pinned entry. */
static void
pin_entry(HintEntry *entry, TransactionId xid)
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

/*
 * Lower the hint of tenant to (neg_priority, created_at, '') or below; pin
 * it there for the prepared transaction pin_xid when that is valid.
 */
static void
lower_now(const char *tenant, int64 neg_priority, TimestampTz created_at,
		  TransactionId pin_xid)
{
	HintKey		key;
	HintEntry  *entry;
	bool		found;

	make_key(&key, tenant);
	LWLockAcquire(hint_shared->lock, LW_EXCLUSIVE);
	/*
	 * A missing entry is made (at the head), so that a claim that read "no
	 * entry" before this cannot raise past the row once it makes one.
	 */
	entry = hash_search(hints, &key, HASH_ENTER_NULL, &found);
	if (entry && !found)
		init_entry(entry);
	if (entry && TransactionIdIsValid(pin_xid))
		pin_entry(entry, pin_xid);
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

/* Send every hint of this database back to the head. */
static void
reset_database(void)
{
	HASH_SEQ_STATUS scan;
	HintEntry  *entry;

	LWLockAcquire(hint_shared->lock, LW_EXCLUSIVE);
	hash_seq_init(&scan, hints);
	while ((entry = hash_seq_search(&scan)) != NULL)
	{
		if (entry->key.database != MyDatabaseId)
			continue;
		entry->at = wl_queue_key_min;
		entry->version++;
	}
	LWLockRelease(hint_shared->lock);
}

static void
hint_xact_callback(XactEvent event, void *arg)
{
	ListCell   *lc;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_COMMIT:
			foreach(lc, pending_lowers)
			{
				PendingLower *p = (PendingLower *) lfirst(lc);

				lower_now(p->tenant, p->neg_priority, p->created_at,
						  InvalidTransactionId);
			}
			if (xact_wrote_table)
				reset_database();
			if (event == XACT_EVENT_COMMIT)
			{
				pending_lowers = NIL;
				xact_took_rows = false;
				xact_wrote_table = false;
			}
			break;
		case XACT_EVENT_PREPARE:
			/*
			 * The changes become visible when somebody else commits the
			 * prepared transaction, where no callback of ours runs: send
			 * the tenant's claims back to the head now.
			 */
			foreach(lc, pending_lowers)
			{
				PendingLower *p = (PendingLower *) lfirst(lc);

				lower_now(p->tenant, PG_INT64_MIN, DT_NOBEGIN,
						  GetTopTransactionId());
			}
			if (xact_wrote_table)
				reset_database();
			pending_lowers = NIL;
			xact_took_rows = false;
			xact_wrote_table = false;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			pending_lowers = NIL;
			xact_took_rows = false;
			xact_wrote_table = false;
			break;
		default:
			break;
	}
}

static void
register_callbacks(void)
{
	if (!callbacks_registered)
	{
		RegisterXactCallback(hint_xact_callback, NULL);
		callbacks_registered = true;
	}
}

void
wl_hint_took(void)
{
	if (!hints_enabled)
		return;
	register_callbacks();
	xact_took_rows = true;
}

void
wl_hint_claimable(const char *tenant, int32 priority, TimestampTz created_at)
{
	int64		neg_priority = -((int64) priority);
	ListCell   *lc;
	PendingLower *p;
	MemoryContext old;

	if (!hints_enabled || hints == NULL)
		return;
	register_callbacks();
	foreach(lc, pending_lowers)
	{
		p = (PendingLower *) lfirst(lc);
		if (strcmp(p->tenant, tenant) == 0)
		{
			if (neg_priority < p->neg_priority ||
				(neg_priority == p->neg_priority && created_at < p->created_at))
			{
				p->neg_priority = neg_priority;
				p->created_at = created_at;
			}
			return;
		}
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	p = palloc(sizeof(PendingLower));
	p->tenant = pstrdup(tenant);
	p->neg_priority = neg_priority;
	p->created_at = created_at;
	pending_lowers = lappend(pending_lowers, p);
	MemoryContextSwitchTo(old);
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

/*
 * Called by the sweeper once a tick: unpin each hint of this database from
 * the prepared transactions that pinned it and are prepared no longer.
 * SPI must be begun.
 */
void
wl_hint_tick(void)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT x.transaction::pg_catalog.text FROM pg_catalog.pg_prepared_xacts x"
		" WHERE x.database OPERATOR(pg_catalog.=) pg_catalog.current_database()",
		0, {InvalidOid}, .name = "hint.prepared"
	};
	HASH_SEQ_STATUS scan;
	HintEntry  *entry;
	TransactionId *prepared;
	uint64		n;
	bool		pinned_left = false;

	if (!hints_enabled || hints == NULL || !hint_shared->any_pinned)
		return;
	n = wl_exec(&stmt, NULL, NULL, true, 0);
	prepared = palloc(sizeof(TransactionId) * Max(n, 1));
	for (uint64 i = 0; i < n; i++)
	{
		char	   *xid = wl_result_cstring(i, 1);

		prepared[i] = (TransactionId) strtoul(xid, NULL, 10);
	}

	LWLockAcquire(hint_shared->lock, LW_EXCLUSIVE);
	hash_seq_init(&scan, hints);
	while ((entry = hash_seq_search(&scan)) != NULL)
	{
		if (entry->key.database == MyDatabaseId)
		{
			int			kept = 0;

			for (int i = 0; i < entry->npins; i++)
				if (still_prepared(entry->pins[i], prepared, (int) n))
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
	pfree(prepared);
}

PG_FUNCTION_INFO_V1(wl_task_written);

/*
 * worklist.task_written(): BEFORE INSERT OR UPDATE statement trigger on
 * worklist.task.  A statement the verbs did not run writes rows the hints
 * know nothing about: at its transaction's commit, every hint of the
 * database goes back to the head.
 */
Datum
wl_task_written(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"task_written\" must be fired as a trigger")));
	if (hints_enabled && hints != NULL && !wl_in_verb())
	{
		register_callbacks();
		xact_wrote_table = true;
	}
	return PointerGetDatum(NULL);
}

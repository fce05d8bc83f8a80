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
 * The hints live in shared memory (shmem.c, which says which lock guards
 * them).  Without the library preloaded there is none: claim_next starts
 * at the head, as before.
 *
 *-------------------------------------------------------------------------
 */
#include "hint.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/trigger.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

/*
 * How many claims read a hint for one that raises it.  Finding where the
 * queue starts is a second scan of task_claimable and a raise takes the
 * lock exclusively; raising on every claim would cost both on every claim.
 * Between two raises, claims walk at most the entries the claims since the
 * last raise left behind (dead, but not yet removable while an old snapshot
 * is held) -- a handful, whatever the snapshot's age.
 */
#define WL_HINT_RAISE_EVERY 8

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

bool
wl_hint_read(const char *tenant, WlQueueKey *at, uint64 *version,
			 uint64 *raises, bool *raise)
{
	ListCell   *lc;
	bool		counts;
	uint32		claims = 0;

	*at = wl_queue_key_min;
	*version = 0;
	*raises = 0;
	if (raise)
		*raise = false;
	if (!wl_shm_hints_kept())
		return false;
	foreach(lc, pending_lowers)
	{
		if (strcmp(((PendingLower *) lfirst(lc))->tenant, tenant) == 0)
			return true;		/* from the head: see the file header */
	}
	/* a claim that could not raise neither counts nor asks to */
	counts = raise && may_raise();

	/*
	 * Every WL_HINT_RAISE_EVERY-th claim since the last raise, and every
	 * claim after it until one raises (a lowering refuses the raises of the
	 * claims that read the hint before it); the first claim makes the entry.
	 */
	if (!wl_shm_hint_read(task_table(), tenant, counts, at, version, raises,
						  &claims))
		claims = WL_HINT_RAISE_EVERY;
	if (counts)
		*raise = claims >= WL_HINT_RAISE_EVERY;
	return true;
}

void
wl_hint_raise(const char *tenant, uint64 version, uint64 raises,
			  const WlQueueKey *to)
{
	if (!wl_shm_hints_kept() || !may_raise())
		return;
	wl_shm_hint_raise(task_table(), tenant, version, raises, to);
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

				wl_shm_hint_lower(task_table(), p->tenant, p->neg_priority,
								  p->created_at, InvalidTransactionId);
			}
			if (xact_wrote_table)
				wl_shm_hint_reset(MyDatabaseId);
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

				wl_shm_hint_lower(task_table(), p->tenant, PG_INT64_MIN,
								  DT_NOBEGIN, GetTopTransactionId());
			}
			if (xact_wrote_table)
				wl_shm_hint_reset(MyDatabaseId);
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
	if (!wl_shm_hints_kept())
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

	if (!wl_shm_hints_kept())
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
	TransactionId *prepared;
	uint64		n;

	if (!wl_shm_hints_kept() || !wl_shm_hints_pinned())
		return;
	n = wl_exec(&stmt, NULL, NULL, true, 0);
	prepared = palloc(sizeof(TransactionId) * Max(n, 1));
	for (uint64 i = 0; i < n; i++)
		prepared[i] = (TransactionId) strtoul(wl_result_cstring(i, 1), NULL, 10);
	wl_shm_hint_unpin(MyDatabaseId, prepared, (int) n);
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
	if (wl_shm_hints_kept() && !wl_in_verb())
	{
		register_callbacks();
		xact_wrote_table = true;
	}
	return PointerGetDatum(NULL);
}

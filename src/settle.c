/*-------------------------------------------------------------------------
 *
 * settle.c
 *	  What every change of a task leaves beside its row: its event in the
 *	  task's history (doc/reference.md, section 4), and, when the change
 *	  settles the task, the resolution of the parks of runs that await it
 *	  (section 6).  Both the task verbs and the run verbs come here (a run
 *	  concluded withdraws the tasks its park awaits), so neither concept
 *	  calls the other.
 *
 * History.  worklist.task_log holds one row per event, numbered per task
 * from 1 with no gap: a new event takes the task's last number plus one,
 * read through the primary key.  Every change of a task holds the task's
 * row lock when it appends (the UPDATE that made the change took it; a
 * note takes it first), so two events of one task never race for a
 * number.  The log is append-only: a trigger refuses every UPDATE and
 * DELETE but erase_tenant's and the task purge's (wl_erasing).
 *
 * Parks.  park_run records, in worklist.run_park_task, one row per task a
 * park awaits; a settlement looks its task up there.  Locks are taken in
 * one order by every path, so that none waits on another in a circle:
 *
 *	 tasks (in wl_sort_ids order)  <  a run's lease  <  a run's row  <
 *	 its checkpoints
 *
 * A settlement holds its task's lock (its UPDATE) and then locks the run
 * and the checkpoint of each park it may resolve, park after park in the
 * order of their keys (a batch: after every task of the batch settled,
 * each park once).  park_run locks every
 * task it awaits FOR SHARE, in wl_sort_ids order, before anything of its
 * run: a settlement of one of them waits until park_run has committed and
 * then sees its park; a park_run that comes second sees the settlement.
 * Either way no park is left outstanding with none of its tasks pending.
 * Two settlements of two tasks of one park serialise on the park's
 * checkpoint lock, and the second sees the first settled (each statement
 * below reads the latest committed state).  The sweep never waits: it
 * asks wl_task_parks_lockable() first and leaves a task whose park a
 * worker holds for the next tick.
 *
 * Under REPEATABLE READ or SERIALIZABLE a park committed after the
 * transaction's snapshot cannot be updated by it; the settlement then
 * fails with a serialization failure (40001), to be retried, rather than
 * leave that park outstanding.
 *
 * On a 0.3 schema, which has neither, every function here but
 * wl_withdraw_tasks does nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "settle.h"
#include "change.h"
#include "hint.h"
#include "task.h"

#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(wl_task_log_guard);

/* The key of a park's checkpoint: tenant $1, project $2, session $3, run $4, checkpoint $5 */
#define RUN_IS(a) \
	a ".tenant" EQ "$1 AND " a ".project" EQ "$2 AND " \
	a ".session" EQ "$3 AND " a ".run" EQ "$4"
#define PARK_IS(a) RUN_IS(a) " AND " a ".checkpoint_id" EQ "$5"

/* ----------
 * History
 * ----------
 */
/*
 * An event's actor and login, as parameters col and col + 1: the actor
 * given (NULL: none), and the role that called the verb (none for the
 * background worker).
 */
static void
who_acted(Datum *values, char *nulls, int col, text *actor)
{
	values[col] = PointerGetDatum(actor);
	if (actor == NULL)
		nulls[col] = 'n';
	if (MyBackendType == B_BG_WORKER)
		nulls[col + 1] = 'n';
	else
		values[col + 1] = CStringGetTextDatum(GetUserNameFromId(wl_calling_role(), false));
}

Datum
wl_task_event(text *tenant, text *task_id, const char *event, text *actor,
			  TimestampTz at, Jsonb *detail)
{
	static WlStmt stmt WL_KEPT = {
		"INSERT INTO worklist.task_log AS l"
		" (tenant, task_id, seq, at, event, actor, login, detail)"
		" SELECT $1, $2, COALESCE($8, (SELECT p.seq FROM worklist.task_log p"
		"  WHERE p.tenant" EQ "$1 AND p.task_id" EQ "$2"
		"  ORDER BY p.seq DESC LIMIT 1), 0) OPERATOR(pg_catalog.+) 1,"
		" $3, $4, $5, $6, $7"
		" RETURNING ROW(l.task_id, l.seq, l.at, l.event, l.actor, l.login,"
		" COALESCE(l.detail, '{}'::pg_catalog.jsonb))::worklist.task_event",
		8, {TEXTOID, TEXTOID, TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, INT4OID},
		.generic = true, .name = "settle.event"
	};
	static WlStmt last WL_KEPT = {
		"SELECT p.seq FROM worklist.task_log p"
		" WHERE p.tenant" EQ "$1 AND p.task_id" EQ "$2"
		" ORDER BY p.seq DESC LIMIT 1",
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "settle.event.last"
	};
	Datum		values[8];
	char		nulls[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', 'n'};
	bool		isnull;

	if (!wl_schema_current())
		return (Datum) 0;

	/*
	 * Under a transaction snapshot, an event committed since it was taken
	 * -- a note, which locks the task's row without changing it -- is read
	 * from the latest state, so that this one is numbered after it.
	 */
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(task_id);
	if (IsolationUsesXactSnapshot())
	{
		values[7] = Int32GetDatum(0);
		nulls[7] = ' ';
		if (wl_exec_latest(&last, values, NULL) == 1)
			values[7] = wl_result_datum(0, 1, &isnull);
	}
	values[2] = TimestampTzGetDatum(at);
	values[3] = CStringGetTextDatum(event);
	who_acted(values, nulls, 4, actor);
	/* an empty detail is stored as NULL, and read back as {} */
	if (detail == NULL || (JB_ROOT_IS_OBJECT(detail) && JB_ROOT_COUNT(detail) == 0))
		nulls[6] = 'n';
	else
		values[6] = JsonbPGetDatum(detail);
	if (wl_exec(&stmt, values, nulls, false, 0) != 1)
		elog(ERROR, "task event not appended");
	return wl_result_datum(0, 1, &isnull);
}

void
wl_task_events(text *tenant, ArrayType *task_ids, const char *event,
			   text *actor, TimestampTz at)
{
	/*
	 * One row per element, each numbered after its task's last event,
	 * read through the primary key (a scalar subquery per element).
	 */
	static WlStmt stmt WL_KEPT = {
		"INSERT INTO worklist.task_log"
		" (tenant, task_id, seq, at, event, actor, login)"
		" SELECT $1, a.id, COALESCE((SELECT p.seq FROM worklist.task_log p"
		"  WHERE p.tenant" EQ "$1 AND p.task_id" EQ "a.id"
		"  ORDER BY p.seq DESC LIMIT 1), 0) OPERATOR(pg_catalog.+) 1,"
		" $3, $4, $5, $6"
		" FROM pg_catalog.unnest($2) a(id)",
		6, {TEXTOID, TEXTARRAYOID, TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID},
		.generic = true, .name = "settle.events"
	};
	Datum		values[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	int			n = ArrayGetNItems(ARR_NDIM(task_ids), ARR_DIMS(task_ids));

	if (!wl_schema_current() || n == 0)
		return;

	/*
	 * Under a transaction snapshot, the last number of each task is read
	 * from the latest state, one task at a time (see wl_task_event).
	 */
	if (IsolationUsesXactSnapshot())
	{
		Datum	   *ids;

		deconstruct_array(task_ids, TEXTOID, -1, false, TYPALIGN_INT, &ids, NULL, &n);
		for (int i = 0; i < n; i++)
			(void) wl_task_event(tenant, DatumGetTextPP(ids[i]), event, actor, at, NULL);
		return;
	}
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(task_ids);
	values[2] = TimestampTzGetDatum(at);
	values[3] = CStringGetTextDatum(event);
	who_acted(values, nulls, 4, actor);
	if (wl_exec(&stmt, values, nulls, false, 0) != (uint64) n)
		elog(ERROR, "task events not appended");
}

/*
 * BEFORE UPDATE OR DELETE (and TRUNCATE) statement trigger on
 * worklist.task_log: no role changes or removes an event, the owner
 * neither, but erase_tenant and the task purge of retention.
 */
Datum
wl_task_log_guard(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	const char *op;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"task_log_guard\" must be fired as a trigger")));
	if (wl_erasing)
		return PointerGetDatum(NULL);
	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		op = "UPDATE";
	else if (TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		op = "DELETE";
	else
		op = "TRUNCATE";
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("%s on table \"worklist.task_log\" is not allowed", op),
			 errdetail("A task's history is append-only: no event is ever changed or removed."),
			 errhint("Events leave with their task, by retention or worklist.erase_tenant().")));
	return PointerGetDatum(NULL);
}

/* ----------
 * Parks
 * ----------
 */

/* The address of one park: tenant, project, session, run, checkpoint. */
typedef struct Park
{
	Datum		key[5];
} Park;

/*
 * The parks of the tenant whose project, session, run and checkpoint id are
 * columns 1 to 4 of the last result's found rows.  palloc'd.
 */
static Park *
result_parks(text *tenant, uint64 found)
{
	Park	   *parks = palloc(sizeof(Park) * Max(found, 1));

	for (uint64 i = 0; i < found; i++)
	{
		bool		isnull;

		parks[i].key[0] = PointerGetDatum(tenant);
		for (int col = 1; col <= 4; col++)
			parks[i].key[col] = wl_result_datum(i, col, &isnull);
	}
	return parks;
}

/*
 * The unresolved parks that await task (tenant, task_id), read in the
 * latest committed state (a park committed after a REPEATABLE READ
 * snapshot must be found too).  palloc'd; *n their number.
 */
static Park *
parks_awaiting(text *tenant, text *task_id, int *n)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT w.project, w.session, w.run, w.checkpoint_id"
		" FROM worklist.run_park_task w"
		" WHERE w.tenant" EQ "$1 AND w.task_id" EQ "$2 AND NOT w.resolved"
		" ORDER BY w.project, w.session, w.run, w.checkpoint_id",
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "settle.parks_awaiting"
	};
	Datum		values[2];
	uint64		found;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(task_id);
	found = wl_exec_latest(&stmt, values, NULL);
	*n = (int) found;
	return result_parks(tenant, found);
}

/* Lock the run row of a park, waiting for it (it may be gone). */
static void
lock_park_run(const Park *p)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT FROM worklist.run r WHERE " RUN_IS("r") " FOR NO KEY UPDATE",
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID},
		.generic = true, .name = "settle.lock_run"
	};

	(void) wl_exec(&stmt, (Datum *) p->key, NULL, false, 0);
}

/*
 * Lock a park's checkpoint while its park is unresolved, waiting for it;
 * returns its park_tasks (a text[] datum), or (Datum) 0 when there is
 * none (resolved, gone, or written over without a park).
 */
static Datum
lock_park_checkpoint(const Park *p)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT c.park_tasks FROM worklist.run_checkpoint c"
		" WHERE " PARK_IS("c") " AND c.park_resolved_at IS NULL FOR NO KEY UPDATE",
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID},
		.generic = true, .name = "settle.lock_checkpoint"
	};
	bool		isnull;
	Datum		tasks;

	if (wl_exec(&stmt, (Datum *) p->key, NULL, false, 0) != 1)
		return (Datum) 0;
	tasks = wl_result_datum(0, 1, &isnull);
	return isnull ? (Datum) 0 : tasks;
}

/*
 * Lock, without waiting, the row skip picks ($1.. the park's key, SKIP
 * LOCKED); false only when somebody else holds it: a row that is not
 * there (exists, read in the latest state, finds nothing) holds nothing
 * up.
 */
static bool
lock_unless_held(WlStmt *skip, WlStmt *exists, const Park *p)
{
	if (wl_exec(skip, (Datum *) p->key, NULL, false, 0) == 1)
		return true;
	return wl_exec_latest(exists, (Datum *) p->key, NULL) == 0;
}

/*
 * Is any of tasks (a text[]) of the tenant still pending, as of now?  The
 * tasks are looked at from the one after after (a task of them that just
 * settled; NULL: from the first) to the end, then from the first: tasks
 * settled one after another in the order of the park, or in the reverse
 * order, find a pending one at once, where looking from the first each
 * time would pass every task settled so far.
 */
static bool
any_pending(text *tenant, Datum tasks, const char *after)
{
	static WlStmt stmt WL_KEPT = {
		/*
		 * Each task by its whole key, a scalar subquery per element, taken
		 * in the order above (sorted before any is looked up, OFFSET 0): a
		 * join planned on empty tables hashed every task of the tenant.
		 */
		"SELECT EXISTS (SELECT FROM (SELECT a.id FROM pg_catalog.unnest($2) WITH ORDINALITY a(id, i)"
		"  ORDER BY a.i OPERATOR(pg_catalog.<=) COALESCE(pg_catalog.array_position($2, $3), 0), a.i"
		"  OFFSET 0) o"
		" WHERE (SELECT " PENDING("t") " FROM worklist.task t"
		"        WHERE t.tenant" EQ "$1 AND t.id" EQ "o.id))",
		3, {TEXTOID, TEXTARRAYOID, TEXTOID},
		.generic = true, .name = "settle.any_pending"
	};
	Datum		values[3];
	char		nulls[3] = {' ', ' ', ' '};
	bool		isnull;

	values[0] = PointerGetDatum(tenant);
	values[1] = tasks;
	if (after == NULL)
		nulls[2] = 'n';
	else
		values[2] = CStringGetTextDatum(after);
	(void) wl_exec_latest(&stmt, values, nulls);
	return DatumGetBool(wl_result_datum(0, 1, &isnull));
}

/* Resolve a locked park at at: its checkpoint, its records, its run's summary. */
static void
resolve_park(const Park *p, TimestampTz at)
{
	static WlStmt stmt WL_KEPT = {
		"WITH c AS ("
		"  UPDATE worklist.run_checkpoint c SET park_resolved_at = $6"
		"   WHERE " PARK_IS("c") " RETURNING true),"
		" w AS ("
		"  UPDATE worklist.run_park_task w SET resolved = true"
		"   WHERE " PARK_IS("w") " RETURNING true)"
		" UPDATE worklist.run r SET park_resolved_at = $6"
		" WHERE " RUN_IS("r") " AND r.park_checkpoint_id" EQ "$5"
		"   AND r.park_resolved_at IS NULL",
		6, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID},
		.generic = true, .name = "settle.resolve"
	};
	Datum		values[6];

	memcpy(values, p->key, sizeof(p->key));
	values[5] = TimestampTzGetDatum(at);
	(void) wl_exec(&stmt, values, NULL, false, 0);
	wl_change_record_text((text *) DatumGetPointer(p->key[0]), WL_CHANGE_RUN_RESUMED);
}

/*
 * A task park p awaits (task_id, named in an error) settled at at: lock
 * the park's run and checkpoint, and resolve the park when none of its
 * tasks is pending any more.
 */
static void
settle_park(text *tenant, const Park *p, const char *task_id, TimestampTz at)
{
	static WlStmt outstanding WL_KEPT = {
		"SELECT FROM worklist.run_checkpoint c WHERE " PARK_IS("c")
		" AND c.park_resolved_at IS NULL AND c.park_tasks IS NOT NULL",
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID},
		.generic = true, .name = "settle.park_outstanding"
	};
	Datum		tasks;

	CHECK_FOR_INTERRUPTS();
	lock_park_run(p);
	tasks = lock_park_checkpoint(p);
	if (tasks == (Datum) 0)
	{
		/*
		 * Resolved, gone or written over meanwhile -- or, under a
		 * transaction snapshot, made after it (the latest state has it
		 * outstanding): then this transaction cannot resolve it and must
		 * not leave it outstanding.
		 */
		if (IsolationUsesXactSnapshot() &&
			wl_exec_latest(&outstanding, (Datum *) p->key, NULL) == 1)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not serialize access due to a concurrent park of a run"),
					 errdetail("A park that awaits task \"%s\" was made after this transaction's snapshot was taken.",
							   task_id),
					 errhint("The transaction might succeed if retried.")));
		return;
	}
	if (!any_pending(tenant, tasks, task_id))
		resolve_park(p, at);
}

void
wl_task_settled(text *tenant, text *task_id, TimestampTz at)
{
	Park	   *parks;
	int			n;
	char	   *id;

	if (!wl_schema_current())
		return;
	parks = parks_awaiting(tenant, task_id, &n);
	id = n > 0 ? text_to_cstring(task_id) : NULL;
	for (int i = 0; i < n; i++)
		settle_park(tenant, &parks[i], id, at);
	pfree(parks);
}

void
wl_tasks_settled(text *tenant, ArrayType *task_ids, TimestampTz at)
{
	/*
	 * The tasks of task_ids that some unresolved park awaits, each looked
	 * up by its key in a scalar subquery (see mirror_claims, task.c): the
	 * common case, a batch no park awaits, costs this one look.
	 */
	static WlStmt awaited WL_KEPT = {
		"SELECT a.id FROM pg_catalog.unnest($2) a(id)"
		" WHERE (SELECT true FROM worklist.run_park_task w"
		"  WHERE w.tenant" EQ "$1 AND w.task_id" EQ "a.id AND NOT w.resolved LIMIT 1)",
		2, {TEXTOID, TEXTARRAYOID},
		.generic = true, .name = "settle.parks_awaiting_any"
	};

	/*
	 * The unresolved parks that await any of those tasks, each once, in
	 * the order of their keys, with the first of its tasks among them: a
	 * park that awaits many tasks of the batch is judged once, after all
	 * of them settled, not once per task.  Each task's parks are found
	 * through the primary key (the subquery, kept from being pulled up,
	 * can only be scanned per element: a join planned on empty tables
	 * would read every park of the tenant).
	 */
	static WlStmt parks_stmt WL_KEPT = {
		"SELECT w.project, w.session, w.run, w.checkpoint_id,"
		" pg_catalog.min(a.id COLLATE pg_catalog.\"C\")"
		" FROM pg_catalog.unnest($2) a(id),"
		" LATERAL (SELECT p.project, p.session, p.run, p.checkpoint_id"
		"  FROM worklist.run_park_task p"
		"  WHERE p.tenant" EQ "$1 AND p.task_id" EQ "a.id AND NOT p.resolved"
		"  OFFSET 0) w"
		" GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
		2, {TEXTOID, TEXTARRAYOID},
		.generic = true, .name = "settle.parks_of_many"
	};
	Datum		values[2];
	uint64		found;
	Park	   *parks;
	char	  **ids;

	if (!wl_schema_current() ||
		ArrayGetNItems(ARR_NDIM(task_ids), ARR_DIMS(task_ids)) == 0)
		return;
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(task_ids);
	found = wl_exec_latest(&awaited, values, NULL);
	if (found == 0)
		return;
	if (found < (uint64) ArrayGetNItems(ARR_NDIM(task_ids), ARR_DIMS(task_ids)))
	{
		Datum	   *elems = palloc(sizeof(Datum) * found);

		for (uint64 i = 0; i < found; i++)
		{
			bool		isnull;

			elems[i] = wl_result_datum(i, 1, &isnull);
		}
		values[1] = PointerGetDatum(construct_array(elems, (int) found, TEXTOID, -1, false,
													TYPALIGN_INT));
	}
	found = wl_exec_latest(&parks_stmt, values, NULL);
	parks = result_parks(tenant, found);
	ids = wl_result_column(found, 5);
	for (uint64 i = 0; i < found; i++)
		settle_park(tenant, &parks[i], ids[i], at);
	pfree(parks);
}

bool
wl_task_parks_lockable(text *tenant, text *task_id)
{
	static WlStmt run_skip WL_KEPT = {
		"SELECT FROM worklist.run r WHERE " RUN_IS("r") " FOR NO KEY UPDATE SKIP LOCKED",
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID},
		.generic = true, .name = "settle.lock_run.skip"
	};
	static WlStmt run_exists WL_KEPT = {
		"SELECT FROM worklist.run r WHERE " RUN_IS("r"),
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID},
		.generic = true, .name = "settle.lock_run.exists"
	};
	static WlStmt checkpoint_skip WL_KEPT = {
		"SELECT FROM worklist.run_checkpoint c WHERE " PARK_IS("c")
		" FOR NO KEY UPDATE SKIP LOCKED",
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID},
		.generic = true, .name = "settle.lock_checkpoint.skip"
	};
	static WlStmt checkpoint_exists WL_KEPT = {
		"SELECT FROM worklist.run_checkpoint c WHERE " PARK_IS("c"),
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID},
		.generic = true, .name = "settle.lock_checkpoint.exists"
	};
	Park	   *parks;
	int			n;
	bool		ok = true;

	if (!wl_schema_current())
		return true;
	parks = parks_awaiting(tenant, task_id, &n);
	for (int i = 0; i < n && ok; i++)
		ok = lock_unless_held(&run_skip, &run_exists, &parks[i]) &&
			lock_unless_held(&checkpoint_skip, &checkpoint_exists, &parks[i]);
	pfree(parks);
	return ok;
}

/* ----------
 * Several tasks at once
 * ----------
 */
static int
compare_ids(const void *a, const void *b)
{
	text	   *x = DatumGetTextPP(*(const Datum *) a);
	text	   *y = DatumGetTextPP(*(const Datum *) b);
	int			lx = VARSIZE_ANY_EXHDR(x);
	int			ly = VARSIZE_ANY_EXHDR(y);
	int			c = memcmp(VARDATA_ANY(x), VARDATA_ANY(y), Min(lx, ly));

	return c != 0 ? c : (lx > ly) - (lx < ly);
}

Datum *
wl_sort_ids(ArrayType *ids, int *n)
{
	Datum	   *elems;
	int			count;
	int			kept = 0;

	deconstruct_array(ids, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &count);
	if (count > 1)
		qsort(elems, count, sizeof(Datum), compare_ids);
	for (int i = 0; i < count; i++)
		if (kept == 0 || compare_ids(&elems[kept - 1], &elems[i]) != 0)
			elems[kept++] = elems[i];
	*n = kept;
	return elems;
}

int32
wl_withdraw_tasks(text *tenant, ArrayType *ids, text *run_id, TimestampTz at)
{
	static WlStmt stmt WL_KEPT = {
		"UPDATE worklist.task t SET state = " STATE("withdrawn") ","
		" settled_at = $4, claim_expires_at = NULL"
		BY_KEY("t", "($3::pg_catalog.text IS NULL OR t.run_id" EQ "$3) AND " PENDING("t")),
		4, {TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID},
		.generic = true, .name = "settle.withdraw"
	};
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	Datum	   *names;
	Datum	   *withdrawn;
	int			count;
	int32		n = 0;

	names = wl_sort_ids(ids, &count);
	withdrawn = palloc(sizeof(Datum) * Max(count, 1));
	values[0] = PointerGetDatum(tenant);
	values[2] = PointerGetDatum(run_id);
	if (run_id == NULL)
		nulls[2] = 'n';
	values[3] = TimestampTzGetDatum(at);

	wl_hint_took();
	for (int i = 0; i < count; i++)
	{
		text	   *id = DatumGetTextPP(names[i]);

		CHECK_FOR_INTERRUPTS();
		values[1] = PointerGetDatum(id);
		if (wl_exec(&stmt, values, nulls, false, 0) == 0)
			continue;
		withdrawn[n++] = names[i];
		(void) wl_task_event(tenant, id, "withdrawn", NULL, at, NULL);
		wl_change_record_text(tenant, WL_CHANGE_TASK_WITHDRAWN);
	}
	/* the parks, once every task is withdrawn: each judged once */
	if (n > 0)
		wl_tasks_settled(tenant, construct_array(withdrawn, n, TEXTOID, -1, false, TYPALIGN_INT), at);
	pfree(withdrawn);
	return n;
}

ArrayType *
wl_park_lock_tasks(text *tenant, ArrayType *tasks)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT " PENDING("t") " FROM worklist.task t WHERE " KEY("t") " FOR SHARE",
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "settle.park_lock_task"
	};
	Datum	   *sorted;
	Datum	   *given;
	bool	   *found;
	bool	   *pending;
	Datum	   *keep;
	int			nsorted;
	int			ngiven;
	int			nkeep = 0;
	Datum		values[2];

	sorted = wl_sort_ids(tasks, &nsorted);
	found = palloc0(sizeof(bool) * Max(nsorted, 1));
	pending = palloc0(sizeof(bool) * Max(nsorted, 1));
	values[0] = PointerGetDatum(tenant);
	for (int i = 0; i < nsorted; i++)
	{
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		values[1] = sorted[i];
		if (wl_exec(&stmt, values, NULL, false, 0) == 1)
		{
			found[i] = true;
			pending[i] = DatumGetBool(wl_result_datum(0, 1, &isnull));
		}
	}

	/* the first missing one in the array's order, and the pending ones */
	deconstruct_array(tasks, TEXTOID, -1, false, TYPALIGN_INT, &given, NULL, &ngiven);
	keep = palloc(sizeof(Datum) * Max(ngiven, 1));
	for (int i = 0; i < ngiven; i++)
	{
		Datum	   *at = bsearch(&given[i], sorted, nsorted, sizeof(Datum), compare_ids);
		int			k = (int) (at - sorted);

		if (!found[k])
			wl_error_not_found("task", TextDatumGetCString(given[i]));
		if (pending[k])
		{
			pending[k] = false;		/* once, however often it is named */
			keep[nkeep++] = given[i];
		}
	}
	return construct_array(keep, nkeep, TEXTOID, -1, false, TYPALIGN_INT);
}

void
wl_park_record(Datum *address, text *checkpoint_id, ArrayType *tasks, bool resolved)
{
	static WlStmt forget WL_KEPT = {
		"DELETE FROM worklist.run_park_task w"
		" WHERE " RUN_IS("w") " AND (w.resolved OR w.checkpoint_id" EQ "$5)",
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID},
		.generic = true, .name = "settle.park_record.forget"
	};
	static WlStmt record WL_KEPT = {
		"INSERT INTO worklist.run_park_task"
		" (tenant, task_id, project, session, run, checkpoint_id, resolved)"
		" SELECT DISTINCT $1, a.id, $2, $3, $4, $5, $7"
		" FROM pg_catalog.unnest($6) a(id)",
		7, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID, BOOLOID},
		.generic = true, .name = "settle.park_record"
	};
	Datum		values[7];

	if (!wl_schema_current())
		return;
	memcpy(values, address, sizeof(Datum) * 4);
	values[4] = PointerGetDatum(checkpoint_id);
	values[5] = PointerGetDatum(tasks);
	values[6] = BoolGetDatum(resolved);
	/* the run's resolved parks, and what this checkpoint awaited before */
	(void) wl_exec(&forget, values, NULL, false, 0);
	(void) wl_exec(&record, values, NULL, false, 0);
}

void
wl_lock_tasks(text *tenant, ArrayType *ids)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT FROM worklist.task t WHERE " KEY("t") " FOR NO KEY UPDATE",
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "settle.lock_task"
	};
	Datum	   *names;
	int			count;
	Datum		values[2];

	names = wl_sort_ids(ids, &count);
	values[0] = PointerGetDatum(tenant);
	for (int i = 0; i < count; i++)
	{
		CHECK_FOR_INTERRUPTS();
		values[1] = names[i];
		(void) wl_exec(&stmt, values, NULL, false, 0);
	}
	pfree(names);
}

/*-------------------------------------------------------------------------
 *
 * task_sweep.c
 *	  The task parts of the sweep: expiry policies of overdue tasks, claims
 *	  held past their timeout (doc/reference.md, section 4), and the purge
 *	  of settled tasks by the tenant's retention policy (retention.c).
 *
 * Each part picks up to lim rows of one tenant FOR NO KEY UPDATE SKIP
 * LOCKED in one statement, then changes them one by one, each found by its
 * whole key and nothing else, and records each change (wl_task_changed),
 * judged at the sweep's now.  A task the sweep would settle whose park's
 * run or checkpoint a worker holds is left for the next tick: the sweep
 * never waits (wl_task_parks_lockable).
 *
 *-------------------------------------------------------------------------
 */
#include "change.h"
#include "hint.h"
#include "settle.h"
#include "sweep.h"
#include "task.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"

/*
 * The expiry part of the sweep (declared in sweep.h; called by sweep.c
 * with SPI begun, for the sweep verb and for every tenant by the sweeper).
 *
 * Applies the expiry policy to up to lim of the tenant's overdue tasks
 * (open or claimed, due_at <= now), earliest due first: deny and proceed
 * settle the task as expired with decision {"policy": ...}, decided_by
 * NULL and settled_at = now; escalate does what escalate() does.  Rows are
 * picked FOR NO KEY UPDATE SKIP LOCKED, so a row a reviewer has locked is
 * skipped this tick -- never waited for -- and the limit counts only rows
 * actually taken, so skipped rows never stop the rows behind them from
 * being reached.  A task whose reviewer's complete committed first no
 * longer qualifies when its lock is taken, and is left alone.
 *
 * The rows picked are then changed one by one, each found by its whole
 * key and nothing else.  The lock holds each as the pick judged it (a row
 * changed before it was locked is judged again under the lock), and the
 * primary key is the only index that can serve a statement that names the
 * key alone, whatever the planner believed of the table's size when it
 * planned.  (A single UPDATE of "the ids in this array" was planned, on
 * tables the planner knew as empty, as a walk of the tenant's whole
 * pending index that filters the ids: one batch of the sweep then read
 * every pending task of the tenant.)
 */
void
wl_task_sweep(text *tenant, TimestampTz now, int32 lim, WlSweepResult *result)
{
#define EXPIRY_PICK(due) \
		"SELECT d.id, d.expiry_policy::pg_catalog.text FROM worklist.task d" \
		" WHERE d.tenant" EQ "$1 AND " due("d") \
		" AND d.due_at OPERATOR(pg_catalog.<=) $2" \
		" ORDER BY d.due_at, d.id LIMIT $3" \
		" FOR NO KEY UPDATE OF d SKIP LOCKED"
	static WlStmt pick WL_KEPT = {
		EXPIRY_PICK(DUE),
		3, {TEXTOID, TIMESTAMPTZOID, INT4OID},
		.generic = true, .name = "task.sweep.expiries.pick",
		.sql03 = EXPIRY_PICK(DUE03)
	};
#undef EXPIRY_PICK
#define ESCALATES "t.expiry_policy" EQ "'escalate'::worklist.expiry_policy"
#define EXPIRY_APPLY(escalated_at) \
		"UPDATE worklist.task t SET" \
		" state = CASE WHEN " ESCALATES " THEN " STATE("escalated") \
		" ELSE " STATE("expired") " END," \
		" holder = CASE WHEN " ESCALATES " THEN NULL ELSE t.holder END," \
		" claimed_at = CASE WHEN " ESCALATES " THEN NULL ELSE t.claimed_at END," \
		" claim_expires_at = NULL," escalated_at \
		" settled_at = CASE WHEN " ESCALATES " THEN NULL ELSE $3 END," \
		" decided_by = CASE WHEN " ESCALATES " THEN t.decided_by ELSE NULL END," \
		" decision = CASE WHEN " ESCALATES " THEN t.decision" \
		" ELSE pg_catalog.jsonb_build_object('policy', t.expiry_policy::pg_catalog.text) END" \
		" WHERE " KEY("t") \
		" RETURNING t.priority, t.created_at"
	static WlStmt apply WL_KEPT = {
		EXPIRY_APPLY(" escalated_at = CASE WHEN " ESCALATES " THEN $3 ELSE t.escalated_at END,"),
		3, {TEXTOID, TEXTOID, TIMESTAMPTZOID},
		.generic = true, .name = "task.sweep.expiries.apply",
		.sql03 = EXPIRY_APPLY("")
	};
#undef EXPIRY_APPLY
#undef ESCALATES
	Datum		values[3];
	uint64		n;
	char	  **ids;
	char	  **policies;
	char	   *tenant_c = text_to_cstring(tenant);

	values[0] = PointerGetDatum(tenant);
	values[1] = TimestampTzGetDatum(now);
	values[2] = Int32GetDatum(lim);

	wl_hint_took();
	n = wl_exec(&pick, values, NULL, false, 0);
	ids = wl_result_column(n, 1);
	policies = wl_result_column(n, 2);
	values[2] = TimestampTzGetDatum(now);
	for (uint64 i = 0; i < n; i++)
	{
		text	   *id = cstring_to_text(ids[i]);
		bool		escalates = strcmp(policies[i], "escalate") == 0;
		bool		isnull;
		int32		priority;
		TimestampTz created_at;

		CHECK_FOR_INTERRUPTS();
		/* settling it would wait on a worker's park: next tick */
		if (!escalates && !wl_task_parks_lockable(tenant, id))
			continue;
		values[1] = PointerGetDatum(id);
		if (wl_exec(&apply, values, NULL, false, 1) != 1)
			elog(ERROR, "task \"%s\" picked by the sweep is gone", ids[i]);
		priority = DatumGetInt32(wl_result_datum(0, 1, &isnull));
		created_at = DatumGetTimestampTz(wl_result_datum(0, 2, &isnull));
		if (escalates)
		{
			wl_hint_claimable(tenant_c, priority, created_at);
			result->escalated++;
		}
		else if (strcmp(policies[i], "deny") == 0)
			result->denied++;
		else
			result->proceeded++;
		(void) wl_task_changed(tenant, id, escalates ? "escalated" : "expired",
							   NULL, now, wl_task_detail("policy", policies[i]));
	}
}

/*
 * The claim-timeout part of the sweep (declared in sweep.h).
 *
 * Releases up to lim claims of the tenant held past their claim_timeout
 * (claim_expires_at, set when the claim was taken to claimed_at +
 * claim_timeout, at or before now), earliest first, as release() would:
 * holder and claimed_at cleared, claimed back to open, escalated stays
 * escalated.  Rows are picked FOR NO KEY UPDATE SKIP LOCKED: a row a
 * reviewer is completing is skipped, and whichever of the two commits
 * first wins (the other finds the task no longer held as it expected).
 * Picked rows are changed one by one by their key, as in wl_task_sweep.
 */
void
wl_task_claim_timeouts(text *tenant, TimestampTz now, int32 lim,
					   WlSweepResult *result)
{
	static WlStmt pick WL_KEPT = {
		"SELECT d.id, d.holder FROM worklist.task_claim c"
		" JOIN worklist.task d ON d.tenant" EQ "c.tenant AND d.id" EQ "c.task_id"
		" WHERE c.tenant" EQ "$1 AND c.claim_expires_at OPERATOR(pg_catalog.<=) $2"
		/* judged again on the task's latest version once it is locked */
		"   AND d.claim_expires_at OPERATOR(pg_catalog.<=) $2"
		" ORDER BY c.claim_expires_at, c.task_id LIMIT $3"
		" FOR NO KEY UPDATE OF d SKIP LOCKED",
		3, {TEXTOID, TIMESTAMPTZOID, INT4OID},
		.generic = true, .name = "task.sweep.claim_timeouts.pick",
		.sql03 = "SELECT d.id, d.holder FROM worklist.task d"
		" WHERE d.tenant" EQ "$1 AND d.claim_expires_at OPERATOR(pg_catalog.<=) $2"
		" ORDER BY d.claim_expires_at, d.id LIMIT $3"
		" FOR NO KEY UPDATE OF d SKIP LOCKED"
	};
	static WlStmt apply WL_KEPT = {
		"UPDATE worklist.task t" SET_UNCLAIM
		" WHERE " KEY("t")
		" RETURNING t.priority, t.created_at",
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.sweep.claim_timeouts.apply"
	};
	Datum		values[3];
	uint64		n;
	char	  **ids;
	char	  **holders;
	char	   *tenant_c = text_to_cstring(tenant);

	values[0] = PointerGetDatum(tenant);
	values[1] = TimestampTzGetDatum(now);
	values[2] = Int32GetDatum(lim);

	n = wl_exec(&pick, values, NULL, false, 0);
	ids = wl_result_column(n, 1);
	holders = wl_result_column(n, 2);
	for (uint64 i = 0; i < n; i++)
	{
		text	   *id = cstring_to_text(ids[i]);
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		values[1] = PointerGetDatum(id);
		if (wl_exec(&apply, values, NULL, false, 1) != 1)
			elog(ERROR, "task \"%s\" picked by the sweep is gone", ids[i]);
		wl_hint_claimable(tenant_c,
						  DatumGetInt32(wl_result_datum(0, 1, &isnull)),
						  DatumGetTimestampTz(wl_result_datum(0, 2, &isnull)));
		result->claims_released++;
		(void) wl_task_changed(tenant, id, "claim_timed_out", NULL, now,
							   wl_task_detail("holder", holders[i]));
	}
}

/*
 * The purge of settled tasks (declared in sweep.h; run by retention.c):
 * up to lim of the tenant's tasks settled at or before before, oldest
 * first, each with its history -- but for a task the current park of a
 * run not concluded awaits, whose answer the worker has yet to read.
 * Returns how many went.
 */
#define PURGE_PICK(settled, cond) \
		"SELECT d.id FROM worklist.task d" \
		" WHERE d.tenant" EQ "$1 AND " settled \
		"   AND d.settled_at OPERATOR(pg_catalog.<=) $2" cond \
		" ORDER BY d.settled_at LIMIT $3" \
		" FOR UPDATE OF d SKIP LOCKED"
uint64
wl_task_purge(text *tenant, TimestampTz before, int32 lim)
{
	static WlStmt pick WL_KEPT = {
		PURGE_PICK("d.settled_at IS NOT NULL",
				   "   AND NOT " WL_TASK_AWAITED("d.tenant", "d.id")),
		3, {TEXTOID, TIMESTAMPTZOID, INT4OID},
		.generic = true, .name = "retention.purge.tasks.pick",
		.sql03 = PURGE_PICK("d.state" EQ "ANY ('{completed,expired,withdrawn}'::worklist.task_state[])", "")
	};
	static WlStmt purge WL_KEPT = {
		"WITH events AS ("
		"  DELETE FROM worklist.task_log l"
		"   WHERE l.tenant" EQ "$1 AND l.task_id" EQ "$2)"
		" DELETE FROM worklist.task t WHERE t.tenant" EQ "$1 AND t.id" EQ "$2",
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "retention.purge.tasks.delete",
		/* a 0.3 schema: the task has no history */
		.sql03 = "DELETE FROM worklist.task t WHERE t.tenant" EQ "$1 AND t.id" EQ "$2"
	};
	uint64		n;

	/* the history is append-only but for erasure and this purge */
	wl_erasing = true;
	PG_TRY();
	{
		n = wl_purge_by_id(&pick, &purge, tenant, before, lim);
	}
	PG_FINALLY();
	{
		wl_erasing = false;
	}
	PG_END_TRY();
	for (uint64 i = 0; i < n; i++)
		wl_change_record_text(tenant, WL_CHANGE_TASK_PURGED);
	return n;
}
#undef PURGE_PICK

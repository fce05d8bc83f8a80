/*-------------------------------------------------------------------------
 *
 * task_edit.c
 *	  The verbs that change a pending task in place, without claiming or
 *	  settling it: hand_over, by which the holder gives its claim to
 *	  somebody else, and update_task, by which an operator changes a task's
 *	  priority or deadline (doc/reference.md, section 4).
 *
 * Both are verbs of people and operators, called now and then rather than
 * in a worker's loop, and each explains a refusal in an order of its own.
 * So, unlike the verbs of task.c, which try their compare-and-set UPDATE
 * first and read the row only when it misses, these read the task first,
 * locked FOR NO KEY UPDATE -- which waits for a concurrent change to the
 * row and then sees its outcome -- decide in C from that one read, and
 * then change the row by its key, under the lock the read took: two
 * statements on every path, and one consistent story.
 *
 * Each change goes through wl_task_changed (task.c), which appends its
 * event to the task's history in the same transaction and notifies it:
 * handed_over, with the
 * receiver as {"to": ...}, and updated, with each changed field as
 * {"field": [old, new]}.  A call that changes nothing appends nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "hint.h"
#include "task.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

PG_FUNCTION_INFO_V1(wl_hand_over);
PG_FUNCTION_INFO_V1(wl_update_task);

/* A change of task (tenant, id) made, judged at the transaction's now(). */
#define EDITED(tenant, id, event, actor, detail) \
	((void) wl_task_changed((tenant), (id), (event), (actor), \
							GetCurrentTransactionStartTimestamp(), (detail)))

/*
 * worklist.hand_over(id, actor, to_actor, to_roles) RETURNS task
 *
 * The holder actor gives its claim to to_actor: holder to_actor,
 * claimed_at the transaction's now() (a claim timeout starts again), the
 * state as it was.  Refusals, first failure first: WL001 not found, WL004
 * not pending, WL006 actor does not hold it; handing to oneself then
 * returns the task unchanged; then, for the receiver, WL002 to_actor is
 * excluded and WL003 to_roles meets no audience.
 */
Datum
wl_hand_over(PG_FUNCTION_ARGS)
{
	static WlStmt lock WL_KEPT = {
		"SELECT t, " PENDING("t") ", t.state::pg_catalog.text, t.holder,"
		" $3" EQ "ANY (t.excluded), " AUDIENCE("t", "$4")
		" FROM worklist.task t WHERE " KEY("t") " FOR NO KEY UPDATE OF t",
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID},
		.generic = true, .name = "task_edit.hand_over.lock"
	};
	static WlStmt give WL_KEPT = {
		"UPDATE worklist.task t SET holder = $3, claimed_at = pg_catalog.now(),"
		" claim_expires_at = pg_catalog.now() OPERATOR(pg_catalog.+) t.claim_timeout"
		" WHERE " KEY("t")
		" RETURNING t, pg_catalog.jsonb_build_object('to', t.holder)",
		3, {TEXTOID, TEXTOID, TEXTOID},
		.generic = true, .name = "task_edit.hand_over"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_ACTOR(1, "actor"),
															 WL_RECEIVER(2, "to_actor", 3, "to_roles")));
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	text	   *actor = wl_arg_ident(fcinfo, 1, "actor");
	text	   *to_actor = wl_arg_ident(fcinfo, 2, "to_actor");
	ArrayType  *to_roles = wl_arg_idents(fcinfo, 3, "to_roles", true);
	char	   *id_c = text_to_cstring(id);
	char	   *actor_c = text_to_cstring(actor);
	char	   *to_c = text_to_cstring(to_actor);
	Datum		values[4];
	Datum		row;
	bool		isnull;
	char	   *holder;
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = PointerGetDatum(to_actor);
	values[3] = PointerGetDatum(to_roles);

	wl_spi_begin(&spi);
	if (wl_exec(&lock, values, NULL, false, 0) == 0)
		wl_error_not_found("task", id_c);
	row = wl_result_datum(0, 1, &isnull);
	if (!DatumGetBool(wl_result_datum(0, 2, &isnull)))
		wl_error_not_pending(id_c, wl_result_cstring(0, 3));
	holder = wl_result_cstring(0, 4);
	if (holder == NULL || strcmp(holder, actor_c) != 0)
		wl_error_not_held(id_c, actor_c, holder);
	/* to oneself: unchanged, whoever the receiver would have to be */
	if (strcmp(to_c, actor_c) == 0)
	{
		wl_spi_end(&spi);
		PG_RETURN_DATUM(row);
	}
	if (DatumGetBool(wl_result_datum(0, 5, &isnull)))
		wl_error_excluded(id_c, to_c);
	if (!DatumGetBool(wl_result_datum(0, 6, &isnull)) || isnull)
		wl_error_wrong_role(id_c, to_c);

	if (wl_exec(&give, values, NULL, false, 0) != 1)
		elog(ERROR, "task changed under its row lock");
	row = wl_result_datum(0, 1, &isnull);
	EDITED(tenant, id, "handed_over", actor,
		   DatumGetJsonbP(wl_result_datum(0, 2, &isnull)));
	wl_spi_end(&spi);
	PG_RETURN_DATUM(row);
}

/*
 * worklist.update_task(id, priority, due_at) RETURNS task
 *
 * Changes a pending task's priority and/or deadline: NULL leaves a field
 * as it is, due_at 'infinity' removes the deadline ('-infinity' is
 * refused, 22023: a task cannot be due before every instant).  WL001 when
 * there is no such task, WL004 when it is settled.  A call that changes no
 * field returns the task unchanged and appends nothing.  The queue and
 * the overdue list read the row, so both follow at once; a task made
 * claimable earlier in queue order lowers the tenant's claim hint.
 */
Datum
wl_update_task(PG_FUNCTION_ARGS)
{
	/*
	 * $3 the new priority (NULL: as it is), $4 the new deadline (NULL:
	 * none), $5 whether the deadline changes.  The detail is computed from
	 * the locked row, the latest version.
	 */
#define NEW_DUE "(CASE WHEN $5 THEN $4 ELSE t.due_at END)"
#define SAME_DUE \
	"COALESCE(t.due_at" EQ NEW_DUE ", t.due_at IS NULL AND " NEW_DUE " IS NULL)"
	static WlStmt lock WL_KEPT = {
		"SELECT t, " PENDING("t") ", t.state::pg_catalog.text,"
		" CASE WHEN $3 IS NULL OR t.priority" EQ "$3 THEN '{}'::pg_catalog.jsonb"
		"  ELSE pg_catalog.jsonb_build_object('priority',"
		"   pg_catalog.jsonb_build_array(t.priority, $3)) END"
		" OPERATOR(pg_catalog.||)"
		" CASE WHEN " SAME_DUE " THEN '{}'::pg_catalog.jsonb"
		"  ELSE pg_catalog.jsonb_build_object('due_at',"
		"   pg_catalog.jsonb_build_array(t.due_at, " NEW_DUE ")) END"
		" FROM worklist.task t WHERE " KEY("t") " FOR NO KEY UPDATE OF t",
		5, {TEXTOID, TEXTOID, INT4OID, TIMESTAMPTZOID, BOOLOID},
		.generic = true, .name = "task_edit.update_task.lock"
	};
	static WlStmt update WL_KEPT = {
		"UPDATE worklist.task t SET priority = COALESCE($3, t.priority),"
		" due_at = " NEW_DUE
		" WHERE " KEY("t")
		" RETURNING t, " CLAIMABLE("t") ", t.priority, t.created_at",
		5, {TEXTOID, TEXTOID, INT4OID, TIMESTAMPTZOID, BOOLOID},
		.generic = true, .name = "task_edit.update_task"
	};
#undef SAME_DUE
#undef NEW_DUE
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES));
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	char	   *id_c = text_to_cstring(id);
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	Datum		row;
	Datum		detail;
	bool		isnull;
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	if (PG_ARGISNULL(1))
		nulls[2] = 'n';
	else
		values[2] = PG_GETARG_DATUM(1);
	values[4] = BoolGetDatum(!PG_ARGISNULL(2));
	if (PG_ARGISNULL(2))
		nulls[3] = 'n';
	else
	{
		TimestampTz due = PG_GETARG_TIMESTAMPTZ(2);

		if (TIMESTAMP_IS_NOBEGIN(due))
			wl_error_bad_arg("due_at", "must be a finite timestamp, or 'infinity' for none");
		if (TIMESTAMP_IS_NOEND(due))
			nulls[3] = 'n';		/* infinity: no deadline */
		else
			values[3] = TimestampTzGetDatum(due);
	}

	wl_spi_begin(&spi);
	if (wl_exec(&lock, values, nulls, false, 0) == 0)
		wl_error_not_found("task", id_c);
	row = wl_result_datum(0, 1, &isnull);
	if (!DatumGetBool(wl_result_datum(0, 2, &isnull)))
		wl_error_not_pending(id_c, wl_result_cstring(0, 3));
	detail = wl_result_datum(0, 4, &isnull);
	/* no field changes: unchanged, and nothing to record */
	if (JB_ROOT_COUNT(DatumGetJsonbP(detail)) == 0)
	{
		wl_spi_end(&spi);
		PG_RETURN_DATUM(row);
	}

	if (wl_exec(&update, values, nulls, false, 0) != 1)
		elog(ERROR, "task changed under its row lock");
	row = wl_result_datum(0, 1, &isnull);
	/* a new priority moves a claimable task in the queue: maybe ahead of the hint */
	if (!nulls[2] && DatumGetBool(wl_result_datum(0, 2, &isnull)))
		wl_hint_claimable(text_to_cstring(tenant),
						  DatumGetInt32(wl_result_datum(0, 3, &isnull)),
						  DatumGetTimestampTz(wl_result_datum(0, 4, &isnull)));
	EDITED(tenant, id, "updated", NULL, DatumGetJsonbP(detail));
	wl_spi_end(&spi);
	PG_RETURN_DATUM(row);
}

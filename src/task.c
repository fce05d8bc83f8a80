/*-------------------------------------------------------------------------
 *
 * task.c
 *	  Tasks: pending human decisions (doc/reference.md, section 4); the
 *	  verbs that change them.  The reads are in task_list.c, the task parts
 *	  of the sweep in task_sweep.c.
 *
 * A task is one row of worklist.task, whose row type is what the verbs
 * return.  It is pending while its state is open, claimed or escalated,
 * and settled once completed, expired or withdrawn; nothing moves it back.
 *
 * Concurrency.  Every verb that changes a task does it with one UPDATE
 * whose WHERE clause is the verb's whole condition: the row lock the UPDATE
 * takes and PostgreSQL's re-check of the condition against the latest
 * committed version of the row make that a compare-and-set.  So two
 * claimers cannot both win, and of a reviewer's complete and the sweep's
 * expiry, whichever commits first wins while the other finds the task
 * settled and changes nothing.  The successful path -- the hot one -- is
 * that single statement.
 *
 * When the UPDATE matches nothing, the verb has to say why, and the answer
 * must be one consistent story: the row is read once more FOR NO KEY
 * UPDATE (lock_task), which waits for any concurrent change and then holds
 * the row still, and the refusal is decided in C from that one locked read
 * in the documented order.  If that read shows the change is possible after
 * all (the obstacle went away in between), the UPDATE is run again, under
 * the lock just taken, and cannot miss.  That loop is change_task(); each
 * verb gives it its UPDATE and how it explains a refusal.
 *
 * Every change of a task -- by these verbs, and by the sweep parts
 * (task_sweep.c) -- is recorded once it is made through wl_task_changed(),
 * the one place a change of a task passes on its way out: its event in the
 * task's history (settle.c), the resolution of the parks awaiting a task
 * it settles, its notification.  It is called under the row lock the
 * change took, before SPI ends, and only when the UPDATE changed the row:
 * a call that changes nothing appends nothing.  note() appends an event
 * without changing the row, under a lock taken for it.
 *
 * claim_next and the sweep never wait: they pick rows with FOR NO KEY UPDATE
 * SKIP LOCKED inside the same statement that changes them, so a row another
 * caller is claiming, or a reviewer is settling, is passed over and the
 * rows behind it are reached instead.
 *
 * Every statement runs its generic plan (.generic): each is driven by the
 * task's key or by one of the partial indexes on pending rows, so planning
 * it again with the actual values would cost a planning per call and gain
 * nothing.
 *
 * Counters: every claim that changes who holds a task counts as a claim
 * (claim, claim_next; a same-holder re-claim changes nothing and is not
 * counted), every WL005 as a claim conflict, every take-over that moves a
 * claim as a take-over.
 *
 *-------------------------------------------------------------------------
 */
#include "change.h"
#include "hint.h"
#include "settle.h"
#include "task.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(wl_open_task);
PG_FUNCTION_INFO_V1(wl_claim);
PG_FUNCTION_INFO_V1(wl_claim_next);
PG_FUNCTION_INFO_V1(wl_release);
PG_FUNCTION_INFO_V1(wl_take_over);
PG_FUNCTION_INFO_V1(wl_complete);
PG_FUNCTION_INFO_V1(wl_set_state);
PG_FUNCTION_INFO_V1(wl_escalate);
PG_FUNCTION_INFO_V1(wl_withdraw_run);
PG_FUNCTION_INFO_V1(wl_note);

/* How often a verb re-runs its UPDATE after a locked read said it may. */
#define MAX_ATTEMPTS 3

static const char *const PENDING_STATES[] = {"open", "claimed", "escalated"};

/* What lock_task found. */
typedef struct TaskFacts
{
	bool		found;
	Datum		row;			/* the whole row, in the caller's context */
	char	   *state;
	char	   *holder;			/* NULL when nobody holds it */
	bool		excluded;		/* the actor given is among excluded */
	bool		meets;			/* the roles given meet the audience */
	char	   *decided_by;		/* NULL unless completed by somebody */
	bool		same_decision;	/* its decision equals the one given */
} TaskFacts;

/*
 * A verb's change of one task by its key: the compare-and-set UPDATE
 * ($1 tenant, $2 id, then the verb's own), what the locked read judges
 * (NULL, or (Datum) 0 for decision: nothing), and how the verb explains a
 * refusal from that read: it raises the refusal, or returns TASK_UNCHANGED
 * when the verb ends without a change (the holder claims again, the task
 * is already settled), or TASK_RETRY when the change is possible after all.
 */
typedef enum TaskVerdict
{
	TASK_RETRY,
	TASK_UNCHANGED
} TaskVerdict;

typedef struct TaskChange TaskChange;

struct TaskChange
{
	WlStmt	   *update;
	Datum	   *values;
	text	   *tenant;
	text	   *id;
	text	   *actor;
	ArrayType  *roles;
	Datum		decision;
	text	   *from_actor;		/* take_over's */
	TaskVerdict (*explain) (const TaskChange *change, const TaskFacts *f);
};

static bool
is_pending(const char *state)
{
	for (int i = 0; i < lengthof(PENDING_STATES); i++)
		if (strcmp(state, PENDING_STATES[i]) == 0)
			return true;
	return false;
}

/*
 * Read task (tenant, id) and lock it FOR NO KEY UPDATE, judging actor,
 * roles and a decision against it; any of them may be NULL, which judges
 * nothing.  Waits for a concurrent change to the row to end, and sees its
 * outcome.
 */
static void
lock_task(text *tenant, text *id, text *actor, ArrayType *roles,
		  Datum decision, TaskFacts *f)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT t, t.state::pg_catalog.text, t.holder,"
		" $3" EQ "ANY (t.excluded), " AUDIENCE("t", "$4") ","
		" t.decided_by, t.decision OPERATOR(pg_catalog.=) $5"
		" FROM worklist.task t WHERE " KEY("t")
		" FOR NO KEY UPDATE OF t",
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID, JSONBOID},
		.generic = true, .name = "task.lock"
	};
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	bool		isnull;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = PointerGetDatum(actor);
	values[3] = PointerGetDatum(roles);
	values[4] = decision;
	if (actor == NULL)
		nulls[2] = 'n';
	if (roles == NULL)
		nulls[3] = 'n';
	if (decision == (Datum) 0)
		nulls[4] = 'n';

	memset(f, 0, sizeof(*f));
	if (wl_exec(&stmt, values, nulls, false, 0) == 0)
		return;
	f->found = true;
	f->row = wl_result_datum(0, 1, &isnull);
	f->state = wl_result_cstring(0, 2);
	f->holder = wl_result_cstring(0, 3);
	f->excluded = DatumGetBool(wl_result_datum(0, 4, &isnull)) && !isnull;
	f->meets = DatumGetBool(wl_result_datum(0, 5, &isnull)) && !isnull;
	f->decided_by = wl_result_cstring(0, 6);
	f->same_decision = DatumGetBool(wl_result_datum(0, 7, &isnull)) && !isnull;
}

/*
 * Change one task (see the file header): run the verb's UPDATE; when it
 * matches nothing, read the row locked and let the verb explain.  True when
 * the UPDATE changed the row (its RETURNING row, if any, is the last
 * result); false when the verb ends without a change (*f holds the locked
 * read).  A later attempt runs after a locked read showed that the UPDATE
 * can match now: with the row locked it cannot miss, and should it miss
 * MAX_ATTEMPTS times all the same, give up rather than loop.
 */
static bool
change_task(const TaskChange *c, TaskFacts *f)
{
	for (int attempt = 0;; attempt++)
	{
		if (attempt >= MAX_ATTEMPTS)
			elog(ERROR, "task changed under its row lock");
		if (wl_exec(c->update, c->values, NULL, false, 0) == 1)
			return true;
		lock_task(c->tenant, c->id, c->actor, c->roles, c->decision, f);
		if (c->explain(c, f) == TASK_UNCHANGED)
			return false;
	}
}

/* The events of the task kind, and the change each is notified as. */
static const struct
{
	const char *kind;
	const char *event;
	WlChange	change;
}			task_changes[] = {
#define WL_TASK_CHANGE(name, kind, event) {kind, event, WL_CHANGE_##name},
	WL_CHANGES(WL_TASK_CHANGE)
#undef WL_TASK_CHANGE
};

/* The change event is notified as: its own, claim_timed_out a release. */
static WlChange
notified_change(const char *event)
{
	if (strcmp(event, "claim_timed_out") == 0)
		return WL_CHANGE_TASK_RELEASED;
	for (int i = 0; i < lengthof(task_changes); i++)
		if (strcmp(task_changes[i].kind, "task") == 0 &&
			strcmp(task_changes[i].event, event) == 0 &&
			task_changes[i].change != WL_CHANGE_TASK_PURGED)
			return task_changes[i].change;
	elog(ERROR, "unknown task event \"%s\"", event);
	pg_unreachable();
}

/*
 * Bring the task's row of worklist.task_claim in line with the task after
 * a change of the given kind: a claim taken inserts the task's holder,
 * claimed_at and claim_expires_at there, a claim moved updates them; a claim given back,
 * timed out, cleared by an escalation or ended by a settlement removes it.
 * A note or an edit leaves the claim as it is.  (A 0.3 schema has no such
 * table: its indexes read the task row itself.)
 */
static void
mirror_claim(text *tenant, text *id, WlChange change)
{
	/* a claim of an unheld task: it has no row there */
	static WlStmt put WL_KEPT = {
		"INSERT INTO worklist.task_claim"
		" (tenant, task_id, holder, claimed_at, claim_expires_at)"
		" SELECT t.tenant, t.id, t.holder, t.claimed_at, t.claim_expires_at"
		" FROM worklist.task t"
		BY_KEY("t", "t.holder IS NOT NULL AND " LIVE("t")),
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.claim_row.put"
	};
	/* a claim moved to another holder */
	static WlStmt move WL_KEPT = {
		"UPDATE worklist.task_claim c SET holder = t.holder,"
		" claimed_at = t.claimed_at, claim_expires_at = t.claim_expires_at"
		" FROM worklist.task t"
		" WHERE c.tenant" EQ "$1 AND c.task_id" EQ "$2"
		" AND t.tenant" EQ "$1 AND t.id" EQ "$2",
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.claim_row.move"
	};
	static WlStmt drop WL_KEPT = {
		"DELETE FROM worklist.task_claim c"
		" WHERE c.tenant" EQ "$1 AND c.task_id" EQ "$2",
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.claim_row.drop"
	};
	Datum		values[2];

	if (change == WL_CHANGE_TASK_UPDATED || change == WL_CHANGE_TASK_NOTED ||
		change == WL_CHANGE_TASK_OPENED || !wl_schema_current())
		return;
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	if (change == WL_CHANGE_TASK_CLAIMED)
		(void) wl_exec(&put, values, NULL, false, 0);
	else if (change == WL_CHANGE_TASK_TAKEN_OVER || change == WL_CHANGE_TASK_HANDED_OVER)
		(void) wl_exec(&move, values, NULL, false, 0);
	else
		(void) wl_exec(&drop, values, NULL, false, 0);
}

/* Does a change of this kind settle its task? */
static bool
settles(WlChange change)
{
	return change == WL_CHANGE_TASK_COMPLETED || change == WL_CHANGE_TASK_EXPIRED ||
		change == WL_CHANGE_TASK_WITHDRAWN;
}

Datum
wl_task_changed(text *tenant, text *id, const char *event, text *actor,
				TimestampTz at, Jsonb *detail)
{
	WlChange	change = notified_change(event);
	Datum		logged = wl_task_event(tenant, id, event, actor, at, detail);

	mirror_claim(tenant, id, change);
	if (settles(change))
		wl_task_settled(tenant, id, at);
	wl_change_record_text(tenant, change);
	return logged;
}

/*
 * mirror_claim for the tasks of ids (a text[]) at once, after a change of
 * each of them of one kind: a claim or a change that ends one (a hand-over
 * or a take-over of many tasks at once has no verb).
 */
static void
mirror_claims(text *tenant, ArrayType *ids, WlChange change)
{
	/*
	 * Each task, and each claim row, found by its whole key in a scalar
	 * subquery per element, which only the primary key can serve: a plan
	 * kept for the session must not walk the tenant's every row because
	 * the table was small when it was made.  The claim rows are deleted
	 * by their ctid, read under the tasks' row locks, which every change
	 * of a claim row holds.
	 */
	static WlStmt put WL_KEPT = {
		"INSERT INTO worklist.task_claim"
		" (tenant, task_id, holder, claimed_at, claim_expires_at)"
		" SELECT (x.t).tenant, (x.t).id, (x.t).holder, (x.t).claimed_at, (x.t).claim_expires_at"
		" FROM (SELECT (SELECT t FROM worklist.task t WHERE t.tenant" EQ "$1 AND t.id" EQ "a.id) t"
		"  FROM pg_catalog.unnest($2) a(id) OFFSET 0) x"
		" WHERE ((x.t).holder IS NOT NULL AND (x.t).settled_at IS NULL) IS TRUE",
		2, {TEXTOID, TEXTARRAYOID},
		.generic = true, .name = "task.claim_rows.put"
	};
	static WlStmt drop WL_KEPT = {
		"DELETE FROM worklist.task_claim c"
		" WHERE c.ctid" EQ "ANY (ARRAY(SELECT (SELECT x.ctid FROM worklist.task_claim x"
		"  WHERE x.tenant" EQ "$1 AND x.task_id" EQ "a.id) FROM pg_catalog.unnest($2) a(id)))",
		2, {TEXTOID, TEXTARRAYOID},
		.generic = true, .name = "task.claim_rows.drop"
	};
	Datum		values[2];

	if (!wl_schema_current())
		return;
	Assert(change != WL_CHANGE_TASK_TAKEN_OVER && change != WL_CHANGE_TASK_HANDED_OVER);
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(ids);
	(void) wl_exec(change == WL_CHANGE_TASK_CLAIMED ? &put : &drop, values, NULL, false, 0);
}

void
wl_tasks_changed(text *tenant, ArrayType *ids, const char *event, text *actor,
				 TimestampTz at)
{
	WlChange	change = notified_change(event);
	int			n = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));

	if (change == WL_CHANGE_TASK_TAKEN_OVER || change == WL_CHANGE_TASK_HANDED_OVER ||
		change == WL_CHANGE_TASK_UPDATED || change == WL_CHANGE_TASK_NOTED ||
		change == WL_CHANGE_TASK_OPENED)
		elog(ERROR, "task event \"%s\" is not made for many tasks at once", event);
	if (n == 0)
		return;
	wl_task_events(tenant, ids, event, actor, at);
	mirror_claims(tenant, ids, change);
	if (settles(change))
		wl_tasks_settled(tenant, ids, at);
	wl_change_record_text_n(tenant, change, n);
}

Jsonb *
wl_task_detail(const char *key, const char *value)
{
	JsonbParseState *state = NULL;
	JsonbValue	k;
	JsonbValue	v;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	if (value == NULL)
		v.type = jbvNull;
	else
	{
		v.type = jbvString;
		v.val.string.val = (char *) value;
		v.val.string.len = strlen(value);
	}
	(void) pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	(void) pushJsonbValue(&state, WJB_KEY, &k);
	(void) pushJsonbValue(&state, WJB_VALUE, &v);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* The transaction's now(): when a verb without a now of its own judged. */
#define VERB_NOW() GetCurrentTransactionStartTimestamp()

/* The label of an enum argument, as text (to be cast back in SQL). */
static Datum
enum_label(Datum value)
{
	return CStringGetTextDatum(wl_enum_label(value));
}

/* The task in row (a whole worklist.task) became claimable: see hint.c. */
static void
row_claimable(text *tenant, Datum row)
{
	HeapTupleHeader th = DatumGetHeapTupleHeader(row);
	bool		isnull;
	Datum		priority = GetAttributeByName(th, "priority", &isnull);
	Datum		created_at = GetAttributeByName(th, "created_at", &isnull);

	wl_hint_claimable(text_to_cstring(tenant), DatumGetInt32(priority),
					  DatumGetTimestampTz(created_at));
}

/* The first refusals of every verb that names an actor: WL001, WL002. */
static void
check_reach(const TaskFacts *f, const char *id, const char *actor)
{
	if (!f->found)
		wl_error_not_found("task", id);
	if (f->excluded)
		wl_error_excluded(id, actor);
}

/*
 * The refusals a claim (or a take-over, for its new holder) meets before
 * availability is looked at, in the documented order: WL001, WL002, WL003,
 * WL004.  None of them names the holder.
 */
static void
check_eligible(const TaskFacts *f, const char *id, const char *actor)
{
	check_reach(f, id, actor);
	if (!f->meets)
		wl_error_wrong_role(id, actor);
	if (!is_pending(f->state))
		wl_error_not_pending(id, f->state);
}

/*
 * worklist.open_task(id, case_id, roles, run_id, payload, priority, due_at,
 *					  expiry_policy, excluded, escalation_roles, claim_timeout)
 *	RETURNS task
 *
 * An argument with a default that is passed NULL means its default; roles
 * must be a non-empty array of identifiers; claim_timeout, when given, a
 * positive interval.
 */
Datum
wl_open_task(PG_FUNCTION_ARGS)
{
	static WlStmt insert WL_KEPT = {
		"INSERT INTO worklist.task AS t (tenant, id, case_id, roles, run_id,"
		" payload, priority, due_at, expiry_policy, excluded, escalation_roles,"
		" claim_timeout)"
		" VALUES ($1, $2, $3, $4, $5,"
		" COALESCE($6, '{}'::pg_catalog.jsonb), COALESCE($7, 0), $8,"
		" COALESCE($9::worklist.expiry_policy, 'deny'::worklist.expiry_policy),"
		" COALESCE($10, '{}'::pg_catalog.text[]),"
		" COALESCE($11, '{}'::pg_catalog.text[]), $12)"
		" ON CONFLICT (tenant, id) DO NOTHING"
		" RETURNING t",
		12, {TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID, TEXTOID, JSONBOID,
			INT4OID, TIMESTAMPTZOID, TEXTOID, TEXTARRAYOID, TEXTARRAYOID,
		INTERVALOID},
		.generic = true, .name = "task.open.insert"
	};
	static WlStmt existing WL_KEPT = {
		"SELECT t FROM worklist.task t WHERE " KEY("t"),
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.open.existing"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES));
	Datum		values[12];
	char		nulls[12];
	WlSpi		spi;
	Datum		row = (Datum) 0;
	bool		created = false;
	bool		isnull;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(wl_arg_ident(fcinfo, 0, "id"));
	values[2] = PointerGetDatum(wl_arg_ident(fcinfo, 1, "case_id"));
	values[3] = PointerGetDatum(wl_arg_idents(fcinfo, 2, "roles", false));
	values[4] = PointerGetDatum(wl_arg_ident_opt(fcinfo, 3, "run_id"));
	if (PG_ARGISNULL(3))
		nulls[4] = 'n';
	/*
	 * payload, priority, due_at and expiry_policy (arguments 4 to 7,
	 * parameters $6 to $9): NULL means the default, which the statement
	 * supplies.
	 */
	for (int arg = 4; arg <= 7; arg++)
	{
		if (PG_ARGISNULL(arg))
			nulls[arg + 1] = 'n';
		else if (arg == 4)
			values[arg + 1] = wl_arg_document(fcinfo, 4, "payload");
		else if (arg == 7)
			values[arg + 1] = enum_label(PG_GETARG_DATUM(arg));
		else
			values[arg + 1] = PG_GETARG_DATUM(arg);
	}
	if (PG_ARGISNULL(8))
		nulls[9] = 'n';
	else
		values[9] = PointerGetDatum(wl_arg_idents(fcinfo, 8, "excluded", true));
	if (PG_ARGISNULL(9))
		nulls[10] = 'n';
	else
		values[10] = PointerGetDatum(wl_arg_idents(fcinfo, 9, "escalation_roles", true));
	if (PG_ARGISNULL(10))
		nulls[11] = 'n';
	else
	{
		wl_check_positive_interval(PG_GETARG_DATUM(10), "claim_timeout");
		values[11] = PG_GETARG_DATUM(10);
	}

	wl_spi_begin(&spi);
	for (int attempt = 0;; attempt++)
	{
		if (wl_exec(&insert, values, nulls, false, 0) == 1)
		{
			created = true;
			break;
		}
		/* it exists: return it as it is (a fresh snapshot sees it) */
		if (wl_exec(&existing, values, NULL, false, 0) == 1)
			break;
		/* it was deleted in between (erase_tenant): insert again */
		if (attempt >= MAX_ATTEMPTS)
			elog(ERROR, "task neither inserted nor found");
	}
	row = wl_result_datum(0, 1, &isnull);
	/* a re-open changes nothing and appends nothing */
	if (created)
		(void) wl_task_changed(tenant, DatumGetTextPP(values[1]), "opened",
							   NULL, VERB_NOW(), NULL);
	wl_spi_end(&spi);

	if (created)
		row_claimable(tenant, row);
	PG_RETURN_DATUM(row);
}

/*
 * worklist.claim(id, actor, roles) RETURNS task
 *
 * Refusals, first failure first: WL001 not found, WL002 excluded, WL003
 * wrong role, WL004 not pending, WL005 already claimed.  The first three
 * never mention the holder.  A claim by the current holder returns the
 * task unchanged.
 */
static TaskVerdict
claim_refusal(const TaskChange *c, const TaskFacts *f)
{
	char	   *id = text_to_cstring(c->id);
	char	   *actor = text_to_cstring(c->actor);

	check_eligible(f, id, actor);
	if (f->holder != NULL && strcmp(f->holder, actor) == 0)
		return TASK_UNCHANGED;	/* same holder: unchanged */
	if (f->holder != NULL)
	{
		wl_count(WL_COUNT_CLAIM_CONFLICTS);
		wl_error_already_claimed(id, f->holder);
	}
	return TASK_RETRY;			/* free after all, and now locked by us */
}

Datum
wl_claim(PG_FUNCTION_ARGS)
{
	static WlStmt take WL_KEPT = {
		"UPDATE worklist.task t" SET_CLAIM("$3")
		BY_KEY("t", CLAIMABLE("t")
			   " AND " NOT_EXCLUDED("t", "$3") " AND " AUDIENCE("t", "$4"))
		" RETURNING t",
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID},
		.generic = true, .name = "task.claim"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_ACTOR(1, "actor"), WL_ROLES(2, "roles")));
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	text	   *actor = wl_arg_ident(fcinfo, 1, "actor");
	ArrayType  *roles = wl_arg_idents(fcinfo, 2, "roles", true);
	Datum		values[4];
	TaskChange	change = {&take, values, tenant, id, actor, roles, (Datum) 0,
	NULL, claim_refusal};
	TaskFacts	f;
	Datum		row;
	bool		claimed;
	bool		isnull;
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = PointerGetDatum(actor);
	values[3] = PointerGetDatum(roles);

	wl_hint_took();
	wl_spi_begin(&spi);
	claimed = change_task(&change, &f);
	row = claimed ? wl_result_datum(0, 1, &isnull) : f.row;
	if (claimed)
		(void) wl_task_changed(tenant, id, "claimed", actor, VERB_NOW(), NULL);
	wl_spi_end(&spi);

	if (claimed)
		wl_count(WL_COUNT_CLAIMS);
	PG_RETURN_DATUM(row);
}

/*
 * worklist.claim_next(actor, roles, skip) RETURNS task
 *
 * Claims the first claimable task in queue order whose audience meets
 * roles, that does not exclude actor and whose id is not in skip (NULL:
 * none; at most 1000 elements), skipping rows locked by anybody else, in
 * one statement.  NULL when there is none.  (On a 0.3 schema the function
 * has no skip argument.)
 *
 * The statement starts at the tenant's hint (hint.c).  When the hint asks
 * for it, the statement also finds the first task claimable by anybody from
 * there (first), which the hint is then raised to; the other claims run
 * the same statement without that part.
 */
#define CLAIM_NEXT_PICK(claimable) \
	CLAIM_PICK(claimable, "q.id", "1") "," \
	" took AS (" \
	" UPDATE worklist.task t" SET_CLAIM("$2") \
	"  WHERE t.tenant" EQ "$1 AND t.id" EQ "(SELECT pick.id FROM pick)" \
	"  RETURNING t)"
#define CLAIM_NEXT_ARGS \
	7, {TEXTOID, TEXTOID, TEXTARRAYOID, INT8OID, TIMESTAMPTZOID, TEXTOID, \
	TEXTARRAYOID}

Datum
wl_claim_next(PG_FUNCTION_ARGS)
{
#define CLAIM_NEXT_RAISING(claimable) \
		"WITH" CLAIM_FIRST(claimable) "," \
		CLAIM_NEXT_PICK(claimable) \
		" SELECT (SELECT took.t FROM took), f.* FROM (SELECT) one LEFT JOIN first f ON true"
	static WlStmt raising WL_KEPT = {
		CLAIM_NEXT_RAISING(CLAIMABLE),
		CLAIM_NEXT_ARGS,
		.generic = true, .name = "task.claim_next.raising",
		.sql03 = CLAIM_NEXT_RAISING(CLAIMABLE03)
	};
	static WlStmt stmt WL_KEPT = {
		"WITH" CLAIM_NEXT_PICK(CLAIMABLE)
		" SELECT (SELECT took.t FROM took)",
		CLAIM_NEXT_ARGS,
		.generic = true, .name = "task.claim_next",
		.sql03 = "WITH" CLAIM_NEXT_PICK(CLAIMABLE03)
		" SELECT (SELECT took.t FROM took)"
	};
#undef CLAIM_NEXT_RAISING
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_ACTOR(0, "actor"), WL_ROLES(1, "roles")));
	text	   *actor = wl_arg_ident(fcinfo, 0, "actor");
	ArrayType  *roles = wl_arg_idents(fcinfo, 1, "roles", true);
	ArrayType  *skip;
	char	   *tenant_c;
	WlQueueKey	hint;
	WlQueueKey	first;
	uint64		version;
	uint64		raises;
	bool		raise;
	Datum		values[7];
	Datum		row = (Datum) 0;
	bool		isnull = true;
	WlSpi		spi;

	if (PG_NARGS() < 3 || PG_ARGISNULL(2))
		skip = construct_empty_array(TEXTOID);
	else
		skip = wl_arg_idents(fcinfo, 2, "skip", true);
	/* an empty roles array meets no audience */
	if (ArrayGetNItems(ARR_NDIM(roles), ARR_DIMS(roles)) == 0)
		PG_RETURN_NULL();

	tenant_c = text_to_cstring(tenant);
	(void) wl_hint_read(tenant_c, &hint, &version, &raises, &raise);

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(actor);
	values[2] = PointerGetDatum(roles);
	values[3] = Int64GetDatum(hint.neg_priority);
	values[4] = TimestampTzGetDatum(hint.created_at);
	values[5] = CStringGetTextDatum(hint.id);
	values[6] = PointerGetDatum(skip);
	wl_spi_begin(&spi);
	if (wl_exec(raise ? &raising : &stmt, values, NULL, false, 0) != 1)
		elog(ERROR, "claim_next returned no row");
	row = wl_result_datum(0, 1, &isnull);
	first = wl_queue_key_max;
	if (raise)
	{
		bool		none;
		Datum		d = wl_result_datum(0, 2, &none);

		if (!none)
		{
			char	   *id = wl_result_cstring(0, 4);

			first.neg_priority = DatumGetInt64(d);
			first.created_at = DatumGetTimestampTz(wl_result_datum(0, 3, &none));
			strlcpy(first.id, id, sizeof(first.id));
		}
	}
	if (!isnull)
	{
		bool		none;
		Datum		id = GetAttributeByName(DatumGetHeapTupleHeader(row), "id", &none);

		(void) wl_task_changed(tenant, DatumGetTextPP(id), "claimed", actor,
							   VERB_NOW(), NULL);
	}
	wl_spi_end(&spi);

	if (raise)
		wl_hint_raise(tenant_c, version, raises, &first);
	if (isnull)
		PG_RETURN_NULL();
	wl_hint_took();
	wl_count(WL_COUNT_CLAIMS);
	PG_RETURN_DATUM(row);
}

/*
 * worklist.release(id, actor) RETURNS void
 *
 * WL001 when there is no such task, WL002 when actor is barred from it
 * (so a barred actor never learns the holder), else WL006 unless actor
 * holds the pending task.  An open task becomes open again; an escalated
 * one stays escalated.
 */
static TaskVerdict
release_refusal(const TaskChange *c, const TaskFacts *f)
{
	char	   *id = text_to_cstring(c->id);
	char	   *actor = text_to_cstring(c->actor);

	check_reach(f, id, actor);
	if (!is_pending(f->state))
		wl_error_not_held(id, actor, NULL);
	if (f->holder == NULL || strcmp(f->holder, actor) != 0)
		wl_error_not_held(id, actor, f->holder);
	return TASK_RETRY;
}

Datum
wl_release(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"UPDATE worklist.task t" SET_UNCLAIM
		BY_KEY("t", "t.holder" EQ "$3 AND " PENDING("t"))
		" RETURNING t",
		3, {TEXTOID, TEXTOID, TEXTOID},
		.generic = true, .name = "task.release"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_ACTOR(1, "actor")));
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	text	   *actor = wl_arg_ident(fcinfo, 1, "actor");
	Datum		values[3];
	TaskChange	change = {&stmt, values, tenant, id, actor, NULL, (Datum) 0,
	NULL, release_refusal};
	TaskFacts	f;
	bool		isnull;
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = PointerGetDatum(actor);

	wl_spi_begin(&spi);
	if (change_task(&change, &f))
	{
		row_claimable(tenant, wl_result_datum(0, 1, &isnull));
		(void) wl_task_changed(tenant, id, "released", actor, VERB_NOW(), NULL);
	}
	wl_spi_end(&spi);
	PG_RETURN_VOID();
}

/*
 * worklist.take_over(id, from_actor, actor, roles) RETURNS task
 *
 * Claim's order for actor (WL001, WL002, WL003, WL004), then WL006 naming
 * from_actor when from_actor is not the holder, nobody holding it
 * included.  Taking over from oneself returns the task unchanged.
 */
static TaskVerdict
take_over_refusal(const TaskChange *c, const TaskFacts *f)
{
	char	   *id = text_to_cstring(c->id);
	char	   *actor = text_to_cstring(c->actor);
	char	   *from = text_to_cstring(c->from_actor);

	check_eligible(f, id, actor);
	if (f->holder == NULL || strcmp(f->holder, from) != 0)
		wl_error_not_held(id, from, f->holder);
	if (strcmp(f->holder, actor) == 0)
		return TASK_UNCHANGED;	/* from oneself: unchanged */
	return TASK_RETRY;			/* held by from_actor after all, and locked */
}

Datum
wl_take_over(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"UPDATE worklist.task t SET holder = $4, claimed_at = pg_catalog.now(),"
		" claim_expires_at = pg_catalog.now() OPERATOR(pg_catalog.+) t.claim_timeout"
		BY_KEY("t", PENDING("t")
			   " AND t.holder" EQ "$3 AND t.holder OPERATOR(pg_catalog.<>) $4"
			   " AND " NOT_EXCLUDED("t", "$4") " AND " AUDIENCE("t", "$5"))
		" RETURNING t",
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID},
		.generic = true, .name = "task.take_over"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_ACTOR(2, "actor"), WL_ROLES(3, "roles")));
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	text	   *from = wl_arg_ident(fcinfo, 1, "from_actor");
	text	   *actor = wl_arg_ident(fcinfo, 2, "actor");
	ArrayType  *roles = wl_arg_idents(fcinfo, 3, "roles", true);
	Datum		values[5];
	TaskChange	change = {&stmt, values, tenant, id, actor, roles, (Datum) 0,
	from, take_over_refusal};
	TaskFacts	f;
	Datum		row;
	bool		moved;
	bool		isnull;
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = PointerGetDatum(from);
	values[3] = PointerGetDatum(actor);
	values[4] = PointerGetDatum(roles);

	wl_spi_begin(&spi);
	moved = change_task(&change, &f);
	row = moved ? wl_result_datum(0, 1, &isnull) : f.row;
	if (moved)
		(void) wl_task_changed(tenant, id, "taken_over", actor, VERB_NOW(),
							   wl_task_detail("from", text_to_cstring(from)));
	wl_spi_end(&spi);

	if (moved)
		wl_count(WL_COUNT_TAKE_OVERS);
	PG_RETURN_DATUM(row);
}

/*
 * worklist.complete(id, actor, decision) RETURNS boolean
 *
 * The holder settles the task as completed.  true when this call settled
 * it, and also when it is already completed by this actor with an equal
 * decision (a retry); false when it is otherwise already settled; WL001
 * when there is none, WL002 when actor is barred from it, WL006 when it is
 * pending but actor does not hold it.
 */
static TaskVerdict
complete_refusal(const TaskChange *c, const TaskFacts *f)
{
	char	   *id = text_to_cstring(c->id);
	char	   *actor = text_to_cstring(c->actor);

	check_reach(f, id, actor);
	if (!is_pending(f->state))
		return TASK_UNCHANGED;	/* already settled */
	if (f->holder == NULL || strcmp(f->holder, actor) != 0)
		wl_error_not_held(id, actor, f->holder);
	return TASK_RETRY;
}

Datum
wl_complete(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"UPDATE worklist.task t SET state = " STATE("completed") ","
		" settled_at = pg_catalog.now(), claim_expires_at = NULL,"
		" decided_by = $3, decision = $4"
		BY_KEY("t", "t.holder" EQ "$3 AND " PENDING("t")),
		4, {TEXTOID, TEXTOID, TEXTOID, JSONBOID},
		.generic = true, .name = "task.complete"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_ACTOR(1, "actor")));
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	text	   *actor = wl_arg_ident(fcinfo, 1, "actor");
	Datum		decision = wl_arg_document(fcinfo, 2, "decision");
	Datum		values[4];
	TaskChange	change = {&stmt, values, tenant, id, actor, NULL, decision,
	NULL, complete_refusal};
	TaskFacts	f;
	bool		settled;
	bool		retried = false;
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = PointerGetDatum(actor);
	values[3] = decision;

	wl_spi_begin(&spi);
	settled = change_task(&change, &f);

	/*
	 * Already settled.  By this actor with this decision: a retried
	 * completion whose first answer was lost, which converges.  Otherwise
	 * somebody else (the sweep) won.
	 */
	if (!settled)
		retried = strcmp(f.state, "completed") == 0 && f.decided_by &&
			strcmp(f.decided_by, text_to_cstring(actor)) == 0 && f.same_decision;
	else
		(void) wl_task_changed(tenant, id, "completed", actor, VERB_NOW(), NULL);
	wl_spi_end(&spi);

	PG_RETURN_BOOL(settled || retried);
}

/*
 * worklist.set_state(id, state) RETURNS boolean
 *
 * Compare-and-set from any pending state to the settled state given;
 * false, changing nothing, when the task is already settled.  A pending
 * target is 22023.
 */
static TaskVerdict
set_state_refusal(const TaskChange *c, const TaskFacts *f)
{
	if (!f->found)
		wl_error_not_found("task", text_to_cstring(c->id));
	if (!is_pending(f->state))
		return TASK_UNCHANGED;	/* already settled */
	return TASK_RETRY;
}

Datum
wl_set_state(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"UPDATE worklist.task t SET state = $3::worklist.task_state,"
		" settled_at = pg_catalog.now(), claim_expires_at = NULL"
		BY_KEY("t", PENDING("t")),
		3, {TEXTOID, TEXTOID, TEXTOID},
		.generic = true, .name = "task.set_state"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES));
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	Datum		state = enum_label(wl_arg_required(fcinfo, 1, "state"));
	char	   *state_c = TextDatumGetCString(state);
	Datum		values[3];
	TaskChange	change = {&stmt, values, tenant, id, NULL, NULL, (Datum) 0,
	NULL, set_state_refusal};
	TaskFacts	f;
	bool		settled;
	WlSpi		spi;

	if (is_pending(state_c))
		wl_error_bad_arg("state", "must be a settled state (completed, expired or withdrawn)");

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = state;

	wl_hint_took();
	wl_spi_begin(&spi);
	settled = change_task(&change, &f);
	if (settled)
		(void) wl_task_changed(tenant, id, state_c, NULL, VERB_NOW(),
							   wl_task_detail("via", "set_state"));
	wl_spi_end(&spi);

	PG_RETURN_BOOL(settled);
}

/*
 * Escalate the task (tenant, id) if it is open or claimed: state
 * escalated, holder cleared -- which widens the audience -- in one
 * statement.  Returns the task as it is afterwards, or 0 when there is
 * none.  Must be called inside SPI.
 */
static Datum
escalate_task(text *tenant, text *id, bool *escalated)
{
	static WlStmt stmt WL_KEPT = {
		"UPDATE worklist.task t SET state = " STATE("escalated") ","
		" holder = NULL, claimed_at = NULL, claim_expires_at = NULL,"
		" escalated_at = pg_catalog.now()"
		BY_KEY("t", OPEN_OR_CLAIMED("t"))
		" RETURNING t",
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.escalate",
		.sql03 = "UPDATE worklist.task t SET state = " STATE("escalated") ","
		" holder = NULL, claimed_at = NULL, claim_expires_at = NULL"
		BY_KEY("t", OPEN_OR_CLAIMED("t"))
		" RETURNING t"
	};
	static WlStmt current WL_KEPT = {
		"SELECT t FROM worklist.task t WHERE " KEY("t"),
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.escalate.current"
	};
	Datum		values[2];
	bool		isnull;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	*escalated = wl_exec(&stmt, values, NULL, false, 0) == 1;
	/* otherwise the task as it stands, read with a snapshot that sees it */
	if (!*escalated && wl_exec(&current, values, NULL, false, 0) == 0)
		return (Datum) 0;
	return wl_result_datum(0, 1, &isnull);
}

/* worklist.escalate(id) RETURNS task */
Datum
wl_escalate(PG_FUNCTION_ARGS)
{
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES));
	text	   *id;
	bool		escalated;
	Datum		row = (Datum) 0;
	WlSpi		spi;

	/* it takes a claim away from its holder, naming nobody: not a member's */
	wl_require_binding(WL_BINDING_SERVICE, "escalate");
	id = wl_arg_ident(fcinfo, 0, "id");
	wl_spi_begin(&spi);
	row = escalate_task(tenant, id, &escalated);
	if (row == (Datum) 0)
		wl_error_not_found("task", text_to_cstring(id));
	/* a settled or already escalated task is returned as it is */
	if (escalated)
		(void) wl_task_changed(tenant, id, "escalated", NULL, VERB_NOW(), NULL);
	wl_spi_end(&spi);

	if (escalated)
		row_claimable(tenant, row);
	PG_RETURN_DATUM(row);
}

/*
 * worklist.withdraw_run(run_id, awaited) RETURNS integer
 *
 * Settles as withdrawn the tasks named in awaited that belong to run_id
 * and are still pending.  Names of tasks that do not exist, belong to
 * another run or are settled are passed over.  The settling of tasks
 * beneath the run verbs as well (settle.c) records each change as
 * wl_task_changed() does.
 */
Datum
wl_withdraw_run(PG_FUNCTION_ARGS)
{
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES));
	text	   *run_id;
	ArrayType  *awaited;
	int32		n;
	WlSpi		spi;

	/* it settles tasks others may hold, naming nobody: not a member's */
	wl_require_binding(WL_BINDING_SERVICE, "withdraw_run");
	run_id = wl_arg_ident(fcinfo, 0, "run_id");
	awaited = wl_arg_idents(fcinfo, 1, "awaited", true);

	/*
	 * One task at a time, each found by its whole key, with its event and
	 * the resolution of its parks (settle.c); a name given twice is
	 * withdrawn once.
	 */
	wl_spi_begin(&spi);
	n = wl_withdraw_tasks(tenant, awaited, run_id, VERB_NOW());
	wl_spi_end(&spi);

	PG_RETURN_INT32(n);
}

/*
 * worklist.note(id, actor, body) RETURNS task_event
 *
 * Appends a noted event, by actor, with detail {"body": body}, to the
 * history of a pending or settled task; body 1 to 4096 characters (22023);
 * WL001 when there is no such task.  The task's row is locked first, as
 * every change of it is, which numbers its events one after another.
 */
Datum
wl_note(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT FROM worklist.task t WHERE " KEY("t") " FOR NO KEY UPDATE OF t",
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.note.lock"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_ACTOR(1, "actor")));
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	text	   *actor = wl_arg_ident(fcinfo, 1, "actor");
	text	   *body = wl_arg_text(fcinfo, 2, "body", true);
	Datum		values[2];
	Datum		event;
	WlSpi		spi;

	if (VARSIZE_ANY_EXHDR(body) == 0)
		wl_error_bad_arg("body", "must not be empty");
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);

	wl_spi_begin(&spi);
	if (wl_exec(&stmt, values, NULL, false, 0) == 0)
		wl_error_not_found("task", text_to_cstring(id));
	event = wl_task_changed(tenant, id, "noted", actor, VERB_NOW(),
							wl_task_detail("body", text_to_cstring(body)));
	wl_spi_end(&spi);
	PG_RETURN_DATUM(event);
}

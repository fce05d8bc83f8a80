/*-------------------------------------------------------------------------
 *
 * task.c
 *	  Tasks: pending human decisions (doc/reference.md, section 4).
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
 * the lock just taken, and cannot miss.
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
#include "sweep.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(wl_open_task);
PG_FUNCTION_INFO_V1(wl_task);
PG_FUNCTION_INFO_V1(wl_claim);
PG_FUNCTION_INFO_V1(wl_claim_next);
PG_FUNCTION_INFO_V1(wl_release);
PG_FUNCTION_INFO_V1(wl_take_over);
PG_FUNCTION_INFO_V1(wl_complete);
PG_FUNCTION_INFO_V1(wl_set_state);
PG_FUNCTION_INFO_V1(wl_escalate);
PG_FUNCTION_INFO_V1(wl_withdraw_run);
PG_FUNCTION_INFO_V1(wl_queue);
PG_FUNCTION_INFO_V1(wl_for_case);
PG_FUNCTION_INFO_V1(wl_held);
PG_FUNCTION_INFO_V1(wl_open_count);
PG_FUNCTION_INFO_V1(wl_overdue);

/* ----------
 * Pieces of SQL shared by the statements.  The partial indexes of
 * sql/parts/10_task.sql repeat CLAIMABLE, PENDING and OPEN_OR_CLAIMED word for
 * word: the planner uses a partial index only when the query's condition
 * matches its predicate.
 * ----------
 */
#define EQ " OPERATOR(pg_catalog.=) "
#define STATE(s) "'" s "'::worklist.task_state"

/* The row of (tenant $1, id $2). */
#define KEY(a) a ".tenant" EQ "$1 AND " a ".id" EQ "$2"

/*
 * " WHERE" the row of the key, and only if cond holds for it.  cond is
 * written as one test of truth, which no index can serve and from which
 * no partial index's predicate follows: the primary key is then the one
 * way to the row, whatever the planner believed of the table's size when
 * it planned.  With cond written plainly the planner could read a partial
 * index whose predicate cond implies, with the id as a later key column:
 * task_pending_case (all the tenant's pending tasks) for plans made on
 * empty tables, and task_held (every task the holder settled, until
 * VACUUM removes the entries) for complete and release on full ones --
 * a lookup that walked a tenant's queue or a holder's recent history.
 */
#define BY_KEY(a, cond) " WHERE " KEY(a) " AND (" cond ") IS TRUE"

#define PENDING(a) \
	a ".state" EQ "ANY ('{open,claimed,escalated}'::worklist.task_state[])"
#define OPEN_OR_CLAIMED(a) \
	a ".state" EQ "ANY ('{open,claimed}'::worklist.task_state[])"
/* What queue lists and claim and claim_next may take. */
#define CLAIMABLE(a) \
	"(" a ".state" EQ STATE("open") \
	" OR (" a ".state" EQ STATE("escalated") " AND " a ".holder IS NULL))"
/* roles r meet the audience: roles, widened by escalation_roles once escalated */
#define AUDIENCE(a, r) \
	"(" a ".roles OPERATOR(pg_catalog.&&) " r \
	" OR (" a ".state" EQ STATE("escalated") \
	" AND " a ".escalation_roles OPERATOR(pg_catalog.&&) " r "))"
#define NOT_EXCLUDED(a, actor) "NOT (" actor EQ "ANY (" a ".excluded))"
/* Queue order. */
#define QUEUE_ORDER(a) \
	" ORDER BY " a ".priority DESC, " a ".created_at, " a ".id"
/*
 * The same order as a key that ascends, as task_claimable stores it (see
 * hint.c): what claim_next and queue read the claimable rows by, from a
 * starting key (NEG_PRIORITY, created_at, id) >= (p, c, i) on.
 */
#define NEG_PRIORITY(a) "(OPERATOR(pg_catalog.-) " a ".priority::pg_catalog.int8)"
#define QUEUE_KEY(a) NEG_PRIORITY(a) ", " a ".created_at, " a ".id"
#define FROM_KEY(a, p, c, i) \
	"ROW(" QUEUE_KEY(a) ") OPERATOR(pg_catalog.>=) ROW(" p ", " c ", " i ")"
/* Taking a claim: an open task becomes claimed, an escalated one stays. */
#define SET_CLAIM(actor) \
	" SET holder = " actor ", claimed_at = pg_catalog.now()," \
	" claim_expires_at = pg_catalog.now() OPERATOR(pg_catalog.+) t.claim_timeout," \
	" state = CASE WHEN t.state" EQ STATE("open") \
	" THEN " STATE("claimed") " ELSE t.state END"
/* Giving a claim back: an open task becomes open again, an escalated one stays. */
#define SET_UNCLAIM \
	" SET holder = NULL, claimed_at = NULL, claim_expires_at = NULL," \
	" state = CASE WHEN t.state" EQ STATE("claimed") \
	" THEN " STATE("open") " ELSE t.state END"

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
lock_task_decided(text *tenant, text *id, text *actor, ArrayType *roles,
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

static void
lock_task(text *tenant, text *id, text *actor, ArrayType *roles, TaskFacts *f)
{
	lock_task_decided(tenant, id, actor, roles, (Datum) 0, f);
}

/* The label of an enum argument, as text (to be cast back in SQL). */
static Datum
enum_label(Datum value)
{
	return CStringGetTextDatum(wl_enum_label(value));
}

/* The change a task settled into state (completed, expired, withdrawn) is. */
static WlChange
settled_change(const char *state)
{
	if (strcmp(state, "completed") == 0)
		return WL_CHANGE_TASK_COMPLETED;
	if (strcmp(state, "expired") == 0)
		return WL_CHANGE_TASK_EXPIRED;
	if (strcmp(state, "withdrawn") == 0)
		return WL_CHANGE_TASK_WITHDRAWN;
	elog(ERROR, "unknown settled state \"%s\"", state);
	pg_unreachable();
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

/*
 * Run a verb's compare-and-set UPDATE; true when it changed the row.  A
 * later attempt runs after a locked read showed that it can match now:
 * with the row locked it cannot miss, and should it miss MAX_ATTEMPTS
 * times all the same, give up rather than loop.
 */
static bool
try_update(WlStmt *stmt, Datum *values, const char *nulls, int attempt)
{
	if (attempt >= MAX_ATTEMPTS)
		elog(ERROR, "task changed under its row lock");
	return wl_exec(stmt, values, nulls, false, 0) == 1;
}

/*
 * The refusals a claim (or a take-over, for its new holder) meets before
 * availability is looked at, in the documented order: WL001, WL002, WL003,
 * WL004.  None of them names the holder.
 */
static void
check_eligible(const TaskFacts *f, const char *id, const char *actor)
{
	if (!f->found)
		wl_error_not_found("task", id);
	if (f->excluded)
		wl_error_excluded(id, actor);
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
	text	   *tenant = wl_tenant_enter();
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
	wl_spi_end(&spi);

	if (created)
	{
		row_claimable(tenant, row);
		wl_change_record_text(tenant, WL_CHANGE_TASK_OPENED);
	}
	PG_RETURN_DATUM(row);
}

/* worklist.task(id) RETURNS task: one task, or NULL */
Datum
wl_task(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT t FROM worklist.task t WHERE " KEY("t"),
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.get"
	};
	text	   *tenant = wl_tenant_enter();
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	Datum		values[2];
	Datum		row = (Datum) 0;
	bool		isnull = true;
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	wl_spi_begin(&spi);
	if (wl_exec(&stmt, values, NULL, true, 0) == 1)
		row = wl_result_datum(0, 1, &isnull);
	wl_spi_end(&spi);

	if (isnull)
		PG_RETURN_NULL();
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
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_ACTOR(1, "actor"), WL_ROLES(2, "roles")));
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	text	   *actor = wl_arg_ident(fcinfo, 1, "actor");
	ArrayType  *roles = wl_arg_idents(fcinfo, 2, "roles", true);
	Datum		values[4];
	Datum		row = (Datum) 0;
	bool		claimed = false;
	bool		isnull;
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = PointerGetDatum(actor);
	values[3] = PointerGetDatum(roles);

	wl_hint_took();
	wl_spi_begin(&spi);
	for (int attempt = 0;; attempt++)
	{
		TaskFacts	f;
		char	   *id_c;
		char	   *actor_c;

		if (try_update(&take, values, NULL, attempt))
		{
			row = wl_result_datum(0, 1, &isnull);
			claimed = true;
			break;
		}

		lock_task(tenant, id, actor, roles, &f);
		id_c = text_to_cstring(id);
		actor_c = text_to_cstring(actor);
		check_eligible(&f, id_c, actor_c);
		if (f.holder != NULL && strcmp(f.holder, actor_c) == 0)
		{
			row = f.row;		/* same holder: unchanged */
			break;
		}
		if (f.holder != NULL)
		{
			wl_count(WL_COUNT_CLAIM_CONFLICTS);
			wl_error_already_claimed(id_c, f.holder);
		}
		/* free after all, and now locked by us: take it */
	}
	wl_spi_end(&spi);

	if (claimed)
	{
		wl_count(WL_COUNT_CLAIMS);
		wl_change_record_text(tenant, WL_CHANGE_TASK_CLAIMED);
	}
	PG_RETURN_DATUM(row);
}

/*
 * worklist.claim_next(actor, roles) RETURNS task
 *
 * Claims the first claimable task in queue order whose audience meets
 * roles and that does not exclude actor, skipping rows locked by anybody
 * else, in one statement.  NULL when there is none.
 *
 * The statement starts at the tenant's hint (hint.c).  When the hint asks
 * for it, the statement also finds the first task claimable by anybody from
 * there (first), which the hint is then raised to; the other claims run
 * the same statement without that part.
 */
#define CLAIM_NEXT_PICK \
	" pick AS (" \
	" SELECT q.id FROM worklist.task q" \
	"  WHERE q.tenant" EQ "$1 AND " CLAIMABLE("q") \
	"    AND " FROM_KEY("q", "$4", "$5", "$6") \
	"    AND " AUDIENCE("q", "$3") " AND " NOT_EXCLUDED("q", "$2") \
	"  ORDER BY " QUEUE_KEY("q") " LIMIT 1 FOR NO KEY UPDATE OF q SKIP LOCKED)," \
	" took AS (" \
	" UPDATE worklist.task t" SET_CLAIM("$2") \
	"  WHERE t.tenant" EQ "$1 AND t.id" EQ "(SELECT pick.id FROM pick)" \
	"  RETURNING t)"
#define CLAIM_NEXT_ARGS \
	6, {TEXTOID, TEXTOID, TEXTARRAYOID, INT8OID, TIMESTAMPTZOID, TEXTOID}

Datum
wl_claim_next(PG_FUNCTION_ARGS)
{
	static WlStmt raising WL_KEPT = {
		"WITH first AS MATERIALIZED ("
		" SELECT " QUEUE_KEY("q") " FROM worklist.task q"
		"  WHERE q.tenant" EQ "$1 AND " CLAIMABLE("q")
		"    AND " FROM_KEY("q", "$4", "$5", "$6")
		"  ORDER BY " QUEUE_KEY("q") " LIMIT 1),"
		CLAIM_NEXT_PICK
		" SELECT (SELECT took.t FROM took), f.* FROM (SELECT) one LEFT JOIN first f ON true",
		CLAIM_NEXT_ARGS,
		.generic = true, .name = "task.claim_next.raising"
	};
	static WlStmt stmt WL_KEPT = {
		"WITH" CLAIM_NEXT_PICK
		" SELECT (SELECT took.t FROM took)",
		CLAIM_NEXT_ARGS,
		.generic = true, .name = "task.claim_next"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_ACTOR(0, "actor"), WL_ROLES(1, "roles")));
	text	   *actor = wl_arg_ident(fcinfo, 0, "actor");
	ArrayType  *roles = wl_arg_idents(fcinfo, 1, "roles", true);
	char	   *tenant_c;
	WlQueueKey	hint;
	WlQueueKey	first;
	uint64		version;
	uint64		raises;
	bool		raise;
	Datum		values[6];
	Datum		row = (Datum) 0;
	bool		isnull = true;
	WlSpi		spi;

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
	wl_spi_end(&spi);

	if (raise)
		wl_hint_raise(tenant_c, version, raises, &first);
	if (isnull)
		PG_RETURN_NULL();
	wl_hint_took();
	wl_count(WL_COUNT_CLAIMS);
	wl_change_record_text(tenant, WL_CHANGE_TASK_CLAIMED);
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
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_ACTOR(1, "actor")));
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	text	   *actor = wl_arg_ident(fcinfo, 1, "actor");
	Datum		values[3];
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = PointerGetDatum(actor);

	wl_spi_begin(&spi);
	for (int attempt = 0;; attempt++)
	{
		TaskFacts	f;
		char	   *id_c;
		char	   *actor_c;

		if (try_update(&stmt, values, NULL, attempt))
		{
			bool		isnull;

			row_claimable(tenant, wl_result_datum(0, 1, &isnull));
			break;
		}

		lock_task(tenant, id, actor, NULL, &f);
		id_c = text_to_cstring(id);
		actor_c = text_to_cstring(actor);
		if (!f.found)
			wl_error_not_found("task", id_c);
		if (f.excluded)
			wl_error_excluded(id_c, actor_c);
		if (!is_pending(f.state))
			wl_error_not_held(id_c, actor_c, NULL);
		if (f.holder == NULL || strcmp(f.holder, actor_c) != 0)
			wl_error_not_held(id_c, actor_c, f.holder);
	}
	wl_spi_end(&spi);

	wl_change_record_text(tenant, WL_CHANGE_TASK_RELEASED);
	PG_RETURN_VOID();
}

/*
 * worklist.take_over(id, from_actor, actor, roles) RETURNS task
 *
 * Claim's order for actor (WL001, WL002, WL003, WL004), then WL006 naming
 * from_actor when from_actor is not the holder, nobody holding it
 * included.  Taking over from oneself returns the task unchanged.
 */
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
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_ACTOR(2, "actor"), WL_ROLES(3, "roles")));
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	text	   *from = wl_arg_ident(fcinfo, 1, "from_actor");
	text	   *actor = wl_arg_ident(fcinfo, 2, "actor");
	ArrayType  *roles = wl_arg_idents(fcinfo, 3, "roles", true);
	Datum		values[5];
	Datum		row = (Datum) 0;
	bool		moved = false;
	bool		isnull;
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = PointerGetDatum(from);
	values[3] = PointerGetDatum(actor);
	values[4] = PointerGetDatum(roles);

	wl_spi_begin(&spi);
	for (int attempt = 0;; attempt++)
	{
		TaskFacts	f;
		char	   *id_c;
		char	   *actor_c;
		char	   *from_c;

		if (try_update(&stmt, values, NULL, attempt))
		{
			row = wl_result_datum(0, 1, &isnull);
			moved = true;
			break;
		}

		lock_task(tenant, id, actor, roles, &f);
		id_c = text_to_cstring(id);
		actor_c = text_to_cstring(actor);
		from_c = text_to_cstring(from);
		check_eligible(&f, id_c, actor_c);
		if (f.holder == NULL || strcmp(f.holder, from_c) != 0)
			wl_error_not_held(id_c, from_c, f.holder);
		if (strcmp(f.holder, actor_c) == 0)
		{
			row = f.row;		/* from oneself: unchanged */
			break;
		}
		/* held by from_actor after all, and now locked by us */
	}
	wl_spi_end(&spi);

	if (moved)
	{
		wl_count(WL_COUNT_TAKE_OVERS);
		wl_change_record_text(tenant, WL_CHANGE_TASK_TAKEN_OVER);
	}
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
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_ACTOR(1, "actor")));
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	text	   *actor = wl_arg_ident(fcinfo, 1, "actor");
	Datum		decision = wl_arg_document(fcinfo, 2, "decision");
	Datum		values[4];
	bool		settled = false;
	bool		retried = false;
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = PointerGetDatum(actor);
	values[3] = decision;

	wl_spi_begin(&spi);
	for (int attempt = 0;; attempt++)
	{
		TaskFacts	f;
		char	   *id_c;
		char	   *actor_c;

		if (try_update(&stmt, values, NULL, attempt))
		{
			settled = true;
			break;
		}

		lock_task_decided(tenant, id, actor, NULL, decision, &f);
		id_c = text_to_cstring(id);
		actor_c = text_to_cstring(actor);
		if (!f.found)
			wl_error_not_found("task", id_c);
		if (f.excluded)
			wl_error_excluded(id_c, actor_c);
		if (!is_pending(f.state))
		{
			/*
			 * Already settled.  By this actor with this decision: a retried
			 * completion whose first answer was lost, which converges.
			 * Otherwise somebody else (the sweep) won.
			 */
			retried = strcmp(f.state, "completed") == 0 && f.decided_by &&
				strcmp(f.decided_by, actor_c) == 0 && f.same_decision;
			break;
		}
		if (f.holder == NULL || strcmp(f.holder, actor_c) != 0)
			wl_error_not_held(id_c, actor_c, f.holder);
	}
	wl_spi_end(&spi);

	if (settled)
		wl_change_record_text(tenant, WL_CHANGE_TASK_COMPLETED);
	PG_RETURN_BOOL(settled || retried);
}

/*
 * worklist.set_state(id, state) RETURNS boolean
 *
 * Compare-and-set from any pending state to the settled state given;
 * false, changing nothing, when the task is already settled.  A pending
 * target is 22023.
 */
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
	text	   *tenant = wl_tenant_enter();
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	Datum		state = enum_label(wl_arg_required(fcinfo, 1, "state"));
	char	   *state_c = TextDatumGetCString(state);
	Datum		values[3];
	bool		settled = false;
	WlSpi		spi;

	if (is_pending(state_c))
		wl_error_bad_arg("state", "must be a settled state (completed, expired or withdrawn)");

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = state;

	wl_hint_took();
	wl_spi_begin(&spi);
	for (int attempt = 0;; attempt++)
	{
		TaskFacts	f;

		if (try_update(&stmt, values, NULL, attempt))
		{
			settled = true;
			break;
		}

		lock_task(tenant, id, NULL, NULL, &f);
		if (!f.found)
			wl_error_not_found("task", text_to_cstring(id));
		if (!is_pending(f.state))
			break;				/* already settled */
	}
	wl_spi_end(&spi);

	if (settled)
		wl_change_record_text(tenant, settled_change(state_c));
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
		" holder = NULL, claimed_at = NULL, claim_expires_at = NULL"
		BY_KEY("t", OPEN_OR_CLAIMED("t"))
		" RETURNING t",
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.escalate"
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
	text	   *tenant = wl_tenant_enter();
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	bool		escalated;
	Datum		row = (Datum) 0;
	WlSpi		spi;

	wl_spi_begin(&spi);
	row = escalate_task(tenant, id, &escalated);
	if (row == (Datum) 0)
		wl_error_not_found("task", text_to_cstring(id));
	wl_spi_end(&spi);

	if (escalated)
	{
		row_claimable(tenant, row);
		wl_change_record_text(tenant, WL_CHANGE_TASK_ESCALATED);
	}
	PG_RETURN_DATUM(row);
}

/*
 * worklist.withdraw_run(run_id, awaited) RETURNS integer
 *
 * Settles as withdrawn the tasks named in awaited that belong to run_id
 * and are still pending.  Names of tasks that do not exist, belong to
 * another run or are settled are passed over.
 */
Datum
wl_withdraw_run(PG_FUNCTION_ARGS)
{
	/*
	 * One name at a time, each found by the whole key: an UPDATE of "the
	 * ids in this array" may be planned (on tables the planner knew as
	 * small) as a walk of the tenant's whole pending index that filters
	 * the ids.  A name given twice is withdrawn once: the second time the
	 * task is no longer pending.
	 */
	static WlStmt stmt WL_KEPT = {
		"UPDATE worklist.task t SET state = " STATE("withdrawn") ","
		" settled_at = pg_catalog.now(), claim_expires_at = NULL"
		BY_KEY("t", "t.run_id" EQ "$3 AND " PENDING("t")),
		3, {TEXTOID, TEXTOID, TEXTOID},
		.generic = true, .name = "task.withdraw_run"
	};
	text	   *tenant = wl_tenant_enter();
	text	   *run_id = wl_arg_ident(fcinfo, 0, "run_id");
	ArrayType  *awaited = wl_arg_idents(fcinfo, 1, "awaited", true);
	Datum		values[3];
	Datum	   *names;
	int			count;
	int32		n = 0;
	char	   *tenant_c = NULL;
	WlSpi		spi;

	deconstruct_array(awaited, TEXTOID, -1, false, TYPALIGN_INT,
					  &names, NULL, &count);
	values[0] = PointerGetDatum(tenant);
	values[2] = PointerGetDatum(run_id);

	wl_hint_took();
	wl_spi_begin(&spi);
	for (int i = 0; i < count; i++)
	{
		CHECK_FOR_INTERRUPTS();
		values[1] = names[i];
		if (wl_exec(&stmt, values, NULL, false, 0) == 0)
			continue;
		n++;
		if (tenant_c == NULL)
			tenant_c = text_to_cstring(tenant);
		wl_change_record(tenant_c, WL_CHANGE_TASK_WITHDRAWN);
	}
	wl_spi_end(&spi);

	PG_RETURN_INT32(n);
}

/* worklist.queue(roles, lim, actor) RETURNS SETOF task */
Datum
wl_queue(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT t FROM worklist.task t"
		" WHERE t.tenant" EQ "$1 AND " CLAIMABLE("t")
		" AND " FROM_KEY("t", "$5", "$6", "$7")
		" AND " AUDIENCE("t", "$2")
		" AND ($3 IS NULL OR " NOT_EXCLUDED("t", "$3") ")"
		" ORDER BY " QUEUE_KEY("t") " LIMIT $4",
		7, {TEXTOID, TEXTARRAYOID, TEXTOID, INT4OID, INT8OID, TIMESTAMPTZOID, TEXTOID},
		.generic = true, .name = "task.queue"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_ROLES(0, "roles")));
	ArrayType  *roles = wl_arg_idents(fcinfo, 0, "roles", true);
	int32		lim = wl_arg_limit(fcinfo, 1, 100, WL_LIMIT_MAX);
	text	   *actor = wl_arg_ident_opt(fcinfo, 2, "actor");
	Datum		values[7];
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};
	WlQueueKey	hint;
	uint64		version;
	uint64		raises;
	WlSpi		spi;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	/* an empty roles array meets no audience */
	if (ArrayGetNItems(ARR_NDIM(roles), ARR_DIMS(roles)) == 0)
		return (Datum) 0;

	/*
	 * Nothing before the hint is claimable -- in a snapshot as recent as
	 * READ COMMITTED takes; an older transaction snapshot reads from the
	 * head.
	 */
	if (IsolationUsesXactSnapshot() ||
		!wl_hint_read(text_to_cstring(tenant), &hint, &version, &raises, NULL))
		hint = wl_queue_key_min;
	values[4] = Int64GetDatum(hint.neg_priority);
	values[5] = TimestampTzGetDatum(hint.created_at);
	values[6] = CStringGetTextDatum(hint.id);

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(roles);
	values[2] = PointerGetDatum(actor);
	if (actor == NULL)
		nulls[2] = 'n';
	values[3] = Int32GetDatum(lim);

	wl_spi_begin(&spi);
	(void) wl_exec(&stmt, values, nulls, true, 0);
	wl_result_to_srf(fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}

/* worklist.for_case(case_id) RETURNS SETOF task */
Datum
wl_for_case(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT t FROM worklist.task t"
		" WHERE t.tenant" EQ "$1 AND t.case_id" EQ "$2 AND " PENDING("t")
		QUEUE_ORDER("t"),
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.for_case"
	};
	text	   *tenant = wl_tenant_enter();
	text	   *case_id = wl_arg_ident(fcinfo, 0, "case_id");
	Datum		values[2];
	WlSpi		spi;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(case_id);

	wl_spi_begin(&spi);
	(void) wl_exec_to_srf(&stmt, values, NULL, fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}

/*
 * worklist.held(actor, lim) RETURNS SETOF task
 *
 * The pending tasks actor holds, oldest claim first, then by id: a
 * person's inbox of claimed work.  A read: any actor may be named.
 */
Datum
wl_held(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT t FROM worklist.task t"
		" WHERE t.tenant" EQ "$1 AND t.holder" EQ "$2 AND " PENDING("t")
		" ORDER BY t.claimed_at, t.id LIMIT $3",
		3, {TEXTOID, TEXTOID, INT4OID},
		.generic = true, .name = "task.held"
	};
	text	   *tenant = wl_tenant_enter();
	text	   *actor = wl_arg_ident(fcinfo, 0, "actor");
	int32		lim = wl_arg_limit(fcinfo, 1, 100, WL_LIMIT_MAX);
	Datum		values[3];
	WlSpi		spi;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(actor);
	values[2] = Int32GetDatum(lim);

	wl_spi_begin(&spi);
	(void) wl_exec(&stmt, values, NULL, true, 0);
	wl_result_to_srf(fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}

/* worklist.open_count() RETURNS bigint */
Datum
wl_open_count(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT pg_catalog.count(*) FROM worklist.task t"
		" WHERE t.tenant" EQ "$1 AND " PENDING("t"),
		1, {TEXTOID},
		.generic = true, .name = "task.open_count"
	};
	text	   *tenant = wl_tenant_enter();
	Datum		values[1];
	Datum		n;
	bool		isnull;
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	wl_spi_begin(&spi);
	(void) wl_exec(&stmt, values, NULL, true, 0);
	n = wl_result_datum(0, 1, &isnull);
	wl_spi_end(&spi);
	PG_RETURN_DATUM(n);
}

/* worklist.overdue(now, lim) RETURNS SETOF task */
Datum
wl_overdue(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT t FROM worklist.task t"
		" WHERE t.tenant" EQ "$1 AND " OPEN_OR_CLAIMED("t")
		" AND t.due_at OPERATOR(pg_catalog.<=) $2"
		" ORDER BY t.due_at, t.id LIMIT $3",
		3, {TEXTOID, TIMESTAMPTZOID, INT4OID},
		.generic = true, .name = "task.overdue"
	};
	text	   *tenant = wl_tenant_enter();
	TimestampTz now = wl_arg_time(fcinfo, 0, "now");
	int32		lim = wl_arg_limit(fcinfo, 1, 100, WL_LIMIT_MAX);
	Datum		values[3];
	WlSpi		spi;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	values[0] = PointerGetDatum(tenant);
	values[1] = TimestampTzGetDatum(now);
	values[2] = Int32GetDatum(lim);

	wl_spi_begin(&spi);
	(void) wl_exec(&stmt, values, NULL, true, 0);
	wl_result_to_srf(fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}

/*
 * The ids of the rows a sweep part picked and locked (column 1 of the
 * result of stmt), copied out of SPI's result so that statements can run
 * while they are used.
 */
static char **
pick_ids(WlStmt *stmt, Datum *values, uint64 *n)
{
	char	  **ids;

	*n = wl_exec(stmt, values, NULL, false, 0);
	ids = palloc(sizeof(char *) * Max(*n, 1));
	for (uint64 i = 0; i < *n; i++)
		ids[i] = wl_result_cstring(i, 1);
	return ids;
}

/*
 * The task part of the sweep (declared in worklist.h; called by sweep.c
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
	static WlStmt pick WL_KEPT = {
		"SELECT d.id FROM worklist.task d"
		" WHERE d.tenant" EQ "$1 AND " OPEN_OR_CLAIMED("d")
		" AND d.due_at OPERATOR(pg_catalog.<=) $2"
		" ORDER BY d.due_at, d.id LIMIT $3"
		" FOR NO KEY UPDATE OF d SKIP LOCKED",
		3, {TEXTOID, TIMESTAMPTZOID, INT4OID},
		.generic = true, .name = "task.sweep.expiries.pick"
	};
#define ESCALATES "t.expiry_policy" EQ "'escalate'::worklist.expiry_policy"
	static WlStmt apply WL_KEPT = {
		"UPDATE worklist.task t SET"
		" state = CASE WHEN " ESCALATES " THEN " STATE("escalated")
		" ELSE " STATE("expired") " END,"
		" holder = CASE WHEN " ESCALATES " THEN NULL ELSE t.holder END,"
		" claimed_at = CASE WHEN " ESCALATES " THEN NULL ELSE t.claimed_at END,"
		" claim_expires_at = NULL,"
		" settled_at = CASE WHEN " ESCALATES " THEN NULL ELSE $3 END,"
		" decided_by = CASE WHEN " ESCALATES " THEN t.decided_by ELSE NULL END,"
		" decision = CASE WHEN " ESCALATES " THEN t.decision"
		" ELSE pg_catalog.jsonb_build_object('policy', t.expiry_policy::pg_catalog.text) END"
		" WHERE " KEY("t")
		" RETURNING t.expiry_policy::pg_catalog.text, t.priority, t.created_at",
		3, {TEXTOID, TEXTOID, TIMESTAMPTZOID},
		.generic = true, .name = "task.sweep.expiries.apply"
	};
#undef ESCALATES
	Datum		values[3];
	uint64		n;
	char	  **ids;
	char	   *tenant_c = text_to_cstring(tenant);

	values[0] = PointerGetDatum(tenant);
	values[1] = TimestampTzGetDatum(now);
	values[2] = Int32GetDatum(lim);

	wl_hint_took();
	ids = pick_ids(&pick, values, &n);
	values[2] = TimestampTzGetDatum(now);
	for (uint64 i = 0; i < n; i++)
	{
		char	   *policy;

		CHECK_FOR_INTERRUPTS();
		values[1] = CStringGetTextDatum(ids[i]);
		if (wl_exec(&apply, values, NULL, false, 1) != 1)
			elog(ERROR, "task \"%s\" picked by the sweep is gone", ids[i]);
		policy = wl_result_cstring(0, 1);
		if (strcmp(policy, "escalate") == 0)
		{
			bool		isnull;

			wl_hint_claimable(tenant_c,
							  DatumGetInt32(wl_result_datum(0, 2, &isnull)),
							  DatumGetTimestampTz(wl_result_datum(0, 3, &isnull)));
			result->escalated++;
			wl_change_record(tenant_c, WL_CHANGE_TASK_ESCALATED);
		}
		else
		{
			if (strcmp(policy, "deny") == 0)
				result->denied++;
			else
				result->proceeded++;
			wl_change_record(tenant_c, WL_CHANGE_TASK_EXPIRED);
		}
		pfree(policy);
	}
}

/*
 * The claim-timeout part of the sweep (declared in worklist.h).
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
		"SELECT d.id FROM worklist.task d"
		" WHERE d.tenant" EQ "$1 AND d.claim_expires_at OPERATOR(pg_catalog.<=) $2"
		" ORDER BY d.claim_expires_at, d.id LIMIT $3"
		" FOR NO KEY UPDATE OF d SKIP LOCKED",
		3, {TEXTOID, TIMESTAMPTZOID, INT4OID},
		.generic = true, .name = "task.sweep.claim_timeouts.pick"
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
	char	   *tenant_c = text_to_cstring(tenant);

	values[0] = PointerGetDatum(tenant);
	values[1] = TimestampTzGetDatum(now);
	values[2] = Int32GetDatum(lim);

	ids = pick_ids(&pick, values, &n);
	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		values[1] = CStringGetTextDatum(ids[i]);
		if (wl_exec(&apply, values, NULL, false, 1) != 1)
			elog(ERROR, "task \"%s\" picked by the sweep is gone", ids[i]);
		wl_hint_claimable(tenant_c,
						  DatumGetInt32(wl_result_datum(0, 1, &isnull)),
						  DatumGetTimestampTz(wl_result_datum(0, 2, &isnull)));
		result->claims_released++;
		wl_change_record(tenant_c, WL_CHANGE_TASK_RELEASED);
	}
}

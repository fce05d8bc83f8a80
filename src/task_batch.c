/*-------------------------------------------------------------------------
 *
 * task_batch.c
 *	  Claims and completions of many tasks in one call: claim_many and
 *	  complete_many (doc/reference.md, section 4).  What an agent that
 *	  works through a queue calls instead of claim_next and complete in a
 *	  loop: each does in a few statements what n calls of the single verb
 *	  do in n.
 *
 * claim_many is claim_next with a LIMIT: one statement picks up to n
 * claimable rows in queue order FOR NO KEY UPDATE SKIP LOCKED, so
 * concurrent callers never get the same task and never wait on each
 * other, and each row picked is then claimed by its key under that lock;
 * it starts at the tenant's claim hint and raises it as claim_next does
 * (hint.c).
 *
 * complete_many judges every pair before it changes anything, so that it
 * settles all of them or none.  Its first statement locks the named tasks
 * FOR NO KEY UPDATE in the order wl_sort_ids gives (bytewise: COLLATE "C"
 * sorts alike), the order every verb that locks several tasks takes them
 * in, so that two of them never wait on each other in a circle; the
 * refusal, if any, is decided in C from that locked read in the order of
 * the array; then each task held by the actor is settled by its key.
 *
 * Every task claimed or settled goes through wl_task_changed (task.c): its
 * event in its history in the same transaction, for a settlement the
 * parks that await the task resolved, and its notification; each is
 * counted as the single verb's would be.
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

PG_FUNCTION_INFO_V1(wl_claim_many);
PG_FUNCTION_INFO_V1(wl_complete_many);

/*
 * worklist.claim_many(actor, roles, n, skip) RETURNS SETOF task
 *
 * Claims up to n (NULL: 1; clamped to [1, 1000]) claimable tasks in queue
 * order whose audience meets roles, that do not exclude actor and whose ids
 * are not in skip (NULL: none), skipping rows locked by anybody else, in one
 * statement; returns them in queue order, none when there are none.
 *
 * The statement picks and locks the rows (CLAIM_PICK, claim_next's pick
 * with a LIMIT of n), claims each by the ctid of the version it locked
 * (by id, the plan kept for the session walked the tenant's every row
 * when the table was small as it was made; with no condition an index
 * could serve, a TID scan is the plan's one way) and returns each claimed
 * row with its queue key, by which it is sorted.  A version the lock found
 * newer than the statement's snapshot is not claimed (the statement
 * cannot see it): the call then claims fewer than it could, as when other
 * callers hold the rows.
 */
#define CLAIM_MANY_TAKE \
	" took AS (" \
	" UPDATE worklist.task t" SET_CLAIM("$2") \
	"  WHERE t.ctid" EQ "ANY (ARRAY(SELECT pick.ctid FROM pick)) AND (t.tenant" EQ "$1) IS TRUE" \
	"  RETURNING t, " QUEUE_KEY("t") ")"
/* took's columns 2 to 4 are the queue key */
#define CLAIM_MANY_ORDER " ORDER BY 2, 3, 4"
#define CLAIM_MANY_ARGS \
	8, {TEXTOID, TEXTOID, TEXTARRAYOID, INT8OID, TIMESTAMPTZOID, TEXTOID, \
	TEXTARRAYOID, INT4OID}

Datum
wl_claim_many(PG_FUNCTION_ARGS)
{
	/* columns: the row claimed, its key, the first claimable key (3 columns) */
	static WlStmt raising WL_KEPT = {
		"WITH" CLAIM_FIRST(CLAIMABLE) ","
		CLAIM_PICK(CLAIMABLE, "q.ctid", "$8") "," CLAIM_MANY_TAKE
		" SELECT took.*, f.* FROM (SELECT) one LEFT JOIN first f ON true"
		" LEFT JOIN took ON true" CLAIM_MANY_ORDER,
		CLAIM_MANY_ARGS,
		.generic = true, .name = "task_batch.claim_many.raising"
	};
	/* columns: the row claimed, its key */
	static WlStmt stmt WL_KEPT = {
		"WITH" CLAIM_PICK(CLAIMABLE, "q.ctid", "$8") "," CLAIM_MANY_TAKE
		" SELECT took.* FROM took" CLAIM_MANY_ORDER,
		CLAIM_MANY_ARGS,
		.generic = true, .name = "task_batch.claim_many"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_ACTOR(0, "actor"), WL_ROLES(1, "roles")));
	text	   *actor = wl_arg_ident(fcinfo, 0, "actor");
	ArrayType  *roles = wl_arg_idents(fcinfo, 1, "roles", true);
	int32		n = wl_arg_limit(fcinfo, 2, 1, WL_LIMIT_MAX);
	ArrayType  *skip;
	char	   *tenant_c;
	WlQueueKey	hint;
	WlQueueKey	first;
	uint64		version;
	uint64		raises;
	bool		raise;
	Datum		values[8];
	uint64		rows;
	char	  **ids;
	Datum	   *claimed;
	int			nclaimed = 0;
	WlSpi		spi;

	skip = PG_ARGISNULL(3) ? construct_empty_array(TEXTOID) :
		wl_arg_idents(fcinfo, 3, "skip", true);
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	/* an empty roles array meets no audience */
	if (ArrayGetNItems(ARR_NDIM(roles), ARR_DIMS(roles)) == 0)
		return (Datum) 0;

	tenant_c = text_to_cstring(tenant);
	(void) wl_hint_read(tenant_c, &hint, &version, &raises, &raise);

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(actor);
	values[2] = PointerGetDatum(roles);
	values[3] = Int64GetDatum(hint.neg_priority);
	values[4] = TimestampTzGetDatum(hint.created_at);
	values[5] = CStringGetTextDatum(hint.id);
	values[6] = PointerGetDatum(skip);
	values[7] = Int32GetDatum(n);
	wl_spi_begin(&spi);
	rows = wl_exec(raise ? &raising : &stmt, values, NULL, false, 0);
	first = wl_queue_key_max;
	if (raise)
	{
		bool		none;
		Datum		d;

		if (rows == 0)
			elog(ERROR, "claim_many returned no row");
		d = wl_result_datum(0, 5, &none);
		if (!none)
		{
			char	   *id = wl_result_cstring(0, 7);

			first.neg_priority = DatumGetInt64(d);
			first.created_at = DatumGetTimestampTz(wl_result_datum(0, 6, &none));
			strlcpy(first.id, id, sizeof(first.id));
		}
	}
	ids = wl_result_column(rows, 4);
	wl_result_to_srf(fcinfo);
	claimed = palloc(sizeof(Datum) * Max(rows, 1));
	for (uint64 i = 0; i < rows; i++)
		if (ids[i] != NULL)		/* NULL: the one row of a raising claim of nothing */
			claimed[nclaimed++] = CStringGetTextDatum(ids[i]);
	if (nclaimed > 0)
		wl_tasks_changed(tenant, construct_array(claimed, nclaimed, TEXTOID, -1, false, TYPALIGN_INT),
						 "claimed", actor, GetCurrentTransactionStartTimestamp());
	wl_spi_end(&spi);

	if (raise)
		wl_hint_raise(tenant_c, version, raises, &first);
	if (nclaimed == 0)
		return (Datum) 0;
	wl_hint_took();
	wl_count_n(WL_COUNT_CLAIMS, nclaimed);
	return (Datum) 0;
}

/* What complete_many's locked read found of one pair. */
typedef struct Pair
{
	bool		found;
	bool		pending;
	bool		excluded;		/* the actor is among excluded */
	char	   *holder;
	bool		retried;		/* completed by the actor with this decision */
	Datum		ctid;			/* of the version locked */
} Pair;

/*
 * The first id named twice in ids (the n elements of arr), or NULL.  The
 * search for it runs only when sorting found one.
 */
static char *
named_twice(ArrayType *arr, Datum *ids, int n)
{
	int			distinct;

	(void) wl_sort_ids(arr, &distinct);
	if (distinct == n)
		return NULL;
	for (int i = 1; i < n; i++)
		for (int j = 0; j < i; j++)
		{
			text	   *a = DatumGetTextPP(ids[i]);
			text	   *b = DatumGetTextPP(ids[j]);

			if (VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
				memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0)
				return text_to_cstring(a);
		}
	return NULL;
}

/*
 * worklist.complete_many(actor, ids, decisions)
 *	RETURNS TABLE (id text, settled boolean)
 *
 * complete for each pair (ids[i], decisions[i]), all or nothing.  Argument
 * errors first (22023: arrays of unequal length, an id named twice); then
 * the first id, in the array's order, that complete would refuse decides
 * and fails the whole call, settling nothing: WL001 no such task, WL002
 * actor barred from it, WL006 pending but not held by actor.  Otherwise
 * every pending task is settled as completed by actor with its decision,
 * and one row per pair comes back in the array's order, settled as
 * complete would answer: true when this call settled the task or it was
 * already completed by actor with an equal decision, false when it was
 * otherwise already settled.  Empty arrays: no rows.
 */
Datum
wl_complete_many(PG_FUNCTION_ARGS)
{
	/*
	 * $2 ids, $3 actor, $4 decisions; a.i the pair's place in the arrays.
	 * Each task found by its whole key (a join of the arrays to the table
	 * is planned, on tables the planner knew as small, as a walk of the
	 * tenant's every row), and locked in the order of the ids.
	 */
	static WlStmt lock WL_KEPT = {
		"SELECT s.i, l.* FROM (SELECT a.id, a.decision, a.i"
		"  FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($4))"
		"  WITH ORDINALITY a(id, decision, i)"
		"  ORDER BY a.id COLLATE pg_catalog.\"C\" OFFSET 0) s"
		" CROSS JOIN LATERAL (SELECT " PENDING("t") ", $3" EQ "ANY (t.excluded), t.holder,"
		"  t.state" EQ STATE("completed") " AND t.decided_by" EQ "$3"
		"   AND t.decision" EQ "s.decision, t.ctid"
		"  FROM worklist.task t WHERE t.tenant" EQ "$1 AND t.id" EQ "s.id"
		"  FOR NO KEY UPDATE OF t) l",
		4, {TEXTOID, TEXTARRAYOID, TEXTOID, JSONBARRAYOID},
		.generic = true, .name = "task_batch.complete_many.lock"
	};
	/*
	 * The pairs to settle ($2 ids, $4 decisions), held by $3, each by the
	 * ctid of the version lock locked ($5).  Each task's decision is
	 * looked up by its id in one object made of the pairs first (a join of
	 * the pairs to the tasks was planned as a nested loop that read every
	 * pair for every task).
	 */
	static WlStmt settle WL_KEPT = {
		"WITH d AS MATERIALIZED (SELECT pg_catalog.jsonb_object_agg(s.id, s.decision) o"
		"  FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($4)) s(id, decision))"
		" UPDATE worklist.task t SET state = " STATE("completed") ","
		" settled_at = pg_catalog.now(), claim_expires_at = NULL,"
		" decided_by = $3, decision = (SELECT d.o FROM d) OPERATOR(pg_catalog.->) t.id"
		" WHERE t.ctid" EQ "ANY ($5)"
		" AND (t.tenant" EQ "$1 AND t.holder" EQ "$3 AND " PENDING("t") ") IS TRUE",
		5, {TEXTOID, TEXTARRAYOID, TEXTOID, JSONBARRAYOID, TIDARRAYOID},
		.generic = true, .name = "task_batch.complete_many"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_ACTOR(0, "actor")));
	text	   *actor = wl_arg_ident(fcinfo, 0, "actor");
	ArrayType  *ids_arr = wl_arg_idents(fcinfo, 1, "ids", true);
	ArrayType  *decisions_arr;
	char	   *actor_c = text_to_cstring(actor);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum	   *ids;
	Datum	   *decisions;
	Datum	   *settle_ids;
	Datum	   *settle_decisions;
	Datum	   *settle_ctids;
	Pair	   *pairs;
	int			n;
	int			nd;
	int			nsettle = 0;
	char	   *twice;
	Datum		values[5];
	uint64		rows;
	WlSpi		spi;

	deconstruct_array(ids_arr, TEXTOID, -1, false, TYPALIGN_INT, &ids, NULL, &n);
	nd = wl_arg_elements(fcinfo, 2, "decisions", JSONBOID, &decisions);
	for (int i = 0; i < nd; i++)
		wl_check_document(decisions[i], "decisions");
	decisions_arr = PG_GETARG_ARRAYTYPE_P(2);
	if (n != nd)
		wl_error_bad_arg("decisions", psprintf("must have as many elements as \"ids\" (%d, not %d)", n, nd));
	if ((twice = named_twice(ids_arr, ids, n)) != NULL)
		wl_error_bad_arg("ids", psprintf("must not name task \"%s\" twice", twice));
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (n == 0)
		return (Datum) 0;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(ids_arr);
	values[2] = PointerGetDatum(actor);
	values[3] = PointerGetDatum(decisions_arr);
	pairs = palloc0(sizeof(Pair) * n);

	wl_spi_begin(&spi);
	rows = wl_exec(&lock, values, NULL, false, 0);
	for (uint64 r = 0; r < rows; r++)
	{
		bool		isnull;
		int64		i = DatumGetInt64(wl_result_datum(r, 1, &isnull)) - 1;
		Pair	   *p = &pairs[i];

		p->found = true;
		p->pending = DatumGetBool(wl_result_datum(r, 2, &isnull));
		p->excluded = DatumGetBool(wl_result_datum(r, 3, &isnull)) && !isnull;
		p->holder = wl_result_cstring(r, 4);
		p->retried = DatumGetBool(wl_result_datum(r, 5, &isnull)) && !isnull;
		p->ctid = wl_result_datum(r, 6, &isnull);
	}

	/* the first pair complete would refuse, in the array's order */
	settle_ids = palloc(sizeof(Datum) * n);
	settle_decisions = palloc(sizeof(Datum) * n);
	settle_ctids = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
	{
		Pair	   *p = &pairs[i];
		char	   *id = TextDatumGetCString(ids[i]);

		if (!p->found)
			wl_error_not_found("task", id);
		if (p->excluded)
			wl_error_excluded(id, actor_c);
		if (!p->pending)
			continue;			/* already settled: complete answers, changes nothing */
		if (p->holder == NULL || strcmp(p->holder, actor_c) != 0)
			wl_error_not_held(id, actor_c, p->holder);
		settle_ids[nsettle] = ids[i];
		settle_ctids[nsettle] = p->ctid;
		settle_decisions[nsettle++] = decisions[i];
	}

	if (nsettle > 0)
	{
		ArrayType  *settled = construct_array(settle_ids, nsettle, TEXTOID, -1, false, TYPALIGN_INT);

		values[1] = PointerGetDatum(settled);
		values[3] = PointerGetDatum(construct_array(settle_decisions, nsettle, JSONBOID,
													-1, false, TYPALIGN_INT));
		values[4] = PointerGetDatum(construct_array(settle_ctids, nsettle, TIDOID,
													sizeof(ItemPointerData), false, TYPALIGN_SHORT));
		if (wl_exec(&settle, values, NULL, false, 0) != (uint64) nsettle)
			elog(ERROR, "task changed under its row lock");
		wl_tasks_changed(tenant, settled, "completed", actor, GetCurrentTransactionStartTimestamp());
	}
	wl_spi_end(&spi);

	for (int i = 0; i < n; i++)
	{
		Datum		out[2];
		bool		nulls[2] = {false, false};

		out[0] = ids[i];
		out[1] = BoolGetDatum(pairs[i].pending || pairs[i].retried);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, nulls);
	}
	return (Datum) 0;
}

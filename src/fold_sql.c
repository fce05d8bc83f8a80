/*-------------------------------------------------------------------------
 *
 * fold_sql.c
 *	  The ticket fold as SQL sees it: a ticket definition from the columns
 *	  of a worklist.ticket row, a fold as a worklist.ticket_fold value, and
 *	  the aggregate worklist.fold() that replays any set of one ticket's
 *	  events.
 *
 *-------------------------------------------------------------------------
 */
#include "ticket.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/typcache.h"

PG_FUNCTION_INFO_V1(wl_fold_step);
PG_FUNCTION_INFO_V1(wl_fold_final);

/* ----------------------------------------------------------------
 * SQL values
 * ----------------------------------------------------------------
 */

/* A ticket definition from the columns of a worklist.ticket row. */
void
wl_ticket_def_from_datums(WlTicketDef *def, const char *id,
						  const char *requester,
						  Datum authorities, bool authorities_null,
						  Datum open_deadline, bool open_deadline_null,
						  Datum confirm_window, bool confirm_window_null,
						  Datum ladder, bool ladder_null)
{
	memset(def, 0, sizeof(*def));
	def->id = id;
	def->requester = requester;

	if (!authorities_null)
	{
		Datum	   *elems;
		bool	   *nulls;
		int			n;

		deconstruct_array(DatumGetArrayTypeP(authorities), TEXTOID, -1, false,
						  TYPALIGN_INT, &elems, &nulls, &n);
		def->authorities = palloc(sizeof(char *) * Max(n, 1));
		for (int i = 0; i < n; i++)
			if (!nulls[i])
				def->authorities[def->nauthorities++] = TextDatumGetCString(elems[i]);
	}

	def->has_open_deadline = !open_deadline_null;
	if (!open_deadline_null)
		def->open_deadline = DatumGetTimestampTz(open_deadline);

	def->has_confirm_window = !confirm_window_null;
	if (!confirm_window_null)
		def->confirm_window = *DatumGetIntervalP(confirm_window);

	if (!ladder_null)
	{
		Datum	   *elems;
		bool	   *nulls;
		int			n;

		deconstruct_array(DatumGetArrayTypeP(ladder), INTERVALOID,
						  sizeof(Interval), false, TYPALIGN_DOUBLE,
						  &elems, &nulls, &n);
		def->ladder = palloc(sizeof(Interval) * Max(n, 1));
		for (int i = 0; i < n; i++)
		{
			/*
			 * The verbs never store a NULL rung, but a row given to
			 * worklist.fold may hold one: refuse it as the aggregate refuses
			 * other NULLs it cannot fold, not as corrupt data.
			 */
			if (nulls[i])
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("ladder of ticket \"%s\" has a null rung", id)));
			def->ladder[i] = *DatumGetIntervalP(elems[i]);
		}
		def->nladder = n;
	}
}

static Datum
text_array(List *names)
{
	Datum	   *elems;
	int			n = list_length(names);
	int			i = 0;
	ListCell   *lc;

	if (n == 0)
		return PointerGetDatum(construct_empty_array(TEXTOID));
	elems = palloc(sizeof(Datum) * n);
	foreach(lc, names)
		elems[i++] = CStringGetTextDatum((char *) lfirst(lc));
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false,
										   TYPALIGN_INT));
}

/* The OID of a label of the enum type a column of desc has. */
static Datum
enum_value(TupleDesc desc, int col, const char *label)
{
	Oid			typid = TupleDescAttr(desc, col)->atttypid;

	return DirectFunctionCall2(enum_in, CStringGetDatum(label),
							   ObjectIdGetDatum(typid));
}

/*
 * Columns of worklist.ticket_fold, in the order of its definition in
 * sql/parts/20_ticket.sql.
 */
enum
{
	FOLD_TICKET,
	FOLD_STATE,
	FOLD_DEADLINE,
	FOLD_OVERDUE,
	FOLD_LIVE_ACTORS,
	FOLD_BLOCKED_ACTORS,
	FOLD_ABANDONED,
	FOLD_UNAUTHORIZED_CLOSE,
	FOLD_INTERRUPTED,
	FOLD_CONFIRMATION,
	FOLD_CLOSED_BY,
	FOLD_CLOSED_AT,
	FOLD_ESCALATION_RUNG,
	FOLD_CLOSE_REASON,
	FOLD__NCOLS
};

StaticAssertDecl(FOLD__NCOLS == WL_FOLD_NCOLS, "columns of worklist.ticket_fold");

/* The columns of a worklist.ticket_fold value judged at now. */
void
wl_fold_values(const WlFold *f, const char *ticket, TimestampTz now,
			TupleDesc desc, Datum *values, bool *nulls)
{
	StringInfoData buf;
	ListCell   *lc;

	if (desc->natts != FOLD__NCOLS)
		elog(ERROR, "worklist.ticket_fold has %d columns, expected %d",
			 desc->natts, FOLD__NCOLS);
	memset(nulls, 0, sizeof(bool) * FOLD__NCOLS);

	values[FOLD_TICKET] = CStringGetTextDatum(ticket);
	values[FOLD_STATE] = enum_value(desc, FOLD_STATE, wl_status_name(f->status));
	values[FOLD_DEADLINE] = TimestampTzGetDatum(f->deadline);
	nulls[FOLD_DEADLINE] = !f->has_deadline;
	values[FOLD_OVERDUE] = BoolGetDatum(wl_fold_overdue(f, now));
	values[FOLD_LIVE_ACTORS] = text_array(f->live);
	values[FOLD_BLOCKED_ACTORS] = text_array(f->blocked);

	/* actor -> reason */
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	foreach(lc, f->abandoned)
	{
		const WlAbandoned *ab = (const WlAbandoned *) lfirst(lc);

		if (lc != list_head(f->abandoned))
			appendStringInfoString(&buf, ", ");
		escape_json(&buf, ab->actor);
		appendStringInfoString(&buf, ": ");
		escape_json(&buf, ab->reason);
	}
	appendStringInfoChar(&buf, '}');
	values[FOLD_ABANDONED] = DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));

	values[FOLD_UNAUTHORIZED_CLOSE] = text_array(f->unauthorized);
	values[FOLD_INTERRUPTED] = text_array(f->interrupted);

	/* rule 5: the two confirmations never render alike */
	nulls[FOLD_CONFIRMATION] = true;
	if (f->status == WL_STATUS_DONE)
	{
		resetStringInfo(&buf);
		if (f->close_by_watchdog && f->confirmation)
			appendStringInfoString(&buf, f->confirmation);
		else
		{
			appendStringInfoString(&buf, "{\"kind\": \"explicit\", \"confirmed_by\": ");
			escape_json(&buf, f->closed_by);
			appendStringInfoChar(&buf, '}');
		}
		values[FOLD_CONFIRMATION] = DirectFunctionCall1(jsonb_in,
														CStringGetDatum(buf.data));
		nulls[FOLD_CONFIRMATION] = false;
	}

	nulls[FOLD_CLOSED_BY] = f->closed_by == NULL;
	if (f->closed_by)
		values[FOLD_CLOSED_BY] = CStringGetTextDatum(f->closed_by);
	nulls[FOLD_CLOSED_AT] = f->closed_by == NULL;
	values[FOLD_CLOSED_AT] = TimestampTzGetDatum(f->closed_at);
	values[FOLD_ESCALATION_RUNG] = Int32GetDatum(f->rung);
	nulls[FOLD_CLOSE_REASON] = f->close_reason == NULL;
	if (f->close_reason)
		values[FOLD_CLOSE_REASON] = CStringGetTextDatum(f->close_reason);
	pfree(buf.data);
}

/* The fold as a worklist.ticket_fold value judged at now. */
Datum
wl_fold_datum(const WlFold *f, const char *ticket, TimestampTz now,
			  TupleDesc desc)
{
	Datum		values[FOLD__NCOLS];
	bool		nulls[FOLD__NCOLS];

	wl_fold_values(f, ticket, now, desc, values, nulls);
	return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
}

/* ----------------------------------------------------------------
 * The aggregate
 *
 *	worklist.fold(e worklist.ticket_event, t worklist.ticket, now timestamptz)
 *		RETURNS worklist.ticket_fold
 *
 * Collects the events of one ticket and folds them in the final function
 * with wl_fold_events(), which sorts them by a total order first: feeding
 * the same events in any order (ORDER BY inside the call included) gives
 * the same result.  Rows whose e is NULL (a ticket without events, from a
 * LEFT JOIN) only contribute the ticket.  No rows, or no ticket, folds to
 * NULL.
 * ----------------------------------------------------------------
 */
typedef struct FoldAgg
{
	bool		has_def;
	WlTicketDef def;
	char	   *tenant;
	bool		has_now;
	TimestampTz now;
	char	   *event_ticket;	/* ticket and tenant of the first event */
	char	   *event_tenant;
	int			nevents;
	int			maxevents;
	WlEvent    *events;
} FoldAgg;

/* Column numbers of a row type, found by name once per row type. */
typedef struct RowMap
{
	Oid			typid;
	int			natts;
	int			attno[10];
} RowMap;

typedef struct FoldFnCache
{
	RowMap		event;
	RowMap		ticket;
} FoldFnCache;

static const char *const event_cols[] = {
	"ticket", "actor", "at", "kind", "value", "reason", "not_before",
	"watchdog", "confirmation", "tenant"
};
enum
{
	EV_TICKET, EV_ACTOR, EV_AT, EV_KIND, EV_VALUE, EV_REASON, EV_NOT_BEFORE,
	EV_WATCHDOG, EV_CONFIRMATION, EV_TENANT, EV__N
};

static const char *const ticket_cols[] = {
	"id", "requester", "authorities", "open_deadline", "confirm_window",
	"ladder", "tenant"
};
enum
{
	TK_ID, TK_REQUESTER, TK_AUTHORITIES, TK_OPEN_DEADLINE, TK_CONFIRM_WINDOW,
	TK_LADDER, TK_TENANT, TK__N
};

/*
 * Deform a composite argument and pick the named columns out of it into
 * values/nulls (indexed like names).
 */
static void
read_row(HeapTupleHeader th, RowMap *map, const char *const *names, int n,
		 Datum *values, bool *nulls)
{
	Oid			typid = HeapTupleHeaderGetTypeId(th);
	TupleDesc	desc = lookup_rowtype_tupdesc(typid, HeapTupleHeaderGetTypMod(th));
	HeapTupleData tuple;
	Datum	   *all = palloc(sizeof(Datum) * desc->natts);
	bool	   *allnulls = palloc(sizeof(bool) * desc->natts);

	if (map->typid != typid || map->natts != desc->natts)
	{
		for (int i = 0; i < n; i++)
		{
			map->attno[i] = -1;
			for (int j = 0; j < desc->natts; j++)
			{
				Form_pg_attribute att = TupleDescAttr(desc, j);

				if (!att->attisdropped && strcmp(NameStr(att->attname), names[i]) == 0)
					map->attno[i] = j;
			}
			if (map->attno[i] < 0)
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("row type %s has no column \"%s\"",
								format_type_be(typid), names[i])));
		}
		map->typid = typid;
		map->natts = desc->natts;
	}

	tuple.t_len = HeapTupleHeaderGetDatumLength(th);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = th;
	heap_deform_tuple(&tuple, desc, all, allnulls);
	for (int i = 0; i < n; i++)
	{
		values[i] = all[map->attno[i]];
		nulls[i] = allnulls[map->attno[i]];
	}
	pfree(all);
	pfree(allnulls);
	ReleaseTupleDesc(desc);
}

static char *
text_or_null(Datum d, bool isnull)
{
	return isnull ? NULL : TextDatumGetCString(d);
}

static void
require_column(bool isnull, const char *table, const char *col)
{
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("column \"%s\" of a %s row given to worklist.fold is null",
						col, table)));
}

static void
fold_agg_ticket(FoldAgg *agg, HeapTupleHeader th, FoldFnCache *cache)
{
	Datum		v[TK__N];
	bool		n[TK__N];
	char	   *id;
	char	   *tenant;

	read_row(th, &cache->ticket, ticket_cols, TK__N, v, n);
	require_column(n[TK_ID], "worklist.ticket", "id");
	require_column(n[TK_TENANT], "worklist.ticket", "tenant");
	id = TextDatumGetCString(v[TK_ID]);
	tenant = TextDatumGetCString(v[TK_TENANT]);
	if (agg->has_def)
	{
		if (strcmp(id, agg->def.id) != 0 || strcmp(tenant, agg->tenant) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("worklist.fold folds one ticket at a time"),
					 errdetail("It was given tickets \"%s\" and \"%s\".",
							   agg->def.id, id)));
		return;
	}
	require_column(n[TK_REQUESTER], "worklist.ticket", "requester");
	wl_ticket_def_from_datums(&agg->def, id, TextDatumGetCString(v[TK_REQUESTER]),
							  v[TK_AUTHORITIES], n[TK_AUTHORITIES],
							  v[TK_OPEN_DEADLINE], n[TK_OPEN_DEADLINE],
							  v[TK_CONFIRM_WINDOW], n[TK_CONFIRM_WINDOW],
							  v[TK_LADDER], n[TK_LADDER]);
	agg->tenant = tenant;
	agg->has_def = true;
}

static void
fold_agg_event(FoldAgg *agg, HeapTupleHeader th, FoldFnCache *cache)
{
	Datum		v[EV__N];
	bool		n[EV__N];
	WlEvent    *ev;
	char	   *ticket;
	char	   *tenant;

	read_row(th, &cache->event, event_cols, EV__N, v, n);
	require_column(n[EV_TICKET], "worklist.ticket_event", "ticket");
	require_column(n[EV_TENANT], "worklist.ticket_event", "tenant");
	require_column(n[EV_ACTOR], "worklist.ticket_event", "actor");
	require_column(n[EV_AT], "worklist.ticket_event", "at");
	require_column(n[EV_KIND], "worklist.ticket_event", "kind");
	require_column(n[EV_VALUE], "worklist.ticket_event", "value");

	ticket = TextDatumGetCString(v[EV_TICKET]);
	tenant = TextDatumGetCString(v[EV_TENANT]);
	if (agg->event_ticket == NULL)
	{
		agg->event_ticket = ticket;
		agg->event_tenant = tenant;
	}
	else if (strcmp(ticket, agg->event_ticket) != 0 ||
			 strcmp(tenant, agg->event_tenant) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("worklist.fold folds one ticket at a time"),
				 errdetail("It was given events of tickets \"%s\" and \"%s\".",
						   agg->event_ticket, ticket)));

	if (agg->nevents == agg->maxevents)
	{
		agg->maxevents = agg->maxevents ? agg->maxevents * 2 : 16;
		agg->events = agg->events
			? repalloc_huge(agg->events, sizeof(WlEvent) * agg->maxevents)
			: palloc(sizeof(WlEvent) * agg->maxevents);
	}
	ev = &agg->events[agg->nevents++];
	memset(ev, 0, sizeof(*ev));
	ev->kind = wl_kind_parse(TextDatumGetCString(v[EV_KIND]));
	ev->actor = TextDatumGetCString(v[EV_ACTOR]);
	ev->at = DatumGetTimestampTz(v[EV_AT]);
	ev->value = wl_value_parse(ev->kind, TextDatumGetCString(v[EV_VALUE]));
	ev->reason = text_or_null(v[EV_REASON], n[EV_REASON]);
	ev->has_not_before = !n[EV_NOT_BEFORE];
	if (ev->has_not_before)
		ev->not_before = DatumGetTimestampTz(v[EV_NOT_BEFORE]);
	ev->watchdog = !n[EV_WATCHDOG] && DatumGetBool(v[EV_WATCHDOG]);
	if (!n[EV_CONFIRMATION])
		ev->confirmation = DatumGetCString(DirectFunctionCall1(jsonb_out,
															   v[EV_CONFIRMATION]));
}

Datum
wl_fold_step(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	MemoryContext old;
	FoldAgg    *agg;
	FoldFnCache *cache;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("worklist.fold_step called in non-aggregate context")));

	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
														  sizeof(FoldFnCache));
	cache = (FoldFnCache *) fcinfo->flinfo->fn_extra;

	old = MemoryContextSwitchTo(aggcxt);
	if (PG_ARGISNULL(0))
		agg = palloc0(sizeof(FoldAgg));
	else
		agg = (FoldAgg *) PG_GETARG_POINTER(0);

	if (!PG_ARGISNULL(2))
		fold_agg_ticket(agg, PG_GETARG_HEAPTUPLEHEADER(2), cache);
	if (!PG_ARGISNULL(3))
	{
		TimestampTz now = PG_GETARG_TIMESTAMPTZ(3);

		if (agg->has_now && agg->now != now)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("argument \"now\" of worklist.fold must be the same for every row")));
		agg->has_now = true;
		agg->now = now;
	}
	if (!PG_ARGISNULL(1))
		fold_agg_event(agg, PG_GETARG_HEAPTUPLEHEADER(1), cache);
	MemoryContextSwitchTo(old);

	PG_RETURN_POINTER(agg);
}

Datum
wl_fold_final(PG_FUNCTION_ARGS)
{
	FoldAgg    *agg;
	WlFoldState st;
	WlFold		fold;
	WlEvent    *events;
	TupleDesc	desc;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	agg = (FoldAgg *) PG_GETARG_POINTER(0);
	if (!agg->has_def)
		PG_RETURN_NULL();
	if (!agg->has_now)
		wl_error_bad_arg("now", "must not be null");
	if (agg->event_ticket != NULL &&
		(strcmp(agg->event_ticket, agg->def.id) != 0 ||
		 strcmp(agg->event_tenant, agg->tenant) != 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("worklist.fold was given events of ticket \"%s\" with ticket \"%s\"",
						agg->event_ticket, agg->def.id)));

	/* sort a copy: the final function may run again over the same state */
	events = palloc(sizeof(WlEvent) * Max(agg->nevents, 1));
	if (agg->nevents > 0)
		memcpy(events, agg->events, sizeof(WlEvent) * agg->nevents);
	wl_fold_events(&st, &agg->def, events, agg->nevents);
	wl_fold_judge(&st, &agg->def, &fold);

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	desc = BlessTupleDesc(desc);
	PG_RETURN_DATUM(wl_fold_datum(&fold, agg->def.id, agg->now, desc));
}

/*-------------------------------------------------------------------------
 *
 * ticket.c
 *	  Tickets: the append-only event log, its verbs, and the watchdog
 *	  (doc/reference.md, section 5).
 *
 * Storage.  worklist.ticket holds what was asked (the definition, never
 * changed after open_ticket) and a summary of the log: the fold state
 * (fold_state, see ticket.h) and what the readers that must cost what is
 * due need from it -- state, deadline, overdue_from (the instant the
 * ticket becomes overdue, -infinity when its deadline is NULL, NULL when
 * it is terminal) and next_check (the instant the watchdog next has
 * something to do, NULL when never).  Partial indexes on the last two
 * make overdue_tickets and the watchdog read only rows that are due.
 * worklist.ticket_event is the log; its row type is what ticket_history
 * returns.
 *
 * Appending.  Every append (report, close_ticket, the watchdog) locks the
 * ticket row (FOR NO KEY UPDATE), which serialises appends to one ticket,
 * adds the event to the stored fold state, and writes the event and the
 * new summary in one statement, so the summary always matches the log
 * (test/pgtap/ticket_summary.sql and sql/ticket_order.sql prove it
 * against a fresh fold).  An append costs the same however long the log
 * is, except in the rare case wl_fold_add() cannot decide from the
 * summary (ticket.h), where the log is folded again.
 *
 * Append-only.  A statement trigger refuses UPDATE, DELETE and TRUNCATE
 * on the log and on tickets for every role, owner included, unless
 * erase_tenant() is running in this backend, or the retention purge of
 * closed tickets (wl_ticket_purge) -- or, for an UPDATE of a ticket, one of
 * the statements below that write its summary.
 *
 * The watchdog (wl_ticket_watchdog) is the only writer of escalation
 * events and of implicit confirmations; it writes as actor
 * "worklist.watchdog", which the verbs refuse as an argument, and marks
 * its events in the `watchdog` column, which is what the fold reads.
 *
 *-------------------------------------------------------------------------
 */
#include "change.h"
#include "sweep.h"
#include "ticket.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(wl_open_ticket);
PG_FUNCTION_INFO_V1(wl_report);
PG_FUNCTION_INFO_V1(wl_close_ticket);
PG_FUNCTION_INFO_V1(wl_ticket_state);
PG_FUNCTION_INFO_V1(wl_ticket_history);
PG_FUNCTION_INFO_V1(wl_overdue_tickets);
PG_FUNCTION_INFO_V1(wl_ticket_log_guard);

/* The columns every statement reading a ticket selects, in this order. */
#define TICKET_COLS \
	"t.id, t.requester, t.authorities, t.open_deadline, t.confirm_window," \
	" t.ladder, t.fold_state, t.last_seq"

#define TICKET_KEY \
	"t.tenant OPERATOR(pg_catalog.=) $1 AND t.id OPERATOR(pg_catalog.=) $2"

/*
 * True while a statement of this module that updates worklist.ticket runs,
 * or while the retention purge deletes tickets and their logs, so the guard
 * trigger lets it through.  Reset on error by PG_FINALLY.
 */
static bool ticket_writing = false;
static bool ticket_purging = false;

/* A ticket row as the verbs use it. */
typedef struct TicketRow
{
	WlTicketDef def;
	WlFoldState st;
	int64		last_seq;
} TicketRow;

/* ----------------------------------------------------------------
 * Arguments
 * ----------------------------------------------------------------
 */

/* An actor, requester or authority: an identifier, never the watchdog. */
static void
check_not_watchdog(text *t, const char *argname)
{
	if (VARSIZE_ANY_EXHDR(t) == strlen(WL_WATCHDOG_ACTOR) &&
		memcmp(VARDATA_ANY(t), WL_WATCHDOG_ACTOR, strlen(WL_WATCHDOG_ACTOR)) == 0)
		wl_error_bad_arg(argname,
						 "must not be \"" WL_WATCHDOG_ACTOR "\", the name only the watchdog writes as");
}

static text *
party_arg(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	text	   *t = wl_arg_ident(fcinfo, argno, argname);

	check_not_watchdog(t, argname);
	return t;
}

/*
 * ladder interval[]: not NULL, one-dimensional, at most WL_LADDER_MAX rungs,
 * no NULL or negative rung
 */
static ArrayType *
ladder_arg(FunctionCallInfo fcinfo, int argno)
{
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	if (PG_ARGISNULL(argno))
		wl_error_bad_arg("ladder", "must not be null");
	arr = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(arr) > 1)
		wl_error_bad_arg("ladder", "must be a one-dimensional array");
	wl_check_array_size(arr, "ladder", WL_LADDER_MAX);
	deconstruct_array(arr, INTERVALOID, sizeof(Interval), false,
					  TYPALIGN_DOUBLE, &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			wl_error_bad_arg("ladder", "must not contain null elements");
		if (wl_interval_negative(DatumGetIntervalP(elems[i])))
			wl_error_bad_arg("ladder", "must not contain negative intervals");
	}
	return arr;
}

/* ----------------------------------------------------------------
 * Reading rows
 * ----------------------------------------------------------------
 */
static Datum
column(HeapTuple tup, TupleDesc desc, int col, bool *isnull)
{
	return SPI_getbinval(tup, desc, col, isnull);
}

/*
 * A TicketRow from a row selected with TICKET_COLS.  The stored fold state
 * is read only when with_state: a reader that folds the log afresh does
 * not depend on it.
 */
static void
load_ticket(HeapTuple tup, TupleDesc desc, TicketRow *row, bool with_state)
{
	bool		n[8];
	Datum		v[8];

	for (int i = 0; i < 8; i++)
		v[i] = column(tup, desc, i + 1, &n[i]);
	wl_ticket_def_from_datums(&row->def,
							  TextDatumGetCString(v[0]),
							  TextDatumGetCString(v[1]),
							  v[2], n[2], v[3], n[3], v[4], n[4], v[5], n[5]);
	row->last_seq = DatumGetInt64(v[7]);
	if (with_state)
		wl_fold_deserialize(&row->st, &row->def,
							n[6] ? NULL : DatumGetByteaPP(v[6]), row->last_seq);
	else
		wl_fold_init(&row->st);
}

/* wl_exec for a statement that updates worklist.ticket rows. */
static uint64
exec_ticket_update(WlStmt *stmt, Datum *values, const char *nulls)
{
	uint64		n = 0;

	ticket_writing = true;
	PG_TRY();
	{
		n = wl_exec(stmt, values, nulls, false, 0);
	}
	PG_FINALLY();
	{
		ticket_writing = false;
	}
	PG_END_TRY();
	return n;
}

/*
 * Every event of a ticket, with room for `extra` more after them.  Order
 * does not matter: the fold sorts them.
 */
static WlEvent *
load_events(text *tenant, const char *ticket, bool read_only, int extra,
			int *nevents)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT e.actor, e.at, e.kind, e.value, e.reason, e.not_before,"
		" e.watchdog, e.confirmation::pg_catalog.text"
		" FROM worklist.ticket_event e"
		" WHERE e.tenant OPERATOR(pg_catalog.=) $1"
		" AND e.ticket OPERATOR(pg_catalog.=) $2",
		2, {TEXTOID, TEXTOID}, .name = "ticket.events"
	};
	Datum		values[2];
	Portal		portal;
	uint64		n;
	uint64		total = 0;
	uint64		room = 64;
	WlEvent    *events;

	values[0] = PointerGetDatum(tenant);
	values[1] = CStringGetTextDatum(ticket);
	events = palloc(sizeof(WlEvent) * (room + extra + 1));
	portal = wl_cursor_open(&stmt, values, NULL, read_only);
	while ((n = wl_cursor_fetch(portal)) > 0)
	{
		SPITupleTable *tt = SPI_tuptable;

		if (total + n + extra + 1 > room + extra + 1)
		{
			while (room < total + n)
				room *= 2;
			if (room > (uint64) (MaxAllocHugeSize / sizeof(WlEvent)) - extra - 1)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("too many events for ticket \"%s\"", ticket)));
			events = repalloc_huge(events, sizeof(WlEvent) * (room + extra + 1));
		}
		for (uint64 i = 0; i < n; i++)
		{
			HeapTuple	tup = tt->vals[i];
			TupleDesc	desc = tt->tupdesc;
			WlEvent    *ev = &events[total + i];
			bool		isnull;
			Datum		d;

			memset(ev, 0, sizeof(*ev));
			ev->actor = TextDatumGetCString(column(tup, desc, 1, &isnull));
			ev->at = DatumGetTimestampTz(column(tup, desc, 2, &isnull));
			ev->kind = wl_kind_parse(TextDatumGetCString(column(tup, desc, 3, &isnull)));
			ev->value = wl_value_parse(ev->kind,
									   TextDatumGetCString(column(tup, desc, 4, &isnull)));
			d = column(tup, desc, 5, &isnull);
			ev->reason = isnull ? NULL : TextDatumGetCString(d);
			d = column(tup, desc, 6, &isnull);
			ev->has_not_before = !isnull;
			ev->not_before = isnull ? 0 : DatumGetTimestampTz(d);
			d = column(tup, desc, 7, &isnull);
			ev->watchdog = !isnull && DatumGetBool(d);
			d = column(tup, desc, 8, &isnull);
			ev->confirmation = isnull ? NULL : TextDatumGetCString(d);
		}
		total += n;
	}
	wl_cursor_close(portal);
	if (total > (uint64) INT_MAX - extra - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many events for ticket \"%s\"", ticket)));
	*nevents = (int) total;
	return events;
}

/* ----------------------------------------------------------------
 * Appending
 * ----------------------------------------------------------------
 */

/* The value column of an event. */
static const char *
event_value_text(const WlEvent *ev)
{
	switch (ev->kind)
	{
		case WL_KIND_PARTICIPATION:
			return wl_part_name((WlPart) ev->value);
		case WL_KIND_OUTCOME:
			return wl_outcome_name((WlOutcome) ev->value);
		case WL_KIND_ESCALATION:
			return psprintf("%d", ev->value);
	}
	return NULL;
}

/*
 * Append ev to the log of a locked ticket and bring its summary up to
 * date, in one statement.  Leaves the new fold in *fold.
 */
static void
append_event(text *tenant, TicketRow *row, const WlEvent *ev, WlFold *fold)
{
	static WlStmt stmt WL_KEPT = {
		"WITH appended AS ("
		" INSERT INTO worklist.ticket_event"
		" (tenant, ticket, seq, actor, at, kind, value, reason, not_before,"
		" watchdog, confirmation)"
		" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,"
		" $11::pg_catalog.jsonb))"
		" UPDATE worklist.ticket t SET last_seq = $3,"
		" last_event_at = GREATEST(t.last_event_at, $5),"
		" state = $12::worklist.ticket_status, deadline = $13,"
		" overdue_from = $14, next_check = $15, fold_state = $16"
		" WHERE " TICKET_KEY,
		16, {TEXTOID, TEXTOID, INT8OID, TEXTOID, TIMESTAMPTZOID, TEXTOID,
			TEXTOID, TEXTOID, TIMESTAMPTZOID, BOOLOID, TEXTOID, TEXTOID,
			TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID, BYTEAOID}, .name = "ticket.append"
	};
	Datum		values[16];
	char		nulls[16];

	if (!wl_fold_add(&row->st, &row->def, ev))
	{
		/* the summary cannot tell: fold the whole log, with ev */
		int			n;
		WlEvent    *events = load_events(tenant, row->def.id, false, 1, &n);

		events[n++] = *ev;
		wl_fold_events(&row->st, &row->def, events, n);
	}
	wl_fold_judge(&row->st, &row->def, fold);

	memset(nulls, ' ', sizeof(nulls));
	values[0] = PointerGetDatum(tenant);
	values[1] = CStringGetTextDatum(row->def.id);
	values[2] = Int64GetDatum(row->last_seq + 1);
	values[3] = CStringGetTextDatum(ev->actor);
	values[4] = TimestampTzGetDatum(ev->at);
	values[5] = CStringGetTextDatum(wl_kind_name(ev->kind));
	values[6] = CStringGetTextDatum(event_value_text(ev));
	values[7] = ev->reason ? CStringGetTextDatum(ev->reason) : (Datum) 0;
	nulls[7] = ev->reason ? ' ' : 'n';
	values[8] = TimestampTzGetDatum(ev->not_before);
	nulls[8] = ev->has_not_before ? ' ' : 'n';
	values[9] = BoolGetDatum(ev->watchdog);
	values[10] = ev->confirmation ? CStringGetTextDatum(ev->confirmation) : (Datum) 0;
	nulls[10] = ev->confirmation ? ' ' : 'n';
	values[11] = CStringGetTextDatum(wl_status_name(fold->status));
	values[12] = TimestampTzGetDatum(fold->deadline);
	nulls[12] = fold->has_deadline ? ' ' : 'n';
	values[13] = TimestampTzGetDatum(fold->overdue_from);
	nulls[13] = fold->live_ticket ? ' ' : 'n';
	values[14] = TimestampTzGetDatum(fold->next_check);
	nulls[14] = fold->has_next_check ? ' ' : 'n';
	values[15] = PointerGetDatum(wl_fold_serialize(&row->st));

	if (exec_ticket_update(&stmt, values, nulls) != 1)
		elog(ERROR, "ticket \"%s\" vanished while locked", row->def.id);
	row->last_seq++;
}

/* Lock a ticket for appending; WL001 when it does not exist. */
static void
lock_ticket(text *tenant, text *ticket, TicketRow *row)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT " TICKET_COLS " FROM worklist.ticket t WHERE " TICKET_KEY
		" FOR NO KEY UPDATE",
		2, {TEXTOID, TEXTOID}, .name = "ticket.lock"
	};
	Datum		values[2];

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(ticket);
	if (wl_exec(&stmt, values, NULL, false, 0) == 0)
		wl_error_not_found("ticket", text_to_cstring(ticket));
	load_ticket(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, row, true);
}

/* The fold a writing verb returns: judged at the transaction's now(). */
static Datum
result_fold(FunctionCallInfo fcinfo, MemoryContext outer, const WlFold *fold,
			const char *ticket)
{
	TupleDesc	desc;
	MemoryContext old = MemoryContextSwitchTo(outer);
	Datum		result;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	desc = BlessTupleDesc(desc);
	result = wl_fold_datum(fold, ticket, GetCurrentTransactionStartTimestamp(), desc);
	MemoryContextSwitchTo(old);
	return result;
}

/* report and close_ticket: append one event an actor wrote. */
static Datum
append_verb(FunctionCallInfo fcinfo, text *tenant, text *ticket, WlEvent *ev)
{
	MemoryContext outer = CurrentMemoryContext;
	WlSpi		spi;
	TicketRow	row;
	WlFold		fold;
	WlChange	change;
	Datum		result;

	wl_spi_begin(&spi);
	lock_ticket(tenant, ticket, &row);
	append_event(tenant, &row, ev, &fold);

	/* a demoted close is that actor's participation, not a close */
	if (ev->kind == WL_KIND_OUTCOME && wl_is_authority(&row.def, ev->actor))
		change = WL_CHANGE_TICKET_CLOSED;
	else
		change = WL_CHANGE_TICKET_REPORTED;
	wl_change_record_text(tenant, change);

	result = result_fold(fcinfo, outer, &fold, row.def.id);
	wl_spi_end(&spi);
	return result;
}

/* ----------------------------------------------------------------
 * Verbs
 * ----------------------------------------------------------------
 */

/*
 * worklist.open_ticket(id, requester, title, body, authorities,
 *						open_deadline, confirm_window, ladder)
 *	RETURNS worklist.ticket_fold
 *
 * Creates the ticket, or returns the fold of the existing one with this id
 * unchanged (the arguments of a second call are validated, then ignored).
 */
Datum
wl_open_ticket(PG_FUNCTION_ARGS)
{
	static WlStmt insert_stmt WL_KEPT = {
		"INSERT INTO worklist.ticket AS t"
		" (tenant, id, requester, title, body, authorities, open_deadline,"
		" confirm_window, ladder, state, deadline, overdue_from, next_check)"
		" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,"
		" $10::worklist.ticket_status, $11, $12, $13)"
		" ON CONFLICT (tenant, id) DO NOTHING",
		13, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTARRAYOID,
			TIMESTAMPTZOID, INTERVALOID, INTERVALARRAYOID, TEXTOID,
		TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID}, .name = "ticket.open.insert"
	};
	static WlStmt read_stmt WL_KEPT = {
		"SELECT " TICKET_COLS " FROM worklist.ticket t WHERE " TICKET_KEY,
		2, {TEXTOID, TEXTOID}, .name = "ticket.open.existing"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_ACTOR(1, "requester")));
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	text	   *requester = party_arg(fcinfo, 1, "requester");
	text	   *title = wl_arg_text(fcinfo, 2, "title", true);
	Datum		body = wl_arg_document(fcinfo, 3, "body");
	ArrayType  *authorities = wl_arg_idents(fcinfo, 4, "authorities", true);
	bool		has_open_deadline = !PG_ARGISNULL(5);
	TimestampTz open_deadline = 0;
	bool		has_window = !PG_ARGISNULL(6);
	ArrayType  *ladder;
	MemoryContext outer = CurrentMemoryContext;
	WlTicketDef def;
	WlFoldState st;
	WlFold		fold;
	WlSpi		spi;
	Datum		values[13];
	char		nulls[13];
	Datum		result;

	{
		Datum	   *elems;
		bool	   *enulls;
		int			n;

		deconstruct_array(authorities, TEXTOID, -1, false, TYPALIGN_INT,
						  &elems, &enulls, &n);
		for (int i = 0; i < n; i++)
			check_not_watchdog(DatumGetTextPP(elems[i]), "authorities");
	}
	if (has_open_deadline)
		open_deadline = wl_check_finite(PG_GETARG_TIMESTAMPTZ(5), "open_deadline");
	if (has_window && wl_interval_negative(PG_GETARG_INTERVAL_P(6)))
		wl_error_bad_arg("confirm_window", "must not be negative");
	ladder = ladder_arg(fcinfo, 7);

	/* a new ticket's summary: the fold of no events */
	wl_ticket_def_from_datums(&def, text_to_cstring(id), text_to_cstring(requester),
							  PointerGetDatum(authorities), false,
							  TimestampTzGetDatum(open_deadline), !has_open_deadline,
							  has_window ? PG_GETARG_DATUM(6) : (Datum) 0, !has_window,
							  PointerGetDatum(ladder), false);
	wl_fold_init(&st);
	wl_fold_judge(&st, &def, &fold);

	memset(nulls, ' ', sizeof(nulls));
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = PointerGetDatum(requester);
	values[3] = PointerGetDatum(title);
	values[4] = body;
	values[5] = PointerGetDatum(authorities);
	values[6] = TimestampTzGetDatum(open_deadline);
	nulls[6] = has_open_deadline ? ' ' : 'n';
	values[7] = has_window ? PG_GETARG_DATUM(6) : (Datum) 0;
	nulls[7] = has_window ? ' ' : 'n';
	values[8] = PointerGetDatum(ladder);
	values[9] = CStringGetTextDatum(wl_status_name(fold.status));
	values[10] = TimestampTzGetDatum(fold.deadline);
	nulls[10] = fold.has_deadline ? ' ' : 'n';
	values[11] = TimestampTzGetDatum(fold.overdue_from);
	values[12] = TimestampTzGetDatum(fold.next_check);
	nulls[12] = fold.has_next_check ? ' ' : 'n';

	wl_spi_begin(&spi);
	if (wl_exec(&insert_stmt, values, nulls, false, 0) == 1)
		wl_change_record_text(tenant, WL_CHANGE_TICKET_OPENED);
	else
	{
		TicketRow	row;

		if (wl_exec(&read_stmt, values, NULL, false, 0) != 1)
			elog(ERROR, "ticket \"%s\" neither inserted nor found", def.id);
		load_ticket(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, &row, true);
		wl_fold_judge(&row.st, &row.def, &fold);
	}
	result = result_fold(fcinfo, outer, &fold, def.id);
	wl_spi_end(&spi);
	PG_RETURN_DATUM(result);
}

/*
 * worklist.report(ticket, actor, value, not_before, reason, at)
 *	RETURNS worklist.ticket_fold
 */
Datum
wl_report(PG_FUNCTION_ARGS)
{
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_ACTOR(1, "actor"), WL_CLOCK(5, "at")));
	text	   *ticket = wl_arg_ident(fcinfo, 0, "ticket");
	text	   *actor = party_arg(fcinfo, 1, "actor");
	Datum		value = wl_arg_required(fcinfo, 2, "value");
	text	   *reason;
	WlEvent		ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = WL_KIND_PARTICIPATION;
	ev.actor = text_to_cstring(actor);
	ev.value = wl_value_parse(ev.kind, wl_enum_label(value));
	ev.has_not_before = !PG_ARGISNULL(3);
	if (ev.has_not_before)
		ev.not_before = wl_check_finite(PG_GETARG_TIMESTAMPTZ(3), "not_before");
	reason = wl_arg_text(fcinfo, 4, "reason", false);
	ev.reason = reason ? text_to_cstring(reason) : NULL;
	ev.at = wl_check_finite(wl_arg_time(fcinfo, 5, "at"), "at");

	PG_RETURN_DATUM(append_verb(fcinfo, tenant, ticket, &ev));
}

/*
 * worklist.close_ticket(ticket, actor, outcome, reason, at)
 *	RETURNS worklist.ticket_fold
 */
Datum
wl_close_ticket(PG_FUNCTION_ARGS)
{
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_ACTOR(1, "actor"), WL_CLOCK(4, "at")));
	text	   *ticket = wl_arg_ident(fcinfo, 0, "ticket");
	text	   *actor = party_arg(fcinfo, 1, "actor");
	Datum		outcome = wl_arg_required(fcinfo, 2, "outcome");
	text	   *reason;
	WlEvent		ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = WL_KIND_OUTCOME;
	ev.actor = text_to_cstring(actor);
	ev.value = wl_value_parse(ev.kind, wl_enum_label(outcome));
	reason = wl_arg_text(fcinfo, 3, "reason", false);
	ev.reason = reason ? text_to_cstring(reason) : NULL;
	ev.at = wl_check_finite(wl_arg_time(fcinfo, 4, "at"), "at");

	PG_RETURN_DATUM(append_verb(fcinfo, tenant, ticket, &ev));
}

/*
 * worklist.ticket_state(ticket, now) RETURNS worklist.ticket_fold
 *
 * Folds the log afresh (not the summary): O(events of the ticket).
 */
Datum
wl_ticket_state(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT " TICKET_COLS " FROM worklist.ticket t WHERE " TICKET_KEY,
		2, {TEXTOID, TEXTOID}, .name = "ticket.state"
	};
	text	   *tenant = wl_tenant_enter();
	text	   *ticket = wl_arg_ident(fcinfo, 0, "ticket");
	TimestampTz now = wl_arg_time(fcinfo, 1, "now");
	MemoryContext outer = CurrentMemoryContext;
	WlSpi		spi;
	Datum		values[2];
	TicketRow	row;
	WlEvent    *events;
	int			nevents;
	WlFold		fold;
	TupleDesc	desc;
	Datum		result;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	desc = BlessTupleDesc(desc);

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(ticket);
	wl_spi_begin(&spi);
	if (wl_exec(&stmt, values, NULL, true, 0) == 0)
		wl_error_not_found("ticket", text_to_cstring(ticket));
	load_ticket(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, &row, false);
	events = load_events(tenant, row.def.id, true, 0, &nevents);
	wl_fold_events(&row.st, &row.def, events, nevents);
	wl_fold_judge(&row.st, &row.def, &fold);

	MemoryContextSwitchTo(outer);
	result = wl_fold_datum(&fold, row.def.id, now, desc);
	wl_spi_end(&spi);
	PG_RETURN_DATUM(result);
}

/*
 * worklist.ticket_history(ticket) RETURNS SETOF worklist.ticket_event
 *
 * Every event in arrival order.
 */
Datum
wl_ticket_history(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT e FROM worklist.ticket t"
		" LEFT JOIN worklist.ticket_event e"
		" ON e.tenant OPERATOR(pg_catalog.=) t.tenant"
		" AND e.ticket OPERATOR(pg_catalog.=) t.id"
		" WHERE " TICKET_KEY " ORDER BY e.seq",
		2, {TEXTOID, TEXTOID}, .name = "ticket.history"
	};
	text	   *tenant = wl_tenant_enter();
	text	   *ticket = wl_arg_ident(fcinfo, 0, "ticket");
	WlSpi		spi;
	Datum		values[2];

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(ticket);
	wl_spi_begin(&spi);
	/* the LEFT JOIN yields a row (NULL when no event) if the ticket exists */
	if (wl_exec_to_srf(&stmt, values, NULL, fcinfo) == 0)
		wl_error_not_found("ticket", text_to_cstring(ticket));
	wl_spi_end(&spi);
	return (Datum) 0;
}

/*
 * worklist.overdue_tickets(now, lim) RETURNS SETOF worklist.ticket_fold
 *
 * Live tickets overdue at now: NULL deadlines first (overdue_from is
 * -infinity for them), then the earliest deadline, then id.  Reads the
 * summaries of the rows it returns and nothing else.
 */
Datum
wl_overdue_tickets(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT " TICKET_COLS " FROM worklist.ticket t"
		" WHERE t.tenant OPERATOR(pg_catalog.=) $1"
		" AND t.overdue_from OPERATOR(pg_catalog.<=) $2"
		" ORDER BY t.overdue_from, t.id LIMIT $3",
		3, {TEXTOID, TIMESTAMPTZOID, INT4OID}, .name = "ticket.overdue"
	};
	text	   *tenant = wl_tenant_enter();
	TimestampTz now = wl_arg_time(fcinfo, 0, "now");
	int32		lim = wl_arg_limit(fcinfo, 1, 100, WL_LIMIT_MAX);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WlSpi		spi;
	Datum		values[3];
	uint64		n;
	SPITupleTable *tt;
	MemoryContext rowcxt;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	values[0] = PointerGetDatum(tenant);
	values[1] = TimestampTzGetDatum(now);
	values[2] = Int32GetDatum(lim);
	wl_spi_begin(&spi);
	n = wl_exec(&stmt, values, NULL, true, 0);
	tt = SPI_tuptable;
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "overdue_tickets row",
								   ALLOCSET_DEFAULT_SIZES);
	for (uint64 i = 0; i < n; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(rowcxt);
		TicketRow	row;
		WlFold		fold;
		Datum		v[WL_FOLD_NCOLS];
		bool		nulls[WL_FOLD_NCOLS];

		load_ticket(tt->vals[i], tt->tupdesc, &row, true);
		wl_fold_judge(&row.st, &row.def, &fold);
		wl_fold_values(&fold, row.def.id, now, rsinfo->setDesc, v, nulls);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
	}
	wl_spi_end(&spi);
	return (Datum) 0;
}

/* ----------------------------------------------------------------
 * The watchdog
 * ----------------------------------------------------------------
 */

/*
 * Run the watchdog over up to lim tickets of tenant that have something
 * due at now: an undisputed delivery whose confirm_window has passed is
 * closed done (implicit confirmation); otherwise an overdue ticket climbs
 * one rung of its ladder.  Each action appends exactly one event.  Rows
 * another transaction has locked are skipped this time.  Called by sweep
 * (and the sweeper) with SPI begun.
 */
void
wl_ticket_watchdog(text *tenant, TimestampTz now, int32 lim, WlSweepResult *result)
{
	static WlStmt due_stmt WL_KEPT = {
		"SELECT " TICKET_COLS " FROM worklist.ticket t"
		" WHERE t.tenant OPERATOR(pg_catalog.=) $1"
		" AND t.next_check OPERATOR(pg_catalog.<=) $2"
		" ORDER BY t.next_check, t.id LIMIT $3"
		" FOR NO KEY UPDATE SKIP LOCKED",
		3, {TEXTOID, TIMESTAMPTZOID, INT4OID}, .name = "ticket.watchdog.due"
	};
	static WlStmt recheck_stmt WL_KEPT = {
		"UPDATE worklist.ticket t SET next_check = $3 WHERE " TICKET_KEY,
		3, {TEXTOID, TEXTOID, TIMESTAMPTZOID}, .name = "ticket.watchdog.recheck"
	};
	char	   *tenant_cstr = text_to_cstring(tenant);
	Datum		values[3];
	uint64		n;
	SPITupleTable *tt;
	MemoryContext cxt;

	/* the watchdog writes its events at now */
	wl_check_finite(now, "now");

	values[0] = PointerGetDatum(tenant);
	values[1] = TimestampTzGetDatum(now);
	values[2] = Int32GetDatum(lim);
	n = wl_exec(&due_stmt, values, NULL, false, 0);
	tt = SPI_tuptable;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "ticket watchdog",
								ALLOCSET_DEFAULT_SIZES);
	for (uint64 i = 0; i < n; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);
		TicketRow	row;
		WlFold		fold;
		WlEvent		ev;

		CHECK_FOR_INTERRUPTS();
		load_ticket(tt->vals[i], tt->tupdesc, &row, true);
		wl_fold_judge(&row.st, &row.def, &fold);

		memset(&ev, 0, sizeof(ev));
		ev.actor = WL_WATCHDOG_ACTOR;
		ev.at = now;
		ev.watchdog = true;
		switch (wl_fold_watchdog_action(&fold, now))
		{
			case WL_WATCHDOG_CONFIRM:
				ev.kind = WL_KIND_OUTCOME;
				ev.value = WL_OUTCOME_DONE;
				ev.confirmation = wl_implicit_confirmation(&fold, &row.def);
				append_event(tenant, &row, &ev, &fold);
				result->tickets_confirmed++;
				wl_change_record(tenant_cstr, WL_CHANGE_TICKET_CONFIRMED);
				break;
			case WL_WATCHDOG_ESCALATE:
				ev.kind = WL_KIND_ESCALATION;
				ev.value = fold.rung + 1;
				append_event(tenant, &row, &ev, &fold);
				result->tickets_escalated++;
				wl_change_record(tenant_cstr, WL_CHANGE_TICKET_ESCALATED);
				break;
			case WL_WATCHDOG_NOTHING:
				{
					/* the stored next_check was early: store the right one */
					Datum		v[3];
					char		nulls[3] = {' ', ' ', ' '};

					v[0] = PointerGetDatum(tenant);
					v[1] = CStringGetTextDatum(row.def.id);
					v[2] = TimestampTzGetDatum(fold.next_check);
					if (!fold.has_next_check)
						nulls[2] = 'n';
					exec_ticket_update(&recheck_stmt, v, nulls);
				}
				break;
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(cxt);
	}
	MemoryContextDelete(cxt);
	SPI_freetuptable(tt);
}

/* ----------------------------------------------------------------
 * Append-only
 * ----------------------------------------------------------------
 */

/*
 * Statement trigger, BEFORE UPDATE OR DELETE OR TRUNCATE on
 * worklist.ticket_event and worklist.ticket: refuses, whoever runs the
 * statement, unless erase_tenant() or the retention purge runs it -- or,
 * for an UPDATE of worklist.ticket, a verb of this module writing a
 * summary.  (Its hint names erase_tenant() alone: the purge is nothing a
 * caller can run.)
 */
Datum
wl_ticket_log_guard(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	const char *op;
	bool		is_log;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"ticket_log_guard\" must be fired as a trigger")));
	is_log = strcmp(RelationGetRelationName(trigdata->tg_relation), "ticket_event") == 0;
	if (wl_erasing || ticket_purging)
		return PointerGetDatum(NULL);
	if (ticket_writing && !is_log && TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		return PointerGetDatum(NULL);

	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		op = "UPDATE";
	else if (TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		op = "DELETE";
	else if (TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event))
		op = "TRUNCATE";
	else
		op = "INSERT";
	if (is_log)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s on table \"worklist.ticket_event\" is not allowed", op),
				 errdetail("The ticket log is append-only: no event is ever changed or removed."),
				 errhint("Only worklist.erase_tenant() removes events, every one of a tenant at once.")));
	else if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("UPDATE on table \"worklist.ticket\" is not allowed"),
				 errdetail("A ticket's definition never changes, and its summary is written only with the event it summarises."),
				 errhint("Change a ticket through worklist.report, worklist.close_ticket or worklist.sweep.")));
	else
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s on table \"worklist.ticket\" is not allowed", op),
				 errdetail("A ticket leaves only with its whole tenant, together with its log."),
				 errhint("Only worklist.erase_tenant() removes tickets, every one of a tenant at once.")));
	return PointerGetDatum(NULL);
}

/* ----------------------------------------------------------------
 * Retention
 * ----------------------------------------------------------------
 */

/*
 * The purge of closed tickets (declared in sweep.h; run by retention.c):
 * up to lim of the tenant's tickets done or archived whose latest event is
 * at or before before, oldest first, each with its whole log.  Returns how
 * many went.
 */
uint64
wl_ticket_purge(text *tenant, TimestampTz before, int32 lim)
{
	static WlStmt pick WL_KEPT = {
		"SELECT d.id FROM worklist.ticket d"
		" WHERE d.tenant OPERATOR(pg_catalog.=) $1"
		"   AND d.state OPERATOR(pg_catalog.=) ANY ('{done,archived}'::worklist.ticket_status[])"
		"   AND d.last_event_at OPERATOR(pg_catalog.<=) $2"
		" ORDER BY d.last_event_at LIMIT $3"
		" FOR UPDATE OF d SKIP LOCKED",
		3, {TEXTOID, TIMESTAMPTZOID, INT4OID},
		.generic = true, .name = "retention.purge.tickets.pick"
	};
	static WlStmt purge WL_KEPT = {
		"WITH events AS ("
		"  DELETE FROM worklist.ticket_event e"
		"   WHERE e.tenant OPERATOR(pg_catalog.=) $1 AND e.ticket OPERATOR(pg_catalog.=) $2)"
		" DELETE FROM worklist.ticket t WHERE t.tenant OPERATOR(pg_catalog.=) $1 AND t.id OPERATOR(pg_catalog.=) $2",
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "retention.purge.tickets.delete"
	};
	uint64		n = 0;
	char	   *tenant_c;

	/* the log is append-only but for erasure and this purge */
	ticket_purging = true;
	PG_TRY();
	{
		n = wl_purge_by_id(&pick, &purge, tenant, before, lim);
	}
	PG_FINALLY();
	{
		ticket_purging = false;
	}
	PG_END_TRY();
	tenant_c = text_to_cstring(tenant);
	for (uint64 i = 0; i < n; i++)
		wl_change_record(tenant_c, WL_CHANGE_TICKET_PURGED);
	return n;
}

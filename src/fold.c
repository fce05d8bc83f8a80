/*-------------------------------------------------------------------------
 *
 * fold.c
 *	  The ticket fold (CONTRACT section 2, rules 1-7): one routine that
 *	  every reader of a ticket's state goes through, and the aggregate
 *	  worklist.fold() that exposes it to SQL.
 *
 * How the rules map onto the code (see ticket.h for the two steps):
 *
 *	  rule 1  say_cmp(): an actor's current participation is the greatest
 *			  of its events under an order that is total on everything the
 *			  fold reads: later `at` first, then, at the same `at`,
 *			  fail-safe (live before abandoned, earlier effective deadline
 *			  first, no deadline earliest of all, lower rank first).
 *	  rule 2  wl_fold_judge(): live actors, `abandoned` with MISSING_REASON.
 *	  rule 3  wl_fold_add(): an outcome from a non-authority becomes the
 *			  actor's delivered / abandoned and marks it unauthorized.
 *	  rule 4  close_cmp() picks the winning authorized outcome; each actor
 *			  keeps the participation that was current at its `at` (cut).
 *	  rule 5  wl_fold_judge() / wl_fold_values(): explicit or implicit
 *			  confirmation; the implicit one is written by the watchdog
 *			  into its event and read back from there.
 *	  rule 6  wl_fold_judge(): the deadline and when the ticket is overdue.
 *	  rule 7  escalations only feed escalation_rung.
 *
 * Actor names, reasons and every array of actors are ordered by strcmp on
 * their bytes (code-point order in UTF-8), never by a collation, so the
 * fold is the same in every database.
 *
 * Instants the watchdog computes (at + ladder[r], last + confirm_window)
 * are added in UTC and saturate at infinity instead of failing, so they do
 * not depend on the TimeZone of the session that computes them and a
 * far-future event never makes an append fail.
 *
 *-------------------------------------------------------------------------
 */
#include "ticket.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

PG_FUNCTION_INFO_V1(wl_fold_step);
PG_FUNCTION_INFO_V1(wl_fold_final);

/* Version byte of the serialized fold state. */
#define WL_FOLD_STATE_VERSION 1

static const char *const part_names[] = {
	"acknowledged", "working", "blocked", "delivered", "abandoned"
};
static const char *const outcome_names[] = {"done", "archived"};
static const char *const status_names[] = {
	"open", "acknowledged", "working", "blocked", "delivered", "unowned",
	"done", "archived"
};
static const char *const kind_names[] = {"participation", "outcome", "escalation"};

/* ----------------------------------------------------------------
 * Names and values
 * ----------------------------------------------------------------
 */
const char *
wl_status_name(WlStatus status)
{
	return status_names[status];
}

const char *
wl_part_name(WlPart part)
{
	return part_names[part];
}

const char *
wl_outcome_name(WlOutcome outcome)
{
	return outcome_names[outcome];
}

const char *
wl_kind_name(WlEventKind kind)
{
	return kind_names[kind];
}

WlEventKind
wl_kind_parse(const char *kind)
{
	for (int i = 0; i < lengthof(kind_names); i++)
		if (strcmp(kind, kind_names[i]) == 0)
			return (WlEventKind) i;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid ticket event kind: \"%s\"", kind)));
	pg_unreachable();
}

/* The value of an event of the given kind: a WlPart, WlOutcome or rung. */
int
wl_value_parse(WlEventKind kind, const char *value)
{
	switch (kind)
	{
		case WL_KIND_PARTICIPATION:
			for (int i = 0; i < lengthof(part_names); i++)
				if (strcmp(value, part_names[i]) == 0)
					return i;
			break;
		case WL_KIND_OUTCOME:
			for (int i = 0; i < lengthof(outcome_names); i++)
				if (strcmp(value, outcome_names[i]) == 0)
					return i;
			break;
		case WL_KIND_ESCALATION:
			{
				char	   *end;
				long		rung;

				errno = 0;
				rung = strtol(value, &end, 10);
				if (errno == 0 && *end == '\0' && end != value &&
					value[0] >= '1' && value[0] <= '9' && rung <= PG_INT32_MAX)
					return (int) rung;
			}
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid value for a ticket event of kind %s: \"%s\"",
					wl_kind_name(kind), value)));
	pg_unreachable();
}

bool
wl_is_authority(const WlTicketDef *def, const char *actor)
{
	if (strcmp(actor, def->requester) == 0)
		return true;
	for (int i = 0; i < def->nauthorities; i++)
		if (strcmp(actor, def->authorities[i]) == 0)
			return true;
	return false;
}

/* ----------------------------------------------------------------
 * Time
 * ----------------------------------------------------------------
 */

/* The saturated result of an addition that left the timestamp range. */
static TimestampTz
saturate(bool upward)
{
	return upward ? DT_NOEND : DT_NOBEGIN;
}

/*
 * t + span, computed as timestamp (UTC) arithmetic does: months first
 * (clamped to the end of the month), then days, then the time part.  An
 * infinite t stays as it is; a result outside the timestamp range becomes
 * +/-infinity instead of an error.
 */
TimestampTz
wl_time_add(TimestampTz t, const Interval *span)
{
	struct pg_tm tt,
			   *tm = &tt;
	fsec_t		fsec;

	if (TIMESTAMP_NOT_FINITE(t))
		return t;

	if (span->month != 0)
	{
		int64		mon;
		int64		year;

		if (timestamp2tm(t, NULL, tm, &fsec, NULL, NULL) != 0)
			return saturate(span->month > 0);
		mon = (int64) tm->tm_mon - 1 + span->month;
		year = tm->tm_year + (mon >= 0 ? mon / MONTHS_PER_YEAR
							  : -((-mon + MONTHS_PER_YEAR - 1) / MONTHS_PER_YEAR));
		mon -= (year - tm->tm_year) * MONTHS_PER_YEAR;
		if (year < JULIAN_MINYEAR || year > JULIAN_MAXYEAR)
			return saturate(span->month > 0);
		tm->tm_year = (int) year;
		tm->tm_mon = (int) mon + 1;
		if (tm->tm_mday > day_tab[isleap(tm->tm_year)][tm->tm_mon - 1])
			tm->tm_mday = day_tab[isleap(tm->tm_year)][tm->tm_mon - 1];
		if (tm2timestamp(tm, fsec, NULL, &t) != 0)
			return saturate(span->month > 0);
	}

	if (span->day != 0)
	{
		int64		julian;

		if (timestamp2tm(t, NULL, tm, &fsec, NULL, NULL) != 0)
			return saturate(span->day > 0);
		julian = (int64) date2j(tm->tm_year, tm->tm_mon, tm->tm_mday) + span->day;
		if (julian < 0 || julian > TIMESTAMP_END_JULIAN)
			return saturate(span->day > 0);
		j2date((int) julian, &tm->tm_year, &tm->tm_mon, &tm->tm_mday);
		if (tm2timestamp(tm, fsec, NULL, &t) != 0)
			return saturate(span->day > 0);
	}

	if (pg_add_s64_overflow(t, span->time, &t))
		return saturate(span->time > 0);
	if (!IS_VALID_TIMESTAMP(t))
		return saturate(t >= END_TIMESTAMP);
	return t;
}

/* ----------------------------------------------------------------
 * The orders the fold is defined by
 * ----------------------------------------------------------------
 */
static int
cmp_time(TimestampTz a, TimestampTz b)
{
	return a < b ? -1 : (a > b ? 1 : 0);
}

/* Code-point order of two optional strings; a missing one sorts first. */
static int
cmp_opt_str(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

/*
 * Which of two optional strings to keep when nothing else decides: > 0 for
 * a.  A given (non-empty) string over none, an empty one over NULL (both
 * read as missing, but the choice must not depend on arrival), then the
 * lower in code-point order.
 */
static int
prefer_str(const char *a, const char *b)
{
	bool		a_given = a != NULL && a[0] != '\0';
	bool		b_given = b != NULL && b[0] != '\0';
	int			c;

	if (a_given != b_given)
		return a_given ? 1 : -1;
	if ((a != NULL) != (b != NULL))
		return a != NULL ? 1 : -1;
	if (a == NULL || (c = strcmp(a, b)) == 0)
		return 0;
	return c < 0 ? 1 : -1;
}

/*
 * The effective deadline of a participation (rule 1, rule 6): its
 * not_before, or the ticket's open_deadline when it named none.  False
 * when it has neither, which means due now.
 */
static bool
effective_deadline(const WlTicketDef *def, const WlSay *s, TimestampTz *deadline)
{
	if (s->has_not_before)
	{
		*deadline = s->not_before;
		return true;
	}
	if (def->has_open_deadline)
	{
		*deadline = def->open_deadline;
		return true;
	}
	return false;
}

/*
 * Rule 1: > 0 when a, rather than b, is the actor's current participation.
 * Zero only when the two are identical in everything the fold keeps.
 */
static int
say_cmp(const WlTicketDef *def, const WlSay *a, const WlSay *b)
{
	bool		a_live = a->value != WL_PART_ABANDONED;
	bool		b_live = b->value != WL_PART_ABANDONED;
	TimestampTz a_dl = 0,
				b_dl = 0;
	bool		a_has,
				b_has;
	int			c;

	if (a->at != b->at)
		return cmp_time(a->at, b->at);

	/* same instant: resolve fail-safe; live first */
	if (a_live != b_live)
		return a_live ? 1 : -1;
	/* then the earlier effective deadline, none at all being earliest */
	a_has = effective_deadline(def, a, &a_dl);
	b_has = effective_deadline(def, b, &b_dl);
	if (a_has != b_has)
		return a_has ? -1 : 1;
	if (a_has && a_dl != b_dl)
		return a_dl < b_dl ? 1 : -1;
	/* then the lower value in rank order */
	if (a->value != b->value)
		return a->value < b->value ? 1 : -1;

	/*
	 * Nothing the rules look at tells them apart.  Still prefer one, so the
	 * answer never depends on which arrived first: a given reason over
	 * none, then the lower reason, then no not_before over one naming the
	 * open_deadline.
	 */
	if ((c = prefer_str(a->reason, b->reason)) != 0)
		return c;
	if (a->has_not_before != b->has_not_before)
		return a->has_not_before ? -1 : 1;
	if (a->has_not_before && a->not_before != b->not_before)
		return a->not_before < b->not_before ? 1 : -1;
	return 0;
}

/*
 * Rule 4: > 0 when authorized outcome a wins over b.  The latest wins; at
 * the same `at`, done over archived (a false failure is worse than a late
 * success), then an authority's close over the watchdog's, then the actor,
 * reason and confirmation in code-point order.
 */
static int
close_cmp(const WlClose *a, const WlClose *b)
{
	int			c;

	if (a->at != b->at)
		return cmp_time(a->at, b->at);
	if (a->outcome != b->outcome)
		return a->outcome == WL_OUTCOME_DONE ? 1 : -1;
	if (a->watchdog != b->watchdog)
		return a->watchdog ? -1 : 1;
	c = strcmp(a->actor, b->actor);
	if (c != 0)
		return c < 0 ? 1 : -1;
	if ((c = prefer_str(a->reason, b->reason)) != 0)
		return c;
	return prefer_str(a->confirmation, b->confirmation);
}

/*
 * The total order wl_fold_events() sorts a log by before folding it:
 * `at`, then kind (participation, outcome, escalation), then every other
 * field.  Arrival order (seq) plays no part.
 */
static int
event_cmp(const void *pa, const void *pb)
{
	const WlEvent *a = (const WlEvent *) pa;
	const WlEvent *b = (const WlEvent *) pb;
	int			c;

	if (a->at != b->at)
		return cmp_time(a->at, b->at);
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if ((c = strcmp(a->actor, b->actor)) != 0)
		return c;
	if (a->value != b->value)
		return a->value < b->value ? -1 : 1;
	if (a->watchdog != b->watchdog)
		return a->watchdog ? 1 : -1;
	if (a->has_not_before != b->has_not_before)
		return a->has_not_before ? 1 : -1;
	if (a->has_not_before && a->not_before != b->not_before)
		return cmp_time(a->not_before, b->not_before);
	if ((c = cmp_opt_str(a->reason, b->reason)) != 0)
		return c;
	return cmp_opt_str(a->confirmation, b->confirmation);
}

/* ----------------------------------------------------------------
 * Reducing events into the state
 * ----------------------------------------------------------------
 */
void
wl_fold_init(WlFoldState *st)
{
	memset(st, 0, sizeof(*st));
}

/* The entry of an actor, made (with cur = *first) when it has none yet. */
static WlActor *
actor_entry(WlFoldState *st, const char *name, const WlSay *first, bool *made)
{
	int			lo = 0,
				hi = st->nactors;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;
		int			c = strcmp(st->actors[mid].name, name);

		if (c == 0)
		{
			*made = false;
			return &st->actors[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}

	if (st->nactors == st->maxactors)
	{
		st->maxactors = st->maxactors ? st->maxactors * 2 : 4;
		st->actors = st->actors
			? repalloc(st->actors, sizeof(WlActor) * st->maxactors)
			: palloc(sizeof(WlActor) * st->maxactors);
	}
	memmove(&st->actors[lo + 1], &st->actors[lo],
			sizeof(WlActor) * (st->nactors - lo));
	st->nactors++;
	memset(&st->actors[lo], 0, sizeof(WlActor));
	st->actors[lo].name = name;
	st->actors[lo].cur = *first;
	*made = true;
	return &st->actors[lo];
}

static void
note_last(WlFoldState *st, TimestampTz at)
{
	if (!st->has_last || at > st->last)
	{
		st->has_last = true;
		st->last = at;
	}
}

/* Rules 1 and 4: one participation (or demoted outcome) of one actor. */
static void
add_say(WlFoldState *st, const WlTicketDef *def, const char *actor,
		const WlSay *say, bool unauthorized)
{
	bool		made;
	WlActor    *a = actor_entry(st, actor, say, &made);

	if (!made && say_cmp(def, say, &a->cur) > 0)
		a->cur = *say;
	if (unauthorized)
		a->unauthorized = true;
	if (st->closed && say->at <= st->close.at &&
		(!a->has_cut || say_cmp(def, say, &a->cut) > 0))
	{
		a->has_cut = true;
		a->cut = *say;
	}
	note_last(st, say->at);
}

/* Rule 4: one authorized outcome.  False when the history is needed. */
static bool
add_close(WlFoldState *st, const WlEvent *ev)
{
	WlClose		c;

	c.outcome = (WlOutcome) ev->value;
	c.at = ev->at;
	c.actor = ev->actor;
	c.watchdog = ev->watchdog;
	c.reason = ev->reason;
	c.confirmation = ev->watchdog ? ev->confirmation : NULL;

	if (!st->closed || close_cmp(&c, &st->close) > 0)
	{
		if (!st->closed || c.at != st->close.at)
		{
			/*
			 * The fold is cut at a new instant.  An actor whose current
			 * participation is at or before it was in that state there; for
			 * one that spoke after it, only the log can tell.
			 */
			for (int i = 0; i < st->nactors; i++)
				if (st->actors[i].cur.at > c.at)
					return false;
			for (int i = 0; i < st->nactors; i++)
			{
				st->actors[i].has_cut = true;
				st->actors[i].cut = st->actors[i].cur;
			}
		}
		st->closed = true;
		st->close = c;
	}
	note_last(st, ev->at);
	return true;
}

/*
 * Add one event to the state.  Returns false, leaving the state unusable,
 * when the event moves the instant a closed ticket is folded at past what
 * some actor said after it: the caller must then fold the whole log with
 * wl_fold_events().  Strings are referenced, not copied.
 */
bool
wl_fold_add(WlFoldState *st, const WlTicketDef *def, const WlEvent *ev)
{
	WlSay		say;

	switch (ev->kind)
	{
		case WL_KIND_ESCALATION:
			/* rule 7: feeds escalation_rung and nothing else */
			if (!st->has_escalation || ev->at > st->escalation_at ||
				(ev->at == st->escalation_at && ev->value > st->escalation_rung))
			{
				st->has_escalation = true;
				st->escalation_at = ev->at;
				st->escalation_rung = ev->value;
			}
			return true;

		case WL_KIND_OUTCOME:
			if (ev->watchdog || wl_is_authority(def, ev->actor))
				return add_close(st, ev);
			/* rule 3: demoted to the actor's own participation */
			say.value = ev->value == WL_OUTCOME_DONE ? WL_PART_DELIVERED
				: WL_PART_ABANDONED;
			say.at = ev->at;
			say.has_not_before = false;
			say.not_before = 0;
			say.reason = ev->reason;
			add_say(st, def, ev->actor, &say, true);
			return true;

		case WL_KIND_PARTICIPATION:
			say.value = (WlPart) ev->value;
			say.at = ev->at;
			say.has_not_before = ev->has_not_before;
			say.not_before = ev->not_before;
			say.reason = ev->reason;
			add_say(st, def, ev->actor, &say, false);
			return true;
	}
	elog(ERROR, "unrecognized ticket event kind: %d", (int) ev->kind);
	return false;
}

/*
 * Fold a whole log.  The events are sorted (in place) by a total order
 * first, so the result never depends on the order they were stored or
 * given in, and in that order wl_fold_add() never needs the history.
 */
void
wl_fold_events(WlFoldState *st, const WlTicketDef *def, WlEvent *events,
			   int nevents)
{
	wl_fold_init(st);
	if (nevents > 1)
		qsort(events, nevents, sizeof(WlEvent), event_cmp);
	for (int i = 0; i < nevents; i++)
	{
		if (!wl_fold_add(st, def, &events[i]))
			elog(ERROR, "ticket events out of order while folding");
	}
}

/* ----------------------------------------------------------------
 * Judging the state
 * ----------------------------------------------------------------
 */
static bool
reason_missing(const char *reason)
{
	return reason == NULL || reason[0] == '\0';
}

void
wl_fold_judge(const WlFoldState *st, const WlTicketDef *def, WlFold *f)
{
	int			nsaid = 0,
				nlive = 0,
				ndelivered = 0;
	WlPart		furthest = WL_PART_ACKNOWLEDGED;
	bool		any_without_deadline = false;
	TimestampTz earliest = DT_NOEND;

	memset(f, 0, sizeof(*f));

	/* escalation_rung: the latest escalation, if nothing was said since */
	if (st->has_escalation && (!st->has_last || st->escalation_at >= st->last))
		f->rung = st->escalation_rung;

	for (int i = 0; i < st->nactors; i++)
	{
		const WlActor *a = &st->actors[i];
		const WlSay *s;
		TimestampTz dl;

		if (a->unauthorized)
			f->unauthorized = lappend(f->unauthorized, (char *) a->name);

		/* rule 4: a closed ticket is folded as it was when it was closed */
		if (st->closed)
			s = a->has_cut ? &a->cut : NULL;
		else
			s = &a->cur;
		if (s == NULL)
			continue;
		nsaid++;

		if (s->value == WL_PART_ABANDONED)
		{
			f->abandoned = lappend(f->abandoned, (char *) a->name);
			f->abandoned = lappend(f->abandoned,
								   reason_missing(s->reason) ? WL_MISSING_REASON
								   : (char *) s->reason);
			continue;
		}

		nlive++;
		f->live = lappend(f->live, (char *) a->name);
		if (s->value > furthest)
			furthest = s->value;
		if (s->value == WL_PART_BLOCKED)
			f->blocked = lappend(f->blocked, (char *) a->name);
		if (s->value == WL_PART_DELIVERED)
		{
			ndelivered++;
			f->delivered = lappend(f->delivered, (char *) a->name);
		}
		else if (st->closed && strcmp(a->name, st->close.actor) != 0)
			f->interrupted = lappend(f->interrupted, (char *) a->name);

		if (!effective_deadline(def, s, &dl))
			any_without_deadline = true;
		else if (dl < earliest)
			earliest = dl;
	}

	if (st->closed)
	{
		/* rules 4 and 5; terminal: no deadline, never overdue */
		f->status = st->close.outcome == WL_OUTCOME_DONE ? WL_STATUS_DONE
			: WL_STATUS_ARCHIVED;
		f->closed_by = st->close.actor;
		f->closed_at = st->close.at;
		f->close_by_watchdog = st->close.watchdog;
		f->confirmation = st->close.confirmation;
		if (!reason_missing(st->close.reason))
			f->close_reason = st->close.reason;
		else if (st->close.outcome == WL_OUTCOME_ARCHIVED)
			f->close_reason = WL_MISSING_REASON;
		return;
	}

	/* rule 6 */
	f->live_ticket = true;
	if (nsaid == 0)
	{
		f->status = WL_STATUS_OPEN;
		f->has_deadline = def->has_open_deadline;
		f->deadline = def->open_deadline;
	}
	else if (nlive == 0)
		f->status = WL_STATUS_UNOWNED;
	else
	{
		f->status = (WlStatus) (WL_STATUS_ACKNOWLEDGED + (int) furthest);
		f->has_deadline = !any_without_deadline;
		f->deadline = earliest;
	}
	f->overdue_from = f->has_deadline ? f->deadline : DT_NOBEGIN;

	/* the watchdog: escalation once overdue, up the ladder */
	if (f->rung == 0)
	{
		f->has_escalate_at = true;
		f->escalate_at = f->overdue_from;
	}
	else if (f->rung <= def->nladder)
	{
		TimestampTz next = wl_time_add(st->escalation_at,
									   &def->ladder[f->rung - 1]);

		f->has_escalate_at = true;
		f->escalate_at = Max(next, f->overdue_from);
	}

	/* ... and implicit confirmation of an undisputed delivery */
	if (def->has_confirm_window && nlive > 0 && ndelivered == nlive)
	{
		f->has_confirm_at = true;
		f->confirm_at = wl_time_add(st->last, &def->confirm_window);
	}

	/* an instant past the end of time never comes */
	if (f->has_escalate_at && TIMESTAMP_IS_NOEND(f->escalate_at))
		f->has_escalate_at = false;
	if (f->has_confirm_at && TIMESTAMP_IS_NOEND(f->confirm_at))
		f->has_confirm_at = false;

	if (f->has_escalate_at || f->has_confirm_at)
	{
		f->has_next_check = true;
		if (!f->has_confirm_at)
			f->next_check = f->escalate_at;
		else if (!f->has_escalate_at)
			f->next_check = f->confirm_at;
		else
			f->next_check = Min(f->escalate_at, f->confirm_at);
	}
}

/* Rule 6: a live ticket is overdue once its deadline is at or before now. */
bool
wl_fold_overdue(const WlFold *f, TimestampTz now)
{
	return f->live_ticket && f->overdue_from <= now;
}

/* The watchdog: confirmation first, then escalation. */
WlWatchdogAction
wl_fold_watchdog_action(const WlFold *f, TimestampTz now)
{
	if (f->has_confirm_at && f->confirm_at <= now)
		return WL_WATCHDOG_CONFIRM;
	if (f->has_escalate_at && f->escalate_at <= now)
		return WL_WATCHDOG_ESCALATE;
	return WL_WATCHDOG_NOTHING;
}

/* ----------------------------------------------------------------
 * JSON
 * ----------------------------------------------------------------
 */
static void
append_json_list(StringInfo buf, List *names)
{
	ListCell   *lc;

	appendStringInfoChar(buf, '[');
	foreach(lc, names)
	{
		if (lc != list_head(names))
			appendStringInfoString(buf, ", ");
		escape_json(buf, (char *) lfirst(lc));
	}
	appendStringInfoChar(buf, ']');
}

/* JSON text in jsonb's own spelling, so equal values compare equal. */
static char *
normalize_json(const char *json)
{
	Datum		jb = DirectFunctionCall1(jsonb_in, CStringGetDatum(json));

	return DatumGetCString(DirectFunctionCall1(jsonb_out, jb));
}

/*
 * The confirmation the watchdog writes when it closes a ticket (rule 5):
 * who delivered, and the window in PostgreSQL's default interval style
 * whatever the session's IntervalStyle.
 */
char *
wl_implicit_confirmation(const WlFold *f, const WlTicketDef *def)
{
	StringInfoData buf;
	struct pg_itm itm;
	char		window[MAXDATELEN + 1];

	Assert(def->has_confirm_window);
	interval2itm(def->confirm_window, &itm);
	EncodeInterval(&itm, INTSTYLE_POSTGRES, window);

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"kind\": \"implicit\", \"delivered_by\": ");
	append_json_list(&buf, f->delivered);
	appendStringInfoString(&buf, ", \"window\": ");
	escape_json(&buf, window);
	appendStringInfoChar(&buf, '}');
	return normalize_json(buf.data);
}

/* ----------------------------------------------------------------
 * The state as stored on the ticket row
 *
 * A compact binary form in network byte order (pqformat), so it means the
 * same on every platform a dump is restored on.  Strings are stored with
 * their length, in the database encoding.
 * ----------------------------------------------------------------
 */
static void
put_str(StringInfo buf, const char *s)
{
	int			len = (int) strlen(s);

	pq_sendint32(buf, len);
	pq_sendbytes(buf, s, len);
}

static void
put_opt_str(StringInfo buf, const char *s)
{
	pq_sendbyte(buf, s != NULL);
	if (s != NULL)
		put_str(buf, s);
}

static void
put_say(StringInfo buf, const WlSay *s)
{
	pq_sendbyte(buf, (uint8) s->value);
	pq_sendint64(buf, s->at);
	pq_sendbyte(buf, s->has_not_before);
	if (s->has_not_before)
		pq_sendint64(buf, s->not_before);
	put_opt_str(buf, s->reason);
}

bytea *
wl_fold_serialize(const WlFoldState *st)
{
	StringInfoData buf;
	bytea	   *result;

	initStringInfo(&buf);
	pq_sendbyte(&buf, WL_FOLD_STATE_VERSION);
	pq_sendint32(&buf, st->nactors);
	for (int i = 0; i < st->nactors; i++)
	{
		const WlActor *a = &st->actors[i];

		put_str(&buf, a->name);
		pq_sendbyte(&buf, (a->unauthorized ? 1 : 0) | (a->has_cut ? 2 : 0));
		put_say(&buf, &a->cur);
		if (a->has_cut)
			put_say(&buf, &a->cut);
	}
	pq_sendbyte(&buf, st->closed);
	if (st->closed)
	{
		pq_sendbyte(&buf, (uint8) st->close.outcome);
		pq_sendint64(&buf, st->close.at);
		put_str(&buf, st->close.actor);
		pq_sendbyte(&buf, st->close.watchdog);
		put_opt_str(&buf, st->close.reason);
		put_opt_str(&buf, st->close.confirmation);
	}
	pq_sendbyte(&buf, st->has_last);
	if (st->has_last)
		pq_sendint64(&buf, st->last);
	pq_sendbyte(&buf, st->has_escalation);
	if (st->has_escalation)
	{
		pq_sendint64(&buf, st->escalation_at);
		pq_sendint32(&buf, st->escalation_rung);
	}

	result = (bytea *) palloc(VARHDRSZ + buf.len);
	SET_VARSIZE(result, VARHDRSZ + buf.len);
	memcpy(VARDATA(result), buf.data, buf.len);
	pfree(buf.data);
	return result;
}

static void
corrupt_state(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("invalid fold state stored for a ticket")));
}

static char *
get_str(StringInfo msg)
{
	int			len = (int) pq_getmsgint(msg, 4);
	char	   *s;

	if (len < 0 || len > msg->len - msg->cursor)
		corrupt_state();
	s = palloc(len + 1);
	pq_copymsgbytes(msg, s, len);
	s[len] = '\0';
	return s;
}

static char *
get_opt_str(StringInfo msg)
{
	return pq_getmsgbyte(msg) ? get_str(msg) : NULL;
}

static void
get_say(StringInfo msg, WlSay *s)
{
	int			value = pq_getmsgbyte(msg);

	if (value < 0 || value > WL_PART_ABANDONED)
		corrupt_state();
	s->value = (WlPart) value;
	s->at = pq_getmsgint64(msg);
	s->has_not_before = pq_getmsgbyte(msg) != 0;
	s->not_before = s->has_not_before ? pq_getmsgint64(msg) : 0;
	s->reason = get_opt_str(msg);
}

/* The state stored in a fold_state value; NULL data means no events. */
void
wl_fold_deserialize(WlFoldState *st, bytea *data)
{
	StringInfoData msg;
	int			n;

	wl_fold_init(st);
	if (data == NULL)
		return;

	msg.data = VARDATA_ANY(data);
	msg.len = VARSIZE_ANY_EXHDR(data);
	msg.maxlen = msg.len;
	msg.cursor = 0;

	if (msg.len < 1 || pq_getmsgbyte(&msg) != WL_FOLD_STATE_VERSION)
		corrupt_state();
	n = (int) pq_getmsgint(&msg, 4);
	if (n < 0 || n > msg.len)
		corrupt_state();
	st->nactors = st->maxactors = n;
	st->actors = n > 0 ? palloc0(sizeof(WlActor) * n) : NULL;
	for (int i = 0; i < n; i++)
	{
		WlActor    *a = &st->actors[i];
		int			flags;

		a->name = get_str(&msg);
		flags = pq_getmsgbyte(&msg);
		a->unauthorized = (flags & 1) != 0;
		a->has_cut = (flags & 2) != 0;
		get_say(&msg, &a->cur);
		if (a->has_cut)
			get_say(&msg, &a->cut);
		if (i > 0 && strcmp(st->actors[i - 1].name, a->name) >= 0)
			corrupt_state();
	}
	st->closed = pq_getmsgbyte(&msg) != 0;
	if (st->closed)
	{
		int			outcome = pq_getmsgbyte(&msg);

		if (outcome != WL_OUTCOME_DONE && outcome != WL_OUTCOME_ARCHIVED)
			corrupt_state();
		st->close.outcome = (WlOutcome) outcome;
		st->close.at = pq_getmsgint64(&msg);
		st->close.actor = get_str(&msg);
		st->close.watchdog = pq_getmsgbyte(&msg) != 0;
		st->close.reason = get_opt_str(&msg);
		st->close.confirmation = get_opt_str(&msg);
	}
	st->has_last = pq_getmsgbyte(&msg) != 0;
	if (st->has_last)
		st->last = pq_getmsgint64(&msg);
	st->has_escalation = pq_getmsgbyte(&msg) != 0;
	if (st->has_escalation)
	{
		st->escalation_at = pq_getmsgint64(&msg);
		st->escalation_rung = (int) pq_getmsgint(&msg, 4);
	}
	if (msg.cursor != msg.len)
		corrupt_state();
}

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

	/* actor -> reason, from the pairs wl_fold_judge() listed */
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int i = 0; i + 1 < list_length(f->abandoned); i += 2)
	{
		if (i > 0)
			appendStringInfoString(&buf, ", ");
		escape_json(&buf, (char *) list_nth(f->abandoned, i));
		appendStringInfoString(&buf, ": ");
		escape_json(&buf, (char *) list_nth(f->abandoned, i + 1));
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

/*-------------------------------------------------------------------------
 *
 * fold.c
 *	  The ticket fold (doc/reference.md, section 5, "The fold"): the rules themselves,
 *	  in plain C, that every reader of a ticket's state goes through.  The
 *	  state's stored form is in fold_store.c, its SQL face (the ticket_fold
 *	  value and the aggregate worklist.fold) in fold_sql.c.
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
 *	  rule 5  wl_fold_judge(), wl_fold_values() (fold_sql.c): explicit or
 *			  implicit confirmation; the implicit one is written by the
 *			  watchdog into its event (wl_implicit_confirmation()) and read
 *			  back from there.
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

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/json.h"

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
			WlAbandoned *ab = palloc(sizeof(WlAbandoned));

			ab->actor = a->name;
			ab->reason = reason_missing(s->reason) ? WL_MISSING_REASON : s->reason;
			f->abandoned = lappend(f->abandoned, ab);
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

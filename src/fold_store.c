/*-------------------------------------------------------------------------
 *
 * fold_store.c
 *	  The ticket fold state as stored on the ticket row (the fold_state
 *	  bytea of worklist.ticket): wl_fold_serialize() writes it with every
 *	  event appended, wl_fold_deserialize() reads it back.
 *
 * A compact binary form in network byte order (pqformat), so it means the
 * same on every platform a dump is restored on.  Strings are stored with
 * their length, in the database encoding.  Databases keep the states they
 * stored across upgrades, so the layout never changes without a new
 * version byte:
 *
 *	  byte	  version (1)
 *	  int32	  number of actors, then for each, in ascending name order:
 *				str name, byte flags (1 unauthorized, 2 has a cut),
 *				say current, and say cut when flag 2 is set
 *	  bool	  closed, then when set: byte outcome, int64 at, str actor,
 *				bool watchdog, opt-str reason, opt-str confirmation
 *	  bool	  has last, then when set: int64 last
 *	  bool	  has escalation, then when set: int64 at, int32 rung
 *
 *	  say	  byte participation, int64 at, bool has not_before,
 *				[int64 not_before], opt-str reason
 *	  str	  int32 length, then that many bytes (no terminator)
 *	  opt-str bool present, then when set: str
 *	  bool	  a byte, 0 or 1; every int64 instant a timestamptz
 *
 *-------------------------------------------------------------------------
 */
#include "ticket.h"

#include "common/jsonapi.h"
#include "libpq/pqformat.h"
#include "mb/pg_wchar.h"
#include "utils/memutils.h"

/* Version byte of the serialized fold state. */
#define WL_FOLD_STATE_VERSION 1

/* Flags byte of an actor. */
#define ACTOR_UNAUTHORIZED	1
#define ACTOR_HAS_CUT		2

/* ----------------------------------------------------------------
 * Writing
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
		pq_sendbyte(&buf, (a->unauthorized ? ACTOR_UNAUTHORIZED : 0) |
					(a->has_cut ? ACTOR_HAS_CUT : 0));
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

/* ----------------------------------------------------------------
 * Reading
 *
 * The stored value is read as untrusted input: a row planted by hand, a
 * damaged page or a restore from elsewhere must end in a clean error,
 * never in a crash, an assertion, an allocation sized by garbage or a read
 * past its end.  So every length and count is checked against the bytes
 * that are left before anything is allocated for it, every enumerated
 * value against its range, and every invariant the writer keeps and the
 * fold relies on (actors in strictly ascending name order, a cut only in
 * a closed state, the rung within the ladder, ...) is checked as it is
 * read.  The layout itself is the writer's, unchanged.
 * ----------------------------------------------------------------
 */

/* The fewest bytes a say and an actor take: no not_before, no reason. */
#define SAY_MIN_BYTES	(1 + 8 + 1 + 1)
#define ACTOR_MIN_BYTES (4 + 1 + SAY_MIN_BYTES)

typedef struct StateReader
{
	const char *data;
	int			len;
	int			cursor;
	const WlTicketDef *def;		/* the ticket the state is stored on */
} StateReader;

static void corrupt(const StateReader *r, int at, const char *fmt,...)
			pg_attribute_printf(3, 4) pg_attribute_noreturn();

/* Refuse the state; fmt says what is wrong with the field at byte `at`. */
static void
corrupt(const StateReader *r, int at, const char *fmt,...)
{
	char		what[256];
	va_list		args;

	va_start(args, fmt);
	vsnprintf(what, sizeof(what), fmt, args);
	va_end(args);
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("invalid fold state stored for ticket \"%s\"", r->def->id),
			 errdetail_internal("At byte %d of %d: %s.", at, r->len, what)));
}

static int
remaining(const StateReader *r)
{
	return r->len - r->cursor;
}

/* The next n bytes, which must be there. */
static const char *
take(StateReader *r, int n, const char *what)
{
	const char *p;

	if (n > remaining(r))
		corrupt(r, r->cursor, "the state ends inside %s", what);
	p = r->data + r->cursor;
	r->cursor += n;
	return p;
}

static uint8
get_byte(StateReader *r, const char *what)
{
	return (uint8) *take(r, 1, what);
}

/* A value of an enum stored in a byte: 0 to last. */
static int
get_enum(StateReader *r, const char *what, int last)
{
	int			at = r->cursor;
	uint8		b = get_byte(r, what);

	if (b > last)
		corrupt(r, at, "%s %d is out of range", what, b);
	return b;
}

/* A flag: the writer stores a C bool, 0 or 1. */
static bool
get_bool(StateReader *r, const char *what)
{
	int			at = r->cursor;
	uint8		b = get_byte(r, what);

	if (b > 1)
		corrupt(r, at, "%s is %d, not 0 or 1", what, b);
	return b == 1;
}

static uint32
get_uint32(StateReader *r, const char *what)
{
	uint32		n;

	memcpy(&n, take(r, sizeof(n), what), sizeof(n));
	return pg_ntoh32(n);
}

/*
 * An instant.  Every `at` the fold keeps is finite (the log's CHECK
 * constraint); a not_before is at least a timestamptz value.
 */
static TimestampTz
get_time(StateReader *r, const char *what, bool finite)
{
	int			at = r->cursor;
	uint64		n;
	TimestampTz t;

	memcpy(&n, take(r, sizeof(n), what), sizeof(n));
	t = (TimestampTz) pg_ntoh64(n);
	if (finite ? !IS_VALID_TIMESTAMP(t)
		: !(IS_VALID_TIMESTAMP(t) || TIMESTAMP_NOT_FINITE(t)))
		corrupt(r, at, "%s is " INT64_FORMAT ", not a%s timestamp",
				what, (int64) t, finite ? " finite" : "");
	return t;
}

/* A string: its length, then its bytes, text in the database encoding. */
static char *
get_str(StateReader *r, const char *what)
{
	int			at = r->cursor;
	uint32		len = get_uint32(r, what);
	const char *p;
	char	   *s;

	if (len > (uint32) remaining(r))
		corrupt(r, at, "%s is %u bytes long, more than the %d bytes left",
				what, len, remaining(r));
	p = take(r, (int) len, what);
	if (memchr(p, '\0', len) != NULL)
		corrupt(r, at, "%s contains a zero byte", what);
	if (!pg_verifymbstr(p, (int) len, true))
		corrupt(r, at, "%s is not valid text in the database encoding", what);
	s = palloc(len + 1);
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

/* An optional string: a flag, then the string when the flag is set. */
static char *
get_opt_str(StateReader *r, const char *what)
{
	int			at = r->cursor;
	uint8		present = get_byte(r, what);

	if (present > 1)
		corrupt(r, at, "the presence flag of %s is %d, not 0 or 1", what, present);
	return present == 1 ? get_str(r, what) : NULL;
}

static void
get_say(StateReader *r, WlSay *s)
{
	s->value = (WlPart) get_enum(r, "participation", WL_PART_ABANDONED);
	s->at = get_time(r, "the instant of a participation", true);
	s->has_not_before = get_bool(r, "the flag of a not_before");
	s->not_before = s->has_not_before ? get_time(r, "a not_before", false) : 0;
	s->reason = get_opt_str(r, "the reason of a participation");
}

static void
get_actors(StateReader *r, WlFoldState *st)
{
	int			at = r->cursor;
	uint32		n = get_uint32(r, "the number of actors");

	if (n > (uint32) (remaining(r) / ACTOR_MIN_BYTES))
		corrupt(r, at, "%u actors cannot fit in the %d bytes left",
				n, remaining(r));
	/* the writer's array of actors never outgrew one allocation */
	if (n > MaxAllocSize / sizeof(WlActor))
		corrupt(r, at, "%u actors are more than a state can hold", n);
	st->nactors = st->maxactors = (int) n;
	st->actors = n > 0 ? palloc0(sizeof(WlActor) * n) : NULL;
	for (int i = 0; i < st->nactors; i++)
	{
		WlActor    *a = &st->actors[i];
		uint8		flags;

		at = r->cursor;
		a->name = get_str(r, "the name of an actor");
		if (i > 0 && strcmp(st->actors[i - 1].name, a->name) >= 0)
			corrupt(r, at, "the name of actor %d is not above that of actor %d",
					i + 1, i);
		at = r->cursor;
		flags = get_byte(r, "the flags of an actor");
		if ((flags & ~(ACTOR_UNAUTHORIZED | ACTOR_HAS_CUT)) != 0)
			corrupt(r, at, "the flags of actor %d are %d", i + 1, flags);
		a->unauthorized = (flags & ACTOR_UNAUTHORIZED) != 0;
		a->has_cut = (flags & ACTOR_HAS_CUT) != 0;
		get_say(r, &a->cur);
		if (a->has_cut)
			get_say(r, &a->cut);
	}
}

static void
get_close(StateReader *r, WlClose *c)
{
	int			at;

	c->outcome = (WlOutcome) get_enum(r, "outcome", WL_OUTCOME_ARCHIVED);
	c->at = get_time(r, "the instant of the close", true);
	at = r->cursor;
	c->actor = get_str(r, "the actor of the close");
	c->watchdog = get_bool(r, "the watchdog flag of the close");
	/* the log's CHECK constraints tie the watchdog to its name */
	if (c->watchdog != (strcmp(c->actor, WL_WATCHDOG_ACTOR) == 0))
		corrupt(r, at, c->watchdog
				? "the close is marked as the watchdog's but names another actor"
				: "the close names the watchdog but is not marked as the watchdog's");
	c->reason = get_opt_str(r, "the reason of the close");
	at = r->cursor;
	c->confirmation = get_opt_str(r, "the confirmation of the close");
	if (c->confirmation != NULL)
	{
		JsonLexContext *lex;

		if (!c->watchdog)
			corrupt(r, at, "a close not by the watchdog has a confirmation");
		lex = makeJsonLexContextCstringLen((char *) c->confirmation,
										   strlen(c->confirmation),
										   GetDatabaseEncoding(), false);
		if (pg_parse_json(lex, &nullSemAction) != JSON_SUCCESS)
			corrupt(r, at, "the confirmation of the close is not JSON");
	}
}

/*
 * The state stored in the fold_state value of ticket def, whose log holds
 * nevents events; data is NULL exactly when there are none.  Raises
 * ERRCODE_DATA_CORRUPTED, naming the ticket, when the value is not a state
 * the writer could have written.
 */
void
wl_fold_deserialize(WlFoldState *st, const WlTicketDef *def, bytea *data,
					int64 nevents)
{
	StateReader r;
	int			at;

	wl_fold_init(st);
	if (data == NULL)
	{
		if (nevents != 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid fold state stored for ticket \"%s\"", def->id),
					 errdetail_internal("The ticket has " INT64_FORMAT " events and no fold state.",
										nevents)));
		return;
	}

	r.data = VARDATA_ANY(data);
	r.len = VARSIZE_ANY_EXHDR(data);
	r.cursor = 0;
	r.def = def;

	if (nevents == 0)
		corrupt(&r, 0, "a state is stored for a ticket without events");

	at = r.cursor;
	if (get_byte(&r, "the format version") != WL_FOLD_STATE_VERSION)
		corrupt(&r, at, "format version %d is not %d",
				(uint8) r.data[0], WL_FOLD_STATE_VERSION);

	get_actors(&r, st);

	at = r.cursor;
	st->closed = get_bool(&r, "the closed flag");
	if (st->closed)
		get_close(&r, &st->close);
	else
	{
		for (int i = 0; i < st->nactors; i++)
			if (st->actors[i].has_cut)
				corrupt(&r, at, "actor %d has a cut in a ticket never closed",
						i + 1);
	}

	/* every participation and close moves `last`, nothing else does */
	at = r.cursor;
	st->has_last = get_bool(&r, "the flag of the latest instant");
	if (st->has_last != (st->nactors > 0 || st->closed))
		corrupt(&r, at, "the latest instant is %s with %d actors and %s close",
				st->has_last ? "set" : "unset", st->nactors,
				st->closed ? "a" : "no");
	if (st->has_last)
		st->last = get_time(&r, "the latest instant", true);

	st->has_escalation = get_bool(&r, "the escalation flag");
	if (st->has_escalation)
	{
		int64		rung;

		st->escalation_at = get_time(&r, "the instant of the escalation", true);

		/*
		 * The watchdog climbs one rung past the latest escalation, and only
		 * while that one is within the ladder: every rung it ever wrote is
		 * between 1 and one past the ladder's end.  wl_fold_judge() indexes
		 * the ladder with it.
		 */
		at = r.cursor;
		rung = (int32) get_uint32(&r, "the escalation rung");
		if (rung < 1 || rung > (int64) def->nladder + 1)
			corrupt(&r, at, "escalation rung " INT64_FORMAT " is not between 1 and %d",
					rung, def->nladder + 1);
		st->escalation_rung = (int) rung;
	}

	if (remaining(&r) != 0)
		corrupt(&r, r.cursor, "bytes left over after the end of the state: %d",
				remaining(&r));

	/* every event leaves a trace: an actor, the close or the escalation */
	if (st->nactors == 0 && !st->closed && !st->has_escalation)
		corrupt(&r, 0, "the state holds no event");
}

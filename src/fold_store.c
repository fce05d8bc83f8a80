/*-------------------------------------------------------------------------
 *
 * fold_store.c
 *	  The ticket fold state as stored on the ticket row (the fold_state
 *	  bytea of worklist.ticket): wl_fold_serialize() writes it with every
 *	  event appended, wl_fold_deserialize() reads it back.
 *
 * A compact binary form in network byte order (pqformat), so it means the
 * same on every platform a dump is restored on.  Strings are stored with
 * their length, in the database encoding.
 *
 *-------------------------------------------------------------------------
 */
#include "ticket.h"

#include "libpq/pqformat.h"

/* Version byte of the serialized fold state. */
#define WL_FOLD_STATE_VERSION 1

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

/*-------------------------------------------------------------------------
 *
 * trust.c
 *	  What a caller bound as a member may say: it acts only as itself,
 *	  only with roles it has, and only at the present instant.
 *
 * A member binding is for a person or agent connected with its own login.
 * The database, not the caller, then decides who is acting: every
 * argument that names the acting party must be current_user, every
 * element of a roles argument must name a role current_user is a member
 * of, and the clock of a verb that writes (a "now" or an "at" stamped on
 * what it changes) must be within worklist.max_clock_skew of the
 * transaction's now().  Service and admin bindings (an application server
 * that authenticates its own users, a tenant's operator) are trusted with
 * all three.
 *
 * Two rules hold for every verb that writes, whatever its arguments:
 *
 *	 a group never writes under a member binding.  A tenant is usually
 *	 bound to a group role (finance) whose members log in as themselves
 *	 (alice, bob); were alice to SET ROLE finance and claim as "finance",
 *	 every member would become interchangeable and a task that bars alice
 *	 would be decided by her.  So a role that any other role is a member
 *	 of -- on PostgreSQL 15 any membership counts; on later releases one
 *	 that grants INHERIT or SET -- is refused every write (reads work);
 *
 *	 a member's writes happen now.  Clockless verbs stamp what they change
 *	 with the transaction's now(), so a transaction left open would let a
 *	 member write in the past: once the statement started more than
 *	 worklist.max_clock_skew after its transaction, or the verb is called
 *	 more than that (and more than a second) after it, every write of a
 *	 member is refused.
 *
 * And a member passes work only to somebody the database knows to be
 * eligible: the receiver of a hand-over is an existing role that is not a
 * group, and a member of every role it is to act with.
 *
 * Each check runs after the tenant checks and before the verb validates
 * its arguments.  An argument that is NULL or malformed is left to that
 * validation, which refuses it with 22023: a trust violation (42501) is
 * only ever reported for a well-formed value.
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

#include "access/detoast.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "catalog/pg_auth_members.h"
#include "utils/acl.h"
#include "utils/catcache.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/guc.h"

/* worklist.max_clock_skew: as set, and in microseconds (see check_clock_skew). */
static char *max_clock_skew_setting = NULL;
static int64 max_clock_skew_us = 5 * USECS_PER_SEC;

/*
 * Parse an interval the way interval input does, without raising: the
 * setting's check hook must report a bad value, not throw.
 */
static bool
parse_interval(const char *str, Interval *result)
{
	char		workbuf[256];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	int			dterr;
	struct pg_itm_in itm;
	char	   *copy;

	dterr = ParseDateTime(str, workbuf, sizeof(workbuf), field, ftype,
						  MAXDATEFIELDS, &nf);
	if (dterr == 0)
		dterr = DecodeInterval(field, ftype, nf, INTERVAL_FULL_RANGE,
							   &dtype, &itm);
	if (dterr == DTERR_BAD_FORMAT)
	{
		copy = pstrdup(str);
		dterr = DecodeISO8601Interval(copy, &dtype, &itm);
		pfree(copy);
	}
	if (dterr != 0 || dtype != DTK_DELTA)
		return false;
	return itmin2interval(&itm, result) == 0;
}

/*
 * Check hook of worklist.max_clock_skew: an interval, not negative, and
 * converted to microseconds as interval comparison does (a month is 30
 * days, a day 24 hours).
 */
static bool
check_clock_skew(char **newval, void **extra, GucSource source)
{
	Interval	span;
	int128		usec;
	int64	   *result;

	if (!parse_interval(*newval, &span))
	{
		GUC_check_errdetail("\"%s\" is not an interval.", *newval);
		return false;
	}
	usec = wl_interval_usec(&span);
	if (usec < 0 || usec > PG_INT64_MAX)
	{
		GUC_check_errdetail("The skew must be a non-negative interval.");
		return false;
	}
	/* GUC frees a check hook's extra with free() */
	result = malloc(sizeof(int64));
	if (result == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		return false;
	}
	*result = (int64) usec;
	*extra = result;
	return true;
}

static void verb_done(void);

static void
assign_clock_skew(const char *newval, void *extra)
{
	max_clock_skew_us = *(int64 *) extra;
}

void
wl_trust_init(void)
{
	wl_spi_verb_done_hook = verb_done;
	DefineCustomStringVariable("worklist.max_clock_skew",
							   "How far from now() a member's write verbs may set their clock.",
							   "An interval; the bound is inclusive.",
							   &max_clock_skew_setting,
							   "5 seconds",
							   PGC_SUSET,
							   0,
							   check_clock_skew, assign_clock_skew, NULL);
}

static void
refuse(const char *argname, const char *detail_fmt, const char *value)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("argument \"%s\" is not allowed for role \"%s\"", argname,
					GetUserNameFromId(GetUserId(), false)),
			 errdetail_internal(detail_fmt, value),
			 errhint("A member binding acts only as its own role, with roles it has, at the present time.")));
}

static void
trust_actor(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	char	   *actor;
	char	   *me;

	if (wl_caller_binding != WL_BINDING_MEMBER || PG_ARGISNULL(argno) ||
		!wl_ident_valid(PG_GETARG_DATUM(argno)))
		return;
	actor = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	me = GetUserNameFromId(GetUserId(), false);
	if (strcmp(actor, me) != 0)
		refuse(argname, "It names \"%s\"; a member acts only as itself.", actor);
}

/*
 * The elements of text[] argument argno, or false when it is NULL or
 * malformed (left to argument validation).
 */
static bool
role_names(FunctionCallInfo fcinfo, int argno, Datum **elems, int *n)
{
	ArrayType  *arr;
	bool	   *nulls;

	if (PG_ARGISNULL(argno))
		return false;
	arr = PG_GETARG_ARRAYTYPE_P(argno);
	/* malformed or oversized: an argument error, reported later */
	if (ARR_NDIM(arr) > 1 || ARR_ELEMTYPE(arr) != TEXTOID ||
		ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr)) > WL_ARRAY_MAX)
		return false;
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, elems, &nulls, n);
	for (int i = 0; i < *n; i++)
		if (nulls[i] || !wl_ident_valid((*elems)[i]))
			return false;
	return true;
}

static void
trust_roles(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	Datum	   *elems;
	int			n;
	Oid			me = GetUserId();

	if (wl_caller_binding != WL_BINDING_MEMBER ||
		!role_names(fcinfo, argno, &elems, &n))
		return;
	for (int i = 0; i < n; i++)
	{
		char	   *name = TextDatumGetCString(elems[i]);
		Oid			role = get_role_oid(name, true);

		if (!OidIsValid(role) || !is_member_of_role(me, role))
			refuse(argname, "It names \"%s\", a role the caller is not a member of.", name);
	}
}

static void
trust_clock(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	TimestampTz at;
	TimestampTz now = GetCurrentTransactionStartTimestamp();
	int128		skew;

	if (wl_caller_binding != WL_BINDING_MEMBER || PG_ARGISNULL(argno))
		return;
	at = PG_GETARG_TIMESTAMPTZ(argno);
	if (TIMESTAMP_NOT_FINITE(at))
		return;
	skew = (int128) at - (int128) now;
	if (skew < 0)
		skew = -skew;
	if (skew > max_clock_skew_us)
	{
		Interval	off;
		char	   *away;

		memset(&off, 0, sizeof(off));
		off.time = (int64) Min(skew, (int128) PG_INT64_MAX);
		away = DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(&off)));
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("argument \"%s\" is not allowed for role \"%s\"", argname,
						GetUserNameFromId(GetUserId(), false)),
				 errdetail("It is %s away from the transaction's now(); worklist.max_clock_skew is %s.",
						   away, GetConfigOption("worklist.max_clock_skew", false, false)),
				 errhint("A member binding acts only as its own role, with roles it has, at the present time.")));
	}
}

/* The name of verb function fn, for messages (only on the way to an error). */
static char *
fn_name(Oid fn)
{
	char	   *name = OidIsValid(fn) ? get_func_name(fn) : NULL;

	return name ? name : pstrdup("this verb");
}

/* The verb being called, for messages (only on the way to an error). */
static char *
verb_name(FunctionCallInfo fcinfo)
{
	return fn_name(fcinfo->flinfo ? fcinfo->flinfo->fn_oid : InvalidOid);
}

/*
 * A member of role, if it has one (palloc'd name), else NULL: what makes
 * role a group.
 */
static char *
some_member(Oid role)
{
	CatCList   *members = SearchSysCacheList1(AUTHMEMROLEMEM, ObjectIdGetDatum(role));
	char	   *found = NULL;

	for (int i = 0; i < members->n_members && found == NULL; i++)
	{
		Form_pg_auth_members m =
			(Form_pg_auth_members) GETSTRUCT(&members->members[i]->tuple);

#if PG_VERSION_NUM >= 160000
		if (!m->inherit_option && !m->set_option)
			continue;
#endif
		found = GetUserNameFromId(m->member, true);
	}
	ReleaseSysCacheList(members);
	return found;
}

/*
 * The member's write verb running (its function, named only in an error),
 * and the statement it runs in: set when it is judged in time at its
 * start, and judged again when its statements are done (verb_done).  A
 * verb that ends without statements leaves them set, but its statement's
 * start is then another statement's.
 */
static bool member_writing = false;
static TimestampTz member_write_statement;
static Oid	member_write_fn = InvalidOid;

/* Refuse a member's write verb fn that comes late after its transaction's now(). */
static void
refuse_late(Oid fn, int128 late, const char *what)
{
	Interval	off;

	memset(&off, 0, sizeof(off));
	off.time = (int64) Min(late, (int128) PG_INT64_MAX);
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for %s in tenant \"%s\"", fn_name(fn),
					wl_tenant_setting),
			 errdetail("%s %s after its transaction's now(); worklist.max_clock_skew is %s.",
					   what,
					   DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(&off))),
					   GetConfigOption("worklist.max_clock_skew", false, false)),
			 errhint("A member writes at the present time: write in a transaction of its own.")));
}

/*
 * Refuse the member's write verb running when it is called (begun) or
 * done more than max(skew, 1 second) after its transaction began.
 */
static void
late_write(bool begun)
{
	int128		late = (int128) GetCurrentTimestamp() -
		(int128) GetCurrentTransactionStartTimestamp();

	if (late > Max(max_clock_skew_us, USECS_PER_SEC))
		refuse_late(member_write_fn, late, begun ? "The write comes" : "The write is done");
}

static void
trust_write(FunctionCallInfo fcinfo)
{
	Oid			me = GetUserId();
	char	   *member;
	int128		late;

	if (wl_caller_binding != WL_BINDING_MEMBER)
		return;
	member = some_member(me);
	if (member != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for %s in tenant \"%s\"", verb_name(fcinfo),
						wl_tenant_setting),
				 errdetail("Role \"%s\" is a group (role \"%s\" is a member of it); under a member binding a group never writes.",
						   GetUserNameFromId(me, false), member),
				 errhint("Its members act as themselves: connect, or SET ROLE, as the member's own role.")));
	/*
	 * Late is judged when the statement began (the contract's rule), and,
	 * so that neither a statement that waits before it writes nor a verb
	 * that waits on a lock can backdate the write, when the verb is called
	 * and when it is done (late_write: at least a second, so that a skew
	 * of 0 still admits a write at the start of its transaction).
	 */
	late = (int128) GetCurrentStatementStartTimestamp() -
		(int128) GetCurrentTransactionStartTimestamp();
	member_write_fn = fcinfo->flinfo ? fcinfo->flinfo->fn_oid : InvalidOid;
	if (late > max_clock_skew_us)
		refuse_late(member_write_fn, late, "The statement started");
	member_write_statement = GetCurrentStatementStartTimestamp();
	member_writing = true;
	late_write(true);
}

/*
 * A member's write verb, judged in time when it began, is judged again
 * when its statements are done: a verb that waited on a row lock past
 * max(worklist.max_clock_skew, 1 second) after its transaction began is
 * refused (42501), as its stamps would be that old.
 */
static void
verb_done(void)
{
	if (!member_writing)
		return;
	member_writing = false;
	if (member_write_statement == GetCurrentStatementStartTimestamp())
		late_write(false);
}

/*
 * Whom a member passes work to (argument argno) must be somebody the
 * database knows to be eligible: an existing role that is not a group
 * (a group never acts, see above), and a member of every role of the text[]
 * argument roles_argno it is to act with.
 */
static void
trust_receiver(FunctionCallInfo fcinfo, const WlTrustArg *c)
{
	char	   *name;
	char	   *member;
	Oid			receiver;
	Datum	   *elems;
	int			n;

	if (wl_caller_binding != WL_BINDING_MEMBER || PG_ARGISNULL(c->argno) ||
		!wl_ident_valid(PG_GETARG_DATUM(c->argno)))
		return;
	name = text_to_cstring(PG_GETARG_TEXT_PP(c->argno));
	receiver = get_role_oid(name, true);
	if (!OidIsValid(receiver))
		refuse(c->argname, "It names \"%s\", which is not a role of the database.", name);
	member = some_member(receiver);
	if (member != NULL)
		refuse(c->argname, "It names \"%s\", a group; work is passed to a role that acts as itself.", name);
	if (!role_names(fcinfo, c->roles_argno, &elems, &n))
		return;
	for (int i = 0; i < n; i++)
	{
		char	   *role_name = TextDatumGetCString(elems[i]);
		Oid			role = get_role_oid(role_name, true);

		if (!OidIsValid(role) || !is_member_of_role(receiver, role))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("argument \"%s\" is not allowed for role \"%s\"", c->roles_argname,
							GetUserNameFromId(GetUserId(), false)),
					 errdetail("It names \"%s\", a role \"%s\" is not a member of.", role_name, name),
					 errhint("A member binding passes work only to a role the database knows to be eligible.")));
	}
}

text *
wl_tenant_enter_as(FunctionCallInfo fcinfo, const WlTrustArg *checks)
{
	text	   *tenant = wl_tenant_enter();

	for (const WlTrustArg *c = checks; c->kind != WL_TRUST_END; c++)
	{
		switch (c->kind)
		{
			case WL_TRUST_WRITE:
				trust_write(fcinfo);
				break;
			case WL_TRUST_ACTOR:
				trust_actor(fcinfo, c->argno, c->argname);
				break;
			case WL_TRUST_ROLES:
				trust_roles(fcinfo, c->argno, c->argname);
				break;
			case WL_TRUST_CLOCK:
				trust_clock(fcinfo, c->argno, c->argname);
				break;
			case WL_TRUST_RECEIVER:
				trust_receiver(fcinfo, c);
				break;
			case WL_TRUST_END:
				break;
		}
	}
	return tenant;
}

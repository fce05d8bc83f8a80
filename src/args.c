/*-------------------------------------------------------------------------
 *
 * args.c
 *	  Validation of the arguments every verb takes from SQL, and the
 *	  arithmetic on instants and intervals that the checks and the verbs
 *	  share.
 *
 * The rule for identifiers (task ids, actors, roles, case, run,
 * project and session ids): text, never NULL, not empty, at most 256
 * characters; anything else is 22023 with a message naming the argument.
 * Oversized values are judged from their header, before they are
 * detoasted, so a megabyte-long argument costs nothing to refuse.
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "common/int.h"
#include "utils/datetime.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"

/* worklist.max_document_size */
static int	max_document_size = 1024 * 1024;

void
wl_args_init(void)
{
	DefineCustomIntVariable("worklist.max_document_size",
							"Largest jsonb document a verb stores (payload, decision, body).",
							NULL,
							&max_document_size,
							1024 * 1024, 1, INT_MAX / 2,
							PGC_SUSET,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);
}

/* Is a string of len bytes longer than WL_IDENT_MAX characters? */
static bool
ident_too_long(const char *s, Size len)
{
	if (len <= WL_IDENT_MAX)
		return false;
	if (len > (Size) WL_IDENT_MAX * pg_database_encoding_max_length())
		return true;
	return pg_mbstrlen_with_len(s, (int) len) > WL_IDENT_MAX;
}

/* Refuse an identifier whose raw (undetoasted) size is already too big. */
static void
check_raw_size(Datum d, const char *argname)
{
	Size		raw = toast_raw_datum_size(d) - VARHDRSZ;

	if (raw == 0)
		wl_error_bad_arg(argname, "must not be empty");
	if (raw > (Size) WL_IDENT_MAX * pg_database_encoding_max_length())
		wl_error_bad_arg(argname, "must be at most 256 characters");
}

bool
wl_ident_valid(Datum d)
{
	Size		raw = toast_raw_datum_size(d) - VARHDRSZ;
	text	   *t;

	if (raw == 0 || raw > (Size) WL_IDENT_MAX * pg_database_encoding_max_length())
		return false;
	t = DatumGetTextPP(d);
	return !ident_too_long(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
}

/* Validate an identifier that did not come from an argument slot. */
static void
check_ident(text *t, const char *argname)
{
	Size		len;

	if (t == NULL)
		wl_error_bad_arg(argname, "must not be null");
	len = VARSIZE_ANY_EXHDR(t);
	if (len == 0)
		wl_error_bad_arg(argname, "must not be empty");
	if (ident_too_long(VARDATA_ANY(t), len))
		wl_error_bad_arg(argname, "must be at most 256 characters");
}

text *
wl_arg_ident(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	text	   *t;

	if (PG_ARGISNULL(argno))
		wl_error_bad_arg(argname, "must not be null");
	check_raw_size(PG_GETARG_DATUM(argno), argname);
	t = PG_GETARG_TEXT_PP(argno);
	check_ident(t, argname);
	return t;
}

text *
wl_arg_ident_opt(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	if (PG_ARGISNULL(argno))
		return NULL;
	return wl_arg_ident(fcinfo, argno, argname);
}

ArrayType *
wl_arg_idents(FunctionCallInfo fcinfo, int argno, const char *argname,
			  bool allow_empty)
{
	Datum	   *elems;

	(void) wl_arg_ident_elements(fcinfo, argno, argname, allow_empty, &elems);
	pfree(elems);
	return PG_GETARG_ARRAYTYPE_P(argno);
}

int
wl_arg_ident_elements(FunctionCallInfo fcinfo, int argno, const char *argname,
					  bool allow_empty, Datum **elems)
{
	int			n = wl_arg_elements(fcinfo, argno, argname, TEXTOID, elems);

	if (n == 0 && !allow_empty)
		wl_error_bad_arg(argname, "must not be empty");
	for (int i = 0; i < n; i++)
	{
		text	   *t = DatumGetTextPP((*elems)[i]);
		Size		len = VARSIZE_ANY_EXHDR(t);

		if (len == 0)
			wl_error_bad_arg(argname, "must not contain empty elements");
		if (ident_too_long(VARDATA_ANY(t), len))
			wl_error_bad_arg(argname,
							 "must not contain elements longer than 256 characters");
	}
	return n;
}

void
wl_check_array_size(ArrayType *arr, const char *argname, int max)
{
	if (ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr)) > max)
		wl_error_bad_arg(argname, psprintf("must have at most %d elements", max));
}

int
wl_arg_elements(FunctionCallInfo fcinfo, int argno, const char *argname,
				Oid elemtype, Datum **elems)
{
	ArrayType  *arr;
	bool	   *nulls;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	int			n;

	if (PG_ARGISNULL(argno))
		wl_error_bad_arg(argname, "must not be null");
	arr = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(arr) > 1)
		wl_error_bad_arg(argname, "must be a one-dimensional array");
	if (ARR_ELEMTYPE(arr) != elemtype)
		wl_error_bad_arg(argname, psprintf("must be an array of %s",
										   format_type_be(elemtype)));
	wl_check_array_size(arr, argname, WL_ARRAY_MAX);
	get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign,
					  elems, &nulls, &n);
	for (int i = 0; i < n; i++)
		if (nulls[i])
			wl_error_bad_arg(argname, "must not contain null elements");
	pfree(nulls);
	return n;
}

int32
wl_arg_limit(FunctionCallInfo fcinfo, int argno, int32 dflt, int32 max)
{
	int32		lim;

	if (PG_ARGISNULL(argno))
		return dflt;
	lim = PG_GETARG_INT32(argno);
	if (lim < 1)
		return 1;
	if (lim > max)
		return max;
	return lim;
}

TimestampTz
wl_arg_time(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	if (PG_ARGISNULL(argno))
		wl_error_bad_arg(argname, "must not be null");
	return PG_GETARG_TIMESTAMPTZ(argno);
}

TimestampTz
wl_check_finite(TimestampTz t, const char *argname)
{
	if (TIMESTAMP_NOT_FINITE(t))
		wl_error_bad_arg(argname, "must be a finite timestamp");
	return t;
}

char *
wl_enum_label(Datum value)
{
	return DatumGetCString(DirectFunctionCall1(enum_out, value));
}

Datum
wl_arg_required(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	if (PG_ARGISNULL(argno))
		wl_error_bad_arg(argname, "must not be null");
	return PG_GETARG_DATUM(argno);
}

text *
wl_arg_text(FunctionCallInfo fcinfo, int argno, const char *argname,
			bool required)
{
	return wl_arg_text_upto(fcinfo, argno, argname, required, WL_TEXT_MAX);
}

text *
wl_arg_text_upto(FunctionCallInfo fcinfo, int argno, const char *argname,
				 bool required, int max)
{
	Datum		d;
	text	   *t;
	Size		len;

	if (PG_ARGISNULL(argno))
	{
		if (required)
			wl_error_bad_arg(argname, "must not be null");
		return NULL;
	}
	d = PG_GETARG_DATUM(argno);
	/* judged from the header first: a huge value costs nothing to refuse */
	if (toast_raw_datum_size(d) - VARHDRSZ >
		(Size) max * pg_database_encoding_max_length())
		wl_error_bad_arg(argname, psprintf("must be at most %d characters", max));
	t = DatumGetTextPP(d);
	len = VARSIZE_ANY_EXHDR(t);
	if (len > (Size) max &&
		pg_mbstrlen_with_len(VARDATA_ANY(t), (int) len) > max)
		wl_error_bad_arg(argname, psprintf("must be at most %d characters", max));
	return t;
}

Datum
wl_arg_document(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	Datum		d = wl_arg_required(fcinfo, argno, argname);

	wl_check_document(d, argname);
	return d;
}

void
wl_check_document(Datum d, const char *argname)
{
	Size		size = toast_raw_datum_size(d) - VARHDRSZ;

	if (size > (Size) max_document_size)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("argument \"%s\" is too large", argname),
				 errdetail("The document takes %zu bytes; worklist.max_document_size is %d bytes.",
						   size, max_document_size)));
}

Datum
wl_arg_metadata(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	if (PG_ARGISNULL(argno))
		return DirectFunctionCall1(jsonb_in, CStringGetDatum("{}"));
	return wl_arg_document(fcinfo, argno, argname);
}

/* ----------
 * Instants and intervals
 * ----------
 */
bool
wl_interval_negative(const Interval *span)
{
	return span->month < 0 || span->day < 0 || span->time < 0;
}

int128
wl_interval_usec(const Interval *span)
{
	/* as interval comparison counts: a month is 30 days, a day 24 hours */
	return (int128) span->time + (int128) span->day * USECS_PER_DAY +
		(int128) span->month * DAYS_PER_MONTH * USECS_PER_DAY;
}

void
wl_check_positive_interval(Datum span, const char *argname)
{
	Interval   *i = DatumGetIntervalP(span);

	/*
	 * Every field counts on its own: '1 mon -30 days' compares equal to
	 * zero, yet added to 1 February it lands on 30 January.
	 */
	if (wl_interval_negative(i) ||
		(i->month == 0 && i->day == 0 && i->time == 0))
		wl_error_bad_arg(argname, "must be a positive interval");
	wl_check_interval_bound(span, argname);
}

void
wl_check_interval_bound(Datum span, const char *argname)
{
	int128		usec = wl_interval_usec(DatumGetIntervalP(span));

	if (usec < 0)
		usec = -usec;
	if (usec > (int128) WL_INTERVAL_MAX_DAYS * USECS_PER_DAY)
		wl_error_bad_arg(argname, "must not be longer than 10000 years");
}

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

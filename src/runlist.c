/*-------------------------------------------------------------------------
 *
 * runlist.c
 *	  list_durable_runs: keyset pagination of a tenant's runs, and its
 *	  cursor (doc/reference.md, section 6, "Listing").
 *
 * Every order and scope has an index on keys that never change once set
 * (see sql/parts/30_run.sql), and a page is one range scan of that index
 * from just after the cursor's key, reading lim + 1 entries: the extra one
 * tells whether a next page exists, so a cursor is returned exactly when
 * it leads to at least one more run.  The per-run facts a page shows
 * (checkpoint count, newest checkpoint, park) are columns of the run row
 * kept by the checkpoint verbs, and its lease is one primary-key probe, so
 * a page costs O(lim) however many runs and checkpoints there are.  The
 * park and claim filters are applied to the scanned rows (their states
 * depend on now and cannot be indexed), so a page under a selective filter
 * reads as many rows as it has to skip -- except that a park filter only
 * ever scans parked runs, which have indexes of their own.
 *
 * The cursor is base64url (no padding) of
 *
 *		version (1 byte, 1)
 *		order ('r' run_id, 'c' created_at)
 *		has run_created_at (1 byte, 0 or 1), run_created_at (8 bytes, big
 *		endian, 0 when absent)
 *		run, project, session (each a 2-byte big-endian length and UTF-8
 *		bytes)
 *		check (16 bytes)
 *
 * where check is the start of a SHA-256 over everything before it plus the
 * tenant, the scope (project, session) and the filters (park, claimed) of
 * the listing it was made for.  A cursor that does not decode, or whose
 * check does not match the listing it is presented to (altered, or made
 * under another tenant, scope or filter), or that was made for the other
 * order, is refused with 22023.  The check is an integrity check, not a
 * secret: a cursor only positions a listing the caller may make anyway.
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(wl_list_durable_runs);

#define CURSOR_VERSION		1
#define CURSOR_CHECK_LEN	16
#define CURSOR_MAX_CHARS	8192

/* park states as bits of the filter mask */
#define PARK_OUTSTANDING	1
#define PARK_EXPIRED		2
#define PARK_RESOLVED		4

/* The key of the last run of a page. */
typedef struct ListKey
{
	char		order;			/* 'r' or 'c' */
	bool		has_created;
	TimestampTz created;
	text	   *run;
	text	   *project;
	text	   *session;
} ListKey;

/* What a cursor is bound to besides its key. */
typedef struct ListContext
{
	text	   *tenant;
	text	   *project;		/* NULL: every project */
	text	   *session;		/* NULL: every session */
	int32		park_mask;		/* -1: no park filter */
	int			claimed;		/* -1 no filter, 0 false, 1 true */
} ListContext;

/* ----------
 * base64url without padding
 * ----------
 */
static const char b64url[] =
"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void
b64url_encode(const unsigned char *src, int len, StringInfo out)
{
	int			i;

	for (i = 0; i + 2 < len; i += 3)
	{
		uint32		v = (src[i] << 16) | (src[i + 1] << 8) | src[i + 2];

		appendStringInfoChar(out, b64url[(v >> 18) & 63]);
		appendStringInfoChar(out, b64url[(v >> 12) & 63]);
		appendStringInfoChar(out, b64url[(v >> 6) & 63]);
		appendStringInfoChar(out, b64url[v & 63]);
	}
	if (len - i == 1)
	{
		uint32		v = src[i] << 16;

		appendStringInfoChar(out, b64url[(v >> 18) & 63]);
		appendStringInfoChar(out, b64url[(v >> 12) & 63]);
	}
	else if (len - i == 2)
	{
		uint32		v = (src[i] << 16) | (src[i + 1] << 8);

		appendStringInfoChar(out, b64url[(v >> 18) & 63]);
		appendStringInfoChar(out, b64url[(v >> 12) & 63]);
		appendStringInfoChar(out, b64url[(v >> 6) & 63]);
	}
}

static int
b64url_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

/*
 * Decode into dst (room for len * 3 / 4 bytes); returns the byte count, or
 * -1 when src is not canonical base64url (a stray character, an impossible
 * length, or set bits after the last byte).
 */
static int
b64url_decode(const char *src, int len, unsigned char *dst)
{
	uint32		acc = 0;
	int			bits = 0;
	int			n = 0;

	if (len % 4 == 1)
		return -1;
	for (int i = 0; i < len; i++)
	{
		int			v = b64url_value(src[i]);

		if (v < 0)
			return -1;
		acc = (acc << 6) | v;
		bits += 6;
		if (bits >= 8)
		{
			bits -= 8;
			dst[n++] = (acc >> bits) & 0xFF;
		}
	}
	if (bits > 0 && (acc & ((1 << bits) - 1)) != 0)
		return -1;
	return n;
}

/* ----------
 * cursor encoding
 * ----------
 */
static void
put_u16(StringInfo buf, uint16 v)
{
	appendStringInfoChar(buf, (char) (v >> 8));
	appendStringInfoChar(buf, (char) (v & 0xFF));
}

static void
put_text(StringInfo buf, text *t)
{
	put_u16(buf, (uint16) VARSIZE_ANY_EXHDR(t));
	appendBinaryStringInfo(buf, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
}

/* An optional text in the check: presence byte, 4-byte length, bytes. */
static void
put_opt_text(StringInfo buf, text *t)
{
	uint32		len;

	appendStringInfoChar(buf, t ? 1 : 0);
	if (t == NULL)
		return;
	len = VARSIZE_ANY_EXHDR(t);
	appendStringInfoChar(buf, (char) (len >> 24));
	appendStringInfoChar(buf, (char) ((len >> 16) & 0xFF));
	appendStringInfoChar(buf, (char) ((len >> 8) & 0xFF));
	appendStringInfoChar(buf, (char) (len & 0xFF));
	appendBinaryStringInfo(buf, VARDATA_ANY(t), len);
}

/* The check of payload (len bytes) for a listing in context ctx. */
static void
cursor_check(const unsigned char *payload, int len, const ListContext *ctx,
			 uint8 *check)
{
	static const char domain[] = "worklist.list_durable_runs cursor";
	StringInfoData buf;
	pg_cryptohash_ctx *hash;
	uint8		digest[PG_SHA256_DIGEST_LENGTH];

	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, domain, sizeof(domain));
	appendBinaryStringInfo(&buf, (const char *) payload, len);
	put_opt_text(&buf, ctx->tenant);
	put_opt_text(&buf, ctx->project);
	put_opt_text(&buf, ctx->session);
	for (int shift = 24; shift >= 0; shift -= 8)
		appendStringInfoChar(&buf, (char) (((uint32) ctx->park_mask >> shift) & 0xFF));
	appendStringInfoChar(&buf, (char) (ctx->claimed + 1));

	hash = pg_cryptohash_create(PG_SHA256);
	if (hash == NULL ||
		pg_cryptohash_init(hash) < 0 ||
		pg_cryptohash_update(hash, (const uint8 *) buf.data, buf.len) < 0 ||
		pg_cryptohash_final(hash, digest, sizeof(digest)) < 0)
		elog(ERROR, "could not compute SHA-256: %s", pg_cryptohash_error(hash));
	pg_cryptohash_free(hash);
	memcpy(check, digest, CURSOR_CHECK_LEN);
	pfree(buf.data);
}

static text *
cursor_encode(const ListKey *key, const ListContext *ctx)
{
	StringInfoData buf;
	StringInfoData out;
	uint64		created = key->has_created ? (uint64) key->created : 0;
	uint8		check[CURSOR_CHECK_LEN];

	initStringInfo(&buf);
	appendStringInfoChar(&buf, CURSOR_VERSION);
	appendStringInfoChar(&buf, key->order);
	appendStringInfoChar(&buf, key->has_created ? 1 : 0);
	for (int shift = 56; shift >= 0; shift -= 8)
		appendStringInfoChar(&buf, (char) ((created >> shift) & 0xFF));
	put_text(&buf, key->run);
	put_text(&buf, key->project);
	put_text(&buf, key->session);
	cursor_check((unsigned char *) buf.data, buf.len, ctx, check);
	appendBinaryStringInfo(&buf, (const char *) check, CURSOR_CHECK_LEN);

	initStringInfo(&out);
	b64url_encode((unsigned char *) buf.data, buf.len, &out);
	return cstring_to_text_with_len(out.data, out.len);
}

static void
cursor_malformed(void)
{
	wl_error_bad_arg("cursor", "is malformed");
}

/* Read a length-prefixed identifier at *pos; refuse anything invalid. */
static text *
get_ident(const unsigned char *buf, int len, int *pos)
{
	int			n;
	const char *s;

	if (*pos + 2 > len)
		cursor_malformed();
	n = (buf[*pos] << 8) | buf[*pos + 1];
	*pos += 2;
	if (n == 0 || *pos + n > len)
		cursor_malformed();
	s = (const char *) buf + *pos;
	*pos += n;
	if (!pg_verifymbstr(s, n, true) || pg_mbstrlen_with_len(s, n) > WL_IDENT_MAX)
		cursor_malformed();
	return cstring_to_text_with_len(s, n);
}

/* Decode and verify a cursor presented with a listing in ctx. */
static void
cursor_decode(text *cursor, char order, const ListContext *ctx, ListKey *key)
{
	int			clen;
	unsigned char *buf;
	int			len;
	int			pos;
	uint64		created = 0;
	uint8		check[CURSOR_CHECK_LEN];

	clen = VARSIZE_ANY_EXHDR(cursor);
	if (clen == 0 || clen > CURSOR_MAX_CHARS)
		cursor_malformed();
	buf = palloc(clen);
	len = b64url_decode(VARDATA_ANY(cursor), clen, buf);
	if (len < 3 + 8 + 3 * 3 + CURSOR_CHECK_LEN || buf[0] != CURSOR_VERSION)
		cursor_malformed();
	key->order = (char) buf[1];
	if (key->order != 'r' && key->order != 'c')
		cursor_malformed();
	if (buf[2] > 1)
		cursor_malformed();
	key->has_created = buf[2] == 1;
	for (int i = 0; i < 8; i++)
		created = (created << 8) | buf[3 + i];
	key->created = (TimestampTz) created;
	if (key->has_created
		? !(IS_VALID_TIMESTAMP(key->created) || TIMESTAMP_NOT_FINITE(key->created))
		: created != 0)
		cursor_malformed();
	if (key->order == 'r' && key->has_created)
		cursor_malformed();
	pos = 11;
	len -= CURSOR_CHECK_LEN;
	key->run = get_ident(buf, len, &pos);
	key->project = get_ident(buf, len, &pos);
	key->session = get_ident(buf, len, &pos);
	if (pos != len)
		cursor_malformed();

	cursor_check(buf, len, ctx, check);
	if (memcmp(check, buf + len, CURSOR_CHECK_LEN) != 0)
		wl_error_bad_arg("cursor",
						 "does not belong to this listing (it was altered, or made "
						 "for another tenant, project, session or filter)");
	if (key->order != order)
		wl_error_bad_arg("cursor",
						 order == 'r'
						 ? "was made for order_by 'created_at', not 'run_id'"
						 : "was made for order_by 'run_id', not 'created_at'");
	pfree(buf);
}

/* The park argument as a mask of PARK_* bits; -1 when NULL. */
static int32
park_mask_arg(FunctionCallInfo fcinfo, int argno)
{
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int32		mask = 0;
	int16		typlen;
	bool		typbyval;
	char		typalign;

	if (PG_ARGISNULL(argno))
		return -1;
	arr = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(arr) > 1)
		wl_error_bad_arg("park", "must be a one-dimensional array");
	get_typlenbyvalalign(ARR_ELEMTYPE(arr), &typlen, &typbyval, &typalign);
	deconstruct_array(arr, ARR_ELEMTYPE(arr), typlen, typbyval, typalign,
					  &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		char	   *label;

		if (nulls[i])
			wl_error_bad_arg("park", "must not contain null elements");
		label = wl_enum_label(elems[i]);
		if (strcmp(label, "outstanding") == 0)
			mask |= PARK_OUTSTANDING;
		else if (strcmp(label, "expired") == 0)
			mask |= PARK_EXPIRED;
		else if (strcmp(label, "resolved") == 0)
			mask |= PARK_RESOLVED;
		else
			elog(ERROR, "unexpected park state \"%s\"", label);
	}
	return mask;
}

/*
 * The page statements.  Parameters: $1 tenant, $2 project, $3 session,
 * $4..$8 the key to start after (has run_created_at, run_created_at or
 * '-infinity', run, project, session), $9 park mask, $10 claimed, $11 now,
 * $12 concluded.
 * Column 1 is the entry, 2..5 the key of the row.
 */
#define PARK_BIT \
	"CASE WHEN r.park_checkpoint_id IS NULL THEN 0" \
	" WHEN r.park_resolved_at IS NOT NULL THEN 4" \
	" WHEN r.park_deadline OPERATOR(pg_catalog.<=) $11 THEN 2 ELSE 1 END"

#define PAGE_SELECT_OF(more, filter) \
	"SELECT ROW(r.project, r.session, r.run, r.parent_run, r.run_created_at," \
	"  r.checkpoint_count, r.latest_checkpoint_id, r.latest_checkpoint_at," \
	"  CASE WHEN r.park_checkpoint_id IS NULL THEN NULL" \
	"   WHEN r.park_resolved_at IS NOT NULL THEN 'resolved'::worklist.park_state" \
	"   WHEN r.park_deadline OPERATOR(pg_catalog.<=) $11" \
	"    THEN 'expired'::worklist.park_state" \
	"   ELSE 'outstanding'::worklist.park_state END," \
	"  r.park_checkpoint_id, r.park_request, r.parked_at, r.park_deadline," \
	"  r.park_resolved_at, l.holder, l.fence, l.expires_at," \
	"  l.expires_at OPERATOR(pg_catalog.<=) $11" more ")::worklist.durable_run," \
	"  r.run_created_at, r.run, r.project, r.session" \
	" FROM worklist.run r" \
	" LEFT JOIN worklist.run_claim l ON l.tenant OPERATOR(pg_catalog.=) r.tenant" \
	"  AND l.project OPERATOR(pg_catalog.=) r.project" \
	"  AND l.session OPERATOR(pg_catalog.=) r.session" \
	"  AND l.run OPERATOR(pg_catalog.=) r.run" \
	" WHERE r.tenant OPERATOR(pg_catalog.=) $1 AND r.listed" \
	"  AND ($9 IS NULL OR ($9 OPERATOR(pg_catalog.&) " PARK_BIT ")" \
	"       OPERATOR(pg_catalog.<>) 0)" \
	"  AND ($10 IS NULL OR $10 OPERATOR(pg_catalog.=)" \
	"       COALESCE(l.expires_at OPERATOR(pg_catalog.>) $11, false))" filter
/* this version's schema: with the conclusion ($12 the concluded filter) */
#define PAGE_SELECT PAGE_SELECT_OF(", r.concluded_at", \
	"  AND ($12 IS NULL OR $12 OPERATOR(pg_catalog.=) (r.concluded_at IS NOT NULL))")
/* 0.3's */
#define PAGE_SELECT_03 PAGE_SELECT_OF("", "")

#define HAS_CREATED "(r.run_created_at IS NOT NULL)"
#define CREATED_KEY "COALESCE(r.run_created_at, '-infinity'::pg_catalog.timestamptz)"

#define PAGE_ARGTYPES \
	12, {TEXTOID, TEXTOID, TEXTOID, BOOLOID, TIMESTAMPTZOID, TEXTOID, TEXTOID, \
		TEXTOID, INT4OID, BOOLOID, TIMESTAMPTZOID, BOOLOID}

/* keyset conditions and orders: [order: 0 run_id, 1 created_at][scope] */
#define KEY_ID \
	"  AND ROW(r.run, r.project, r.session) OPERATOR(pg_catalog.>) ROW($6, $7, $8)" \
	" ORDER BY r.run, r.project, r.session"
#define KEY_ID_P \
	"  AND r.project OPERATOR(pg_catalog.=) $2" \
	"  AND ROW(r.run, r.session) OPERATOR(pg_catalog.>) ROW($6, $8)" \
	" ORDER BY r.run, r.session"
#define KEY_ID_PS \
	"  AND r.project OPERATOR(pg_catalog.=) $2" \
	"  AND r.session OPERATOR(pg_catalog.=) $3" \
	"  AND r.run OPERATOR(pg_catalog.>) $6" \
	" ORDER BY r.run"
#define KEY_CREATED \
	"  AND ROW(" HAS_CREATED ", " CREATED_KEY ", r.run, r.project, r.session)" \
	"      OPERATOR(pg_catalog.>) ROW($4, $5, $6, $7, $8)" \
	" ORDER BY " HAS_CREATED ", " CREATED_KEY ", r.run, r.project, r.session"
#define KEY_CREATED_P \
	"  AND r.project OPERATOR(pg_catalog.=) $2" \
	"  AND ROW(" HAS_CREATED ", " CREATED_KEY ", r.run, r.session)" \
	"      OPERATOR(pg_catalog.>) ROW($4, $5, $6, $8)" \
	" ORDER BY " HAS_CREATED ", " CREATED_KEY ", r.run, r.session"
#define KEY_CREATED_PS \
	"  AND r.project OPERATOR(pg_catalog.=) $2" \
	"  AND r.session OPERATOR(pg_catalog.=) $3" \
	"  AND ROW(" HAS_CREATED ", " CREATED_KEY ", r.run)" \
	"      OPERATOR(pg_catalog.>) ROW($4, $5, $6)" \
	" ORDER BY " HAS_CREATED ", " CREATED_KEY ", r.run"

/*
 * With a park filter only parked runs can match; saying so lets the
 * planner use the indexes of parked runs.
 */
#define PARKED " AND r.park_checkpoint_id IS NOT NULL"

/*
 * Each statement comes with four LIMITs, the smallest of which at least
 * lim + 1 is used: the planner then knows how short a page is and keeps
 * to the ordered index scan even where a scope holds few runs, which a
 * generic plan made for 1001 rows would sort instead.  The executor stops
 * after lim + 1 rows in any case.
 */
#define LIMIT_OF(q, n, label) \
	{PAGE_SELECT q " LIMIT " n, PAGE_ARGTYPES, .name = label "." n, \
	 .sql03 = PAGE_SELECT_03 q " LIMIT " n}
#define LIMITS(q, label) \
	{LIMIT_OF(q, "2", label), LIMIT_OF(q, "11", label), \
	 LIMIT_OF(q, "101", label), LIMIT_OF(q, "1001", label)}
#define N_LIMITS 4
static const int32 limits[N_LIMITS] = {2, 11, 101, 1001};

/*
 * [order][scope: 0 none, 1 project, 2 project and session][park filter]
 * [limit]
 */
static WlStmt page_stmts[2][3][2][N_LIMITS] WL_KEPT = {
	{
		{LIMITS(KEY_ID, "runlist.by_id"), LIMITS(PARKED KEY_ID, "runlist.by_id.parked")},
		{LIMITS(KEY_ID_P, "runlist.by_id.project"), LIMITS(PARKED KEY_ID_P, "runlist.by_id.project.parked")},
		{LIMITS(KEY_ID_PS, "runlist.by_id.session"), LIMITS(PARKED KEY_ID_PS, "runlist.by_id.session.parked")},
	},
	{
		{LIMITS(KEY_CREATED, "runlist.by_created"), LIMITS(PARKED KEY_CREATED, "runlist.by_created.parked")},
		{LIMITS(KEY_CREATED_P, "runlist.by_created.project"), LIMITS(PARKED KEY_CREATED_P, "runlist.by_created.project.parked")},
		{LIMITS(KEY_CREATED_PS, "runlist.by_created.session"), LIMITS(PARKED KEY_CREATED_PS, "runlist.by_created.session.parked")},
	},
};

/*
 * worklist.list_durable_runs(project, session, order_by, park, claimed,
 *		lim, cursor, now, concluded) RETURNS worklist.durable_run_page
 */
Datum
wl_list_durable_runs(PG_FUNCTION_ARGS)
{
	ListContext ctx;
	ListKey		key;
	ListKey		last;
	char	   *order_by;
	char		order;
	int32		lim;
	TimestampTz now;
	TupleDesc	tupdesc;
	Oid			entry_type;
	int16		entry_len;
	bool		entry_byval;
	int			concluded;
	char		entry_align;
	WlStmt	   *stmt;
	int			bucket;
	WlSpi		spi;
	Datum		values[12];
	char		nulls[12];
	uint64		n;
	int			count;
	Datum	   *entries;
	text	   *next = NULL;
	Datum		result[2];
	bool		result_nulls[2] = {false, false};

	ctx.tenant = wl_tenant_enter();
	ctx.project = wl_arg_ident_opt(fcinfo, 0, "project");
	ctx.session = wl_arg_ident_opt(fcinfo, 1, "session");
	if (ctx.session && !ctx.project)
		wl_error_bad_arg("session", "requires project");
	order_by = text_to_cstring(DatumGetTextPP(wl_arg_required(fcinfo, 2, "order_by")));
	if (strcmp(order_by, "run_id") == 0)
		order = 'r';
	else if (strcmp(order_by, "created_at") == 0)
		order = 'c';
	else
		wl_error_bad_arg("order_by", "must be 'run_id' or 'created_at'");
	ctx.park_mask = park_mask_arg(fcinfo, 3);
	ctx.claimed = PG_ARGISNULL(4) ? -1 : (PG_GETARG_BOOL(4) ? 1 : 0);
	lim = wl_arg_limit(fcinfo, 5, 100, WL_LIMIT_MAX);
	now = wl_arg_time(fcinfo, 7, "now");
	/* the 0.3 function has no concluded */
	concluded = PG_NARGS() <= 8 || PG_ARGISNULL(8) ? -1 : (PG_GETARG_BOOL(8) ? 1 : 0);

	if (PG_ARGISNULL(6))
	{
		/* before every key: ids are never empty, '' sorts first */
		key.order = order;
		key.has_created = false;
		key.created = DT_NOBEGIN;
		key.run = key.project = key.session = cstring_to_text("");
	}
	else
	{
		text	   *cursor;

		if (toast_raw_datum_size(PG_GETARG_DATUM(6)) - VARHDRSZ > CURSOR_MAX_CHARS)
			cursor_malformed();
		cursor = PG_GETARG_TEXT_PP(6);
		cursor_decode(cursor, order, &ctx, &key);
		if (!key.has_created)
			key.created = DT_NOBEGIN;
	}

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	entry_type = get_element_type(TupleDescAttr(tupdesc, 0)->atttypid);
	if (!OidIsValid(entry_type))
		elog(ERROR, "entries must be an array");
	get_typlenbyvalalign(entry_type, &entry_len, &entry_byval, &entry_align);

	for (bucket = 0; limits[bucket] < lim + 1; bucket++)
		;
	stmt = &page_stmts[order == 'r' ? 0 : 1][ctx.session ? 2 : ctx.project ? 1 : 0]
		[ctx.park_mask >= 0 ? 1 : 0][bucket];
	memset(nulls, ' ', sizeof(nulls));
	values[0] = PointerGetDatum(ctx.tenant);
	values[1] = PointerGetDatum(ctx.project);
	nulls[1] = ctx.project ? ' ' : 'n';
	values[2] = PointerGetDatum(ctx.session);
	nulls[2] = ctx.session ? ' ' : 'n';
	values[3] = BoolGetDatum(key.has_created);
	values[4] = TimestampTzGetDatum(key.created);
	values[5] = PointerGetDatum(key.run);
	values[6] = PointerGetDatum(key.project);
	values[7] = PointerGetDatum(key.session);
	values[8] = Int32GetDatum(ctx.park_mask);
	nulls[8] = ctx.park_mask < 0 ? 'n' : ' ';
	values[9] = BoolGetDatum(ctx.claimed == 1);
	nulls[9] = ctx.claimed < 0 ? 'n' : ' ';
	values[10] = TimestampTzGetDatum(now);
	values[11] = BoolGetDatum(concluded == 1);
	nulls[11] = concluded < 0 ? 'n' : ' ';

	/* allocated here: what is palloc'd inside SPI dies with it */
	entries = palloc(sizeof(Datum) * lim);
	wl_spi_begin(&spi);
	n = wl_exec(stmt, values, nulls, true, lim + 1);
	count = (int) Min(n, (uint64) lim);
	for (int i = 0; i < count; i++)
	{
		bool		isnull;

		entries[i] = wl_result_datum(i, 1, &isnull);
		if (isnull)
			elog(ERROR, "listing returned a null entry");
	}
	if (n > (uint64) lim)
	{
		bool		isnull;
		Datum		d;

		/* the last entry of this page; the next page starts after it */
		last.order = order;
		d = wl_result_datum(count - 1, 2, &isnull);
		last.has_created = order == 'c' && !isnull;
		last.created = last.has_created ? DatumGetTimestampTz(d) : 0;
		last.run = DatumGetTextPP(wl_result_datum(count - 1, 3, &isnull));
		last.project = DatumGetTextPP(wl_result_datum(count - 1, 4, &isnull));
		last.session = DatumGetTextPP(wl_result_datum(count - 1, 5, &isnull));
	}
	wl_spi_end(&spi);
	if (n > (uint64) lim)
		next = cursor_encode(&last, &ctx);

	result[0] = PointerGetDatum(construct_array(entries, count, entry_type,
												entry_len, entry_byval,
												entry_align));
	if (next)
		result[1] = PointerGetDatum(next);
	else
		result_nulls[1] = true;
	tupdesc = BlessTupleDesc(tupdesc);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, result, result_nulls)));
}

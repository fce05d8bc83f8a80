/*-------------------------------------------------------------------------
 *
 * spi.c
 *	  The SPI layer every verb goes through.
 *
 * Statements are prepared once per backend and kept (SPI_keepplan), so a
 * verb costs one plan execution per statement, never a parse.
 *
 * While a verb is inside SPI it acts as the role owning the extension, so
 * callers need no privilege on the tables (they have none: the tables are
 * private), and the search_path is pinned to pg_catalog alone.  Pinning
 * matters even though every name in the statements is schema-qualified:
 * the plan cache re-analyses a kept statement under whatever search_path is
 * active when it notices a change, so without the pin a caller could make
 * a statement be re-parsed under a path of its choosing.  With the pin the
 * active path is always the one the plan was made under.
 *
 * The settings the statements run under are set with the GUC machinery
 * in a nest level of their own (NewGUCNestLevel, set_config_option with
 * GUC_ACTION_SAVE, AtEOXact_GUC), as PostgreSQL's own RI_Initial_Check and
 * extension scripts do: undone by wl_spi_end(), or, when an error escapes,
 * by (sub)transaction abort, and visible to SHOW meanwhile.  They are:
 *
 *	 search_path = pg_catalog, pg_temp
 *		every name in the statements is schema-qualified, but the plan cache
 *		re-analyses a kept statement under whatever path is active when it
 *		notices a change, so without the pin a caller could make a statement
 *		be re-parsed under a path of its choosing;
 *	 enable_seqscan = off
 *		every statement reaches its rows through an index (each starts from
 *		the tenant, the first column of every key), and is planned that way
 *		however small its tables look at the time.  A plan made while a
 *		table is empty -- just after CREATE EXTENSION and a VACUUM, say --
 *		would otherwise be a sequential scan that the plan cache keeps until
 *		the table is next analyzed, and never within one transaction:
 *		loading rows through the verbs in a single transaction then cost
 *		time quadratic in their number;
 *	 jit = off
 *		a disabled scan type adds a huge constant to a plan's cost (the
 *		fence sequence can only be scanned sequentially), which would carry
 *		it over every JIT threshold; whether a plan is compiled is decided
 *		when it is made, so a plan made here never is, whatever the server's
 *		settings say when it runs.
 *
 * The user switch is undone the same way.
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

#include "access/genam.h"
#include "access/xact.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "jit/jit.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/plancache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

/*
 * The extension's owner, from pg_extension.extowner (not from the schema's
 * owner: ALTER SCHEMA ... OWNER must not change whose rights the verbs use),
 * and the version of its schema.  Cached, keyed on the schema's OID, and
 * dropped when any schema changes: a DROP and CREATE EXTENSION makes a new
 * schema, REASSIGN OWNED, the only way the extension's owner changes,
 * changes the schema's owner too, and every update script ends by
 * rewriting the schema's row (see sql/upgrade/99_end.sql).
 *
 * The library serves its own version's schema and the previous release's:
 * a server whose library was upgraded keeps every verb of a database that
 * has not run ALTER EXTENSION UPDATE yet working as that release defined
 * it (wl_schema_current() tells the verbs which one they serve).  An older
 * schema is refused with a hint rather than failing on a missing column.
 */
static Oid	owner_cache = InvalidOid;
static Oid	owner_cache_nsp = InvalidOid;
static bool schema_cache_current = true;
static bool owner_callback_registered = false;

static void
owner_cache_reset(Datum arg, int cacheid, uint32 hashvalue)
{
	owner_cache_nsp = InvalidOid;
}

char *
wl_installed_version(Oid *owner)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	char	   *installed = NULL;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("worklist"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		version = heap_getattr(tup, Anum_pg_extension_extversion,
										   RelationGetDescr(rel), &isnull);

		if (owner)
			*owner = ((Form_pg_extension) GETSTRUCT(tup))->extowner;
		installed = isnull ? pstrdup("") : TextDatumGetCString(version);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return installed;
}

bool
wl_schema_served(const char *version, bool *current)
{
	bool		is_current = strcmp(version, WL_EXTVERSION) == 0;

	if (current)
		*current = is_current;
	return is_current || strcmp(version, WL_PREVVERSION) == 0;
}

Oid
wl_owner(void)
{
	Oid			nsp = get_namespace_oid("worklist", true);
	Oid			owner = InvalidOid;
	char	   *installed;
	bool		current;

	if (!owner_callback_registered)
	{
		CacheRegisterSyscacheCallback(NAMESPACEOID, owner_cache_reset, (Datum) 0);
		owner_callback_registered = true;
	}
	if (OidIsValid(nsp) && nsp == owner_cache_nsp)
		return owner_cache;

	installed = wl_installed_version(&owner);
	if (installed == NULL || !OidIsValid(owner) || !OidIsValid(nsp))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"worklist\" is not installed in this database")));
	if (!wl_schema_served(installed, &current))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"worklist\" is at version %s, but its library is version %s",
						installed, WL_EXTVERSION),
				 errhint("Run ALTER EXTENSION worklist UPDATE in this database.")));
	owner_cache = owner;
	owner_cache_nsp = nsp;
	schema_cache_current = current;
	return owner;
}

bool
wl_schema_current(void)
{
	(void) wl_owner();
	return schema_cache_current;
}

/* Set one of the statements' settings in the current GUC nest level. */
static void
set_local(const char *name, const char *value)
{
	(void) set_config_option(name, value, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
}

/*
 * How deep this backend is in wl_spi_begin..wl_spi_end (wl_in_verb), and
 * the transaction nest level of the outermost: an error that aborts that
 * (sub)transaction ends the verb without wl_spi_end.
 */
static int	spi_depth = 0;
static int	spi_depth_level = 0;
static Oid	calling_role = InvalidOid;	/* who called the outermost verb */
static bool spi_callbacks_registered = false;

static void
spi_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
		spi_depth = 0;
}

static void
spi_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && spi_depth > 0 &&
		spi_depth_level >= GetCurrentTransactionNestLevel())
		spi_depth = 0;
}

void		(*wl_spi_verb_done_hook) (void) = NULL;

bool
wl_in_verb(void)
{
	return spi_depth > 0;
}

Oid
wl_calling_role(void)
{
	return spi_depth > 0 ? calling_role : GetUserId();
}

void
wl_spi_begin(WlSpi *spi)
{
	Oid			owner = wl_owner();

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	GetUserIdAndSecContext(&spi->save_userid, &spi->save_sec_context);
	SetUserIdAndSecContext(owner,
						   spi->save_sec_context | SECURITY_LOCAL_USERID_CHANGE);

	spi->guc_level = NewGUCNestLevel();
	set_local("search_path", "pg_catalog, pg_temp");
	set_local("enable_seqscan", "off");
	set_local("jit", "off");

	if (!spi_callbacks_registered)
	{
		RegisterXactCallback(spi_xact_callback, NULL);
		RegisterSubXactCallback(spi_subxact_callback, NULL);
		spi_callbacks_registered = true;
	}
	if (spi_depth++ == 0)
	{
		spi_depth_level = GetCurrentTransactionNestLevel();
		calling_role = spi->save_userid;
	}
	spi->active = true;
}

void
wl_spi_end(WlSpi *spi)
{
	Assert(spi->active);
	if (spi_depth > 0)
		spi_depth--;
	if (spi_depth == 0 && wl_spi_verb_done_hook != NULL)
		wl_spi_verb_done_hook();
	AtEOXact_GUC(true, spi->guc_level);
	SetUserIdAndSecContext(spi->save_userid, spi->save_sec_context);
	spi->active = false;
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
}

static void
prepare(WlStmt *stmt)
{
	bool		want03 = stmt->sql03 != NULL && !wl_schema_current();

	if (stmt->plan != NULL && stmt->plan_is03 != want03)
	{
		SPI_freeplan(stmt->plan);
		stmt->plan = NULL;
	}
	if (stmt->plan == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare_cursor(want03 ? stmt->sql03 : stmt->sql,
											  stmt->nargs,
											  stmt->argtypes,
											  stmt->generic ? CURSOR_OPT_GENERIC_PLAN : 0);

		if (plan == NULL)
			elog(ERROR, "could not prepare statement: %s: %s",
				 SPI_result_code_string(SPI_result), stmt->sql);
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "could not keep prepared statement");
		stmt->plan = plan;
		stmt->plan_is03 = want03;
	}
}

/*
 * Prepare stmt if need be and execute its kept plan, as SPI_execute_snapshot
 * does (snapshot NULL: as SPI_execute_plan does).  Returns SPI_processed,
 * in the caller's memory context (SPI leaves its own current otherwise).
 */
static uint64
execute(WlStmt *stmt, Datum *values, const char *nulls, Snapshot snapshot,
		bool read_only, long count)
{
	MemoryContext cxt = CurrentMemoryContext;
	int			rc;

	prepare(stmt);
	if (snapshot == NULL)
		rc = SPI_execute_plan(stmt->plan, values, nulls, read_only, count);
	else
		rc = SPI_execute_snapshot(stmt->plan, values, nulls, snapshot,
								  InvalidSnapshot, read_only, false, count);
	MemoryContextSwitchTo(cxt);
	if (rc < 0)
		elog(ERROR, "statement failed: %s: %s",
			 SPI_result_code_string(rc), stmt->sql);
	return SPI_processed;
}

uint64
wl_exec(WlStmt *stmt, Datum *values, const char *nulls, bool read_only,
		long count)
{
	return execute(stmt, values, nulls, NULL, read_only, count);
}

uint64
wl_exec_latest(WlStmt *stmt, Datum *values, const char *nulls)
{
	return execute(stmt, values, nulls, GetLatestSnapshot(), true, 0);
}

Datum
wl_result_datum(uint64 row, int col, bool *isnull)
{
	TupleDesc	desc = SPI_tuptable->tupdesc;
	Form_pg_attribute att = TupleDescAttr(desc, col - 1);
	Datum		d;

	Assert(row < SPI_processed);
	d = SPI_getbinval(SPI_tuptable->vals[row], desc, col, isnull);
	if (*isnull)
		return (Datum) 0;
	return SPI_datumTransfer(d, att->attbyval, att->attlen);
}

char *
wl_result_cstring(uint64 row, int col)
{
	char	   *s = SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col);
	char	   *copy;

	if (s == NULL)
		return NULL;
	/* SPI_palloc allocates in the upper context, so it outlives SPI_finish. */
	copy = SPI_palloc(strlen(s) + 1);
	strcpy(copy, s);
	return copy;
}

char **
wl_result_column(uint64 n, int col)
{
	char	  **out = palloc(sizeof(char *) * Max(n, 1));

	for (uint64 i = 0; i < n; i++)
		out[i] = wl_result_cstring(i, col);
	return out;
}

uint64
wl_purge_by_id(WlStmt *pick, WlStmt *purge, text *tenant, TimestampTz before,
			   int32 lim)
{
	Datum		values[3];
	uint64		n;
	char	  **ids;

	values[0] = PointerGetDatum(tenant);
	values[1] = TimestampTzGetDatum(before);
	values[2] = Int32GetDatum(lim);
	n = wl_exec(pick, values, NULL, false, 0);
	ids = wl_result_column(n, 1);
	for (uint64 i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		values[1] = CStringGetTextDatum(ids[i]);
		(void) wl_exec(purge, values, NULL, false, 0);
	}
	return n;
}

/* Append column 1 (a whole row) of every row of tt to the SRF's store. */
static void
rows_to_srf(ReturnSetInfo *rsinfo, SPITupleTable *tt, uint64 n)
{
	TupleDesc	desc = tt->tupdesc;

	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(tt->vals[i], desc, 1, &isnull);
		HeapTupleHeader th;
		HeapTupleData tuple;

		if (isnull)
			continue;
		th = DatumGetHeapTupleHeader(d);
		tuple.t_len = HeapTupleHeaderGetDatumLength(th);
		ItemPointerSetInvalid(&tuple.t_self);
		tuple.t_tableOid = InvalidOid;
		tuple.t_data = th;
		tuplestore_puttuple(rsinfo->setResult, &tuple);
	}
}

void
wl_result_to_srf(FunctionCallInfo fcinfo)
{
	rows_to_srf((ReturnSetInfo *) fcinfo->resultinfo, SPI_tuptable, SPI_processed);
}

Portal
wl_cursor_open(WlStmt *stmt, Datum *values, const char *nulls, bool read_only)
{
	MemoryContext cxt = CurrentMemoryContext;
	Portal		portal;

	prepare(stmt);
	portal = SPI_cursor_open(NULL, stmt->plan, values, nulls, read_only);
	MemoryContextSwitchTo(cxt);
	if (portal == NULL)
		elog(ERROR, "could not open a cursor for: %s", stmt->sql);
	return portal;
}

uint64
wl_cursor_fetch(Portal portal)
{
	MemoryContext cxt = CurrentMemoryContext;

	CHECK_FOR_INTERRUPTS();
	if (SPI_tuptable)
		SPI_freetuptable(SPI_tuptable);
	SPI_cursor_fetch(portal, true, WL_FETCH_BATCH);
	MemoryContextSwitchTo(cxt);
	return SPI_processed;
}

void
wl_cursor_close(Portal portal)
{
	if (SPI_tuptable)
		SPI_freetuptable(SPI_tuptable);
	SPI_cursor_close(portal);
}

uint64
wl_exec_to_srf(WlStmt *stmt, Datum *values, const char *nulls,
			   FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Portal		portal = wl_cursor_open(stmt, values, nulls, true);
	uint64		total = 0;
	uint64		n;

	while ((n = wl_cursor_fetch(portal)) > 0)
	{
		rows_to_srf(rsinfo, SPI_tuptable, n);
		total += n;
	}
	wl_cursor_close(portal);
	return total;
}

#ifdef WL_HAVE_KEPT_SECTION
/* The bounds of the section WL_KEPT places every kept statement in. */
extern WlStmt __start_wl_kept_statements[] __attribute__((visibility("hidden")));
extern WlStmt __stop_wl_kept_statements[] __attribute__((visibility("hidden")));
#endif

PG_FUNCTION_INFO_V1(wl_kept_statements);

/*
 * worklist.kept_statements(OUT name text, OUT sql text, OUT jit boolean,
 *							 OUT cost double precision) RETURNS SETOF record
 *
 * Every statement the verbs keep, by name, with its text, and whether its
 * plan -- made as the verbs make it (see the head of this file), from the
 * current settings otherwise -- would be compiled by JIT, with the plan's
 * estimated cost.  Plans not made yet are made (a generic plan each).
 */
Datum
wl_kept_statements(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WlSpi		spi;

	InitMaterializedSRF(fcinfo, 0);
#ifdef WL_HAVE_KEPT_SECTION
	wl_spi_begin(&spi);
	for (WlStmt *stmt = __start_wl_kept_statements;
		 stmt < __stop_wl_kept_statements; stmt++)
	{
		CachedPlan *cplan;
		ListCell   *lc;
		bool		jit = false;
		double		cost = 0;
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		CHECK_FOR_INTERRUPTS();
		prepare(stmt);
		cplan = SPI_plan_get_cached_plan(stmt->plan);
		if (cplan == NULL)
			elog(ERROR, "no plan for statement %s", stmt->name ? stmt->name : stmt->sql);
		foreach(lc, cplan->stmt_list)
		{
			PlannedStmt *ps = lfirst_node(PlannedStmt, lc);

			if (ps->jitFlags & PGJIT_PERFORM)
				jit = true;
			if (ps->planTree && ps->planTree->total_cost > cost)
				cost = ps->planTree->total_cost;
		}
		ReleaseCachedPlan(cplan, CurrentResourceOwner);

		values[0] = CStringGetTextDatum(stmt->name ? stmt->name : "");
		values[1] = CStringGetTextDatum(stmt->sql);
		values[2] = BoolGetDatum(jit);
		values[3] = Float8GetDatum(cost);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	wl_spi_end(&spi);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("worklist.kept_statements() is not available on this platform")));
#endif
	return (Datum) 0;
}

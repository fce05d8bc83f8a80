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
 * Both the user switch and the pushed path are undone by wl_spi_end(), or,
 * when an error escapes, by (sub)transaction abort.
 *
 * Every statement reaches its rows through an index (each starts from the
 * tenant, the first column of every key), and is planned that way however
 * small its tables look at the time: statements are executed with
 * enable_seqscan off, which only matters when the plan cache (re)plans
 * them.  A plan made while a table is empty -- just after CREATE EXTENSION
 * and a VACUUM, say -- would otherwise be a sequential scan that the plan
 * cache keeps until the table is next analyzed, and never within one
 * transaction: loading rows through the verbs in a single transaction
 * then cost time quadratic in their number.
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

Oid
wl_owner(void)
{
	Oid			nsp = get_namespace_oid("worklist", true);
	HeapTuple	tup;
	Oid			owner;

	if (!OidIsValid(nsp))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"worklist\" is not installed in this database")));
	tup = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(nsp));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for namespace %u", nsp);
	owner = ((Form_pg_namespace) GETSTRUCT(tup))->nspowner;
	ReleaseSysCache(tup);
	return owner;
}

void
wl_spi_begin(WlSpi *spi)
{
	OverrideSearchPath path;
	Oid			owner = wl_owner();

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	GetUserIdAndSecContext(&spi->save_userid, &spi->save_sec_context);
	SetUserIdAndSecContext(owner,
						   spi->save_sec_context | SECURITY_LOCAL_USERID_CHANGE);

	path.schemas = NIL;
	path.addCatalog = true;
	path.addTemp = false;
	path.generation = 0;
	PushOverrideSearchPath(&path);

	spi->active = true;
}

void
wl_spi_end(WlSpi *spi)
{
	Assert(spi->active);
	PopOverrideSearchPath();
	SetUserIdAndSecContext(spi->save_userid, spi->save_sec_context);
	spi->active = false;
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
}

static void
prepare(WlStmt *stmt)
{
	if (stmt->plan == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare_cursor(stmt->sql, stmt->nargs,
											  stmt->argtypes,
											  stmt->generic ? CURSOR_OPT_GENERIC_PLAN : 0);

		if (plan == NULL)
			elog(ERROR, "could not prepare statement: %s: %s",
				 SPI_result_code_string(SPI_result), stmt->sql);
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "could not keep prepared statement");
		stmt->plan = plan;
	}
}

/*
 * Prepare stmt if need be and execute its kept plan, as SPI_execute_snapshot
 * does (snapshot NULL: as SPI_execute_plan does), with sequential scans
 * disabled for any planning that happens meanwhile (see the head of this
 * file).  Returns SPI_processed.
 */
static uint64
execute(WlStmt *stmt, Datum *values, const char *nulls, Snapshot snapshot,
		bool read_only, long count)
{
	bool		save_seqscan = enable_seqscan;
	int			rc;

	prepare(stmt);
	enable_seqscan = false;
	PG_TRY();
	{
		if (snapshot == NULL)
			rc = SPI_execute_plan(stmt->plan, values, nulls, read_only, count);
		else
			rc = SPI_execute_snapshot(stmt->plan, values, nulls, snapshot,
									  InvalidSnapshot, read_only, false, count);
	}
	PG_FINALLY();
	{
		enable_seqscan = save_seqscan;
	}
	PG_END_TRY();
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

void
wl_result_to_srf(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TupleDesc	desc = SPI_tuptable->tupdesc;

	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], desc, 1, &isnull);
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

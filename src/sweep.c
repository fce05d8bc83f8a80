/*-------------------------------------------------------------------------
 *
 * sweep.c
 *	  worklist.sweep(now, lim): apply expiry policies to overdue tasks and
 *	  run the ticket watchdog, for the current tenant.
 *
 * The two halves live with their data (wl_task_sweep in task.c,
 * wl_ticket_watchdog in ticket.c); this verb and the background worker
 * both call them, so a tick of the worker does exactly what a call of the
 * verb would.
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

#include "access/htup_details.h"
#include "funcapi.h"

PG_FUNCTION_INFO_V1(wl_sweep);

Datum
wl_sweep_result_datum(FunctionCallInfo fcinfo, const WlSweepResult *r)
{
	TupleDesc	desc;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	desc = BlessTupleDesc(desc);
	values[0] = Int32GetDatum(r->denied);
	values[1] = Int32GetDatum(r->proceeded);
	values[2] = Int32GetDatum(r->escalated);
	values[3] = Int32GetDatum(r->tickets_escalated);
	values[4] = Int32GetDatum(r->tickets_confirmed);
	return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
}

/* worklist.sweep(now timestamptz, lim int) RETURNS worklist.sweep_result */
Datum
wl_sweep(PG_FUNCTION_ARGS)
{
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_CLOCK(0, "now")));
	TimestampTz now = wl_arg_time(fcinfo, 0, "now");
	int32		lim = wl_arg_limit(fcinfo, 1, 1000, WL_SWEEP_LIMIT_MAX);
	WlSweepResult result = {0};
	WlSpi		spi;

	/* what the sweep writes (settled_at, watchdog events) is stamped with now */
	wl_check_finite(now, "now");

	wl_spi_begin(&spi);
	wl_task_sweep(tenant, now, lim, &result);
	wl_ticket_watchdog(tenant, now, lim, &result);
	wl_spi_end(&spi);

	PG_RETURN_DATUM(wl_sweep_result_datum(fcinfo, &result));
}

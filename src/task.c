/*-------------------------------------------------------------------------
 *
 * task.c
 *	  Tasks: pending human decisions (CONTRACT section 1).
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

void
wl_task_sweep(text *tenant, TimestampTz now, int32 lim, WlSweepResult *result)
{
	/* not yet implemented */
}

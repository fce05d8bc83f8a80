/*-------------------------------------------------------------------------
 *
 * retention.c
 *	  Retention: how long each tenant keeps settled work (CONTRACT
 *	  section 6), and the purge the sweep runs.
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

void
wl_retention_purge(text *tenant, TimestampTz now, int32 lim,
				   WlSweepResult *result)
{
}

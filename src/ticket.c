/*-------------------------------------------------------------------------
 *
 * ticket.c
 *	  Tickets: the append-only event log and its verbs (CONTRACT section 2).
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

void
wl_ticket_watchdog(text *tenant, TimestampTz now, int32 lim, WlSweepResult *result)
{
	/* not yet implemented */
}

/*-------------------------------------------------------------------------
 *
 * sweeper.c
 *	  The sweeper background worker (CONTRACT section 4).
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

void		wl_sweeper_init(void);

void
wl_sweeper_init(void)
{
}

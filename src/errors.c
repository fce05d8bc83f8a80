/*-------------------------------------------------------------------------
 *
 * errors.c
 *	  One reporting function per documented refusal.
 *
 * Verbs never call ereport() for a documented refusal themselves: they call
 * these, so a given SQLSTATE always comes with the same wording and the
 * same facts in its DETAIL.
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

void
wl_error_not_found(const char *what, const char *id)
{
	ereport(ERROR,
			(errcode(ERRCODE_WL_NOT_FOUND),
			 errmsg("%s \"%s\" does not exist", what, id)));
	pg_unreachable();
}

void
wl_error_excluded(const char *id, const char *actor)
{
	ereport(ERROR,
			(errcode(ERRCODE_WL_EXCLUDED),
			 errmsg("actor \"%s\" is excluded from task \"%s\"", actor, id),
			 errdetail("The task names this actor among those barred from deciding it.")));
	pg_unreachable();
}

void
wl_error_wrong_role(const char *id, const char *actor)
{
	ereport(ERROR,
			(errcode(ERRCODE_WL_WRONG_ROLE),
			 errmsg("actor \"%s\" has no role in the audience of task \"%s\"",
					actor, id),
			 errdetail("None of the roles given is among the roles the task is offered to.")));
	pg_unreachable();
}

void
wl_error_not_pending(const char *id, const char *state)
{
	ereport(ERROR,
			(errcode(ERRCODE_WL_NOT_PENDING),
			 errmsg("task \"%s\" is not pending", id),
			 errdetail("The task is %s.", state)));
	pg_unreachable();
}

void
wl_error_already_claimed(const char *id, const char *holder)
{
	ereport(ERROR,
			(errcode(ERRCODE_WL_ALREADY_CLAIMED),
			 errmsg("task \"%s\" is already claimed", id),
			 errdetail("It is held by \"%s\".", holder)));
	pg_unreachable();
}

void
wl_error_not_held(const char *id, const char *actor, const char *holder)
{
	if (holder)
		ereport(ERROR,
				(errcode(ERRCODE_WL_NOT_HELD),
				 errmsg("task \"%s\" is not held by \"%s\"", id, actor),
				 errdetail("It is held by \"%s\".", holder)));
	else
		ereport(ERROR,
				(errcode(ERRCODE_WL_NOT_HELD),
				 errmsg("task \"%s\" is not held by \"%s\"", id, actor),
				 errdetail("Nobody holds it.")));
	pg_unreachable();
}

void
wl_error_stale_fence(const char *run, int64 fence, bool has_current, int64 current)
{
	if (has_current)
		ereport(ERROR,
				(errcode(ERRCODE_WL_STALE_FENCE),
				 errmsg("stale fence for run \"%s\"", run),
				 errdetail("The write carries fence " INT64_FORMAT
						   "; the run's current fence is " INT64_FORMAT ".",
						   fence, current)));
	else
		ereport(ERROR,
				(errcode(ERRCODE_WL_STALE_FENCE),
				 errmsg("stale fence for run \"%s\"", run),
				 errdetail("The write carries fence " INT64_FORMAT
						   "; the run has no current fence because it was never claimed.",
						   fence)));
	pg_unreachable();
}

void
wl_error_run_held(const char *run, const char *holder, int64 fence,
				  TimestampTz expires_at)
{
	ereport(ERROR,
			(errcode(ERRCODE_WL_STALE_FENCE),
			 errmsg("run \"%s\" is held by \"%s\"", run, holder),
			 errdetail("The call carries no fence; the holder's fence is " INT64_FORMAT
					   ", its lease unexpired until %s.",
					   fence, timestamptz_to_str(expires_at)),
			 errhint("Pass the holder's fence, or wait until its lease expires.")));
	pg_unreachable();
}

void
wl_error_run_concluded(const char *run, TimestampTz at)
{
	ereport(ERROR,
			(errcode(ERRCODE_WL_RUN_CONCLUDED),
			 errmsg("run \"%s\" is concluded", run),
			 errdetail("It was concluded at %s; it takes no more writes, parks or claims.",
					   timestamptz_to_str(at))));
	pg_unreachable();
}

void
wl_error_bad_arg(const char *argname, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("argument \"%s\" %s", argname, why)));
	pg_unreachable();
}

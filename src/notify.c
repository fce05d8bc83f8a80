/*-------------------------------------------------------------------------
 *
 * notify.c
 *	  NOTIFY worklist: one message per change of a task, ticket or run.
 *
 * The payload is {"tenant":..., "kind":"task"|"ticket"|"run", "id":...,
 * "event":...}, plus "project" and "session" for a run, whose id alone does
 * not address it.  Identifiers are at most 256 characters, so the payload
 * stays far below NOTIFY's 8000-byte limit even when every character needs
 * a \u escape.  Like NOTIFY itself it is delivered at commit and dropped on
 * rollback.
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

#include "commands/async.h"
#include "lib/stringinfo.h"
#include "utils/json.h"

void
wl_notify(const char *tenant, const char *kind, const char *id,
		  const char *event)
{
	StringInfoData buf;

	if (!wl_notify_enabled)
		return;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"tenant\": ");
	escape_json(&buf, tenant);
	appendStringInfoString(&buf, ", \"kind\": ");
	escape_json(&buf, kind);
	appendStringInfoString(&buf, ", \"id\": ");
	escape_json(&buf, id);
	appendStringInfoString(&buf, ", \"event\": ");
	escape_json(&buf, event);
	appendStringInfoChar(&buf, '}');
	Async_Notify("worklist", buf.data);
	pfree(buf.data);
}

void
wl_notify_run(const char *tenant, const char *project, const char *session,
			  const char *run, const char *event)
{
	StringInfoData buf;

	if (!wl_notify_enabled)
		return;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"tenant\": ");
	escape_json(&buf, tenant);
	appendStringInfoString(&buf, ", \"kind\": \"run\", \"id\": ");
	escape_json(&buf, run);
	appendStringInfoString(&buf, ", \"event\": ");
	escape_json(&buf, event);
	appendStringInfoString(&buf, ", \"project\": ");
	escape_json(&buf, project);
	appendStringInfoString(&buf, ", \"session\": ");
	escape_json(&buf, session);
	appendStringInfoChar(&buf, '}');
	Async_Notify("worklist", buf.data);
	pfree(buf.data);
}

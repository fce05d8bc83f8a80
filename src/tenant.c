/*-------------------------------------------------------------------------
 *
 * tenant.c
 *	  The tenant setting, tenant bindings, and erasure.
 *
 * worklist.tenant scopes every verb to one tenant's rows.  On its own it is
 * only scoping: any role can SET it.  A tenant becomes a boundary once it
 * is bound to roles (worklist.tenant_binding, written by grant_tenant and
 * revoke_tenant): then only members of a bound role, the extension owner
 * and superusers may act in it, and everybody else gets 42501 from every
 * verb and no rows through the row-level-security policies.
 *
 * Deciding "may the current role act in this tenant" needs a lookup in the
 * binding table and role-membership tests, and every verb call and every
 * row a policy filters asks it.  The answer is cached in this backend per
 * (tenant, role) and dropped whenever something it depends on may have
 * changed:
 *	 - the binding table: a statement trigger on it (binding_changed) sends
 *	   a relcache invalidation for it, which every backend sees at commit;
 *	 - role membership and role attributes: syscache callbacks on
 *	   AUTHMEMROLEMEM and AUTHOID.
 * A generation counter bumped by every invalidation keeps a lookup that
 * raced with an invalidation from being cached.
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(wl_visible_tenant_sql);
PG_FUNCTION_INFO_V1(wl_grant_tenant);
PG_FUNCTION_INFO_V1(wl_revoke_tenant);
PG_FUNCTION_INFO_V1(wl_erase_tenant);
PG_FUNCTION_INFO_V1(wl_binding_changed);

bool		wl_erasing = false;

/* One-entry cache of the last decision; see the file header. */
static char *cache_tenant = NULL;	/* in TopMemoryContext */
static Oid	cache_user = InvalidOid;
static bool cache_allowed = false;
static bool cache_valid = false;
static uint64 cache_generation = 0;
static Oid	binding_relid = InvalidOid;
static bool callbacks_registered = false;

static void
invalidate_cache(void)
{
	cache_valid = false;
	cache_generation++;
}

static void
relcache_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == binding_relid)
	{
		invalidate_cache();
		if (relid == binding_relid)
			binding_relid = InvalidOid; /* may have been dropped */
	}
}

static void
syscache_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	invalidate_cache();
}

static void
register_callbacks(void)
{
	if (callbacks_registered)
		return;
	CacheRegisterRelcacheCallback(relcache_callback, (Datum) 0);
	CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, syscache_callback, (Datum) 0);
	CacheRegisterSyscacheCallback(AUTHOID, syscache_callback, (Datum) 0);
	callbacks_registered = true;
}

/* Ask the binding table.  Runs SPI as the owner. */
static bool
lookup_allowed(const char *tenant, Oid user)
{
	static WlStmt stmt = {
		"SELECT b.role::pg_catalog.oid FROM worklist.tenant_binding b"
		" WHERE b.tenant OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}
	};
	WlSpi		spi;
	Datum		values[1];
	bool		allowed = false;
	Oid			owner;
	uint64		n;

	if (!OidIsValid(binding_relid))
		binding_relid = get_relname_relid("tenant_binding",
										  get_namespace_oid("worklist", false));

	values[0] = CStringGetTextDatum(tenant);
	wl_spi_begin(&spi);
	owner = GetUserId();		/* wl_spi_begin switched to the owner */
	/*
	 * The latest committed bindings, not the transaction's snapshot: the
	 * answer is cached beyond this transaction, and a REPEATABLE READ
	 * snapshot older than a binding must not cache "open".
	 */
	n = wl_exec_latest(&stmt, values, NULL);
	if (n == 0)
		allowed = true;			/* an unbound tenant is open */
	else if (superuser_arg(user) || is_member_of_role(user, owner))
		allowed = true;
	else
	{
		for (uint64 i = 0; i < n && !allowed; i++)
		{
			bool		isnull;
			Oid			role = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
															  SPI_tuptable->tupdesc,
															  1, &isnull));

			if (!isnull && is_member_of_role(user, role))
				allowed = true;
		}
	}
	wl_spi_end(&spi);
	return allowed;
}

/* May the current user act in tenant?  Cached; see the file header. */
static bool
tenant_allowed(const char *tenant)
{
	Oid			user = GetUserId();
	uint64		generation;
	bool		allowed;

	register_callbacks();

	/*
	 * A binding committed by another session must count from our next call
	 * even inside an open transaction, where no new lock would make us
	 * read the invalidation queue otherwise.
	 */
	AcceptInvalidationMessages();
	if (cache_valid && cache_user == user && strcmp(cache_tenant, tenant) == 0)
		return cache_allowed;

	generation = cache_generation;
	allowed = lookup_allowed(tenant, user);
	if (generation == cache_generation)
	{
		if (cache_tenant)
			pfree(cache_tenant);
		cache_tenant = MemoryContextStrdup(TopMemoryContext, tenant);
		cache_user = user;
		cache_allowed = allowed;
		cache_valid = true;
	}
	return allowed;
}

/*
 * Empty, oversized or malformed tenant setting?  A value set with SQL is
 * valid text, but one from the startup packet (PGOPTIONS) or from
 * postgresql.conf reaches us unchecked, and must not be stored as a text
 * value that cannot be read back.
 */
static const char *
tenant_problem(const char *tenant)
{
	size_t		len = strlen(tenant);

	if (len == 0)
		return "must not be empty";
	if (len > (size_t) WL_IDENT_MAX * pg_database_encoding_max_length())
		return "must be at most 256 characters";
	if (!pg_verifymbstr(tenant, (int) len, true))
		return "must be valid in the database encoding";
	if (len > WL_IDENT_MAX &&
		pg_mbstrlen_with_len(tenant, (int) len) > WL_IDENT_MAX)
		return "must be at most 256 characters";
	return NULL;
}

text *
wl_tenant_enter(void)
{
	const char *tenant = wl_tenant_setting ? wl_tenant_setting : "";
	const char *problem = tenant_problem(tenant);

	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("setting \"worklist.tenant\" %s", problem)));
	if (!tenant_allowed(tenant))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for tenant \"%s\"", tenant),
				 errdetail("The tenant is bound to roles that role \"%s\" is not a member of.",
						   GetUserNameFromId(GetUserId(), false))));
	return cstring_to_text(tenant);
}

text *
wl_tenant_visible(void)
{
	const char *tenant = wl_tenant_setting ? wl_tenant_setting : "";

	if (tenant_problem(tenant) || !tenant_allowed(tenant))
		return NULL;
	return cstring_to_text(tenant);
}

/*
 * worklist.visible_tenant() RETURNS text
 *
 * What the row-level-security policies compare the tenant column with:
 * the current tenant when the current role may act in it, else NULL (so no
 * row matches).
 */
Datum
wl_visible_tenant_sql(PG_FUNCTION_ARGS)
{
	text	   *t = wl_tenant_visible();

	if (t == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(t);
}

/* The role argument of grant_tenant / revoke_tenant. */
static Oid
role_arg(FunctionCallInfo fcinfo, int argno)
{
	Oid			role = DatumGetObjectId(wl_arg_required(fcinfo, argno, "role"));

	/* regrole input accepts any number; a binding must name a real role */
	if (!SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(role)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role with OID %u does not exist", role)));
	return role;
}

/* worklist.grant_tenant(tenant text, role regrole) RETURNS void */
Datum
wl_grant_tenant(PG_FUNCTION_ARGS)
{
	static WlStmt stmt = {
		"INSERT INTO worklist.tenant_binding (tenant, role)"
		" VALUES ($1, $2::pg_catalog.regrole) ON CONFLICT DO NOTHING",
		2, {TEXTOID, OIDOID}
	};
	text	   *tenant = wl_arg_ident(fcinfo, 0, "tenant");
	Oid			role = role_arg(fcinfo, 1);
	WlSpi		spi;
	Datum		values[2];

	values[0] = PointerGetDatum(tenant);
	values[1] = ObjectIdGetDatum(role);
	wl_spi_begin(&spi);
	wl_exec(&stmt, values, NULL, false, 0);
	wl_spi_end(&spi);
	PG_RETURN_VOID();
}

/* worklist.revoke_tenant(tenant text, role regrole) RETURNS void */
Datum
wl_revoke_tenant(PG_FUNCTION_ARGS)
{
	static WlStmt stmt = {
		"DELETE FROM worklist.tenant_binding"
		" WHERE tenant OPERATOR(pg_catalog.=) $1"
		" AND role::pg_catalog.oid OPERATOR(pg_catalog.=) $2",
		2, {TEXTOID, OIDOID}
	};
	text	   *tenant = wl_arg_ident(fcinfo, 0, "tenant");
	Oid			role = role_arg(fcinfo, 1);
	WlSpi		spi;
	Datum		values[2];

	values[0] = PointerGetDatum(tenant);
	values[1] = ObjectIdGetDatum(role);
	wl_spi_begin(&spi);
	wl_exec(&stmt, values, NULL, false, 0);
	wl_spi_end(&spi);
	PG_RETURN_VOID();
}

/*
 * worklist.erase_tenant() RETURNS bigint
 *
 * Deletes every row of the current tenant from every data table, children
 * before parents, and returns how many rows went.  Bindings stay: erasure
 * removes data, not access configuration.  The fence sequence is not
 * touched, so fences never rewind.
 */
Datum
wl_erase_tenant(PG_FUNCTION_ARGS)
{
	static WlStmt stmts[] = {
		{"DELETE FROM worklist.ticket_event WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}},
		{"DELETE FROM worklist.ticket WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}},
		{"DELETE FROM worklist.task WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}},
		{"DELETE FROM worklist.run_checkpoint WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}},
		{"DELETE FROM worklist.run_claim WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}},
		{"DELETE FROM worklist.run WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}},
	};
	text	   *tenant = wl_tenant_enter();
	WlSpi		spi;
	Datum		values[1];
	int64		total = 0;

	values[0] = PointerGetDatum(tenant);
	wl_spi_begin(&spi);
	wl_erasing = true;
	PG_TRY();
	{
		for (int i = 0; i < lengthof(stmts); i++)
			total += (int64) wl_exec(&stmts[i], values, NULL, false, 0);
	}
	PG_FINALLY();
	{
		wl_erasing = false;
	}
	PG_END_TRY();
	wl_spi_end(&spi);
	PG_RETURN_INT64(total);
}

/*
 * Statement trigger on worklist.tenant_binding: make every backend drop
 * its cached decisions when the bindings change (at commit for others,
 * at the next command for this one).
 */
Datum
wl_binding_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"binding_changed\" must be fired as a trigger")));
	CacheInvalidateRelcache(trigdata->tg_relation);
	invalidate_cache();
	return PointerGetDatum(NULL);
}

PG_FUNCTION_INFO_V1(wl_guard_truncate);

/*
 * BEFORE TRUNCATE trigger on every table: only the owner's role (or a
 * superuser) may empty a table, whatever was granted; erase_tenant is how
 * anybody else's rows leave.
 */
Datum
wl_guard_truncate(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"guard_truncate\" must be fired as a trigger")));
	if (!superuser() && !has_privs_of_role(GetUserId(), wl_owner()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to truncate table \"%s\"",
						RelationGetRelationName(trigdata->tg_relation)),
				 errdetail("Only the owner of extension \"worklist\" may empty its tables.")));
	return PointerGetDatum(NULL);
}

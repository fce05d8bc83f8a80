/*-------------------------------------------------------------------------
 *
 * tenant.c
 *	  The tenant setting, who may reach a tenant and as what, erasure.
 *
 * worklist.tenant scopes every verb to one tenant's rows.  Setting it is
 * not enough to act in a tenant: tenancy is closed.  A tenant is reachable
 * only by the extension owner and superusers (who act as admin everywhere)
 * and by members of a role bound to it (binding.c), who act as the widest
 * kind of the bindings they reach it through.  While the superuser-only
 * setting worklist.open_tenants is on, a tenant with no binding at all is
 * reachable by every role, acting as service.  Everybody else gets 42501
 * from every verb, worded the same whether or not the tenant has any
 * binding, and no rows through the row-level-security policies.
 *
 * Deciding "as what may the current role act in this tenant" needs a
 * lookup in the binding table and role-membership tests, and every verb
 * call and every row a policy filters asks it.  The answer is cached in
 * this backend per (tenant, role, open_tenants) and dropped whenever
 * something it depends on may have changed:
 *	 - the binding table: a statement trigger on it (binding.c) sends a
 *	   relcache invalidation for it, which every backend sees at commit;
 *	 - roles and role membership: syscache callbacks on AUTHOID and
 *	   AUTHMEMROLEMEM;
 *	 - the extension's owner: a syscache callback on NAMESPACEOID (see
 *	   wl_owner()).
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
PG_FUNCTION_INFO_V1(wl_guard_truncate);

bool		wl_erasing = false;
WlBinding	wl_caller_binding = WL_BINDING_NONE;

/* worklist.tenant and worklist.open_tenants */
char	   *wl_tenant_setting = NULL;
static bool open_tenants = false;

/* One-entry cache of the last decision; see the file header. */
static char *cache_tenant = NULL;	/* in TopMemoryContext */
static Oid	cache_user = InvalidOid;
static bool cache_open = false;
static WlBinding cache_binding = WL_BINDING_NONE;
static bool cache_bound = false;
static bool cache_valid = false;
static uint64 cache_generation = 0;
static Oid	binding_relid = InvalidOid;
static bool callbacks_registered = false;

void
wl_tenant_init(void)
{
	DefineCustomStringVariable("worklist.tenant",
							   "Tenant whose rows worklist verbs read and write.",
							   NULL,
							   &wl_tenant_setting,
							   "default",
							   PGC_USERSET,
							   0,
							   NULL, NULL, NULL);

	DefineCustomBoolVariable("worklist.open_tenants",
							 "Let every role reach a tenant that has no binding, acting as service.",
							 "Off: a tenant is reachable only through a binding, by its owner and by superusers.",
							 &open_tenants,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
}

void
wl_tenant_cache_reset(void)
{
	cache_valid = false;
	cache_generation++;
}

static void
relcache_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == binding_relid)
	{
		wl_tenant_cache_reset();
		if (relid == binding_relid)
			binding_relid = InvalidOid; /* may have been dropped */
	}
}

static void
syscache_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	wl_tenant_cache_reset();
}

static void
register_callbacks(void)
{
	if (callbacks_registered)
		return;
	CacheRegisterRelcacheCallback(relcache_callback, (Datum) 0);
	CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, syscache_callback, (Datum) 0);
	CacheRegisterSyscacheCallback(AUTHOID, syscache_callback, (Datum) 0);
	CacheRegisterSyscacheCallback(NAMESPACEOID, syscache_callback, (Datum) 0);
	callbacks_registered = true;
}

static WlBinding
binding_from_label(const char *label)
{
	if (strcmp(label, "admin") == 0)
		return WL_BINDING_ADMIN;
	if (strcmp(label, "service") == 0)
		return WL_BINDING_SERVICE;
	return WL_BINDING_MEMBER;
}

/* Ask the binding table.  Runs SPI as the owner. */
static WlBinding
lookup_binding(const char *tenant, Oid user, bool *bound)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT b.role::pg_catalog.oid, b.kind::pg_catalog.text"
		" FROM worklist.tenant_binding b"
		" WHERE b.tenant OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}, .name = "tenant.bindings"
	};
	WlSpi		spi;
	Datum		values[1];
	WlBinding	best = WL_BINDING_NONE;
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
	 * snapshot older than a binding must not cache what it no longer says.
	 */
	n = wl_exec_latest(&stmt, values, NULL);
	*bound = (n > 0);
	if (superuser_arg(user) || is_member_of_role(user, owner))
		best = WL_BINDING_ADMIN;
	else
	{
		for (uint64 i = 0; i < n; i++)
		{
			bool		isnull;
			Oid			role;
			WlBinding	kind;

			role = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
												  SPI_tuptable->tupdesc, 1, &isnull));
			/* a binding whose role is gone grants nothing */
			if (isnull || !OidIsValid(role) ||
				!SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(role)) ||
				!is_member_of_role(user, role))
				continue;
			kind = binding_from_label(SPI_getvalue(SPI_tuptable->vals[i],
												   SPI_tuptable->tupdesc, 2));
			if (kind > best)
				best = kind;
		}
		if (n == 0 && open_tenants)
			best = WL_BINDING_SERVICE;
	}
	wl_spi_end(&spi);
	return best;
}

WlBinding
wl_tenant_binding(const char *tenant, bool *bound)
{
	Oid			user = GetUserId();
	uint64		generation;
	WlBinding	binding;
	bool		is_bound;

	register_callbacks();

	/*
	 * A binding committed by another session must count from our next call
	 * even inside an open transaction, where no new lock would make us
	 * read the invalidation queue otherwise.
	 */
	AcceptInvalidationMessages();
	if (cache_valid && cache_user == user && cache_open == open_tenants &&
		strcmp(cache_tenant, tenant) == 0)
	{
		if (bound)
			*bound = cache_bound;
		return cache_binding;
	}

	generation = cache_generation;
	binding = lookup_binding(tenant, user, &is_bound);
	if (generation == cache_generation)
	{
		if (cache_tenant)
			pfree(cache_tenant);
		cache_tenant = MemoryContextStrdup(TopMemoryContext, tenant);
		cache_user = user;
		cache_open = open_tenants;
		cache_binding = binding;
		cache_bound = is_bound;
		cache_valid = true;
	}
	if (bound)
		*bound = is_bound;
	return binding;
}

/*
 * Empty, oversized or malformed tenant name?  A value set with SQL is
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

/* The refusal of a tenant the current role cannot reach (42501). */
static void
error_no_reach(const char *tenant)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for tenant \"%s\"", tenant),
			 errdetail("Role \"%s\" reaches this tenant through no binding.",
					   GetUserNameFromId(GetUserId(), false)),
			 errhint("A tenant is reached through a binding made with worklist.grant_tenant.")));
	pg_unreachable();
}

text *
wl_tenant_enter(void)
{
	const char *tenant = wl_tenant_setting ? wl_tenant_setting : "";
	const char *problem = tenant_problem(tenant);
	WlBinding	binding;

	wl_caller_binding = WL_BINDING_NONE;
	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("setting \"worklist.tenant\" %s", problem)));
	binding = wl_tenant_binding(tenant, NULL);
	if (binding == WL_BINDING_NONE)
		error_no_reach(tenant);
	wl_caller_binding = binding;
	return cstring_to_text(tenant);
}

/* The tenant-entering rule without raising: NULL when the role may not act. */
static text *
tenant_visible(void)
{
	const char *tenant = wl_tenant_setting ? wl_tenant_setting : "";

	if (tenant_problem(tenant) ||
		wl_tenant_binding(tenant, NULL) == WL_BINDING_NONE)
		return NULL;
	return cstring_to_text(tenant);
}

/*
 * Is the tenant reached only because worklist.open_tenants is on (it has
 * no binding)?  Such tenants take no entry of the shared tenant table:
 * anybody may make them up while the setting is on, and the table is
 * shared by every database of the cluster, so they must not be able to
 * fill it for the bound tenants of any database.  Their counters are not
 * kept and their notifications are sent at their transaction's commit.
 */
bool
wl_tenant_open_only(const char *tenant)
{
	bool		bound;

	if (!open_tenants)
		return false;
	(void) wl_tenant_binding(tenant, &bound);
	return !bound;
}

void
wl_require_binding(WlBinding at_least, const char *verb)
{
	static const char *const names[] = {"none", "member", "service", "admin"};

	if (wl_caller_binding >= at_least)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for %s in tenant \"%s\"", verb,
					wl_tenant_setting),
			 errdetail("It needs a binding of kind %s or wider; role \"%s\" acts here as %s.",
					   names[at_least], GetUserNameFromId(GetUserId(), false),
					   names[wl_caller_binding])));
}

/*
 * worklist.visible_tenant() RETURNS text
 *
 * What the row-level-security policies compare the tenant column with:
 * the current tenant when the current role may reach it, else NULL (so no
 * row matches).
 */
Datum
wl_visible_tenant_sql(PG_FUNCTION_ARGS)
{
	text	   *t = tenant_visible();

	if (t == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(t);
}

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

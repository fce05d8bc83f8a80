/*-------------------------------------------------------------------------
 *
 * binding.c
 *	  Tenant bindings: grant_tenant, revoke_tenant, the bindings view, and
 *	  the role_ref type that makes a binding follow its role.
 *
 * A binding ties a tenant to a role with a kind (member, service, admin;
 * see tenant.c for what each allows).  It must apply to the role it was
 * granted to and to no other role, ever:
 *
 *	 - within a cluster a role is its OID, which PostgreSQL never gives to
 *	   another role while the counter of OIDs has not wrapped around.  So
 *	   the binding table stores the OID, and a binding whose role was
 *	   dropped grants nothing (tenant.c checks that the role exists) but
 *	   still counts as a binding: its tenant stays closed.
 *	 - across clusters (pg_dump and restore), OIDs mean nothing, so the
 *	   column has a type of its own, worklist.role_ref: stored as the OID,
 *	   written out as the role's (quoted) name, and read back by resolving
 *	   that name.  pg_dump therefore writes bindings by role name, and the
 *	   restore binds them to the roles of that name in the new cluster,
 *	   whatever their OIDs.  A binding whose role no longer exists is
 *	   written as "(dropped)"; a name that cannot be resolved when it is
 *	   read back (a dump restored where that role was never created) is
 *	   read as a dropped role too.  Either way the binding arrives as one
 *	   that grants nothing and keeps its tenant closed; the other bindings
 *	   of the dump are restored as they were.  A bare number is never
 *	   accepted, so no dump can bind a tenant to whichever role happens to
 *	   have an OID.
 *
 * grant_tenant and revoke_tenant are executable by PUBLIC: they judge the
 * caller against the tenant named in their argument (not the tenant
 * setting) and refuse (42501) anybody who is not admin of it.
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"

#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

PG_FUNCTION_INFO_V1(wl_role_ref_in);
PG_FUNCTION_INFO_V1(wl_role_ref_out);
PG_FUNCTION_INFO_V1(wl_grant_tenant);
PG_FUNCTION_INFO_V1(wl_revoke_tenant);
PG_FUNCTION_INFO_V1(wl_administers);
PG_FUNCTION_INFO_V1(wl_binding_changed);
PG_FUNCTION_INFO_V1(wl_bindings);

/* How a binding whose role is gone is written out. */
#define ROLE_REF_DROPPED "(dropped)"

/*
 * worklist.role_ref input: a role name as quote_identifier writes it, or
 * "(dropped)".  A name no role has reads as a dropped role; anything that
 * is not one identifier is refused.  A bare number names no role: it
 * reads as a dropped role, never as the role that has that OID.
 */
Datum
wl_role_ref_in(PG_FUNCTION_ARGS)
{
	char	   *s = PG_GETARG_CSTRING(0);
	char	   *copy;
	List	   *names;

	if (strcmp(s, ROLE_REF_DROPPED) == 0)
		PG_RETURN_OID(InvalidOid);
	/* never an OID: a bare number names no role */
	if (s[0] >= '0' && s[0] <= '9')
		PG_RETURN_OID(InvalidOid);
	copy = pstrdup(s);
	if (!SplitIdentifierString(copy, ',', &names) || list_length(names) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%s\"",
						"worklist.role_ref", s),
				 errdetail("A role reference is one role name, or \"%s\".",
						   ROLE_REF_DROPPED)));
	PG_RETURN_OID(get_role_oid((char *) linitial(names), true));
}

/* worklist.role_ref output: the role's name, quoted as needed. */
Datum
wl_role_ref_out(PG_FUNCTION_ARGS)
{
	Oid			role = PG_GETARG_OID(0);
	char	   *name = OidIsValid(role) ? GetUserNameFromId(role, true) : NULL;

	if (name == NULL)
		PG_RETURN_CSTRING(pstrdup(ROLE_REF_DROPPED));
	PG_RETURN_CSTRING(pstrdup(quote_identifier(name)));
}

/*
 * The tenant argument of grant_tenant / revoke_tenant, and the caller's
 * right to administer it: 22023 for an invalid name, then 42501 unless the
 * caller is admin of that tenant.
 */
static text *
administered_tenant(FunctionCallInfo fcinfo, int argno, const char *verb)
{
	text	   *tenant = wl_arg_ident(fcinfo, argno, "tenant");

	if (wl_tenant_binding(text_to_cstring(tenant), NULL) != WL_BINDING_ADMIN)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for %s on tenant \"%s\"",
						verb, text_to_cstring(tenant)),
				 errdetail("Only an admin of a tenant, the owner of extension \"worklist\" and superusers may change its bindings.")));
	return tenant;
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

/*
 * worklist.grant_tenant(tenant text, role regrole,
 *						 kind worklist.binding_kind DEFAULT 'member')
 *	RETURNS void
 *
 * Binds the tenant to the role, or changes the kind of the existing
 * binding.
 */
Datum
wl_grant_tenant(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"INSERT INTO worklist.tenant_binding AS b (tenant, role, kind)"
		" VALUES ($1, $2::worklist.role_ref, $3::worklist.binding_kind)"
		" ON CONFLICT (tenant, role)"
		"  WHERE role::pg_catalog.oid OPERATOR(pg_catalog.<>) 0"
		" DO UPDATE SET kind = EXCLUDED.kind"
		"  WHERE b.kind OPERATOR(pg_catalog.<>) EXCLUDED.kind",
		3, {TEXTOID, OIDOID, TEXTOID}, .name = "binding.grant"
	};
	text	   *tenant = administered_tenant(fcinfo, 0, "grant_tenant");
	Oid			role = role_arg(fcinfo, 1);
	Datum		kind = wl_arg_required(fcinfo, 2, "kind");
	WlSpi		spi;
	Datum		values[3];

	values[0] = PointerGetDatum(tenant);
	values[1] = ObjectIdGetDatum(role);
	values[2] = CStringGetTextDatum(wl_enum_label(kind));
	wl_spi_begin(&spi);
	wl_exec(&stmt, values, NULL, false, 0);
	wl_spi_end(&spi);
	PG_RETURN_VOID();
}

/* worklist.revoke_tenant(tenant text, role regrole) RETURNS void */
Datum
wl_revoke_tenant(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"DELETE FROM worklist.tenant_binding"
		" WHERE tenant OPERATOR(pg_catalog.=) $1"
		" AND role::pg_catalog.oid OPERATOR(pg_catalog.=) $2",
		2, {TEXTOID, OIDOID}, .name = "binding.revoke"
	};
	text	   *tenant = administered_tenant(fcinfo, 0, "revoke_tenant");
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
 * worklist.administers(tenant text) RETURNS boolean
 *
 * Whether the current role is admin of the tenant: the filter of the
 * worklist.bindings view.  NULL or an invalid name is false.
 */
Datum
wl_administers(PG_FUNCTION_ARGS)
{
	text	   *tenant;
	Size		len;

	if (PG_ARGISNULL(0))
		PG_RETURN_BOOL(false);
	tenant = PG_GETARG_TEXT_PP(0);
	len = VARSIZE_ANY_EXHDR(tenant);
	if (len == 0 || len > (Size) WL_IDENT_MAX * 4)
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(wl_tenant_binding(text_to_cstring(tenant), NULL) == WL_BINDING_ADMIN);
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
	wl_tenant_cache_reset();
	return PointerGetDatum(NULL);
}

/*
 * worklist.bindings() RETURNS SETOF (tenant, role, kind): the bindings the
 * caller may administer, by tenant, then role name; role is NULL for a
 * binding whose role no longer exists.  The view worklist.bindings reads
 * it.
 *
 * What the caller may not administer is never read: not filtered out of a
 * scan of every binding (a plan over the table, with a condition of the
 * caller's own pushed beneath the filter, would count the rows it
 * removed), but left unvisited.  The owner and superusers administer
 * every tenant; anybody else reaches, through the index on role, the
 * admin bindings of the roles it is a member of, and from their tenants
 * the bindings of those tenants only.  So the cost follows what the
 * caller may see, not the number of tenants.
 */
Datum
wl_bindings(PG_FUNCTION_ARGS)
{
	static WlStmt all WL_KEPT = {
		"SELECT b.tenant, r.oid::pg_catalog.regrole, b.kind"
		" FROM worklist.tenant_binding b"
		" LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) b.role::pg_catalog.oid"
		" ORDER BY b.tenant, r.rolname",
		0, {InvalidOid},
		.generic = true, .name = "binding.list.all"
	};
	static WlStmt mine WL_KEPT = {
		"WITH RECURSIVE mine(role) AS ("
		" SELECT $1::pg_catalog.oid"
		" UNION"
		" SELECT m.roleid FROM pg_catalog.pg_auth_members m, mine"
		"  WHERE m.member OPERATOR(pg_catalog.=) mine.role),"
		" administered AS ("
		" SELECT DISTINCT a.tenant FROM mine, worklist.tenant_binding a"
		"  WHERE a.role OPERATOR(worklist.=) mine.role::worklist.role_ref"
		"    AND a.kind OPERATOR(pg_catalog.=) 'admin'::worklist.binding_kind)"
		" SELECT b.tenant, r.oid::pg_catalog.regrole, b.kind"
		" FROM administered t"
		" JOIN worklist.tenant_binding b ON b.tenant OPERATOR(pg_catalog.=) t.tenant"
		" LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) b.role::pg_catalog.oid"
		" ORDER BY b.tenant, r.rolname",
		1, {OIDOID},
		.generic = true, .name = "binding.list.administered"
	};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[1];
	bool		every;
	WlSpi		spi;
	uint64		n;

	InitMaterializedSRF(fcinfo, 0);
	every = superuser() || has_privs_of_role(GetUserId(), wl_owner());
	values[0] = ObjectIdGetDatum(GetUserId());

	wl_spi_begin(&spi);
	n = wl_exec(every ? &all : &mine, values, NULL, true, 0);
	for (uint64 i = 0; i < n; i++)
	{
		Datum		row[3];
		bool		isnull[3];

		for (int col = 0; col < 3; col++)
			row[col] = wl_result_datum(i, col + 1, &isnull[col]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row, isnull);
	}
	wl_spi_end(&spi);
	return (Datum) 0;
}

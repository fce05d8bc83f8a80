-- worklist: core (tenancy, bindings, erasure)

\echo Use "CREATE EXTENSION worklist" to load this file. \quit

-- The schema is the extension's own: created here, so it is a member and
-- DROP EXTENSION removes it with everything in it.  A schema of that name
-- made in advance (by anybody) makes CREATE EXTENSION fail instead of
-- adopting whatever was put in it.
CREATE SCHEMA worklist;

-- The tenant the row-level-security policies compare rows with: the
-- current tenant when the current role may act in it, else NULL.
CREATE FUNCTION worklist.visible_tenant() RETURNS text
	AS 'MODULE_PATHNAME', 'wl_visible_tenant_sql'
	LANGUAGE C STABLE PARALLEL RESTRICTED;
COMMENT ON FUNCTION worklist.visible_tenant() IS
	'Current tenant if the current role may act in it, else NULL (used by row-level security)';

-- Roles a tenant is bound to.  A tenant with no row here is open.
CREATE TABLE worklist.tenant_binding (
	tenant	text NOT NULL,
	role	regrole NOT NULL,
	PRIMARY KEY (tenant, role)
);

CREATE FUNCTION worklist.binding_changed() RETURNS trigger
	AS 'MODULE_PATHNAME', 'wl_binding_changed'
	LANGUAGE C;
CREATE TRIGGER binding_changed
	AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON worklist.tenant_binding
	FOR EACH STATEMENT EXECUTE FUNCTION worklist.binding_changed();

CREATE FUNCTION worklist.grant_tenant(tenant text, role regrole) RETURNS void
	AS 'MODULE_PATHNAME', 'wl_grant_tenant'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.grant_tenant(text, regrole) IS
	'Bind a tenant to a role: once bound, only members of bound roles may act in it';

CREATE FUNCTION worklist.revoke_tenant(tenant text, role regrole) RETURNS void
	AS 'MODULE_PATHNAME', 'wl_revoke_tenant'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.revoke_tenant(text, regrole) IS
	'Remove a binding of a tenant to a role (no-op when absent)';

CREATE FUNCTION worklist.erase_tenant() RETURNS bigint
	AS 'MODULE_PATHNAME', 'wl_erase_tenant'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.erase_tenant() IS
	'Delete every row of the current tenant; returns how many rows were removed';

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

-- How a role reaches a tenant (see grant_tenant).
CREATE TYPE worklist.binding_kind AS ENUM ('member', 'service', 'admin');

-- A role, as a binding refers to it: stored as the role's OID, written
-- out as its name ("(dropped)" once the role is gone) and read back by
-- resolving the name, so that pg_dump restores bindings by role name and
-- never by number.  A name no role has reads as a dropped role.
CREATE TYPE worklist.role_ref;
CREATE FUNCTION worklist.role_ref_in(cstring) RETURNS worklist.role_ref
	AS 'MODULE_PATHNAME', 'wl_role_ref_in'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION worklist.role_ref_out(worklist.role_ref) RETURNS cstring
	AS 'MODULE_PATHNAME', 'wl_role_ref_out'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE TYPE worklist.role_ref (
	INPUT = worklist.role_ref_in,
	OUTPUT = worklist.role_ref_out,
	LIKE = pg_catalog.oid
);
COMMENT ON TYPE worklist.role_ref IS
	'A role a binding refers to: its OID, written out as its name';
CREATE CAST (worklist.role_ref AS pg_catalog.oid) WITHOUT FUNCTION;
CREATE CAST (pg_catalog.oid AS worklist.role_ref) WITHOUT FUNCTION;

-- Comparison by OID (an index on bindings; logical replication of them,
-- which finds rows by comparing every column).
CREATE FUNCTION worklist.role_ref_eq(worklist.role_ref, worklist.role_ref) RETURNS boolean
	AS 'oideq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION worklist.role_ref_ne(worklist.role_ref, worklist.role_ref) RETURNS boolean
	AS 'oidne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION worklist.role_ref_lt(worklist.role_ref, worklist.role_ref) RETURNS boolean
	AS 'oidlt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION worklist.role_ref_le(worklist.role_ref, worklist.role_ref) RETURNS boolean
	AS 'oidle' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION worklist.role_ref_gt(worklist.role_ref, worklist.role_ref) RETURNS boolean
	AS 'oidgt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION worklist.role_ref_ge(worklist.role_ref, worklist.role_ref) RETURNS boolean
	AS 'oidge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION worklist.role_ref_cmp(worklist.role_ref, worklist.role_ref) RETURNS integer
	AS 'btoidcmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR worklist.= (
	LEFTARG = worklist.role_ref, RIGHTARG = worklist.role_ref,
	FUNCTION = worklist.role_ref_eq,
	COMMUTATOR = OPERATOR(worklist.=), NEGATOR = OPERATOR(worklist.<>),
	RESTRICT = eqsel, JOIN = eqjoinsel, MERGES);
CREATE OPERATOR worklist.<> (
	LEFTARG = worklist.role_ref, RIGHTARG = worklist.role_ref,
	FUNCTION = worklist.role_ref_ne,
	COMMUTATOR = OPERATOR(worklist.<>), NEGATOR = OPERATOR(worklist.=),
	RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR worklist.< (
	LEFTARG = worklist.role_ref, RIGHTARG = worklist.role_ref,
	FUNCTION = worklist.role_ref_lt,
	COMMUTATOR = OPERATOR(worklist.>), NEGATOR = OPERATOR(worklist.>=),
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR worklist.<= (
	LEFTARG = worklist.role_ref, RIGHTARG = worklist.role_ref,
	FUNCTION = worklist.role_ref_le,
	COMMUTATOR = OPERATOR(worklist.>=), NEGATOR = OPERATOR(worklist.>),
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR worklist.> (
	LEFTARG = worklist.role_ref, RIGHTARG = worklist.role_ref,
	FUNCTION = worklist.role_ref_gt,
	COMMUTATOR = OPERATOR(worklist.<), NEGATOR = OPERATOR(worklist.<=),
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR worklist.>= (
	LEFTARG = worklist.role_ref, RIGHTARG = worklist.role_ref,
	FUNCTION = worklist.role_ref_ge,
	COMMUTATOR = OPERATOR(worklist.<=), NEGATOR = OPERATOR(worklist.<),
	RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR CLASS worklist.role_ref_ops
	DEFAULT FOR TYPE worklist.role_ref USING btree AS
	OPERATOR 1 worklist.<,
	OPERATOR 2 worklist.<=,
	OPERATOR 3 worklist.=,
	OPERATOR 4 worklist.>=,
	OPERATOR 5 worklist.>,
	FUNCTION 1 worklist.role_ref_cmp(worklist.role_ref, worklist.role_ref);

-- Roles a tenant is bound to, and as what.  A binding whose role was
-- dropped (or could not be resolved by a restore) stays: it grants
-- nothing and keeps its tenant closed.  Such bindings share the value
-- "(dropped)", so only the bindings of existing roles are unique.
CREATE TABLE worklist.tenant_binding (
	tenant	text NOT NULL,
	role	worklist.role_ref NOT NULL,
	kind	worklist.binding_kind NOT NULL
);
CREATE INDEX tenant_binding_tenant ON worklist.tenant_binding (tenant);
CREATE UNIQUE INDEX tenant_binding_role ON worklist.tenant_binding (tenant, role)
	WHERE role::pg_catalog.oid OPERATOR(pg_catalog.<>) 0;
-- No key that logical replication could use (a dropped role's bindings
-- are not unique): a replicated revoke finds its row by every column.
ALTER TABLE worklist.tenant_binding REPLICA IDENTITY FULL;

CREATE FUNCTION worklist.binding_changed() RETURNS trigger
	AS 'MODULE_PATHNAME', 'wl_binding_changed'
	LANGUAGE C;
CREATE TRIGGER binding_changed
	AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON worklist.tenant_binding
	FOR EACH STATEMENT EXECUTE FUNCTION worklist.binding_changed();

CREATE FUNCTION worklist.grant_tenant(tenant text, role regrole,
		kind worklist.binding_kind DEFAULT 'member') RETURNS void
	AS 'MODULE_PATHNAME', 'wl_grant_tenant'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.grant_tenant(text, regrole, worklist.binding_kind) IS
	'Bind a tenant to a role as member, service or admin, or change the kind of its binding; admin of the tenant only';

CREATE FUNCTION worklist.revoke_tenant(tenant text, role regrole) RETURNS void
	AS 'MODULE_PATHNAME', 'wl_revoke_tenant'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.revoke_tenant(text, regrole) IS
	'Remove a binding of a tenant to a role (no-op when absent); admin of the tenant only';

CREATE FUNCTION worklist.administers(tenant text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'wl_administers'
	LANGUAGE C STABLE PARALLEL RESTRICTED;
COMMENT ON FUNCTION worklist.administers(text) IS
	'Whether the current role is admin of the tenant (owner and superusers are admin of every tenant)';

-- @since 0.4
-- The bindings the caller may administer; role is NULL for a binding whose
-- role no longer exists.  Read through a set-returning function that
-- visits only those bindings (src/binding.c), never as a filter over the
-- table: no plan of a query on the view, whatever its conditions, meets a
-- row the caller may not see, so EXPLAIN ANALYZE counts none of them.
CREATE INDEX tenant_binding_admin ON worklist.tenant_binding (role)
	WHERE kind OPERATOR(pg_catalog.=) 'admin'::worklist.binding_kind;

CREATE FUNCTION worklist.bindings(
	OUT tenant text, OUT role regrole, OUT kind worklist.binding_kind)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'wl_bindings'
	LANGUAGE C STABLE ROWS 10;
COMMENT ON FUNCTION worklist.bindings() IS
	'The tenant bindings of the tenants the current role administers (the rows of the view worklist.bindings)';

-- OR REPLACE: in an update it replaces 0.3's definition (a filter over the
-- table, marked security_barrier) in place, keeping the view's row type,
-- which another role's objects may use (dropping it would then fail).  In
-- an install nothing can be replaced: the schema was made above.
CREATE OR REPLACE VIEW worklist.bindings AS
	SELECT b.tenant, b.role, b.kind FROM worklist.bindings() b;
COMMENT ON VIEW worklist.bindings IS
	'Tenant bindings of the tenants the current role administers';
GRANT SELECT ON worklist.bindings TO PUBLIC;
-- @end

CREATE FUNCTION worklist.erase_tenant() RETURNS bigint
	AS 'MODULE_PATHNAME', 'wl_erase_tenant'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.erase_tenant() IS
	'Delete every row of the current tenant; returns how many rows were removed';

-- Every statement the verbs keep, and whether its plan would be compiled
-- by JIT (never: they are planned with jit off).  For the owner: a
-- regression test prints them, so that a change to the C that builds them
-- shows as SQL.
CREATE FUNCTION worklist.kept_statements(
	OUT name text, OUT sql text, OUT jit boolean, OUT cost double precision)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'wl_kept_statements'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.kept_statements() IS
	'The statements the verbs run, by name, with whether their plans would be compiled by JIT, and their estimated cost';
REVOKE EXECUTE ON FUNCTION worklist.kept_statements() FROM PUBLIC;

-- Closed tenancy and binding kinds.
--
-- Every existing binding becomes a service binding: what a binding meant
-- in 0.2 (its members named any actor, roles and instant).  Tenants with
-- no binding were open to every role in 0.2; they stay reachable only if
-- the operator sets worklist.open_tenants = on (superuser-only).

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

-- tenant_binding: role becomes a worklist.role_ref (the OIDs carry over),
-- bindings gain their kind, and the key on (tenant, role) becomes a
-- unique index over bindings of existing roles.
ALTER TABLE worklist.tenant_binding DROP CONSTRAINT tenant_binding_pkey;
ALTER TABLE worklist.tenant_binding
	ALTER COLUMN role TYPE worklist.role_ref
	USING role::pg_catalog.oid::worklist.role_ref;
ALTER TABLE worklist.tenant_binding
	ADD COLUMN kind worklist.binding_kind NOT NULL DEFAULT 'service';
ALTER TABLE worklist.tenant_binding ALTER COLUMN kind DROP DEFAULT;
CREATE INDEX tenant_binding_tenant ON worklist.tenant_binding (tenant);
CREATE UNIQUE INDEX tenant_binding_role ON worklist.tenant_binding (tenant, role)
	WHERE role::pg_catalog.oid OPERATOR(pg_catalog.<>) 0;
ALTER TABLE worklist.tenant_binding REPLICA IDENTITY FULL;

DROP FUNCTION worklist.grant_tenant(text, regrole);
DROP FUNCTION worklist.revoke_tenant(text, regrole);
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

-- The bindings the caller may administer; role is NULL for a binding
-- whose role no longer exists.
CREATE VIEW worklist.bindings WITH (security_barrier) AS
	SELECT b.tenant, r.oid::pg_catalog.regrole AS role, b.kind
	  FROM worklist.tenant_binding b
	  LEFT JOIN pg_catalog.pg_roles r
	    ON r.oid OPERATOR(pg_catalog.=) b.role::pg_catalog.oid
	 WHERE worklist.administers(b.tenant);
COMMENT ON VIEW worklist.bindings IS
	'Tenant bindings of the tenants the current role administers';

GRANT SELECT ON worklist.bindings TO PUBLIC;

CREATE FUNCTION worklist.kept_statements(
	OUT name text, OUT sql text, OUT jit boolean, OUT cost double precision)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'wl_kept_statements'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.kept_statements() IS
	'The statements the verbs run, by name, with whether their plans would be compiled by JIT, and their estimated cost';
REVOKE EXECUTE ON FUNCTION worklist.kept_statements() FROM PUBLIC;

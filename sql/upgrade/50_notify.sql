-- Notifications: a channel per tenant instead of NOTIFY worklist.
CREATE TABLE worklist.tenant_channel (
	tenant		text PRIMARY KEY,
	secret		bytea NOT NULL
		CHECK (pg_catalog.octet_length(secret) OPERATOR(pg_catalog.>=) 16),
	rotated_at	timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE worklist.tenant_channel IS
	'The secret each tenant''s notification channel is derived from';
-- as 90_security.sql does for every table of a fresh install
REVOKE ALL ON TABLE worklist.tenant_channel FROM PUBLIC;
ALTER TABLE worklist.tenant_channel ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON worklist.tenant_channel FOR SELECT
	USING (tenant OPERATOR(pg_catalog.=) worklist.visible_tenant());
SELECT pg_catalog.pg_extension_config_dump('worklist.tenant_channel', '');
CREATE TRIGGER guard_truncate BEFORE TRUNCATE ON worklist.tenant_channel
	FOR EACH STATEMENT EXECUTE FUNCTION worklist.guard_truncate();

CREATE FUNCTION worklist.channel() RETURNS text
	AS 'MODULE_PATHNAME', 'wl_channel'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.channel() IS
	'The notification channel of the current tenant, to LISTEN on';

CREATE FUNCTION worklist.rotate_channel() RETURNS text
	AS 'MODULE_PATHNAME', 'wl_rotate_channel'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.rotate_channel() IS
	'Give the current tenant a new notification channel and return it; the old one receives {"rotated": true}; admin of the tenant only';

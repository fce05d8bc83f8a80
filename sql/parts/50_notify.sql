-- worklist: notifications (doc/reference.md, section 9)
--
-- Each tenant has its own channel, named by a keyed hash of the tenant
-- under a secret of its own (src/notify.c).  The secret is made by the
-- tenant's first call of channel() and replaced by rotate_channel(); only
-- the extension owner can read it, and pg_dump keeps it (90_security.sql),
-- so a restore keeps the channel names.  erase_tenant() leaves it.

CREATE TABLE worklist.tenant_channel (
	tenant		text PRIMARY KEY,
	secret		bytea NOT NULL
		CHECK (pg_catalog.octet_length(secret) OPERATOR(pg_catalog.>=) 16),
	rotated_at	timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE worklist.tenant_channel IS
	'The secret each tenant''s notification channel is derived from';

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

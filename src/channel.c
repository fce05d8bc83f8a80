/*-------------------------------------------------------------------------
 *
 * channel.c
 *	  Notifications: each tenant's own channel, payloads that count what
 *	  changed, and how they are sent.
 *
 * Channel.  A tenant's channel is "worklist_" and 32 hex digits: the first
 * 16 bytes of HMAC-SHA256(secret, tenant), where the secret is 32 random
 * bytes kept in worklist.tenant_channel (readable by the extension owner
 * only, and dumped by pg_dump, so a restore keeps the names).  Nobody can
 * derive the name from the tenant's name; worklist.channel() gives it to
 * those who may reach the tenant (creating the secret on first use), and
 * worklist.rotate_channel() replaces the secret, sending {"rotated": true}
 * on the old channel at commit.  A tenant without a secret has no channel
 * anybody could listen on: nothing is sent for it.
 *
 * Payload.  A JSON object that counts, per kind and event, the changes
 * committed since the tenant's previous notification:
 * {"task": {"opened": 3, "claimed": 1}, "run": {"checkpointed": 2}};
 * kinds and events in the documented order, zeros left out.  No tenant
 * name, no id.
 *
 * What is sent is recorded beneath the verbs, in each transaction's record
 * of what it changed (change.c), which goes with a subtransaction that
 * rolls back and is dropped with a transaction that does.
 *
 * Sending, with the library preloaded: at commit the counts are added to
 * the tenant's entry in shared memory, the entry is queued, and the
 * database's sweeper woken (change.c).  The sweeper sends what waits
 * (wl_channel_send): one transaction, one NOTIFY per tenant with
 * counts.  So a verb's commit never takes PostgreSQL's notification lock,
 * which serialises every notifying commit of the cluster through its WAL
 * flush.  The sweeper sends at once when it is idle and at most once every
 * SEND_GAP_MS, so a stream of commits costs it a bounded number of
 * notifying commits per second; it also sends between the batches of a
 * long tick.  It waits at most 50 ms for PostgreSQL's notification lock
 * and passes over tenants whose channel row is locked (a rotation): their
 * counts go back to shared memory for a later send, so neither a commit
 * stuck on the lock stops the sweep nor is anything sent on a channel
 * after its rotation.  Counts taken for a send that fails otherwise are
 * lost (and logged at most once a minute): losing a notification never
 * loses work, listeners re-read.
 *
 * Sending, without preloading (and, preloaded, for the tenants that have
 * no room in shared memory): each transaction notifies at its own commit,
 * just before PostgreSQL queues its notifications, one payload per tenant
 * (wl_channel_send_now).
 *
 * worklist.notify = off records nothing.
 *
 * Shared state: the tenant entries and their list of entries waiting to
 * be sent, and each slot's notify_pending flag (shmem.c).
 *
 *-------------------------------------------------------------------------
 */
#include "channel.h"
#include "shmem.h"
#include "worker.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/async.h"
#include "commands/extension.h"
#include "common/hmac.h"
#include "common/sha2.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(wl_channel);
PG_FUNCTION_INFO_V1(wl_rotate_channel);

/* The sweeper sends at most once every this many milliseconds. */
#define SEND_GAP_MS			25
/* How long a send waits for PostgreSQL's notification lock. */
#define SEND_LOCK_TIMEOUT	"50ms"
/* After a send that failed, the next one waits this long. */
#define SEND_RETRY_MS		1000
/* Bytes of a tenant's secret, and of the digest the name shows. */
#define SECRET_LEN			32
#define CHANNEL_DIGEST_LEN	16
#define CHANNEL_PREFIX		"worklist_"

/* The kind and event of each change, as payloads name them. */
static const struct
{
	const char *kind;
	const char *event;
}			events[WL_CHANGE__N] = {
#define WL_CHANGE_NAMES(name, kind, event) [WL_CHANGE_##name] = {kind, event},
	WL_CHANGES(WL_CHANGE_NAMES)
#undef WL_CHANGE_NAMES
};

/* worklist.notify */
bool		wl_notify_enabled = true;

/* When this sweeper last sent (it sends again SEND_GAP_MS later at the soonest). */
static TimestampTz last_send = 0;
static TimestampTz send_retry_at = 0;
static TimestampTz send_failure_logged = 0;

void
wl_channel_init(void)
{
	DefineCustomBoolVariable("worklist.notify",
							 "Notify the tenant's channel of the changes of tasks, tickets and runs.",
							 "Off: changes made while it is off are not notified.",
							 &wl_notify_enabled,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
}

/* ----------
 * Payloads and channels
 * ----------
 */

/* The payload of some counts, or NULL when they are all zero. */
static char *
payload(const uint32 *counts)
{
	StringInfoData buf;
	const char *kind = NULL;

	initStringInfo(&buf);
	for (int i = 0; i < WL_CHANGE__N; i++)
	{
		if (counts[i] == 0)
			continue;
		if (kind == NULL || strcmp(kind, events[i].kind) != 0)
		{
			appendStringInfoString(&buf, kind == NULL ? "{" : "}, ");
			kind = events[i].kind;
			appendStringInfo(&buf, "\"%s\": {", kind);
		}
		else
			appendStringInfoString(&buf, ", ");
		appendStringInfo(&buf, "\"%s\": %u", events[i].event, counts[i]);
	}
	if (kind == NULL)
	{
		pfree(buf.data);
		return NULL;
	}
	appendStringInfoString(&buf, "}}");
	return buf.data;
}

/* The channel of a tenant under its secret: worklist_ and 32 hex digits. */
static char *
channel_name(const char *tenant, bytea *secret)
{
	pg_hmac_ctx *ctx = pg_hmac_create(PG_SHA256);
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	char	   *name;

	if (ctx == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	if (pg_hmac_init(ctx, (uint8 *) VARDATA_ANY(secret), VARSIZE_ANY_EXHDR(secret)) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) tenant, strlen(tenant)) < 0 ||
		pg_hmac_final(ctx, digest, sizeof(digest)) < 0)
	{
		const char *why = pg_hmac_error(ctx);

		pg_hmac_free(ctx);
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not compute the channel of a tenant: %s", why)));
	}
	pg_hmac_free(ctx);

	name = palloc(sizeof(CHANNEL_PREFIX) + 2 * CHANNEL_DIGEST_LEN);
	strcpy(name, CHANNEL_PREFIX);
	hex_encode((const char *) digest, CHANNEL_DIGEST_LEN,
			   name + strlen(CHANNEL_PREFIX));
	name[strlen(CHANNEL_PREFIX) + 2 * CHANNEL_DIGEST_LEN] = '\0';
	return name;
}

/*
 * Is the channel table there?  Not in a database whose extension is older
 * than the library, nor once the extension was dropped in this
 * transaction: then nothing is sent.
 */
static bool
channels_exist(void)
{
	Oid			nsp;

	/* the extension may have been dropped since the caches were read */
	AcceptInvalidationMessages();
	if (!OidIsValid(get_extension_oid("worklist", true)))
		return false;
	nsp = get_namespace_oid("worklist", true);
	return OidIsValid(nsp) && OidIsValid(get_relname_relid("tenant_channel", nsp));
}

/*
 * NOTIFY every tenant of tenants[] that has a channel with its payload.
 * SPI must be begun.  With lock, the channel rows are locked FOR KEY SHARE
 * first, passing over those somebody holds (a rotation, a first
 * channel() call): such a tenant is not notified, and sent[i] (when sent
 * is not NULL) stays false for it, so that its counts can wait for the
 * next send.  A rotation that begins later waits for this transaction, so
 * nothing is sent on a channel after its {"rotated": true}.
 */
static void
notify_tenants(int n, char **tenants, char **payloads, bool lock, bool *sent)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT c.tenant, c.secret FROM worklist.tenant_channel c"
		" WHERE c.tenant OPERATOR(pg_catalog.=) ANY ($1)",
		1, {TEXTARRAYOID}, .name = "notify.secrets"
	};
	static WlStmt locking WL_KEPT = {
		"SELECT c.tenant, c.secret FROM worklist.tenant_channel c"
		" WHERE c.tenant OPERATOR(pg_catalog.=) ANY ($1)"
		" FOR KEY SHARE OF c SKIP LOCKED",
		1, {TEXTARRAYOID}, .name = "notify.secrets.locked"
	};
	Datum	   *elems = palloc(sizeof(Datum) * n);
	Datum		values[1];
	uint64		rows;

	for (int i = 0; i < n; i++)
		elems[i] = CStringGetTextDatum(tenants[i]);
	values[0] = PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false,
												TYPALIGN_INT));
	rows = wl_exec(lock ? &locking : &stmt, values, NULL, !lock, 0);
	for (uint64 r = 0; r < rows; r++)
	{
		char	   *tenant = wl_result_cstring(r, 1);
		bool		isnull;
		bytea	   *secret = DatumGetByteaPP(wl_result_datum(r, 2, &isnull));

		for (int i = 0; i < n; i++)
			if (strcmp(tenants[i], tenant) == 0)
			{
				Async_Notify(channel_name(tenant, secret), payloads[i]);
				if (sent)
					sent[i] = true;
			}
	}
}

/* ----------
 * At a transaction's commit
 * ----------
 */
void
wl_channel_send_now(int count, char **tenants_in, uint32 **counts)
{
	int			n = 0;
	char	  **tenants = palloc(sizeof(char *) * Max(count, 1));
	char	  **payloads = palloc(sizeof(char *) * Max(count, 1));
	WlSpi		spi;

	for (int i = 0; i < count; i++)
	{
		char	   *p = payload(counts[i]);

		if (p == NULL)
			continue;
		tenants[n] = tenants_in[i];
		payloads[n++] = p;
	}
	if (n == 0 || !channels_exist())
		return;
	PushActiveSnapshot(GetTransactionSnapshot());
	wl_spi_begin(&spi);
	notify_tenants(n, tenants, payloads, false, NULL);
	wl_spi_end(&spi);
	PopActiveSnapshot();
}

/* ----------
 * With preloading: the sweeper sends
 * ----------
 */
long
wl_channel_due(void)
{
	TimestampTz now;

	if (!wl_shm_preloaded() || !wl_shm_notify_pending(MyDatabaseId))
		return -1;
	now = GetCurrentTimestamp();
	if (now < send_retry_at)
		return (long) ((send_retry_at - now) / 1000) + 1;
	if (TimestampDifferenceExceeds(last_send, now, SEND_GAP_MS))
		return 0;
	return SEND_GAP_MS - (long) ((now - last_send) / 1000);
}

/* Give counts that were not sent back to their tenant's entry. */
static void
put_back(const WlPendingEvents *p)
{
	WlTenantEntry *entry = wl_shm_tenant(MyDatabaseId, p->tenant, false);

	if (entry != NULL && wl_shm_tenant_add(entry, NULL, p->events))
		wl_shm_notify_wake(MyDatabaseId);
}

/*
 * Send what waits for this database: one transaction, one NOTIFY per
 * tenant.  PostgreSQL's notification lock, taken at the commit, is waited
 * for at most SEND_LOCK_TIMEOUT (any session's notifying commit holds it,
 * through a synchronous replica's confirmation too): the sweep must not
 * wait on it.  Counts that could not be sent because the lock was not had,
 * or because the tenant's channel row was held, are put back and sent
 * later; after such a failure the next send waits SEND_RETRY_MS.  Any
 * other error loses the counts (logged at most once a minute): losing a
 * notification never loses work.
 */
void
wl_channel_send(void)
{
	MemoryContext cxt = CurrentMemoryContext;
	WlPendingEvents *pending;
	int			taken;
	volatile bool committed = false;
	volatile bool retry = false;
	bool	   *sent;

	last_send = GetCurrentTimestamp();
	taken = wl_shm_take_events(MyDatabaseId, &pending);
	if (taken == 0)
		return;
	sent = palloc0(sizeof(bool) * taken);

	PG_TRY();
	{
		WlSpi		spi;
		char	  **tenants = palloc(sizeof(char *) * taken);
		char	  **payloads = palloc(sizeof(char *) * taken);

		for (int i = 0; i < taken; i++)
		{
			tenants[i] = pending[i].tenant;
			payloads[i] = payload(pending[i].events);
		}
		wl_worker_xact_begin("worklist sweeper: notifying");
		(void) set_config_option("lock_timeout", SEND_LOCK_TIMEOUT,
								 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
								 true, 0, false);
		if (channels_exist())
		{
			wl_spi_begin(&spi);
			notify_tenants(taken, tenants, payloads, true, sent);
			wl_spi_end(&spi);
		}
		else
		{
			/* no channels at all: nothing to send, nothing to keep */
			for (int i = 0; i < taken; i++)
				sent[i] = true;
		}
		wl_worker_xact_end();
		committed = true;
	}
	PG_CATCH();
	{
		ErrorData  *edata = wl_worker_recover(cxt);

		/* only the notification lock is worth waiting for again */
		retry = (edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE);
		if (!retry && wl_log_due(&send_failure_logged))
			ereport(LOG,
					(errmsg("worklist sweeper could not send the notifications of %d tenant(s): %s",
							taken, edata->message ? edata->message : "unknown error")));
		FreeErrorData(edata);
	}
	PG_END_TRY();

	if (!committed && !retry)
		return;					/* lost: listeners re-read anyway */
	if (!committed)
		send_retry_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													SEND_RETRY_MS);
	for (int i = 0; i < taken; i++)
		if (!committed || !sent[i])
			put_back(&pending[i]);
}

/* ----------
 * SQL interface
 * ----------
 */

/* The tenant's secret (NULL when it has none yet).  SPI must be begun. */
static bytea *
secret_of(text *tenant, bool for_update)
{
	static WlStmt read WL_KEPT = {
		"SELECT c.secret FROM worklist.tenant_channel c"
		" WHERE c.tenant OPERATOR(pg_catalog.=) $1",
		1, {TEXTOID}, .name = "notify.channel.read"
	};
	static WlStmt lock WL_KEPT = {
		"SELECT c.secret FROM worklist.tenant_channel c"
		" WHERE c.tenant OPERATOR(pg_catalog.=) $1 FOR UPDATE",
		1, {TEXTOID}, .name = "notify.rotate.lock"
	};
	Datum		values[1];
	bool		isnull;

	values[0] = PointerGetDatum(tenant);
	if (wl_exec(for_update ? &lock : &read, values, NULL, !for_update, 1) == 0)
		return NULL;
	return DatumGetByteaPP(wl_result_datum(0, 1, &isnull));
}

static bytea *
new_secret(void)
{
	bytea	   *secret = palloc(VARHDRSZ + SECRET_LEN);

	SET_VARSIZE(secret, VARHDRSZ + SECRET_LEN);
	if (!pg_strong_random(VARDATA(secret), SECRET_LEN))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random secret for a channel")));
	return secret;
}

/*
 * worklist.channel() RETURNS text
 *
 * The current tenant's channel, for LISTEN.  The tenant's secret is made
 * on the first call.
 */
Datum
wl_channel(PG_FUNCTION_ARGS)
{
	static WlStmt create WL_KEPT = {
		"INSERT INTO worklist.tenant_channel AS c (tenant, secret) VALUES ($1, $2)"
		" ON CONFLICT (tenant) DO UPDATE SET secret = c.secret"
		" RETURNING c.secret",
		2, {TEXTOID, BYTEAOID}, .name = "notify.channel.create"
	};
	text	   *tenant = wl_tenant_enter();
	WlSpi		spi;
	bytea	   *secret;
	char	   *name;

	wl_spi_begin(&spi);
	secret = secret_of(tenant, false);
	if (secret == NULL)
	{
		Datum		values[2];

		bool		isnull;

		/* made by a concurrent first call meanwhile: that one's is kept */
		values[0] = PointerGetDatum(tenant);
		values[1] = PointerGetDatum(new_secret());
		wl_exec(&create, values, NULL, false, 0);
		secret = DatumGetByteaPP(wl_result_datum(0, 1, &isnull));
	}
	name = channel_name(text_to_cstring(tenant), secret);
	wl_spi_end(&spi);
	PG_RETURN_TEXT_P(cstring_to_text(name));
}

/*
 * worklist.rotate_channel() RETURNS text
 *
 * A new channel for the current tenant (admin only); the old one receives
 * {"rotated": true} when the transaction commits.
 */
Datum
wl_rotate_channel(PG_FUNCTION_ARGS)
{
	static WlStmt rotate WL_KEPT = {
		"INSERT INTO worklist.tenant_channel AS c (tenant, secret) VALUES ($1, $2)"
		" ON CONFLICT (tenant) DO UPDATE"
		" SET secret = EXCLUDED.secret, rotated_at = pg_catalog.now()",
		2, {TEXTOID, BYTEAOID}, .name = "notify.rotate.replace"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES));
	char	   *tenant_c;
	WlSpi		spi;
	bytea	   *old;
	bytea	   *secret = new_secret();
	Datum		values[2];
	char	   *name;

	wl_require_binding(WL_BINDING_ADMIN, "rotate_channel");
	tenant_c = text_to_cstring(tenant);

	wl_spi_begin(&spi);
	old = secret_of(tenant, true);
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(secret);
	wl_exec(&rotate, values, NULL, false, 0);
	if (old != NULL && wl_notify_enabled)
		Async_Notify(channel_name(tenant_c, old), "{\"rotated\": true}");
	name = channel_name(tenant_c, secret);
	wl_spi_end(&spi);
	PG_RETURN_TEXT_P(cstring_to_text(name));
}

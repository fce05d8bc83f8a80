/*-------------------------------------------------------------------------
 *
 * worklist.h
 *	  The declarations every part of the extension shares: SQLSTATEs and
 *	  limits, the vocabulary of what changes and what is counted, and the
 *	  two lowest layers (worklist.c draws them all): errors, arguments and
 *	  SPI (ground), tenancy and trust.  Each layer above has a header of
 *	  its own: shmem.h and worker.h (ground too), channel.h, change.h,
 *	  hint.h, task.h, ticket.h, sweep.h.
 *
 * Every verb follows the same shape:
 *
 *		tenant = wl_tenant_enter();			-- 22023 empty, 42501 not bound
 *		... validate arguments (wl_arg_*) ...
 *		wl_spi_begin(&spi);					-- SPI as the extension owner,
 *											   search_path pinned
 *		... wl_exec(&stmt, values, nulls) ...
 *		wl_spi_end(&spi);
 *
 * so the order of checks the reference fixes (tenant, binding, arguments)
 * holds everywhere, and no verb can be steered by the caller's search_path
 * or needs the caller to hold any privilege on the tables.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_H
#define WORKLIST_H

#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

/* ----------
 * SQLSTATEs of the extension (class WL).
 * ----------
 */
#define ERRCODE_WL_NOT_FOUND		MAKE_SQLSTATE('W','L','0','0','1')
#define ERRCODE_WL_EXCLUDED			MAKE_SQLSTATE('W','L','0','0','2')
#define ERRCODE_WL_WRONG_ROLE		MAKE_SQLSTATE('W','L','0','0','3')
#define ERRCODE_WL_NOT_PENDING		MAKE_SQLSTATE('W','L','0','0','4')
#define ERRCODE_WL_ALREADY_CLAIMED	MAKE_SQLSTATE('W','L','0','0','5')
#define ERRCODE_WL_NOT_HELD			MAKE_SQLSTATE('W','L','0','0','6')
#define ERRCODE_WL_STALE_FENCE		MAKE_SQLSTATE('W','L','0','0','7')
#define ERRCODE_WL_RUN_CONCLUDED	MAKE_SQLSTATE('W','L','0','0','8')

/* Longest identifier accepted, in characters. */
#define WL_IDENT_MAX		256
/* A tenant name in bytes: 256 characters of at most 4 bytes, and the NUL. */
#define WL_TENANT_KEY_LEN	(WL_IDENT_MAX * 4 + 1)

/* Longest title or reason accepted, in characters. */
#define WL_TEXT_MAX			4096

/*
 * Most elements of an array argument (a ladder: rungs): no single call may
 * store what makes every later sweep or fold of the tenant slower.
 */
#define WL_ARRAY_MAX		1000
#define WL_LADDER_MAX		32

/* Bounds of every "lim" argument. */
#define WL_LIMIT_MAX		1000
#define WL_SWEEP_LIMIT_MAX	100000

/* ----------
 * Error reporting (errors.c): one function per refusal, so every verb
 * words them alike.  All of them raise ERROR and do not return.
 * ----------
 */
extern void wl_error_not_found(const char *what, const char *id) pg_attribute_noreturn();
extern void wl_error_excluded(const char *id, const char *actor) pg_attribute_noreturn();
extern void wl_error_wrong_role(const char *id, const char *actor) pg_attribute_noreturn();
extern void wl_error_not_pending(const char *id, const char *state) pg_attribute_noreturn();
extern void wl_error_already_claimed(const char *id, const char *holder) pg_attribute_noreturn();
extern void wl_error_not_held(const char *id, const char *actor, const char *holder) pg_attribute_noreturn();
extern void wl_error_stale_fence(const char *run, int64 fence,
								 bool has_current, int64 current) pg_attribute_noreturn();
/* an unfenced park or conclusion of a run somebody holds (WL007) */
extern void wl_error_run_held(const char *run, const char *holder, int64 fence,
							  TimestampTz expires_at) pg_attribute_noreturn();
extern void wl_error_run_concluded(const char *run, TimestampTz at) pg_attribute_noreturn();
extern void wl_error_bad_arg(const char *argname, const char *why) pg_attribute_noreturn();

/* ----------
 * Arguments (args.c).  Each takes the argument's name as the reference
 * spells it, which is what an error names.
 * ----------
 */
/* Defines worklist.max_document_size. */
extern void wl_args_init(void);
/* A required identifier: not NULL, not empty, at most 256 characters. */
extern text *wl_arg_ident(FunctionCallInfo fcinfo, int argno, const char *argname);
/* An optional identifier: NULL stays NULL, anything else must be valid. */
extern text *wl_arg_ident_opt(FunctionCallInfo fcinfo, int argno, const char *argname);
/* Is a (non-NULL) text datum a valid identifier?  Never raises. */
extern bool wl_ident_valid(Datum d);
/*
 * A text[] of identifiers: not NULL, one-dimensional, no NULL or invalid
 * element.  allow_empty decides whether '{}' is accepted.
 */
extern ArrayType *wl_arg_idents(FunctionCallInfo fcinfo, int argno,
								const char *argname, bool allow_empty);
/* The same, as its elements (palloc'd in *elems); returns how many. */
extern int	wl_arg_ident_elements(FunctionCallInfo fcinfo, int argno,
								  const char *argname, bool allow_empty,
								  Datum **elems);
/* Refuse (22023 naming the argument) an array of more than max elements. */
extern void wl_check_array_size(ArrayType *arr, const char *argname, int max);
/*
 * The elements of a one-dimensional array argument of elemtype: not NULL,
 * at most WL_ARRAY_MAX elements, none of them NULL (22023 naming the
 * argument).  Returns how many; *elems is palloc'd.
 */
extern int	wl_arg_elements(FunctionCallInfo fcinfo, int argno, const char *argname,
							Oid elemtype, Datum **elems);
/* A "lim": NULL means dflt; anything else is clamped to [1, max]. */
extern int32 wl_arg_limit(FunctionCallInfo fcinfo, int argno, int32 dflt, int32 max);
/* A timestamp that must be given (a "now" or an "at"). */
extern TimestampTz wl_arg_time(FunctionCallInfo fcinfo, int argno, const char *argname);
/*
 * Refuse a non-finite instant (22023 naming the argument) where one would
 * be stored or stamped on a row; returns t.
 */
extern TimestampTz wl_check_finite(TimestampTz t, const char *argname);
/*
 * Could the interval, added to some instant, land before it?  True when
 * any of its fields is negative: '1 mon -30 days' compares equal to zero,
 * yet added to 1 February it lands on 30 January.
 */
extern bool wl_interval_negative(const Interval *span);
/*
 * The interval in microseconds, as interval comparison counts it (a month
 * is 30 days, a day 24 hours): its sign is the sign interval_cmp() gives.
 */
extern int128 wl_interval_usec(const Interval *span);
/*
 * Refuse (22023 naming the argument) an interval that is not positive: a
 * negative field ('1 mon -30 days' included) or all fields zero; or that
 * is longer than 10,000 years (wl_check_interval_bound).
 */
extern void wl_check_positive_interval(Datum span, const char *argname);
/*
 * Refuse (22023) an interval longer than 10,000 years either way: added to
 * a present-day instant, a longer one could leave the range of timestamps.
 */
#define WL_INTERVAL_MAX_DAYS	((int64) 3652425)	/* 10,000 years */
extern void wl_check_interval_bound(Datum span, const char *argname);
/*
 * t + span in UTC, saturating at -infinity / infinity instead of leaving
 * the range of timestamps.
 */
extern TimestampTz wl_time_add(TimestampTz t, const Interval *span);
/* The label of an enum value (palloc'd). */
extern char *wl_enum_label(Datum value);
/* Any other argument that must not be NULL. */
extern Datum wl_arg_required(FunctionCallInfo fcinfo, int argno, const char *argname);
/*
 * A title or reason: at most WL_TEXT_MAX characters (22023).  NULL is
 * refused when required, else returned as NULL.
 */
extern text *wl_arg_text(FunctionCallInfo fcinfo, int argno, const char *argname,
						 bool required);
/* The same, at most max characters. */
extern text *wl_arg_text_upto(FunctionCallInfo fcinfo, int argno, const char *argname,
							  bool required, int max);
/* A jsonb document: not NULL, at most worklist.max_document_size bytes (54000). */
extern Datum wl_arg_document(FunctionCallInfo fcinfo, int argno, const char *argname);
/* Refuse (54000) a jsonb datum larger than worklist.max_document_size. */
extern void wl_check_document(Datum d, const char *argname);
/* Metadata beside a document: as wl_arg_document, NULL meaning '{}'. */
extern Datum wl_arg_metadata(FunctionCallInfo fcinfo, int argno, const char *argname);

/* ----------
 * Tenancy (tenant.c, binding.c) and trust (trust.c)
 * ----------
 */
/* As what a role reaches a tenant; wider kinds compare greater. */
typedef enum WlBinding
{
	WL_BINDING_NONE,			/* not at all */
	WL_BINDING_MEMBER,			/* acts only as itself, now */
	WL_BINDING_SERVICE,			/* names any actor, roles and instant */
	WL_BINDING_ADMIN			/* and administers the tenant */
} WlBinding;

/* Defines worklist.tenant and worklist.open_tenants. */
extern void wl_tenant_init(void);
/* worklist.tenant as set (not checked: see wl_tenant_enter). */
extern char *wl_tenant_setting;

/*
 * The tenant of this call after the first two documented checks: an empty
 * (or oversized) tenant is 22023, one the current role cannot reach is
 * 42501.  Sets wl_caller_binding.  Returns a text datum valid until the
 * end of the call.
 */
extern text *wl_tenant_enter(void);
/* As what the current call's role reaches its tenant (wl_tenant_enter). */
extern WlBinding wl_caller_binding;
/*
 * As what the current role reaches the tenant named (cached); *bound, when
 * not NULL, says whether the tenant has any binding at all.
 */
extern WlBinding wl_tenant_binding(const char *tenant, bool *bound);
/* Drop the cached decisions (binding.c, after a change of bindings). */
extern void wl_tenant_cache_reset(void);
/* Refuse (42501) a call whose binding is narrower than at_least. */
extern void wl_require_binding(WlBinding at_least, const char *verb);
/* Is the tenant reached only through worklist.open_tenants (unbound)? */
extern bool wl_tenant_open_only(const char *tenant);
/*
 * Is erase_tenant(), or the purge of tasks, running in this backend?  (Lets
 * it past append-only.)
 */
extern bool wl_erasing;

/*
 * A member binding's trust checks (42501), each a no-op for service and
 * admin bindings and for a NULL or malformed argument (left to argument
 * validation, which refuses it with 22023):
 *	 WL_TRUST_ACTOR	the argument names current_user;
 *	 WL_TRUST_ROLES	every element of the text[] argument names a role
 *					current_user is a member of;
 *	 WL_TRUST_CLOCK	the instant is within worklist.max_clock_skew of the
 *					transaction's now();
 *	 WL_TRUST_WRITE	the verb writes: the current role is not a group (no
 *					role is a member of it), and the statement started
 *					within worklist.max_clock_skew of the transaction's
 *					now().  Every verb that changes anything lists it first;
 *	 WL_TRUST_RECEIVER	the argument names whom work is passed to: an
 *					existing role that is not a group, and every element
 *					of the text[] argument roles_argno names a role that
 *					role is a member of.
 */
typedef enum WlTrustKind
{
	WL_TRUST_END,
	WL_TRUST_WRITE,
	WL_TRUST_ACTOR,
	WL_TRUST_ROLES,
	WL_TRUST_CLOCK,
	WL_TRUST_RECEIVER
} WlTrustKind;

typedef struct WlTrustArg
{
	WlTrustKind kind;
	int			argno;
	const char *argname;
	int			roles_argno;	/* WL_TRUST_RECEIVER: the receiver's roles */
	const char *roles_argname;
} WlTrustArg;

#define WL_WRITES				{WL_TRUST_WRITE, -1, NULL}
#define WL_ACTOR(argno, name)	{WL_TRUST_ACTOR, (argno), (name)}
#define WL_ROLES(argno, name)	{WL_TRUST_ROLES, (argno), (name)}
#define WL_CLOCK(argno, name)	{WL_TRUST_CLOCK, (argno), (name)}
#define WL_RECEIVER(argno, name, roles_argno, roles_name) \
	{WL_TRUST_RECEIVER, (argno), (name), (roles_argno), (roles_name)}
#define WL_TRUST(...)	((const WlTrustArg[]) {__VA_ARGS__, {WL_TRUST_END, 0, NULL}})

/* Defines worklist.max_clock_skew. */
extern void wl_trust_init(void);
/*
 * wl_tenant_enter(), then the trust checks listed, in order: the order of
 * checks every verb follows (tenant, reach, trust, then its arguments).
 * Use as  tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_ACTOR(1, "actor")));
 */
extern text *wl_tenant_enter_as(FunctionCallInfo fcinfo, const WlTrustArg *checks);


/* ----------
 * SPI layer (spi.c)
 * ----------
 */
#define WL_MAX_ARGS 16

/*
 * A statement prepared once per backend and kept.  Declare one static per
 * statement; argtypes are built-in types only (an extension type's OID
 * changes when the extension is dropped and created again; cast to it in
 * the SQL text instead).
 */
typedef struct WlStmt
{
	const char *sql;
	int			nargs;
	Oid			argtypes[WL_MAX_ARGS];
	SPIPlanPtr	plan;
	/*
	 * Always run the generic plan (set with ".generic = true"): for a
	 * statement whose best plan does not depend on its parameter values,
	 * this saves planning it again on every call.
	 */
	bool		generic;
	/* module.verb.purpose: how worklist.kept_statements() lists it */
	const char *name;
	/*
	 * The text for the previous release's schema, where it differs (set
	 * with ".sql03 = ..."): a statement that reads a column or builds a
	 * row type the update to this version changed.  Which text the plan
	 * was made from is kept, so an update inside a session makes the
	 * statement prepared again.
	 */
	const char *sql03;
	bool		plan_is03;
} WlStmt;

/*
 * Every kept statement is declared with WL_KEPT, which places it in one
 * section of the library, so that worklist.kept_statements() can list all
 * of them (and test their plans) without running any verb.
 */
#if defined(__GNUC__) && defined(__ELF__)
#define WL_KEPT __attribute__((used, section("wl_kept_statements"), aligned(8)))
#define WL_HAVE_KEPT_SECTION 1
#else
#define WL_KEPT
#endif

typedef struct WlSpi
{
	Oid			save_userid;
	int			save_sec_context;
	int			guc_level;
	bool		active;
} WlSpi;

/*
 * Connect SPI and act as the extension owner, with the statements' settings
 * (search_path, enable_seqscan, jit) set in a GUC nest level of their own.
 */
extern void wl_spi_begin(WlSpi *spi);
/* Is this backend running a verb's statements (between the two)? */
extern bool wl_in_verb(void);
/*
 * Called by wl_spi_end when a verb's statements are done (the outermost
 * wl_spi_end), if set: a layer above judges the verb again there (trust.c
 * sets it, at load).
 */
extern void (*wl_spi_verb_done_hook) (void);
/*
 * The role that called the verb running (current_user when it began, as
 * opposed to the extension's owner it runs its statements as); outside a
 * verb, the current role.
 */
extern Oid	wl_calling_role(void);
/* Undo wl_spi_begin.  On error, transaction abort undoes it instead. */
extern void wl_spi_end(WlSpi *spi);
/* Run a kept statement; returns SPI_processed.  Errors on SPI failure. */
extern uint64 wl_exec(WlStmt *stmt, Datum *values, const char *nulls,
					  bool read_only, long count);
/*
 * Run a kept read-only statement against the latest committed state rather
 * than the transaction's snapshot (for facts that must not be judged on a
 * stale snapshot under REPEATABLE READ, such as tenant bindings).
 */
extern uint64 wl_exec_latest(WlStmt *stmt, Datum *values, const char *nulls);
/*
 * Value of column col (1-based) of row row of the last result, copied out
 * of SPI memory into the caller's (upper) context.  Must be called before
 * wl_spi_end.
 */
extern Datum wl_result_datum(uint64 row, int col, bool *isnull);
/* Same, as a palloc'd C string in the upper context, or NULL. */
extern char *wl_result_cstring(uint64 row, int col);
/*
 * Column col of the first n rows of the last result, as C strings in the
 * upper context (the ids a statement picked, to be used while other
 * statements run).
 */
extern char **wl_result_column(uint64 n, int col);
/*
 * The loop every purge of rows keyed by (tenant, id) runs: pick ($1
 * tenant, $2 an instant, $3 lim) picks and locks the candidates in one
 * statement; then purge ($1 tenant, $2 id) deletes each of them by its
 * whole key and nothing else, which only the key's index can serve, however
 * small the planner believed the tables when it planned (a DELETE joined to
 * the candidates was planned, on tables it knew as empty, as a walk of the
 * tenant's every row).  Returns how many were picked.
 */
extern uint64 wl_purge_by_id(WlStmt *pick, WlStmt *purge, text *tenant,
							 TimestampTz before, int32 lim);
/*
 * Append every row of the last result to the set-returning function's
 * tuplestore.  Column 1 of the result must be a whole-row value of the
 * function's declared row type.  Call InitMaterializedSRF first.
 */
extern void wl_result_to_srf(FunctionCallInfo fcinfo);
/*
 * For reads whose size has no bound (a ticket's log, a run's checkpoints,
 * a case's tasks): a read-only cursor over a kept statement, fetched
 * WL_FETCH_BATCH rows at a time (each fetch checks for interrupts and
 * frees the batch before it; the rows are in SPI_tuptable).  read_only
 * as for wl_exec: false reads with a new snapshot, true with the caller's.
 */
#define WL_FETCH_BATCH 1000
extern Portal wl_cursor_open(WlStmt *stmt, Datum *values, const char *nulls,
							 bool read_only);
extern uint64 wl_cursor_fetch(Portal portal);
extern void wl_cursor_close(Portal portal);
/*
 * Run a kept read-only statement through such a cursor, appending column 1
 * (a whole-row value of the function's row type) of every row to the
 * set-returning function's tuplestore; returns how many rows it read.
 */
extern uint64 wl_exec_to_srf(WlStmt *stmt, Datum *values, const char *nulls,
							 FunctionCallInfo fcinfo);
/*
 * The OID of the role that owns the extension's objects.  Refuses (55000) a
 * database without the extension, or with a schema this library does not
 * serve.
 */
extern Oid	wl_owner(void);
/*
 * The version of the extension's schema in this database (palloc'd), or
 * NULL when it is not installed; *owner, when not NULL, is set to its owner.
 * Reads the catalog: in a transaction.
 */
extern char *wl_installed_version(Oid *owner);
/*
 * Does this library serve a schema of that version: its own (*current
 * true) or the previous release's (until ALTER EXTENSION UPDATE)?
 */
extern bool wl_schema_served(const char *version, bool *current);
/*
 * Is the installed schema this library's own version (not the previous
 * release's)?  What only the current schema has is used only then.
 */
extern bool wl_schema_current(void);

/* ----------
 * Vocabulary: what is recorded of a change (change.c), what is counted
 * (stats()), and what a sweep did
 * ----------
 */
/*
 * The changes notifications count: name, kind and event, in payload order
 * (each kind's events together).  A new event is one line here (and its
 * line in doc/reference.md, section 9).
 */
#define WL_CHANGES(X) \
	X(TASK_OPENED, "task", "opened") \
	X(TASK_CLAIMED, "task", "claimed") \
	X(TASK_RELEASED, "task", "released") \
	X(TASK_TAKEN_OVER, "task", "taken_over") \
	X(TASK_COMPLETED, "task", "completed") \
	X(TASK_EXPIRED, "task", "expired") \
	X(TASK_ESCALATED, "task", "escalated") \
	X(TASK_WITHDRAWN, "task", "withdrawn") \
	X(TASK_HANDED_OVER, "task", "handed_over") \
	X(TASK_UPDATED, "task", "updated") \
	X(TASK_NOTED, "task", "noted") \
	X(TASK_PURGED, "task", "purged") \
	X(TICKET_OPENED, "ticket", "opened") \
	X(TICKET_REPORTED, "ticket", "reported") \
	X(TICKET_CLOSED, "ticket", "closed") \
	X(TICKET_ESCALATED, "ticket", "escalated") \
	X(TICKET_CONFIRMED, "ticket", "confirmed") \
	X(TICKET_PURGED, "ticket", "purged") \
	X(RUN_CHECKPOINTED, "run", "checkpointed") \
	X(RUN_CHECKPOINT_DELETED, "run", "checkpoint_deleted") \
	X(RUN_PRUNED, "run", "pruned") \
	X(RUN_CLAIMED, "run", "claimed") \
	X(RUN_RELEASED, "run", "released") \
	X(RUN_PARKED, "run", "parked") \
	X(RUN_RESUMED, "run", "resumed") \
	X(RUN_CONCLUDED, "run", "concluded") \
	X(RUN_PURGED, "run", "purged")

typedef enum WlChange
{
#define WL_CHANGE_ENUM(name, kind, event) WL_CHANGE_##name,
	WL_CHANGES(WL_CHANGE_ENUM)
#undef WL_CHANGE_ENUM
	WL_CHANGE__N
} WlChange;

/* The cumulative counters of stats(), in the order it lists them. */
typedef enum WlCounter
{
	WL_COUNT_CLAIMS,
	WL_COUNT_CLAIM_CONFLICTS,
	WL_COUNT_TAKE_OVERS,
	WL_COUNT_LEASE_RECLAIMS,
	WL_COUNT_STALE_FENCES,
	WL_COUNT_CLAIM_TIMEOUTS,
	WL_COUNT__N
} WlCounter;

/*
 * What a sweep did, one count a line, in the order of the columns of
 * worklist.sweep_result (sweeper_status shows the same totals, by name).
 * A new count is one line here, and its column in the SQL.
 */
#define WL_SWEEP_COUNTS(X) \
	X(denied) \
	X(proceeded) \
	X(escalated) \
	X(tickets_escalated) \
	X(tickets_confirmed) \
	X(claims_released) \
	X(purged)

typedef struct WlSweepResult
{
#define WL_SWEEP_FIELD(name) int32 name;
	WL_SWEEP_COUNTS(WL_SWEEP_FIELD)
#undef WL_SWEEP_FIELD
} WlSweepResult;

/* The totals of many sweeps (a sweeper's, since server start). */
typedef struct WlSweepTotals
{
#define WL_SWEEP_TOTAL(name) int64 name;
	WL_SWEEP_COUNTS(WL_SWEEP_TOTAL)
#undef WL_SWEEP_TOTAL
} WlSweepTotals;

/* ----------
 * What _PG_init (worklist.c) hands off to, besides each layer's own init
 * declared in its header
 * ----------
 */
/* launcher.c: defines worklist.database; registers the launcher. */
extern void wl_launcher_init(void);
extern void wl_launcher_register(void);
/* sweeper.c: defines worklist.sweep_interval and worklist.sweep_batch. */
extern void wl_sweeper_init(void);
/* utility.c: installs the utility hook. */
extern void wl_utility_init(void);

/* worklist.c */
extern void _PG_init(void);

#endif							/* WORKLIST_H */

/*-------------------------------------------------------------------------
 *
 * task.h
 *	  The task family: the verbs that change tasks (task.c), the listings
 *	  (task_list.c) and the task parts of the sweep (task_sweep.c), and the
 *	  pieces of SQL their statements share.
 *
 * Every change of a task, by a verb or by the sweep, is recorded through
 * wl_task_changed() once it is made, in the same transaction: its event in
 * the task's history, the resolution of the parks that await it when the
 * change settles it, and its notification.  A new verb that changes a task
 * calls it for every change it makes, and for nothing else: a call that
 * changes nothing appends nothing.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_TASK_H
#define WORKLIST_TASK_H

#include "worklist.h"

#include "utils/jsonb.h"

/*
 * Pieces of SQL shared by the statements.  The partial indexes of
 * sql/parts/10_task.sql repeat LIVE and DUE word for word: the planner
 * uses a partial index only when the query's condition implies its
 * predicate.  None of them reads a column a claim changes (state, holder,
 * claimed_at, claim_expires_at), which makes a claim a HOT update; the
 * conditions a verb judges one row by, through its key, may read state.
 */
#define EQ " OPERATOR(pg_catalog.=) "
#define STATE(s) "'" s "'::worklist.task_state"

/* The row of (tenant $1, id $2). */
#define KEY(a) a ".tenant" EQ "$1 AND " a ".id" EQ "$2"

/*
 * " WHERE" the row of the key, and only if cond holds for it.  cond is
 * written as one test of truth, which no index can serve and from which
 * no partial index's predicate follows: the primary key is then the one
 * way to the row, whatever the planner believed of the table's size when
 * it planned.  With cond written plainly the planner could read a partial
 * index whose predicate cond implies, with the id as a later key column:
 * task_pending_case (all the tenant's pending tasks) for plans made on
 * empty tables -- a lookup that walked a tenant's queue.
 */
#define BY_KEY(a, cond) " WHERE " KEY(a) " AND (" cond ") IS TRUE"

/* Pending, judged by one row's state. */
#define PENDING(a) \
	a ".state" EQ "ANY ('{open,claimed,escalated}'::worklist.task_state[])"
#define OPEN_OR_CLAIMED(a) \
	a ".state" EQ "ANY ('{open,claimed}'::worklist.task_state[])"
/* Pending and not escalated, as the indexes tell them (a task has a
 * settled_at exactly once it is settled, an escalated_at once escalated). */
#define LIVE(a) a ".settled_at IS NULL"
#define DUE(a) LIVE(a) " AND " a ".escalated_at IS NULL"
/* What queue lists and claim and claim_next may take: pending, unheld. */
#define CLAIMABLE(a) "(" LIVE(a) " AND " a ".holder IS NULL)"
/*
 * The same on the schema of 0.3, whose partial indexes read state: the
 * texts the statements keep for it (.sql03).
 */
#define LIVE03(a) PENDING(a)
#define DUE03(a) OPEN_OR_CLAIMED(a)
#define CLAIMABLE03(a) \
	"(" a ".state" EQ STATE("open") \
	" OR (" a ".state" EQ STATE("escalated") " AND " a ".holder IS NULL))"
/* roles r meet the audience: roles, widened by escalation_roles once escalated */
#define AUDIENCE(a, r) \
	"(" a ".roles OPERATOR(pg_catalog.&&) " r \
	" OR (" a ".state" EQ STATE("escalated") \
	" AND " a ".escalation_roles OPERATOR(pg_catalog.&&) " r "))"
#define NOT_EXCLUDED(a, actor) "NOT (" actor EQ "ANY (" a ".excluded))"
/* Queue order. */
#define QUEUE_ORDER(a) \
	" ORDER BY " a ".priority DESC, " a ".created_at, " a ".id"
/*
 * The same order as a key that ascends, as task_claimable stores it (see
 * hint.c): what claim_next and queue read the claimable rows by, from a
 * starting key (NEG_PRIORITY, created_at, id) >= (p, c, i) on.
 */
#define NEG_PRIORITY(a) "(OPERATOR(pg_catalog.-) " a ".priority::pg_catalog.int8)"
#define QUEUE_KEY(a) NEG_PRIORITY(a) ", " a ".created_at, " a ".id"
#define FROM_KEY(a, p, c, i) \
	"ROW(" QUEUE_KEY(a) ") OPERATOR(pg_catalog.>=) ROW(" p ", " c ", " i ")"
/*
 * " first AS MATERIALIZED (...)": the key of the first task claimable by
 * anybody ($1 tenant) from the key ($4, $5, $6) on, what a claim that
 * raises the hint raises it to (hint.c).
 */
#define CLAIM_FIRST(claimable) \
	" first AS MATERIALIZED (" \
	" SELECT " QUEUE_KEY("q") " FROM worklist.task q" \
	"  WHERE q.tenant" EQ "$1 AND " claimable("q") \
	"    AND " FROM_KEY("q", "$4", "$5", "$6") \
	"  ORDER BY " QUEUE_KEY("q") " LIMIT 1)"
/*
 * " pick AS (...)": cols (of q) of up to lim claimable tasks ($1 tenant) in
 * queue order from the key ($4, $5, $6) on, whose audience meets roles $3,
 * that do not exclude actor $2 and are not among skip $7, locked FOR NO
 * KEY UPDATE, passing rows somebody else has locked: what claim_next
 * (lim 1) and claim_many pick.
 */
#define CLAIM_PICK(claimable, cols, lim) \
	" pick AS (" \
	" SELECT " cols " FROM worklist.task q" \
	"  WHERE q.tenant" EQ "$1 AND " claimable("q") \
	"    AND " FROM_KEY("q", "$4", "$5", "$6") \
	"    AND " AUDIENCE("q", "$3") " AND " NOT_EXCLUDED("q", "$2") \
	"    AND NOT (q.id" EQ "ANY ($7))" \
	"  ORDER BY " QUEUE_KEY("q") " LIMIT " lim " FOR NO KEY UPDATE OF q SKIP LOCKED)"
/* Taking a claim: an open task becomes claimed, an escalated one stays. */
#define SET_CLAIM(actor) \
	" SET holder = " actor ", claimed_at = pg_catalog.now()," \
	" claim_expires_at = pg_catalog.now() OPERATOR(pg_catalog.+) t.claim_timeout," \
	" state = CASE WHEN t.state" EQ STATE("open") \
	" THEN " STATE("claimed") " ELSE t.state END"
/* Giving a claim back: an open task becomes open again, an escalated one stays. */
#define SET_UNCLAIM \
	" SET holder = NULL, claimed_at = NULL, claim_expires_at = NULL," \
	" state = CASE WHEN t.state" EQ STATE("claimed") \
	" THEN " STATE("open") " ELSE t.state END"

/*
 * Task (tenant, id) changed in this transaction, judged at at: append its
 * event (one of the contract's, see settle.h) by actor (NULL: none) with
 * detail (NULL: an empty object); when the event settles the task
 * (completed, expired, withdrawn), resolve the parks that await it; and
 * notify the change (claim_timed_out as a release).  The caller holds the
 * task's row lock.  Returns the event (a worklist.task_event; (Datum) 0 on
 * a 0.3 schema).  SPI must be begun.
 */
extern Datum wl_task_changed(text *tenant, text *id, const char *event,
							 text *actor, TimestampTz at, Jsonb *detail);

/*
 * wl_task_changed for every task of ids (a text[] of distinct ids), each
 * changed in this transaction by the same event (a claim, a release or a
 * settlement; not a move of a claim, an edit or a note), judged at at, by
 * actor (NULL: none), with an empty detail, in a few statements whatever
 * their number: what the verbs that change many tasks at once
 * (claim_many, complete_many) call.  The caller holds every task's row
 * lock.  SPI must be begun.
 */
extern void wl_tasks_changed(text *tenant, ArrayType *ids, const char *event,
							 text *actor, TimestampTz at);

/* The detail {"key": value} of an event (value NULL: a JSON null). */
extern Jsonb *wl_task_detail(const char *key, const char *value);

#endif							/* WORKLIST_TASK_H */

/*-------------------------------------------------------------------------
 *
 * settle.h
 *	  What every change of a task leaves beside its row (settle.c): its
 *	  event in the task's history, and, when it settles the task, the
 *	  resolution of the parks of runs that await it.  Beneath the task verbs
 *	  and the run verbs alike, so that neither concept calls the other.
 *
 * The task verbs and the sweep do not call wl_task_event and
 * wl_task_settled themselves: every change of a task goes through
 * wl_task_changed() (task.h), which appends the event and, for a change
 * that settles the task, resolves its parks, in the change's transaction.
 * A new task verb does the same.  Only wl_withdraw_tasks, which the run
 * verbs call too, settles tasks here, doing what wl_task_changed does.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_SETTLE_H
#define WORKLIST_SETTLE_H

#include "worklist.h"

#include "utils/jsonb.h"

/*
 * Append one event to the history of task (tenant, task_id), numbered after
 * its last one: event as the contract names it, the acting actor (NULL:
 * none), the instant the change was judged at, and its detail (NULL: an
 * empty object).  The login is the role that called the verb (NULL for a
 * change the background worker made).  The caller holds the task's row
 * lock, which is what keeps two events of one task from racing for a
 * number.  Returns the event as a worklist.task_event; (Datum) 0 on a 0.3
 * schema, which has no history.  SPI must be begun.
 */
extern Datum wl_task_event(text *tenant, text *task_id, const char *event,
						   text *actor, TimestampTz at, Jsonb *detail);

/*
 * The same event, by actor (NULL: none) at at with an empty detail, appended
 * to the history of every task of task_ids (a text[] of distinct ids), in
 * one statement: what the changes of many tasks at once (claim_many,
 * complete_many) append.  The caller holds every task's row lock.  No-op
 * on a 0.3 schema.  SPI must be begun.
 */
extern void wl_task_events(text *tenant, ArrayType *task_ids,
						   const char *event, text *actor, TimestampTz at);

/*
 * Task (tenant, task_id) settled in this transaction, judged at at: every
 * unresolved park that awaits it and now awaits no pending task is
 * resolved at at (the checkpoint's park_resolved_at, and the run's
 * summary when it is the run's current park), and notified as a run
 * "resumed".  Locks, for each park, its run row, then its checkpoint row:
 * the order every writer of a run takes them in.  No-op on a 0.3 schema.
 * SPI must be begun.
 */
extern void wl_task_settled(text *tenant, text *task_id, TimestampTz at);

/*
 * Every task of task_ids (a text[]) settled in this transaction, judged at
 * at: one look for the unresolved parks that await any of them, then
 * each such park judged once, as wl_task_settled judges it, in the order
 * of the parks' keys.  SPI must be begun.
 */
extern void wl_tasks_settled(text *tenant, ArrayType *task_ids, TimestampTz at);

/*
 * Before the sweep settles task (tenant, task_id): lock, without waiting,
 * the runs and checkpoints of the unresolved parks that await it.  false
 * when a worker holds one of them: the sweep leaves the task for the next
 * tick rather than wait.  SPI must be begun.
 */
extern bool wl_task_parks_lockable(text *tenant, text *task_id);

/*
 * Settle as withdrawn, at at, those of the tasks named in ids (a text[])
 * that are still pending -- only those of run_id, when it is not NULL --
 * each with its history event, and then resolve their parks, each park
 * judged once (wl_tasks_settled); returns how many.  Tasks are locked in
 * the order wl_sort_ids gives, all of them before any park.  What
 * withdraw_run, conclude_run and delete_run run.  SPI must be begun.
 */
extern int32 wl_withdraw_tasks(text *tenant, ArrayType *ids, text *run_id,
							   TimestampTz at);

/*
 * Lock the tasks named in ids (a text[]) that exist, for the update that
 * settles them, in wl_sort_ids order: what a verb that settles tasks it
 * finds through a run (conclude_run) takes before it locks anything of
 * the run, so that it keeps the order every path locks in.  SPI must be
 * begun.
 */
extern void wl_lock_tasks(text *tenant, ArrayType *ids);

/*
 * The elements of a text[] of task ids, without duplicates, in the order
 * every verb that locks several tasks locks them in (bytewise), so that no
 * two of them wait on each other in a circle.  *n is set to their number.
 */
extern Datum *wl_sort_ids(ArrayType *ids, int *n);

/*
 * For park_run, before it writes its checkpoint: lock the tasks named in
 * tasks (a non-empty text[] of identifiers) FOR SHARE, in wl_sort_ids
 * order, so that none of them settles until this transaction ends.
 * Refuses (WL001) the first of them, in the array's order, that does not
 * exist.  Returns the ids of those still pending (a text[], maybe empty),
 * in the array's order.  SPI must be begun.
 */
extern ArrayType *wl_park_lock_tasks(text *tenant, ArrayType *tasks);

/*
 * Record the park park_run made on checkpoint checkpoint_id of a run
 * (address: tenant, project, session, run): every task it awaits (a
 * text[]), and whether it is resolved already (none of them pending), so
 * that the settlements of its tasks find it and retention keeps the tasks
 * of a current park.  The records of the run's earlier resolved parks go,
 * and what this checkpoint awaited before: only the current park and
 * parks still outstanding are kept.  No-op on a 0.3 schema.  SPI must be
 * begun.
 */
extern void wl_park_record(Datum *address, text *checkpoint_id,
						   ArrayType *tasks, bool resolved);

/*
 * A condition, for the statement of the task purge, that holds when task
 * (tenant t, id i) is awaited by the current park of a run that is not
 * concluded: retention keeps such a task however old it is (the answer
 * waits for the worker).
 */
#define WL_TASK_AWAITED(t, i) \
	"EXISTS (SELECT FROM worklist.run_park_task w" \
	" JOIN worklist.run r ON r.tenant OPERATOR(pg_catalog.=) w.tenant" \
	"  AND r.project OPERATOR(pg_catalog.=) w.project" \
	"  AND r.session OPERATOR(pg_catalog.=) w.session" \
	"  AND r.run OPERATOR(pg_catalog.=) w.run" \
	" WHERE w.tenant OPERATOR(pg_catalog.=) " t \
	"   AND w.task_id OPERATOR(pg_catalog.=) " i \
	"   AND r.park_checkpoint_id OPERATOR(pg_catalog.=) w.checkpoint_id" \
	"   AND r.concluded_at IS NULL)"

#endif							/* WORKLIST_SETTLE_H */

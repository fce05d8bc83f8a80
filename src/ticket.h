/*-------------------------------------------------------------------------
 *
 * ticket.h
 *	  The ticket fold as the ticket verbs (ticket.c) use it: its rules
 *	  (fold.c), its stored form (fold_store.c) and its SQL face
 *	  (fold_sql.c).
 *
 * A ticket's state is folded from its append-only event log (doc/reference.md,
 * section 5).  The fold is split in two steps so that one routine serves
 * every caller:
 *
 *	  wl_fold_add()		reduces one event into a WlFoldState, the compact
 *						summary of everything the log has said so far: per
 *						actor the event that is its current participation
 *						(and the one that was current when the ticket was
 *						closed), the winning authorized outcome, the latest
 *						escalation, and the latest participation instant;
 *	  wl_fold_judge()	turns a WlFoldState and the ticket's definition
 *						into the ticket_fold the reference describes, plus
 *						the instants the watchdog acts at.
 *
 * Every part of the state is a maximum under a total order, a set union or
 * a maximum instant, so adding the same events in any order yields the
 * same state, with one exception: when an authorized close moves the
 * instant the fold is cut at past events an actor said after it, the
 * actor's participation at the cut cannot be known from the summary alone.
 * wl_fold_add() says so by returning false, and the caller folds the whole
 * log again with wl_fold_events(), which sorts it by a total order first
 * (that order never needs the history).  The ticket aggregate
 * (worklist.fold), ticket_state and that fallback all go through
 * wl_fold_events(); report, close_ticket and the watchdog keep the state
 * on the ticket row (fold_state) and add one event to it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_TICKET_H
#define WORKLIST_TICKET_H

#include "worklist.h"

#include "lib/stringinfo.h"

/* The actor name the watchdog writes as; no caller may use it. */
#define WL_WATCHDOG_ACTOR	"worklist.watchdog"

/* What an abandonment without a reason reads as (rule 2). */
#define WL_MISSING_REASON	"MISSING_REASON"

typedef enum WlEventKind
{
	WL_KIND_PARTICIPATION,
	WL_KIND_OUTCOME,
	WL_KIND_ESCALATION
} WlEventKind;

/* worklist.participation, in rank order */
typedef enum WlPart
{
	WL_PART_ACKNOWLEDGED,
	WL_PART_WORKING,
	WL_PART_BLOCKED,
	WL_PART_DELIVERED,
	WL_PART_ABANDONED
} WlPart;

/* worklist.outcome */
typedef enum WlOutcome
{
	WL_OUTCOME_DONE,
	WL_OUTCOME_ARCHIVED
} WlOutcome;

/* worklist.ticket_status */
typedef enum WlStatus
{
	WL_STATUS_OPEN,
	WL_STATUS_ACKNOWLEDGED,
	WL_STATUS_WORKING,
	WL_STATUS_BLOCKED,
	WL_STATUS_DELIVERED,
	WL_STATUS_UNOWNED,
	WL_STATUS_DONE,
	WL_STATUS_ARCHIVED
} WlStatus;

/* One row of worklist.ticket_event, as far as the fold reads it. */
typedef struct WlEvent
{
	WlEventKind kind;
	const char *actor;
	TimestampTz at;
	int			value;			/* WlPart, WlOutcome, or the rung */
	const char *reason;			/* NULL when none was given */
	bool		has_not_before;
	TimestampTz not_before;
	bool		watchdog;		/* written by the watchdog */
	const char *confirmation;	/* implicit confirmation (jsonb text) */
} WlEvent;

/* The parts of a worklist.ticket row the fold depends on. */
typedef struct WlTicketDef
{
	const char *id;
	const char *requester;
	int			nauthorities;
	const char **authorities;
	bool		has_open_deadline;
	TimestampTz open_deadline;
	bool		has_confirm_window;
	Interval	confirm_window;
	int			nladder;
	Interval   *ladder;
} WlTicketDef;

/* What one actor said, as far as the fold cares. */
typedef struct WlSay
{
	WlPart		value;
	TimestampTz at;
	bool		has_not_before;
	TimestampTz not_before;
	const char *reason;
} WlSay;

typedef struct WlActor
{
	const char *name;
	bool		unauthorized;	/* wrote an outcome without authority */
	WlSay		cur;			/* current participation (rule 1) */
	bool		has_cut;
	WlSay		cut;			/* current as of the winning close (rule 4) */
} WlActor;

typedef struct WlClose
{
	WlOutcome	outcome;
	TimestampTz at;
	const char *actor;
	bool		watchdog;
	const char *reason;
	const char *confirmation;	/* the watchdog's implicit confirmation */
} WlClose;

typedef struct WlFoldState
{
	int			nactors;
	int			maxactors;
	WlActor    *actors;			/* sorted by name, in code-point order */
	bool		closed;
	WlClose		close;			/* the winning authorized outcome */
	bool		has_last;
	TimestampTz last;			/* latest participation or outcome `at` */
	bool		has_escalation;
	TimestampTz escalation_at;	/* latest escalation */
	int			escalation_rung;
} WlFoldState;

/* An actor whose participation is abandoned, with its reason (rule 2). */
typedef struct WlAbandoned
{
	const char *actor;
	const char *reason;			/* WL_MISSING_REASON when it gave none */
} WlAbandoned;

/* The fold of one ticket: the documented ticket_fold, and more. */
typedef struct WlFold
{
	WlStatus	status;
	bool		has_deadline;
	TimestampTz deadline;
	int			rung;			/* escalation_rung */
	List	   *live;			/* of char *, code-point order */
	List	   *blocked;
	List	   *abandoned;		/* of WlAbandoned *, in actor order */
	List	   *unauthorized;
	List	   *interrupted;
	List	   *delivered;		/* live actors whose current is delivered */
	const char *closed_by;
	TimestampTz closed_at;
	const char *close_reason;
	bool		close_by_watchdog;
	const char *confirmation;	/* the watchdog's, for an implicit close */

	/*
	 * When the ticket is live: it is overdue from overdue_from on (-infinity
	 * when its deadline is NULL); the watchdog escalates it from escalate_at
	 * on and closes it from confirm_at on; next_check is the earlier of the
	 * two.  All unset for a terminal ticket.
	 */
	bool		live_ticket;
	TimestampTz overdue_from;
	bool		has_escalate_at;
	TimestampTz escalate_at;
	bool		has_confirm_at;
	TimestampTz confirm_at;
	bool		has_next_check;
	TimestampTz next_check;
} WlFold;

/* What the watchdog does to a ticket at a given instant. */
typedef enum WlWatchdogAction
{
	WL_WATCHDOG_NOTHING,
	WL_WATCHDOG_CONFIRM,
	WL_WATCHDOG_ESCALATE
} WlWatchdogAction;

/* fold.c: the fold rules */
extern void wl_fold_init(WlFoldState *st);
extern bool wl_fold_add(WlFoldState *st, const WlTicketDef *def,
						const WlEvent *ev);
extern void wl_fold_events(WlFoldState *st, const WlTicketDef *def,
						   WlEvent *events, int nevents);
extern void wl_fold_judge(const WlFoldState *st, const WlTicketDef *def,
						  WlFold *fold);
extern bool wl_fold_overdue(const WlFold *fold, TimestampTz now);
extern WlWatchdogAction wl_fold_watchdog_action(const WlFold *fold,
												TimestampTz now);
extern bool wl_is_authority(const WlTicketDef *def, const char *actor);
extern char *wl_implicit_confirmation(const WlFold *fold,
									  const WlTicketDef *def);

/* fold.c: names and values */
extern const char *wl_status_name(WlStatus status);
extern const char *wl_part_name(WlPart part);
extern const char *wl_outcome_name(WlOutcome outcome);
extern const char *wl_kind_name(WlEventKind kind);
extern WlEventKind wl_kind_parse(const char *kind);
extern int	wl_value_parse(WlEventKind kind, const char *value);

/* fold_store.c: the state as stored on the ticket row (fold_state bytea) */
extern bytea *wl_fold_serialize(const WlFoldState *st);
extern void wl_fold_deserialize(WlFoldState *st, const WlTicketDef *def,
								bytea *data, int64 nevents);

/* fold_sql.c: ticket definitions and ticket_fold values */
#define WL_FOLD_NCOLS 14		/* columns of worklist.ticket_fold */
extern void wl_ticket_def_from_datums(WlTicketDef *def, const char *id,
									  const char *requester,
									  Datum authorities, bool authorities_null,
									  Datum open_deadline, bool open_deadline_null,
									  Datum confirm_window, bool confirm_window_null,
									  Datum ladder, bool ladder_null);
extern void wl_fold_values(const WlFold *fold, const char *ticket,
						   TimestampTz now, TupleDesc desc,
						   Datum *values, bool *nulls);
extern Datum wl_fold_datum(const WlFold *fold, const char *ticket,
						   TimestampTz now, TupleDesc desc);

#endif							/* WORKLIST_TICKET_H */

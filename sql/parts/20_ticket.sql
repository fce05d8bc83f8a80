-- worklist: tickets (CONTRACT section 2)

CREATE TYPE worklist.participation AS ENUM
	('acknowledged', 'working', 'blocked', 'delivered', 'abandoned');
CREATE TYPE worklist.outcome AS ENUM ('done', 'archived');
CREATE TYPE worklist.ticket_status AS ENUM
	('open', 'acknowledged', 'working', 'blocked', 'delivered', 'unowned',
	 'done', 'archived');

-- What was asked, by whom, and who may end it.
CREATE TABLE worklist.ticket (
	id					text NOT NULL,
	requester			text NOT NULL,
	title				text NOT NULL,
	body				jsonb NOT NULL DEFAULT '{}',
	authorities			text[] NOT NULL DEFAULT '{}',
	open_deadline		timestamptz,
	confirm_window		interval,
	ladder				interval[] NOT NULL DEFAULT '{}',
	created_at			timestamptz NOT NULL DEFAULT now(),
	tenant				text NOT NULL,
	PRIMARY KEY (tenant, id)
);

-- The append-only log the ticket's state is folded from.  Its row type is
-- what ticket_history returns.
CREATE TABLE worklist.ticket_event (
	ticket				text NOT NULL,
	actor				text NOT NULL,
	at					timestamptz NOT NULL,
	kind				text NOT NULL,
	value				text NOT NULL,
	reason				text,
	not_before			timestamptz,
	seq					bigint NOT NULL,
	tenant				text NOT NULL,
	PRIMARY KEY (tenant, ticket, seq)
);

-- worklist: tasks (CONTRACT section 1)

CREATE TYPE worklist.task_state AS ENUM
	('open', 'claimed', 'escalated', 'completed', 'expired', 'withdrawn');
CREATE TYPE worklist.expiry_policy AS ENUM ('deny', 'proceed', 'escalate');

-- The table's row type is the worklist.task every task verb returns: the
-- contract's columns in the contract's order, then the tenant.
CREATE TABLE worklist.task (
	id					text NOT NULL,
	case_id				text NOT NULL,
	run_id				text,
	state				worklist.task_state NOT NULL DEFAULT 'open',
	roles				text[] NOT NULL,
	excluded			text[] NOT NULL DEFAULT '{}',
	escalation_roles	text[] NOT NULL DEFAULT '{}',
	priority			int NOT NULL DEFAULT 0,
	payload				jsonb NOT NULL DEFAULT '{}',
	due_at				timestamptz,
	expiry_policy		worklist.expiry_policy NOT NULL DEFAULT 'deny',
	holder				text,
	claimed_at			timestamptz,
	created_at			timestamptz NOT NULL DEFAULT now(),
	settled_at			timestamptz,
	decided_by			text,
	decision			jsonb,
	tenant				text NOT NULL,
	PRIMARY KEY (tenant, id)
);

-- worklist: runs, checkpoints, leases and fences (CONTRACT section 3)

CREATE TYPE worklist.park_state AS ENUM ('outstanding', 'expired', 'resolved');

-- One sequence mints every fence of every run; see claim_run.
CREATE SEQUENCE worklist.fence_seq AS bigint;

-- A run: its fixed facts and its lease.
CREATE TABLE worklist.run (
	project				text NOT NULL,
	session				text NOT NULL,
	run					text NOT NULL,
	parent_run			text,
	run_created_at		timestamptz,
	holder				text,
	fence				bigint,
	expires_at			timestamptz,
	tenant				text NOT NULL,
	PRIMARY KEY (tenant, project, session, run)
);

CREATE TABLE worklist.run_checkpoint (
	project				text NOT NULL,
	session				text NOT NULL,
	run					text NOT NULL,
	checkpoint_id		text NOT NULL,
	created_at			timestamptz NOT NULL,
	body				jsonb NOT NULL,
	park_request		text,
	parked_at			timestamptz,
	park_deadline		timestamptz,
	park_resolved_at	timestamptz,
	tenant				text NOT NULL,
	PRIMARY KEY (tenant, project, session, run, checkpoint_id)
);

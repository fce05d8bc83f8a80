"""The rows the verbs return, as dataclasses with the contract's field
names.  Timestamps are aware datetimes, intervals timedeltas (a month
counts as 30 days), jsonb the Python value, arrays lists, enums strings,
bigint int.  Columns a newer server adds are left out; fields an older
server lacks are None."""
from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import Any, Dict, List, Optional, Sequence, Type, TypeVar

T = TypeVar('T')


@dataclasses.dataclass
class Task:
    id: str
    case_id: str
    run_id: Optional[str]
    state: str
    roles: List[str]
    excluded: List[str]
    escalation_roles: List[str]
    priority: int
    payload: Any
    due_at: Optional[datetime]
    expiry_policy: str
    holder: Optional[str]
    claimed_at: Optional[datetime]
    created_at: datetime
    settled_at: Optional[datetime]
    decided_by: Optional[str]
    decision: Any
    tenant: Optional[str] = None
    claim_timeout: Optional[timedelta] = None
    claim_expires_at: Optional[datetime] = None


@dataclasses.dataclass
class Checkpoint:
    project: str
    session: str
    run: str
    parent_run: Optional[str]
    checkpoint_id: str
    created_at: datetime
    run_created_at: Optional[datetime]
    body: Any
    park_request: Optional[str]
    parked_at: Optional[datetime]
    park_deadline: Optional[datetime]
    park_resolved_at: Optional[datetime]
    park_tasks: Optional[List[str]] = None          # 0.4
    metadata: Any = None                            # 0.4
    parent_checkpoint_id: Optional[str] = None      # 0.4


@dataclasses.dataclass
class RunLeaseRow:
    """What claim_run returns (worklist.run_lease)."""
    holder: str
    fence: int
    expires_at: datetime


@dataclasses.dataclass
class ClaimedRun:
    """What claim_next_run returns (worklist.claimed_run, 0.4)."""
    project: str
    session: str
    run: str
    holder: str
    fence: int
    expires_at: datetime


@dataclasses.dataclass
class RunWrite:
    """A pending write (worklist.run_write, 0.4): what pending_writes returns."""
    checkpoint_id: str
    task_id: str
    idx: int
    channel: str
    value: Any
    task_path: str


@dataclasses.dataclass
class RunValue:
    """A channel value by version (worklist.run_value, 0.4): what run_values returns."""
    channel: str
    version: str
    value: Any


@dataclasses.dataclass
class DurableRun:
    project: str
    session: str
    run: str
    parent_run: Optional[str]
    run_created_at: Optional[datetime]
    checkpoint_count: int
    latest_checkpoint_id: Optional[str]
    latest_checkpoint_at: Optional[datetime]
    park_state: Optional[str]
    park_checkpoint_id: Optional[str]
    park_request: Optional[str]
    parked_at: Optional[datetime]
    park_deadline: Optional[datetime]
    park_resolved_at: Optional[datetime]
    claim_holder: Optional[str]
    claim_fence: Optional[int]
    claim_expires_at: Optional[datetime]
    claim_expired: Optional[bool]
    concluded_at: Optional[datetime] = None         # 0.4


@dataclasses.dataclass
class DurableRunPage:
    entries: List[DurableRun]
    cursor: Optional[str]


@dataclasses.dataclass
class SweepResult:
    denied: int
    proceeded: int
    escalated: int
    tickets_escalated: int
    tickets_confirmed: int
    claims_released: int
    purged: int


@dataclasses.dataclass
class TicketFold:
    ticket: str
    state: str
    deadline: Optional[datetime]
    overdue: bool
    live_actors: List[str]
    blocked_actors: List[str]
    abandoned: Dict[str, str]
    unauthorized_close: List[str]
    interrupted: List[str]
    confirmation: Any
    closed_by: Optional[str]
    closed_at: Optional[datetime]
    escalation_rung: int
    close_reason: Optional[str] = None


@dataclasses.dataclass
class TicketEvent:
    ticket: str
    actor: str
    at: datetime
    kind: str
    value: str
    reason: Optional[str]
    not_before: Optional[datetime]
    seq: int
    watchdog: bool = False
    confirmation: Any = None
    tenant: Optional[str] = None


@dataclasses.dataclass
class TaskEvent:
    """One event of a task's history (worklist.task_event, 0.4)."""
    task_id: str
    seq: int
    at: datetime
    event: str
    actor: Optional[str]
    login: Optional[str]
    detail: Any


@dataclasses.dataclass
class Settled:
    """One row of complete_many (0.4)."""
    id: str
    settled: bool


@dataclasses.dataclass
class Retention:
    tasks: Optional[timedelta]
    tickets: Optional[timedelta]
    runs: Optional[timedelta]


def build(cls: Type[T], names: Sequence[str], row: Sequence[Any]) -> T:
    """One dataclass from one row: the columns it knows, None for the rest."""
    values = dict(zip(names, row))
    fields = dataclasses.fields(cls)
    return cls(**{f.name: values.get(f.name) for f in fields})

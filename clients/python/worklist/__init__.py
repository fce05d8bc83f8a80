"""worklist — the client of the worklist PostgreSQL extension.

Client (client.py) has every verb of one tenant; TaskWorker (worker.py) and
RunWorker (agent.py) are the loops that claim tasks and runs and hand them
to a function of the caller's; errors.py has one class per SQLSTATE.
README.md says how to use them.
"""
from .agent import RunContext, RunLease, RunWorker
from .client import Client
from .errors import (AlreadyClaimedError, ConfigurationError, ConnectionLostError,
                     DatabaseError, ExcludedError, InsufficientPrivilegeError,
                     InvalidArgumentError, LimitExceededError, NotFoundError, NotHeldError,
                     NotPendingError, RunConcludedError, SerializationError, StaleFenceError,
                     TransientError, WorklistError, WrongRoleError)
from .types import (Checkpoint, ClaimedRun, DurableRun, DurableRunPage, Retention, RunLeaseRow,
                    RunValue, RunWrite, Settled, SweepResult, Task, TaskEvent, TicketEvent, TicketFold)
from .wait import Stopper, backoff
from .worker import TaskWorker, WorkContext

__version__ = '0.3.0'

__all__ = [
    'AlreadyClaimedError', 'Checkpoint', 'ClaimedRun', 'Client', 'ConfigurationError',
    'ConnectionLostError', 'DatabaseError', 'DurableRun', 'DurableRunPage', 'ExcludedError',
    'InsufficientPrivilegeError', 'InvalidArgumentError', 'LimitExceededError', 'NotFoundError',
    'NotHeldError', 'NotPendingError', 'Retention', 'RunConcludedError', 'RunContext', 'RunLease',
    'RunLeaseRow', 'RunValue', 'RunWorker', 'RunWrite', 'SerializationError', 'Settled', 'StaleFenceError', 'Stopper',
    'SweepResult', 'Task', 'TaskEvent', 'TaskWorker', 'TicketEvent', 'TicketFold',
    'TransientError', 'WorkContext', 'WorklistError', 'WrongRoleError', 'backoff',
]

// Type declarations of the worklist package (index.js).
//
// Field and option names are the contract's (snake_case), so a row reads
// the same in SQL, in JavaScript and in Python; method names are the
// verbs in camelCase.  Timestamps are Date; intervals are given as
// PostgreSQL's text ('15 minutes') or as a number of milliseconds, and read
// back as PostgreSQL's text; jsonb is any JSON value; fences are BigInt;
// counts are number.

/** Any JSON value: what jsonb holds. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** An interval: PostgreSQL's text ('15 minutes', '1 day') or milliseconds. */
export type Interval = string | number;
/** A timestamptz argument: a Date, or text PostgreSQL reads ('infinity'). */
export type Timestamp = Date | string;
/** A fence argument: BigInt, or a number or text holding an integer. */
export type FenceInput = bigint | number | string;

export type TaskState = 'open' | 'claimed' | 'escalated' | 'completed' | 'expired' | 'withdrawn';
export type ExpiryPolicy = 'deny' | 'proceed' | 'escalate';
export type Participation = 'acknowledged' | 'working' | 'blocked' | 'delivered' | 'abandoned';
export type Outcome = 'done' | 'archived';
export type TicketStatus = 'open' | 'acknowledged' | 'working' | 'blocked' | 'delivered' | 'unowned' | 'done' | 'archived';
export type ParkState = 'outstanding' | 'expired' | 'resolved';
export type BindingKind = 'member' | 'service' | 'admin';

export interface Task {
  id: string;
  case_id: string;
  run_id: string | null;
  state: TaskState;
  roles: string[];
  excluded: string[];
  escalation_roles: string[];
  priority: number;
  payload: Json;
  due_at: Date | null;
  expiry_policy: ExpiryPolicy;
  holder: string | null;
  claimed_at: Date | null;
  created_at: Date;
  settled_at: Date | null;
  decided_by: string | null;
  decision: Json;
  tenant: string;
  claim_timeout: string | null;
  claim_expires_at: Date | null;
}

export interface Checkpoint {
  project: string;
  session: string;
  run: string;
  parent_run: string | null;
  checkpoint_id: string;
  created_at: Date;
  run_created_at: Date | null;
  body: Json;
  park_request: string | null;
  parked_at: Date | null;
  park_deadline: Date | null;
  park_resolved_at: Date | null;
  /** 0.4 */
  park_tasks?: string[] | null;
  /** 0.4 */
  metadata?: Json;
  /** 0.4 */
  parent_checkpoint_id?: string | null;
}

export interface RunLeaseRow {
  holder: string;
  fence: bigint;
  expires_at: Date;
}

/** What claim_next_run returns (0.4). */
export interface ClaimedRun {
  project: string;
  session: string;
  run: string;
  holder: string;
  fence: bigint;
  expires_at: Date;
}

export interface DurableRun {
  project: string;
  session: string;
  run: string;
  parent_run: string | null;
  run_created_at: Date | null;
  checkpoint_count: number;
  latest_checkpoint_id: string | null;
  latest_checkpoint_at: Date | null;
  park_state: ParkState | null;
  park_checkpoint_id: string | null;
  park_request: string | null;
  parked_at: Date | null;
  park_deadline: Date | null;
  park_resolved_at: Date | null;
  claim_holder: string | null;
  claim_fence: bigint | null;
  claim_expires_at: Date | null;
  claim_expired: boolean | null;
  /** 0.4 */
  concluded_at?: Date | null;
}

export interface DurableRunPage {
  entries: DurableRun[];
  /** null: the listing is exhausted */
  cursor: string | null;
}

export interface SweepResult {
  denied: number;
  proceeded: number;
  escalated: number;
  tickets_escalated: number;
  tickets_confirmed: number;
  claims_released: number;
  purged: number;
}

export interface TicketFold {
  ticket: string;
  state: TicketStatus;
  deadline: Date | null;
  overdue: boolean;
  live_actors: string[];
  blocked_actors: string[];
  abandoned: { [actor: string]: string };
  unauthorized_close: string[];
  interrupted: string[];
  confirmation: Json;
  closed_by: string | null;
  closed_at: Date | null;
  escalation_rung: number;
  close_reason: string | null;
}

export interface TicketEvent {
  ticket: string;
  actor: string;
  at: Date;
  kind: 'participation' | 'outcome' | 'escalation';
  value: string;
  reason: string | null;
  not_before: Date | null;
  seq: number;
  watchdog: boolean;
  confirmation: Json;
  tenant: string;
}

/** One event of a task's history (0.4). */
export interface TaskEvent {
  task_id: string;
  seq: number;
  at: Date;
  event: string;
  actor: string | null;
  login: string | null;
  detail: Json;
}

/** One row of completeMany (0.4). */
export interface Settled {
  id: string;
  settled: boolean;
}

export interface Retention {
  tasks: string | null;
  tickets: string | null;
  runs: string | null;
}

/** What the package needs of an AbortSignal. */
export interface StopSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** What the package needs of a pg.Client (or a client of pg.Pool). */
export interface ClientLike {
  query(query: unknown, values?: unknown[]): Promise<{ rows: any[] }>;
  escapeLiteral(text: string): string;
  escapeIdentifier(text: string): string;
  on(event: string, listener: (...args: any[]) => void): unknown;
  removeListener(event: string, listener: (...args: any[]) => void): unknown;
}

/** A client of a pool, given back with release(). */
export interface PoolClientLike extends ClientLike {
  release(destroy?: boolean | Error): void;
}

/** What the package needs of a pg.Pool. */
export interface PoolLike {
  query(query: unknown, values?: unknown[]): Promise<{ rows: any[] }>;
  connect(): Promise<PoolClientLike>;
  on(event: string, listener: (...args: any[]) => void): unknown;
  end(): Promise<void>;
}

export interface WorklistOptions {
  /** the tenant every verb acts in, set per transaction */
  tenant: string;
  /** a pg.Pool of the caller's; otherwise the Worklist makes its own */
  pool?: PoolLike;
  /** prepare each statement once per connection (not behind a pooler that does not track them) */
  prepare?: boolean;
  /** anything else is pg's connection config for the Worklist's own pool */
  [config: string]: unknown;
}

export class Worklist {
  constructor(options: WorklistOptions);
  readonly tenant: string;
  readonly pool: PoolLike;
  /** the same tenant on one connection of the caller's */
  on(client: ClientLike): Worklist;
  /** a dedicated connection from the pool (LISTEN, worker loops); release() it */
  connect(): Promise<PoolClientLike>;
  /** fn(tx) in one transaction, the tenant set once at BEGIN */
  transaction<T>(fn: (tx: Worklist) => Promise<T>): Promise<T>;
  /** ends the Worklist's own pool (not a pool of the caller's) */
  end(): Promise<void>;
  /** whether the server's claim_next takes a skip list (0.4) */
  hasClaimNextSkip(): Promise<boolean>;

  // tenancy
  grantTenant(tenant: string, role: string, options?: { kind?: BindingKind }): Promise<void>;
  revokeTenant(tenant: string, role: string): Promise<void>;
  eraseTenant(): Promise<number>;

  // tasks
  openTask(id: string, case_id: string, roles: string[], options?: {
    run_id?: string | null; payload?: Json; priority?: number; due_at?: Timestamp | null;
    expiry_policy?: ExpiryPolicy; excluded?: string[]; escalation_roles?: string[];
    claim_timeout?: Interval | null;
  }): Promise<Task>;
  task(id: string): Promise<Task | null>;
  claim(id: string, actor: string, roles: string[]): Promise<Task>;
  /** skip: 0.4 */
  claimNext(actor: string, roles: string[], options?: { skip?: string[] }): Promise<Task | null>;
  release(id: string, actor: string): Promise<void>;
  takeOver(id: string, from_actor: string, actor: string, roles: string[]): Promise<Task>;
  complete(id: string, actor: string, decision: Json): Promise<boolean>;
  setState(id: string, state: TaskState): Promise<boolean>;
  escalate(id: string): Promise<Task>;
  withdrawRun(run_id: string, awaited: string[]): Promise<number>;
  queue(roles: string[], options?: { lim?: number; actor?: string }): Promise<Task[]>;
  forCase(case_id: string): Promise<Task[]>;
  held(actor: string, options?: { lim?: number }): Promise<Task[]>;
  openCount(): Promise<number>;
  overdue(options?: { now?: Timestamp; lim?: number }): Promise<Task[]>;
  sweep(options?: { now?: Timestamp; lim?: number }): Promise<SweepResult>;

  // tasks, 0.4
  taskHistory(id: string, options?: { after?: number; lim?: number }): Promise<TaskEvent[]>;
  note(id: string, actor: string, body: string): Promise<TaskEvent>;
  handOver(id: string, actor: string, to_actor: string, to_roles: string[]): Promise<Task>;
  updateTask(id: string, options?: { priority?: number; due_at?: Timestamp }): Promise<Task>;
  claims(options?: { lim?: number }): Promise<Task[]>;
  claimMany(actor: string, roles: string[], n: number | null, options?: { skip?: string[] }): Promise<Task[]>;
  completeMany(actor: string, ids: string[], decisions: Json[]): Promise<Settled[]>;

  // tickets
  openTicket(id: string, requester: string, title: string, options?: {
    body?: Json; authorities?: string[]; open_deadline?: Timestamp | null;
    confirm_window?: Interval | null; ladder?: Interval[];
  }): Promise<TicketFold>;
  report(ticket: string, actor: string, value: Participation, options?: {
    not_before?: Timestamp | null; reason?: string | null; at?: Timestamp;
  }): Promise<TicketFold>;
  closeTicket(ticket: string, actor: string, outcome: Outcome, options?: {
    reason?: string | null; at?: Timestamp;
  }): Promise<TicketFold>;
  ticketState(ticket: string, options?: { now?: Timestamp }): Promise<TicketFold>;
  ticketHistory(ticket: string): Promise<TicketEvent[]>;
  overdueTickets(options?: { now?: Timestamp; lim?: number }): Promise<TicketFold[]>;

  // runs
  writeCheckpoint(project: string, session: string, run: string, checkpoint_id: string, body: Json, options?: {
    fence?: FenceInput | null; parent_run?: string | null; created_at?: Timestamp;
    run_created_at?: Timestamp | null; park_request?: string | null; parked_at?: Timestamp | null;
    park_deadline?: Timestamp | null; park_resolved_at?: Timestamp | null;
    /** 0.4 */ metadata?: Json; /** 0.4 */ parent_checkpoint_id?: string | null;
  }): Promise<void>;
  readCheckpoint(project: string, session: string, run: string, checkpoint_id: string): Promise<Checkpoint | null>;
  listCheckpoints(project: string, session: string, run: string): Promise<Checkpoint[]>;
  deleteCheckpoint(project: string, session: string, run: string, checkpoint_id: string): Promise<void>;
  pruneCheckpoints(project: string, session: string, run: string, keep: number): Promise<number>;
  claimRun(project: string, session: string, run: string, holder: string, ttl: Interval,
    options?: { now?: Timestamp }): Promise<RunLeaseRow | null>;
  releaseRun(project: string, session: string, run: string, fence: FenceInput,
    options?: { now?: Timestamp }): Promise<void>;
  listDurableRuns(options?: {
    project?: string; session?: string; order_by?: 'run_id' | 'created_at'; park?: ParkState[];
    claimed?: boolean; lim?: number; cursor?: string; now?: Timestamp; /** 0.4 */ concluded?: boolean;
  }): Promise<DurableRunPage>;

  // runs, 0.4
  parkRun(project: string, session: string, run: string, checkpoint_id: string, tasks: string[], options?: {
    fence?: FenceInput | null; body?: Json; park_request?: string; park_deadline?: Timestamp | null;
    now?: Timestamp; metadata?: Json; parent_checkpoint_id?: string | null;
  }): Promise<Checkpoint>;
  claimNextRun(project: string, holder: string, ttl: Interval, options?: {
    session?: string | null; now?: Timestamp;
  }): Promise<ClaimedRun | null>;
  concludeRun(project: string, session: string, run: string, options?: {
    fence?: FenceInput | null; now?: Timestamp;
  }): Promise<number>;

  // sweep, retention, notifications, counters
  setRetention(options?: { tasks?: Interval | null; tickets?: Interval | null; runs?: Interval | null }): Promise<void>;
  retention(): Promise<Retention>;
  channel(): Promise<string>;
  rotateChannel(): Promise<string>;
  stats(): Promise<{ [key: string]: Json }>;
  startSweeper(): Promise<number>;
}

// ---------------------------------------------------------------------------
// Errors

export class WorklistError extends Error {
  /** the SQLSTATE (or, without one, the socket's error code) */
  readonly code: string | null;
  readonly detail: string | null;
  readonly hint: string | null;
  readonly transient: boolean;
}
/** WL001 */
export class NotFoundError extends WorklistError { readonly kind: string | null; readonly id: string | null; }
/** WL002 */
export class ExcludedError extends WorklistError { readonly actor: string | null; readonly id: string | null; }
/** WL003 */
export class WrongRoleError extends WorklistError { readonly actor: string | null; readonly id: string | null; }
/** WL004 */
export class NotPendingError extends WorklistError { readonly id: string | null; readonly state: TaskState | null; }
/** WL005 */
export class AlreadyClaimedError extends WorklistError { readonly id: string | null; readonly holder: string | null; }
/** WL006: holder null when nobody holds the task */
export class NotHeldError extends WorklistError {
  readonly id: string | null; readonly actor: string | null; readonly holder: string | null;
}
/** WL007: current_fence null when the run has none */
export class StaleFenceError extends WorklistError {
  readonly run: string | null; readonly fence: bigint | null; readonly current_fence: bigint | null;
}
/** WL008 (0.4) */
export class RunConcludedError extends WorklistError { readonly run: string | null; }
/** 42501 */
export class InsufficientPrivilegeError extends WorklistError {
  readonly argument: string | null; readonly tenant: string | null;
}
/** 22023 */
export class InvalidArgumentError extends WorklistError { readonly argument: string | null; }
/** 54000 */
export class LimitExceededError extends WorklistError {
  readonly argument: string | null; readonly size: number | null; readonly limit: number | null;
}
/** 28xxx, 3D000, 3F000, 42883, 55000 */
export class ConfigurationError extends WorklistError {}
/** any other SQLSTATE */
export class DatabaseError extends WorklistError {}
export class TransientError extends WorklistError {}
/** 08xxx, 57P01, 57P02, 57P03, 53300, a socket error */
export class ConnectionLostError extends TransientError {}
/** 40001, 40P01 */
export class SerializationError extends TransientError {}
export function isTransient(err: unknown): err is TransientError;
export function fromDriver(err: unknown): unknown;

// ---------------------------------------------------------------------------
// Worker loops

export type TaskWorkerEvent =
  | 'connected' | 'listening' | 'claimed' | 'recovered' | 'resending' | 'completed' | 'lost' | 'released'
  | 'failed' | 'abandoned' | 'woken' | 'connection_lost' | 'unfinished' | 'stopped';

export interface TaskWorkerEventInfo {
  id?: string;
  task?: Task;
  decision?: Json;
  error?: unknown;
  why?: 'notification' | 'poll';
  channel?: string;
  held?: boolean;
}

export interface TaskContext {
  /** aborts when the worker is asked to stop */
  signal: StopSignal;
  /** the Worklist on the worker's connection */
  worklist: Worklist;
}

export interface TaskWorkerOptions {
  actor: string;
  roles: string[];
  /** the decision; null or undefined gives the task back */
  handler: (task: Task, ctx: TaskContext) => Promise<Json | null | undefined> | Json | null | undefined;
  pollMs?: number;
  skipMs?: number;
  graceMs?: number;
  onEvent?: (event: TaskWorkerEvent, info: TaskWorkerEventInfo) => void;
}

export class TaskWorker {
  constructor(worklist: Worklist, options: TaskWorkerOptions);
  readonly handlerCalls: number;
  /** decisions made whose completion the server has not answered */
  readonly decided: Map<string, Json>;
  /** until the signal aborts (by default SIGTERM or SIGINT) */
  run(options?: { signal?: StopSignal }): Promise<void>;
}

export class RunLease {
  constructor(worklist: Worklist, options: {
    project: string; session: string; run: string; holder: string; ttl: number; renewFraction?: number;
  });
  readonly fence: bigint | null;
  readonly due: boolean;
  claim(): Promise<boolean>;
  adopt(fence: bigint, at?: number): void;
  renewIfDue(): Promise<boolean>;
  write(checkpoint_id: string, body: Json, options?: Parameters<Worklist['writeCheckpoint']>[5]): Promise<void>;
  fenced<T>(fn: (fence: bigint | null) => Promise<T>): Promise<T>;
  release(): Promise<void>;
}

export interface RunContext {
  run: ClaimedRun;
  /** the run's newest checkpoint */
  checkpoint: Checkpoint | null;
  /** the tasks the park of that checkpoint awaited, as they are now */
  tasks: (Task | null)[];
  /** aborts when the lease is lost or the run concluded under the handler */
  signal: StopSignal;
  /** aborts when the worker is asked to stop */
  stopping: StopSignal;
  readonly fence: bigint | null;
  write(checkpoint_id: string, body: Json, options?: Parameters<Worklist['writeCheckpoint']>[5]): Promise<void>;
  park(checkpoint_id: string, tasks: string[], options?: Parameters<Worklist['parkRun']>[5]): Promise<Checkpoint>;
  conclude(): Promise<number>;
}

export class RunWorker {
  constructor(worklist: Worklist, options: {
    project: string; session?: string | null; holder: string;
    handler: (ctx: RunContext) => Promise<unknown>;
    ttl?: number; renewFraction?: number; pollMs?: number; graceMs?: number;
    onEvent?: (event: string, info: { [key: string]: unknown }) => void;
  });
  run(options?: { signal?: StopSignal }): Promise<void>;
}

export function backoff(failures: number): number;
export function stopSignal(signals?: string[]): StopSignal;

// ---------------------------------------------------------------------------
// Runs, 0.4: the state of an agent framework (lib/state.js)

/** One pending write of a checkpoint (pendingWrites). */
export interface RunWrite {
  checkpoint_id: string;
  task_id: string;
  idx: number;
  channel: string;
  value: Json;
  /** '' when none */
  task_path: string;
}

/** One stored channel value (runValues). */
export interface RunValue {
  channel: string;
  version: string;
  value: Json;
}

export interface Worklist {
  /** the run's newest checkpoint (created_at, then checkpoint_id), null when none */
  latestCheckpoint(project: string, session: string, run: string): Promise<Checkpoint | null>;
  /** newest first, over a project, a session or a run; metadata: containment filter; before_*: the checkpoint to start after */
  newestCheckpoints(project: string, options?: {
    session?: string | null; run?: string | null; metadata?: { [key: string]: Json } | null;
    before_session?: string | null; before_run?: string | null; before_checkpoint_id?: string | null;
    lim?: number | null;
  }): Promise<Checkpoint[]>;
  /** pending writes of a checkpoint; returns how many were inserted or replaced */
  putWrites(project: string, session: string, run: string, checkpoint_id: string, task_id: string,
    idx: number[], channels: string[], vals: Json[], options?: {
      task_path?: string | null; fence?: FenceInput | null;
    }): Promise<number>;
  /** in (task_path, task_id, idx) order */
  pendingWrites(project: string, session: string, run: string, checkpoint_id: string): Promise<RunWrite[]>;
  /** channel values by (channel, version); returns how many were new */
  putValues(project: string, session: string, run: string, channels: string[], versions: string[], vals: Json[],
    options?: { fence?: FenceInput | null }): Promise<number>;
  /** those of the (channel, version) pairs that exist, in argument order */
  runValues(project: string, session: string, run: string, channels: string[], versions: string[]): Promise<RunValue[]>;
  /** removes the run's checkpoints, writes, values and parks; returns how many checkpoints */
  deleteRun(project: string, session: string, run: string, options?: {
    fence?: FenceInput | null; now?: Timestamp;
  }): Promise<number>;
}

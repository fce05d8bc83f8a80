// Type declarations of @worklist/langgraph (index.js).
import type { RunnableConfig } from '@langchain/core/runnables';
import type { Json, Task, Timestamp, Interval } from 'worklist';
import type {
  BaseCheckpointSaver, Checkpoint, CheckpointListOptions, CheckpointMetadata, CheckpointTuple,
  ChannelVersions, PendingWrite, SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import type { LimitExceededError, StaleFenceError, Worklist } from 'worklist';

export { StaleFenceError, RunConcludedError, LimitExceededError, NotFoundError } from 'worklist';

export interface WorklistSaverOptions {
  /** the worklist project of every thread */
  project: string;
  /** the session of every thread (default 'langgraph') */
  session?: string;
  /** a Worklist of the caller's (its pool and tenant); otherwise give `tenant` and pg's config */
  worklist?: Worklist;
  tenant?: string;
  serde?: SerializerProtocol;
  [config: string]: unknown;
}

/** A thread id, namespace, checkpoint id, filter or limit worklist cannot take. */
export class InvalidConfigError extends TypeError {}

/** 54000: larger than worklist.max_document_size. */
export class StateTooLargeError extends LimitExceededError {
  /** the setting that bounds it */
  readonly setting: 'worklist.max_document_size';
}

/** A lease found taken by another holder at renewal. */
export class LeaseLostError extends StaleFenceError {
  readonly holder: string;
}

export class ThreadLease {
  readonly threadId: string;
  readonly holder: string;
  readonly ttlMs: number;
  /** the fence every write of the thread carries */
  readonly fence: bigint | null;
  readonly renewals: number;
  readonly expiresAt: Date | null;
  /** aborts when the lease is lost (the error as its reason): pass it to invoke/stream */
  readonly signal: AbortSignal;
  readonly isLost: boolean;
  readonly live: boolean;
  release(): Promise<void>;
}

export class WorklistSaver extends BaseCheckpointSaver {
  constructor(options: WorklistSaverOptions);
  readonly project: string;
  readonly session: string;
  readonly worklist: Worklist;
  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined>;
  list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple>;
  put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
    newVersions: ChannelVersions): Promise<RunnableConfig>;
  putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void>;
  deleteThread(threadId: string): Promise<void>;
  /** lease mode: null when another holder has an unexpired lease; `claimed` (a row of claim_next_run) adopts a lease taken already */
  lease(threadId: string, options: {
    holder: string; ttlMs?: number; renewFraction?: number;
    claimed?: { fence: bigint; expires_at: Date } | null; claimedAt?: number;
  }): Promise<ThreadLease | null>;
  end(): Promise<void>;
}

export function encodeValue(serde: SerializerProtocol, value: unknown): Promise<string>;
export function decodeValue(serde: SerializerProtocol, text: string): Promise<unknown>;

// Interrupts as tasks

/** The task a node's interrupt opens (open_task's arguments). */
export interface TaskSpec {
  /** the audience: roles of which one must be the claimer's (required, non-empty) */
  roles: string[];
  /** actors barred from the task (four-eyes) */
  excluded?: string[];
  escalationRoles?: string[];
  priority?: number;
  /** when the task is overdue and its expiry policy applies */
  dueAt?: Timestamp;
  /** default 'deny' */
  expiryPolicy?: 'deny' | 'proceed' | 'escalate';
  /** a number is milliseconds */
  claimTimeout?: Interval;
  payload?: Json;
  /** the task id (default: the thread and the interrupt's id) */
  id?: string;
  /** default: the thread id */
  caseId?: string;
}

/** What a node's interruptAsTask returns once the task is settled. */
export interface TaskOutcome {
  id: string;
  state: 'completed' | 'expired' | 'withdrawn';
  /** the person's decision, or {"policy": "deny" | "proceed"} for an expiry */
  decision: Json | null;
  /** who completed it (null for an expiry or a withdrawal) */
  decided_by: string | null;
}

/** The key of an interrupt's value that holds its TaskSpec. */
export const TASK_KEY: 'worklist:task';

/** In a node: interrupt() until the task is settled; then its outcome. */
export function interruptAsTask(spec: TaskSpec): TaskOutcome;

/** The id of the task of an interrupt of a thread. */
export function interruptTaskId(threadId: string, interruptId: string, spec?: Partial<TaskSpec>): string;

export type GraphStep =
  | { thread: string; status: 'parked'; tasks: Task[] }
  | { thread: string; status: 'finished'; values: Record<string, unknown> };

export type GraphWorkerEvent = 'listening' | 'claimed' | 'parked' | 'resuming' | 'finished' | 'lost' | 'failed' | 'connection_lost';

export interface GraphWorkerOptions {
  /** a graph compiled with a WorklistSaver as its checkpointer */
  graph: { checkpointer?: unknown; invoke(input: unknown, config?: RunnableConfig): Promise<unknown>; getState(config: RunnableConfig): Promise<unknown> };
  /** the holder of the leases this worker takes */
  holder: string;
  /** lease ttl (default 30000) */
  ttlMs?: number;
  /** how often run() looks for work when no notification came (default 1000) */
  pollMs?: number;
  /** merged into every invoke's config (thread_id and signal are the worker's) */
  config?: RunnableConfig;
  /** the park_request of its parks (default 'langgraph-interrupt') */
  parkRequest?: string;
  onEvent?: (name: GraphWorkerEvent, event: { thread?: string; error?: Error; tasks?: Task[]; values?: Record<string, unknown>; fence?: bigint }) => void;
}

export class GraphWorker {
  constructor(options: GraphWorkerOptions);
  /** a new thread from `input`, until it finishes or is parked on tasks; null when leased by another holder */
  start(threadId: string, input: unknown): Promise<GraphStep | null>;
  /** the next claimable run (claim_next_run), carried on; null when there is none */
  runOnce(): Promise<GraphStep | null>;
  /** runOnce until `signal` aborts, woken by the tenant's notifications */
  run(options?: { signal?: AbortSignal }): Promise<void>;
}

// Type declarations of @worklist/langgraph (index.js).
import type { RunnableConfig } from '@langchain/core/runnables';
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
  /** lease mode: null when another holder has an unexpired lease */
  lease(threadId: string, options: { holder: string; ttlMs?: number; renewFraction?: number }): Promise<ThreadLease | null>;
  end(): Promise<void>;
}

export function encodeValue(serde: SerializerProtocol, value: unknown): Promise<string>;
export function decodeValue(serde: SerializerProtocol, text: string): Promise<unknown>;

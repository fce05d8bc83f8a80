// @worklist/langgraph -- a LangGraph checkpointer on the worklist
// PostgreSQL extension (README.md).
export { WorklistSaver, InvalidConfigError, StateTooLargeError } from './lib/saver.js';
export { ThreadLease, LeaseLostError } from './lib/lease.js';
export { GraphWorker, interruptAsTask, interruptTaskId, TASK_KEY } from './lib/interrupts.js';
export { encodeValue, decodeValue } from './lib/codec.js';
export { StaleFenceError, RunConcludedError, LimitExceededError, NotFoundError } from 'worklist';

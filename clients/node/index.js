// worklist — the client of the worklist PostgreSQL extension.
//
// Worklist (lib/client.js) has every verb of one tenant; TaskWorker
// (lib/worker.js) and RunWorker (lib/agent.js) are the loops that claim
// tasks and runs and hand them to a function of the caller's; the errors
// (lib/errors.js) have one class per SQLSTATE.  README.md says how to use
// them.
export { Worklist } from './lib/client.js';
import './lib/state.js'; // the 0.4 state verbs, methods of Worklist
export { TaskWorker } from './lib/worker.js';
export { RunWorker, RunLease } from './lib/agent.js';
export { backoff, stopSignal } from './lib/wait.js';
export * from './lib/errors.js';

// Compiled by tsc --noEmit (test/langgraph/run.sh): index.d.ts as a caller
// of interrupts as tasks uses it.
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import {
  GraphWorker, InvalidConfigError, TASK_KEY, WorklistSaver, interruptAsTask, interruptTaskId,
  type GraphStep, type TaskOutcome, type TaskSpec,
} from '../../index.js';

const State = Annotation.Root({ amount: Annotation<number>(), outcome: Annotation<TaskOutcome>() });
const spec: TaskSpec = {
  roles: ['approvers'], excluded: ['alice'], dueAt: new Date(), expiryPolicy: 'proceed', claimTimeout: 60000,
  payload: { amount: 1 }, priority: 2,
};
const saver = new WorklistSaver({ tenant: 'acme', project: 'approvals' });
const graph = new StateGraph(State)
  .addNode('approve', () => ({ outcome: interruptAsTask(spec) }))
  .addEdge(START, 'approve')
  .addEdge('approve', END)
  .compile({ checkpointer: saver });
const worker = new GraphWorker({
  graph, holder: 'worker-1', ttlMs: 30000, pollMs: 1000,
  onEvent: (name, e) => console.log(name, e.thread, e.error?.message, e.tasks?.map((t) => t.id)),
});
const step: GraphStep | null = await worker.start('req-1', { amount: 3 });
if (step?.status === 'parked') console.log(step.tasks[0].due_at);
else if (step?.status === 'finished') console.log(step.values);
const next = await worker.runOnce();
const decidedBy: string | null = next?.status === 'finished' ? (next.values.outcome as TaskOutcome).decided_by : null;
await worker.run({ signal: AbortSignal.timeout(10) });
const key: 'worklist:task' = TASK_KEY;
console.log(interruptTaskId('req-1', 'abc'), key, decidedBy, new InvalidConfigError('x') instanceof TypeError);
// @ts-expect-error roles are required
interruptAsTask({ excluded: ['alice'] });
// @ts-expect-error no such policy
interruptAsTask({ roles: ['r'], expiryPolicy: 'maybe' });

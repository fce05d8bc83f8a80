// Compiled by tsc --noEmit against index.d.ts: the five-line worker, the
// agent loop and a few verbs, typed as a user would write them.
import {
  NotHeldError, RunWorker, StaleFenceError, TaskWorker, Worklist, isTransient, type Task,
} from 'worklist';

const seen: unknown[] = [];

async function main(): Promise<void> {
  const wl = new Worklist({ tenant: 'acme', max: 4 });
  await new TaskWorker(wl, {
    actor: 'bob', roles: ['finance'],
    handler: async (task: Task) => ({ approved: Number((task.payload as { amount: number }).amount) <= 1000 }),
  }).run();

  const t: Task | null = await wl.task('refund-42');
  if (t !== null && t.due_at !== null) t.due_at.getTime();
  const lease = await wl.claimRun('p', 's', 'r', 'w', 30000);
  if (lease) {
    const next: bigint = lease.fence + 1n;
    await wl.writeCheckpoint('p', 's', 'r', 'c1', { step: 1 }, { fence: lease.fence });
    void next;
  }
  const page = await wl.listDurableRuns({ project: 'p', park: ['outstanding'], lim: 10 });
  for (const e of page.entries) if (e.claim_fence !== null) e.claim_fence.toString();
  try {
    await wl.complete('refund-42', 'bob', { approved: true });
  } catch (err) {
    if (err instanceof NotHeldError) seen.push(err.holder ?? 'nobody');
    if (err instanceof StaleFenceError) seen.push(err.current_fence);
    if (isTransient(err)) seen.push(err.code);
  }
  await new RunWorker(wl, {
    project: 'p', holder: 'agent-1', ttl: 30000,
    handler: async (ctx) => {
      if (ctx.tasks.length === 0) {
        await ctx.park('ask', ['refund-42'], { body: { waiting: true } });
        return;
      }
      await ctx.write('after', { answer: ctx.tasks[0]?.decision ?? null });
    },
  }).run();
  await wl.end();
}
void main;

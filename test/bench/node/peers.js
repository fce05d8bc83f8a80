// peers.js -- the peer rows of the benchmark (bench.sh, workloads "peers"
// and "batch"): jobs taken and finished by 8 workers in one Node.js
// process, for worklist (claim_next then complete over a pg pool of 8, or
// claim_many then complete_many), graphile-worker and pg-boss, each in the
// mode its documentation starts from and in its recommended batched mode.
//
//   node peers.js load SYSTEM N
//       bring the backlog of SYSTEM (graphile or boss) to N jobs waiting
//       (worklist's backlog is loaded in SQL by bench.sh)
//   node peers.js run MODE SECONDS WORKERS
//       run MODE for a warm-up of 2 seconds and then SECONDS seconds, and
//       print "units seconds rate median_ms p99_ms all" for the measured
//       part (the latencies are \N where a unit is not timed by this
//       client); all is the number of jobs finished from the start of the
//       warm-up to the end of the run, what bench.sh divides CPU time by
//
// MODE: worklist (claim_next + complete per job), worklist.notify_off (the
// same with worklist.notify = off for its sessions), worklist.many10 and
// worklist.many100 (claim_many of 10 or 100 tasks, then complete_many of
// them: two statements, two commits, per batch), graphile (the default
// runner), graphile.batched (a local queue and grouped completions), boss
// (fetch + complete per job), boss.batched (fetch and complete in batches
// of BOSS_BATCH).
//
// Units are counted in the database, not by the clients: the number of
// jobs not yet finished, read at the start and at the end of the measured
// part, so every system is judged by what it committed.  Connections come
// from the libpq environment (PGHOST, PGPORT, PGUSER, PGDATABASE).
'use strict';

const pg = require('pg');

const TENANT = 'peer';			// worklist's tenant (bench.load_queue)
const QUEUE = 'bench';			// graphile's task identifier, pg-boss's queue
const BOSS_BATCH = 100;
const GRAPHILE_LOCAL_QUEUE = 500;
const WARMUP_MS = 2000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => Number(process.hrtime.bigint()) / 1e6;

function connection() {
	return {
		host: process.env.PGHOST,
		port: Number(process.env.PGPORT || 5432),
		user: process.env.PGUSER,
		database: process.env.PGDATABASE,
	};
}

// Jobs not yet finished, as the database has them.
const UNFINISHED = {
	worklist: `SELECT count(*)::int AS n FROM worklist.task
	            WHERE tenant = '${TENANT}' AND state IN ('open', 'claimed')`,
	graphile: 'SELECT count(*)::int AS n FROM graphile_worker._private_jobs',
	boss: `SELECT count(*)::int AS n FROM pgboss.job
	        WHERE name = '${QUEUE}' AND state IN ('created', 'retry', 'active')`,
};

function quantiles(values) {
	if (values.length === 0)
		return ['\\N', '\\N'];
	const v = Float64Array.from(values).sort();
	const n = v.length;
	const median = n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	const p99 = v[Math.min(n - 1, Math.max(0, Math.ceil(n * 0.99) - 1))];
	return [median.toFixed(3), p99.toFixed(3)];
}

async function quietLogger() {
	const { Logger } = await import('graphile-worker');
	return new Logger(() => (level, message) => {
		if (level === 'error')
			console.error(`graphile-worker: ${message}`);
	});
}

// ---------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------
function newPool(options) {
	const pool = new pg.Pool({ ...connection(), ...options });
	pool.on('error', (e) => console.error(`pg pool: ${e.message}`));
	pool.on('connect', (client) => client.on('error', (e) => console.error(`pg client: ${e.message}`)));
	return pool;
}

async function loadGraphile(n) {
	const { makeWorkerUtils } = await import('graphile-worker');
	const pool = newPool({ max: 2 });
	const utils = await makeWorkerUtils({ pgPool: pool, logger: await quietLogger() });
	await utils.migrate();
	const have = (await pool.query(UNFINISHED.graphile)).rows[0].n;
	for (let i = have; i < n; i += 10000) {
		const specs = [];
		for (let j = i; j < Math.min(n, i + 10000); j++)
			specs.push({ identifier: QUEUE, payload: { i: j } });
		await utils.addJobs(specs);
	}
	await utils.release();
	await pool.end();
}

async function loadBoss(n) {
	const { PgBoss } = await import('pg-boss');
	const boss = new PgBoss({ ...connection(), max: 2, supervise: false, schedule: false });
	boss.on('error', (e) => console.error(`pg-boss: ${e.message}`));
	await boss.start();
	if (!(await boss.getQueue(QUEUE)))
		await boss.createQueue(QUEUE);
	const client = new pg.Client(connection());
	await client.connect();
	const have = (await client.query(UNFINISHED.boss)).rows[0].n;
	await client.end();
	for (let i = have; i < n; i += 10000) {
		const jobs = [];
		for (let j = i; j < Math.min(n, i + 10000); j++)
			jobs.push({ data: { i: j } });
		await boss.insert(QUEUE, jobs);
	}
	await boss.stop({ graceful: false });
}

// ---------------------------------------------------------------------------
// Workers
// ---------------------------------------------------------------------------

// Each start function starts WORKERS workers and returns
// { stop: async () => ..., timed: [ms of each unit finished], dry: bool }.
// A per-job client times each unit (take + finish) that ends after
// `from` (set when the measured part begins).

// options: notify (false: worklist.notify = off), batch (0: claim_next +
// complete; n: claim_many(n) + complete_many)
async function startWorklist(workers, { notify = true, batch = 0 } = {}) {
	const options = `-c worklist.tenant=${TENANT}` + (notify ? '' : ' -c worklist.notify=off');
	const pool = newPool({ max: workers, options });
	const state = { stopping: false, from: Infinity, timed: [], dry: false };
	const single = async (actor) => {
		const got = await pool.query({
			name: 'claim',
			text: "SELECT (worklist.claim_next($1, '{reviewer,approver,legal}')).id",
			values: [actor],
		});
		const id = got.rows[0].id;
		if (id === null)
			return 0;
		await pool.query({
			name: 'complete',
			text: `SELECT worklist.complete($1, $2, '{"approved": true}')`,
			values: [id, actor],
		});
		return 1;
	};
	// Each claim of the batch is committed (and listed by held() and
	// claims()) before the worker starts it; complete_many's return is
	// the durable completion of all of them.  Nothing is held in the
	// client that the database does not know about.
	const many = async (actor) => {
		const got = await pool.query({
			name: 'claim_many',
			text: "SELECT id FROM worklist.claim_many($1, '{reviewer,approver,legal}', $2)",
			values: [actor, batch],
		});
		const ids = got.rows.map((r) => r.id);
		if (ids.length === 0)
			return 0;
		await pool.query({
			name: 'complete_many',
			text: 'SELECT count(*) FROM worklist.complete_many($1, $2, $3::jsonb[])',
			values: [actor, ids, ids.map(() => '{"approved": true}')],
		});
		return ids.length;
	};
	const loop = async (w) => {
		const actor = `w${w}`;
		while (!state.stopping) {
			const t0 = now();
			if ((batch ? await many(actor) : await single(actor)) === 0) {
				state.dry = true;
				return;
			}
			const t1 = now();
			if (!batch && t0 >= state.from)
				state.timed.push(t1 - t0);
		}
	};
	const loops = Array.from({ length: workers }, (_, w) => loop(w + 1));
	state.stop = async () => {
		state.stopping = true;
		await Promise.all(loops);
		await pool.end();
	};
	return state;
}

async function startGraphile(workers, batched) {
	const { run } = await import('graphile-worker');
	// graphile-worker's own default pool size (maxPoolSize 10)
	const pool = newPool({ max: 10 });
	const options = {
		pgPool: pool,
		concurrency: workers,
		noHandleSignals: true,
		logger: await quietLogger(),
		taskList: { [QUEUE]: async () => {} },
	};
	if (batched)
		options.preset = {
			worker: {
				localQueue: { size: GRAPHILE_LOCAL_QUEUE },
				completeJobBatchDelay: 0,
				failJobBatchDelay: 0,
			},
		};
	const runner = await run(options);
	const state = { from: Infinity, timed: [], dry: false };
	state.stop = async () => {
		await runner.stop();
		await pool.end();
	};
	return state;
}

async function startBoss(workers, batched) {
	const { PgBoss } = await import('pg-boss');
	const boss = new PgBoss(connection());
	boss.on('error', (e) => console.error(`pg-boss: ${e.message}`));
	await boss.start();
	const state = { stopping: false, from: Infinity, timed: [], dry: false };
	const loop = async () => {
		while (!state.stopping) {
			const t0 = now();
			const jobs = batched
				? await boss.fetch(QUEUE, { batchSize: BOSS_BATCH })
				: await boss.fetch(QUEUE);
			if (!jobs || jobs.length === 0) {
				state.dry = true;
				return;
			}
			if (batched)
				await boss.complete(QUEUE, jobs.map((j) => j.id));
			else
				await boss.complete(QUEUE, jobs[0].id);
			const t1 = now();
			if (!batched && t0 >= state.from)
				state.timed.push(t1 - t0);
		}
	};
	const loops = Array.from({ length: workers }, () => loop());
	state.stop = async () => {
		state.stopping = true;
		await Promise.all(loops);
		await boss.stop({ graceful: true, timeout: 10000 });
	};
	return state;
}

async function runMode(mode, seconds, workers) {
	const system = mode.split('.')[0];
	const start = {
		worklist: () => startWorklist(workers),
		'worklist.notify_off': () => startWorklist(workers, { notify: false }),
		'worklist.many10': () => startWorklist(workers, { batch: 10 }),
		'worklist.many100': () => startWorklist(workers, { batch: 100 }),
		graphile: () => startGraphile(workers, false),
		'graphile.batched': () => startGraphile(workers, true),
		boss: () => startBoss(workers, false),
		'boss.batched': () => startBoss(workers, true),
	}[mode];
	if (!start)
		throw new Error(`unknown mode: ${mode}`);

	const counter = new pg.Client(connection());
	await counter.connect();
	const unfinished = async () => (await counter.query(UNFINISHED[system])).rows[0].n;

	const before = await unfinished();
	const state = await start();
	await sleep(WARMUP_MS);
	const u0 = await unfinished();
	const t0 = now();
	state.from = t0;
	await sleep(seconds * 1000);
	const u1 = await unfinished();
	const t1 = now();
	state.from = Infinity;
	const timed = state.timed.slice();
	await state.stop();
	const after = await unfinished();
	await counter.end();

	if (state.dry || u1 === 0)
		throw new Error(`the backlog of ${system} ran dry; load more jobs or shorten the run`);
	const units = u0 - u1;
	const elapsed = (t1 - t0) / 1000;
	const [median, p99] = quantiles(timed);
	console.log(`${units} ${elapsed.toFixed(3)} ${(units / elapsed).toFixed(1)} ${median} ${p99} ${before - after}`);
}

async function main() {
	const [cmd, ...args] = process.argv.slice(2);
	if (cmd === 'load' && args[0] === 'graphile')
		await loadGraphile(Number(args[1]));
	else if (cmd === 'load' && args[0] === 'boss')
		await loadBoss(Number(args[1]));
	else if (cmd === 'run')
		await runMode(args[0], Number(args[1]), Number(args[2] || 8));
	else
		throw new Error('usage: peers.js load graphile|boss N | run MODE SECONDS [WORKERS]');
}

main().then(() => process.exit(0), (e) => {
	console.error(`peers.js: ${e.stack || e}`);
	process.exit(1);
});

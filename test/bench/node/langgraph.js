// langgraph.js -- the LangGraph rows of the benchmark (bench.sh, workload
// "langgraph"): one graph of 5 nodes in a chain over a growing message list
// (LangGraph's MessagesAnnotation), run by THREADS threads at once, each for
// STEPS node steps (STEPS / 5 turns: a turn is one invoke with a human
// message, each node adds an AI message), checkpointed by WorklistSaver
// (clients/langgraph, each thread under a lease, so every put and putWrites
// carries its fence) or by PostgresSaver (@langchain/langgraph-checkpoint-
// postgres), both on one pg pool of THREADS connections.
//
// SAVER: worklist (its Worklist client with prepare: true, each statement
// prepared once per connection), worklist.unprepared (the client's default,
// prepare: false, as behind a transaction-mode pooler) or postgres.
//
//   node langgraph.js setup SAVER
//       postgres: PostgresSaver's setup() (its tables); worklist: nothing
//       (CREATE EXTENSION is done by bench.sh)
//   node langgraph.js run SAVER THREADS STEPS
//       run the threads and print one line:
//       "steps seconds rate median_ms p99_ms roundtrips puts writes reads"
//       -- steps per second over the whole run, the median and 99th
//       percentile of the step latencies, and the counts of statements
//       sent (every query of the pg client: BEGIN and COMMIT count) and of
//       the saver's put, putWrites and getTuple calls
//
// Every invoke runs with durability "sync": a step ends when its checkpoint
// is committed, so a step's latency is one node plus the saver's writes of
// it.  Step latencies: the first node of a turn from the invoke's start
// (which reads the thread's newest checkpoint and writes the input's
// checkpoints), each next node from the previous node's update, and the
// last one up to the end of the invoke (its checkpoint written).  Leases
// are taken before the clock starts and released after it stops.
//
// The message texts come from a fixed pseudo-random sequence, so both
// savers store the same bytes.  Connections come from the libpq
// environment (PGHOST, PGPORT, PGUSER, PGDATABASE).
'use strict';

const pg = require('pg');

const NODES = ['plan', 'research', 'draft', 'review', 'answer'];
const WORDS = ('the a of to and in checkpoint thread state graph node message step saver lease fence value '
	+ 'channel write read plan draft review answer research tool call result user agent run task '
	+ 'queue worker table index row page commit version metadata').split(' ');
const PROJECT = 'bench';
const TENANT = 'bench';

const now = () => Number(process.hrtime.bigint()) / 1e6;

function connection() {
	return {
		host: process.env.PGHOST,
		port: Number(process.env.PGPORT || 5432),
		user: process.env.PGUSER,
		database: process.env.PGDATABASE,
	};
}

function quantiles(values) {
	if (values.length === 0)
		return ['\\N', '\\N'];
	const v = Float64Array.from(values).sort();
	const n = v.length;
	const median = n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	const p99 = v[Math.min(n - 1, Math.max(0, Math.ceil(n * 0.99) - 1))];
	return [median.toFixed(3), p99.toFixed(3)];
}

// A text of about `length` characters from a generator seeded by `seed`.
function text(seed, length) {
	let x = (seed * 2654435761) >>> 0 || 1;
	const out = [];
	let n = 0;
	while (n < length) {
		x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
		const w = WORDS[x % WORDS.length];
		out.push(w);
		n += w.length + 1;
	}
	return out.join(' ');
}

// Every statement the pg client sends, whichever saver sends it.
let roundtrips = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function counted(...args) {
	roundtrips += 1;
	return query.apply(this, args);
};

function newPool(max) {
	const pool = new pg.Pool({ ...connection(), max });
	pool.on('error', (e) => console.error(`pg pool: ${e.message}`));
	return pool;
}

async function makeSaver(kind, pool) {
	if (kind === 'postgres') {
		const { PostgresSaver } = await import('@langchain/langgraph-checkpoint-postgres');
		return new PostgresSaver(pool);
	}
	if (kind === 'worklist' || kind === 'worklist.unprepared') {
		const { Worklist } = await import('worklist');
		const { WorklistSaver } = await import('@worklist/langgraph');
		const worklist = new Worklist({ tenant: TENANT, pool, prepare: kind === 'worklist' });
		return new WorklistSaver({ project: PROJECT, worklist });
	}
	throw new Error(`unknown saver: ${kind}`);
}

// counts of the saver's calls, and the time spent in each kind (printed
// to stderr)
function count(saver) {
	const calls = { put: 0, putWrites: 0, getTuple: 0 };
	const ms = { put: 0, putWrites: 0, getTuple: 0 };
	for (const m of Object.keys(calls)) {
		const f = saver[m].bind(saver);
		saver[m] = async (...args) => {
			calls[m] += 1;
			const t = now();
			try {
				return await f(...args);
			} finally {
				ms[m] += now() - t;
			}
		};
	}
	return { calls, ms };
}

async function graphOf(saver) {
	const { StateGraph, MessagesAnnotation, START, END } = await import('@langchain/langgraph');
	const { AIMessage } = await import('@langchain/core/messages');
	const builder = new StateGraph(MessagesAnnotation);
	for (const [i, name] of NODES.entries()) {
		builder.addNode(name, (state) => ({
			messages: [new AIMessage(`${name}: ${text(state.messages.length * 7 + i + 1, 120)}`)],
		}));
	}
	builder.addEdge(START, NODES[0]);
	for (let i = 1; i < NODES.length; i++)
		builder.addEdge(NODES[i - 1], NODES[i]);
	builder.addEdge(NODES[NODES.length - 1], END);
	return builder.compile({ checkpointer: saver });
}

async function run(kind, threads, steps) {
	const { HumanMessage } = await import('@langchain/core/messages');
	if (steps % NODES.length !== 0)
		throw new Error(`STEPS must be a multiple of ${NODES.length}`);
	const turns = steps / NODES.length;
	const pool = newPool(threads);
	// every connection made before the clock starts
	const clients = await Promise.all(Array.from({ length: threads }, () => pool.connect()));
	for (const c of clients) c.release();
	const saver = await makeSaver(kind, pool);
	const { calls, ms } = count(saver);
	const graph = await graphOf(saver);
	const ids = Array.from({ length: threads }, (_, t) => `thread-${t}`);
	const leases = [];
	if (kind.startsWith('worklist')) {
		for (const id of ids) {
			const lease = await saver.lease(id, { holder: `bench-${id}`, ttlMs: 60000 });
			if (!lease) throw new Error(`the lease of ${id} is held by another holder`);
			leases.push(lease);
		}
	}
	const latencies = [];
	roundtrips = 0;
	for (const k of Object.keys(calls)) calls[k] = ms[k] = 0;
	const t0 = now();
	await Promise.all(ids.map(async (id, t) => {
		const config = { configurable: { thread_id: id }, streamMode: 'updates', durability: 'sync' };
		if (leases[t]) config.signal = leases[t].signal;
		for (let turn = 0; turn < turns; turn++) {
			let last = now();
			let seen = 0;
			const input = { messages: [new HumanMessage(`turn ${turn}: ${text(t * 1000 + turn + 1, 60)}`)] };
			for await (const chunk of await graph.stream(input, config)) {
				if (Object.keys(chunk).some((k) => NODES.includes(k))) {
					seen += 1;
					if (seen < NODES.length) {
						const at = now();
						latencies.push(at - last);
						last = at;
					}
				}
			}
			if (seen !== NODES.length)
				throw new Error(`thread ${id} turn ${turn}: ${seen} node updates, expected ${NODES.length}`);
			latencies.push(now() - last);
		}
	}));
	const seconds = (now() - t0) / 1000;
	const sent = roundtrips;
	for (const lease of leases)
		await lease.release();
	// every thread has its whole message list
	const state = await graph.getState({ configurable: { thread_id: ids[0] } });
	const want = turns * (NODES.length + 1);
	if (state.values.messages.length !== want)
		throw new Error(`thread ${ids[0]} has ${state.values.messages.length} messages, expected ${want}`);
	await pool.end();
	const total = threads * steps;
	console.error(`${kind}: ms per call: ${Object.keys(ms).map((k) => `${k} ${(ms[k] / calls[k]).toFixed(2)}`).join(', ')}`);
	const [median, p99] = quantiles(latencies);
	console.log([total, seconds.toFixed(3), (total / seconds).toFixed(1), median, p99, sent,
		calls.put, calls.putWrites, calls.getTuple].join(' '));
}

async function setup(kind) {
	if (kind !== 'postgres')
		return;
	const pool = newPool(1);
	const saver = await makeSaver(kind, pool);
	await saver.setup();
	await pool.end();
}

async function main() {
	const [cmd, kind, a, b] = process.argv.slice(2);
	if (cmd === 'setup')
		await setup(kind);
	else if (cmd === 'run')
		await run(kind, Number(a), Number(b));
	else
		throw new Error('usage: langgraph.js setup SAVER | run SAVER THREADS STEPS');
}

main().catch((e) => {
	console.error(e && e.stack || e);
	process.exit(1);
});

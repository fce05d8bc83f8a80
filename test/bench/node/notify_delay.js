// notify_delay.js -- how long after its commit a change is notified, under
// whatever load runs beside (bench.sh, workload "notify").
//
//   node notify_delay.js TENANT SECONDS INTERVAL_MS
//
// A listener LISTENs on the tenant's channel (SELECT worklist.channel()).  A
// probe writes a checkpoint of its own run every INTERVAL_MS for SECONDS
// seconds and notes when each write's commit was acknowledged.  A payload
// counts the changes committed since the tenant's previous one, per kind and
// event; the probe's writes are the only run "checkpointed" changes of the
// tenant, so each such count is matched, oldest first, with the probes not
// yet notified, and each match gives a delay: the payload's arrival minus
// the probe's acknowledgement (0 when the payload came first).  Prints
// "probes notified lost median_ms p99_ms max_ms payloads", where lost counts
// the probes still not notified 2 seconds after the last one.
'use strict';

const pg = require('pg');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => Number(process.hrtime.bigint()) / 1e6;

function quantile(sorted, q) {
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * q) - 1))];
}

async function main() {
	const [tenant, seconds, interval] = process.argv.slice(2);
	const config = {
		host: process.env.PGHOST,
		port: Number(process.env.PGPORT || 5432),
		user: process.env.PGUSER,
		database: process.env.PGDATABASE,
		options: `-c worklist.tenant=${tenant}`,
	};
	const listener = new pg.Client(config);
	const probe = new pg.Client(config);
	await listener.connect();
	await probe.connect();

	const pending = [];		// probes not yet notified: { acked: ms or undefined }
	const delays = [];
	let payloads = 0;
	listener.on('notification', (msg) => {
		const at = now();
		let n = 0;
		payloads++;
		try {
			const p = JSON.parse(msg.payload);
			n = (p && p.run && Number(p.run.checkpointed)) || 0;
		} catch (e) {
			return;
		}
		for (let i = 0; i < n && pending.length > 0; i++) {
			const p = pending.shift();
			delays.push(p.acked === undefined ? 0 : Math.max(0, at - p.acked));
		}
	});
	const channel = (await listener.query('SELECT worklist.channel() AS c')).rows[0].c;
	await listener.query(`LISTEN ${listener.escapeIdentifier(channel)}`);

	let probes = 0;
	const end = now() + Number(seconds) * 1000;
	while (now() < end) {
		const p = { acked: undefined };
		pending.push(p);	// before sending: the payload may beat the reply
		await probe.query(
			"SELECT worklist.write_checkpoint('notify-probe', 's', 'r', 'c' || $1::text, '{}')",
			[probes % 20]);
		p.acked = now();
		probes++;
		await sleep(Number(interval));
	}
	await sleep(2000);
	await probe.end();
	await listener.end();

	const sorted = Float64Array.from(delays).sort();
	const fmt = (v) => (v === undefined ? '\\N' : v.toFixed(3));
	const median = sorted.length
		? (sorted.length % 2 ? sorted[(sorted.length - 1) / 2]
			: (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2)
		: undefined;
	console.log([probes, delays.length, pending.length, fmt(median),
		fmt(sorted.length ? quantile(sorted, 0.99) : undefined),
		fmt(sorted.length ? sorted[sorted.length - 1] : undefined), payloads].join(' '));
}

main().then(() => process.exit(0), (e) => {
	console.error(`notify_delay.js: ${e.stack || e}`);
	process.exit(1);
});

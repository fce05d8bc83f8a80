// The statements of WorklistSaver: each call of the saver is one statement
// (one round trip, one transaction), made only of worklist verbs.
//
// $1 is always the tenant, set for the statement's own transaction (as the
// client package does: set_config(..., true) in a subquery the verbs are
// computed from), so nothing of it stays on a pooled connection.  Values
// come back as jsonb text, handed to the serializer unparsed.
//
// Values travel as one JSON array of them (a jsonb parameter the statement
// takes apart into the verb's jsonb[], and a json array of their texts
// coming back), not as SQL arrays: a value is JSON text already, so the
// array costs a join on the way in and one JSON.parse on the way out,
// where an array literal would escape every quote of every value in
// JavaScript and parse it back character by character.

// The metadata key that holds a checkpoint's namespace.
export const NS_KEY = 'worklist:ns';
// Between a namespace and a channel name or checkpoint id (U+001F, the
// unit separator, which no LangGraph name contains).
export const SEP = '\u001f';

const TENANT = `(SELECT pg_catalog.set_config('worklist.tenant', $1, true) AS tenant OFFSET 0) s`;
const ns = (c) => `COALESCE(${c}.metadata OPERATOR(pg_catalog.->>) '${NS_KEY}', '')`;

// A namespace's key of a channel: the name itself in the root namespace.
const channelKey = (nsExpr, key) =>
  `CASE WHEN ${nsExpr} OPERATOR(pg_catalog.=) '' THEN ${key} ELSE ${nsExpr} OPERATOR(pg_catalog.||) '${SEP}' OPERATOR(pg_catalog.||) ${key} END`;

// A checkpoint tuple from the rows of `source` (a set of worklist.checkpoint
// named c): the checkpoint, its values by (channel, version), its pending
// writes, and (for a checkpoint older than format 4) the sends its parent
// had pending.
function tuples(source) {
  return `SELECT c.run, c.checkpoint_id, c.parent_checkpoint_id, c.body::text AS body,
       (c.metadata OPERATOR(pg_catalog.-) '${NS_KEY}'::text)::text AS metadata, ${ns('c')} AS ns,
       v.channels, v.vals, w.task_ids, w.channels AS write_channels, w.vals AS write_vals,
       CASE WHEN (c.body OPERATOR(pg_catalog.->>) 'v')::integer OPERATOR(pg_catalog.<) 4
                 AND c.parent_checkpoint_id IS NOT NULL
            THEN ARRAY(SELECT p.value::text
                         FROM worklist.pending_writes(c.project, c.session, c.run, c.parent_checkpoint_id)
                              WITH ORDINALITY AS p(checkpoint_id, task_id, idx, channel, value, task_path, o)
                        WHERE p.channel OPERATOR(pg_catalog.=) '__pregel_tasks'
                        ORDER BY p.o)
       END AS sends
  FROM ${TENANT}
 CROSS JOIN LATERAL (${source}) c
 CROSS JOIN LATERAL (
       SELECT pg_catalog.array_agg(r.channel ORDER BY r.o) AS channels,
              pg_catalog.json_agg(r.value::text ORDER BY r.o)::text AS vals
         FROM worklist.run_values(c.project, c.session, c.run,
                ARRAY(SELECT ${channelKey(ns('c'), 'e.key')} FROM pg_catalog.jsonb_each_text(c.body OPERATOR(pg_catalog.->) 'channel_versions') e),
                ARRAY(SELECT e.value FROM pg_catalog.jsonb_each_text(c.body OPERATOR(pg_catalog.->) 'channel_versions') e))
              WITH ORDINALITY AS r(channel, version, value, o)) v
 CROSS JOIN LATERAL (
       SELECT pg_catalog.array_agg(p.task_id ORDER BY p.o) AS task_ids,
              pg_catalog.array_agg(p.channel ORDER BY p.o) AS channels,
              pg_catalog.json_agg(p.value::text ORDER BY p.o)::text AS vals
         FROM worklist.pending_writes(c.project, c.session, c.run, c.checkpoint_id)
              WITH ORDINALITY AS p(checkpoint_id, task_id, idx, channel, value, task_path, o)) w
 WHERE s.tenant IS NOT NULL AND c.checkpoint_id IS NOT NULL`;
}

// $2 project, $3 session, $4 run (thread), $5 checkpoint id
export const GET_BY_ID = tuples('SELECT * FROM worklist.read_checkpoint($2, $3, $4, $5)');

// $2 project, $3 session, $4 run, $5 namespace
export const GET_LATEST = tuples(`SELECT * FROM worklist.newest_checkpoints($2, $3, $4,
       metadata => pg_catalog.jsonb_build_object('${NS_KEY}', $5::text), lim => 1)`);

// $2 project, $3 session, $4 run or NULL, $5 metadata filter or NULL,
// $6 before's run, $7 before's checkpoint id, $8 lim
export const LIST = `${tuples(`SELECT * FROM worklist.newest_checkpoints($2, $3, $4::text,
       metadata => $5::jsonb, before_run => $6::text, before_checkpoint_id => $7::text, lim => $8::integer)`)}
 ORDER BY c.created_at DESC, c.checkpoint_id COLLATE "C" DESC, c.session COLLATE "C" DESC, c.run COLLATE "C" DESC`;

// $2 project, $3 session, $4 run, $5 checkpoint id, $6 body, $7 metadata,
// $8 namespace, $9 parent checkpoint id, $10 fence
const WRITE = `worklist.write_checkpoint($2, $3, $4, $5, $6::jsonb, fence => $10::bigint,
         metadata => $7::jsonb OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('${NS_KEY}', $8::text),
         parent_checkpoint_id => $9::text)`;
export const PUT = `SELECT ${WRITE} AS written FROM ${TENANT} WHERE s.tenant IS NOT NULL`;
// The jsonb[] of the values in the JSON array $n.
const values = (n) => `ARRAY(SELECT e.value FROM pg_catalog.jsonb_array_elements($${n}::jsonb) WITH ORDINALITY AS e(value, o)
                ORDER BY e.o)`;

// and $11 channels, $12 versions, $13 values (a JSON array)
export const PUT_WITH_VALUES = `SELECT worklist.put_values($2, $3, $4, $11::text[], $12::text[], ${values(13)},
         fence => $10::bigint) AS stored, ${WRITE} AS written
  FROM ${TENANT} WHERE s.tenant IS NOT NULL`;

// $2 project, $3 session, $4 run, $5 checkpoint id, $6 task id, $7 indexes,
// $8 channels, $9 values (a JSON array), $10 task path, $11 fence
export const PUT_WRITES = `SELECT worklist.put_writes($2, $3, $4, $5, $6, $7::integer[], $8::text[], ${values(9)},
         task_path => $10::text, fence => $11::bigint) AS n
  FROM ${TENANT} WHERE s.tenant IS NOT NULL`;

// $2 project, $3 session, $4 run, $5 fence
export const DELETE_THREAD = `SELECT worklist.delete_run($2, $3, $4, fence => $5::bigint) AS n
  FROM ${TENANT} WHERE s.tenant IS NOT NULL`;

// A park on a checkpoint the saver wrote (interrupts as tasks): park_run
// writes it again as it is (body, metadata, parent), awaiting the tasks,
// and ends the lease.
// $2 project, $3 session, $4 run, $5 checkpoint id, $6 tasks, $7 fence,
// $8 park request
export const PARK = `SELECT p.checkpoint_id, p.park_resolved_at IS NOT NULL AS resolved
  FROM ${TENANT}
 CROSS JOIN LATERAL worklist.read_checkpoint($2, $3, $4, $5) c
 CROSS JOIN LATERAL worklist.park_run(c.project, c.session, c.run, c.checkpoint_id, $6::text[],
         fence => $7::bigint, body => c.body, park_request => $8::text, metadata => c.metadata,
         parent_checkpoint_id => c.parent_checkpoint_id) p
 WHERE s.tenant IS NOT NULL AND c.checkpoint_id IS NOT NULL`;

-- Hostile input, generated: every function of schema worklist that SQL can
-- call is read from pg_proc (argument names and types), called once with
-- a valid baseline, then once per argument with each hostile value of that
-- argument's type in its place, once per hostile tenant setting, and in
-- random combinations.  Each call runs in a subtransaction that is always
-- rolled back, so every call meets the same fixture, and its SQLSTATE is
-- recorded.  A call may succeed or fail with a code the reference allows
-- for what was substituted; anything else (XX000, a code the verb has no
-- business raising) is listed below as unexpected.  A crash ends the
-- session and fails the test.
--
-- Functions added to the schema later are covered without changing this
-- file; a type with no hostile values defined here is listed as uncovered.

SET client_min_messages = warning;
SET timezone = 'UTC';
SET worklist.tenant = 'hostile_battery';

CREATE ROLE hostile_bound;
CREATE ROLE hostile_outsider;

-- ------------------------------------------------------------------
-- Fixture: a claimed task, a ticket with an event, three runs with
-- checkpoints (one claimed), a bound tenant, and listing cursors.
-- ------------------------------------------------------------------
SELECT (worklist.open_task('hb_task', 'hb_case', '{r}', run_id => 'hb_run',
        due_at => '2200-01-01', escalation_roles => '{boss}')).state;
SELECT (worklist.claim('hb_task', 'alice', '{r}')).state;
SELECT (worklist.open_task('hb_free', 'hb_case', '{r}', run_id => 'hb_run')).state;
SELECT (worklist.open_ticket('hb_ticket', 'req', 'title', authorities => '{lead}',
        open_deadline => '2100-01-02', ladder => '{1 hour}')).state;
SELECT (worklist.report('hb_ticket', 'alice', 'working', at => '2100-01-01 06:00')).state;
SELECT worklist.write_checkpoint('hb_p', 'hb_s', r, 'hb_c1', '{"step": 1}',
        created_at => '2100-01-01 01:00', park_request => 'approve',
        park_deadline => '2100-01-02')
  FROM unnest('{hb_r,hb_r2,hb_r3}'::text[]) r;
-- claimed twice (a renewal), so its fence is above 1 whatever the
-- sequence's position: no hostile fence value can match it
SELECT (worklist.claim_run('hb_p', 'hb_s', 'hb_r', 'alice', '1 day', '2100-01-01')).holder;
SELECT (worklist.claim_run('hb_p', 'hb_s', 'hb_r', 'alice', '1 day', '2100-01-01')).fence > 1 AS renewed;
SELECT worklist.grant_tenant('hostile_bound', 'hostile_bound');

CREATE TEMP TABLE hb_fix (k text PRIMARY KEY, v text);
GRANT SELECT ON hb_fix TO PUBLIC;
INSERT INTO hb_fix
SELECT 'fence', fence::text FROM worklist.run_claim
 WHERE tenant = 'hostile_battery' AND run = 'hb_r'
UNION ALL
SELECT 'cursor', cursor FROM worklist.list_durable_runs('hb_p', 'hb_s', lim => 1)
UNION ALL
SELECT 'cursor_created', cursor
  FROM worklist.list_durable_runs('hb_p', 'hb_s', 'created_at', lim => 1)
UNION ALL
SELECT 'cursor_unscoped', cursor FROM worklist.list_durable_runs(lim => 1)
UNION ALL
SELECT 'cursor_parked', cursor
  FROM worklist.list_durable_runs('hb_p', 'hb_s', park => '{outstanding}', lim => 1);
SET worklist.tenant = 'hostile_battery_other';
SELECT worklist.write_checkpoint('hb_p', 'hb_s', r, 'hb_c1', '{}')
  FROM unnest('{hb_r,hb_r2}'::text[]) r;
INSERT INTO hb_fix
SELECT 'cursor_other_tenant', cursor FROM worklist.list_durable_runs('hb_p', 'hb_s', lim => 1);
SET worklist.tenant = 'hostile_battery';
SELECT k, v IS NOT NULL AS present FROM hb_fix ORDER BY k;

-- base64url without padding, as the cursor is written
CREATE FUNCTION pg_temp.b64url(b bytea) RETURNS text LANGUAGE sql IMMUTABLE
	AS $$SELECT rtrim(translate(encode(b, 'base64'), E'+/\n', '-_'), '=')$$;

-- ------------------------------------------------------------------
-- Baseline value of each argument, by name (every verb spells a given
-- name with the same meaning).  An argument whose name is missing here
-- falls back to the first non-NULL hostile value of its type.
-- ------------------------------------------------------------------
CREATE TEMP TABLE hb_baseline (name text PRIMARY KEY, expr text NOT NULL);
INSERT INTO hb_baseline VALUES
	('id', $$'hb_task'$$), ('case_id', $$'hb_case'$$), ('roles', $${r}$$),
	('run_id', $$'hb_run'$$), ('payload', $$'{"k": 1}'$$), ('priority', '1'),
	('due_at', $$'2200-01-01'$$), ('expiry_policy', $$'deny'$$),
	('excluded', $$'{}'$$), ('escalation_roles', $$'{boss}'$$),
	('actor', $$'alice'$$), ('from_actor', $$'alice'$$),
	('decision', $$'{"ok": true}'$$), ('state', $$'completed'$$),
	('awaited', $$'{hb_task,hb_free}'$$), ('lim', '1'),
	('now', $$'2100-01-01 12:00'$$),
	('project', $$'hb_p'$$), ('session', $$'hb_s'$$), ('run', $$'hb_r'$$),
	('checkpoint_id', $$'hb_c1'$$), ('body', $$'{"step": 2}'$$),
	('fence', $$(SELECT v FROM hb_fix WHERE k = 'fence')$$),
	('parent_run', $$'hb_parent'$$), ('created_at', $$'2100-01-01 02:00'$$),
	('run_created_at', $$'2100-01-01'$$), ('park_request', $$'approve'$$),
	('parked_at', $$'2100-01-01 02:00'$$), ('park_deadline', $$'2100-01-03'$$),
	('park_resolved_at', 'NULL'), ('keep', '2'), ('holder', $$'alice'$$),
	('ttl', $$'1 hour'$$), ('ticket', $$'hb_ticket'$$),
	('requester', $$'req'$$), ('title', $$'title'$$),
	('authorities', $$'{lead}'$$), ('open_deadline', $$'2100-01-02'$$),
	('confirm_window', $$'1 hour'$$), ('ladder', $${1 hour,2 hours}$$),
	('value', $$'working'$$), ('not_before', $$'2100-01-03'$$),
	('reason', $$'because'$$), ('at', $$'2100-01-01 07:00'$$),
	('outcome', $$'done'$$), ('order_by', $$'run_id'$$), ('park', 'NULL'),
	('claimed', 'NULL'), ('cursor', 'NULL'),
	('tenant', $$'hostile_bound'$$), ('role', $$'hostile_bound'$$),
	('kind', $$'member'$$), ('claim_timeout', $$'1 hour'$$),
	('tasks', $$'1 day'$$), ('tickets', $$'1 day'$$), ('runs', $$'1 day'$$),
	('metadata', $$'{"source": "loop"}'$$), ('parent_checkpoint_id', $$'hb_c0'$$),
	('concluded', 'NULL'),
	('task_id', $$'hb_t'$$), ('idx', $${0,-1}$$), ('channels', $${a,b}$$),
	('vals', $$ARRAY['1', '{"x": 2}']::jsonb[]$$), ('task_path', $$'hb/path'$$),
	('versions', $${v1,v2}$$), ('before_session', 'NULL'), ('before_run', 'NULL'),
	('before_checkpoint_id', 'NULL'),
	-- an argument whose name means another thing for another type
	('tasks:text[]', $${hb_task}$$);
UPDATE hb_baseline SET expr = quote_literal(expr) WHERE expr LIKE '{%';

-- ------------------------------------------------------------------
-- Hostile values per type class.  Enum classes get their labels from
-- pg_enum when a function is expanded, so a new label is covered too.
-- ------------------------------------------------------------------
CREATE TEMP TABLE hb_value (class text, ord int, label text, expr text,
                            PRIMARY KEY (class, ord));
INSERT INTO hb_value
SELECT 'text', row_number() OVER (), label, expr FROM (VALUES
	('NULL', 'NULL'),
	('empty', $$''$$),
	('blank', $$' '$$),
	('256 chars', $$repeat('x', 256)$$),
	('257 chars', $$repeat('x', 257)$$),
	('256 two-byte chars', $$repeat('é', 256)$$),
	('257 two-byte chars', $$repeat('é', 257)$$),
	('256 four-byte chars', $$repeat('🙂', 256)$$),
	('300 chars', $$repeat('y', 300)$$),
	('1 MB', $$repeat('z', 1000000)$$),
	('control characters', $$E'\x01\x02\x1b[31m\t\n\r\x7f'$$),
	('256 escapes', $$repeat(E'\x01', 256)$$),
	('quotes', $v$$q$'; DROP TABLE worklist.task; --"\$q$$v$),
	('format directives', $$'%s%n%x%%'$$),
	('bidi and zero-width', $$E'\u202Eevil\u200B'$$),
	('the watchdog', $$'worklist.watchdog'$$)
) v(label, expr)
UNION ALL
SELECT 'text[]', row_number() OVER (), label, expr FROM (VALUES
	('NULL', 'NULL'),
	('empty', $$'{}'$$),
	('{NULL}', $$'{NULL}'$$),
	('{""}', $$'{""}'$$),
	('NULL among values', $$'{r,NULL}'$$),
	('2-D', $$'{{r,s},{t,u}}'$$),
	('10k elements', $$ARRAY(SELECT 'r' || i FROM generate_series(1, 10000) i)$$),
	('257-char element', $$ARRAY['r', repeat('x', 257)]$$),
	('1 MB element', $$ARRAY[repeat('x', 1000000)]$$),
	('lower bound 5', $$'[5:6]={r,s}'$$),
	('duplicates', $$'{r,r,r}'$$),
	('multibyte and control', $$ARRAY[repeat('é', 256), E'\x01\x02']$$),
	('the watchdog', $$'{worklist.watchdog}'$$)
) v(label, expr)
UNION ALL
SELECT 'integer', row_number() OVER (), label, expr FROM (VALUES
	('NULL', 'NULL'), ('-2^31', '-2147483648'), ('-1', '-1'), ('0', '0'),
	('1', '1'), ('2^31-1', '2147483647')
) v(label, expr)
UNION ALL
SELECT 'integer[]', row_number() OVER (), label, expr FROM (VALUES
	('NULL', 'NULL'),
	('empty', $$'{}'$$),
	('{NULL}', $$'{NULL}'$$),
	('NULL among values', $$'{0,NULL}'$$),
	('2-D', $$'{{0,1},{2,3}}'$$),
	('10k elements', $$ARRAY(SELECT i FROM generate_series(1, 10000) i)$$),
	('lower bound 5', $$'[5:6]={0,1}'$$),
	('extremes', $$'{-2147483648,2147483647}'$$),
	('duplicates', $$'{0,0}'$$)
) v(label, expr)
UNION ALL
SELECT 'jsonb[]', row_number() OVER (), label, expr FROM (VALUES
	('NULL', 'NULL'),
	('empty', $$'{}'$$),
	('{NULL}', $$ARRAY[NULL]::jsonb[]$$),
	('NULL among values', $$ARRAY['1', NULL]::jsonb[]$$),
	('2-D', $$ARRAY[ARRAY['1'::jsonb, '2'], ARRAY['3'::jsonb, '4']]$$),
	('10k elements', $$ARRAY(SELECT to_jsonb(i) FROM generate_series(1, 10000) i)$$),
	('json nulls', $$ARRAY['null', 'null']::jsonb[]$$),
	('2 MB element', $$ARRAY[jsonb_build_object('k', repeat('x', 2000000)), '1']$$)
) v(label, expr)
UNION ALL
SELECT 'bigint', row_number() OVER (), label, expr FROM (VALUES
	('NULL', 'NULL'), ('-2^63', '-9223372036854775808'), ('-1', '-1'),
	('0', '0'), ('1', '1'), ('2^63-1', '9223372036854775807')
) v(label, expr)
UNION ALL
SELECT 'timestamp with time zone', row_number() OVER (), label, expr FROM (VALUES
	('NULL', 'NULL'),
	('infinity', $$'infinity'$$),
	('-infinity', $$'-infinity'$$),
	('first instant', $$'4714-11-24 00:00:00+00 BC'$$),
	('4713 BC', $$'4713-01-01 00:00:00+00 BC'$$),
	('last instant', $$'294276-12-31 23:59:59.999999+00'$$),
	('294276 AD', $$'294276-06-01 00:00:00+00'$$),
	('beyond the range', $$'294277-01-01 00:00:00+00'$$),
	('epoch', $$'epoch'$$)
) v(label, expr)
UNION ALL
SELECT 'interval', row_number() OVER (), label, expr FROM (VALUES
	('NULL', 'NULL'),
	('zero', $$'0'$$),
	('negative', $$'-1 hour'$$),
	('1 mon -30 days', $$'1 mon -30 days'$$),
	('-1 mon +31 days', $$'-1 mon 31 days'$$),
	('1 microsecond', $$'1 microsecond'$$),
	('huge', $$'178000000 years'$$),
	('huge negative', $$'-178000000 years'$$),
	('2^31-1 days', $$'2147483647 days'$$),
	('2^63-1 microseconds', $$make_interval(secs => 9223372036854.775807)$$)
) v(label, expr)
UNION ALL
SELECT 'interval[]', row_number() OVER (), label, expr FROM (VALUES
	('NULL', 'NULL'),
	('empty', $$'{}'$$),
	('{NULL}', $$'{NULL}'$$),
	('{0}', $$'{0}'$$),
	('negative rung', $$'{1 hour,-1 hour}'$$),
	('1 mon -30 days', $$'{1 mon -30 days}'$$),
	('huge', $$'{178000000 years,178000000 years}'$$),
	('2-D', $$'{{1 hour},{2 hours}}'$$),
	('10k rungs', $$array_fill('1 hour'::interval, ARRAY[10000])$$)
) v(label, expr)
UNION ALL
SELECT 'jsonb', row_number() OVER (), label, expr FROM (VALUES
	('NULL', 'NULL'),
	('json null', $$'null'$$),
	('empty string', $$'""'$$),
	('empty array', $$'[]'$$),
	('nested 10000 deep', $$repeat('[', 10000) || repeat(']', 10000)$$),
	('nested 100000 deep', $$repeat('[', 100000) || repeat(']', 100000)$$),
	('1 MB string', $$jsonb_build_object('k', repeat('x', 1000000))$$),
	('100k elements', $$(SELECT jsonb_agg(i) FROM generate_series(1, 100000) i)$$),
	('escapes', $$jsonb_build_object(E'\x01\u202E', E'"\\\x1b')$$)
) v(label, expr)
UNION ALL
SELECT 'boolean', row_number() OVER (), label, expr FROM (VALUES
	('NULL', 'NULL'), ('true', 'true'), ('false', 'false')
) v(label, expr)
UNION ALL
SELECT 'regrole', row_number() OVER (), label, expr FROM (VALUES
	('NULL', 'NULL'),
	('a role', $$'hostile_outsider'$$),
	('unknown name', $$'no_such_role_anywhere'$$),
	('OID 0', $$0::oid$$),
	('unknown OID', $$4294967295::oid$$),
	('quoted name', $$'"hostile_bound"'$$)
) v(label, expr)
UNION ALL
-- a cursor argument gets these on top of the text values
SELECT 'cursor', row_number() OVER (), label, expr FROM (VALUES
	('valid', $$(SELECT v FROM hb_fix WHERE k = 'cursor')$$),
	('made for the other order', $$(SELECT v FROM hb_fix WHERE k = 'cursor_created')$$),
	('made for another scope', $$(SELECT v FROM hb_fix WHERE k = 'cursor_unscoped')$$),
	('made under a park filter', $$(SELECT v FROM hb_fix WHERE k = 'cursor_parked')$$),
	('made for another tenant', $$(SELECT v FROM hb_fix WHERE k = 'cursor_other_tenant')$$),
	('one character changed',
	 $$(SELECT overlay(v PLACING CASE WHEN substr(v, 20, 1) = 'A' THEN 'B' ELSE 'A' END FROM 20 FOR 1) FROM hb_fix WHERE k = 'cursor')$$),
	('last character changed',
	 $$(SELECT left(v, -1) || CASE WHEN right(v, 1) = 'A' THEN 'Q' ELSE 'A' END FROM hb_fix WHERE k = 'cursor')$$),
	('truncated by one', $$(SELECT left(v, -1) FROM hb_fix WHERE k = 'cursor')$$),
	('truncated by four', $$(SELECT left(v, -4) FROM hb_fix WHERE k = 'cursor')$$),
	('extended', $$(SELECT v || 'AAAA' FROM hb_fix WHERE k = 'cursor')$$),
	('padded', $$(SELECT v || '==' FROM hb_fix WHERE k = 'cursor')$$),
	('standard base64', $$(SELECT translate(v, '-_', '+/') FROM hb_fix WHERE k = 'cursor')$$),
	('garbage', $$'garbage!'$$),
	('AAAA', $$'AAAA'$$),
	('8193 characters', $$repeat('A', 8193)$$),
	('version 2',
	 $$pg_temp.b64url('\x0272'::bytea || '\x00'::bytea || '\x0000000000000000'::bytea || '\x000161000161000161'::bytea || '\x00000000000000000000000000000000'::bytea)$$),
	('unknown order',
	 $$pg_temp.b64url('\x0178'::bytea || '\x00'::bytea || '\x0000000000000000'::bytea || '\x000161000161000161'::bytea || '\x00000000000000000000000000000000'::bytea)$$),
	('created flag 7',
	 $$pg_temp.b64url('\x0163'::bytea || '\x07'::bytea || '\x0000000000000000'::bytea || '\x000161000161000161'::bytea || '\x00000000000000000000000000000000'::bytea)$$),
	('created beyond the range',
	 $$pg_temp.b64url('\x0163'::bytea || '\x01'::bytea || '\x7ffffffffffffffe'::bytea || '\x000161000161000161'::bytea || '\x00000000000000000000000000000000'::bytea)$$),
	('run_id order with a created key',
	 $$pg_temp.b64url('\x0172'::bytea || '\x01'::bytea || '\x0000000000000000'::bytea || '\x000161000161000161'::bytea || '\x00000000000000000000000000000000'::bytea)$$),
	('length past the end',
	 $$pg_temp.b64url('\x0172'::bytea || '\x00'::bytea || '\x0000000000000000'::bytea || '\xffff61000161000161'::bytea || '\x00000000000000000000000000000000'::bytea)$$),
	('empty identifier',
	 $$pg_temp.b64url('\x0172'::bytea || '\x00'::bytea || '\x0000000000000000'::bytea || '\x0000000161000161'::bytea || '\x00000000000000000000000000000000'::bytea)$$),
	('invalid UTF-8 identifier',
	 $$pg_temp.b64url('\x0172'::bytea || '\x00'::bytea || '\x0000000000000000'::bytea || '\x0001ff000161000161'::bytea || '\x00000000000000000000000000000000'::bytea)$$),
	('257-character identifier',
	 $$pg_temp.b64url('\x0172'::bytea || '\x00'::bytea || '\x0000000000000000'::bytea || '\x0101'::bytea || convert_to(repeat('a', 257), 'UTF8') || '\x000161000161'::bytea || '\x00000000000000000000000000000000'::bytea)$$),
	('trailing bytes',
	 $$pg_temp.b64url('\x0172'::bytea || '\x00'::bytea || '\x0000000000000000'::bytea || '\x000161000161000161ffff'::bytea || '\x00000000000000000000000000000000'::bytea)$$),
	('too short', $$pg_temp.b64url('\x0172'::bytea)$$)
) v(label, expr)
UNION ALL
-- the tenant setting, as a pseudo-argument of every function
SELECT 'tenant', row_number() OVER (), label, expr FROM (VALUES
	('empty', $$''$$),
	('blank', $$' '$$),
	('256 chars', $$repeat('t', 256)$$),
	('257 chars', $$repeat('t', 257)$$),
	('257 two-byte chars', $$repeat('é', 257)$$),
	('256 escapes', $$repeat(E'\x01', 256)$$),
	('1 MB', $$repeat('t', 1000000)$$),
	('quotes', $v$$q$'; DROP TABLE worklist.task; --"\$q$$v$),
	('bound to a role the caller lacks', $$'hostile_bound'$$)
) v(label, expr);

-- What a call may answer, by what was substituted: SQLSTATEs allowed for
-- each class ('ok' is success).  22023 is a refused argument; 22P02 an
-- unknown enum label; 22008 a timestamp beyond the range (at the cast, or
-- where the reference lets timestamp arithmetic overflow); 54001 a jsonb
-- nested beyond the stack (at the cast); 54000 a jsonb document above
-- worklist.max_document_size; 42704 an unknown role; 42501 a tenant the
-- caller may not act in.
CREATE TEMP TABLE hb_allowed (class text PRIMARY KEY, codes text[]);
INSERT INTO hb_allowed VALUES
	('baseline', '{ok}'),
	('text', '{ok,22023}'),
	('text[]', '{ok,22023}'),
	('integer', '{ok,22023}'),
	('integer[]', '{ok,22023}'),
	('jsonb[]', '{ok,22023,54000}'),
	('lim', '{ok}'),
	('bigint', '{ok,22023}'),
	('timestamp with time zone', '{ok,22023,22008}'),
	('interval', '{ok,22023,22008}'),
	('interval[]', '{ok,22023}'),
	('jsonb', '{ok,22023,54000,54001}'),
	('boolean', '{ok}'),
	('regrole', '{ok,22023,42704}'),
	('enum', '{ok,22023,22P02}'),
	('enum[]', '{ok,22023,22P02}'),
	('cursor', '{ok,22023}'),
	('tenant', '{ok,22023,42501}');

-- Documented refusals each verb may give when a substituted value
-- names something that does not exist or is not the caller's (doc/reference.md,
-- sections 4 and 6).
CREATE TEMP TABLE hb_verb_codes (verb text PRIMARY KEY, codes text[]);
INSERT INTO hb_verb_codes VALUES
	('claim', '{WL001,WL002,WL003,WL004,WL005}'),
	('take_over', '{WL001,WL002,WL003,WL004,WL006}'),
	('release', '{WL001,WL002,WL006}'),
	('complete', '{WL001,WL002,WL006}'),
	('set_state', '{WL001}'),
	('escalate', '{WL001}'),
	('report', '{WL001}'),
	('close_ticket', '{WL001}'),
	('ticket_state', '{WL001}'),
	('ticket_history', '{WL001}'),
	('write_checkpoint', '{WL007}'),
	('put_writes', '{WL007}'),
	('put_values', '{WL007}'),
	('newest_checkpoints', '{WL001}'),
	('delete_run', '{WL007}'),
	('note', '{WL001}'),
	('task_history', '{WL001}'),
	('park_run', '{WL001,WL007}'),
	('conclude_run', '{WL007}');

CREATE TEMP TABLE hb_outcome (
	verb text, signature text, arg text, class text, label text,
	sqlstate text, message text, allowed boolean);

-- Run one call in a subtransaction that is always undone; returns its
-- SQLSTATE ('ok' on success) and message.  The tenant and role are set
-- inside the subtransaction, so they are undone with it.
CREATE FUNCTION pg_temp.hb_try(call text, tenant text, as_role text,
                               OUT code text, OUT message text)
LANGUAGE plpgsql AS $$
BEGIN
	BEGIN
		IF tenant IS NOT NULL THEN
			EXECUTE format('SELECT set_config(''worklist.tenant'', %s, true)', tenant);
		END IF;
		IF as_role IS NOT NULL THEN
			PERFORM set_config('role', as_role, true);
		END IF;
		EXECUTE call;
		RAISE EXCEPTION 'undo' USING ERRCODE = 'HB000';
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
		IF code = 'HB000' THEN
			code := 'ok';
			message := NULL;
		END IF;
	END;
END
$$;

-- The text of a call: every argument by name, cast to its declared type,
-- and every value of the result converted to text (so output functions
-- run over whatever the verb returned).
CREATE FUNCTION pg_temp.hb_call(verb text, names text[], types regtype[], vals text[])
RETURNS text LANGUAGE sql AS $$
	SELECT format('SELECT count(*) FROM (SELECT r::text FROM worklist.%I(%s) AS r) s', verb,
	              coalesce(string_agg(format('%I => (%s)::%s', names[i], vals[i], types[i]),
	                                  ', ' ORDER BY i), ''))
	  FROM generate_subscripts(names, 1) i
$$;

CREATE TEMP TABLE hb_enum (argno int, ord int, label text, expr text);

-- ------------------------------------------------------------------
-- The battery
-- ------------------------------------------------------------------
SELECT setseed(0.8);
DO $battery$
DECLARE
	f record;
	nargs int;
	names text[];
	types regtype[];
	classes text[];
	base text[];
	vals text[];
	call text;
	cls text;
	v record;
	r record;
	pick int;
	combo_classes text[];
	combo_labels text[];
	wl text[];
	allowed text[];
BEGIN
	FOR f IN
		SELECT p.oid, p.proname::text AS verb, p.oid::regprocedure::text AS signature,
		       p.pronargs, p.proargnames,
		       ARRAY(SELECT unnest(p.proargtypes::regtype[])) AS argtypes
		  FROM pg_proc p
		 WHERE p.pronamespace = 'worklist'::regnamespace
		   AND p.prokind = 'f'
		   AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)
		   AND NOT ('internal'::regtype = ANY (p.proargtypes::regtype[]))
		   AND p.proname <> 'start_sweeper'	-- would start a background worker
		   -- the role_ref type's own functions take its input and output
		   -- forms; sql/core_trust.sql feeds them hostile text
		   AND p.proname NOT LIKE 'role\_ref\_%'
		 ORDER BY 3
	LOOP
		nargs := f.pronargs;
		names := f.proargnames[1:nargs];
		types := f.argtypes;
		classes := '{}';
		base := '{}';
		SELECT codes INTO wl FROM hb_verb_codes WHERE verb = f.verb;
		wl := coalesce(wl, '{}');

		-- the class of each argument, and its baseline
		FOR i IN 1 .. nargs LOOP
			cls := CASE
				WHEN names[i] = 'lim' THEN 'integer'
				WHEN types[i] IN (SELECT enumtypid FROM pg_enum) THEN 'enum'
				WHEN types[i] IN (SELECT t.oid FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.typelem) THEN 'enum[]'
				ELSE types[i]::text END;
			classes := classes || cls;
			base := base || coalesce(
				(SELECT b.expr FROM hb_baseline b WHERE b.name = names[i] || ':' || cls),
				(SELECT b.expr FROM hb_baseline b WHERE b.name = names[i]),
				(SELECT x.expr FROM hb_value x WHERE x.class = cls AND x.expr <> 'NULL' ORDER BY x.ord LIMIT 1),
				'NULL');
		END LOOP;

		-- enum values of this function's enum arguments
		TRUNCATE hb_enum;
		FOR i IN 1 .. nargs LOOP
			IF classes[i] = 'enum' THEN
				INSERT INTO hb_enum
				SELECT i, 0, 'NULL', 'NULL'
				UNION ALL
				SELECT i, e.enumsortorder::int, e.enumlabel, quote_literal(e.enumlabel)
				  FROM pg_enum e WHERE e.enumtypid = types[i]
				UNION ALL
				SELECT i, 100 + o, l, quote_literal(l)
				  FROM unnest('{bogus,"",OPEN,DONE," working"}'::text[]) WITH ORDINALITY u(l, o);
			ELSIF classes[i] = 'enum[]' THEN
				INSERT INTO hb_enum
				SELECT i, 0, 'NULL', 'NULL'
				UNION ALL
				SELECT i, 1, 'every label',
				       quote_literal((SELECT array_agg(e.enumlabel ORDER BY e.enumsortorder)
				                        FROM pg_enum e JOIN pg_type t ON t.typelem = e.enumtypid
				                       WHERE t.oid = types[i])::text)
				UNION ALL
				SELECT i, 1 + o, l, quote_literal(l)
				  FROM unnest('{"{}","{NULL}","{bogus}","{{outstanding},{expired}}"}'::text[])
				       WITH ORDINALITY u(l, o);
			END IF;
		END LOOP;

		-- the baseline call
		call := pg_temp.hb_call(f.verb, names, types, base);
		SELECT * INTO r FROM pg_temp.hb_try(call, NULL::text, NULL::text);
		INSERT INTO hb_outcome VALUES (f.verb, f.signature, NULL, 'baseline', 'baseline',
			r.code, r.message, r.code = 'ok');

		-- each argument in turn
		FOR i IN 1 .. nargs LOOP
			FOR v IN
				SELECT x.label, x.expr, classes[i] AS class FROM hb_value x
				 WHERE x.class = classes[i]
				UNION ALL
				SELECT x.label, x.expr, 'cursor' FROM hb_value x
				 WHERE x.class = 'cursor' AND names[i] = 'cursor'
				UNION ALL
				SELECT e.label, e.expr, classes[i] FROM hb_enum e WHERE e.argno = i
				ORDER BY 3, 1
			LOOP
				vals := base;
				vals[i] := v.expr;
				call := pg_temp.hb_call(f.verb, names, types, vals);
				SELECT * INTO r FROM pg_temp.hb_try(call, NULL::text, NULL::text);
				SELECT a.codes INTO allowed FROM hb_allowed a
				 WHERE a.class = CASE WHEN names[i] = 'lim' THEN 'lim' ELSE v.class END;
				-- a refused argument is named in the message (a project
				-- refused as NULL is refused because a session is given,
				-- a session because a run is)
				INSERT INTO hb_outcome VALUES (f.verb, f.signature, names[i], v.class, v.label,
					r.code, r.message, r.code = ANY (allowed || wl)
					AND (r.code <> '22023' OR strpos(r.message, format('"%s"', names[i])) > 0
					     OR r.message IN ('argument "session" requires project',
					                      'argument "run" requires session')));
			END LOOP;
			IF NOT EXISTS (SELECT FROM hb_value x WHERE x.class = classes[i])
			   AND NOT EXISTS (SELECT FROM hb_enum e WHERE e.argno = i) THEN
				INSERT INTO hb_outcome VALUES (f.verb, f.signature, names[i], classes[i],
					'no hostile values for this type', 'uncovered', NULL, false);
			END IF;
		END LOOP;

		-- each hostile tenant setting (the last one as a role outside the
		-- tenant's binding)
		FOR v IN SELECT x.label, x.expr FROM hb_value x WHERE x.class = 'tenant' ORDER BY x.ord LOOP
			call := pg_temp.hb_call(f.verb, names, types, base);
			SELECT * INTO r FROM pg_temp.hb_try(call, v.expr::text,
				CASE WHEN v.expr = $$'hostile_bound'$$ THEN 'hostile_outsider' END);
			SELECT a.codes INTO allowed FROM hb_allowed a WHERE a.class = 'tenant';
			INSERT INTO hb_outcome VALUES (f.verb, f.signature, 'worklist.tenant', 'tenant',
				v.label, r.code, r.message, r.code = ANY (allowed || wl)
				AND (r.code <> '22023' OR strpos(r.message, '"worklist.tenant"') > 0));
		END LOOP;

		-- random combinations: each argument hostile with probability 1/2
		IF nargs > 1 THEN
			FOR n IN 1 .. 6 LOOP
				vals := base;
				combo_classes := '{}';
				combo_labels := '{}';
				FOR i IN 1 .. nargs LOOP
					IF random() < 0.5 THEN
						SELECT count(*) INTO pick FROM (
							SELECT FROM hb_value x WHERE x.class = classes[i]
							UNION ALL SELECT FROM hb_enum e WHERE e.argno = i) c;
						IF pick > 0 THEN
							pick := floor(random() * pick)::int;
							SELECT c.label, c.expr INTO v FROM (
								SELECT x.label, x.expr, x.ord FROM hb_value x WHERE x.class = classes[i]
								UNION ALL
								SELECT e.label, e.expr, e.ord FROM hb_enum e WHERE e.argno = i) c
							 ORDER BY c.ord, c.label OFFSET pick LIMIT 1;
							vals[i] := v.expr;
							combo_classes := combo_classes || CASE WHEN names[i] = 'lim' THEN 'lim' ELSE classes[i] END;
							combo_labels := combo_labels || (names[i] || ': ' || v.label);
						END IF;
					END IF;
				END LOOP;
				call := pg_temp.hb_call(f.verb, names, types, vals);
				SELECT * INTO r FROM pg_temp.hb_try(call, NULL::text, NULL::text);
				SELECT array_agg(DISTINCT c) INTO allowed
				  FROM hb_allowed a, unnest(a.codes) c
				 WHERE a.class = ANY (combo_classes || '{baseline}'::text[]);
				INSERT INTO hb_outcome VALUES (f.verb, f.signature, 'combination', 'combination',
					array_to_string(combo_labels, '; '), r.code, r.message,
					r.code = ANY (allowed || wl));
			END LOOP;
		END IF;
	END LOOP;
END
$battery$;

-- ------------------------------------------------------------------
-- The aggregate worklist.fold takes rows, not scalars: each column of
-- the event and of the ticket it is given is replaced in turn by the
-- hostile values of the column's type (and by every type's NULL).
-- ------------------------------------------------------------------
CREATE TEMP TABLE hb_row_base (tbl text, col text, attnum int, class text, typ regtype, expr text);
INSERT INTO hb_row_base
SELECT c.relname, a.attname, a.attnum,
       CASE WHEN a.atttypid IN (SELECT enumtypid FROM pg_enum) THEN 'enum'
            ELSE a.atttypid::regtype::text END,
       a.atttypid::regtype,
       format('e.%I', a.attname)
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE c.oid IN ('worklist.ticket'::regclass, 'worklist.ticket_event'::regclass)
   AND a.attnum > 0 AND NOT a.attisdropped;

DO $fold$
DECLARE
	col record;
	v record;
	r record;
	ev_cols text;
	tk_cols text;
	call text;
	allowed text[];
BEGIN
	FOR col IN SELECT * FROM hb_row_base ORDER BY tbl, attnum LOOP
		FOR v IN
			SELECT x.label, x.expr, x.class FROM hb_value x WHERE x.class = col.class
			UNION ALL
			SELECT 'NULL', 'NULL', col.class
			 WHERE NOT EXISTS (SELECT FROM hb_value x WHERE x.class = col.class)
			UNION ALL
			SELECT l, quote_literal(l), 'enum'
			  FROM unnest('{bogus,open,done}'::text[]) l WHERE col.class = 'enum'
			UNION ALL
			SELECT l, quote_literal(l), 'text'
			  FROM unnest('{participation,outcome,escalation,Outcome,1,0,-1,2147483647,2147483648,done,working,abandoned}'::text[]) l
			 WHERE col.col IN ('kind', 'value')
			ORDER BY 1
		LOOP
			SELECT string_agg(CASE WHEN b.tbl = col.tbl AND b.col = col.col
			                       THEN format('(%s)::%s', v.expr, b.typ) ELSE format('e.%I', b.col) END,
			                  ', ' ORDER BY b.attnum)
			  INTO ev_cols FROM hb_row_base b WHERE b.tbl = 'ticket_event';
			SELECT string_agg(CASE WHEN b.tbl = col.tbl AND b.col = col.col
			                       THEN format('(%s)::%s', v.expr, b.typ) ELSE format('t.%I', b.col) END,
			                  ', ' ORDER BY b.attnum)
			  INTO tk_cols FROM hb_row_base b WHERE b.tbl = 'ticket';
			call := format(
				'SELECT worklist.fold(ROW(%s)::worklist.ticket_event, ROW(%s)::worklist.ticket,'
				' ''2100-01-01 12:00'')::text'
				' FROM worklist.ticket t JOIN worklist.ticket_event e'
				'   ON e.tenant = t.tenant AND e.ticket = t.id'
				' WHERE t.tenant = ''hostile_battery'' AND t.id = ''hb_ticket''',
				ev_cols, tk_cols);
			SELECT * INTO r FROM pg_temp.hb_try(call, NULL::text, NULL::text);
			-- a NULL column the fold needs is 22004; a kind or value it does
			-- not know is 22P02; rows of two tickets are 22023
			SELECT array_agg(DISTINCT c) INTO allowed
			  FROM (SELECT unnest(a.codes) FROM hb_allowed a
			         WHERE a.class = CASE WHEN v.class IN ('enum', 'text', 'text[]', 'jsonb',
			                                   'timestamp with time zone', 'interval', 'interval[]',
			                                   'boolean', 'bigint', 'integer')
			                              THEN v.class ELSE 'text' END
			        UNION ALL SELECT unnest('{22004,22P02}'::text[])) s(c);
			INSERT INTO hb_outcome VALUES ('fold', 'worklist.fold(worklist.ticket_event,worklist.ticket,timestamp with time zone)',
				col.tbl || '.' || col.col, v.class, v.label, r.code, r.message,
				r.code = ANY (allowed));
		END LOOP;
	END LOOP;
END
$fold$;

-- A ladder with a NULL rung given to the aggregate is refused like every
-- other NULL the fold cannot use (22004), not reported as corrupt data.
SELECT worklist.fold(e, jsonb_populate_record(t, '{"ladder": [null]}'), '2100-01-01')
  FROM worklist.ticket t JOIN worklist.ticket_event e ON e.tenant = t.tenant AND e.ticket = t.id
 WHERE t.tenant = 'hostile_battery' AND t.id = 'hb_ticket';
\echo :LAST_ERROR_SQLSTATE

-- ------------------------------------------------------------------
-- Summary
-- ------------------------------------------------------------------
-- Every function the battery could call was called.
SELECT p.oid::regprocedure AS not_called
  FROM pg_proc p
 WHERE p.pronamespace = 'worklist'::regnamespace
   AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)
   AND NOT ('internal'::regtype = ANY (p.proargtypes::regtype[]))
   AND p.proname <> 'start_sweeper'
   AND p.proname NOT LIKE 'role\_ref\_%'
   AND p.oid::regprocedure::text NOT IN (SELECT signature FROM hb_outcome)
 ORDER BY 1;

SELECT count(*) AS calls, count(DISTINCT signature) AS functions,
       count(*) FILTER (WHERE sqlstate = 'ok') AS succeeded
  FROM hb_outcome;

-- Per function and outcome.
SELECT verb, sqlstate, count(*) AS calls
  FROM hb_outcome GROUP BY 1, 2 ORDER BY 1, 2;

-- Anything not allowed for what was substituted: nothing.
SELECT verb, arg, label, sqlstate, message
  FROM hb_outcome WHERE NOT allowed ORDER BY verb, arg, label;

-- The fixture is as it was: every call was undone.
SELECT (worklist.task('hb_task')).holder,
       (worklist.ticket_state('hb_ticket', '2100-01-01 12:00')).state,
       (SELECT count(*) FROM worklist.list_checkpoints('hb_p', 'hb_s', 'hb_r')) AS checkpoints;

-- Clean up.
SELECT worklist.revoke_tenant('hostile_bound', 'hostile_bound');
SELECT worklist.erase_tenant() > 0 AS erased;
SET worklist.tenant = 'hostile_battery_other';
SELECT worklist.erase_tenant() > 0 AS erased;
RESET worklist.tenant;
DROP TABLE hb_fix;
DROP ROLE hostile_bound;
DROP ROLE hostile_outsider;

-- doc/reference.md names everything the extension installs: every
-- function of schema worklist, every type (enums with each of their
-- values, composite types and the table row types the functions take or
-- return, with each of their fields, the base type role_ref), every view
-- with its columns, and every setting worklist.* the server knows.
--
-- The file is read from the source tree (pg_regress exports its path as
-- PG_ABS_SRCDIR).  A name counts as documented when it stands in a code
-- span or a code block of the file (text between backticks), as a whole
-- word:
--   function   worklist.NAME, or NAME( -- e.g. `worklist.claim_next` or
--              `claim_next(actor, roles)`; prose that merely says "claim"
--              does not count
--   type/view  worklist.NAME
--   setting    its full name, e.g. `worklist.sweep_batch`
--   value      an enum's value, a field of a type, a column of a view:
--              the bare word, e.g. `escalated`, `claim_expires_at`
-- The expected output lists nothing undocumented.  The last query checks
-- the check itself: names nobody documented must be reported, so the
-- test fails the day a name is dropped from the file.  (It was also seen
-- to fail by deleting `worklist.held` and the signature `held(actor`
-- from the file: the first query then listed "function | held".)
\set SHOW_CONTEXT never
\getenv abs_srcdir PG_ABS_SRCDIR
\set reference :abs_srcdir '/doc/reference.md'

-- Every code block (between lines of three backticks) and every code span
-- (between single backticks, outside the blocks) of the file, one per
-- line.
CREATE TEMP TABLE reference AS
WITH doc AS (SELECT pg_read_file(:'reference') AS text),
code AS (
	SELECT m[1] AS code FROM doc, regexp_matches(doc.text, '```(.*?)```', 'g') AS m
	UNION ALL
	SELECT m[1] FROM doc, regexp_matches(regexp_replace(doc.text, '```.*?```', '', 'g'),
	                                     '`([^`]+)`', 'g') AS m)
SELECT (SELECT length(text) FROM doc) AS size, string_agg(code, E'\n') AS code FROM code;
SELECT size > 20000 AS reference_read, length(code) > 10000 AS has_code FROM reference;

CREATE FUNCTION pg_temp.documented(kind text, name text) RETURNS boolean
LANGUAGE sql STABLE AS $$
	SELECT code ~ CASE kind
		WHEN 'function' THEN '\mworklist\.' || q || '\M|\m' || q || '\('
		WHEN 'type' THEN '\mworklist\.' || q || '\M'
		WHEN 'view' THEN '\mworklist\.' || q || '\M'
		ELSE '\m' || q || '\M'
	END
	  FROM reference,
	       LATERAL (SELECT regexp_replace(name, '([.$^*+?()\[\]{}|\\])', '\\\1', 'g') AS q) e
$$;

-- What the extension installs.
CREATE TEMP VIEW installed AS
WITH nsp AS (SELECT 'worklist'::regnamespace AS oid),
-- types: enums, base types, free-standing composites, and the row types
-- of tables that a function takes or returns
types AS (
	SELECT t.oid, t.typname, t.typtype, t.typrelid
	  FROM pg_type t
	  JOIN nsp ON t.typnamespace = nsp.oid
	  LEFT JOIN pg_class c ON c.oid = t.typrelid
	 WHERE t.typcategory <> 'A'
	   AND (t.typtype IN ('e', 'b')
	        OR (t.typtype = 'c' AND c.relkind = 'c')
	        OR (t.typtype = 'c' AND c.relkind IN ('r', 'p')
	            AND EXISTS (SELECT FROM pg_proc p
	                         WHERE p.pronamespace = nsp.oid
	                           AND (p.prorettype = t.oid OR t.oid = ANY (p.proargtypes)))))
)
SELECT DISTINCT 'function' AS kind, p.proname::text AS name
  FROM pg_proc p JOIN nsp ON p.pronamespace = nsp.oid
UNION ALL
SELECT 'type', typname::text FROM types
UNION ALL
SELECT 'value', t.typname || '.' || e.enumlabel
  FROM types t JOIN pg_enum e ON e.enumtypid = t.oid
UNION ALL
SELECT 'value', t.typname || '.' || a.attname
  FROM types t JOIN pg_attribute a ON a.attrelid = t.typrelid
 WHERE a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'view', c.relname::text
  FROM pg_class c JOIN nsp ON c.relnamespace = nsp.oid WHERE c.relkind = 'v'
UNION ALL
SELECT 'value', c.relname || '.' || a.attname
  FROM pg_class c JOIN nsp ON c.relnamespace = nsp.oid
  JOIN pg_attribute a ON a.attrelid = c.oid
 WHERE c.relkind = 'v' AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'setting', name FROM pg_settings WHERE name LIKE 'worklist.%';

SELECT count(*) FILTER (WHERE kind = 'function') > 50 AS functions,
       count(*) FILTER (WHERE kind = 'type') > 15 AS types,
       count(*) FILTER (WHERE kind = 'setting') >= 8 AS settings
  FROM installed;

-- Installed and not documented: nothing.
SELECT kind, name
  FROM installed
 WHERE NOT pg_temp.documented(kind, CASE kind WHEN 'value' THEN split_part(name, '.', 2) ELSE name END)
 ORDER BY 1, 2;

-- The check itself: names that are not in the file are reported.
SELECT kind, name, pg_temp.documented(kind, name) AS documented
  FROM (VALUES ('function', 'claim_next'),
               ('function', 'claim_nothing'),
               ('type', 'task_state'),
               ('type', 'task_stat'),
               ('setting', 'worklist.sweep_batch'),
               ('setting', 'worklist.sweep_batches'),
               ('value', 'claim_expires_at'),
               ('value', 'claim_expired_at')) AS v(kind, name);

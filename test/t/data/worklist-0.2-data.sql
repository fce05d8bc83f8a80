-- Data of a database filled through version 0.2's own verbs (its library
-- built from the 0.2 sources), dumped with pg_dump --data-only: what an
-- upgrade to the current version finds in a real 0.2 database, fold
-- states and fence sequence included.  test/t/810_upgrade.pl restores it
-- into CREATE EXTENSION worklist VERSION '0.2' and updates.
--
-- The fill, as run against 0.2 (roles upgrade_team and upgrade_lead must
-- exist before the restore):
--   CREATE EXTENSION worklist;
--   CREATE ROLE upgrade_team;
--   CREATE ROLE upgrade_lead;
--   SELECT worklist.grant_tenant('up', 'upgrade_team');
--   SELECT worklist.grant_tenant('up', 'upgrade_lead');
--   SET worklist.tenant = 'up';
--   SELECT worklist.open_task('t1', 'c1', '{r}', payload => '{"n": 1}');
--   SELECT worklist.open_task('t2', 'c1', '{r}', due_at => '2030-01-01 09:00+00');
--   SELECT worklist.open_task('t3', 'c2', '{r}', expiry_policy => 'escalate', escalation_roles => '{lead}');
--   SELECT worklist.open_task('t4', 'c2', '{r}', priority => 5);
--   SELECT worklist.open_task('t5', 'c3', '{r}', excluded => '{mallory}');
--   SELECT worklist.claim('t1', 'ann', '{r}');
--   SELECT worklist.complete('t1', 'ann', '{"ok": true}');
--   SELECT worklist.claim('t5', 'bob', '{r}');
--   SELECT worklist.sweep('2030-01-02 00:00+00');
--   SELECT worklist.escalate('t3');
--   SELECT worklist.open_ticket('k1', 'req', 'a ticket', authorities => '{lead}', open_deadline => '2030-01-01 12:00+00', ladder => '{1 hour}');
--   SELECT worklist.report('k1', 'agent', 'working', at => '2030-01-01 10:00+00');
--   SELECT worklist.report('k1', 'other', 'abandoned', reason => 'busy', at => '2030-01-01 10:05+00');
--   SELECT worklist.sweep('2030-01-01 13:00+00');
--   SELECT worklist.open_ticket('k2', 'req', 'closed', confirm_window => '1 hour');
--   SELECT worklist.report('k2', 'agent', 'delivered', at => '2030-01-01 10:00+00');
--   SELECT worklist.close_ticket('k2', 'req', 'done', at => '2030-01-01 11:00+00');
--   SELECT worklist.claim_run('p', 's', 'r', 'w1', '1 hour', '2030-01-01 00:00+00');
--   SELECT worklist.write_checkpoint('p', 's', 'r', 'c1', '{"step": 1}',
--   	fence => (SELECT fence FROM worklist.run_claim WHERE run = 'r'),
--   	run_created_at => '2030-01-01', created_at => '2030-01-01 00:10+00');
--   SELECT worklist.write_checkpoint('p', 's', 'r', 'c2', '{"step": 2}', park_request => 'approve',
--   	park_deadline => '2030-01-02', created_at => '2030-01-01 00:20+00');
--   SELECT worklist.write_checkpoint('p', 's', 'r2', 'c1', '{}', created_at => '2030-01-01 00:30+00');
--   SET worklist.tenant = 'open';
--   SELECT worklist.open_task('o1', 'c', '{r}');

--
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Data for Name: run; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.run (tenant, project, session, run, parent_run, run_created_at, listed, checkpoint_count, latest_checkpoint_id, latest_checkpoint_at, park_checkpoint_id, park_request, parked_at, park_deadline, park_resolved_at) FROM stdin;
up	p	s	r	\N	2030-01-01 00:00:00+00	t	2	c2	2030-01-01 00:20:00+00	c2	approve	\N	2030-01-02 00:00:00+00	\N
up	p	s	r2	\N	\N	t	1	c1	2030-01-01 00:30:00+00	\N	\N	\N	\N	\N
\.


--
-- Data for Name: run_checkpoint; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.run_checkpoint (tenant, project, session, run, checkpoint_id, created_at, body, park_request, parked_at, park_deadline, park_resolved_at) FROM stdin;
up	p	s	r	c1	2030-01-01 00:10:00+00	{"step": 1}	\N	\N	\N	\N
up	p	s	r	c2	2030-01-01 00:20:00+00	{"step": 2}	approve	\N	2030-01-02 00:00:00+00	\N
up	p	s	r2	c1	2030-01-01 00:30:00+00	{}	\N	\N	\N	\N
\.


--
-- Data for Name: run_claim; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.run_claim (tenant, project, session, run, holder, fence, expires_at, released, reclaimed) FROM stdin;
up	p	s	r	w1	1	2030-01-01 01:00:00+00	f	f
\.


--
-- Data for Name: task; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.task (id, case_id, run_id, state, roles, excluded, escalation_roles, priority, payload, due_at, expiry_policy, holder, claimed_at, created_at, settled_at, decided_by, decision, tenant) FROM stdin;
t4	c2	\N	open	{r}	{}	{}	5	{}	\N	deny	\N	\N	2026-12-01 12:17:28.261576+00	\N	\N	\N	up
t1	c1	\N	completed	{r}	{}	{}	0	{"n": 1}	\N	deny	ann	2026-12-01 12:17:28.262422+00	2026-12-01 12:17:28.258382+00	2026-12-01 12:17:28.264269+00	ann	{"ok": true}	up
t5	c3	\N	claimed	{r}	{mallory}	{}	0	{}	\N	deny	bob	2026-12-01 12:17:28.264944+00	2026-12-01 12:17:28.262075+00	\N	\N	\N	up
t2	c1	\N	expired	{r}	{}	{}	0	{}	2030-01-01 09:00:00+00	deny	\N	\N	2026-12-01 12:17:28.260328+00	2030-01-02 00:00:00+00	\N	{"policy": "deny"}	up
t3	c2	\N	escalated	{r}	{}	{lead}	0	{}	\N	escalate	\N	\N	2026-12-01 12:17:28.261105+00	\N	\N	\N	up
o1	c	\N	open	{r}	{}	{}	0	{}	\N	deny	\N	\N	2026-12-01 12:17:28.723084+00	\N	\N	\N	open
\.


--
-- Data for Name: tenant_binding; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.tenant_binding (tenant, role) FROM stdin;
up	upgrade_team
up	upgrade_lead
\.


--
-- Data for Name: ticket; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.ticket (id, requester, title, body, authorities, open_deadline, confirm_window, ladder, created_at, state, deadline, overdue_from, next_check, last_seq, fold_state, tenant) FROM stdin;
k1	req	a ticket	{}	{lead}	2030-01-01 12:00:00+00	\N	{01:00:00}	2026-12-01 12:17:28.268575+00	working	2030-01-01 12:00:00+00	2030-01-01 12:00:00+00	2030-01-01 14:00:00+00	3	\\x0100000002000000056167656e74000100035d1dbad3a8000000000000056f74686572000400035d1dccb54b0000010000000462757379000100035d1dccb54b000100035d203e8e940000000001	up
k2	req	closed	{}	{}	\N	01:00:00	{}	2026-12-01 12:17:28.272625+00	done	\N	\N	\N	2	\\x0100000001000000056167656e74020300035d1dbad3a80000000300035d1dbad3a8000000010000035d1e91674c00000000037265710000000100035d1e91674c0000	up
\.


--
-- Data for Name: ticket_event; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.ticket_event (ticket, actor, at, kind, value, reason, not_before, seq, watchdog, confirmation, tenant) FROM stdin;
k1	agent	2030-01-01 10:00:00+00	participation	working	\N	\N	1	f	\N	up
k1	other	2030-01-01 10:05:00+00	participation	abandoned	busy	\N	2	f	\N	up
k1	worklist.watchdog	2030-01-01 13:00:00+00	escalation	1	\N	\N	3	t	\N	up
k2	agent	2030-01-01 10:00:00+00	participation	delivered	\N	\N	1	f	\N	up
k2	req	2030-01-01 11:00:00+00	outcome	done	\N	\N	2	f	\N	up
\.


--
-- Name: fence_seq; Type: SEQUENCE SET; Schema: worklist; Owner: postgres
--

SELECT pg_catalog.setval('worklist.fence_seq', 1, true);


--
--



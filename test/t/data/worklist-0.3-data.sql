-- Data of a database filled through version 0.3's own verbs (its library
-- built from the 0.3 sources), dumped with pg_dump --data-only: what an
-- upgrade to the current version finds in a real 0.3 database -- tasks in
-- every state (a claim with a timeout among them), tickets, checkpoints
-- with parks, leases, bindings of the three kinds, a retention policy and
-- a channel.  test/t/810_upgrade.pl restores it into CREATE EXTENSION
-- worklist VERSION '0.3' and updates.
--
-- The fill, as run against 0.3 (roles upgrade_team, upgrade_lead and
-- upgrade_admin must exist before the restore):
--   CREATE EXTENSION worklist;
--   SELECT worklist.grant_tenant('up', 'upgrade_team', 'member');
--   SELECT worklist.grant_tenant('up', 'upgrade_lead', 'service');
--   SELECT worklist.grant_tenant('up', 'upgrade_admin', 'admin');
--   SET worklist.tenant = 'up';
--   SELECT worklist.open_task('t1', 'c1', '{r}', payload => '{"n": 1}');
--   SELECT worklist.open_task('t2', 'c1', '{r}', due_at => '2030-01-01 09:00+00');
--   SELECT worklist.open_task('t3', 'c2', '{r}', expiry_policy => 'escalate', escalation_roles => '{lead}');
--   SELECT worklist.open_task('t4', 'c2', '{r}', priority => 5);
--   SELECT worklist.open_task('t5', 'c3', '{r}', excluded => '{mallory}');
--   SELECT worklist.open_task('t6', 'c3', '{r}', claim_timeout => '1 hour', run_id => 'r');
--   SELECT worklist.open_task('t7', 'c4', '{r}', run_id => 'r');
--   SELECT worklist.open_task('t8', 'c4', '{r}', due_at => '2030-01-01 09:00+00', expiry_policy => 'proceed');
--   SELECT worklist.claim('t1', 'ann', '{r}');
--   SELECT worklist.complete('t1', 'ann', '{"ok": true}');
--   SELECT worklist.claim('t5', 'bob', '{r}');
--   SELECT worklist.sweep('2030-01-02 00:00+00');
--   SELECT worklist.escalate('t3');
--   SELECT worklist.claim('t3', 'boss', '{lead}');
--   SELECT worklist.withdraw_run('r', '{t7}');
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
--   SELECT worklist.claim_run('p', 's', 'r3', 'w2', '1 hour', '2030-01-01 00:00+00');
--   SELECT worklist.write_checkpoint('p', 's', 'r3', 'c1', '{"step": 1}', parent_run => 'r',
--   	created_at => '2030-01-01 00:40+00', park_request => 'wait', parked_at => '2030-01-01 00:40+00',
--   	park_resolved_at => '2030-01-01 00:50+00');
--   SELECT worklist.release_run('p', 's', 'r3', (SELECT fence FROM worklist.run_claim WHERE run = 'r3'), '2030-01-01 00:45+00');
--   SELECT worklist.claim('t6', 'bob', '{r}');
--   SELECT worklist.set_retention(tasks => '30 days', runs => '90 days');
--   SELECT worklist.channel() IS NOT NULL;
--   SET worklist.tenant = 'other';
--   SELECT worklist.open_task('x1', 'c', '{r}');
--   SELECT worklist.claim_run('q', 's', 'r', 'w9', '1 hour', '2030-01-01 00:00+00');

--
-- PostgreSQL database dump
--

\restrict 3P0e9mvVOU44maPOUeHyfwhlQzjdoeoQmY3xilwbMsSG5jmseKMoUFnRcx4WqJa

-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

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
-- Data for Name: retention_policy; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.retention_policy (tenant, tasks, tickets, runs, next_purge) FROM stdin;
up	30 days	\N	90 days	2026-12-03 11:03:17.302735+00
\.


--
-- Data for Name: run; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.run (tenant, project, session, run, parent_run, run_created_at, listed, checkpoint_count, latest_checkpoint_id, latest_checkpoint_at, park_checkpoint_id, park_request, parked_at, park_deadline, park_resolved_at) FROM stdin;
up	p	s	r	\N	2030-01-01 00:00:00+00	t	2	c2	2030-01-01 00:20:00+00	c2	approve	\N	2030-01-02 00:00:00+00	\N
up	p	s	r2	\N	\N	t	1	c1	2030-01-01 00:30:00+00	\N	\N	\N	\N	\N
up	p	s	r3	r	\N	t	1	c1	2030-01-01 00:40:00+00	c1	wait	2030-01-01 00:40:00+00	\N	2030-01-01 00:50:00+00
other	q	s	r	\N	\N	f	0	\N	\N	\N	\N	\N	\N	\N
\.


--
-- Data for Name: run_checkpoint; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.run_checkpoint (tenant, project, session, run, checkpoint_id, created_at, body, park_request, parked_at, park_deadline, park_resolved_at) FROM stdin;
up	p	s	r	c1	2030-01-01 00:10:00+00	{"step": 1}	\N	\N	\N	\N
up	p	s	r	c2	2030-01-01 00:20:00+00	{"step": 2}	approve	\N	2030-01-02 00:00:00+00	\N
up	p	s	r2	c1	2030-01-01 00:30:00+00	{}	\N	\N	\N	\N
up	p	s	r3	c1	2030-01-01 00:40:00+00	{"step": 1}	wait	2030-01-01 00:40:00+00	\N	2030-01-01 00:50:00+00
\.


--
-- Data for Name: run_claim; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.run_claim (tenant, project, session, run, holder, fence, expires_at, released, reclaimed) FROM stdin;
up	p	s	r	w1	1	2030-01-01 01:00:00+00	f	f
up	p	s	r3	w2	2	2030-01-01 00:45:00+00	t	f
other	q	s	r	w9	3	2030-01-01 01:00:00+00	f	f
\.


--
-- Data for Name: task; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.task (id, case_id, run_id, state, roles, excluded, escalation_roles, priority, payload, due_at, expiry_policy, holder, claimed_at, created_at, settled_at, decided_by, decision, tenant, claim_timeout, claim_expires_at) FROM stdin;
t4	c2	\N	open	{r}	{}	{}	5	{}	\N	deny	\N	\N	2026-12-03 11:03:17.291976+00	\N	\N	\N	up	\N	\N
t1	c1	\N	completed	{r}	{}	{}	0	{"n": 1}	\N	deny	ann	2026-12-03 11:03:17.292266+00	2026-12-03 11:03:17.291163+00	2026-12-03 11:03:17.293008+00	ann	{"ok": true}	up	\N	\N
t5	c3	\N	claimed	{r}	{mallory}	{}	0	{}	\N	deny	bob	2026-12-03 11:03:17.293372+00	2026-12-03 11:03:17.292038+00	\N	\N	\N	up	\N	\N
t2	c1	\N	expired	{r}	{}	{}	0	{}	2030-01-01 09:00:00+00	deny	\N	\N	2026-12-03 11:03:17.291714+00	2030-01-02 00:00:00+00	\N	{"policy": "deny"}	up	\N	\N
t8	c4	\N	expired	{r}	{}	{}	0	{}	2030-01-01 09:00:00+00	proceed	\N	\N	2026-12-03 11:03:17.292202+00	2030-01-02 00:00:00+00	\N	{"policy": "proceed"}	up	\N	\N
t3	c2	\N	escalated	{r}	{}	{lead}	0	{}	\N	escalate	boss	2026-12-03 11:03:17.294817+00	2026-12-03 11:03:17.291883+00	\N	\N	\N	up	\N	\N
t7	c4	r	withdrawn	{r}	{}	{}	0	{}	\N	deny	\N	\N	2026-12-03 11:03:17.292151+00	2026-12-03 11:03:17.294973+00	\N	\N	up	\N	\N
t6	c3	r	claimed	{r}	{}	{}	0	{}	\N	deny	bob	2026-12-03 11:03:17.302505+00	2026-12-03 11:03:17.292092+00	\N	\N	\N	up	01:00:00	2026-12-03 12:03:17.302505+00
x1	c	\N	open	{r}	{}	{}	0	{}	\N	deny	\N	\N	2026-12-03 11:03:17.303663+00	\N	\N	\N	other	\N	\N
\.


--
-- Data for Name: tenant_binding; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.tenant_binding (tenant, role, kind) FROM stdin;
up	upgrade_team	member
up	upgrade_lead	service
up	upgrade_admin	admin
\.


--
-- Data for Name: tenant_channel; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.tenant_channel (tenant, secret, rotated_at) FROM stdin;
up	\\xc10d33b93b93853c98cd367b71dc7e4b983e80eb0cee96cd86b720aafe5c6f2b	2026-12-03 11:03:17.302991+00
\.


--
-- Data for Name: ticket; Type: TABLE DATA; Schema: worklist; Owner: postgres
--

COPY worklist.ticket (id, requester, title, body, authorities, open_deadline, confirm_window, ladder, created_at, state, deadline, overdue_from, next_check, last_seq, fold_state, tenant, last_event_at) FROM stdin;
k1	req	a ticket	{}	{lead}	2030-01-01 12:00:00+00	\N	{01:00:00}	2026-12-03 11:03:17.2952+00	working	2030-01-01 12:00:00+00	2030-01-01 12:00:00+00	2030-01-01 14:00:00+00	3	\\x0100000002000000056167656e74000100035d1dbad3a8000000000000056f74686572000400035d1dccb54b0000010000000462757379000100035d1dccb54b000100035d203e8e940000000001	up	2030-01-01 13:00:00+00
k2	req	closed	{}	{}	\N	01:00:00	{}	2026-12-03 11:03:17.296806+00	done	\N	\N	\N	2	\\x0100000001000000056167656e74020300035d1dbad3a80000000300035d1dbad3a8000000010000035d1e91674c00000000037265710000000100035d1e91674c0000	up	2030-01-01 11:00:00+00
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

SELECT pg_catalog.setval('worklist.fence_seq', 3, true);


--
-- PostgreSQL database dump complete
--

\unrestrict 3P0e9mvVOU44maPOUeHyfwhlQzjdoeoQmY3xilwbMsSG5jmseKMoUFnRcx4WqJa


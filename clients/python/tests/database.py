"""The database the tests run in: made afresh on the server of PGHOST,
PGPORT and PGUSER (a superuser), with the extension, a tenant bound to a
service login, a member and a group, and a login bound to nothing.  Each
test module has its own database and roles, named after it."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

import psycopg2  # noqa: E402

TENANT = 'ct'


class Database:
    def __init__(self, tag):
        self.name = 'worklist_clients_py_%s' % tag
        self.roles = {r: 'wl_py_%s_%s' % (tag, r) for r in ('service', 'member', 'group', 'stranger')}

    def _run(self, database, statements):
        conn = psycopg2.connect('', dbname=database)
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                for s in statements:
                    cur.execute(s)
        finally:
            conn.close()

    def create(self):
        r = self.roles
        self.drop()
        self._run('postgres', [
            'CREATE ROLE %s' % r['group'],
            'CREATE ROLE %s LOGIN' % r['service'],
            'CREATE ROLE %s LOGIN IN ROLE %s' % (r['member'], r['group']),
            'CREATE ROLE %s LOGIN' % r['stranger'],
            'CREATE DATABASE %s' % self.name,
        ])
        self._run(self.name, [
            'CREATE EXTENSION worklist',
            "SELECT worklist.grant_tenant('%s', '%s', 'service')" % (TENANT, r['service']),
            "SELECT worklist.grant_tenant('%s', '%s', 'member')" % (TENANT, r['group']),
            'GRANT EXECUTE ON FUNCTION worklist.take_over(text, text, text, text[]) TO %s' % r['service'],
            'GRANT EXECUTE ON FUNCTION worklist.set_state(text, worklist.task_state) TO %s' % r['service'],
        ])

    def drop(self):
        self._run('postgres', ['SET client_min_messages = warning',
                               'DROP DATABASE IF EXISTS %s WITH (FORCE)' % self.name]
                  + ['DROP ROLE IF EXISTS %s' % role for role in self.roles.values()])

    def sql(self, query, args=()):
        """SQL as the superuser, in the test tenant."""
        conn = psycopg2.connect('', dbname=self.name,
                                options='-c worklist.tenant=%s' % TENANT)
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                cur.execute(query, args)
                return cur.fetchall() if cur.description else []
        finally:
            conn.close()

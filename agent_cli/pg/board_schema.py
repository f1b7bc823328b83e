"""The board's tables on PostgreSQL: tasks, their dependencies, every claim token ever drawn,
the event log and the change stamp.

What the database itself guarantees (whatever a client does): an owner holds at most one
in_progress task (a partial unique index), a token is never handed out twice (the token
table's key), a dependency names an existing task, and each status keeps the invariants of
`.tasks/README.md` (check constraints). `waiting` counts a task's unfinished dependencies: it
is kept in the same transaction as every completion and dependency change, so the claim
statement tests one column of the row it locks (`board_unblock` lowers it). `board_state`
holds the change stamp; each change bumps it last, so the stamp's row lock is held only until
the commit and event ids follow commit order.
"""

from __future__ import annotations

from .schema import Component

_V1 = """
CREATE TABLE board_state (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    epoch text NOT NULL DEFAULT substr(md5(random()::text || clock_timestamp()::text), 1, 8),
    seq bigint NOT NULL DEFAULT 0
);
INSERT INTO board_state DEFAULT VALUES;
CREATE SEQUENCE board_task_id;
CREATE TABLE board_task (
    id bigint PRIMARY KEY CHECK (id >= 1),
    subject text NOT NULL CHECK (subject <> ''),
    description text NOT NULL DEFAULT '',
    status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'in_progress', 'completed')),
    owner text,
    blocked_by bigint[] NOT NULL DEFAULT '{}',
    waiting integer NOT NULL DEFAULT 0 CHECK (waiting >= 0),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    claimed_at timestamptz,
    claim_token text,
    lease_expires_at timestamptz,
    result text,
    verify jsonb,
    assignee text,
    role text,
    role_key text,
    require_plan boolean NOT NULL DEFAULT false,
    CHECK (status <> 'pending' OR (owner IS NULL AND claim_token IS NULL)),
    CHECK (status <> 'in_progress' OR (owner IS NOT NULL AND claim_token IS NOT NULL
                                       AND lease_expires_at IS NOT NULL)),
    CHECK (status <> 'completed' OR (owner IS NOT NULL AND claim_token IS NULL)),
    CHECK (lease_expires_at IS NULL OR status = 'in_progress'),
    CHECK ((role IS NULL) = (role_key IS NULL))
);
CREATE UNIQUE INDEX board_task_one_per_owner ON board_task (owner)
    WHERE status = 'in_progress';
CREATE INDEX board_task_claimable ON board_task (id) WHERE status = 'pending' AND waiting = 0;
CREATE INDEX board_task_lease ON board_task (lease_expires_at) WHERE status = 'in_progress';
CREATE TABLE board_dependency (
    task_id bigint NOT NULL REFERENCES board_task (id),
    blocker_id bigint NOT NULL REFERENCES board_task (id),
    PRIMARY KEY (task_id, blocker_id),
    CHECK (task_id <> blocker_id)
);
CREATE INDEX board_dependency_blocker ON board_dependency (blocker_id);
CREATE TABLE board_token (
    token text PRIMARY KEY,
    task_id bigint NOT NULL,
    fate char(1) NOT NULL CHECK (fate IN ('c', 'd', 'r', 'x'))
);
CREATE TABLE board_event (
    id bigserial PRIMARY KEY,
    seq bigint NOT NULL,
    n integer NOT NULL,
    time timestamptz NOT NULL,
    actor text NOT NULL,
    action text NOT NULL,
    task_id bigint NOT NULL,
    details json NOT NULL  -- json, not jsonb: its keys stay in the order written
);
-- A completion's effect on what waits for it: called inside the completing statement, its
-- UPDATE takes a fresh snapshot (a volatile function does) after the graph lock, so it sees
-- every dependency a create or update committed before; it returns what became claimable.
CREATE FUNCTION board_unblock(done bigint, graph_key text) RETURNS bigint[]
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    ids bigint[];
BEGIN
    PERFORM pg_advisory_xact_lock_shared(hashtext(graph_key));
    WITH lowered AS (
        UPDATE board_task t SET waiting = greatest(t.waiting - 1, 0)
        FROM board_dependency d
        WHERE d.blocker_id = done AND t.id = d.task_id
        RETURNING t.id, t.status, t.owner, t.waiting)
    SELECT coalesce(array_agg(id ORDER BY id)
                    FILTER (WHERE status = 'pending' AND owner IS NULL AND waiting = 0),
                    '{}')
    INTO ids FROM lowered;
    RETURN ids;
END
$$;
"""

BOARD = Component("board", (_V1,))

# The name PostgreSQL reports when a second claim by one owner would commit.
ONE_PER_OWNER = "board_task_one_per_owner"

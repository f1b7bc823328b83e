"""The team's tables on PostgreSQL: inboxes (messages, cursors, delivered ids, quarantine),
the roster (with a heartbeat on the database clock) and protocol requests (with their log).

Every changing transaction of these stores also runs `pg_notify(<channel>, '<what>')`, so a
process LISTENing on the team's channel (pg/listen.py) wakes as it would on a file change.
"""

from __future__ import annotations

from .schema import Component

_V1 = """
CREATE TABLE inbox_head (
    inbox text PRIMARY KEY,
    last_seq bigint NOT NULL
);
CREATE TABLE inbox_message (
    inbox text NOT NULL,
    seq bigint NOT NULL,
    id text NOT NULL UNIQUE,
    body jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (inbox, seq)
);
CREATE TABLE inbox_cursor (
    inbox text PRIMARY KEY,
    seq bigint NOT NULL CHECK (seq >= 0),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE inbox_delivered (
    inbox text NOT NULL,
    id text NOT NULL,
    delivered_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (inbox, id)
);
CREATE TABLE inbox_quarantine (
    inbox text NOT NULL,
    seq bigint NOT NULL,
    record jsonb NOT NULL,
    PRIMARY KEY (inbox, seq)
);
CREATE TABLE roster_member (
    name text PRIMARY KEY,
    joined bigserial NOT NULL,
    data jsonb NOT NULL,
    host text,
    pid integer,
    heartbeat_at timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE protocol_request (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    kind text NOT NULL,
    sender text NOT NULL,
    target text NOT NULL,
    status text NOT NULL,
    data jsonb NOT NULL
);
CREATE INDEX protocol_request_pending ON protocol_request (target, kind) WHERE status = 'pending';
CREATE TABLE protocol_log (
    seq bigserial PRIMARY KEY,
    record jsonb NOT NULL
);
"""

TEAM = Component("team", (_V1,))

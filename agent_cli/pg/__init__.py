"""The PostgreSQL backend: a team's board, inboxes, roster and protocols in one database,
so teammates on several hosts share them (`--board postgresql://...`).

db.py (connections, transactions, the URL), schema.py (migrations per component); the stores
implement the same methods as the file stores in board/ and team/. Imported only when a
PostgreSQL board is configured (psycopg is the `postgres` extra).
"""

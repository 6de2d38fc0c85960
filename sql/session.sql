-- Per-connection scratch tables that stages fill in bulk (pipelines.db.keys, pipelines.db.insert),
-- and the run-scoped change log (pipelines.changes).
create temp table if not exists keys (kind varchar not null, id varchar not null);
create temp table if not exists places (
    doc_id varchar not null, source varchar not null, line integer not null, record_hash varchar
);
create temp table if not exists changed (kind varchar not null, id varchar not null);

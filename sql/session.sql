-- Per-connection scratch tables that stages fill in bulk (pipelines.db.keys, pipelines.db.insert),
-- the run's change log (pipelines.run.Run.note), and the dictionary a mentions run matches with.
create temp table if not exists keys (kind varchar not null, id varchar not null);
create temp table if not exists places (
    doc_id varchar not null, source varchar not null, line integer not null, record_hash varchar
);
create temp table if not exists changed (kind varchar not null, id varchar not null);
create temp table if not exists names_next (
    entity_id varchar not null, name varchar not null, weight integer not null,
    words varchar  -- folded tokens joined by U+001F
);
create temp table if not exists community_region (entity_id varchar not null);

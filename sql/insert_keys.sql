-- Ids for the temporary table keys under one kind, from one JSON array parameter (pipelines.db.keys).
insert into keys
select $kind, unnest(from_json($ids, '["VARCHAR"]'))

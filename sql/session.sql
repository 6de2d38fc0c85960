-- The run's change log, for every connection (pipelines.run.Run.note): each stage that writes rows logs
-- the ids it wrote under a kind ('chunk', 'entity', 'edge', 'community', 'answer'), and the stages after it
-- read only those. Each stage's other scratch relations are made by named statements in its own file.
create temp table if not exists changed (kind varchar not null, id varchar not null);

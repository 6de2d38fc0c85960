-- Stage chunks (pipelines.chunks): each document split into token-bounded chunks.

-- name: reset
-- After a change of encoding or chunk size: every document is to be split again.
update documents set n_chunks = 0, chunk_ids = null;

-- name: todo_ids
-- The documents not yet split.
select doc_id from documents where n_chunks = 0 order by doc_id;

-- name: todo
-- The next $n documents not yet split after the id $after (null: from the first), with their text and where
-- each of their pages starts in it (metadata.pages: a PDF's; null for other documents).
select doc_id, text, try_cast(json_extract(metadata, '$.pages') as integer[]) as pages
from documents
where n_chunks = 0 and ($after::varchar is null or doc_id > $after)
order by doc_id
limit $n;

-- name: shard_input
-- The scratch relation shard_input (pipelines.shards): each document not yet split, keyed by its id, as `todo`.
create or replace temp table shard_input as
select doc_id as shard_key, 0 as seq, doc_id, text, try_cast(json_extract(metadata, '$.pages') as integer[]) as pages
from documents
where n_chunks = 0;

-- name: split
-- The scratch relation chunks_split: the documents split again in this run ($ids, a JSON array).
create or replace temp table chunks_split as select unnest(from_json($ids, '["VARCHAR"]')) as doc_id;

-- name: delete
-- Delete the chunks of documents being split again (chunks_split) or no longer present; return what tells
-- whether each comes back as it was (its id, place and token count).
delete from chunks
where doc_id in (select doc_id from chunks_split)
   or doc_id not in (select doc_id from documents)
returning chunk_id, ord, n_tokens;

-- name: split_rows
-- The chunks just written for the documents split again (chunks_split): id, place and token count.
select chunk_id, ord, n_tokens
from chunks
where doc_id in (select doc_id from chunks_split);

-- name: changed
-- Log the chunks just written for documents split again (chunks_split). Chunks that went need no entry:
-- their mentions are forgotten, and the mentions stage logs those entities.
insert into changed
select 'chunk', chunk_id
from chunks
where doc_id in (select doc_id from chunks_split);

-- name: sizes
-- The token and chunk totals and the chunk ids, in order (a JSON array), of the documents just split
-- (chunks_split), from their chunks.
update documents d
set n_tokens = s.n_tokens, n_chunks = s.n_chunks, chunk_ids = s.chunk_ids
from (
    select doc_id, sum(n_tokens)::integer as n_tokens, count(*)::integer as n_chunks,
           to_json(list(chunk_id order by ord)) as chunk_ids
    from chunks
    where doc_id in (select doc_id from chunks_split)
    group by doc_id
) s
where d.doc_id = s.doc_id;

-- name: count
-- How many chunks the index holds.
select count(*) from chunks;

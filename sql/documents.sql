-- Stage documents (pipelines.documents): the documents of the source, their given entities, and the records
-- that could not be read.

-- name: count
-- How many documents the index holds.
select count(*) from documents;

-- name: stored
-- Every stored document with what tells whether its record changed or moved.
select doc_id, content_hash, source, line, record_hash from documents;

-- name: gone
-- The scratch relation documents_gone: the documents deleted or changed in this run ($ids, a JSON array).
create or replace temp table documents_gone as select unnest(from_json($ids, '["VARCHAR"]')) as doc_id;

-- name: read_tables
-- The scratch relations documents_read and document_entities_read, which pipelines.bulk.insert fills a batch at a
-- time while the source is read: the new and changed documents, and their given entities, to be stored once
-- the documents that went or changed are deleted and the unchanged ones moved (`insert_read`).
create or replace temp table documents_read as from documents limit 0;
create or replace temp table document_entities_read as from document_entities limit 0;

-- name: insert_read
-- Store the documents read in this run (documents_read), in the order they were read; return how many.
insert into documents by name select * from documents_read;

-- name: entities_insert_read
-- Store the given entities of the documents read in this run (document_entities_read).
insert into document_entities by name select * from document_entities_read;

-- name: read_drop
-- Drop the scratch relations of the documents read, once stored: they would hold DuckDB memory for the run.
drop table documents_read;
drop table document_entities_read;

-- name: entities_delete
-- Delete the given entities of the documents in documents_gone.
delete from document_entities where doc_id in (select doc_id from documents_gone);

-- name: delete
-- Delete the documents in documents_gone.
delete from documents where doc_id in (select doc_id from documents_gone);

-- name: shift
-- Documents whose record stands byte for byte at another line of the same source file: each range of
-- old lines [lo, hi] that moved by one offset ($shifts: column lists lo, hi, delta) moves in one row,
-- instead of one row per document (a deletion near the top moves every line after it).
update documents d
set line = d.line + s.delta
from (
    select unnest(x.lo) as lo, unnest(x.hi) as hi, unnest(x.delta) as delta
    from (select from_json(p, '{"lo": ["INTEGER"], "hi": ["INTEGER"], "delta": ["INTEGER"]}') as x
          from (select $shifts as p))
) s
where d.source = $source and d.line between s.lo and s.hi;

-- name: places
-- The scratch relation places, which pipelines.bulk.insert fills: documents that stand at another file, line
-- or record hash than the stored one.
create or replace temp table places (
    doc_id varchar not null, source varchar not null, line integer not null, record_hash varchar
);

-- name: move
-- Unchanged documents that now stand elsewhere in the source (or in other bytes) get their new
-- file, line and record hash (the scratch relation places).
update documents d
set source = p.source, line = p.line, record_hash = p.record_hash
from places p
where d.doc_id = p.doc_id;

-- name: rejected_delete
-- Delete the stored rejections of documents, returning them, to be replaced by this reading's; those of the
-- gazetteer file $gazetteer belong to the mentions stage, which replaces them when it reads that file.
delete from rejected where source is distinct from $gazetteer returning source, line, doc_id, reason, detail;

-- name: files_tables
-- The scratch relations of a folder's files read on workers (pipelines.shards): files_listed, each file to read
-- with its place in path order; files_converted, what a worker makes of each (its document, or why it cannot be
-- indexed: pipelines.sources.converted_rows, its columns in that order).
create or replace temp table files_listed (ord integer, src varchar);
create or replace temp table files_converted (src varchar, title varchar, text varchar, metadata varchar,
                                              line integer, reason varchar, detail varchar);

-- name: shard_files
-- The scratch relation shard_input (pipelines.shards): the files to read, keyed by their place in path order.
create or replace temp table shard_input as
select ord as shard_key, 0 as seq, src
from files_listed;

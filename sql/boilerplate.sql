-- Stage boilerplate (pipelines.boilerplate): the sentences of each chunk, as keys, and those written in many
-- documents (boilerplate), per chunk.

-- name: todo
-- The scratch relation sentences_todo: the chunks whose sentences must be read (new or changed since their row of
-- chunk_sentences was made; every chunk with $full).
create or replace temp table sentences_todo as
select c.chunk_id, c.doc_id, c.content_hash
from chunks c
left join chunk_sentences s on s.chunk_id = c.chunk_id and s.content_hash = c.content_hash and not $full
where s.chunk_id is null;

-- name: delete
-- Delete the sentence rows of chunks that are gone or about to be read again; returns how many.
delete from chunk_sentences
where chunk_id in (select chunk_id from sentences_todo)
   or chunk_id not in (select chunk_id from chunks)
returning chunk_id;

-- name: texts
-- The id, document and text of each chunk of sentences_todo, in id order.
select t.chunk_id, t.doc_id, t.content_hash, c.text
from sentences_todo t
join chunks c using (chunk_id)
order by t.chunk_id;

-- name: next
-- The scratch relation boilerplate_next: each chunk's sentence keys that at least $documents documents write,
-- sorted (chunks without any left out).
create or replace temp table boilerplate_next as
with keyed as (
    select chunk_id, doc_id, unnest(sentences) as sentence
    from chunk_sentences
),
common as (
    select sentence
    from keyed
    group by sentence
    having count(distinct doc_id) >= $documents
)
select chunk_id, list_sort(list(distinct sentence)) as sentences
from keyed
where sentence in (select sentence from common)
group by chunk_id;

-- name: changed
-- Log the chunks whose boilerplate sentences differ from the stored ones (boilerplate_next against
-- chunk_boilerplate), for the answers and reports that read them.
insert into changed
select 'boilerplate', coalesce(n.chunk_id, o.chunk_id)
from boilerplate_next n
full join chunk_boilerplate o using (chunk_id)
where n.sentences is distinct from o.sentences;

-- name: clear
-- Empty chunk_boilerplate, before boilerplate_next is stored in its place.
delete from chunk_boilerplate;

-- name: store
-- Store boilerplate_next as chunk_boilerplate.
insert into chunk_boilerplate
select chunk_id, sentences
from boilerplate_next;

-- name: counts
-- How many chunks the stage covers, and how many distinct sentences are boilerplate.
select (select count(*) from chunks),
       (select count(distinct sentence) from (select unnest(sentences) as sentence from chunk_boilerplate));

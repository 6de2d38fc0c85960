-- Stage entity_answers (pipelines.answers): for each entity, one sentence quoted verbatim from a chunk that
-- mentions it.

-- name: read
-- How many entities the index holds.
select count(*) from entities;

-- name: scope
-- The scratch relation answer_scope: the entities whose short answer may have to be chosen again. Every
-- entity with $full; otherwise those whose mentions or names changed and those that mention a chunk this
-- run rewrote or whose boilerplate sentences changed (the run's change log). answer_todo then keeps those
-- whose input hash really changed.
create or replace temp table answer_scope as
select entity_id
from entities
where $full
   or entity_id in (select id from changed where kind = 'entity')
   or entity_id in (select m.entity_id from mentions m
                    join changed c on c.kind in ('chunk', 'boilerplate') and c.id = m.chunk_id);

-- name: inputs
-- The table macro answer_inputs: the entities of answer_scope with ids after `after` (null: from the first) up to
-- `last` whose short answer must be chosen again, with what the choice reads: their names, and each candidate
-- chunk's id, content hash, place, document title, crowding (how many entities the chunk mentions) and
-- boilerplate sentence keys (chunk_boilerplate); and
-- their `evidence` best evidence chunks: from the document titled after the entity's label, then shared with
-- fewer entities, then by chunk id (what a question reads of the entity, query.entity_evidence). input_hash is
-- the hash of exactly that (with the label, `version` and `max_chars`); an entity is kept when it differs from
-- the stored answer's, or there is none. Lists are sorted after aggregating (by their first field): DuckDB's
-- ordered aggregates cost several times more on these small groups.
create or replace temp macro answer_inputs(after, last, evidence, version, max_chars) as table
with scoped as (
    select m.entity_id, m.chunk_id
    from mentions m
    join answer_scope k using (entity_id)
    where (after is null or k.entity_id > after) and k.entity_id <= last
),
crowd as (
    select chunk_id, count(*)::integer as n_entities
    from mentions
    where chunk_id in (select chunk_id from scoped)
    group by chunk_id
),
candidates as (
    select m.entity_id, m.chunk_id, c.content_hash, c.ord, d.title, crowd.n_entities,
           coalesce(b.sentences, []) as boilerplate
    from scoped m
    join chunks c using (chunk_id)
    join documents d using (doc_id)
    join crowd using (chunk_id)
    left join chunk_boilerplate b using (chunk_id)
),
names_of as (
    select entity_id, list_sort(list(alias)) as names
    from entity_aliases
    where entity_id in (select entity_id from scoped)
    group by entity_id
),
inputs as (
    select x.entity_id, n.names, e.label,
           list_sort(list({'id': x.chunk_id, 'hash': x.content_hash, 'ord': x.ord, 'title': x.title,
                           'crowd': x.n_entities, 'boilerplate': x.boilerplate})) as chunks,
           list_sort(list({'untitled': lower(x.title) <> lower(e.label), 'crowd': x.n_entities,
                           'id': x.chunk_id})) as ranked
    from candidates x
    join names_of n using (entity_id)
    join entities e using (entity_id)
    group by x.entity_id, n.names, e.label
),
hashed as (
    select entity_id, names, chunks, list_transform(ranked[1:evidence], r -> r.id) as evidence,
           sha256(to_json({'version': version::varchar, 'max_chars': max_chars::integer, 'label': label,
                           'names': names, 'chunks': chunks})) as input_hash
    from inputs
)
select h.entity_id, h.names, h.chunks, h.evidence, h.input_hash
from hashed h
left join entity_answers a using (entity_id)
where a.input_hash is distinct from h.input_hash;

-- name: todo
-- The scratch relation answer_todo, empty, with answer_inputs' columns: todo_range fills it.
create or replace temp table answer_todo as
from answer_inputs(null, null, $evidence, $version, $max_chars)
limit 0;

-- name: ranges
-- The last entity id of each range of $n entities of answer_scope, in id order (the last range may be shorter).
select entity_id
from (select entity_id, row_number() over (order by entity_id) as n, count(*) over () as total from answer_scope)
where n % $n = 0 or n = total
order by entity_id;

-- name: todo_range
-- Add to answer_todo the entities of answer_scope after the id $after (null: from the first) up to $last whose
-- short answer must be chosen again (answer_inputs): one range's inputs are aggregated at a time.
insert into answer_todo
from answer_inputs($after, $last, $evidence, $version, $max_chars);

-- name: todo_batch
-- The next $n entities of answer_todo after the id $after (null: from the first), in id order, with what
-- their answer is chosen from and their best evidence chunks.
select entity_id, names, chunks, evidence, input_hash
from answer_todo
where $after::varchar is null or entity_id > $after
order by entity_id
limit $n;

-- name: batch_texts
-- The text of every candidate chunk of the entities of answer_todo after the id $after (null: from the
-- first) up to $last, each chunk once.
select chunk_id, text
from chunks
where chunk_id in (select unnest(chunks).id from answer_todo
                   where ($after::varchar is null or entity_id > $after) and entity_id <= $last);

-- name: changed
-- Log the entities whose short answer was just chosen again (answer_todo).
insert into changed
select 'answer', entity_id
from answer_todo;

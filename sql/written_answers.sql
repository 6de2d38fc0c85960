-- Stage written_answers (pipelines.written_answers): a language model's short answer for each entity,
-- every sentence citing chunks that mention it.

-- name: read
-- How many short answers the index holds.
select count(*) from entity_answers;

-- name: todo
-- Into the scratch relation written_answer_todo: the entities whose written answer must be made again, with
-- their label and extractive answer, and its hash under $setting (version, model and prompt version) with
-- $n (the chunks a prompt shows): the label and the extractive answer's input_hash, which covers every chunk
-- mentioning the entity with its content hash and crowding, and so the chunks the prompt shows. Every entity
-- with $full; otherwise those whose names or answer this run changed (the change log).
create or replace temp table written_answer_todo as
with scoped as (
    select a.entity_id, e.label, a.answer, a.evidence_ref,
           sha256(to_json({'setting': $setting::varchar, 'n': $n::integer, 'label': e.label,
                           'extractive': a.input_hash})) as input_hash
    from entity_answers a
    join entities e using (entity_id)
    where $full or a.entity_id in (select id from changed where kind in ('entity', 'answer'))
)
select s.entity_id, s.label, s.answer, s.evidence_ref, s.input_hash
from scoped s
left join written_answers w using (entity_id)
where w.input_hash is distinct from s.input_hash;

-- name: todo_batch
-- The next $size entities of written_answer_todo after the id $after (null: from the first), in id order.
select entity_id, label, answer, evidence_ref, input_hash
from written_answer_todo
where $after::varchar is null or entity_id > $after
order by entity_id
limit $size;

-- name: batch_chunks
-- The chunks the prompts of the entities of written_answer_todo after the id $after (null: from the first)
-- up to $last show, with their text: at most $n each, the answer's own chunk first, then those that fewest
-- entities share, then by chunk id.
with mine as (
    select m.entity_id, m.chunk_id, t.evidence_ref
    from mentions m
    join written_answer_todo t using (entity_id)
    where ($after::varchar is null or t.entity_id > $after) and t.entity_id <= $last
),
crowd as (
    select chunk_id, count(*) as n_entities
    from mentions
    where chunk_id in (select chunk_id from mine)
    group by chunk_id
),
ranked as (
    select m.entity_id, m.chunk_id,
           row_number() over (partition by m.entity_id
                              order by m.chunk_id = m.evidence_ref desc, c.n_entities, m.chunk_id) as place
    from mine m
    join crowd c using (chunk_id)
)
select r.entity_id, r.chunk_id, ch.text
from ranked r
join chunks ch using (chunk_id)
where r.place <= $n
order by r.entity_id, r.place;

-- name: delete_all
-- Without a model: delete every written answer, returning their ids.
delete from written_answers returning entity_id;

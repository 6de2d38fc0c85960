-- Mode nlp: the candidates that become entities, each spelling with the chunks that use it. An
-- acronym or plural (nlp_variants) counts for the entity it stands for; an entity must be seen in at
-- least $min_chunks chunks and, once there are $min_corpus chunks, in at most $max_share of them.
with seen as (
    select x.chunk_id, n.entity_id, n.name
    from chunk_candidates x, unnest(x.names) as u(n)
),
counted as (
    select coalesce(e.canonical, s.entity_id) as entity_id, count(distinct s.chunk_id) as n_chunks
    from seen s
    left join nlp_variants e on e.variant = s.entity_id
    group by all
),
kept as (
    select entity_id
    from counted
    where n_chunks >= $min_chunks
      and ((select count(*) from chunks) < $min_corpus or n_chunks <= $max_share * (select count(*) from chunks))
)
select entity_id, name, count(distinct chunk_id)::integer as weight
from seen
where entity_id in (select entity_id from kept)
  and entity_id not in (select variant from nlp_variants)
group by entity_id, name
order by entity_id, name

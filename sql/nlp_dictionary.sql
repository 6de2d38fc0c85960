-- Mode nlp: the candidates that become entities (candidate_decisions, reason 'entity'), each spelling with
-- the chunks that use it; an acronym's or plural's spellings are added by pipelines.mentions.
select s.entity_id, n.name, count(distinct x.chunk_id)::integer as weight
from chunk_candidates x, unnest(x.names) as u(n)
join candidate_decisions s on s.entity_id = n.entity_id and s.reason = 'entity'
group by s.entity_id, n.name
order by s.entity_id, n.name

-- Each entity's number of distinct neighbours (0 for one that co-occurs with none), for those in
-- keys 'src' (the only ones whose edges may have changed), counted in edges_next: their rows in edges are
-- now exactly those.
update entities e
set degree = coalesce(s.degree, 0)
from (
    select k.id as entity_id, count(n.dst)::integer as degree
    from keys k
    left join edges_next n on n.src = k.id
    where k.kind = 'src'
    group by k.id
) s
where e.entity_id = s.entity_id

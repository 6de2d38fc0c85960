-- Each entity's number of distinct neighbours (0 for an entity that co-occurs with none).
update entities e
set degree = coalesce(s.degree, 0)
from (
    select x.entity_id, count(ed.dst)::integer as degree
    from entities x
    left join edges ed on ed.src = x.entity_id
    group by x.entity_id
) s
where e.entity_id = s.entity_id

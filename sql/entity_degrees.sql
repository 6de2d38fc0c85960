-- Each entity's number of distinct neighbours (0 for one that co-occurs with none), for those in
-- keys 'src' (the only ones whose edges may have changed).
update entities e
set degree = coalesce(s.degree, 0)
from (
    select x.entity_id, count(ed.dst)::integer as degree
    from entities x
    left join edges ed on ed.src = x.entity_id
    where x.entity_id in (select id from keys where kind = 'src')
    group by x.entity_id
) s
where e.entity_id = s.entity_id

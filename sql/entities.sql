-- The entities listed in keys 'entity' that some chunk mentions; the label is the heaviest name,
-- then the smallest (min_by: a window costs several times more here).
insert into entities (entity_id, label, n_chunks, degree)
with labels as (
    select entity_id, min_by(name, {'weight': -weight, 'name': name}) as label
    from names
    where entity_id in (select id from keys where kind = 'entity')
    group by entity_id
)
select m.entity_id, l.label, count(*)::integer, 0
from mentions m
join labels l using (entity_id)
group by m.entity_id, l.label
order by m.entity_id

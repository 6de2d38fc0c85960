-- The entities listed in keys 'entity' that some chunk mentions; the label is the heaviest name,
-- then the smallest.
insert into entities (entity_id, label, n_chunks, degree)
with labels as (
    select entity_id, name as label
    from names
    where entity_id in (select id from keys where kind = 'entity')
    qualify row_number() over (partition by entity_id order by weight desc, name) = 1
)
select m.entity_id, l.label, count(*)::integer, 0
from mentions m
join labels l using (entity_id)
group by m.entity_id, l.label
order by m.entity_id

-- Into keys 'src': the entities whose neighbour list may have changed, so that only their edge rows
-- are computed again. Every entity with $full; otherwise the entities whose mentions changed (the
-- run's change log), their previous neighbours and their current ones.
insert into keys
select distinct 'src', entity_id
from (
    select src as entity_id from edges where $full
    union all
    select entity_id from mentions where $full
    union all
    select id from changed where kind = 'entity'
    union all
    select e.dst from edges e join changed c on c.kind = 'entity' and c.id = e.src
    union all
    select b.entity_id
    from changed c
    join mentions a on c.kind = 'entity' and a.entity_id = c.id
    join mentions b on b.chunk_id = a.chunk_id
)

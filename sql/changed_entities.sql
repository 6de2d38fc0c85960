-- Log the entities whose mentions or names were just rewritten (keys 'entity').
insert into changed
select 'entity', id
from keys
where kind = 'entity'

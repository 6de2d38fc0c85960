-- Log the communities whose rows were just rewritten or removed (keys 'community').
insert into changed
select 'community', id
from keys
where kind = 'community'

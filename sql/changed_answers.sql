-- Log the entities whose short answer was just chosen again (answer_todo).
insert into changed
select 'answer', entity_id
from answer_todo

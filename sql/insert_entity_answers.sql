-- Bulk rows for entity_answers, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into entity_answers by name
select unnest(entity_id) as entity_id, unnest(answer) as answer, unnest(evidence_ref) as evidence_ref,
       unnest(input_hash) as input_hash
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {entity_id: 'varchar[]', answer: 'varchar[]', evidence_ref: 'varchar[]', input_hash: 'varchar[]'})

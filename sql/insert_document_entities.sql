-- Bulk rows for document_entities, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert or ignore into document_entities by name
select unnest(doc_id) as doc_id, unnest(label) as label, unnest(entity_id) as entity_id
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {doc_id: 'varchar[]', label: 'varchar[]', entity_id: 'varchar[]'})

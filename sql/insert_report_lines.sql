-- Bulk rows for report_lines, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into report_lines by name
select unnest(community_id) as community_id, unnest(ord) as ord, unnest(entity_id) as entity_id,
       unnest(text) as text, unnest(evidence_ref) as evidence_ref
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {community_id: 'varchar[]', ord: 'integer[]', entity_id: 'varchar[]', text: 'varchar[]',
               evidence_ref: 'varchar[]'})

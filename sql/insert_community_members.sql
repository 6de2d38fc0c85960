-- Bulk rows for community_members, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into community_members by name
select unnest(community_id) as community_id, unnest(entity_id) as entity_id, unnest(centrality) as centrality
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {community_id: 'varchar[]', entity_id: 'varchar[]', centrality: 'integer[]'})

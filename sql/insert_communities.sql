-- Bulk rows for communities, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into communities by name
select unnest(community_id) as community_id, unnest(level) as level, unnest(parent_id) as parent_id,
       unnest(title) as title, unnest(weight) as weight, unnest(n_members) as n_members,
       unnest(graph_hash) as graph_hash
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {community_id: 'varchar[]', level: 'integer[]', parent_id: 'varchar[]', title: 'varchar[]',
               weight: 'integer[]', n_members: 'integer[]', graph_hash: 'varchar[]'})

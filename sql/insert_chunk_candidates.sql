-- Bulk rows for chunk_candidates, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert or replace into chunk_candidates by name
select unnest(chunk_id) as chunk_id, unnest(title) as title, unnest(names) as names, unnest(acronyms) as acronyms,
       unnest(words) as words, unnest(mid_names) as mid_names
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {chunk_id: 'varchar[]', title: 'varchar[]', names: 'struct(entity_id varchar, name varchar)[][]',
               acronyms: 'struct(acronym varchar, expansion varchar)[][]',
               words: 'struct(word varchar, lower integer, mid integer, other integer)[][]',
               mid_names: 'varchar[][]'})

-- Bulk rows for title_names, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into title_names by name
select unnest(title) as title, unnest(entity_id) as entity_id, unnest(words) as words, unnest(short) as short,
       unnest(short_words) as short_words
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {title: 'varchar[]', entity_id: 'varchar[]', words: 'varchar[]', short: 'varchar[]',
               short_words: 'varchar[]'})

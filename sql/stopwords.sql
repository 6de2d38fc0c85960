-- Statements of pipelines.stopwords: the fts extension's stop words.

-- name: stop_words
-- The fts extension's English stop words, from an fts index it made over an empty table (pipelines.stopwords.en).
select sw from fts_main_stop_words_source.stopwords order by sw;

-- name: stop_words_source
-- An empty table to make that fts index over, in a connection of its own.
create table stop_words_source (id varchar, text varchar);

-- name: stop_words_index
-- The fts index over it, which holds the stop words.
pragma create_fts_index('stop_words_source', 'id', 'text');

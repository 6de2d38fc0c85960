-- Statements of pipelines.db: opening an index and the BM25 tokeniser.

-- name: attach
-- Attach the DuckDB file {path} (a quoted literal: ATTACH takes no parameters) as {name}{read_only}.
attach {path} as {name} (type duckdb{read_only});

-- name: detach
-- Detach the index file attached as idx (a reader that attached another file than the one it holds tries again).
detach idx;

-- name: use
-- Make the attached index the default database of a read-only connection.
use idx;

-- name: is_index
-- Whether the open database holds an acervo index: the tables every index has (documents, index_state).
select count(*) = 2 from duckdb_tables()
where database_name = current_database() and not temporary and table_name in ('documents', 'index_state');

-- name: stamp
-- Mark a new index file (its index_state still empty) with the index format $format (pipelines.db.FORMAT); a file
-- that already holds state keeps the format it has.
insert into index_state select 'format', $format where not exists (select 1 from index_state);

-- name: format
-- The index format of the open index file: index_state format, '0' where it has none (a file made before formats
-- were stored).
select coalesce((select value from index_state where key = 'format'), '0');

-- name: threads
-- How many threads DuckDB runs on now.
select current_setting('threads');

-- name: set_threads
-- Run DuckDB on $n threads.
set threads = $n;

-- name: set_memory_limit
-- Let DuckDB hold at most $limit (e.g. 1GB) in memory, spilling to disk past it.
set memory_limit = $limit;

-- name: memory_limit
-- DuckDB's memory limit now.
select current_setting('memory_limit');

-- name: bm25_tokens
-- (pipelines.db.load_fts: what pipelines.query.lexical.tokens, which the terms stage and the query side split
-- texts with, is checked against.)
-- A text's BM25 words, as DuckDB's fts extension tokenises them: accents stripped, lower case, split at
-- every run of the characters fts ignores (digits and punctuation, and the CJK and full-width punctuation), each
-- stemmed with the porter stemmer. Text written without spaces between words (Chinese, Japanese: Han, Hiragana
-- and Katakana; Thai, Lao, Myanmar and Khmer) is split into overlapping pairs of characters, as Lucene's CJK
-- analyser does ("北京大学": 北京, 京大, 大学); a lone such character stays one word. pipelines.query.lexical.tokens
-- splits alike.
-- Empty tokens are left out by the callers (a stop word is dropped before stemming, at build time only).
create or replace temp macro bm25_tokens(s) as
    flatten(list_transform(
        string_split_regex(
            regexp_replace(
                regexp_replace(lower(strip_accents(s::varchar)),
                               '[0-9!@#$%^&*()_+={}\[\]:;<>,.?~\\/\|''"`\x{3000}-\x{303f}\x{ff01}-\x{ff0f}\x{ff1a}-\x{ff20}\x{ff3b}-\x{ff40}\x{ff5b}-\x{ff65}-]+',
                               ' ', 'g'),
                '([\x{0e00}-\x{0eff}\x{1000}-\x{109f}\x{1780}-\x{17ff}\x{3040}-\x{30ff}\x{3400}-\x{4dbf}\x{4e00}-\x{9fff}\x{f900}-\x{faff}\x{20000}-\x{2fa1f}]+)', ' \1 ', 'g'),
            '\s+'),
        w -> case when length(w) > 1
                       and regexp_full_match(w, '[\x{0e00}-\x{0eff}\x{1000}-\x{109f}\x{1780}-\x{17ff}\x{3040}-\x{30ff}\x{3400}-\x{4dbf}\x{4e00}-\x{9fff}\x{f900}-\x{faff}\x{20000}-\x{2fa1f}]+')
                  then list_transform(range(1, length(w)), i -> substr(w, i, 2))
                  else [w] end));

-- name: bm25_weight
-- (pipelines.db.load_fts: the query side scores with it.) A posting's BM25 weight as DuckDB's fts extension
-- computes it (k1 = 1.2, b = 0.75; log: base 10): a word held by df of n chunks, tf times in a chunk of n_terms
-- words, among chunks of average length avgdl.
create or replace temp macro bm25_weight(df, n, tf, n_terms, avgdl) as
    log((n - df + 0.5) / (df + 0.5) + 1) * (tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * n_terms / avgdl)));

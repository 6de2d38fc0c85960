-- acervo index schema: every table an assembler may read, with what each column means.
-- Ids are text and compared byte-wise (UTF-8); any character is allowed in them.
-- Tables whose rows a rerun deletes and writes in bulk (names, entity_aliases, chunk_folded, mentions,
-- edges, communities, community_members, community_reports, report_lines, written_reports, chunk_terms,
-- chunk_lengths, word_documents), and bookkeeping no query reads (chunk_state, title_names, document_words),
-- state their unique key in a comment, not as a primary key (tests/test_publish.py checks each): the stages
-- guarantee it, and a checkpoint after a rerun rewrites an indexed table's index and its last row group (which
-- new rows are appended to) whole, where it writes only the new rows of a table without. The tables queries
-- look rows up in by key keep theirs, and a few bulk tables carry lookup indexes (at the end of this file):
-- queries are faster with them, and publishing keeps the blocks a rerun's checkpoint frees for the next
-- rerun's (pipelines/publish.py, WASTE): docs/operations.md.

create table if not exists documents (
    doc_id       varchar primary key,  -- from the input (JSONL doc_id, or the file's relative path)
    title        varchar not null,     -- given title, first Markdown heading, or file name
    text         varchar not null,     -- the whole text, NFC with \n line ends (chunks cover it)
    scope        varchar,              -- access scope the document belongs to (null = public)
    metadata     json,                 -- the input's free-form metadata object
    source       varchar not null,     -- input file the document came from
    line         integer not null,     -- its line in that file (1 for a folder's file)
    record_hash  varchar,              -- sha256 of the JSONL line's bytes: an identical line is not
                                       -- parsed again (null for folder files and records with rejects)
    content_hash varchar not null,     -- sha256 of the normalised title and text
    n_tokens     integer not null,     -- sum of its chunks' tokens
    n_chunks     integer not null,     -- 0 until the chunks stage has split it
    chunk_ids    json                  -- its chunks' ids in order, a JSON array (null until split): direct
                                       -- context reads a document's citations with it, one row a document
                                       -- (JSON text, as a list column would make DuckDB rewrite whole rows)
);

create table if not exists document_entities (
    doc_id    varchar not null,        -- a document's given entity labels (mode `given`)
    label     varchar not null,
    entity_id varchar not null,
    primary key (doc_id, label)
);

create table if not exists rejected (
    source varchar not null,           -- file the bad record came from
    line   integer not null,           -- 1-based line in that file (0: the file as a whole)
    doc_id varchar,                    -- when it could be read
    reason varchar not null,           -- invalid_utf8, invalid_json, invalid_record, missing_text,
                                       -- empty_text, duplicate_doc_id, too_large, invalid_entity,
                                       -- unreadable (documents kept), link_outside_source
    detail varchar not null            -- what exactly was wrong, for a person
);

create table if not exists chunks (
    chunk_id     varchar primary key,  -- doc_id, '#', and 12 hex of the chunk's content id
    doc_id       varchar not null,
    ord          integer not null,     -- 0-based position in the document
    text         varchar not null,
    n_tokens     integer not null,     -- tiktoken count in the run's encoding
    content_hash varchar not null,     -- sha256 of the text (NFC, \n line ends, paragraphs stripped)
    locator      varchar               -- where in its document the chunk starts, for a citation: "page N" (a
                                       -- PDF), else the nearest heading above it (null: none)
);

create table if not exists entities (
    entity_id varchar primary key,     -- NFC, case-folded, whitespace-collapsed label
    label     varchar not null,        -- display name (most frequent spelling, then smallest)
    n_chunks  integer not null,        -- chunks that mention it
    degree    integer not null         -- edge rows from it (co-occurring entities kept)
);

create table if not exists entity_aliases (
    entity_id varchar not null,        -- names that find the entity in text (label included)
    alias     varchar not null,
    words     varchar                  -- the alias's folded tokens (pipelines.names.words) joined by U+001F:
);                                     -- what a question's words look names up by; unique: (entity_id, alias)

create table if not exists names (
    entity_id varchar not null,        -- the whole dictionary the mentions stage matched with
    name      varchar not null,        -- (gazetteer entries, titles, or given labels)
    weight    integer not null         -- the label is the name of highest weight, then the smallest
);                                     -- unique: (entity_id, name)

create table if not exists chunk_state (
    chunk_id     varchar not null,     -- what a chunk's mentions were computed from: the mode and
    mention_hash varchar not null      -- the chunk's own inputs (its document's entities or title)
);                                     -- unique: chunk_id

create table if not exists chunk_folded (
    chunk_id varchar not null,         -- modes gazetteer and titles: chunk text as name matching sees it
                                       -- (no accents, case-folded),
    folded   varchar not null          -- so that a changed name finds the chunks it may touch in SQL
);

create table if not exists title_names (
    title       varchar not null,      -- unique; mode titles: each document title, tokenised once (not every run)
    entity_id   varchar not null,      -- the entity the title names
    words       varchar not null,      -- its folded tokens (pipelines.names.words) joined by U+001F
    short       varchar not null,      -- the title without a trailing "(...)": its alias when unclaimed
    short_words varchar not null
);

create table if not exists chunk_candidates (
    chunk_id varchar primary key,      -- mode nlp: the entity candidates of each chunk's text and title
    title    varchar not null,         -- the document title they were found with
    names    struct(entity_id varchar, name varchar)[] not null,
    acronyms struct(acronym varchar, expansion varchar)[] not null,  -- entity ids, "Long Name (LN)"
    words    struct(word varchar, lower integer, mid integer, other integer)[] default [],
    mid_names varchar[] default []
);
-- words: how the chunk's text writes each word (pipelines.candidates.word_cases): in lower case,
-- capitalised in mid-sentence position, capitalised elsewhere (sentence or line start, heading).
-- mid_names: the entity ids of its candidates that the text writes at least once in mid-sentence position.

create table if not exists candidate_decisions (
    entity_id   varchar primary key,   -- modes nlp and spacy: every candidate of the corpus (entity id form)
    name        varchar not null,      -- its spelling found in most chunks, then the smallest
    kept        boolean not null,      -- whether it became an entity (or a name of one: reason 'variant')
    reason      varchar not null,      -- entity: kept; rare: in fewer than min_chunks chunks; frequent: in
                                       -- more than max_share of them; position: a one-word candidate the
                                       -- corpus writes in lower case more often than capitalised in
                                       -- mid-sentence (a common word capitalised by its place); opening: a
                                       -- longer one never written in mid-sentence whose first word is such
                                       -- a word ("Keeping America"); variant: an acronym or plural of
                                       -- `canonical`
    canonical   varchar,               -- reason variant: the entity it stands for
    n_chunks    integer not null,      -- chunks with the candidate (its variants counted for its entity)
    n_lower     integer not null,      -- how often the corpus writes the name's word (of a longer name: its
    n_mid       integer not null,      -- word with the least share in lower case; reason opening: its first
    n_other     integer not null,      -- word) in lower case, capitalised in mid-sentence, capitalised
                                       -- elsewhere (summed chunk_candidates.words)
    lowercase   boolean not null       -- whether a question that writes the name in lower case names it: it is
                                       -- no single capitalised word, and that word is one the corpus seldom
                                       -- writes in lower case
);

create table if not exists index_state (
    key   varchar primary key,         -- settings the stored rows were computed with, per stage; key format:
    value varchar not null             -- the file's index format (pipelines.db.FORMAT), written when it is made
);

create table if not exists mentions (
    entity_id varchar not null,
    chunk_id  varchar not null,
    windows   integer[] default []     -- the paragraphs or sentences of the chunk (0-based) that name the
                                       -- entity, with edge_window set; [] or null = the whole chunk
);                                     -- unique: (entity_id, chunk_id)

create table if not exists edges (
    src    varchar not null,           -- one row per direction of each co-occurring pair
                                       -- (only src's edge_top_k strongest when set)
    dst    varchar not null,
    weight integer not null,           -- chunks that mention both
    rank   integer not null            -- 1-based place of dst among src's neighbours:
                                       -- weight descending, then dst ascending
);                                     -- unique: (src, dst)

create table if not exists communities (
    community_id varchar not null,     -- unique; 'c<level>-' and 10 hex of the members it was born with
                                       -- (sorted); kept across runs by best member overlap
    level        integer not null,     -- 0 = whole graph; n+1 = a level-n community split again
    parent_id    varchar,              -- the level-(n-1) community it was split from
    title        varchar not null,     -- labels of its most central members
    weight       integer not null,     -- distinct chunks that mention a member
    n_members    integer not null,
    graph_hash   varchar not null      -- hash of the members and the edges among them
);

create table if not exists community_members (
    community_id varchar not null,
    entity_id    varchar not null,
    centrality   integer not null      -- 1 = most central (weighted degree inside the community)
);                                     -- unique: (community_id, entity_id)

create table if not exists chunk_sentences (
    chunk_id     varchar not null,
    doc_id       varchar not null,
    content_hash varchar not null,     -- the chunk's content_hash when its sentences were read
    sentences    varchar[] not null    -- a key per sentence (pipelines.boilerplate.key), in order
);                                     -- unique: chunk_id

create table if not exists chunk_boilerplate (
    chunk_id  varchar not null,        -- a chunk holding sentences that at least boilerplate_documents
    sentences varchar[] not null       -- documents write: their keys, sorted (boilerplate)
);                                     -- unique: chunk_id

create table if not exists entity_answers (
    entity_id    varchar primary key,
    answer       varchar not null,     -- one sentence, verbatim from the evidence chunk
    evidence_ref varchar not null,     -- chunk_id that contains the sentence and mentions the entity
    input_hash   varchar not null,     -- hash of exactly what the answer was chosen from
    evidence     varchar[]             -- the entity's best evidence chunks, best first (what a question reads)
);

create table if not exists entity_vectors (
    entity_id  varchar primary key,     -- only with an embedder configured (embed_url): see pipelines/vectors.py
    vector     float[] not null,        -- embedding of "label: short answer"
    input_hash varchar not null         -- hash of that text, the version and the model
);

create table if not exists chunk_vectors (
    chunk_id   varchar primary key,     -- only with an embedder configured: see pipelines/chunk_vectors.py
    vector     float[] not null,        -- embedding of the chunk's text (a passage, for the packaged model)
    input_hash varchar not null         -- hash of the chunk's content hash, the version and the model
);

create table if not exists community_reports (
    community_id  varchar not null,    -- unique
    report        varchar not null,    -- central members, key evidence sentences [chunk_id], one line per member
    evidence_refs varchar[] not null,  -- chunks mentioning most members, then chunk_id
    input_hash    varchar not null
);

create table if not exists report_lines (
    community_id varchar not null,     -- the report's lines as rows (what `report` renders)
    ord          integer not null,
    entity_id    varchar not null,
    text         varchar not null,
    evidence_ref varchar not null
);                                     -- unique: (community_id, ord)

create table if not exists written_reports (
    community_id varchar not null,     -- unique; only with a language model (llm_url, or a function passed
                                       -- in): see pipelines/written_reports.py
    report       varchar,              -- a written summary, each sentence followed by the chunks it cites:
                                       -- "Sentence one. [c1] [c2] Sentence two. [c3]"; null when the
                                       -- model's text failed verification (the extractive report stands)
    refs         varchar[] not null,   -- the chunk ids it cites, in order, each once and each one of inputs
    inputs       varchar[] not null,   -- the chunks its prompt drew on (the report's evidence_refs, then its
                                       -- lines' evidence_ref): a scoped caller sees the text only when it may
                                       -- read them all
    reason       varchar,              -- why the extractive report stands (e.g. "invented citation X");
                                       -- null when written
    input_hash   varchar not null      -- hash of the extractive report's input_hash, the model and the
                                       -- prompt's version
);

create table if not exists written_answers (
    entity_id  varchar primary key,    -- only with a language model: see pipelines/written_answers.py
    answer     varchar,                -- a written short answer, in the form of written_reports.report;
                                       -- null when the model's text failed verification (the extractive
                                       -- answer stands)
    refs       varchar[] not null,     -- the chunk ids it cites, in order, each once and each one of inputs
    inputs     varchar[] not null,     -- the chunks its prompt drew on: the answer's evidence_ref, then the
                                       -- chunks mentioning the entity that fewest entities share, then by id
    reason     varchar,                -- why the extractive answer stands; null when written
    input_hash varchar not null        -- hash of the extractive answer's input_hash, the entity's label, the
                                       -- model and the prompt's version
);

create table if not exists chunk_terms (
    term     varchar not null,         -- a word of the chunk as BM25 (DuckDB's fts) indexes it: accents
                                       -- stripped, lower case, not a stop word, stemmed (index_state terms_stemmer)
    chunk_id varchar not null,
    tf       integer not null,         -- how often the chunk uses it
    n_terms  integer not null,         -- the chunk's length in such words (BM25's document length)
    scope    varchar,                  -- the chunk's document's scope
    impact   smallint not null         -- BM25's term-frequency factor at a fixed reference length, in
                                       -- hundredths: the order a query reads a common word's postings in
);                                     -- unique: (term, chunk_id); written in order of term and impact
                                       -- descending, so that a query reads few blocks

create table if not exists term_postings (
    term       varchar not null,       -- a word as chunk_terms holds it
    df         integer not null,       -- how many chunks hold it
    postings   struct(chunk_id varchar, tf integer, n_terms integer, scope varchar, impact smallint)[] not null,
                                       -- its best postings, highest impact first (then by chunk id): down to the
                                       -- impact at which index_state term_postings's count is reached (ties
                                       -- kept), all of them for a word fewer chunks hold; what a question's
                                       -- BM25 ranks by, read as one row a word
    cutoff     smallint,               -- the lowest impact `postings` holds (every posting at or above it is there)
    n_postings integer                 -- how many postings `postings` holds (= df: all of them)
);                                     -- unique: term

create table if not exists chunk_lengths (
    chunk_id varchar not null,         -- every chunk, once its postings are in chunk_terms
    doc_id   varchar not null,
    scope    varchar,
    n_terms  integer not null          -- as chunk_terms.n_terms (0: stop words only)
);                                     -- unique: chunk_id

create table if not exists document_words (
    doc_id varchar not null,           -- the words of each document as the question router compares
    scope  varchar,                    -- them (pipelines/query/words.py: folded, first letters), distinct
    words  varchar[] not null
);                                     -- unique: doc_id

create table if not exists word_documents (
    word        varchar not null,      -- such a word, and how many documents of each scope use it
    scope       varchar,
    n_documents integer not null
);                                     -- unique: (word, scope)

create table if not exists index_runs (
    run_id      varchar primary key,
    started_at  timestamp not null,
    finished_at timestamp,
    status      varchar not null,      -- ok (a failed run publishes nothing, so leaves no row)
    source      varchar not null,
    settings    json not null,
    n_rejected  integer
);

create table if not exists run_stages (
    run_id     varchar not null,
    ord        integer not null,
    stage      varchar not null,
    rows_read       bigint not null,   -- input rows the stage looked at
    rows_reused     bigint not null,   -- output rows kept as they were
    rows_recomputed bigint not null,   -- output rows computed in this run
    rows_removed    bigint not null,   -- output rows deleted because their input is gone
    detail     json,                   -- stage-specific counts (communities kept/changed/born/gone)
    seconds    double not null,
    primary key (run_id, ord)
);

-- Indexes (ART) on the columns a query looks rows up by (sql/query.sql), so that a question reads only the
-- rows of its own keys (with query.lookups, also those a join hands to the scan it probes), not whole tables:
-- names a question's words find (entity_aliases.words), a walk's frontier (edges.src), the chunks of some
-- entities and the entities of some chunks (mentions), and a question's words' best postings (term_postings.term).
-- A document's chunks are listed in its row (documents.chunk_ids), so chunks.doc_id needs none.
-- Unlike a primary key they check nothing. A checkpoint after a rerun that deletes from their table writes
-- them whole again (kept as headroom, see above), and the file and a reader's memory grow by them (docs/operations.md).
create index if not exists entity_aliases_words on entity_aliases (words);
create index if not exists edges_src on edges (src);
create index if not exists mentions_entity on mentions (entity_id);
create index if not exists mentions_chunk on mentions (chunk_id);
create index if not exists term_postings_term on term_postings (term);

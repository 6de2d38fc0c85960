-- Statements of pipelines.stats: what `acervo stats` and a run summary report about an index.

-- name: tables
-- Row counts of every table of the index: `product` ones hold what the index is (what an assembler
-- or a person reads), `bookkeeping` ones what reruns compare against (no query reads them).
select 'product' as kind, 'documents' as table_name, count(*) as n_rows from documents
union all select 'product', 'document_entities', count(*) from document_entities
union all select 'product', 'chunks', count(*) from chunks
union all select 'product', 'entities', count(*) from entities
union all select 'product', 'entity_aliases', count(*) from entity_aliases
union all select 'product', 'mentions', count(*) from mentions
union all select 'product', 'edges', count(*) from edges
union all select 'product', 'communities', count(*) from communities
union all select 'product', 'community_members', count(*) from community_members
union all select 'product', 'community_reports', count(*) from community_reports
union all select 'product', 'report_lines', count(*) from report_lines
union all select 'product', 'entity_answers', count(*) from entity_answers
union all select 'product', 'entity_vectors', count(*) from entity_vectors
union all select 'product', 'chunk_vectors', count(*) from chunk_vectors
union all select 'product', 'written_reports', count(*) from written_reports
union all select 'product', 'written_answers', count(*) from written_answers
union all select 'product', 'rejected', count(*) from rejected
union all select 'product', 'candidate_decisions', count(*) from candidate_decisions
union all select 'product', 'chunk_terms', count(*) from chunk_terms
union all select 'product', 'term_postings', count(*) from term_postings
union all select 'product', 'chunk_lengths', count(*) from chunk_lengths
union all select 'product', 'word_documents', count(*) from word_documents
union all select 'product', 'chunk_sentences', count(*) from chunk_sentences
union all select 'product', 'chunk_boilerplate', count(*) from chunk_boilerplate
union all select 'product', 'index_runs', count(*) from index_runs
union all select 'product', 'run_stages', count(*) from run_stages
union all select 'bookkeeping', 'names', count(*) from names
union all select 'bookkeeping', 'chunk_state', count(*) from chunk_state
union all select 'bookkeeping', 'chunk_folded', count(*) from chunk_folded
union all select 'bookkeeping', 'title_names', count(*) from title_names
union all select 'bookkeeping', 'chunk_candidates', count(*) from chunk_candidates
union all select 'bookkeeping', 'document_words', count(*) from document_words
union all select 'bookkeeping', 'index_state', count(*) from index_state

-- name: levels
-- Communities per hierarchy level, with their sizes.
select level, count(*) as communities, min(n_members) as min_members, max(n_members) as max_members,
       round(avg(n_members), 2) as mean_members
from communities
group by level
order by level

-- name: largest
-- The $limit largest communities (members, then weight), with titles.
select community_id, level, title, n_members, weight
from communities
order by n_members desc, weight desc, community_id
limit $limit

-- name: rejected
-- Rejected records by file, line and reason, for reporting.
select source, line, doc_id, reason, detail
from rejected
order by source, line, reason, detail

-- name: settings
-- The settings of the index's last run (a failed run publishes nothing, so every row is a successful one).
select settings
from index_runs
where status = 'ok'
order by started_at desc, run_id desc
limit 1

-- name: documents_known
-- Which of the ids $ids (a list) name documents of the index.
select doc_id
from documents
where doc_id in (select unnest($ids::varchar[]))
order by doc_id

-- name: candidate_decisions
-- Modes nlp and spacy: the stored decisions (candidate_decisions) about the candidates $ids (entity ids),
-- or, with $ids null, about the $top candidates seen in most chunks; with $rejected, only those not kept.
select entity_id, name, kept, reason, canonical, n_chunks, n_lower, n_mid, n_other, lowercase
from candidate_decisions
where ($ids::varchar[] is null or list_contains($ids::varchar[], entity_id))
  and (not $rejected or not kept)
order by n_chunks desc, entity_id
limit $top;

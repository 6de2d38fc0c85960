-- Mode titles: into the scratch table document_names, the name each document's entity gets: its title,
-- or, when several documents share that title, the title with the document's id ("Title (doc_id)"): a
-- title shared by documents names none of them (as a short form two titles share names neither,
-- sql/names_titles.sql), so it never makes their chunks one entity. sql/scope_names.sql names them alike.
create or replace temp table document_names as
select doc_id, title,
       case when count(*) over (partition by title) > 1 then title || ' (' || doc_id || ')' else title end as name
from documents

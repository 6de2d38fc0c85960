-- Mode titles: the document names (sql/document_names.sql) not tokenised yet (new or retitled documents,
-- or a title that became shared or unshared), for pipelines.mentions to add to title_names.
select distinct name from document_names where name not in (select title from title_names) order by name

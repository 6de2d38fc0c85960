-- Mode titles: the titles not tokenised yet (new or retitled documents), for pipelines.mentions to
-- add to title_names.
select distinct title from documents where title not in (select title from title_names) order by title

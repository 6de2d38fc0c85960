-- Mode titles: the dictionary into names_next. Each title names its entity (weight 1); a title's
-- short form (without a trailing "(...)") is one more name (weight 0) when no other title has the
-- same short form and no title is spelled like it. No (entity_id, name) pair can come twice: titles
-- are unique, a short form differs from its own title and is spelled like no title, and one shared
-- by two titles is left out; so the rows need no grouping (which cost half the statement).
insert into names_next
with claims as (
    select short_words, count(*) as n
    from title_names
    group by short_words
)
select entity_id, title as name, 1 as weight, words
from title_names
union all
select t.entity_id, t.short, 0, t.short_words
from title_names t
join claims c using (short_words)
where t.short <> '' and t.short <> t.title and c.n = 1
  and t.short_words not in (select words from title_names)

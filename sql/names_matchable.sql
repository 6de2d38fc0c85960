-- The names that may occur in the chunks being matched (every name with $all, else those whose first
-- folded token is among the chunks' tokens, keys 'token'), each spelling with the smallest entity id
-- that has it.
select words, min(entity_id) as entity_id
from names_next
where words <> '' and ($all or split_part(words, chr(31), 1) in (select id from keys where kind = 'token'))
group by words
order by words

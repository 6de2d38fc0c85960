-- Documents whose record stands byte for byte at another line of the same source file: each range of
-- old lines [lo, hi] that moved by one offset ($shifts: column lists lo, hi, delta) moves in one row,
-- instead of one row per document (a deletion near the top moves every line after it).
update documents d
set line = d.line + s.delta
from (
    select unnest(x.lo) as lo, unnest(x.hi) as hi, unnest(x.delta) as delta
    from (select from_json(p, '{"lo": ["INTEGER"], "hi": ["INTEGER"], "delta": ["INTEGER"]}') as x
          from (select $shifts as p))
) s
where d.source = $source and d.line between s.lo and s.hi

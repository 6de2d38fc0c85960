"""The multi-pattern name matcher: every known name in a text at once, on token boundaries."""

from collections.abc import Callable, Iterable

from acervo.pipelines.names import words


class Matcher:
    """Finds every known name in a text at once: leftmost, longest, on token boundaries."""

    def __init__(self, names: Iterable[tuple[str, str]], *,
                 spell: Callable[[str], tuple[str, ...]] = words) -> None:
        """Index (name, entity_id) pairs; a name claimed by two entities goes to the smaller id.

        `spell` turns a name into its tokens (`words`, or a caller's cache of it).
        """
        self.names: dict[tuple[str, ...], str] = {}
        for name, eid in sorted(names, key=lambda pair: (pair[1], pair[0])):
            self.names.setdefault(spell(name), eid)
        self.names.pop((), None)
        lengths: dict[str, set[int]] = {}
        for key in self.names:
            lengths.setdefault(key[0], set()).add(len(key))
        self.lengths = {first: sorted(ls, reverse=True) for first, ls in lengths.items()}

    def find(self, text: str) -> set[str]:
        """Ids of the entities whose names occur in `text`."""
        return {eid for _, _, eid in self.spans(words(text))}

    def spans(self, tokens: tuple[str, ...]) -> list[tuple[int, int, str]]:
        """(first token, token count, entity id) of every name found in folded `tokens`; only the places whose
        token starts a name are tried, found by one comprehension rather than a step of the loop each."""
        lengths, names = self.lengths, self.names
        found, end = [], 0
        for i in [i for i, token in enumerate(tokens) if token in lengths]:
            if i < end:
                continue
            for length in lengths[tokens[i]]:
                eid = names.get(tokens[i : i + length])
                if eid is not None:
                    found.append((i, length, eid))
                    end = i + length
                    break
        return found

"""What the stages store that the query side reads back by its meaning: the form of a chunk id and stored counts;
here, so that the query side imports no stage module."""

EVIDENCE = 2  # evidence chunks stored per entity, best first: what a question reads of an entity
TITLE_MEMBERS = 3  # a community's title names this many of its most central members


def document_of(chunk_id: str) -> str:
    """The id of the document a chunk id names (chunk_id: the document's id, '#', 12 hex)."""
    return chunk_id.rpartition("#")[0]

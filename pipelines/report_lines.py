"""The line formats of community reports and their section headings (the reports stage, the query side, export)."""

MEMBERS = "Central members: "
EVIDENCE = "Key evidence:"
ANSWERS = "Members:"


def line(label: str, answer: str, ref: str) -> str:
    """One report line: a member, its short answer, and the chunk that supports it."""
    return f"- {label}: {' '.join(answer.split())} [{ref}]"


def evidence_line(sentence: str, ref: str) -> str:
    """One key evidence line: a sentence of a supporting chunk, cited."""
    return f"- {' '.join(sentence.split())} [{ref}]"

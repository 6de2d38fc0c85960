"""Mentions mode spacy: mode nlp with the candidates an installed spaCy pipeline finds."""

from dataclasses import replace

from acervo.pipelines.candidates import spacy_extractor
from acervo.pipelines.mentions import nlp
from acervo.pipelines.mentions.shared import Extractor, Options


def _extractor(options: Options) -> Extractor:
    """The installed spaCy pipeline `options.spacy_model`, loaded only when some chunk needs extracting."""
    return Extractor(f"spacy:{options.spacy_model}", lambda: spacy_extractor(options.spacy_model))


MODE = replace(nlp.MODE, extractor=_extractor)

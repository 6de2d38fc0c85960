"""`python -m acervo.flows` is the `acervo` command."""

import sys

from acervo.flows.cli import main

sys.exit(main())

"""`python -m flows` is the `acervo` command."""

import sys

from flows.cli import main

sys.exit(main())

import sys

from lsp_server.cli import main

sys.exit(main())

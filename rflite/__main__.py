import sys

from rflite.cli import main

sys.exit(main())

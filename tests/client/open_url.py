"""What `BROWSER` runs in the tests (Python's webbrowser honours it): the address the
program opens is appended to the file `OPENED_URLS` names, where the test picks it up
and drives Chromium there."""

import os
import sys

with open(os.environ["OPENED_URLS"], "a") as opened:
    opened.write(sys.argv[1] + "\n")

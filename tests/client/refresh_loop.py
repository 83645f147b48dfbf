"""One of two processes spending one stored sign-in's refresh tokens at once: waits for
the start file, then asks a hundred times for the token it holds to be replaced; prints
how many refresh tokens it spent itself (the others' answers it took from the store)."""

import sys
import time
from pathlib import Path

from courseschool_client import CourseSchool

base_url, start = sys.argv[1], Path(sys.argv[2])
session = CourseSchool.stored(base_url, storage="file")
while not start.exists():
    time.sleep(0.01)
spent = sum(session.refresh(stale=session.record.access_token) for _ in range(100))
print(spent)

"""The person's browser, played: GET the sign-in URL (argv[1]) and follow its redirect to
bingo's loopback listener, as a browser does when the person approves."""

import sys
import urllib.request

with urllib.request.urlopen(sys.argv[1], timeout=20) as answer:
    answer.read()

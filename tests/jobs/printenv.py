#!/usr/bin/python3
"""printenv.py DIR: write this process's environment to DIR/env.RANK.json
(for t65-pytorch-ranks.sh, under torchrun and under spotrun alike)."""
import json
import os
import sys

with open(os.path.join(sys.argv[1], "env.%s.json" % os.environ.get("RANK", "x")), "w") as f:
    json.dump(dict(os.environ), f)

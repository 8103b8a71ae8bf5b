import os

# Chapters executed by nbval are batch runs: explorers draw their static figure only (see markovlib.widgets).
os.environ["MARKOVLIB_BATCH"] = "1"
os.environ.setdefault("MPLBACKEND", "Agg")

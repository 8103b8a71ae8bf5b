import os

# Chapters executed by nbval are batch runs: explorers draw their static figure only (see markovlib.widgets).
# (Do not set MPLBACKEND here: the nbval kernels inherit it, and a non-inline backend drops every figure output.)
os.environ["MARKOVLIB_BATCH"] = "1"

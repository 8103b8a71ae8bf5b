"""Summarize a pytest junit XML by stage: unit tests, chapters under nbval, browser test (seconds each)."""
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict


def stage(case) -> str:
    name = case.get("classname", "") + "." + case.get("name", "")
    if "test_browser" in name:
        return "browser test"
    if ".ipynb" in case.get("file", "") or "ipynb" in name or name.startswith("book."):
        return "nbval: " + (case.get("file") or case.get("classname")).split("/")[-1]
    return "unit tests"


totals = defaultdict(float)
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    totals[stage(case)] += float(case.get("time", 0))
print("== [ci] pytest time by stage")
for key in sorted(totals, key=lambda k: (not k.startswith("unit"), k)):
    print(f"   {key:<40} {totals[key]:7.1f} s")

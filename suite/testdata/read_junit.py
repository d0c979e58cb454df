"""Reads a JUnit file with junitparser, the library CI annotation actions
use, and prints what it understood as JSON: each testcase's name,
classname, file, result kinds and properties."""

import json
import sys

from junitparser import Attr, JUnitXml, Properties, TestCase


class FileCase(TestCase):
    # junitparser reads extra attributes a subclass declares.
    file = Attr()


cases = []
xml = JUnitXml.fromfile(sys.argv[1])
for suite in xml:
    for case in suite:
        case = FileCase.fromelem(case)
        props = case.child(Properties)
        cases.append({
            "suite": suite.name,
            "name": case.name,
            "classname": case.classname,
            "file": case.file,
            "results": [type(r).__name__ for r in case.result],
            "properties": {p.name: p.value for p in props} if props is not None else {},
        })
json.dump({"tests": xml.tests, "failures": xml.failures, "errors": xml.errors,
           "skipped": xml.skipped, "cases": cases}, sys.stdout)

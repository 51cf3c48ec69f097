"""The package list, found rather than written by hand.

The repository keeps its three parts at the top level (`daemon/`, `client/`,
`schemas/`) and installs them under one import name, `editjournal`. pyproject's
`packages.find` cannot prefix what it finds, so this file finds each part's
subpackages and names them under `editjournal.`: a new subpackage ships without
anyone remembering to list it (a hand list once left the fleet out of the wheel).
Everything else about the distribution is in pyproject.toml.
"""

from setuptools import find_packages, setup

PARTS = ("daemon", "client", "schemas")

packages = ["editjournal"] + [
    f"editjournal.{name}" for name in find_packages(include=[f"{part}*" for part in PARTS])
]

setup(
    packages=packages,
    package_dir={"editjournal": "editjournal", **{f"editjournal.{p}": p for p in PARTS}},
)

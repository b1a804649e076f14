"""tests/distributed: several devices and processes (issue 16); ``scripts/`` are run by the tests, not imported."""

collect_ignore = ["scripts"]

"""Shared pytest configuration."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "simgrid: needs SimGrid 3.32's Python bindings under /usr/bin/python3 (skipped otherwise)")

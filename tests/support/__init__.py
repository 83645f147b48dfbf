"""Helpers that the tests of every tier and the bench share: servers, databases, the
production topology, an OAuth client over HTTP, free ports. No test lives here, and
the bench imports this package only, never a test module."""

"""All three services in one process behind a path router: the embedded default."""

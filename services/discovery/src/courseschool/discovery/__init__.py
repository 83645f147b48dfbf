"""Discovery: the well-known documents, served from the other services' metadata."""

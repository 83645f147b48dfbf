"""One module per `grant_type` (RFC 6749 §4)."""

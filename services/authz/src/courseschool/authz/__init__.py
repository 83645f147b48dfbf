"""The OAuth 2.0 / OpenID Connect authorization server of the course-school platform."""

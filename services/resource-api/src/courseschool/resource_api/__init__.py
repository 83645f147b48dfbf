"""The protected course-school API (`/api/v1`)."""

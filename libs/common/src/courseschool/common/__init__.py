"""Code shared by the three course-school services. Nothing service-specific lives here."""

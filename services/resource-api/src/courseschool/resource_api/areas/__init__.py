"""The course-school resource areas, declared as data over one generic mechanism."""

"""The HTTP layer of the resource API: routes generated from the area declarations."""

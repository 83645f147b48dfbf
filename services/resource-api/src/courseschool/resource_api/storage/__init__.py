"""PostgreSQL stores of the resource API: plain SQL next to its mapping."""

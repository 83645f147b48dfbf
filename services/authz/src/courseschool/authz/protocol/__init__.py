"""Protocol rules. Nothing here imports a web framework or a database driver: the
functions take parsed Structs and small ports (see `ports.py`)."""

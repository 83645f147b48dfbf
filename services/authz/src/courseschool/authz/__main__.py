"""`python -m courseschool.authz migrate|serve`."""

import sys
from pathlib import Path

from courseschool.common.cli import service_main

from .settings import AuthzSettings
from .web.app import create_app

MIGRATIONS = Path(__file__).parent / "migrations"

if __name__ == "__main__":
    sys.exit(service_main(
        service="authz", settings_cls=AuthzSettings, create_app=create_app, migrations=MIGRATIONS, default_port=8001,
    ))

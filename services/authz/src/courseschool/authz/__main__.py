"""`python -m courseschool.authz migrate|serve|admin`."""

import sys

from courseschool.common.cli import service_main

from .app import MIGRATIONS, create_app
from .settings import AuthzSettings

if __name__ == "__main__":
    if sys.argv[1:2] == ["admin"]:
        from . import admin_cli

        sys.exit(admin_cli.main(sys.argv[2:]))
    sys.exit(
        service_main(
            service="authz",
            settings_cls=AuthzSettings,
            create_app=create_app,
            migrations=MIGRATIONS,
            default_port=8001,
        )
    )

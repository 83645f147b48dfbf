"""`python -m courseschool.authz migrate|serve|admin`."""

import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["admin"]:
        # The admin CLI builds no web app: it imports none of the web layer (a command
        # starts in about half the time).
        from . import admin_cli

        sys.exit(admin_cli.main(sys.argv[2:]))

    from courseschool.common.cli import service_main

    from .app import MIGRATIONS, create_app
    from .settings import AuthzSettings

    sys.exit(
        service_main(
            service="authz",
            settings_cls=AuthzSettings,
            create_app=create_app,
            migrations=MIGRATIONS,
            default_port=8001,
        )
    )

"""`python -m courseschool.resource_api migrate|serve`."""

import sys

from courseschool.common.cli import service_main

from .app import MIGRATIONS, create_app
from .settings import ResourceSettings

if __name__ == "__main__":
    sys.exit(
        service_main(
            service="resource_api",
            settings_cls=ResourceSettings,
            create_app=create_app,
            migrations=MIGRATIONS,
            default_port=8002,
        )
    )

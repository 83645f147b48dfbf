"""`python -m courseschool.discovery serve`."""

import sys

from courseschool.common.cli import service_main

from .app import create_app
from .settings import DiscoverySettings

if __name__ == "__main__":
    sys.exit(
        service_main(
            service="discovery",
            settings_cls=DiscoverySettings,
            create_app=create_app,
            migrations=None,
            default_port=8003,
        )
    )

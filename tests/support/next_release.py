"""The next release, for the rolling-upgrade tests: a service's code as it is, whose
migrations are its own followed by those of a folder of the test's own (a release that
adds one). Its command line is the service's (`migrate`, `serve`):

    python tests/support/next_release.py FOLDER authz serve --host 127.0.0.1 --port 8101
    python tests/support/next_release.py FOLDER authz migrate

Only the migrations differ from `python -m courseschool.authz ...`: the same settings,
the same app, the same readiness check (common/schema.py), which now knows one more."""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path


def main(argv: list[str]) -> int:
    from courseschool.common.cli import service_main

    folder, service, *rest = argv
    if service == "authz":
        from courseschool.authz.app import MIGRATIONS, create_app
        from courseschool.authz.settings import AuthzSettings as Settings

        port = 8001
    elif service == "resource_api":
        from courseschool.resource_api.app import MIGRATIONS, create_app  # type: ignore[assignment]
        from courseschool.resource_api.settings import ResourceSettings as Settings  # type: ignore[assignment]

        port = 8002
    else:
        raise SystemExit(f"next_release: no migrations for {service!r}")
    migrations = (MIGRATIONS, Path(folder))
    return service_main(
        service=service,
        settings_cls=Settings,
        create_app=partial(create_app, migrations=migrations),
        migrations=migrations,
        default_port=port,
        argv=rest,
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

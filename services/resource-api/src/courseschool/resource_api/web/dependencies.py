"""What handlers are given by Litestar's dependency injection, by parameter name: each
one piece of the `Components` the app built at start-up (`app.state.resource_api`),
the app's clock, and the guarded caller (`principal`, web/principal.py). A handler names
what it uses; none is handed the whole."""

from __future__ import annotations

from typing import Any

from litestar.datastructures import State
from litestar.di import Provide

from courseschool.common.clock import Clock

from .principal import provide_principal

# parameter name -> the attribute of `Components` it is given
PIECES = ("settings", "resources", "singletons", "activity_store")


def _piece(name: str) -> Provide:
    def provide(state: State) -> Any:
        return getattr(state.resource_api, name)

    return Provide(provide, sync_to_thread=False)


def dependencies(clock: Clock) -> dict[str, Provide]:
    return {
        **{name: _piece(name) for name in PIECES},
        "principal": Provide(provide_principal),
        "clock": Provide(lambda: clock, use_cache=True, sync_to_thread=False),
    }

"""The framework ceiling: a bare endpoint on the same server stack (Litestar on
uvicorn), so every other figure can be read as a share of what the stack allows."""

from litestar import Litestar, Response, get


@get("/ceiling", sync_to_thread=False)
def ceiling() -> Response[bytes]:
    return Response(b'{"ok":true}', media_type="application/json")


app = Litestar(route_handlers=[ceiling], logging_config=None)

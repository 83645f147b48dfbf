"""The framework ceiling: a bare Litestar endpoint, served by the same server and
options as the platform in the same run (granian unless `--server uvicorn`;
stack.py's `server_command`), with none of the platform's middleware or logging, so
every other figure can be read as a share of what the stack allows."""

from litestar import Litestar, Response, get


@get("/ceiling", sync_to_thread=False)
def ceiling() -> Response[bytes]:
    return Response(b'{"ok":true}', media_type="application/json")


app = Litestar(route_handlers=[ceiling], logging_config=None)

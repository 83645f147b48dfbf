"""Route handlers for every area, made from its `AreaSpec` by one factory per kind.
Each handler reads its input, calls `ResourceService`, and renders JSON."""

from typing import Any

import msgspec
from litestar import Request, Response, delete, get, patch, post
from litestar.datastructures import UploadFile
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import FromPath

from courseschool.common.errors import InvalidRequestError, NotFoundError, OAuthError
from courseschool.common.errors import PayloadTooLargeError, UnsupportedMediaTypeError

from ..areas.registry import AREA_SPECS, AreaSpec
from ..files import UploadRefused, check_upload, safe_filename
from ..service import ResourceService

API = "/api/v1"
Service = NamedDependency[ResourceService]


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response[bytes]:
    return Response(msgspec.json.encode(body), status_code=status, media_type="application/json", headers=headers)


def _query(request: Request) -> dict[str, str]:
    query = {k: v for k, v in request.query_params.items() if isinstance(v, str)}
    if any("\x00" in k or "\x00" in v for k, v in query.items()):
        raise InvalidRequestError("parameters must not contain NUL characters")
    return query


def _opt(spec: AreaSpec, scope: str | None, public: bool = False) -> dict[str, Any]:
    """What the OpenAPI generator needs to know about an operation."""
    return {"area": spec.name, "scope": scope, "public": public}


def collection_routes(spec: AreaSpec) -> list[HTTPRouteHandler]:
    base = f"{API}/{spec.path}"
    item_path = base + "/{item_id:str}"
    tags = [spec.path]

    @get(base, name=f"{spec.name}-list", operation_id=f"list_{spec.name}", tags=tags,
         opt=_opt(spec, spec.read_scope, spec.public), summary=f"List {spec.path}", description=spec.description)
    async def list_items(request: Request, resources: Service) -> Response[bytes]:
        principal = await resources.principal(request.headers.get("authorization"))
        page = await resources.list(spec, principal, _query(request))
        return _json(page)

    @get(item_path, name=f"{spec.name}-get", operation_id=f"get_{spec.name}", tags=tags,
         opt=_opt(spec, spec.read_scope, spec.public), summary=f"Get one of {spec.path}")
    async def get_item(item_id: FromPath[str], request: Request, resources: Service) -> Response[bytes]:
        principal = await resources.principal(request.headers.get("authorization"))
        return _json(await resources.get(spec, principal, item_id))

    handlers: list[HTTPRouteHandler] = [list_items, get_item]
    if not spec.writable:
        return handlers

    @post(base, name=f"{spec.name}-create", operation_id=f"create_{spec.name}", tags=tags, status_code=201,
          opt=_opt(spec, spec.write_scope), summary=f"Create one of {spec.path}")
    async def create_item(request: Request, resources: Service) -> Response[bytes]:
        principal = await resources.principal(request.headers.get("authorization"))
        item = await resources.create(spec, principal, await request.body())
        return _json(item, 201, {"Location": f"{base}/{item['id']}"})

    @patch(item_path, name=f"{spec.name}-update", operation_id=f"update_{spec.name}", tags=tags,
           opt=_opt(spec, spec.write_scope), summary=f"Change one of {spec.path}")
    async def update_item(item_id: FromPath[str], request: Request, resources: Service) -> Response[bytes]:
        principal = await resources.principal(request.headers.get("authorization"))
        return _json(await resources.update(spec, principal, item_id, await request.body()))

    @delete(item_path, name=f"{spec.name}-delete", operation_id=f"delete_{spec.name}", tags=tags, status_code=204,
            opt=_opt(spec, spec.write_scope), summary=f"Delete one of {spec.path}")
    async def delete_item(item_id: FromPath[str], request: Request, resources: Service) -> None:
        principal = await resources.principal(request.headers.get("authorization"))
        await resources.delete(spec, principal, item_id)

    return [*handlers, create_item, update_item, delete_item]


def singleton_routes(spec: AreaSpec) -> list[HTTPRouteHandler]:
    path = f"{API}/{spec.path}"
    tags = [spec.path]

    @get(path, name=f"{spec.name}-get", operation_id=f"get_{spec.name}", tags=tags,
         opt=_opt(spec, spec.read_scope), summary=f"Get the {spec.path}", description=spec.description)
    async def get_one(request: Request, resources: Service) -> Response[bytes]:
        principal = await resources.principal(request.headers.get("authorization"))
        return _json(await resources.get_singleton(spec, principal))

    @patch(path, name=f"{spec.name}-update", operation_id=f"update_{spec.name}", tags=tags,
           opt=_opt(spec, spec.write_scope), summary=f"Change the {spec.path}")
    async def update_one(request: Request, resources: Service) -> Response[bytes]:
        principal = await resources.principal(request.headers.get("authorization"))
        return _json(await resources.update_singleton(spec, principal, await request.body()))

    return [get_one, update_one] if spec.writable else [get_one]


def analytics_routes(spec: AreaSpec) -> list[HTTPRouteHandler]:
    @get(f"{API}/{spec.path}", name=f"{spec.name}-get", operation_id=f"get_{spec.name}", tags=[spec.path],
         opt=_opt(spec, spec.read_scope), summary="Figures of the school over a period", description=spec.description)
    async def figures(request: Request, resources: Service) -> Response[bytes]:
        principal = await resources.principal(request.headers.get("authorization"))
        return _json(await resources.analytics(spec, principal, _query(request)))

    return [figures]


def upload_routes(spec: AreaSpec) -> list[HTTPRouteHandler]:
    path = f"{API}/{spec.path}"

    @post(path, name=f"{spec.name}-upload", operation_id="upload_file", tags=[spec.path], status_code=201,
          opt=_opt(spec, spec.write_scope), summary="Upload a file (multipart/form-data, field 'file')")
    async def upload(request: Request, resources: Service) -> Response[bytes]:
        principal = await resources.principal(request.headers.get("authorization"))
        school_id = resources.require(principal, spec.write_scope)
        if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
            raise UnsupportedMediaTypeError("send the file as multipart/form-data in a field named 'file'")
        form = await request.form()
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InvalidRequestError("send the file in a multipart field named 'file'")
        content = await upload.read()
        try:
            kind = check_upload(upload.content_type, content, resources.settings.upload_max_bytes)
        except UploadRefused as exc:
            raise _refusal(exc) from None
        saved = await resources.files.save(school_id, safe_filename(upload.filename), kind, content)
        url = f"{resources.settings.base_url}{path}/{saved['id']}"
        return _json({**saved, "url": url}, 201, {"Location": url})

    @get(path + "/{file_id:str}", name=f"{spec.name}-download", operation_id="download_file", tags=[spec.path],
         opt=_opt(spec, None, True), summary="Download an uploaded file by its stable URL")
    async def download(file_id: FromPath[str], resources: Service) -> Response[bytes]:
        row = await resources.files.get(file_id)
        if row is None:
            raise NotFoundError("no such file")
        inline = row["content_type"].startswith("image/")
        return Response(
            row["content"], media_type=row["content_type"],
            headers={
                "Cache-Control": "public, max-age=31536000, immutable",
                "ETag": '"' + row["sha256"].hex()[:32] + '"',
                "Content-Disposition": f'{"inline" if inline else "attachment"}; filename="{row["filename"]}"',
                "X-Content-Type-Options": "nosniff",
                "Content-Security-Policy": "default-src 'none'; sandbox",
            },
        )

    return [upload, download]


def _refusal(exc: UploadRefused) -> OAuthError:
    if exc.status == 413:
        return PayloadTooLargeError(str(exc))
    if exc.status == 415:
        return UnsupportedMediaTypeError(str(exc))
    return InvalidRequestError(str(exc))


FACTORIES = {
    "collection": collection_routes,
    "singleton": singleton_routes,
    "computed": analytics_routes,
    "upload": upload_routes,
}


def all_routes() -> list[HTTPRouteHandler]:
    return [handler for spec in AREA_SPECS for handler in FACTORIES[spec.kind](spec)]

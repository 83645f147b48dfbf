"""The HTTP layer of the authorization server: one module per endpoint, named as its use
case in `endpoints/` where it has one (parse the request, call the use case, render the
answer), the admin and internal routers with their guards, and what the pages share
(templates, CSRF tokens of forms, scopes and activity in words)."""

"""Every change to a person's account or a school's rules (a POST under /oauth/account,
/oauth/security or /oauth/school, and the set-up page of an authenticator app, which makes its secret) carries the one
recent-sign-in guard (web/recent_sign_in.py). The guard is declared on each route: this
walk of the app's routes fails for a change route added without it (passkeys, say).
The confirmation page itself, where the password is entered again, is the one exception."""

from __future__ import annotations

from courseschool.authz.web.recent_sign_in import recent_sign_in

from .test_internal_routes_are_guarded import _app, walk

PREFIXES = ("/oauth/account", "/oauth/security", "/oauth/school")
EXEMPT = {("POST", "/oauth/account/confirm")}
GUARDED_PAGES = {("GET", "/oauth/security/totp"), ("GET", "/oauth/security/confirm")}


def test_every_change_of_an_account_needs_a_recent_sign_in() -> None:
    changes, missing = [], []
    for path, handler in walk(_app()):
        if not path.startswith(PREFIXES):
            continue
        for method in getattr(handler, "http_methods", None) or []:
            if (method == "POST" and (method, path) not in EXEMPT) or (method, path) in GUARDED_PAGES:
                changes.append((method, path))
                guards = [g for layer in handler.ownership_layers for g in (layer.guards or [])]
                if recent_sign_in not in guards:
                    missing.append(f"{method} {path}")
    assert len(changes) >= 7, changes  # the walk sees them: password, sign-out-others, TOTP, codes...
    assert missing == []

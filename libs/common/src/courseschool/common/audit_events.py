"""The catalogue of audit events: every name `logging.audit` may be given, with its kind,
whether the operator's webhook sends it, whether an anonymous caller's can be only
counted, and what it means. `audit()` is typed to `AuditEvent`, so mypy refuses a name
missing here; the authorization server's recorder (authz/events.py) and event store
(storage/events.py) take their sets from this table, and docs/events.md lists it
(tests/unit/test_audit_events_catalogue.py checks that the two agree).

Kinds: `security` (what must be looked at to see an attack or a weakened protection:
failures, reuse, lockouts, changes to a person's credentials and second factors, to
clients, to a school's rules and blocks), `admin` (an administrator's decision: the
platform's, or a school steward's about one app) and `user` (what people and apps do).
The kind here is the one an event is recorded with when caused as usual: whoever its
actor, a security event stays one; an administrator's (actor `admin` or `admin-cli`)
event is `admin`; a grant ended for a security reason is `security` (authz/events.py,
`kind_of`). The webhook sends every security event and, besides, the ones marked so here
(new connections).
"""

from __future__ import annotations

from typing import Final, Literal, get_args

import msgspec

Kind = Literal["user", "security", "admin"]


class Event(msgspec.Struct, frozen=True):
    kind: Kind
    meaning: str
    webhook: bool = False  # sent to the operator's webhook (every security event is)
    anonymous: bool = False  # concerning no one (no subject): counted in /metrics, neither kept nor sent


def _security(meaning: str, *, anonymous: bool = False) -> Event:
    return Event("security", meaning, webhook=True, anonymous=anonymous)


def _user(meaning: str, *, webhook: bool = False, anonymous: bool = False) -> Event:
    return Event("user", meaning, webhook=webhook, anonymous=anonymous)


def _admin(meaning: str) -> Event:
    return Event("admin", meaning)


AuditEvent = Literal[
    "access_token_revoked",
    "account_locked",
    "app_access_declined",
    "app_access_requested",
    "app_approval_withdrawn",
    "app_approved",
    "app_block_refused",
    "app_blocked",
    "app_removed_by_user",
    "app_unblock_refused",
    "app_unblocked",
    "client_deleted",
    "client_disabled",
    "client_metadata_fetched",
    "client_metadata_refused",
    "client_registered",
    "client_updated",
    "code_reused",
    "consent_blocked",
    "consent_denied",
    "consent_given",
    "consent_not_approved",
    "consent_remembered",
    "domain_trusted",
    "domain_untrusted",
    "grant_removed_by_user",
    "grant_revoked",
    "grant_revoked_by_admin",
    "grants_removed_by_user",
    "integration_created",
    "invitation_accepted",
    "login_failed",
    "login_locked",
    "login_password_accepted",
    "login_succeeded",
    "logout",
    "passkey_refused",
    "passkey_renamed",
    "password_changed",
    "password_reset",
    "password_reset_by_link",
    "password_reset_requested",
    "recovery_code_used",
    "recovery_codes_renewed",
    "refresh_reused",
    "revocation_refused",
    "school_access_end_refused",
    "school_access_ended",
    "school_app_policy_changed",
    "school_created",
    "second_factor_added",
    "second_factor_failed",
    "second_factor_removed",
    "second_factors_reset",
    "sign_in_confirmation_failed",
    "sign_in_confirmed",
    "signed_out_elsewhere",
    "signing_key_rotation",
    "step_up",
    "two_step_required",
    "unused_clients_removed",
    "user_created",
    "user_disabled",
    "user_enabled",
    "user_invited",
    "user_invite_refused",
    "user_role_set",
]

CATALOGUE: Final[dict[str, Event]] = {
    # Signing in and out
    "login_succeeded": _user("a person signed in (`factor`: password, password+totp, passkey, email_link...)"),
    "login_password_accepted": _user("the password was right; a second step follows (`next`: code or enrol)"),
    "login_failed": _security("a sign-in failed (a wrong password or passkey, or no such account)", anonymous=True),
    "login_locked": _security("a sign-in refused by a rate limit (`rule`, `retry_after`)", anonymous=True),
    "account_locked": _security("an account locked after too many failed sign-ins (`rule`)"),
    "second_factor_failed": _security("a wrong second step (code, recovery code or passkey)"),
    "recovery_code_used": _security("a recovery code spent on the second step (`left`)"),
    "logout": _user("a person signed out"),
    "sign_in_confirmed": _user("a person confirmed their sign-in before a change to their account"),
    "sign_in_confirmation_failed": _security("a wrong password or code when confirming a sign-in"),
    # A person's account and its factors
    "password_changed": _security("a person changed their password (their other sessions ended)"),
    "signed_out_elsewhere": _security("a person ended their other sessions"),
    "password_reset_requested": _security("a reset link asked for (`known`: whether the address has an account)"),
    "password_reset_by_link": _security("a new password chosen through a reset link (sessions and grants ended)"),
    "invitation_accepted": _user("an invited person chose their password through the invitation's link"),
    "second_factor_added": _security("a second factor added (`factor`: totp or passkey)"),
    "second_factor_removed": _security("a second factor removed (`factor`: totp or passkey)"),
    "recovery_codes_renewed": _security("a person's recovery codes replaced by new ones"),
    "passkey_renamed": _user("a person renamed one of their passkeys"),
    "passkey_refused": _user("a passkey's registration refused (`reason`)"),
    # Consents and grants
    "consent_given": _user("a person approved an app's request: a new connection", webhook=True),
    "consent_remembered": _user("a request approved by a consent given before: a new connection", webhook=True),
    "consent_denied": _user("a person denied an app's request"),
    "consent_not_approved": _user("a request refused: the school lets only approved apps in"),
    "consent_blocked": _user("a request refused: the school blocked the app"),
    "step_up": _user("a person granted an app more scopes than before (`added`)"),
    "grant_revoked": _user("a grant ended (`reason`; security when reuse, a reset, a role change or a disabling)"),
    "grant_removed_by_user": _user("a person ended one grant on their apps page"),
    "app_removed_by_user": _user("a person removed an app and its grants on their apps page"),
    "grants_removed_by_user": _user("a person ended all their grants"),
    "access_token_revoked": _user("a client revoked one access token (RFC 7009)"),
    "code_reused": _security("an authorization code presented twice: its grant ended"),
    "refresh_reused": _security("a rotated-out refresh token presented again: its grant ended"),
    "revocation_refused": _security("a client tried to revoke another client's token"),
    # Clients
    "client_registered": _security("a client registered itself (RFC 7591)"),
    "client_updated": _security("a client changed its registration (RFC 7592)"),
    "client_deleted": _security("a client deleted, by itself or an administrator (`grants_ended`)"),
    "client_metadata_fetched": _user("a client's metadata document fetched", anonymous=True),
    "client_metadata_refused": _security("a client's metadata document unusable (`reason`)", anonymous=True),
    "unused_clients_removed": _user("housekeeping removed clients registered and never used (`count`)"),
    # A school's stewards (its owners and admins) and their people. A steward's change to
    # the school's rule for everyone (the app policy, the two-step rule) or to the school's
    # block of an app, either way, is security; a decision about one app within the rule
    # (approving, withdrawing, declining a request, ending access) is admin, as a platform
    # administrator's decisions about a client are.
    "app_access_requested": _user("a person asked the school's stewards to approve an app"),
    "school_app_policy_changed": _security("a steward changed the school's app policy (`policy`, `before`)"),
    "app_approved": _admin("a steward approved an app for the school"),
    "app_approval_withdrawn": _admin("a steward withdrew an app's approval"),
    "app_access_declined": _admin("a steward declined a person's request for an app"),
    "school_access_ended": _admin("a steward ended an app's grants at the school (or one person's)"),
    "app_blocked": _security("a steward blocked an app at the school (its grants there ended)"),
    "app_unblocked": _security("a steward unblocked an app at the school"),
    "app_block_refused": _security("an admin's block of an app an owner holds access to or approved, refused"),
    "school_access_end_refused": _security("an admin's attempt to undo an owner's decision, refused"),
    "app_unblock_refused": _security("an admin's attempt to unblock an app an owner blocked, refused"),
    "two_step_required": _security("a steward changed who must sign in in two steps (`rule`, `before`)"),
    # The platform's administrators (API and admin CLI)
    "school_created": _admin("a school created"),
    "user_created": _admin("an account created (`role`, `school`)"),
    "user_invited": _admin("a person invited by e-mail (`role`, `school`, `again`)"),
    "user_invite_refused": _admin("an owner's invitation of an address in use at another school: nothing sent"),
    "user_role_set": _admin("a person's role changed (`role`, `previous_role`; their grants ended)"),
    "user_disabled": _admin("an account disabled (its grants ended)"),
    "user_enabled": _admin("an account enabled again"),
    "password_reset": _admin("an administrator reset a person's password (sessions and grants ended)"),
    "second_factors_reset": _security("an administrator removed a person's second factors"),
    "integration_created": _admin("a client created by an administrator"),
    "client_disabled": _admin("a client disabled (its grants ended)"),
    "grant_revoked_by_admin": _admin("an administrator ended one grant"),
    "domain_trusted": _admin("a domain trusted for metadata-document clients"),
    "domain_untrusted": _admin("a domain no longer trusted"),
    "signing_key_rotation": _admin("a signing key rotated (`alg`, `immediate`)"),
}


def _checked() -> None:
    """The type and the table name the same events, and every security event is sent."""
    typed, listed = set(get_args(AuditEvent)), set(CATALOGUE)
    if typed != listed:
        raise RuntimeError(f"AuditEvent and CATALOGUE differ: {sorted(typed ^ listed)}")
    unsent = [name for name, e in CATALOGUE.items() if e.kind == "security" and not e.webhook]
    if unsent:
        raise RuntimeError(f"security events the webhook would not send: {unsent}")


_checked()

SECURITY_EVENTS: Final = frozenset(name for name, e in CATALOGUE.items() if e.kind == "security")
# What the webhook sends besides security events (new connections).
WEBHOOK_EVENTS: Final = tuple(name for name, e in CATALOGUE.items() if e.webhook and e.kind != "security")
ANONYMOUS_NOISE: Final = frozenset(name for name, e in CATALOGUE.items() if e.anonymous)


def kind_of(event: str) -> Kind:
    """The catalogue's kind (`user` for a name it lacks: a caller not type-checked)."""
    found = CATALOGUE.get(event)
    return found.kind if found is not None else "user"

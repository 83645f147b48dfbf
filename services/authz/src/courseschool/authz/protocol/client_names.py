"""Client names, which people read on the sign-in and consent pages (RFC 7591 §2
`client_name`; §5 warns that a client may claim any name, and RFC 6819 §4.2.2 that a
person misled about which client asks will grant it access).

Only an administrator's integration has a name the school vouches for. Everyone else's
name is self-declared: it may hold no hidden characters (`courseschool.common.text`),
and may not be a reserved name (the platform's own, `PLATFORM_NAME`, and every
integration's) in another dress. Two names are the same name to a reader when their
keys meet (`name_keys`): NFKC (full-width letters, ligatures, mathematical letters),
then the confusable skeleton of Unicode Technical Standard #39 §4 (a Cyrillic small a,
U+0430, or the Cherokee letter tli, U+13DF, becomes its Latin prototype; ICU's
implementation and data), in the name's own case and case folded, without marks,
punctuation, symbols and spacing (symbols also taken out before NFKC, which folds some
into letters: "\u2122" into "TM"), and without decorations such as "(verified)" or
"official": "CRM (Verified)", "CRM" in full-width letters, "CRM" with a Cyrillic Es and a
combining accent, and "crm" all read as "CRM". Equality of keys, not similarity: "CRM
Helper" stays free.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Literal, Protocol

import icu  # type: ignore[import-untyped]  # PyICU (the pyicu-wheels build): no type stubs

from courseschool.common.text import has_hidden

MAX_NAME_LENGTH = 200
# The platform's own name, as its pages show it: reserved like an integration's.
PLATFORM_NAME = "Course School"
# Words that claim a status the name's owner cannot give itself.
DECORATIONS = frozenset({"verified", "official", "trusted", "certified", "authentic", "genuine", "approved"})

ClientKind = Literal["integration", "metadata_document", "self_registered"]


class Vouched(Protocol):
    """What tells who stands behind a name: a client, or a grant read with its client."""

    @property
    def is_integration(self) -> bool: ...

    @property
    def verified_origin(self) -> str | None: ...


def client_kind(client: Vouched) -> ClientKind:
    """Who stands behind the client's name: the school's administrator (an integration),
    the domain serving its metadata document, or nobody but the client itself."""
    if client.is_integration:
        return "integration"
    if client.verified_origin is not None:
        return "metadata_document"
    return "self_registered"


def name_problem(name: str) -> str | None:
    """Why a self-declared `client_name` cannot be shown, or None if it can."""
    if not 0 < len(name) <= MAX_NAME_LENGTH:
        return f"client_name must be 1 to {MAX_NAME_LENGTH} characters"
    if has_hidden(name):
        return (
            "client_name must not hold control, format (bidirectional override, zero-width) or private-use characters"
        )
    return None


_SPOOF_CHECKER = icu.SpoofChecker()  # getSkeleton is const in ICU: safe to share between threads


def skeleton(text: str) -> str:
    """UTS #39 §4: NFD, each character replaced by its prototype from the confusables
    data, NFD again (ICU's `uspoof_getSkeleton`; the data of ICU's Unicode version)."""
    return str(_SPOOF_CHECKER.getSkeleton(0, text))


def _words(text: str) -> list[str]:
    """Letters and digits kept, marks dropped; punctuation, symbols and spaces break words."""
    kept = []
    for ch in unicodedata.normalize("NFD", text):
        category = unicodedata.category(ch)[0]
        if category in "LN":
            kept.append(ch)
        elif category != "M":
            kept.append(" ")
    return "".join(kept).split()


def _reading(name: str, *, fold_first: bool) -> list[str]:
    """The words of `name` (split where the name has punctuation, symbols or spaces: a
    dash's prototype may be a letter), each after NFKC and the skeleton: taken as written
    (`fold_first` False, so that "I" meets "l") or case folded first (so that "a" meets
    "A"); case folded after the skeleton and skeletonised again (prototypes may be
    capitals: "0" becomes "O"; and "M" meets "rn" only in lower case)."""
    text = unicodedata.normalize("NFKC", name)
    if fold_first:
        text = text.casefold()
    return ["".join(_words(skeleton(skeleton(word).casefold()))) for word in _words(text)]


_DECORATION_KEYS = frozenset(
    word for decoration in DECORATIONS for fold in (False, True) for word in _reading(decoration, fold_first=fold)
)


def _symbols_dropped(name: str) -> str:
    """`name` with its symbols (Unicode category S) as spaces, before NFKC: NFKC folds some
    symbols into letters ("\u2122", TRADE MARK SIGN, into "TM"; "\u2120" into "SM"), which
    would make "Course School \u2122" a name of its own; read this way too, the symbol is
    the decoration it is. (The NFKC reading stays, so a circled C still reads as a C.)"""
    return "".join(" " if unicodedata.category(ch)[0] == "S" else ch for ch in name)


def name_keys(name: str) -> frozenset[str]:
    """The forms under which `name` reads as another name (see the module's docstring):
    two names are one to a reader when their keys meet."""
    keys = {
        "".join(w for w in _reading(text, fold_first=fold) if w not in _DECORATION_KEYS)
        for text in {name, _symbols_dropped(name)}
        for fold in (False, True)
    }
    return frozenset(keys - {""})  # a name of decorations and symbols only reads as no one's


def imitates(name: str, reserved_names: Iterable[str]) -> bool:
    """True when `name` reads as one of `reserved_names`."""
    mine = name_keys(name)
    return any(mine & name_keys(theirs) for theirs in reserved_names)


def reserved_name_problem(name: str, integration_names: Iterable[str]) -> str | None:
    """Why a self-declared name cannot be used because it reads as a reserved one: the
    platform's own name, or an integration's; None if it is free."""
    if imitates(name, [PLATFORM_NAME]):
        return (
            f"client_name reads as {PLATFORM_NAME}, the platform's own name (compared by the Unicode "
            "confusable skeleton, UTS 39): it is reserved"
        )
    if imitates(name, integration_names):
        return (
            "client_name reads as the name of an integration of the school's administrator (compared by the "
            "Unicode confusable skeleton, UTS 39): it is reserved"
        )
    return None

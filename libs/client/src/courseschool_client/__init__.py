"""Sign a command-line tool or local agent in to a Course School, and keep it signed in.

import httpx
from courseschool_client import CourseSchool

api = httpx.Client(auth=CourseSchool.login("https://school.example"))
"""

from .errors import (
    AuthorizationRefused,
    ClientError,
    DiscoveryError,
    SignInRequired,
    StoreCorrupted,
    TokenEndpointError,
)
from .session import CourseSchool
from .signin import Interaction

__all__ = [
    "CourseSchool",
    "Interaction",
    "ClientError",
    "SignInRequired",
    "AuthorizationRefused",
    "DiscoveryError",
    "StoreCorrupted",
    "TokenEndpointError",
]

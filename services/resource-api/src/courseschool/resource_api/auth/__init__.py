"""Who calls: access tokens verified, and the revocations they are checked against."""

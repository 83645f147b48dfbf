"""The HTTP layer of the authorization server: thin handlers over `AuthzService`."""

"""The use cases of the authorization server, one module per endpoint family. Each
function takes the `Components` and the parsed input, and holds no HTTP detail."""

"""The use cases of the authorization server, one module per endpoint, named as its
handlers' module in `web/` (`admin/` is the admin API's and the CLI's). Each function
takes its family (`families.py`: only what it uses) and the parsed input, and holds no
HTTP detail."""

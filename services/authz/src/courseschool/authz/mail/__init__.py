"""E-mail to people (issue 39): what a message says (`messages.py`, from the templates
beside it), where it goes (`relay.py`, SMTP_URL), and its delivery from the durable
outbox (`delivery.py`, the outbox's SQL in storage/mail_outbox.py)."""

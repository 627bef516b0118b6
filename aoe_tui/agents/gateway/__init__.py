"""The referee's model gateway: every agent's model traffic, through one proxy the players cannot reach around.

An agent holds only a gateway token; the gateway knows which agent a token is,
which provider serves that agent's model and with which key, forwards each
request there with the key in the provider's own header, streams the answer
back as it arrives, reads the usage from it and charges the agent through the
referee. Budgets, rate limits and the record of model calls live here too,
outside every player's reach (docs/threat-model.md).
"""

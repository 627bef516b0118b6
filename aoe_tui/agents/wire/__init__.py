"""The model protocols' wire formats, as pure parsers (no sockets, no files).

One module per protocol family the gateway carries: OpenAI Chat Completions,
OpenAI Responses, Anthropic Messages and Gemini generateContent. Each reads a
response body or the events of its stream and says what the referee needs:
the usage the provider reported, the reassembled response (for the record of
model calls) and the tool calls in it; and writes a refusal in that protocol's
own error shape. The gateway and the built-in harness both use them, so a
stream is read one way everywhere.
"""

"""The panes a screen is built from, each its own widget; `literal` is how every one of them shows player text."""

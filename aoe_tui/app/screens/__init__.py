"""Screens and modal dialogs: each composes widgets over one match, series or folder and owns its keys."""

"""`aoe publish`: saved matches, series, benchmarks, cups and the ladder as a static web site.

The publisher is a reader of saved results, like the app: it reads matches through the store's loaders,
standings and "How they fought" through the analysis layer, and the world through the reducer, then renders
HTML with Jinja2. It sits in its own layer just below the app and the command line (`.importlinter`): it
needs nothing above the analysis layer, the command line calls it, and a contract keeps it off the engine,
the runtime, the agents, the test doubles and Textual, so publishing never starts a VM or a terminal.

Everything a player wrote passes `text.shown` (controls made visible, size bounded) and the export's
redactor before it reaches a template, and the templates escape it again (autoescape), so a guest's
`<script>` is text on the page.
"""

"""What the screens show, computed without Textual widgets: sessions, rows, playback, catalogs, labels and styles.

Kept apart so it can be tested and reused without an app (`.importlinter` keeps widgets and screens out).
"""

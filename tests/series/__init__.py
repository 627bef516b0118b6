"""Series, benchmark suites and standings."""

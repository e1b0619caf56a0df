"""Turning stored results into tables (the paper's Table 2 layout) for humans and tools."""

from sentprobe.reporting.tables import pivot, results_table, rich_table

__all__ = ["pivot", "results_table", "rich_table"]

"""Data analysis without encoders: audits of probing suites and quality reports of generated
ones, both built on the same checks (:mod:`sentprobe.analysis.checks`)."""

from sentprobe.analysis.audit import audit_suite, audit_task, rich_report
from sentprobe.analysis.checks import CHECKS, CheckOptions, Thresholds, run_checks
from sentprobe.analysis.findings import SEVERITIES, AuditReport, Finding, Severity
from sentprobe.analysis.quality import quality_report

__all__ = [
    "CHECKS",
    "SEVERITIES",
    "AuditReport",
    "CheckOptions",
    "Finding",
    "Severity",
    "Thresholds",
    "audit_suite",
    "audit_task",
    "quality_report",
    "rich_report",
    "run_checks",
]

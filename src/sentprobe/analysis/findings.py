"""What a data check reports: findings with a severity, gathered into one report per suite.

Severities are ordered so a pipeline can gate on them: ``error`` (scores on this data would be
wrong or meaningless), ``warning`` (scores may mislead; compare with baselines), ``info``
(numbers worth seeing, no problem found).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["info", "warning", "error"]
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")
_RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}


def severity_rank(severity: str) -> int:
    """0 for info, 1 for warning, 2 for error (so ``max`` finds the worst)."""
    return _RANK[severity]


@dataclass
class Finding:
    """One observation about a task (``task=None``: about the suite or its files)."""

    check: str
    severity: Severity
    message: str
    task: str | None = None
    count: int | None = None
    examples: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AuditReport:
    """Findings about every task found at ``path``, in task order."""

    path: str
    tasks: list[str]
    findings: list[Finding]

    @property
    def worst(self) -> Severity | None:
        """The highest severity among the findings (None when there are none)."""
        if not self.findings:
            return None
        return max((f.severity for f in self.findings), key=severity_rank)

    def counts(self) -> dict[str, int]:
        """Number of findings per severity."""
        out: dict[str, int] = {s: 0 for s in SEVERITIES}
        for f in self.findings:
            out[f.severity] += 1
        return out

    def at_least(self, severity: Severity) -> list[Finding]:
        """Findings of ``severity`` or worse."""
        return [f for f in self.findings if severity_rank(f.severity) >= severity_rank(severity)]

    def failed(self, fail_on: Severity | Literal["never"] = "error") -> bool:
        """Whether a pipeline gated at ``fail_on`` should stop."""
        return fail_on != "never" and bool(self.at_least(fail_on))

    def for_task(self, task: str | None) -> list[Finding]:
        return [f for f in self.findings if f.task == task]

    def sections(
        self, min_severity: Severity = "info"
    ) -> Iterator[tuple[str | None, list[Finding]]]:
        """(task, or None for the suite, and its findings at ``min_severity`` or worse, worst
        first) for the suite, then each task, leaving out those with no such finding."""
        for task in [None, *self.tasks]:
            found = [
                f
                for f in self.for_task(task)
                if severity_rank(f.severity) >= severity_rank(min_severity)
            ]
            if found:
                yield task, sorted(found, key=lambda f: -severity_rank(f.severity))

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "tasks": self.tasks,
            "counts": self.counts(),
            "findings": [f.to_dict() for f in self.findings],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, default=str) + "\n"

    def to_text(self, min_severity: Severity = "info", max_examples: int = 3) -> str:
        """Plain-text report: suite-level findings, then each task's, worst first."""
        lines = [f"Audit of {self.path}: {len(self.tasks)} task(s)"]
        for task, found in self.sections(min_severity):
            lines.append("")
            lines.append(f"== {task or 'suite'}")
            for f in found:
                lines.append(f"  [{f.severity.upper()}] {f.check}: {f.message}")
                for ex in f.examples[:max_examples]:
                    lines.append(f"      e.g. {ex}")
        c = self.counts()
        lines += ["", f"{c['error']} error(s), {c['warning']} warning(s), {c['info']} info"]
        return "\n".join(lines) + "\n"

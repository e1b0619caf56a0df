"""Probing tasks: the data model, loaders for SentEval / X-Probe / tables, validation, and the
built-in tasks and suites (registered on import; data files are read only when a task is used).
"""

from sentprobe.datasets.builtin import (
    SAMPLE_EN_DIR,
    SuiteInfo,
    TaskEntry,
    TaskInfo,
    list_suites,
    list_tasks,
    register_builtin,
    register_manifest_dir,
    resolve_tasks,
)
from sentprobe.datasets.loaders import (
    load_senteval_dir,
    load_senteval_file,
    load_table,
    load_task,
    load_tasks,
    load_xprobe_dir,
    load_xprobe_task,
    read_manifest,
)
from sentprobe.datasets.mock import make_mock_task
from sentprobe.datasets.task import PAPER_TASKS, SPLITS, ProbingTask, Split, TaskMetadata
from sentprobe.datasets.validation import task_warnings, validate_task

register_builtin()

__all__ = [
    "PAPER_TASKS",
    "SAMPLE_EN_DIR",
    "SPLITS",
    "ProbingTask",
    "Split",
    "SuiteInfo",
    "TaskEntry",
    "TaskInfo",
    "TaskMetadata",
    "list_suites",
    "list_tasks",
    "load_senteval_dir",
    "load_senteval_file",
    "load_table",
    "load_task",
    "load_tasks",
    "load_xprobe_dir",
    "load_xprobe_task",
    "make_mock_task",
    "read_manifest",
    "register_builtin",
    "register_manifest_dir",
    "resolve_tasks",
    "task_warnings",
    "validate_task",
]

"""docs/ERRORS.md and the code agree both ways: every code the server can raise is
documented, and every documented code is produced by a named test (which exists and
asserts that code)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from lsp_server.core import errors

ROOT = Path(__file__).resolve().parents[2]

# Per documented code: a test that makes the condition real and asserts the code.
PRODUCED_BY: dict[str, str] = {
    "attach.unavailable": "tests/mcp/test_attach.py::test_attach_require_refuses_without_an_editor",
    "attach.lost": "tests/mcp/test_attach.py::test_editor_gone_during_a_call_is_attach_lost",
    "acp.agent_exited": "tests/acp/test_bad_input.py::test_an_agent_that_dies_mid_session",
    "checkpoint.unknown": (
        "tests/checkpoints/test_revert_errors.py::test_revert_of_an_unknown_call_is_checkpoint_unknown"
    ),
    "schema_mismatch": "tests/server/test_e2e_protocol.py::test_schema_mismatch_is_not_executed",
    "unknown_tool": "tests/server/test_e2e_protocol.py::test_unknown_tool_lists_closest_names",
    "permission.user_denied": (
        "tests/policy/test_policy_e2e.py::test_denied_call_changes_nothing_and_returns_the_reason"
    ),
    "permission.unreadable_answer": (
        "tests/policy/test_unreadable_answers.py::test_each_malformed_answer_is_a_denial_at_once"
    ),
    "permission.rule_denied": (
        "tests/policy/test_policy_e2e.py::test_deny_rules_beat_bypass_and_allow"
    ),
    "permission.form_not_shown": (
        "tests/mcp/test_client_approvals.py::test_a_form_declined_at_once_was_not_shown"
    ),
    "permission.unattended": (
        "tests/policy/test_policy_e2e.py::test_client_without_approvals_gets_the_unattended_decision"
    ),
    "workspace.outside_scope": "tests/fs/test_confinement.py::test_writers_refuse_escapes",
    "workspace.secret_file": (
        "tests/fs/test_confinement.py::test_secret_files_are_refused_by_readers"
    ),
    "workspace.broad_root": (
        "tests/mcp/test_broad_root.py::test_started_in_the_home_folder_every_call_is_refused"
    ),
    "workspace.not_isolated": (
        "tests/mcp/test_isolate.py::test_apply_outside_an_isolated_session_is_refused"
    ),
    "workspace.isolation_failed": (
        "tests/acp/test_isolate.py::test_a_folder_outside_git_is_refused_with_a_reason"
    ),
    "workspace.isolation_broken": (
        "tests/mcp/test_isolate.py::test_apply_with_its_git_data_gone_is_isolation_broken"
    ),
    "invalid_argument": "tests/fs/test_confinement.py::test_nul_bytes_and_overlong_paths",
    "FS_NOT_OBSERVED": (
        "tests/runtime/test_observations.py::test_replacing_an_unread_file_is_refused"
    ),
    "FS_STALE_VERSION": (
        "tests/runtime/buffers/test_buffers_lsp.py::test_buffer_changed_since_read_is_stale"
    ),
    "FS_EDIT_CONFLICT": (
        "tests/tools/files/test_edit_merge.py::"
        "test_an_overlapping_edit_is_refused_naming_the_other_session"
    ),
    "FS_NOT_FOUND": "tests/tools/files/test_read_file.py::test_refusals",
    "FS_ALREADY_EXISTS": (
        "tests/runtime/test_observations.py::test_concurrent_creates_exactly_one_wins"
    ),
    "FS_IS_DIRECTORY": "tests/tools/files/test_read_file.py::test_refusals",
    "FS_NOT_A_FILE": "tests/tools/search/test_grep_tool.py::test_a_fifo_is_refused_not_waited_for",
    "FS_BINARY": "tests/tools/files/test_read_file.py::test_refusals",
    "FS_TOO_LARGE": (
        "tests/core/test_error_codes.py::test_fs_too_large_names_the_size_and_the_limit"
    ),
    "FS_PERMISSION": (
        "tests/core/test_error_codes.py::test_fs_permission_when_the_os_refuses_the_write"
    ),
    "edit.not_found": (
        "tests/tools/files/test_edit_ladder.py::test_not_found_shows_closest_region_with_visible_whitespace"
    ),
    "edit.not_unique": (
        "tests/tools/files/test_edit_ladder.py::test_uniqueness_is_enforced_at_each_level"
    ),
    "edit.no_change": "tests/core/test_error_codes.py::test_edit_no_change_for_edit_file",
    "edit.invalid": "tests/tools/files/test_delete_range.py::test_delete_range_guards",
    "edit.unencodable": (
        "tests/core/test_error_codes.py::test_edit_unencodable_keeps_the_file_in_its_encoding"
    ),
    "edit.secret_placeholder": (
        "tests/secrets/test_secrets_mcp.py::test_a_placeholder_is_not_written_back"
    ),
    "grep.invalid_regex": (
        "tests/tools/search/test_grep_tool.py::test_invalid_regex_is_a_clear_error"
    ),
    "image.unsupported": (
        "tests/tools/files/test_view_image.py::test_text_with_an_image_name_is_refused"
    ),
    "image.too_large": "tests/tools/files/test_view_image.py::test_too_many_bytes",
    "result.not_found": "tests/core/test_error_codes.py::test_result_not_found_for_an_unknown_ref",
    "timeout": (
        "tests/tools/shell/test_shell_tools.py::test_timeout_returns_partial_output_with_the_error"
    ),
    "job.not_found": "tests/tools/shell/test_shell_tools.py::test_policy_refusals_are_clear_errors",
    "job.limit": "tests/tools/shell/test_shell_tools.py::test_job_limit_is_a_clear_error",
    "cancelled": "tests/shell/test_e2e_shell.py::test_cancel_request_kills_a_running_command",
    "lsp.unavailable": (
        "tests/langservers/test_tool_arguments.py::test_refusals_before_any_server_starts"
    ),
    "lsp.not_ready": (
        "tests/langservers/test_lifecycle.py::"
        "test_request_while_indexing_is_lsp_not_ready_then_the_full_answer"
    ),
    "lsp.crashed": (
        "tests/langservers/test_lifecycle.py::"
        "test_server_crashing_at_every_start_gives_lsp_crashed_with_stderr"
    ),
    "lsp.request_failed": (
        "tests/core/test_error_codes.py::test_lsp_request_failed_carries_the_servers_message"
    ),
    "web.invalid_url": "tests/web/test_web_fetch.py::test_bad_urls",
    "web.blocked_address": (
        "tests/web/test_web_fetch.py::test_internal_addresses_are_refused_before_any_connect"
    ),
    "web.fetch_failed": (
        "tests/core/test_error_codes.py::test_web_fetch_failed_on_a_refused_loopback_connection"
    ),
    "web.http_status": "tests/tools/test_extras_tools.py::test_web_fetch_through_the_runtime",
    "goal.revision_conflict": (
        "tests/tools/session/test_agent_state_logic.py::test_goal_lifecycle_with_exact_revisions"
    ),
    "goal.unfinished_exists": (
        "tests/tools/session/test_agent_state_logic.py::test_an_unfinished_goal_is_never_overwritten"
    ),
    "goal.not_found": (
        "tests/tools/session/test_agent_state_logic.py::test_goal_lifecycle_with_exact_revisions"
    ),
    "server.not_initialized": (
        "tests/server/test_transport_malformed.py::test_a_request_before_initialize_is_refused"
    ),
    "editor.refused": (
        "tests/runtime/buffers/test_editor_refused.py::"
        "test_a_declined_edit_is_editor_refused_and_changes_nothing"
    ),
    "shell.needs_terminal": (
        "tests/sandbox/test_sandbox_config.py::"
        "test_full_screen_programs_return_at_once_with_the_reason"
    ),
    "shell.secret_cancelled": (
        "tests/askpass/test_secret_prompts.py::test_a_cancelled_prompt_fails_the_command_saying_so"
    ),
    "shell.secret_unavailable": (
        "tests/askpass/test_secret_prompts.py::"
        "test_without_a_client_that_asks_the_refusal_says_to_use_a_terminal"
    ),
    "internal_error": (
        "tests/core/test_error_codes.py::"
        "test_internal_error_has_an_incident_id_and_the_server_keeps_running"
    ),
}


def constants() -> dict[str, str]:
    """Code -> its name in lsp_server.core.errors."""
    return {
        value: name
        for name, value in vars(errors).items()
        if name.isupper() and isinstance(value, str)
    }


def raised_literals() -> set[str]:
    """Codes written as a string literal in `ToolError("code", ...)` anywhere in the server."""
    found: set[str] = set()
    for path in (ROOT / "lsp_server").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "ToolError"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.add(node.args[0].value)
    return found


def documented() -> list[str]:
    codes: list[str] = []
    for line in (ROOT / "docs" / "ERRORS.md").read_text().splitlines():
        if line.startswith("| `"):
            codes.extend(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return codes


def test_every_raised_code_is_documented() -> None:
    raised = set(constants()) | raised_literals()
    assert len(raised) > 30
    missing = sorted(code for code in raised if code not in documented())
    assert not missing, f"document these codes in docs/ERRORS.md: {missing}"


def test_every_documented_code_is_produced_by_a_named_test() -> None:
    codes = documented()
    assert sorted(codes) == sorted(PRODUCED_BY), "keep PRODUCED_BY in step with docs/ERRORS.md"
    names = constants()
    stale = []
    for code, test_id in PRODUCED_BY.items():
        file_name, _, function = test_id.partition("::")
        source = (ROOT / file_name).read_text()
        body = next(
            (
                ast.get_source_segment(source, node) or ""
                for node in ast.walk(ast.parse(source))
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.name == function
            ),
            None,
        )
        mentions = body is not None and (
            re.search(rf'"{re.escape(code)}(:|")', body)
            or (code in names and re.search(rf"\b{names[code]}\b", body))
        )
        if not mentions:
            stale.append(test_id)
    assert not stale, f"these tests do not exist or do not assert their code: {stale}"

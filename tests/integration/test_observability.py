"""What an operator watches: the security counters move with the events they count,
every metric passes `promtool check metrics`, the alert rules pass `promtool check
rules`, and the dashboard and the rules only use metrics the services export."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .flow import Flow, Lifecycle, pkce_pair
from .test_metrics import _value

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool missing (Debian: prometheus; .ci/run installs it)"
)
_BUILTIN = {"up", "time"}
_FUNCTIONS = {
    "sum",
    "rate",
    "increase",
    "histogram_quantile",
    "max",
    "by",
    "or",
    "and",
    "time",
    "humanizePercentage",
    "le",
}


async def test_security_counters_move_with_their_events(flow: Flow, clock) -> None:
    before = (await flow.client.get("/metrics")).text
    reg = await flow.register()
    user = await flow.user("owner")
    tokens = await flow.tokens(reg, user)
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge, prompt="login"))
    await flow.login(start.headers["location"], user, password="wrong password, really")
    await flow.login(start.headers["location"], user)
    await flow.consent(start.headers["location"], "deny")
    life = Lifecycle(flow)
    assert (await life.refresh(reg, tokens["refresh_token"])).status_code == 200
    clock.advance(60)  # past the retry window: presenting it again is a reuse
    assert (await life.refresh(reg, tokens["refresh_token"])).status_code == 400
    after = (await flow.client.get("/metrics")).text

    def moved(name: str, **labels: str) -> float:
        return _value(after, name, **labels) - _value(before, name, **labels)

    assert moved("courseschool_sign_ins_total", result="ok") == 2
    assert moved("courseschool_sign_ins_total", result="failed") == 1
    assert moved("courseschool_consents_total", decision="approved") == 1
    assert moved("courseschool_consents_total", decision="denied") == 1
    assert moved("courseschool_refresh_token_reuse_total") == 1
    assert moved("courseschool_grants_revoked_total", reason="refresh_reused", actor="system") == 1
    assert _value(after, "courseschool_signing_key_activated_timestamp_seconds", alg="ES256") > 0


@needs_promtool
async def test_metrics_pass_promtool(flow: Flow) -> None:
    await flow.tokens(await flow.register(), await flow.user("owner"))
    text = (await flow.client.get("/metrics")).text
    checked = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.strip() == "" and checked.stderr.strip() == "", checked.stdout + checked.stderr


@needs_promtool
def test_alert_rules_pass_promtool() -> None:
    checked = subprocess.run(
        [PROMTOOL, "check", "rules", str(DEPLOY / "prometheus" / "alerts.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0 and "SUCCESS: 7 rules found" in checked.stdout, checked.stdout + checked.stderr


def _metric_names(expr: str) -> set[str]:
    without_strings = re.sub(r'"[^"]*"', "", expr)
    without_labels = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\bby \([^)]*\)", "", without_strings)
    words = set(re.findall(r"\b[a-z_][a-z0-9_]*\b", without_labels))
    return {w for w in words if (w not in _FUNCTIONS and "_" in w) or w in _BUILTIN} - _FUNCTIONS


async def test_dashboard_and_rules_use_only_exported_metrics(flow: Flow) -> None:
    await flow.tokens(await flow.register(), await flow.user("owner"))
    exported = set(re.findall(r"^# TYPE (\S+) ", (await flow.client.get("/metrics")).text, flags=re.M))
    histogram_parts = {f"{n}_{s}" for n in exported for s in ("bucket", "count", "sum")}
    known = exported | histogram_parts | {f"{n}_total" for n in exported} | _BUILTIN
    dashboard = json.loads((DEPLOY / "grafana" / "courseschool-dashboard.json").read_text())
    assert dashboard["uid"] == "courseschool" and dashboard["panels"]
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    rules = (DEPLOY / "prometheus" / "alerts.yaml").read_text()
    exprs += re.findall(r"expr: \|?\s*\n?((?:.*\n)*?)\s*(?:for|labels):", rules)
    for expr in exprs:
        unknown = _metric_names(expr) - known
        assert not unknown, f"{expr!r} uses metrics no service exports: {unknown}"
    panels = {(p["gridPos"]["x"], p["gridPos"]["y"]) for p in dashboard["panels"]}
    assert len(panels) == len(dashboard["panels"])  # no two panels on the same spot

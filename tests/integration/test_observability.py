"""What an operator watches: the security counters move with the events they count,
every metric passes `promtool check metrics`, the alert rules pass `promtool check
rules` and fire where they should (`promtool test rules`), each links a runbook that
exists, the scrape config passes `promtool check config`, and the dashboard and the
rules only use metrics, routes and variables the services export."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml

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
    "label_replace",
    "absent",
    "without",
}
PROMETHEUS = DEPLOY / "prometheus"


def _rules() -> list[dict[str, Any]]:
    return [
        rule for group in yaml.safe_load((PROMETHEUS / "alerts.yaml").read_text())["groups"] for rule in group["rules"]
    ]


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
        [PROMTOOL, "check", "rules", str(PROMETHEUS / "alerts.yaml")], capture_output=True, text=True, timeout=60
    )
    found = f"SUCCESS: {len(_rules())} rules found"
    assert checked.returncode == 0 and found in checked.stdout, checked.stdout + checked.stderr


@needs_promtool
def test_every_alert_fires_where_it_should() -> None:
    """alerts.test.yaml: each alert on the series that should fire it (CourseSchoolNotReady
    with annotation-based scraping, one service down, every target gone) and quiet on
    healthy ones."""
    tested = subprocess.run(
        [PROMTOOL, "test", "rules", "alerts.test.yaml"], cwd=PROMETHEUS, capture_output=True, text=True, timeout=120
    )
    assert tested.returncode == 0 and "SUCCESS" in tested.stdout, tested.stdout + tested.stderr
    cases = yaml.safe_load((PROMETHEUS / "alerts.test.yaml").read_text())["tests"]
    fired = {t["alertname"] for case in cases for t in case.get("alert_rule_test", []) if t["exp_alerts"]}
    quiet = {t["alertname"] for case in cases for t in case.get("alert_rule_test", []) if not t["exp_alerts"]}
    alerts = {rule["alert"] for rule in _rules() if "alert" in rule}
    assert fired == alerts, alerts - fired  # every alert is shown firing
    assert {"CourseSchoolNotReady", "CourseSchoolTokenLatencyHigh", "CourseSchoolRegistrationSpike"} <= quiet


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", markdown, flags=re.M)
    return {re.sub(r"[^a-z0-9 _-]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_alert_links_a_runbook_that_exists() -> None:
    anchors = _anchors((DEPLOY / "README.md").read_text())
    for rule in _rules():
        if "alert" not in rule:
            continue
        link = rule["annotations"].get("runbook_url", "")
        assert link.startswith("deploy/README.md#"), rule["alert"]
        assert link.split("#", 1)[1] in anchors, f"{rule['alert']}: no section {link}"


RENDER = Path(__file__).resolve().parents[2] / "tools" / "render_alerts.py"


@needs_promtool
def test_rendered_rules_link_absolute_runbooks(tmp_path: Path) -> None:
    """What Prometheus loads: tools/render_alerts.py puts every runbook_url under the docs'
    base URL (DOCS_BASE_URL), and the rules still pass promtool."""
    base = "https://git.example.org/course-school/blob/v1.4"
    rendered = subprocess.run(
        [sys.executable, str(RENDER)], env={"DOCS_BASE_URL": base + "/"}, capture_output=True, text=True, timeout=60
    )
    assert rendered.returncode == 0, rendered.stderr
    (tmp_path / "alerts.yaml").write_text(rendered.stdout)
    links = [
        rule["annotations"]["runbook_url"]
        for group in yaml.safe_load(rendered.stdout)["groups"]
        for rule in group["rules"]
        if "alert" in rule
    ]
    assert links and all(link.startswith(f"{base}/deploy/README.md#runbook-") for link in links), links
    checked = subprocess.run(
        [PROMTOOL, "check", "rules", str(tmp_path / "alerts.yaml")], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("base", [None, "ftp://docs.example.org", "https://docs.example.org/x?y=1"])
def test_rendering_needs_a_docs_base_url(base: str | None) -> None:
    argv = [sys.executable, str(RENDER)] + (["--docs-base-url", base] if base else [])
    refused = subprocess.run(argv, env={}, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and refused.stdout == "", refused.stdout
    assert "docs" in refused.stderr and "Traceback" not in refused.stderr, refused.stderr


@needs_promtool
def test_scrape_config_passes_promtool(tmp_path: Path) -> None:
    """prometheus.yaml as it is, but with its pods found in a file rather than through the
    Kubernetes API (Debian's Prometheus is built without Kubernetes discovery): the rest
    (relabelling, authorization, rule files) is checked by promtool."""
    config = yaml.safe_load((PROMETHEUS / "prometheus.yaml").read_text())
    (job,) = config["scrape_configs"]
    # The overlays' namespaces (tests/deploy/test_network_policies.py checks they are these).
    assert job["kubernetes_sd_configs"] == [
        {"role": "pod", "namespaces": {"names": ["courseschool", "courseschool-dev"]}}
    ]
    assert {"source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_name"], "target_label": "service"} in job[
        "relabel_configs"
    ]
    job["file_sd_configs"] = [{"files": [str(tmp_path / "pods.json")]}]
    del job["kubernetes_sd_configs"]
    job["authorization"]["credentials_file"] = str(tmp_path / "token")
    (tmp_path / "token").write_text("t")
    (tmp_path / "pods.json").write_text("[]")
    config["rule_files"] = [str(PROMETHEUS / "alerts.yaml")]
    (tmp_path / "prometheus.yaml").write_text(yaml.safe_dump(config))
    checked = subprocess.run(
        [PROMTOOL, "check", "config", str(tmp_path / "prometheus.yaml")], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0 and "SUCCESS" in checked.stdout, checked.stdout + checked.stderr


def _metric_names(expr: str, recorded: Iterable[str] = ()) -> set[str]:
    for name in recorded:  # a recording rule's name (level:metric:operations) is no metric
        expr = expr.replace(name, "")
    without_strings = re.sub(r'"[^"]*"', "", expr)
    without_labels = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\bby \([^)]*\)", "", without_strings)
    words = set(re.findall(r"\b[a-z_][a-z0-9_]*\b", without_labels))
    return {w for w in words if (w not in _FUNCTIONS and "_" in w) or w in _BUILTIN} - _FUNCTIONS


async def test_dashboard_and_rules_use_only_exported_metrics_and_routes(flow: Flow) -> None:
    await flow.tokens(await flow.register(), await flow.user("owner"))
    for other_path in ("/token", "/register"):  # the MCP fallback paths of the same endpoints
        assert (await flow.client.post(other_path, data={})).status_code == 400
    text = (await flow.client.get("/metrics")).text
    exported = set(re.findall(r"^# TYPE (\S+) ", text, flags=re.M))
    histogram_parts = {f"{n}_{s}" for n in exported for s in ("bucket", "count", "sum")}
    known = exported | histogram_parts | {f"{n}_total" for n in exported} | _BUILTIN
    dashboard = json.loads((DEPLOY / "grafana" / "courseschool-dashboard.json").read_text())
    assert dashboard["uid"] == "courseschool" and dashboard["panels"]
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    rules = _rules()
    recorded = {rule["record"] for rule in rules if "record" in rule}
    exprs += [rule["expr"] for rule in rules]
    for expr in exprs:
        unknown = _metric_names(expr, recorded) - known
        assert not unknown, f"{expr!r} uses metrics no service exports: {unknown}"
    routes = set(re.findall(r'route="([^"]*)"', text))
    for rule in rules:
        for matched in re.findall(r'route=~?"([^"]*)"', rule["expr"]):
            assert set(matched.split("|")) <= routes, f"{rule.get('alert')}: {matched} is no route the services have"
    panels = {(p["gridPos"]["x"], p["gridPos"]["y"]) for p in dashboard["panels"]}
    assert len(panels) == len(dashboard["panels"])  # no two panels on the same spot


async def test_dashboard_filters_every_panel_by_service_and_instance(flow: Flow) -> None:
    """The `service` and `instance` variables narrow every panel: `instance` every query,
    `service` every query over a metric the services label with their name."""
    await flow.tokens(await flow.register(), await flow.user("owner"))
    text = (await flow.client.get("/metrics")).text
    with_service = {
        name.removesuffix("_bucket")
        for name, labels in re.findall(r"^([a-z_]+)\{([^}]*)\}", text, flags=re.M)
        if re.search(r'(^|,)service="', labels)
    }
    dashboard = json.loads((DEPLOY / "grafana" / "courseschool-dashboard.json").read_text())
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["service"]["type"] == variables["instance"]["type"] == "query"
    assert "$service" in variables["instance"]["query"]["query"]  # the instances of the chosen services
    for variable in (variables["service"], variables["instance"]):
        assert variable["includeAll"] and variable["multi"] and variable["allValue"] == ".*"
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            selectors = re.findall(r"([a-z_:]+)\{([^}]*)\}", target["expr"])
            assert selectors, target["expr"]
            for name, matchers in selectors:
                assert 'instance=~"$instance"' in matchers, (panel["title"], target["expr"])
                if name.removesuffix("_bucket") in with_service:
                    assert 'service=~"$service"' in matchers, (panel["title"], target["expr"])

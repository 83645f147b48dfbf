"""The shipped scrape configuration (deploy/prometheus/prometheus.yaml) run by a real
Prometheus against a running platform: its relabelling puts `service` on every target,
`up` included, and the rules count the instances up per service, a service whose only
target is down at 0. The pods are handed to Prometheus in a file, with the
`__meta_kubernetes_*` labels Kubernetes discovery would give them (Debian's Prometheus
is built without Kubernetes discovery); everything after discovery is the shipped file."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from ..support.net import free_port
from .conftest import Platform

PROMETHEUS = shutil.which("prometheus")
DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
WAIT = 60.0


def _pod(name: str, address: str, port: str) -> dict[str, Any]:
    """One pod as Kubernetes discovery describes it (k8s/base's labels and annotations)."""
    return {
        "targets": [address],
        "labels": {
            "__meta_kubernetes_namespace": "courseschool",
            "__meta_kubernetes_pod_name": f"{name}-0",
            "__meta_kubernetes_pod_label_app_kubernetes_io_name": name,
            "__meta_kubernetes_pod_label_app_kubernetes_io_part_of": "courseschool",
            "__meta_kubernetes_pod_annotation_prometheus_io_scrape": "true",
            "__meta_kubernetes_pod_annotation_prometheus_io_port": port,
            "__meta_kubernetes_pod_annotation_prometheus_io_path": "/metrics",
        },
    }


def _query(api: str, expr: str) -> dict[str, float]:
    """service -> value of `expr`, once Prometheus answers."""
    answer = httpx.get(f"{api}/api/v1/query", params={"query": expr}, timeout=5).json()
    return {r["metric"].get("service", ""): float(r["value"][1]) for r in answer["data"]["result"]}


@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus missing (Debian: prometheus; .ci/run installs it)")
def test_the_scrape_config_labels_every_target_with_its_service(platform: Platform, tmp_path: Path) -> None:
    live = platform.address.removeprefix("http://")
    host, port = live.rsplit(":", 1)
    dead = free_port()  # nothing listens there: the discovery pod is down
    # The resource API's pod address names another port: the annotation's is scraped.
    pods = [
        _pod("authz", live, port),
        _pod("resource-api", f"{host}:1", port),
        _pod("discovery", f"{host}:1", str(dead)),
    ]
    (tmp_path / "pods.json").write_text(json.dumps(pods))
    (tmp_path / "token").write_text(platform.internal_token)
    config = yaml.safe_load((DEPLOY / "prometheus.yaml").read_text())
    config["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"}
    config["rule_files"] = [str(DEPLOY / "alerts.yaml")]
    (job,) = config["scrape_configs"]
    del job["kubernetes_sd_configs"]
    job["file_sd_configs"] = [{"files": [str(tmp_path / "pods.json")], "refresh_interval": "1s"}]
    job["authorization"]["credentials_file"] = str(tmp_path / "token")
    (tmp_path / "prometheus.yaml").write_text(yaml.safe_dump(config))
    listen = f"127.0.0.1:{free_port()}"
    log = (tmp_path / "prometheus.log").open("wb")
    server = subprocess.Popen(
        [
            str(PROMETHEUS),
            f"--config.file={tmp_path / 'prometheus.yaml'}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address={listen}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    api = f"http://{listen}"
    try:
        deadline = time.monotonic() + WAIT
        counted: dict[str, float] = {}
        while time.monotonic() < deadline:
            assert server.poll() is None, (tmp_path / "prometheus.log").read_text()
            try:
                counted = _query(api, "courseschool:up:sum_by_service")
            except (httpx.HTTPError, ValueError):  # not listening yet, or still starting (plain-text 503)
                counted = {}
            if len(counted) == 3:
                break
            time.sleep(0.5)
        assert counted == {"authz": 1.0, "resource-api": 1.0, "discovery": 0.0}, (
            tmp_path / "prometheus.log"
        ).read_text()
        up = _query(api, 'up{job="courseschool"}')
        assert up == {"authz": 1.0, "resource-api": 1.0, "discovery": 0.0}
        # The services' own series carry the target's service label too (a pod is one
        # service; their own label, the same there, is kept as exported_service).
        served = _query(api, 'sum by (service) (http_requests_total{job="courseschool"})')
        assert served.keys() == {"authz", "resource-api"}
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)
        log.close()

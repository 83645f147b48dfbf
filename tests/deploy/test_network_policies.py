"""The NetworkPolicies of the rendered overlays, evaluated as Kubernetes does (a pod
selected by any policy of a direction admits only what one of their rules allows):
who reaches the services (the namespace, the ingress controller, Prometheus, nobody
else) and what the services reach (DNS, each other, PostgreSQL and Redis, and for the
authorization server the public web on 443). The namespaces of the ingress controller
and of Prometheus, and the datastores' addresses, are settings of each overlay
(settings.yaml); prometheus.yaml scrapes every overlay's namespace."""

from __future__ import annotations

import ipaddress
import subprocess
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml

from ..support.deployment import DEPLOY, SERVICES, find_tool

K8S = DEPLOY / "k8s"
OVERLAYS = ("overlays/dev", "overlays/prod")
PUBLIC_ADDRESS = "93.184.215.14"  # an address on the public Internet
METADATA_SERVICE = "169.254.169.254"  # the clouds' instance metadata


@dataclass(frozen=True)
class Peer:
    namespace: str | None = None  # None: outside the cluster (an address only)
    labels: dict[str, str] = field(default_factory=dict)
    ip: str | None = None


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        ok = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[operator]
        if not ok:
            return False
    return True


def _peer_matches(peer: dict[str, Any], own_namespace: str, other: Peer) -> bool:
    if "ipBlock" in peer:
        if other.ip is None:
            return False
        address = ipaddress.ip_address(other.ip)
        block = peer["ipBlock"]
        inside = (
            address in ipaddress.ip_network(block["cidr"])
            if address.version == ipaddress.ip_network(block["cidr"]).version
            else False
        )
        excepted = any(
            address.version == ipaddress.ip_network(e).version and address in ipaddress.ip_network(e)
            for e in block.get("except", [])
        )
        return inside and not excepted
    if other.namespace is None:
        return False
    if "namespaceSelector" in peer:
        namespace_ok = _selects(peer["namespaceSelector"], {"kubernetes.io/metadata.name": other.namespace})
    else:
        namespace_ok = other.namespace == own_namespace
    return namespace_ok and _selects(peer.get("podSelector", {}), other.labels)


def _port_matches(rule_ports: list[dict[str, Any]] | None, port: int, name: str | None, protocol: str) -> bool:
    if not rule_ports:
        return True
    return any(
        p.get("protocol", "TCP") == protocol and (p.get("port") is None or p["port"] in (port, name))
        for p in rule_ports
    )


def _allowed(
    policies: list[dict[str, Any]],
    direction: str,
    namespace: str,
    pod: dict[str, str],
    other: Peer,
    port: int,
    port_name: str | None = None,
    protocol: str = "TCP",
) -> bool:
    """Whether `pod` (its labels, in `namespace`) may receive from (Ingress) or send to
    (Egress) `other` on `port`: Kubernetes' rules (a pod no policy of that direction
    selects is open)."""
    kind, peers_key = {"Ingress": ("ingress", "from"), "Egress": ("egress", "to")}[direction]
    applying = [
        p for p in policies if direction in p["spec"]["policyTypes"] and _selects(p["spec"]["podSelector"], pod)
    ]
    if not applying:
        return True
    for policy in applying:
        for rule in policy["spec"].get(kind, []):
            peers = rule.get(peers_key)
            peer_ok = not peers or any(_peer_matches(peer, namespace, other) for peer in peers)
            if peer_ok and _port_matches(rule.get("ports"), port, port_name, protocol):
                return True
    return False


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[dict[str, Any]]]:
    kubectl = find_tool("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: the overlays cannot be rendered")
    out = {}
    for target in OVERLAYS:
        result = subprocess.run([kubectl, "kustomize", str(K8S / target)], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, f"{target}: {result.stderr}"
        out[target] = [d for d in yaml.safe_load_all(result.stdout) if d]
    return out


def _settings(target: str) -> dict[str, str]:
    (settings,) = [d for d in yaml.safe_load_all((K8S / target / "settings.yaml").read_text()) if d]
    assert settings["metadata"]["annotations"]["config.kubernetes.io/local-config"] == "true"
    return settings["data"]


def _namespace(docs: list[dict[str, Any]]) -> str:
    (namespace,) = [d["metadata"]["name"] for d in docs if d["kind"] == "Namespace"]
    return namespace


def _service_pods(docs: list[dict[str, Any]]) -> dict[str, tuple[dict[str, str], dict[str, int]]]:
    """Each Deployment's pod labels and its named ports."""
    pods = {}
    for d in docs:
        if d["kind"] == "Deployment":
            template = d["spec"]["template"]
            ports = {p["name"]: p["containerPort"] for c in template["spec"]["containers"] for p in c.get("ports", [])}
            pods[d["metadata"]["name"]] = (template["metadata"]["labels"], ports)
    return pods


def _policies(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == "NetworkPolicy"]


@pytest.mark.parametrize("target", OVERLAYS)
def test_prometheus_scrapes_every_service_and_nobody_else_gets_in(rendered, target):
    docs = rendered[target]
    settings, namespace, policies = _settings(target), _namespace(docs), _policies(docs)
    prometheus = Peer(settings["prometheusNamespace"], {"app.kubernetes.io/name": "prometheus"})
    controller = Peer(settings["ingressControllerNamespace"], {"app.kubernetes.io/name": "ingress-nginx"})
    neighbour = Peer(namespace, {"app.kubernetes.io/name": "discovery"})
    refused = {
        "another pod of Prometheus's namespace": Peer(settings["prometheusNamespace"], {"app": "grafana"}),
        "a Prometheus of another namespace": Peer("tenant-a", {"app.kubernetes.io/name": "prometheus"}),
        "a pod of another namespace": Peer("default", {}),
        "an address outside the cluster": Peer(None, {}, PUBLIC_ADDRESS),
    }
    pods = _service_pods(docs)
    assert set(pods) == set(SERVICES)
    for name, (labels, ports) in pods.items():
        port = ports["http"]
        for who, peer in {
            "Prometheus": prometheus,
            "the ingress controller": controller,
            "the namespace": neighbour,
        }.items():
            assert _allowed(policies, "Ingress", namespace, labels, peer, port, "http"), f"{name}: {who} is refused"
        for who, peer in refused.items():
            assert not _allowed(policies, "Ingress", namespace, labels, peer, port, "http"), f"{name}: {who} gets in"
        assert not _allowed(policies, "Ingress", namespace, labels, prometheus, port + 1000), f"{name}: another port"


@pytest.mark.parametrize("target", OVERLAYS)
def test_the_services_reach_only_what_they_need(rendered, target):
    docs = rendered[target]
    settings, namespace, policies = _settings(target), _namespace(docs), _policies(docs)
    pods = _service_pods(docs)
    dns = Peer("kube-system", {"k8s-app": "kube-dns"})
    in_namespace = {
        "postgres": Peer(namespace, {"app.kubernetes.io/name": "postgres"}),
        "redis": Peer(namespace, {"app.kubernetes.io/name": "redis"}),
    }
    datastores_cidr = settings.get("datastoresCIDR", "10.0.0.0/8")
    datastore_ip = str(next(ipaddress.ip_network(datastores_cidr).hosts()))
    for name, (labels, _) in pods.items():

        def may(peer: Peer, port: int, protocol: str = "TCP", labels: dict[str, str] = labels) -> bool:
            return _allowed(policies, "Egress", namespace, labels, peer, port, protocol=protocol)

        assert may(dns, 53, "UDP") and may(dns, 53, "TCP"), f"{name}: DNS"
        for other, (other_labels, other_ports) in pods.items():
            assert may(Peer(namespace, other_labels), other_ports["http"]), f"{name} -> {other}"
        uses_database = name != "discovery"
        assert may(in_namespace["postgres"], 5432), f"{name}: PostgreSQL in the namespace (dev's, CloudNativePG's)"
        assert may(in_namespace["redis"], 6379), f"{name}: Redis in the namespace"
        assert may(Peer(None, {}, datastore_ip), 5432) == uses_database, f"{name}: PostgreSQL at {datastore_ip}"
        assert may(Peer(None, {}, datastore_ip), 6379) == uses_database, f"{name}: Redis at {datastore_ip}"
        # The public web on 443: the authorization server only (metadata documents, the webhook).
        assert may(Peer(None, {}, PUBLIC_ADDRESS), 443) == (name == "authz"), name
        for port in (80, 22, 5432, 6379):
            assert not may(Peer(None, {}, PUBLIC_ADDRESS), port), f"{name}: the public web on {port}"
        for port in (80, 443):
            assert not may(Peer(None, {}, METADATA_SERVICE), port), f"{name}: the metadata service"
        assert not may(Peer("default", {}), 8080), f"{name}: another namespace's pods"


@pytest.mark.parametrize("target", OVERLAYS)
def test_namespaces_are_settings_of_the_overlay(rendered, target):
    """The values of settings.yaml are the ones the rendered policies carry."""
    docs = rendered[target]
    settings = _settings(target)
    by_name = {p["metadata"]["name"]: p for p in _policies(docs)}
    selector = by_name["allow-from-ingress-controller"]["spec"]["ingress"][0]["from"][0]["namespaceSelector"]
    assert selector == {"matchLabels": {"kubernetes.io/metadata.name": settings["ingressControllerNamespace"]}}
    scrape = by_name["allow-prometheus-scrape"]["spec"]["ingress"][0]["from"][0]
    assert scrape["namespaceSelector"] == {
        "matchLabels": {"kubernetes.io/metadata.name": settings["prometheusNamespace"]}
    }
    if "datastoresCIDR" in settings:
        block = by_name["allow-egress-datastores"]["spec"]["egress"][0]["to"][0]["ipBlock"]
        assert block == {"cidr": settings["datastoresCIDR"]}
    assert all(d["metadata"].get("namespace") == _namespace(docs) for d in docs if d["kind"] != "Namespace")


def test_prometheus_configuration_scrapes_every_overlays_namespace(rendered):
    config = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yaml").read_text())
    (job,) = [j for j in config["scrape_configs"] if j["job_name"] == "courseschool"]
    (discovery,) = job["kubernetes_sd_configs"]
    watched = set(discovery["namespaces"]["names"])
    for target in OVERLAYS:
        assert _namespace(rendered[target]) in watched, target


def test_dev_datastores_are_the_ones_its_secret_names(rendered):
    """The dev overlay's DATABASE_URL and REDIS_URL reach Services the overlay creates."""
    import base64
    from urllib.parse import urlsplit

    docs = rendered["overlays/dev"]
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
    (secret,) = [d for d in docs if d["kind"] == "Secret" and d["metadata"]["name"].startswith("courseschool-secrets")]
    for key, port in (("DATABASE_URL", 5432), ("REDIS_URL", 6379)):
        url = urlsplit(base64.b64decode(secret["data"][key]).decode())
        assert url.hostname in services, f"{key}: {url.hostname} is not a Service of the overlay"
        assert url.port == port and services[url.hostname]["spec"]["ports"][0]["port"] == port


def test_prod_examples_name_the_operators_objects():
    """The prod overlay's examples (not applied by it): a CloudNativePG Cluster and a Redis
    with Sentinel; what Kubernetes itself defines in them validates strictly."""
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    found = {}
    for path in sorted((K8S / "overlays" / "prod" / "examples").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc:
                continue
            found[doc["kind"]] = doc
            if "." not in doc["apiVersion"].split("/")[0] or doc["apiVersion"].startswith("networking.k8s.io/"):
                kubernetes_validate.validate(doc, "1.30.0", strict=True)
    assert found["Cluster"]["apiVersion"].startswith("postgresql.cnpg.io/")
    assert found["Cluster"]["spec"]["instances"] >= 3 and found["Cluster"]["spec"]["minSyncReplicas"] >= 1
    assert found["RedisFailover"]["spec"]["sentinel"]["replicas"] >= 3
    kustomization = yaml.safe_load((K8S / "overlays" / "prod" / "kustomization.yaml").read_text())
    assert not [r for r in kustomization["resources"] if r.startswith("examples")], "examples are not applied"

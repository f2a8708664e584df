"""Writes many objects into a real API server quickly: server-side applies (PATCH with
application/apply-patch+yaml, field manager kube-seed, so managedFields are the server's own
record of an Apply) over keep-alive HTTPS connections from a few threads, as a controller would,
far faster than kubectl (which re-reads discovery and writes one object at a time).

    python3 tests/lib/kube_seed.py --kubeconfig FILE --pods 20000 [--namespaces 10]

Used by the realkube suite and bench/initial-sync --server real.
"""

import argparse
import base64
import http.client
import json
import os
import ssl
import sys
import tempfile
import threading
import time
import urllib.parse

import yaml


def load_kubeconfig(path):
    with open(path, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    cluster = config["clusters"][0]["cluster"]
    user = config["users"][0]["user"]
    return (cluster["server"], base64.b64decode(cluster["certificate-authority-data"]),
            user["token"])


class Client:
    """One keep-alive HTTPS connection to the API server."""

    def __init__(self, kubeconfig):
        url, ca, self.token = load_kubeconfig(kubeconfig)
        parsed = urllib.parse.urlparse(url)
        self.host, self.port = parsed.hostname, parsed.port
        with tempfile.NamedTemporaryFile("wb", suffix=".crt", delete=False) as f:
            f.write(ca)
            ca_file = f.name
        self.ctx = ssl.create_default_context(cafile=ca_file)
        os.unlink(ca_file)
        self.conn = None

    def request(self, method, path, body=None, content_type="application/json"):
        for attempt in range(5):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                        timeout=60)
            headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
            if body is not None:
                headers["Content-Type"] = content_type
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                data = response.read()
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 4:
                    raise
                continue
            if response.status == 429 or response.status >= 500:
                time.sleep(0.05 * (attempt + 1))
                continue
            return response.status, data
        return response.status, data


def pod(name, namespace, index):
    """A pod shaped like a real workload's: labels, requests, probes, an env and a volume."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace,
                     "labels": {"app": f"svc-{index % 50}", "tier": "backend",
                                "pod-template-hash": f"{index % 997:05x}"},
                     "annotations": {"prometheus.io/scrape": "true",
                                     "prometheus.io/port": "9090"}},
        "spec": {
            "containers": [{
                "name": "app", "image": f"registry.example/team/svc-{index % 50}:1.{index % 7}",
                "ports": [{"containerPort": 8080, "name": "http"},
                          {"containerPort": 9090, "name": "metrics"}],
                "env": [{"name": "LOG_LEVEL", "value": "info"},
                        {"name": "POD_NAME",
                         "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"},
                              "limits": {"memory": "256Mi"}},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080},
                                   "periodSeconds": 10},
                "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}]}],
            "volumes": [{"name": "config", "configMap": {"name": "app-config"}}]}}


APPLY = "application/apply-patch+yaml"  # JSON is YAML
FIELD_MANAGER = "kube-seed"


def apply(client, path, obj):
    """Server-side applies @obj at @path (its own URL): (status, body); 201 created, 200 kept
    or changed."""
    return client.request("PATCH", f"{path}?fieldManager={FIELD_MANAGER}&force=true",
                          json.dumps(obj), content_type=APPLY)


def ensure_namespace(client, namespace):
    status, data = apply(client, f"/api/v1/namespaces/{namespace}",
                         {"apiVersion": "v1", "kind": "Namespace",
                          "metadata": {"name": namespace}})
    if status not in (200, 201):
        raise RuntimeError(f"applying namespace {namespace}: {status} {data[:200]!r}")


def seed_pods(kubeconfig, count, namespaces=10, threads=8, prefix="seed"):
    """Applies @count pods spread over @namespaces namespaces; returns the namespaces' names."""
    client = Client(kubeconfig)
    names = [f"{prefix}-{n}" for n in range(namespaces)]
    for namespace in names:
        ensure_namespace(client, namespace)
    errors = []
    lock = threading.Lock()
    cursor = iter(range(count))

    def work():
        mine = Client(kubeconfig)
        while True:
            with lock:
                index = next(cursor, None)
            if index is None or errors:
                return
            namespace = names[index % namespaces]
            name = f"{prefix}-pod-{index:06d}"
            status, data = apply(mine, f"/api/v1/namespaces/{namespace}/pods/{name}",
                                 pod(name, namespace, index))
            if status not in (200, 201):
                with lock:
                    errors.append(f"pod {index}: {status} {data[:200]!r}")

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        raise RuntimeError(f"{len(errors)} pods not created, first: {errors[0]}")
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--pods", type=int, required=True)
    parser.add_argument("--namespaces", type=int, default=10)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--prefix", default="seed")
    args = parser.parse_args()
    started = time.monotonic()
    seed_pods(args.kubeconfig, args.pods, args.namespaces, args.threads, args.prefix)
    elapsed = time.monotonic() - started
    print(f"{args.pods} pods in {elapsed:.1f} s ({args.pods / elapsed:.0f}/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

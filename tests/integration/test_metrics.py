# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""/metrics of a broker-mode daemon, read as Prometheus reads it: a real scrape taken after a
sync, watch events and requests passes `promtool check metrics` without a word, and the
conventions that doc/metrics.md promises hold (counters typed counter and named _total, every
series there from the first scrape at zero, build info, process metrics, histograms whose
buckets add up).

The first scrape is taken while the daemon waits for a broker that is not there yet, before
any run, request or session: whatever is there then is "from the start". Every wait is for
state (an HTTP answer, a metric, a message on the wire).
"""

import json
import os
import re
import shutil
import subprocess
import time

from kubesim import Kubesim
from meshsync_run import DAEMON
from test_broker_mode import (CORE, Daemon, NatsServer, Seen, free_port, request,
                              wait_for_listener)

SMALL = {"pods": 20, "namespaces": 2}
METRICS_DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "doc",
                           "metrics.md")

# Running totals: each must be a counter named *_total, present at 0 before anything happened.
COUNTERS_FROM_START = [
    "meshsync_relists_total",
    "meshsync_watch_restarts_total",
    "meshsync_watch_errors_total",
    "meshsync_cluster_identity_checks_total",
    "meshsync_watch_list_changes_total",
    "meshsync_objects_skipped_total",
    "meshsync_syncs_total",
    "meshsync_run_failures_total",
    "meshsync_broker_reconnects_total",
    "meshsync_broker_messages_published_total",
    "meshsync_broker_messages_oversize_total",
    "meshsync_broker_publish_errors_total",
    "meshsync_broker_resent_messages_total",
    "meshsync_broker_confirmations_total",
    "meshsync_session_messages_dropped_total",
    "meshsync_conversion_cache_hits_total",
    "meshsync_conversion_cache_misses_total",
]
GAUGES_FROM_START = [
    "meshsync_objects",
    "meshsync_ready",
    "meshsync_broker_buffered_bytes",
    "meshsync_broker_window_bytes",
    "meshsync_broker_window_messages",
    "meshsync_conversion_cache_bytes",
]
REQUEST_ENTITIES = ["informer-store", "resync-discovery", "meshsync-meta", "active-exec",
                    "log-stream", "exec-request", "other", "invalid"]
PROCESS_GAUGES = ["process_resident_memory_bytes", "process_virtual_memory_bytes",
                  "process_open_fds", "process_max_fds", "process_start_time_seconds"]


def parse(text):
    """{family: {"help", "type", "samples": {(sample name, labels text): value}}}, checking
    that every sample belongs to a family announced with HELP and TYPE before it."""
    families = {}
    current = None
    for line in text.splitlines():
        m = re.fullmatch(r"# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)", line)
        if m:
            family = families.setdefault(m.group(2), {"samples": {}})
            family[m.group(1).lower()] = m.group(3)
            current = m.group(2)
            continue
        m = re.fullmatch(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)", line)
        assert m, f"not a sample line: {line!r}"
        name, labels, value = m.group(1), m.group(2) or "", float(m.group(3))
        assert current is not None and (
            name == current or (families[current].get("type") == "histogram" and
                                name in (current + "_bucket", current + "_sum",
                                         current + "_count"))), \
            f"{name} outside its family (after {current})"
        families[current]["samples"][(name, labels)] = value
    for name, family in families.items():
        assert "help" in family and "type" in family, f"{name} without HELP or TYPE"
    return families


def labels_of(text):
    return dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', text))


def value(families, name, **labels):
    """The value of the one sample of family @name whose labels are exactly @labels."""
    for (sample, text), v in families[name]["samples"].items():
        if sample == name and labels_of(text) == labels:
            return v
    raise AssertionError(f"no sample {name}{labels}: {families[name]['samples']}")


def promtool_check(text):
    promtool = shutil.which("promtool")
    assert promtool, "promtool not found: scripts/bootstrap installs the prometheus package"
    done = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                          text=True, timeout=60)
    return done.returncode, (done.stdout + done.stderr).strip()


def documented():
    """{name: type} of the rows of doc/metrics.md's tables."""
    with open(METRICS_DOC, encoding="utf-8") as f:
        return dict(re.findall(r"^\| `([a-z_]+)` \| (counter|gauge|histogram) \|", f.read(),
                               re.M))


def check_conventions(families):
    for name, family in families.items():
        kind = family["type"]
        if kind == "counter":
            assert name.endswith("_total"), f"counter {name} without _total"
        else:
            assert not name.endswith("_total"), f"{kind} {name} named _total"
        if kind == "histogram":
            check_histogram(name, family)
        else:
            assert all(sample == name for sample, _ in family["samples"]), name


def check_histogram(name, family):
    """Per series: le ascending, counts cumulative, le="+Inf" equal to _count, a _sum."""
    series = {}
    for (sample, text), v in family["samples"].items():
        labels = labels_of(text)
        if sample == name + "_bucket":
            le = labels.pop("le")
            key = tuple(sorted(labels.items()))
            series.setdefault(key, {"buckets": []})["buckets"].append((float(le), v))
        else:
            suffix = sample[len(name) + 1:]
            series.setdefault(tuple(sorted(labels.items())), {"buckets": []})[suffix] = v
    assert series, f"histogram {name} without series"
    for key, one in series.items():
        bounds = [le for le, _ in one["buckets"]]
        counts = [c for _, c in one["buckets"]]
        assert bounds == sorted(bounds) and bounds[-1] == float("inf"), (name, key, bounds)
        assert counts == sorted(counts), (name, key, counts)
        assert counts[-1] == one["count"], (name, key, counts, one)
        assert "sum" in one, (name, key)


def test_scrape_passes_promtool_and_conventions(tmp_path):
    port = free_port()
    started = time.time()
    with Kubesim(**SMALL) as sim:
        # no broker yet: the daemon waits for it, with its health server up
        with Daemon(str(tmp_path), sim.kubeconfig, f"nats://127.0.0.1:{port}") as run:
            status, first_text = run.http("/metrics")
            assert status == 200
            first = parse(first_text)
            for name in COUNTERS_FROM_START:
                assert first[name]["type"] == "counter", name
                assert value(first, name) == 0, name
            for name in GAUGES_FROM_START:
                assert first[name]["type"] == "gauge", name
                assert value(first, name) == 0, name
            for entity in REQUEST_ENTITIES:
                assert value(first, "meshsync_requests_total", entity=entity) == 0, entity
            for kind in ("log", "exec"):
                assert value(first, "meshsync_sessions_started_total", kind=kind) == 0
                assert value(first, "meshsync_sessions_failed_total", kind=kind) == 0
                assert value(first, "meshsync_sessions_refused_total", kind=kind,
                             reason="limit") == 0
            assert value(first, "meshsync_sessions_refused_total", kind="exec",
                         reason="exec-disabled") == 0
            assert first["meshsync_event_latency_seconds"]["type"] == "histogram"
            assert first["meshsync_event_latency_seconds"]["samples"][
                ("meshsync_event_latency_seconds_count", "")] == 0
            assert promtool_check(first_text) == (0, "")
            check_conventions(first)

            with NatsServer(port=port) as nats, nats.client() as nc:
                nc.subscribe(CORE)
                seen = Seen(nc)
                run.wait_synced()
                # a watch event after the sync: one latency observation at least
                marker = sim.create({"apiVersion": "v1", "kind": "ConfigMap",
                                     "metadata": {"name": "metrics-marker",
                                                  "namespace": "default"},
                                     "data": {"a": "b"}})
                seen.until(lambda: marker["metadata"]["uid"] in seen.last, "the marker")

                # A pod changed twice without touching its spec: the first watch event
                # converts the spec (the initial list went around the cache), the second
                # copies it, and all three messages carry the same spec.
                status, pods = sim.request("GET", "/api/v1/pods?limit=1")
                assert status == 200
                pod = pods["items"][0]
                uid = pod["metadata"]["uid"]
                listed_spec = seen.last[uid][1]["spec"]
                pod.update(apiVersion="v1", kind="Pod")
                for round_ in ("1", "2"):
                    pod["metadata"].setdefault("labels", {})["cache-round"] = round_
                    del pod["metadata"]["resourceVersion"]
                    pod = sim.replace(pod)
                    seen.until(lambda: {"key": "cache-round", "value": round_} in [
                        {"key": l["key"], "value": l["value"]}
                        for l in seen.last[uid][1]["metadata"].get("labels") or []],
                        f"the pod's change {round_}")
                    assert seen.last[uid][1]["spec"] == listed_spec
                assert run.metric("meshsync_conversion_cache_misses_total") >= 1
                assert run.metric("meshsync_conversion_cache_hits_total") >= 1
                assert run.metric("meshsync_conversion_cache_bytes") > len(
                    json.dumps(pod["spec"], separators=(",", ":")))
                wait_for_listener(nats)
                nc.subscribe("meshsync-meta")
                request(nc, "meshsync-meta")
                request(nc, "no-such-entity")
                run.wait_metric("meshsync_requests_total", 1, entity="other")
                run.wait_metric("meshsync_requests_total", 1, entity="meshsync-meta")

                status, text = run.http("/metrics")
                assert status == 200
                code, lint = promtool_check(text)
                assert (code, lint) == (0, ""), text
                families = parse(text)
                check_conventions(families)

                # what the first scrape had is still there, in the same type
                for name, family in first.items():
                    assert families[name]["type"] == family["type"], name
                assert value(families, "meshsync_syncs_total") == 1
                assert value(families, "meshsync_ready") == 1
                assert value(families, "meshsync_broker_messages_published_total") >= 21

                build = [labels_of(t) for (_, t) in
                         families["meshsync_build_info"]["samples"]]
                assert families["meshsync_build_info"]["type"] == "gauge"
                assert len(build) == 1 and set(build[0]) == {"version", "nats_c", "glib",
                                                             "libsoup"}, build
                assert all(re.match(r"\d+\.\d+", build[0][k])
                           for k in ("nats_c", "glib", "libsoup")), build
                # the build's version, as --version says it (never upstream's "Not Set")
                assert build[0]["version"] == subprocess.run(
                    [DAEMON, "--version"], capture_output=True, text=True,
                    check=True).stdout.split()[-1], build
                assert value(families, "meshsync_build_info", **build[0]) == 1

                for name in PROCESS_GAUGES:
                    assert families[name]["type"] == "gauge", name
                assert families["process_cpu_seconds_total"]["type"] == "counter"
                resident = value(families, "process_resident_memory_bytes")
                assert 0 < resident <= value(families, "process_virtual_memory_bytes")
                assert 0 < value(families, "process_open_fds") <= value(families,
                                                                         "process_max_fds")
                assert value(families, "process_cpu_seconds_total") >= 0
                start = value(families, "process_start_time_seconds")
                assert started - 1 <= start <= time.time() + 1, (started, start)

                latency = families["meshsync_event_latency_seconds"]["samples"]
                assert latency[("meshsync_event_latency_seconds_count", "")] >= 1
                assert latency[("meshsync_event_latency_seconds_sum", "")] > 0
                les = [labels_of(t)["le"] for (s, t) in latency if s.endswith("_bucket")]
                assert les[0] == "0.0001" and les[-2:] == ["10", "+Inf"], les

                sync = families["meshsync_initial_sync_seconds"]["samples"]
                resources = {labels_of(t)["resource"] for (s, t) in sync
                             if s.endswith("_count")}
                assert "pods.v1." in resources, resources
                for res in resources:
                    labels = '{resource="%s"}' % res
                    assert sync[("meshsync_initial_sync_seconds_count", labels)] == 1, res

                # doc/metrics.md names every family served, with its type, and nothing else
                served = {name: family["type"] for name, family in families.items()}
                assert served == documented()
            assert run.terminate() == 0

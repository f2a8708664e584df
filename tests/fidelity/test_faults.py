"""meshsync-kubesim's answers to reads ahead of it, and the faults it arms for clients.

A read at a resourceVersion the server has not reached gets what a 1.31 API server answers
(504 "Too large resource version" after a wait, etcd's errors for reads with a limit, a quiet
plain watch); the faults armed under /kubesim/faults answer the next list or watch requests
with HTTP errors, a reset connection, a truncated page, garbage, or hostile objects, and are
counted, so that each test checks its faults were consumed. The real clients (python3-kubernetes
and kubectl) must react to them as they do to a real server.
"""

import http.client
import json
import ssl
import sys
import threading
import urllib.parse

import pytest
import urllib3
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

import kubesim
from test_kubectl import Kubectl

PODS = 40
NAMESPACES = 2
# Upper bound for waiting on conditions; a healthy run never gets close to it.
WAIT = 60


def too_large(wanted, current, retry=1):
    details = {"causes": [{"reason": "ResourceVersionTooLarge",
                           "message": "Too large resource version"}]}
    if retry:
        details["retryAfterSeconds"] = retry
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"Timeout: Too large resource version: {wanted}, current: {current}",
            "reason": "Timeout", "details": details, "code": 504}


def make_api(sim):
    configuration = client.Configuration()
    config.load_kube_config(config_file=sim.kubeconfig, client_configuration=configuration,
                            persist_config=False)
    return client.ApiClient(configuration)


@pytest.fixture
def sim():
    """Reads ahead of the store answer at once: the tests about the wait set their own."""
    with kubesim.Kubesim(pods=PODS, namespaces=NAMESPACES,
                         extra=["--rv-block-timeout", "0"]) as s:
        yield s


@pytest.fixture
def v1(sim):
    with make_api(sim) as api:
        yield client.CoreV1Api(api)


def current_rv(sim):
    return int(sim.stats()["resourceVersion"])


def config_map(name, namespace="default"):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace}, "data": {"k": name}}


class Raw:
    """One HTTP request on its own connection, read as it comes: for answers clients would
    hide (resets, truncated bodies, garbage, endless lists)."""

    def __init__(self, sim, path):
        url = urllib.parse.urlsplit(sim.url)
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        self.conn = http.client.HTTPSConnection(url.hostname, url.port, context=context,
                                                timeout=WAIT)
        self.conn.request("GET", path, headers={"Authorization": "Bearer " + sim.token})
        self.response = self.conn.getresponse()

    def close(self):
        self.conn.close()


def get_json(sim, path):
    status, body = sim.request("GET", path)
    assert status == 200, body
    return body


# --- reads ahead of the store --------------------------------------------------------------

def test_list_ahead_of_the_store_gets_504_too_large(sim, v1):
    rv = current_rv(sim)
    with pytest.raises(ApiException) as failure:
        v1.list_pod_for_all_namespaces(resource_version=str(rv + 10))
    assert failure.value.status == 504
    assert json.loads(failure.value.body) == too_large(rv + 10, rv)
    # NotOlderThan said explicitly is the same read
    status, body = sim.request("GET", f"/api/v1/pods?resourceVersion={rv + 10}"
                                      "&resourceVersionMatch=NotOlderThan")
    assert (status, body) == (504, too_large(rv + 10, rv))


def test_list_ahead_of_the_store_is_served_once_the_store_gets_there():
    with kubesim.Kubesim(pods=PODS, namespaces=NAMESPACES,
                         extra=["--rv-block-timeout", str(WAIT)]) as sim:
        rv = current_rv(sim)
        lists = sim.stats()["listRequests"]
        answer = {}

        def read():
            answer["result"] = sim.request("GET", f"/api/v1/configmaps?resourceVersion={rv + 1}")

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        sim.wait_for(lambda: sim.stats()["listRequests"] > lists, "the list to arrive")
        sim.create(config_map("catches-up"))
        reader.join(timeout=WAIT)
        status, body = answer["result"]
        assert status == 200, body
        assert int(body["metadata"]["resourceVersion"]) >= rv + 1
        assert "catches-up" in {item["metadata"]["name"] for item in body["items"]}


def test_list_ahead_with_a_limit_gets_etcds_answers(sim):
    rv = current_rv(sim)
    # RV with a limit is an exact read from etcd, which has no such revision yet
    status, body = sim.request("GET", f"/api/v1/pods?resourceVersion={rv + 5}&limit=10")
    assert (status, body) == (500, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                    "status": "Failure", "code": 500,
                                    "message": "etcdserver: mvcc: required revision is a "
                                               "future revision"})
    status, body = sim.request("GET", f"/api/v1/pods?resourceVersion={rv + 5}"
                                      "&resourceVersionMatch=Exact")
    assert status == 500 and "future revision" in body["message"]
    # etcd checks NotOlderThan itself, at once and without a retry hint
    status, body = sim.request("GET", f"/api/v1/pods?resourceVersion={rv + 5}&limit=10"
                                      "&resourceVersionMatch=NotOlderThan")
    assert (status, body) == (504, too_large(rv + 5, rv, retry=0))


def test_watch_list_ahead_of_the_store_gets_the_504_in_its_stream(sim):
    rv = current_rv(sim)
    raw = Raw(sim, f"/api/v1/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
                   f"&resourceVersionMatch=NotOlderThan&resourceVersion={rv + 3}")
    try:
        assert raw.response.status == 200
        lines = [line for line in raw.response.read().split(b"\n") if line]
    finally:
        raw.close()
    assert [json.loads(line) for line in lines] == \
        [{"type": "ERROR", "object": too_large(rv + 3, rv)}]


def test_plain_watch_ahead_of_the_store_stays_quiet_until_events_pass_it(sim, v1):
    rv = current_rv(sim)
    events = []
    stream = watch.Watch()
    done = threading.Event()

    def run():
        for event in stream.stream(v1.list_namespaced_config_map, "default",
                                   resource_version=str(rv + 2), timeout_seconds=WAIT):
            events.append(event)
            stream.stop()
        done.set()

    threading.Thread(target=run, daemon=True).start()
    sim.wait_for_watches(1)
    for name in ("before", "at", "after"):  # resourceVersions rv+1, rv+2, rv+3
        sim.create(config_map(name))
    assert done.wait(WAIT), "the watch saw nothing"
    assert [(e["type"], e["object"].metadata.name) for e in events] == [("ADDED", "after")]
    assert events[0]["object"].metadata.resource_version == str(rv + 3)


# --- HTTP errors ---------------------------------------------------------------------------

def test_list_faults_answer_with_the_status_of_their_code(sim, v1):
    expired = sim.arm_fault("list", code=410)
    with pytest.raises(ApiException) as failure:
        v1.list_pod_for_all_namespaces()
    assert failure.value.status == 410
    assert json.loads(failure.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "The resourceVersion for the provided list is too old.",
        "reason": "Expired", "code": 410}
    assert sim.fault(expired)["consumed"] == 1

    internal = sim.arm_fault("list", code=500, count=2)
    for _ in range(2):
        with pytest.raises(ApiException) as failure:
            v1.list_namespace()
        assert failure.value.status == 500
        assert json.loads(failure.value.body)["reason"] == "InternalError"
    unavailable = sim.arm_fault("list", code=503)
    with pytest.raises(ApiException) as failure:
        v1.list_namespace()
    assert json.loads(failure.value.body)["reason"] == "ServiceUnavailable"
    assert sim.fault(internal)["remaining"] == 0 and sim.fault(unavailable)["remaining"] == 0
    assert len(v1.list_pod_for_all_namespaces().items) == PODS


def test_faults_wait_for_the_requests_they_name(sim, v1):
    by_path = sim.arm_fault("list", code=500, path="/api/v1/namespaces/team-1/pods")
    by_resource = sim.arm_fault("both", code=502, resource="deployments.apps")
    # neither is for these
    assert len(v1.list_pod_for_all_namespaces().items) == PODS
    assert v1.list_namespaced_pod("default").items
    assert sim.fault(by_path)["consumed"] == 0
    with pytest.raises(ApiException) as failure:
        v1.list_namespaced_pod("team-1")
    assert failure.value.status == 500
    with pytest.raises(ApiException) as failure:
        client.AppsV1Api(v1.api_client).list_deployment_for_all_namespaces()
    # nothing in Kubernetes answers 502: a proxy in front of it does, in plain text
    assert (failure.value.status, failure.value.body) == (502, "502 Bad Gateway\n")
    assert [sim.fault(f)["consumed"] for f in (by_path, by_resource)] == [1, 1]
    assert sim.stats()["faultsArmed"] == 0


def test_watch_gets_410_as_an_http_answer(sim, v1):
    listed = v1.list_namespaced_pod("team-1")
    fault = sim.arm_fault("watch", code=410)
    with pytest.raises(ApiException) as failure:
        for _ in watch.Watch().stream(v1.list_namespaced_pod, "team-1",
                                      resource_version=listed.metadata.resource_version,
                                      timeout_seconds=WAIT):
            pass
    assert failure.value.status == 410
    body = json.loads(failure.value.body)
    assert body["reason"] == "Expired"
    assert body["message"].startswith(f"too old resource version: "
                                      f"{listed.metadata.resource_version} (")
    assert sim.fault(fault)["consumed"] == 1


def test_too_large_fault_answers_a_watch_with_504(sim):
    rv = current_rv(sim)
    fault = sim.arm_fault("watch", fault="too-large")
    status, body = sim.request("GET", f"/api/v1/pods?watch=1&resourceVersion={rv + 7}")
    assert (status, body) == (504, too_large(rv + 7, rv))
    assert sim.fault(fault)["consumed"] == 1


def test_429_with_retry_after_is_retried_by_both_clients(sim, v1):
    fault = sim.arm_fault("list", code=429, retry_after=1)
    raw = Raw(sim, "/api/v1/pods")
    try:
        assert raw.response.status == 429
        assert raw.response.getheader("Retry-After") == "1"
        assert raw.response.getheader("Content-Type").startswith("text/plain")
        assert raw.response.read() == b"Too many requests, please try again later.\n"
    finally:
        raw.close()
    assert sim.fault(fault)["consumed"] == 1

    # urllib3, under the Python client, honours Retry-After on 429
    fault = sim.arm_fault("list", code=429, retry_after=1)
    assert len(v1.list_pod_for_all_namespaces().items) == PODS
    assert sim.fault(fault)["consumed"] == 1
    # so does client-go, under kubectl, on 429 and on a 5xx that carries it
    kubectl = Kubectl(sim)
    try:
        faults = [sim.arm_fault("list", code=429, retry_after=1),
                  sim.arm_fault("list", code=503, retry_after=1)]
        rows = kubectl.run("get", "pods", "-A", "--no-headers").stdout.splitlines()
        assert len(rows) == PODS
        assert [sim.fault(f)["consumed"] for f in faults] == [1, 1]
    finally:
        kubectl.close()


# --- broken bodies -------------------------------------------------------------------------

def raw_body(sim, path):
    raw = Raw(sim, path)
    try:
        assert raw.response.status == 200
        return raw.response.read()
    finally:
        raw.close()


def test_reset_in_the_middle_of_a_list(sim, v1):
    full = raw_body(sim, "/api/v1/pods")
    fault = sim.arm_fault("list", fault="reset", count=2)
    raw = Raw(sim, "/api/v1/pods")
    received = b""
    try:
        assert raw.response.status == 200
        with pytest.raises((ConnectionResetError, http.client.IncompleteRead, ssl.SSLError)):
            while True:
                chunk = raw.response.read1(65536)
                if not chunk:
                    break
                received += chunk
    finally:
        raw.close()
    assert 0 < len(received) < len(full)
    assert full.startswith(received)

    # the Python client retries a GET whose body broke off, and gets the whole list
    assert len(v1.list_pod_for_all_namespaces().items) == PODS
    assert sim.fault(fault)["consumed"] == 2
    # kubectl does not
    kubectl = Kubectl(sim)
    try:
        fault = sim.arm_fault("list", fault="reset")
        proc = kubectl.run("get", "pods", "-A", check=False)
        assert proc.returncode != 0
        assert "connection reset by peer" in proc.stderr
        assert sim.fault(fault)["consumed"] == 1
        assert len(kubectl.run("get", "pods", "-A", "--no-headers").stdout.splitlines()) == PODS
    finally:
        kubectl.close()


def test_reset_watch_ends_the_stream_without_a_word(sim, v1):
    fault = sim.arm_fault("watch", fault="reset")
    with pytest.raises(urllib3.exceptions.HTTPError):
        for _ in watch.Watch().stream(v1.list_namespaced_pod, "default", timeout_seconds=WAIT):
            pass
    assert sim.fault(fault)["consumed"] == 1


def test_truncated_page(sim):
    full = raw_body(sim, "/api/v1/namespaces/team-1/pods")
    sim.arm_fault("list", fault="truncated", at=200)
    raw = Raw(sim, "/api/v1/namespaces/team-1/pods")
    try:
        assert raw.response.status == 200
        assert raw.response.getheader("Content-Length") == "200"
        body = raw.response.read()
    finally:
        raw.close()
    assert body == full[:200]
    with pytest.raises(ValueError):
        json.loads(body)
    kubectl = Kubectl(sim)
    try:
        fault = sim.arm_fault("list", fault="truncated")
        proc = kubectl.run("get", "pods", "-A", "-o", "json", check=False)
        assert proc.returncode != 0 and "unexpected end of JSON input" in proc.stderr
        assert sim.fault(fault)["consumed"] == 1
    finally:
        kubectl.close()


def test_garbage_for_a_list_and_for_a_watch(sim, v1):
    fault = sim.arm_fault("both", fault="garbage", bytes=4096, count=2)
    raw = Raw(sim, "/api/v1/pods")
    try:
        body = raw.response.read()
    finally:
        raw.close()
    assert raw.response.status == 200 and len(body) == 4096
    assert b"\x00" in body
    raw = Raw(sim, "/api/v1/pods?watch=1")
    try:
        stream = raw.response.read()
    finally:
        raw.close()
    assert len(stream) == 4096 and stream.startswith(b"\x00")
    assert sim.fault(fault)["consumed"] == 2
    # kubesim itself is unharmed
    assert len(v1.list_pod_for_all_namespaces().items) == PODS


# --- hostile objects -----------------------------------------------------------------------

def rss_kib(sim):
    with open(f"/proc/{sim.proc.pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def depth_of(text):
    """The deepest nesting of a JSON text, counted without parsing it."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def test_endless_list_never_ends_and_costs_kubesim_nothing(sim):
    fault = sim.arm_fault("list", fault="endless")
    before = rss_kib(sim)
    raw = Raw(sim, "/api/v1/pods")
    target = 128 * 1024 * 1024
    read = 0
    head = b""
    try:
        assert raw.response.status == 200
        while read < target:
            chunk = raw.response.read1(1 << 20)
            assert chunk, f"the endless list ended after {read} bytes"
            if len(head) < 4096:
                head += chunk[:4096]
            read += len(chunk)
        # well past what kubesim holds ahead of a client (4 MiB)
        assert rss_kib(sim) - before < 64 * 1024
    finally:
        raw.close()
    assert head.startswith(b'{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"')
    assert b'-endless-0"' in head and b'"items":[{"metadata":' in head
    assert sim.fault(fault)["consumed"] == 1
    assert get_json(sim, "/api/v1/namespaces")["items"]

    # at a rate, items trickle
    sim.arm_fault("list", fault="endless", rate=20)
    raw = Raw(sim, "/api/v1/namespaces/team-1/pods")
    try:
        text = b""
        while text.count(b'"name":"') < 3:
            text += raw.response.read1(1 << 16)
    finally:
        raw.close()
    assert text.startswith(b'{"kind":"PodList"')


def test_object_nested_past_512_levels_among_a_page(sim):
    normal = get_json(sim, "/api/v1/namespaces/team-1/pods")["items"]
    fault = sim.arm_fault("list", fault="deep", depth=2000)
    raw = Raw(sim, "/api/v1/namespaces/team-1/pods")
    try:
        text = raw.response.read().decode()
    finally:
        raw.close()
    assert sim.fault(fault)["consumed"] == 1
    assert depth_of(text) == 2000 + 2  # the list object and its items array
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10000)  # Python's decoder recurses once per level
    try:
        body = json.loads(text)
    finally:
        sys.setrecursionlimit(limit)
    names = [item["metadata"]["name"] for item in body["items"]]
    assert len(names) == len(normal) + 1
    assert names.index(f"kubesim-deep-{fault}") == len(normal) // 2
    deep = body["items"][len(normal) // 2]
    assert deep["metadata"]["namespace"] == "team-1" and "kind" not in deep
    assert names[:len(normal) // 2] + names[len(normal) // 2 + 1:] == \
        [item["metadata"]["name"] for item in normal]


def test_huge_object_as_a_single_watch_line(sim):
    size = 150 * 1000 * 1000
    fault = sim.arm_fault("watch", fault="huge", bytes=size)
    before = rss_kib(sim)
    raw = Raw(sim, "/api/v1/namespaces/default/pods?watch=1")
    try:
        line = raw.response.readline()
    finally:
        raw.close()
    assert sim.fault(fault)["consumed"] == 1
    assert len(line) == len('{"type":"ADDED","object":') + size + len("}\n")
    event = json.loads(line)
    obj = event["object"]
    assert (event["type"], obj["kind"], obj["apiVersion"]) == ("ADDED", "Pod", "v1")
    assert len(json.dumps(obj, separators=(",", ":"))) == size
    # the padding is one shared buffer, not 150 MB of kubesim's memory
    assert rss_kib(sim) - before < 32 * 1024


def test_object_with_a_hundred_thousand_labels(sim, v1):
    fault = sim.arm_fault("list", fault="labels", labels=100000, path="/api/v1/pods")
    pods = v1.list_pod_for_all_namespaces().items
    assert sim.fault(fault)["consumed"] == 1
    crowded = [p for p in pods if p.metadata.name == f"kubesim-labels-{fault}"]
    assert len(crowded) == 1 and len(pods) == PODS + 1
    labels = crowded[0].metadata.labels
    assert len(labels) == 100000 and labels["kubesim.meshery.io/label-0099999"] == "v99999"

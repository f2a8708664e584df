"""Runs the meshsync daemon against meshsync-kubesim and reads what it wrote.

Every wait here polls for a condition (a log line, a process exit) and fails the test when a
generous deadline passes; nothing sleeps to let something happen.
"""

import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections import Counter

import yaml

DAEMON = os.environ.get("MESHSYNC_DAEMON", "meshsync")

# How much slower than a plain build the daemon runs here: the sanitizer setup (meson test
# --setup asan) sets MESHSYNC_TEST_TIME_SCALE, and every deadline and the run lengths that a
# test picks for the daemon's own timers are scaled by it.
TIME_SCALE = float(os.environ.get("MESHSYNC_TEST_TIME_SCALE", "1"))

# Generous: a loaded CI machine must not turn a slow run into a failure.
TIMEOUT = 90.0 * TIME_SCALE


def seconds(n):
    """@n seconds of the daemon's own time (a -stopAfter value), scaled as TIMEOUT is."""
    return f"{n * TIME_SCALE:g}s"

# The default watch set (upstream's built-in whitelist) as (plural, list path, kind,
# namespaced); types the simulator does not serve are skipped, as the daemon skips them.
WATCHED = [
    ("namespaces", "/api/v1/namespaces", "Namespace", False),
    ("configmaps", "/api/v1/configmaps", "ConfigMap", True),
    ("nodes", "/api/v1/nodes", "Node", False),
    ("secrets", "/api/v1/secrets", "Secret", True),
    ("persistentvolumes", "/api/v1/persistentvolumes", "PersistentVolume", False),
    ("persistentvolumeclaims", "/api/v1/persistentvolumeclaims", "PersistentVolumeClaim", True),
    ("replicasets", "/apis/apps/v1/replicasets", "ReplicaSet", True),
    ("pods", "/api/v1/pods", "Pod", True),
    ("services", "/api/v1/services", "Service", True),
    ("deployments", "/apis/apps/v1/deployments", "Deployment", True),
    ("statefulsets", "/apis/apps/v1/statefulsets", "StatefulSet", True),
    ("daemonsets", "/apis/apps/v1/daemonsets", "DaemonSet", True),
    ("ingresses", "/apis/networking.k8s.io/v1/ingresses", "Ingress", True),
    ("endpoints", "/api/v1/endpoints", "Endpoints", True),
    ("cronjobs", "/apis/batch/v1/cronjobs", "CronJob", True),
    ("endpointslices", "/apis/discovery.k8s.io/v1/endpointslices", "EndpointSlice", True),
    ("replicationcontrollers", "/api/v1/replicationcontrollers", "ReplicationController", True),
    ("storageclasses", "/apis/storage.k8s.io/v1/storageclasses", "StorageClass", False),
    ("clusterroles", "/apis/rbac.authorization.k8s.io/v1/clusterroles", "ClusterRole", False),
    ("volumeattachments", "/apis/storage.k8s.io/v1/volumeattachments", "VolumeAttachment",
     False),
    ("apiservices", "/apis/apiregistration.k8s.io/v1/apiservices", "APIService", False),
]

# Keys every KubernetesResource document carries (the fields without omitempty).
TOP_KEYS = {"id", "apiVersion", "kind", "model", "metadata", "cluster_id", "pattern_resource",
            "component_metadata"}
META_KEYS = {"id", "uid", "cluster_id"}


def list_objects(sim, path):
    """Every object kubesim holds under a list path, read through its Kubernetes API; None
    when it does not serve the type."""
    items, token = [], None
    while True:
        query = "?limit=500" + (f"&continue={token}" if token else "")
        status, body = sim.request("GET", path + query)
        if status == 404 and not items:
            return None
        assert status == 200, f"GET {path}: {status} {body}"
        items += body["items"]
        token = body["metadata"].get("continue")
        if not token:
            return items


def cluster_view(sim, plurals=None):
    """{uid: (kind, namespace, name)} for the watched kinds, as kubesim sees them."""
    view = {}
    for plural, path, kind, _ in WATCHED:
        if plurals is not None and plural not in plurals:
            continue
        for item in list_objects(sim, path) or []:
            meta = item["metadata"]
            view[meta["uid"]] = (kind, meta.get("namespace", ""), meta["name"])
    return view


def split_documents(text):
    """The YAML documents of a snapshot; each is followed by a '---' line."""
    if not text:
        return []
    assert text.endswith("---\n"), f"snapshot does not end with a separator: {text[-200:]!r}"
    chunks = re.split(r"^---\n", text, flags=re.M)
    assert chunks[-1] == "", "text after the last separator"
    return [yaml.safe_load(chunk) for chunk in chunks[:-1]]


def read_documents(path):
    with open(path, encoding="utf-8") as f:
        return split_documents(f.read())


def uid_counts(documents):
    return Counter(doc["metadata"]["uid"] for doc in documents)


def extended_events(path):
    """[(event type, kind, namespace, name, uid)] in the order the extended file has them."""
    events = []
    for doc in read_documents(path):
        assert set(doc) == {"EventType", "Object"}, sorted(doc)
        meta = doc["Object"]["metadata"]
        events.append((doc["EventType"], doc["Object"]["kind"], meta.get("namespace", ""),
                       meta.get("name"), meta["uid"]))
    return events


class DaemonProcess:
    """One meshsync process started with @argv; its log (GLib writes debug lines to stdout,
    the rest to stderr) goes to a file the test polls."""

    def __init__(self, tmpdir, argv, env=None):
        self.log_path = os.path.join(tmpdir, "meshsync-%d.log" % id(self))
        self.argv = argv
        self._log = open(self.log_path, "w", encoding="utf-8")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, env=env)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._log.close()

    def log(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def wait_for(self, predicate, what, timeout=TIMEOUT):
        """Polls @predicate(log text); fails if the daemon exits first or time runs out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log()
            if predicate(text):
                return text
            if self.proc.poll() is not None:
                text = self.log()
                if predicate(text):
                    return text
                raise AssertionError(f"meshsync exited with {self.proc.returncode} before "
                                     f"{what}:\n{text}")
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}:\n{self.log()}")

    def wait_for_line(self, needle, count=1, timeout=TIMEOUT):
        return self.wait_for(lambda text: text.count(needle) >= count,
                             f"{count} x {needle!r}", timeout)

    def wait_synced(self, count=1):
        return self.wait_for_line("initial sync complete", count)

    def wait_exit(self, timeout=TIMEOUT):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"meshsync did not exit:\n{self.log()}") from None

    def terminate(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.wait_exit()

    def health_port(self):
        """The health port the daemon chose (it is started with --health-port 0)."""
        text = self.wait_for(lambda t: re.search(r"listening on [^ ]*:(\d+)", t),
                             "the health port in the log", 30)
        return int(re.search(r"listening on [^ ]*:(\d+)", text).group(1))

    def http(self, path):
        url = f"http://127.0.0.1:{self.health_port()}{path}"
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()


# A port of its own: 11000 may be taken by another daemon or test running alongside.
HEALTH_FLAGS = ["--health-port", "0", "--health-address", "127.0.0.1"]


class Meshsync(DaemonProcess):
    """The daemon in file mode."""

    def __init__(self, tmpdir, kubeconfig, *flags, output_file=None, extended=False,
                 debug=False):
        self.output_file = output_file or os.path.join(tmpdir, "snapshot.yaml")
        base, ext = os.path.splitext(self.output_file)
        self.extended_file = base + "-extended" + (ext or ".yaml")
        argv = [DAEMON, "-output", "file", "-outputFile", self.output_file] + HEALTH_FLAGS
        if extended:
            argv.append("--outputExtended")
        if debug:
            # debug lines tell which resourceVersion an informer got to
            argv.append("-v")
        argv += list(flags)
        if kubeconfig is not None:
            argv += ["--kubeconfig", kubeconfig]
        super().__init__(tmpdir, argv)

    def seen_rv(self, informer):
        """The highest resourceVersion the informer has logged as handled (debug lines of
        ended watches and finished lists), or -1."""
        pattern = re.compile(re.escape(informer) + r": (?:watch ended, resuming at|list of \d+ at)"
                             r" resourceVersion (\d+)")
        return max((int(m.group(1)) for m in pattern.finditer(self.log())), default=-1)

    def confirm_seen(self, sim, informer, rv, timeout=TIMEOUT):
        """Makes sure @informer has handled everything up to @rv before the test stops the
        daemon: closes the watches (the informer logs the resourceVersion it resumes at) until
        one at or past @rv shows up. Needs debug=True."""
        deadline = time.monotonic() + timeout
        next_close = 0.0
        while self.seen_rv(informer) < rv:
            if self.proc.poll() is not None:
                raise AssertionError(f"meshsync exited:\n{self.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{informer} never got to resourceVersion {rv}:\n"
                                     f"{self.log()}")
            if time.monotonic() >= next_close:
                sim.admin("close-watches")
                next_close = time.monotonic() + 1.0
            time.sleep(0.05)

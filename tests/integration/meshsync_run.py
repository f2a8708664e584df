"""Runs the meshsync daemon against meshsync-kubesim and reads what it wrote.

Every wait here polls state the daemon exposes (its health server's /readyz and /metrics,
the files it writes, its exit) and fails the test when a generous deadline passes; nothing
sleeps to let something happen, and nothing is read from the log to learn how far the
daemon got. The log is read only where a message is itself what a test checks.
"""

import itertools
import os
import random
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections import Counter

import yaml

from sanitizer import fast_unwinder_env

DAEMON = os.environ.get("MESHSYNC_DAEMON", "meshsync")

# How much slower than a plain build things run here: the sanitizer setup (meson test
# --setup asan) sets MESHSYNC_TEST_TIME_SCALE, and every deadline is scaled by it.
TIME_SCALE = float(os.environ.get("MESHSYNC_TEST_TIME_SCALE", "1"))

# The run lengths a test picks for the daemon's own timers are scaled by less: the daemon
# these tests start records allocation stacks with the fast unwinder (daemon_env), which
# leaves it a few times slower than a plain build, not the thirty times of the full unwinder.
DAEMON_TIME_SCALE = float(os.environ.get("MESHSYNC_TEST_DAEMON_TIME_SCALE", "1"))

# Generous: a loaded CI machine must not turn a slow run into a failure.
TIMEOUT = 90.0 * TIME_SCALE


def seconds(n):
    """@n seconds of the daemon's own time (a -stopAfter value), scaled for the build."""
    return f"{n * DAEMON_TIME_SCALE:g}s"

# The default watch set (upstream's built-in whitelist) as (plural, list path, kind,
# namespaced). kubesim serves every one of them; cluster_view fails if one goes missing, so
# that what a test expects cannot shrink together with what the daemon sees.
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
    # upstream's table misspells it and never watches it; see doc/deviations.md
    ("serviceaccounts", "/api/v1/serviceaccounts", "ServiceAccount", True),
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
        items = list_objects(sim, path)
        assert items is not None, f"kubesim does not serve {path} of the default watch set"
        for item in items:
            meta = item["metadata"]
            view[meta["uid"]] = (kind, meta.get("namespace", ""), meta["name"])
    return view


# libyaml's loader when PyYAML has it: the same documents, many times faster on the large
# snapshots of the restart tests.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def split_documents(text):
    """The YAML documents of a snapshot; each is followed by a '---' line."""
    if not text:
        return []
    assert text.endswith("---\n"), f"snapshot does not end with a separator: {text[-200:]!r}"
    chunks = re.split(r"^---\n", text, flags=re.M)
    assert chunks[-1] == "", "text after the last separator"
    return [yaml.load(chunk, Loader=_LOADER) for chunk in chunks[:-1]]


def read_documents(path):
    with open(path, encoding="utf-8") as f:
        return split_documents(f.read())


def _whole_text(path):
    """The text of a file the daemon may be writing, up to the end of its last whole
    document; "" when there is none yet."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except FileNotFoundError:
        return ""
    if text.startswith("---\n") and "\n---\n" not in text:
        return "---\n"
    end = text.rfind("\n---\n")
    return text[:end + 5] if end >= 0 else ""


def _plain(value):
    """A uid as our YAML writer prints it: plain, or quoted when it would read as another
    type (a uid of digits)."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


# In the snapshot's layout the object's own uid is the one key "uid" two spaces in (the
# metadata block); an owner's uid is deeper. Cheap enough to poll, unlike parsing the YAML.
_SNAPSHOT_UID = re.compile(r"^  uid: (.*)$", re.M)
_EXTENDED_UID = re.compile(r"^    uid: (.*)$", re.M)


def snapshot_uid_counts(path):
    """Counter of the object uids in the whole documents of a snapshot being written."""
    return Counter(_plain(v) for v in _SNAPSHOT_UID.findall(_whole_text(path)))


def extended_has(path, event_type, uid):
    """Whether the extended file being written has the @event_type event of @uid."""
    for record in re.split(r"^---\n", _whole_text(path), flags=re.M):
        if record.startswith(f"EventType: {event_type}\n"):
            if uid in (_plain(v) for v in _EXTENDED_UID.findall(record)):
                return True
    return False


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


_PORTS = {}


def free_port():
    """A port for the daemon's health server that nothing listens on now, drawn outside the
    kernel's ephemeral range, so neither the many outgoing connections of a run nor another
    test's port 0 can take it before the daemon binds it."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    low = max(low, 2048)
    # the process id as the seed: reproducible for a run, yet apart from the suites of
    # other checkouts running on the same machine at the same time
    rng = _PORTS.setdefault(os.getpid(), random.Random(os.getpid()))
    for _ in range(200):
        port = rng.randrange(1024, low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise AssertionError("no free port below the ephemeral range")


def parse_metrics(text):
    """{name: {labels text: value}} of a Prometheus text exposition."""
    samples = {}
    for line in text.splitlines():
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$", line)
        if m:
            samples.setdefault(m.group(1), {})[m.group(2) or ""] = float(m.group(3))
    return samples


_markers = itertools.count(1)


def env_allowing_warnings(env=None):
    """@env (default: this process's) without G_DEBUG=fatal-warnings: for a test that gives
    the daemon something a person must fix and checks the warning it logs for it, as
    g_test_expect_message() does in a unit test."""
    env = dict(os.environ if env is None else env)
    flags = [f for f in env.get("G_DEBUG", "").split(",") if f and f != "fatal-warnings"]
    env["G_DEBUG"] = ",".join(flags)
    return env


def daemon_env(env=None):
    """@env (default: this process's) for a daemon the test starts: in the sanitizer run,
    with the fast unwinder and no exit leak check (leaks are the unit suite's and valgrind's
    to find). The full unwinder costs most on TLS, every GnuTLS allocation of the handshake
    and of the system trust store unwound: a 20-pod one-shot against kubesim takes 14 s with
    it and 0.5 s without."""
    return fast_unwinder_env(env)


class DaemonProcess:
    """One meshsync process started with @argv; its log (stderr, and stdout should anything
    land there) goes to a file. A "--health-port 0" in @argv is replaced by a free
    port chosen here, so the test knows where /readyz and /metrics are without reading it
    from the log."""

    def __init__(self, tmpdir, argv, env=None):
        self.log_path = os.path.join(tmpdir, "meshsync-%d.log" % id(self))
        argv = list(argv)
        self.port = 11000
        if "--health-port" in argv:
            i = argv.index("--health-port")
            if argv[i + 1] == "0":
                argv[i + 1] = str(free_port())
            self.port = int(argv[i + 1])
        self.argv = argv
        self._log = open(self.log_path, "w", encoding="utf-8")
        env = daemon_env(env)
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

    def wait_until(self, predicate, what, timeout=TIMEOUT):
        """Polls @predicate() until it returns something true, which is returned; fails if
        the daemon exits first or time runs out."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if self.proc.poll() is not None:
                value = predicate()
                if value:
                    return value
                raise AssertionError(f"meshsync exited with {self.proc.returncode} before "
                                     f"{what}:\n{self.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}:\n{self.log()}")
            time.sleep(0.05)

    def wait_for(self, predicate, what, timeout=TIMEOUT):
        """Polls @predicate(log text): for a message a test checks, not for progress."""
        return self.wait_until(lambda: (lambda text: text if predicate(text) else None)(
            self.log()), what, timeout)

    def wait_for_line(self, needle, count=1, timeout=TIMEOUT):
        """Waits for a message the user must see; progress is waited for on state."""
        return self.wait_for(lambda text: text.count(needle) >= count,
                             f"{count} x {needle!r}", timeout)

    def wait_exit(self, timeout=TIMEOUT):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"meshsync did not exit:\n{self.log()}") from None

    def terminate(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.wait_exit()

    def kill(self):
        """SIGKILL: nothing is flushed or closed, as a crash or the OOM killer leaves it."""
        self.proc.kill()
        self.proc.wait()

    def health_port(self):
        """The port of the health server (chosen by the test when it asked for 0)."""
        return self.port

    def try_http(self, path):
        """One GET; None while nothing answers on the port (the daemon is starting)."""
        url = f"http://127.0.0.1:{self.port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()
        except (ConnectionError, urllib.error.URLError, socket.timeout):
            return None

    def http(self, path):
        """GET @path once the health server answers: (status, body)."""
        return self.wait_until(lambda: self.try_http(path), f"the health server to answer {path}")

    def metrics(self):
        status, text = self.http("/metrics")
        assert status == 200, (status, text)
        return parse_metrics(text)

    def metric(self, name, **labels):
        """The sum of the samples of @name whose labels include @labels; 0 when none."""
        total = 0.0
        for text, value in self.metrics().get(name, {}).items():
            if all(f'{key}="{want}"' in text for key, want in labels.items()):
                total += value
        return total

    def wait_metric(self, name, at_least, **labels):
        """Waits until metric @name (summed over the samples matching @labels) is at least
        @at_least; returns its value."""
        return self.wait_until(
            lambda: (lambda v: v if v >= at_least else None)(self.metric(name, **labels)),
            f"{name}{labels or ''} >= {at_least}")

    def wait_synced(self, count=1):
        """Waits until @count initial syncs have completed (the first, then one per resync),
        counted by meshsync_syncs_total; returns the log, which by then holds their
        "initial sync complete" summaries (each is logged before its sync is counted)."""
        self.wait_metric("meshsync_syncs_total", count)
        return self.log()


# A port of its own: 11000 may be taken by another daemon or test running alongside.
HEALTH_FLAGS = ["--health-port", "0", "--health-address", "127.0.0.1"]


class Meshsync(DaemonProcess):
    """The daemon in file mode."""

    def __init__(self, tmpdir, kubeconfig, *flags, output_file=None, extended=False,
                 debug=False, env=None):
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
        super().__init__(tmpdir, argv, env=env)

    def snapshot_uids(self):
        """Counter of the uids in the whole documents of the snapshot as it is now."""
        return snapshot_uid_counts(self.output_file)

    def wait_in_snapshot(self, uids, timeout=TIMEOUT):
        """Waits until every uid of @uids is in the snapshot on disk."""
        uids = set(uids)
        self.wait_until(lambda: uids <= set(self.snapshot_uids()),
                        f"{len(uids)} objects in {self.output_file}", timeout)

    def wait_in_extended(self, event_type, uid, timeout=TIMEOUT):
        """Waits until the extended file on disk has the @event_type event of @uid."""
        self.wait_until(lambda: extended_has(self.extended_file, event_type, uid),
                        f"{event_type} {uid} in {self.extended_file}", timeout)

    def mark(self, sim, namespace="default"):
        """An end marker: creates a ConfigMap and waits until it is in the snapshot, twice.
        The ConfigMap informer hands its changes over in order, so once the second marker is
        written everything the informer got before it is written too. Two, because the first
        may come in the list of a relist, whose changes are not in any set order; the
        second, made once the first arrived, comes after that list. Returns the last."""
        for _ in range(2):
            marker = sim.create({"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": f"end-marker-{next(_markers)}",
                                              "namespace": namespace},
                                 "data": {"marker": "yes"}})
            self.wait_in_snapshot({marker["metadata"]["uid"]})
        return marker


def uncompressed_kubeconfig(kubeconfig, path):
    """A copy of @kubeconfig whose cluster says disable-compression: true (client-go's
    DisableCompression): meshsync then never asks the server for gzip."""
    with open(kubeconfig, encoding="utf-8") as f:
        text = f.read()
    text, n = re.subn(r"^( *)server: (.*)$", r"\1server: \2\n\1disable-compression: true",
                      text, flags=re.M)
    assert n == 1, text
    path.write_text(text, encoding="utf-8")
    return str(path)
